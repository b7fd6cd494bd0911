//! A simulated pool: bots of known strength matched by the real matchmaker and rated by the real
//! rating code, to measure how fast and how well a new version's rating settles.
//!
//! Placings are drawn from the rating model's own assumption: each seat performs at its true
//! strength plus Gumbel noise of scale √2·β, so two seats compare by a logistic curve of scale
//! √2·β, which is what Weng-Lin's Bradley–Terry update expects once uncertainties are small. A
//! strength is therefore in rating points: "μ within 3 points of the truth" is meaningful.
//!
//! What the simulation shows (see `examples/sim_pool.rs` for the figures): with the model's
//! default β equal to the game's noise, Weng-Lin's ratings spread wider than the strengths (all
//! bots start with σ = 25/3 and overshoot; with σ small they come back only slowly), so a
//! newcomer's μ, though well placed among its opponents, is often more than 3 points from its
//! truth. A model β of about 0.72 of the game's noise ([`CALIBRATED_BETA`] against the default
//! noise) cancels the spread and also lets σ fall faster.

use std::collections::BTreeMap;

use maumau_rating::{Rating, RatingConfig, rate_table};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

use crate::ids::{OwnerId, VersionId};
use crate::matchmaking::{Candidate, Format, MatchmakingConfig, plan_tables};

/// A model β that, against the default game noise β = 25/6, keeps ratings on the strengths'
/// scale in a settled pool (found with `examples/sim_pool.rs`); the ladder's default.
pub const CALIBRATED_BETA: f64 = maumau_rating::LADDER_BETA;

/// Weng-Lin's own β (25/6), the default game noise of a simulated pool.
pub const WENG_LIN_BETA: f64 = 25.0 / 6.0;

/// The shape of a simulated pool.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolConfig {
    /// Established bots in the pool (default 40).
    pub bots: usize,
    /// Seats per table (default 4).
    pub seats: u8,
    /// True strengths are uniform in 25 ± `spread` (default 10).
    pub spread: f64,
    /// Rounds the pool plays before the newcomer arrives; every bot plays about one match per
    /// round (default 200: a settled pool, whose launch-time overshoot has mostly worn off).
    pub warmup_rounds: u32,
    /// Rated matches the newcomer plays (default 50).
    pub newcomer_matches: u32,
    /// The game's noise β: placings are drawn with Gumbel noise of scale √2·β (default 25/6,
    /// the rating model's own β, so strengths are in rating points).
    pub noise_beta: f64,
    /// The rating model.
    pub rating: RatingConfig,
}

impl Default for PoolConfig {
    fn default() -> Self {
        PoolConfig {
            bots: 40,
            seats: 4,
            spread: 10.0,
            warmup_rounds: 200,
            newcomer_matches: 50,
            noise_beta: WENG_LIN_BETA,
            rating: RatingConfig::default(),
        }
    }
}

/// One newcomer's run.
#[derive(Clone, Debug, PartialEq)]
pub struct NewcomerRun {
    /// Its true strength.
    pub truth: f64,
    /// Its σ after each of its matches (index 0 is after its first match).
    pub sigma: Vec<f64>,
    /// Its rating after its last match.
    pub rating: Rating,
    /// Mean μ of the established pool minus their mean true strength, when the newcomer is done.
    pub pool_offset: f64,
    /// Least-squares slope of the established pool's μ over their true strengths: 1 when the
    /// ratings' scale is the truth's, above 1 when ratings spread wider than strengths.
    pub pool_slope: f64,
}

impl NewcomerRun {
    /// The number of matches after which σ first fell below `level`.
    pub fn matches_until_sigma_below(&self, level: f64) -> Option<usize> {
        self.sigma.iter().position(|&s| s < level).map(|i| i + 1)
    }

    /// |μ − truth| at the end.
    pub fn mu_error(&self) -> f64 {
        (self.rating.mu - self.truth).abs()
    }
}

/// Placings (1 is best) of seats with these true strengths, drawn with Gumbel noise of `scale`.
pub fn draw_placings(strengths: &[f64], scale: f64, rng: &mut Pcg64) -> Vec<u8> {
    let perf: Vec<f64> = strengths
        .iter()
        .map(|s| {
            // Gumbel(0, scale) by inversion; u in (0, 1).
            let u: f64 = rng.random::<f64>().clamp(1e-12, 1.0 - 1e-12);
            s - scale * (-u.ln()).ln()
        })
        .collect();
    perf.iter()
        .map(|p| 1 + perf.iter().filter(|q| *q > p).count() as u8)
        .collect()
}

/// Runs one seeded pool: warm-up, then a newcomer plays its matches among the established bots.
pub fn run_newcomer(config: &PoolConfig, seed: u64) -> NewcomerRun {
    let mut rng = Pcg64::seed_from_u64(seed);
    let n = config.bots + 1;
    let newcomer = config.bots;
    let truth: Vec<f64> = (0..n)
        .map(|_| 25.0 + config.spread * (2.0 * rng.random::<f64>() - 1.0))
        .collect();
    let mut ratings = vec![Rating::default(); n];
    let mut played = vec![0u32; n];
    let mut last: Vec<Option<i64>> = vec![None; n];
    let scale = std::f64::consts::SQRT_2 * config.noise_beta;
    let mut mm = MatchmakingConfig::new(vec![Format {
        profile: "classic".into(),
        seats: config.seats,
        weight: 1.0,
    }]);
    mm.idle_after_ms = i64::MAX;
    let mut sigma = Vec::new();
    let mut round: i64 = 0;
    // A safety bound: the newcomer is first in line while new, and after that misses at most a
    // round now and then.
    let max_rounds = i64::from(config.warmup_rounds) + 4 * i64::from(config.newcomer_matches) + 10;
    while round < max_rounds && (sigma.len() as u32) < config.newcomer_matches {
        let present = if round < i64::from(config.warmup_rounds) {
            config.bots
        } else {
            n
        };
        let candidates: Vec<Candidate> = (0..present)
            .map(|i| Candidate {
                version: VersionId(i as i64),
                owner: OwnerId(i as i64),
                free: 1,
                profiles: vec!["classic".into()],
                seats: vec![config.seats],
                mu: BTreeMap::from([("classic".to_string(), ratings[i].mu)]),
                rated_matches: played[i],
                last_scheduled: last[i],
                probe: None,
            })
            .collect();
        let tables = plan_tables(&mm, &candidates, &[], round, rng.random());
        for t in tables {
            let seats: Vec<usize> = t.seats.iter().map(|v| v.0 as usize).collect();
            let strengths: Vec<f64> = seats.iter().map(|&i| truth[i]).collect();
            let placings = draw_placings(&strengths, scale, &mut rng);
            let before: Vec<Rating> = seats.iter().map(|&i| ratings[i]).collect();
            let Ok(after) = rate_table(&config.rating, &before, &placings) else {
                continue;
            };
            for (&i, a) in seats.iter().zip(after) {
                ratings[i] = a;
                played[i] += 1;
                last[i] = Some(round);
                if i == newcomer {
                    sigma.push(a.sigma);
                }
            }
        }
        round += 1;
    }
    let pool = config.bots as f64;
    let pool_offset = (0..config.bots)
        .map(|i| ratings[i].mu - truth[i])
        .sum::<f64>()
        / pool;
    let mean_truth = (0..config.bots).map(|i| truth[i]).sum::<f64>() / pool;
    let mean_mu = (0..config.bots).map(|i| ratings[i].mu).sum::<f64>() / pool;
    let cov: f64 = (0..config.bots)
        .map(|i| (truth[i] - mean_truth) * (ratings[i].mu - mean_mu))
        .sum();
    let var: f64 = (0..config.bots)
        .map(|i| (truth[i] - mean_truth).powi(2))
        .sum();
    NewcomerRun {
        truth: truth[newcomer],
        sigma,
        rating: ratings[newcomer],
        pool_offset,
        pool_slope: if var > 0.0 { cov / var } else { 1.0 },
    }
}

/// Figures over many seeded runs.
#[derive(Clone, Debug, PartialEq)]
pub struct PoolFigures {
    /// Runs.
    pub runs: usize,
    /// Share of runs whose newcomer's σ fell below 2.0 within 40 matches.
    pub sigma_below_2_within_40: f64,
    /// The largest number of matches any run needed for σ < 2.0 (`None` if one never got there).
    pub worst_matches_to_sigma_2: Option<usize>,
    /// Share of runs whose newcomer's μ ended within 3 points of its truth.
    pub within_3: f64,
    /// Mean |μ − truth| at the end.
    pub mean_error: f64,
    /// Mean offset of the established pool's μ from its truth.
    pub mean_pool_offset: f64,
    /// Mean slope of the established pool's μ over its truth (1 when on the same scale).
    pub mean_pool_slope: f64,
    /// Mean σ of the newcomer at the end.
    pub mean_sigma: f64,
}

/// Runs `runs` pools with seeds `first_seed..` and summarises them.
pub fn figures(config: &PoolConfig, runs: usize, first_seed: u64) -> PoolFigures {
    let mut below = 0;
    let mut worst = Some(0);
    let mut within = 0;
    let mut err = 0.0;
    let mut offset = 0.0;
    let mut slope = 0.0;
    let mut sigma = 0.0;
    for r in 0..runs {
        let run = run_newcomer(config, first_seed + r as u64);
        let m = run.matches_until_sigma_below(2.0);
        if m.is_some_and(|m| m <= 40) {
            below += 1;
        }
        worst = match (worst, m) {
            (Some(w), Some(m)) => Some(w.max(m)),
            _ => None,
        };
        if run.mu_error() <= 3.0 {
            within += 1;
        }
        err += run.mu_error();
        offset += run.pool_offset;
        slope += run.pool_slope;
        sigma += run.rating.sigma;
    }
    let n = runs.max(1) as f64;
    PoolFigures {
        runs,
        sigma_below_2_within_40: below as f64 / n,
        worst_matches_to_sigma_2: worst,
        within_3: within as f64 / n,
        mean_error: err / n,
        mean_pool_offset: offset / n,
        mean_pool_slope: slope / n,
        mean_sigma: sigma / n,
    }
}
