//! The rating figures over many seeded simulated pools (the long version of the test in
//! `tests/sim.rs`). Run with `cargo run --release -p maumau-ladder --example sim_pool -- [RUNS]
//! [FIRST_SEED]`.
//!
//! Prints, for a new version joining a pool of 40 bots of known strength and playing 4-seat
//! matches: the share of runs where its σ fell below 2.0 within 40 matches, and the share where
//! its μ is within 3 points of its true strength after 50 matches.

use std::time::Instant;

use maumau_ladder::sim::{PoolConfig, figures};

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let first_seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let config = PoolConfig::default();
    let start = Instant::now();
    let f = figures(&config, runs, first_seed);
    println!(
        "pool of {} bots, {}-seat tables, strengths 25 ± {}, {} warm-up rounds; newcomer plays {} matches",
        config.bots, config.seats, config.spread, config.warmup_rounds, config.newcomer_matches
    );
    println!(
        "runs: {} (seeds {first_seed}..{})",
        f.runs,
        first_seed + runs as u64
    );
    println!(
        "σ < 2.0 within 40 matches: {:.1}% of runs (worst run needed {})",
        100.0 * f.sigma_below_2_within_40,
        f.worst_matches_to_sigma_2
            .map_or("never".to_string(), |m| format!("{m} matches"))
    );
    println!(
        "μ within 3 points of the truth after {} matches: {:.1}% of runs (target 90%)",
        config.newcomer_matches,
        100.0 * f.within_3
    );
    println!(
        "mean |μ − truth|: {:.2}; mean pool offset: {:+.2}",
        f.mean_error, f.mean_pool_offset
    );
    println!("time: {:.1?}", start.elapsed());
}
