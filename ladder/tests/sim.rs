//! The rating figures on a short simulated run; `examples/sim_pool.rs` runs the long version.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use maumau_ladder::sim::{
    CALIBRATED_BETA, PoolConfig, WENG_LIN_BETA, draw_placings, figures, run_newcomer,
};
use rand::SeedableRng;
use rand_pcg::Pcg64;

#[test]
fn simulated_placings_follow_strength() {
    let mut rng = Pcg64::seed_from_u64(3);
    let mut firsts = [0u32; 4];
    let n = 4000;
    for _ in 0..n {
        let p = draw_placings(&[25.0, 25.0, 25.0, 25.0], 5.9, &mut rng);
        let mut sorted = p.clone();
        sorted.sort();
        assert_eq!(sorted, vec![1, 2, 3, 4]);
        firsts[p.iter().position(|&x| x == 1).unwrap()] += 1;
    }
    for f in firsts {
        let share = f64::from(f) / f64::from(n);
        assert!((0.22..0.28).contains(&share), "{firsts:?}");
    }
    // Two seats 5.9 points apart (one scale): the stronger wins 1 / (1 + e^-1) = 73% of the time.
    let wins = (0..n)
        .filter(|_| draw_placings(&[30.9, 25.0], 5.9, &mut rng)[0] == 1)
        .count();
    let share = wins as f64 / f64::from(n);
    assert!((0.70..0.76).contains(&share), "{share}");
}

#[test]
fn runs_are_reproducible() {
    let c = PoolConfig {
        warmup_rounds: 10,
        newcomer_matches: 10,
        ..PoolConfig::default()
    };
    assert_eq!(run_newcomer(&c, 5), run_newcomer(&c, 5));
    assert_ne!(run_newcomer(&c, 5), run_newcomer(&c, 6));
    assert_eq!(run_newcomer(&c, 5).sigma.len(), 10);
}

#[test]
fn figures_on_a_short_run() {
    // The ladder's default model β is the calibrated one (see the sim module docs).
    let config = PoolConfig::default();
    assert_eq!(config.rating.beta, CALIBRATED_BETA);
    let f = figures(&config, 6, 1000);
    // σ: every newcomer is below 2.0 within 40 rated 4-seat matches.
    assert_eq!(f.sigma_below_2_within_40, 1.0, "{f:?}");
    assert!(f.worst_matches_to_sigma_2.is_some_and(|m| m <= 40), "{f:?}");
    // μ: the target is 90% of runs within 3 points after 50 matches; 6 runs check that at most
    // one misses (the example measures the share over 1000 runs).
    assert!(f.within_3 >= 5.0 / 6.0, "{f:?}");
    // The ratings are on the strengths' scale.
    assert!((0.85..1.15).contains(&f.mean_pool_slope), "{f:?}");
}

#[test]
fn with_weng_lins_own_beta_ratings_spread_wider_than_strengths() {
    // The reason for the calibrated β: with the model's β equal to the game's noise, the settled
    // pool's μ still spreads wider than the truth.
    let mut config = PoolConfig {
        newcomer_matches: 1,
        ..PoolConfig::default()
    };
    config.rating.beta = WENG_LIN_BETA;
    let f = figures(&config, 2, 1000);
    assert!(f.mean_pool_slope > 1.1, "{f:?}");
}
