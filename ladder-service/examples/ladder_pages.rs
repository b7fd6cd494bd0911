//! Benchmark: the ladder's leaderboard page with 1,000 rated versions.
//!
//! Fills a ladder store with `VERSIONS` bots of one version each (default 1000) and rated 4-seat
//! classic matches (default 12 per version on average, some versions playing much more than
//! others, so the board has both ranked and provisional lines), starts the server on it in ladder
//! mode, and GETs the leaderboard over one HTTP/1.1 keep-alive connection many times. Reports p50,
//! p99 and max of the time the server spent building the page (its `Server-Timing` header: store
//! reads and rendering) and of the whole request over loopback, for the first page (100 lines)
//! and for a page of 500 lines.
//!
//! ```sh
//! cargo run --release -p maumau-ladder-service --example ladder_pages -- [VERSIONS] [MATCHES_PER_VERSION] [REQUESTS]
//! ```
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use maumau_ladder::keys::{KeyKind, SecretKey};
use maumau_ladder::store::NewMatch;
use maumau_ladder::{SeatResult, SqliteStore, Store};
use maumau_ladder_service::{LadderFormat, LadderSettings};
use maumau_rating::RatingConfig;
use maumau_server::ServerConfig;

/// A small seeded generator (xorshift64*), enough to pick tables.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn arg(n: usize, default: usize) -> usize {
    std::env::args()
        .nth(n)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn fill(dir: &std::path::Path, versions: usize, per_version: usize) -> Result<(), String> {
    let store = SqliteStore::open(dir).map_err(|e| e.to_string())?;
    let season = store
        .open_season("season-1", 0)
        .map_err(|e| e.to_string())?;
    let mut ids = Vec::with_capacity(versions);
    for i in 0..versions {
        let mut seed = [0u8; 32];
        seed[..8].copy_from_slice(&(i as u64).to_le_bytes());
        let owner_key = SecretKey::from_bytes(KeyKind::Owner, &seed).hash();
        let version_key = SecretKey::from_bytes(KeyKind::Version, &seed).hash();
        let owner = store
            .create_owner(&format!("owner {i}"), &owner_key, 0)
            .map_err(|e| e.to_string())?;
        let bot = store
            .create_bot(owner, &format!("bot <{i}> & co"), 0)
            .map_err(|e| e.to_string())?;
        let (v, _) = store
            .create_version(bot, "v1", &version_key, 2, 0)
            .map_err(|e| e.to_string())?;
        ids.push(v);
    }
    let matches = versions * per_version / 4;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let config = RatingConfig::default();
    let started = Instant::now();
    for m in 0..matches {
        // Lower ids play more often: a long tail of provisional versions.
        let mut seats = Vec::with_capacity(4);
        while seats.len() < 4 {
            let pick = ids[rng.below(versions).min(rng.below(versions) + versions / 8)];
            if !seats.contains(&pick) {
                seats.push(pick);
            }
        }
        let t = m as i64 * 1000;
        let id = store
            .schedule_match(
                &NewMatch {
                    season,
                    profile: "classic".into(),
                    seed: rng.next(),
                    rated: true,
                    seats,
                },
                t,
            )
            .map_err(|e| e.to_string())?;
        store.start_match(id, t).map_err(|e| e.to_string())?;
        let mut placings = [1u8, 2, 3, 4];
        for i in (1..4).rev() {
            placings.swap(i, rng.below(i + 1));
        }
        let results: Vec<SeatResult> = placings
            .iter()
            .map(|&placing| SeatResult {
                placing,
                timeouts: u32::from(rng.below(20) == 0),
                rejections: 0,
            })
            .collect();
        store
            .finish_match(id, &results, &config, t + 500)
            .map_err(|e| e.to_string())?;
    }
    eprintln!(
        "filled: {versions} versions, {matches} rated 4-seat matches in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn report(what: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    println!(
        "{what:<44} p50 {:7.2} ms  p99 {:7.2} ms  max {:7.2} ms  (n = {})",
        percentile(&ms, 0.5),
        percentile(&ms, 0.99),
        ms.last().copied().unwrap_or(0.0),
        ms.len()
    );
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let versions = arg(1, 1000);
    let per_version = arg(2, 12);
    let requests = arg(3, 200);
    let data = tempfile::tempdir()?;
    {
        let dir = data.path().join("ladder");
        tokio::task::spawn_blocking(move || fill(&dir, versions, per_version)).await??;
    }

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let config = ServerConfig {
        data_dir: data.path().to_path_buf(),
        ..ServerConfig::default()
    };
    let ladder = LadderSettings {
        formats: vec![LadderFormat {
            profile: "classic".into(),
            seats: 4,
            weight: 1.0,
        }],
        tick: Duration::from_secs(60),
        ..LadderSettings::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(maumau_ladder_service::run(
        listener,
        config,
        ladder,
        |_| {},
        async {
            let _ = stopped.await;
        },
    ));

    let tcp = loop {
        match tokio::net::TcpStream::connect(addr).await {
            Ok(t) => break t,
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
    tokio::spawn(conn);

    for (label, path) in [
        (
            "leaderboard, first page (100 lines)",
            "/ladder?profile=classic",
        ),
        (
            "leaderboard, 500 lines",
            "/ladder?profile=classic&per_page=500",
        ),
    ] {
        let mut server_ms = Vec::with_capacity(requests);
        let mut http_ms = Vec::with_capacity(requests);
        let mut lines = 0;
        let mut bytes = 0;
        for i in 0..requests + 5 {
            let request = hyper::Request::get(path)
                .header(hyper::header::HOST, addr.to_string())
                .body(Empty::<Bytes>::new())?;
            send.ready().await?;
            let started = Instant::now();
            let response = send.send_request(request).await?;
            let timing = response
                .headers()
                .get("server-timing")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("render;dur="))
                .and_then(|v| v.parse::<f64>().ok())
                .ok_or("no Server-Timing header")?;
            let status = response.status();
            let body = response.into_body().collect().await?.to_bytes();
            let took = started.elapsed().as_secs_f64() * 1e3;
            if !status.is_success() {
                return Err(format!("{path}: {status}").into());
            }
            // The first few warm the caches.
            if i >= 5 {
                server_ms.push(timing);
                http_ms.push(took);
            }
            let page = std::str::from_utf8(&body)?;
            lines = page.matches("class=\"standing\"").count();
            bytes = body.len();
        }
        println!("{label}: {lines} lines, {bytes} bytes");
        report("  built by the server (Server-Timing)", server_ms);
        report("  whole request over HTTP/1.1 (loopback)", http_ms);
    }
    let _ = stop.send(());
    server.await??;
    Ok(())
}
