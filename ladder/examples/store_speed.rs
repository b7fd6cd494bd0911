//! How fast the SQLite store takes matches as its history grows: schedule, start and finish (with
//! its rating transaction) of 4-seat matches among 40 versions, plus the ladder's health check
//! after each, and the reads of one matchmaker round (`Ladder::round` and the recent tables)
//! with every version in a lobby. Each line covers one block of matches; a figure that grows from
//! line to line is a read that scans history.
//! Run with `cargo run --release -p maumau-ladder --example store_speed -- [MATCHES] [BLOCKS]`.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::time::Instant;

use maumau_ladder::matchmaking::Format;
use maumau_ladder::store::NewMatch;
use maumau_ladder::validation::CopyReport;
use maumau_ladder::{Ladder, LadderConfig, Lobby, SeatResult, SqliteStore, Store};

/// Matchmaker rounds timed after each block.
const ROUNDS: u32 = 50;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let matches: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5000);
    let blocks: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5).max(1);
    let dir = tempfile::tempdir()?;
    let ladder = Ladder::new(SqliteStore::open(dir.path())?, LadderConfig::default());
    let season = ladder.store().open_season("bench", 0)?;
    let mut versions = Vec::new();
    for i in 0..40 {
        let (_, key) = ladder.register_owner(&format!("o{i}"), None, 0)?;
        let bot = ladder.register_bot(key.as_str(), &format!("b{i}"), 0)?;
        let v = ladder.add_version(key.as_str(), bot, "1", 0)?.version;
        // Validated, as on a running ladder.
        let id = ladder.store().schedule_match(
            &NewMatch {
                season,
                profile: "classic".into(),
                seed: i,
                rated: false,
                seats: vec![v],
            },
            0,
        )?;
        ladder.store().start_match(id, 0)?;
        ladder.record_validation(id, &[CopyReport::default()], 0)?;
        versions.push(v);
    }
    let lobbies: Vec<Lobby> = versions
        .iter()
        .map(|&version| Lobby {
            version,
            max_matches: 4,
            profiles: vec!["classic".into()],
            seats: vec![4],
        })
        .collect();
    let formats = vec![Format {
        profile: "classic".into(),
        seats: 4,
        weight: 1.0,
    }];
    let results: Vec<SeatResult> = [1, 2, 3, 4]
        .iter()
        .map(|&placing| SeatResult {
            placing,
            timeouts: 0,
            rejections: 0,
        })
        .collect();
    println!("history   matches/s  round ms (Ladder::round + recent tables)");
    let block = (matches / blocks).max(1);
    let start = Instant::now();
    let mut m = 0;
    while m < matches {
        let t = Instant::now();
        for _ in 0..block.min(matches - m) {
            let first = (m * 4 % 37) as usize;
            let seats: Vec<_> = (0..4).map(|k| versions[(first + k * 9) % 40]).collect();
            let now = m as i64 * 10;
            let id = ladder.store().schedule_match(
                &NewMatch {
                    season,
                    profile: "classic".into(),
                    seed: m,
                    rated: true,
                    seats,
                },
                now,
            )?;
            ladder.store().start_match(id, now + 1)?;
            ladder.record_finish(id, &results, now + 2)?;
            m += 1;
        }
        let rate = block as f64 / t.elapsed().as_secs_f64();
        let t = Instant::now();
        for _ in 0..ROUNDS {
            let (plan, candidates) = ladder.round(season, &lobbies, &formats)?;
            assert!(plan.waiting.is_empty(), "every version is validated");
            assert_eq!(candidates.len(), lobbies.len());
            ladder.recent_tables(64)?;
        }
        let round_ms = t.elapsed().as_secs_f64() * 1000.0 / f64::from(ROUNDS);
        println!("{m:>7}   {rate:>9.0}  {round_ms:>8.2}");
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{matches} rated 4-seat matches (and the rounds) in {secs:.2} s: {:.0} per hour",
        3600.0 * matches as f64 / secs
    );
    let t = Instant::now();
    let report = ladder.rerate(season)?;
    println!(
        "rerate of {} matches, {} events: {:.2} s, {}",
        report.matches,
        report.events,
        t.elapsed().as_secs_f64(),
        if report.is_clean() {
            "clean"
        } else {
            "DIFFERENCES"
        }
    );
    Ok(())
}
