//! The rating figures over many seeded simulated pools (the long version of `tests/sim.rs`).
//! Run with `cargo run --release -p maumau-ladder --example sim_pool -- [RUNS] [FIRST_SEED]`.
//!
//! A new version joins a settled pool of 40 bots of known strength and plays rated 4-seat
//! matches found by the real matchmaker. Printed for the default Weng-Lin β and for
//! `CALIBRATED_BETA`: the share of runs where its σ fell below 2.0 within 40 matches, and the
//! share where its μ ended within 3 points of its true strength after 50 matches.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::time::Instant;

use maumau_ladder::sim::{CALIBRATED_BETA, PoolConfig, WENG_LIN_BETA, figures};

fn main() {
    let mut args = std::env::args().skip(1);
    let runs: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let first_seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let base = PoolConfig::default();
    println!(
        "pool of {} bots, {}-seat tables, strengths 25 ± {}, game noise β {:.3}, {} warm-up rounds; \
         the newcomer plays {} matches; {runs} runs from seed {first_seed}",
        base.bots,
        base.seats,
        base.spread,
        base.noise_beta,
        base.warmup_rounds,
        base.newcomer_matches
    );
    for beta in [WENG_LIN_BETA, CALIBRATED_BETA] {
        let mut config = base.clone();
        config.rating.beta = beta;
        let start = Instant::now();
        let f = figures(&config, runs, first_seed);
        println!("model β {beta:.3}:");
        println!(
            "  σ < 2.0 within 40 matches: {:.1}% of runs (worst run: {})",
            100.0 * f.sigma_below_2_within_40,
            f.worst_matches_to_sigma_2
                .map_or("not within its matches".to_string(), |m| format!(
                    "{m} matches"
                ))
        );
        println!(
            "  μ within 3 points of the truth after {} matches: {:.1}% of runs (target 90%)",
            config.newcomer_matches,
            100.0 * f.within_3
        );
        println!(
            "  mean |μ − truth| {:.2}, mean final σ {:.2}, pool μ over truth: slope {:.3}, offset {:+.2}",
            f.mean_error, f.mean_sigma, f.mean_pool_slope, f.mean_pool_offset
        );
        println!("  time {:.1?}", start.elapsed());
    }
}
