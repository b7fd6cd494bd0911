//! How fast the SQLite store takes matches: schedule, start and finish (with its rating
//! transaction) of 4-seat matches among 40 versions, plus the ladder's health check after each.
//! Run with `cargo run --release -p maumau-ladder --example store_speed -- [MATCHES]`.

use std::time::Instant;

use maumau_ladder::store::NewMatch;
use maumau_ladder::{Ladder, LadderConfig, SeatResult, SqliteStore, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let matches: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5000);
    let dir = tempfile::tempdir()?;
    let ladder = Ladder::new(SqliteStore::open(dir.path())?, LadderConfig::default());
    let season = ladder.store().open_season("bench", 0)?;
    let mut versions = Vec::new();
    for i in 0..40 {
        let (_, key) = ladder.register_owner(&format!("o{i}"), None, 0)?;
        let bot = ladder.register_bot(key.as_str(), &format!("b{i}"), 0)?;
        versions.push(ladder.add_version(key.as_str(), bot, "1", 0)?.version);
    }
    let results: Vec<SeatResult> = [1, 2, 3, 4]
        .iter()
        .map(|&placing| SeatResult {
            placing,
            timeouts: 0,
        })
        .collect();
    let start = Instant::now();
    for m in 0..matches {
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
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{matches} rated 4-seat matches in {secs:.2} s: {:.0} matches/s ({:.0} per hour)",
        matches as f64 / secs,
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
