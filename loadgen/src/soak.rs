//! `maumau-loadgen soak`: memory against history.
//!
//! Plays many short matches (classic, 2 seats, one round, both seats the server's random bot)
//! against one `maumau serve`, a few at a time, each watched with its spectator token until
//! `MatchFinished`. Every `--every` finished matches it prints the server's resident memory
//! (`VmRSS` of `/proc/PID/status`), and at the end the growth per finished match (the
//! least-squares slope of RSS over finished matches, from the first sample on, so start-up
//! allocations are left out). Then it stops the server (SIGINT), starts it again on the same data
//! directory, and prints how long it took until health said SERVING and its memory then; it
//! checks that ListMatches still lists every match.
//!
//! ```sh
//! cargo build -p maumau-cli -p maumau-loadgen
//! target/debug/maumau-loadgen soak --matches 20000 --every 2000
//! ```

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use tokio_stream::StreamExt;
use tonic::transport::Channel;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use crate::procs::ChildServer;

/// Arguments of `maumau-loadgen soak`.
#[derive(clap::Args)]
pub(crate) struct SoakArgs {
    /// Matches to play.
    #[arg(long, default_value_t = 20_000)]
    matches: usize,
    /// Print the server's memory every this many finished matches.
    #[arg(long, default_value_t = 2_000)]
    every: usize,
    /// Matches in flight at once.
    #[arg(long, default_value_t = 16)]
    in_flight: usize,
    /// The `maumau` binary [default: `maumau` next to this executable].
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// Where the server's temporary data directory is made [default: the system's temporary
    /// directory].
    #[arg(long, value_name = "DIR")]
    data_parent: Option<PathBuf>,
    /// RUST_LOG for the server.
    #[arg(long, default_value = "warn")]
    server_log: String,
}

/// Longest wait for one match's MatchFinished.
const MATCH_TIMEOUT: Duration = Duration::from_secs(60);

/// Starts `maumau serve` on `data`.
fn start(bin: &PathBuf, data: &std::path::Path, log: &str) -> Result<ChildServer, String> {
    let mut cmd = Command::new(bin);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .env("RUST_LOG", log)
        .env_remove("MAUMAU_OPERATOR_TOKEN");
    ChildServer::spawn(cmd, "server", None, false)
}

/// Waits until the server's health says SERVING.
async fn serving(url: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(600);
    while Instant::now() < deadline {
        let check = async {
            let channel = crate::connect(url, 1).await?.remove(0);
            HealthClient::new(channel)
                .check(tonic_health::pb::HealthCheckRequest::default())
                .await
                .map(|r| r.into_inner().status())
                .map_err(|e| e.to_string())
        };
        if let Ok(Ok(ServingStatus::Serving)) =
            tokio::time::timeout(Duration::from_secs(2), check).await
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Err("the server did not become SERVING within 10 minutes".into())
}

/// Creates one bots-only match and watches it to its end.
async fn play_one(channel: &Channel, seed: u64) -> Result<(), String> {
    let mut matches = MatchServiceClient::new(channel.clone());
    let create = matches.create_match(pb::CreateMatchRequest {
        config: Some(pb::MatchConfig {
            profile: pb::Profile::Classic as i32,
            seats: 2,
            options: Some(pb::ProfileOptions {
                single_round: true,
                ..Default::default()
            }),
            ..Default::default()
        }),
        seed: Some(seed),
        bots: (0..2)
            .map(|seat| pb::SeatBot {
                seat,
                kind: pb::BotKind::Random as i32,
            })
            .collect(),
        label: "soak".into(),
        ..Default::default()
    });
    let created = tokio::time::timeout(MATCH_TIMEOUT, create)
        .await
        .map_err(|_| "CreateMatch took over a minute".to_string())?
        .map_err(|s| format!("CreateMatch: {s}"))?
        .into_inner();
    let mut play = PlayServiceClient::new(channel.clone());
    let watch = play.watch(pb::WatchRequest {
        token: created.spectator_token,
        ..Default::default()
    });
    let mut feed = tokio::time::timeout(MATCH_TIMEOUT, watch)
        .await
        .map_err(|_| format!("Watch of {} took over a minute", created.match_id))?
        .map_err(|s| format!("Watch: {s}"))?
        .into_inner();
    let watched = tokio::time::timeout(MATCH_TIMEOUT, async {
        while let Some(m) = feed.next().await {
            let m = m.map_err(|s| format!("Watch stream: {s}"))?;
            if let Some(pb::server_message::Kind::Finished(_)) = m.message.and_then(|m| m.kind) {
                return Ok(());
            }
        }
        Err(format!(
            "match {}: the feed ended before MatchFinished",
            created.match_id
        ))
    })
    .await;
    match watched {
        Ok(r) => r,
        Err(_) => {
            // Say what the server knows of it.
            let known = MatchServiceClient::new(channel.clone())
                .get_match(pb::GetMatchRequest {
                    match_id: created.match_id.clone(),
                })
                .await
                .map(|r| format!("{:?}", r.into_inner().r#match))
                .unwrap_or_else(|s| s.to_string());
            Err(format!(
                "match {} saw no MatchFinished within a minute; GetMatch: {known}",
                created.match_id
            ))
        }
    }
}

/// Least-squares slope of `y` over `x`.
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = points
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x / n, b + y / n));
    let (num, den) = points.iter().fold((0.0, 0.0), |(a, b), (x, y)| {
        (a + (x - mx) * (y - my), b + (x - mx) * (x - mx))
    });
    if den == 0.0 { 0.0 } else { num / den }
}

/// Runs the soak (`maumau-loadgen soak`).
pub(crate) async fn soak(args: SoakArgs) -> Result<(), String> {
    if args.matches == 0 || args.every == 0 || args.in_flight == 0 {
        return Err("--matches, --every and --in-flight must be positive".into());
    }
    let bin = crate::server_bin(args.server_bin.as_ref())?;
    let mut builder = tempfile::Builder::new();
    builder.prefix("maumau-soak-");
    let dir = match &args.data_parent {
        Some(p) => builder.tempdir_in(p),
        None => builder.tempdir(),
    }
    .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let data = dir.path().join("data");
    let server = start(&bin, &data, &args.server_log)?;
    serving(&server.url()).await?;
    let channel = crate::connect(&server.url(), 1).await?.remove(0);
    println!(
        "soak: {} (pid {}), {} matches, {} at a time; RSS every {}",
        bin.display(),
        server.pid(),
        args.matches,
        args.in_flight,
        args.every
    );
    println!("{:>9} {:>10} {:>9}", "finished", "RSS_kB", "seconds");
    let rss0 = server.rss_kb();
    println!("{:>9} {:>10} {:>9.1}", 0, rss0, 0.0);

    let next = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let workers: Vec<_> = (0..args.in_flight)
        .map(|_| {
            let (next, done, failed, channel) =
                (next.clone(), done.clone(), failed.clone(), channel.clone());
            let total = args.matches;
            tokio::spawn(async move {
                let mut errors = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        return errors;
                    }
                    // A match that fails is reported at the end; the soak goes on.
                    match play_one(&channel, i as u64 + 1).await {
                        Ok(()) => done.fetch_add(1, Ordering::Relaxed),
                        Err(e) => {
                            errors.push(e);
                            failed.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            })
        })
        .collect();
    let mut samples = Vec::new();
    let mut mark = args.every;
    loop {
        let finished = done.load(Ordering::Relaxed);
        let ended = finished + failed.load(Ordering::Relaxed);
        if finished >= mark || ended >= args.matches {
            let rss = server.rss_kb();
            println!(
                "{:>9} {:>10} {:>9.1}",
                finished,
                rss,
                started.elapsed().as_secs_f64()
            );
            samples.push((finished as f64, rss as f64));
            mark = (finished / args.every + 1) * args.every;
        }
        if ended >= args.matches || workers.iter().all(|w| w.is_finished()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut errors = Vec::new();
    for w in workers {
        errors.extend(w.await.map_err(|e| e.to_string())?);
    }
    let finished = done.load(Ordering::Relaxed);
    let seconds = started.elapsed().as_secs_f64();
    let per_match = slope(&samples) * 1024.0;
    let last = samples.last().map_or(0.0, |s| s.1);
    println!(
        "played {finished} matches in {seconds:.1} s ({:.0}/s); RSS {rss0} -> {last:.0} kB, \
         peak {} kB",
        finished as f64 / seconds,
        server.peak_rss_kb()
    );
    println!("RSS growth per finished match (slope from the first sample): {per_match:.0} bytes");

    drop(channel);
    server.stop();
    let started = Instant::now();
    let server = start(&bin, &data, &args.server_log)?;
    serving(&server.url()).await?;
    let restart = started.elapsed().as_secs_f64();
    let rss_serving = server.rss_kb();
    // Everything is still listed.
    let mut matches = MatchServiceClient::new(crate::connect(&server.url(), 1).await?.remove(0));
    let (mut listed, mut token) = (0, String::new());
    loop {
        let page = matches
            .list_matches(pb::ListMatchesRequest {
                page_size: 500,
                page_token: token,
                ..Default::default()
            })
            .await
            .map_err(|s| format!("ListMatches: {s}"))?
            .into_inner();
        listed += page.matches.len();
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    println!(
        "restart on {finished} records: SERVING after {restart:.2} s; RSS then {rss_serving} kB, \
         after listing all {listed} matches {} kB, peak {} kB",
        server.rss_kb(),
        server.peak_rss_kb()
    );
    server.stop();
    for e in &errors {
        eprintln!("maumau-loadgen soak: {e}");
    }
    if !errors.is_empty() {
        return Err(format!(
            "{} of {} matches failed",
            errors.len(),
            args.matches
        ));
    }
    if listed < finished {
        return Err(format!(
            "ListMatches lists {listed} matches after the restart, fewer than the {finished} \
             that finished"
        ));
    }
    Ok(())
}
