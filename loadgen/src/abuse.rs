//! `--abuse N`: honest matches beside N other connections of which a quarter misbehave (issue 14
//! item 7). The same honest load runs twice on one server: quietly, then beside the crowd; the
//! program prints the honest decision latency (p99) of both runs and their ratio, and the
//! server's resident memory before, during and after the crowd.
//!
//! The crowd: three quarters are well-behaved idle clients (one call each, then they wait); the
//! abusive quarter is split among silent TCP connections (never a byte), slow readers (Watch
//! streams on busy all-bot matches, never read), floods (SubmitAction with a made-up token, as
//! fast as answers come), and pending streams (Play streams that never send Join, 32 per
//! connection).

use std::time::Duration;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use tokio::task::JoinSet;
use tonic::transport::Channel;

use crate::game::{self, Decode, Delivery, Policy};
use crate::procs::ChildServer;
use crate::stats::Window;

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
async fn crowd(url: &str, n: usize, spectator_tokens: &[String]) -> Result<JoinSet<()>, String> {
    let addr = url.trim_start_matches("http://").to_string();
    let mut set = JoinSet::new();
    let abusive = n / 4;
    let kinds = 4;
    for i in 0..n {
        let kind = if i < abusive { i % kinds } else { kinds };
        let channel = if kind == 0 {
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
            1 => {
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
            2 => {
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
            3 => {
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
            _ => {
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

/// The whole `--abuse` run on `server`.
pub(crate) async fn abuse(
    server: &ChildServer,
    n: usize,
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
    let quiet = honest(&url, streams, seed, warmup, duration).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let rss_quiet = server.rss_kb();
    eprintln!("loadgen: opening {n} connections, {} abusive", n / 4);
    let crowd = crowd(&url, n, &spectator_tokens).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    eprintln!("loadgen: run beside the crowd");
    let loud = honest(&url, streams, seed + 1, warmup, duration).await?;
    let rss_crowd = server.rss_kb();
    drop(crowd);
    // The crowd's connections close; the server lets go of them.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let rss_after = server.rss_kb();
    println!(
        "abuse: {n} connections beside {streams} honest Play streams ({} abusive: silent TCP, slow readers, SubmitAction floods, pending streams)",
        n / 4
    );
    for (what, r) in [("quiet", &quiet), ("crowd", &loud)] {
        println!(
            "{what:>6}: decisions {:>8}  matches finished {:>5}  p50 {:>8.0} µs  p99 {:>8.0} µs  errors {}",
            r.decisions, r.finished, r.p50_us, r.p99_us, r.errors
        );
    }
    let ratio = loud.p99_us / quiet.p99_us;
    println!(
        "p99 ratio crowd/quiet: {ratio:.2} (goal at most 1.5: {})",
        if ratio <= 1.5 { "met" } else { "MISSED" }
    );
    println!(
        "server RSS: start {} kB, after the quiet run {} kB, with the crowd {} kB, after it left {} kB",
        rss_start, rss_quiet, rss_crowd, rss_after
    );
    Ok(())
}
