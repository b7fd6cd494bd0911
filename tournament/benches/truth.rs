//! Does the ranking find the truth? Five entrants of known strength (the heuristic bot playing a
//! random legal action with probability 0, 0.2, 0.4, 0.6 and 0.8, so the true order is that
//! one) in a round robin, over many tournament seeds, with and without duplicate deals. For each
//! budget of games it reports how close the rating order is to the true order (Kendall's tau,
//! and how often it is exactly right), how wide the 95% intervals on μ are, and how many
//! neighbours in the true order the Weng-Lin intervals separate, beside how many the pairwise
//! test over duplicate blocks separates (in the right direction); then how many games each
//! tournament needed before its order was right and stayed right.
//!
//! The pairwise test's false separations are measured on equal-strength pairs made from the
//! real blocks: every pair's block gains with their signs flipped at random (a seeded coin per
//! block), which keeps the blocks' real spread and makes the true difference zero. (Two copies
//! of one bot are no test under duplicate deals at two seats: they replay each other's games
//! exactly, so every block is 0.) A last line plays such twins on independent deals, where they
//! do not mirror each other, and counts how often the standings (the strength model) separate
//! them.
//!
//! The `model` column is the strength model (`strength_differences`: least squares on every
//! block's placing gains, a bootstrap over whole blocks): true neighbours it separates in the
//! right direction, and its false separations of all pairs when every block's gains are flipped
//! by one seeded coin. A last line times the model's bootstrap on 10,000 games.
//!
//! A tournament with `d` deals per table plays exactly the first `d` deals of one with more, in
//! the same order, so each seed is run once at the largest budget and read at every smaller one.
//!
//! `cargo bench -p maumau-tournament --bench truth`
//! (`TRUTH_SEEDS`, default 20; `TRUTH_DEALS`, the largest budget in deals per table, default 256;
//! `TRUTH_SEATS`, default 2).
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use maumau_engine::seed::SplitMix64;
use maumau_engine::{MatchConfig, ProfileId};
use maumau_tournament::{
    BlockGains, Entrant, GameRecord, MIN_BLOCKS, PairResult, Standing, Tournament, paired_interval,
    standings, strength_differences,
};

const ENTRANTS: &str =
    "p0=heuristic,p2=heuristic~0.2,p4=heuristic~0.4,p6=heuristic~0.6,p8=heuristic~0.8";

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The deal index of a game (`r0-t3-d17-s1` → 17).
fn deal(g: &GameRecord) -> u32 {
    g.id.split('-')
        .find_map(|p| p.strip_prefix('d'))
        .and_then(|d| d.parse().ok())
        .unwrap_or(u32::MAX)
}

/// What one ranking says against the truth (entrant i is the i-th strongest).
struct Reading {
    tau: f64,
    exact: bool,
    ci95: f64,
    separated: usize,
    /// True neighbours the pairwise test separates in the right direction.
    pairwise: usize,
    /// True neighbours in the right order.
    ordered: usize,
    /// Of those, separated by the pairwise test.
    ordered_pairwise: usize,
    /// Equal-strength pairs (sign-flipped blocks) tested, and how many were separated.
    nulls: usize,
    false_separations: usize,
    /// The same test on penalty points per game: neighbours separated, false separations.
    by_total: usize,
    total_false: usize,
    /// The strength model on all blocks: neighbours separated in the right direction, and
    /// false separations of all pairs on sign-flipped blocks.
    model: usize,
    model_false: usize,
}

/// Every block's pair gains, for the strength model, in the order the blocks are played;
/// `flip_seed`: each block's gains negated by a seeded coin (equal strengths).
fn model_blocks(games: &[GameRecord], flip_seed: Option<u64>) -> Vec<BlockGains> {
    // Each block's id, and per pair its gain sum and games.
    type Sums = std::collections::BTreeMap<(usize, usize), (f64, f64)>;
    let mut blocks: Vec<(String, Sums)> = Vec::new();
    for g in games {
        if blocks.last().is_none_or(|b| b.0 != block(g)) {
            blocks.push((block(g).to_string(), Default::default()));
        }
        let sums = &mut blocks.last_mut().expect("pushed").1;
        for i in 0..g.seats.len() {
            for j in 0..g.seats.len() {
                let (a, b) = (g.seats[i], g.seats[j]);
                if a < b {
                    let s = sums.entry((a, b)).or_default();
                    s.0 += f64::from(g.placings[j]) - f64::from(g.placings[i]);
                    s.1 += 1.0;
                }
            }
        }
    }
    let mut coin = SplitMix64::new(flip_seed.unwrap_or(0));
    blocks
        .into_iter()
        .map(|(_, sums)| {
            let sign = if flip_seed.is_some() && coin.next_u64() >> 63 == 1 {
                -1.0
            } else {
                1.0
            };
            sums.into_iter()
                .map(|((a, b), (sum, games))| (a, b, sign * sum / games))
                .collect()
        })
        .collect()
}

/// The block of a game (`r0-t3-d17-s1` → `r0-t3-d17`).
fn block(g: &GameRecord) -> &str {
    g.id.rsplit_once("-s").map_or(g.id.as_str(), |(b, _)| b)
}

/// Every pair's block gains (places per game the first, lower in entry order, finished above the
/// second, averaged over the block), as the standings compute them; with `by_total`, penalty
/// points per game the first scored fewer than the second instead.
fn block_gains(n: usize, games: &[GameRecord], by_total: bool) -> Vec<Vec<f64>> {
    let mut sums: std::collections::BTreeMap<(&str, usize, usize), (f64, f64)> =
        std::collections::BTreeMap::new();
    for g in games {
        for i in 0..g.seats.len() {
            for j in 0..g.seats.len() {
                let (a, b) = (g.seats[i], g.seats[j]);
                if a < b {
                    let s = sums.entry((block(g), a, b)).or_default();
                    s.0 += if by_total {
                        f64::from(g.totals[j]) - f64::from(g.totals[i])
                    } else {
                        f64::from(g.placings[j]) - f64::from(g.placings[i])
                    };
                    s.1 += 1.0;
                }
            }
        }
    }
    let mut gains = vec![Vec::new(); n * n];
    for ((_, a, b), (sum, games)) in sums {
        gains[a * n + b].push(sum / games);
    }
    gains
}

/// Whether the pairwise test separates `gains` with their signs flipped by a seeded coin.
fn separates_flipped(gains: &[f64], seed: u64) -> bool {
    let mut coin = SplitMix64::new(seed);
    let flipped: Vec<f64> = gains
        .iter()
        .map(|&x| if coin.next_u64() >> 63 == 1 { -x } else { x })
        .collect();
    flipped.len() >= MIN_BLOCKS && !paired_interval(&flipped, seed).includes_zero()
}

fn read(
    names: &[String],
    rows: &[Standing],
    pairs: &[PairResult],
    games: &[GameRecord],
    seed: u64,
) -> Reading {
    let n = names.len();
    let pos: Vec<usize> = names
        .iter()
        .map(|name| rows.iter().position(|r| &r.name == name).unwrap_or(n))
        .collect();
    let (mut concordant, mut discordant) = (0i32, 0i32);
    for i in 0..n {
        for j in i + 1..n {
            if pos[i] < pos[j] {
                concordant += 1;
            } else {
                discordant += 1;
            }
        }
    }
    let by_name = |name: &String| rows.iter().find(|r| &r.name == name);
    let separated = names
        .windows(2)
        .filter(|w| {
            let (a, b) = (by_name(&w[0]), by_name(&w[1]));
            a.zip(b)
                .is_some_and(|(a, b)| a.rating.mean - a.rating.ci95 > b.rating.mean + b.rating.ci95)
        })
        .count();
    // Neighbours in the true order, first entrant the stronger (and first in entry order), by
    // the direct test (the standings' `separable` is the strength model's).
    let pairwise_separates = |a: &String, b: &String| {
        pairs
            .iter()
            .any(|p| &p.a == a && &p.b == b && p.blocks >= MIN_BLOCKS && p.gain.low > 0.0)
    };
    let pairwise = names
        .windows(2)
        .filter(|w| pairwise_separates(&w[0], &w[1]))
        .count();
    let ordered: Vec<usize> = (0..n - 1).filter(|&i| pos[i] < pos[i + 1]).collect();
    let ordered_pairwise = ordered
        .iter()
        .filter(|&&i| pairwise_separates(&names[i], &names[i + 1]))
        .count();
    let gains = block_gains(n, games, false);
    // The same test on penalty points instead of placings, for comparison.
    let totals = block_gains(n, games, true);
    let by_total = (0..n - 1)
        .filter(|&i| {
            let xs = &totals[i * n + i + 1];
            let g = paired_interval(xs, seed ^ i as u64);
            xs.len() >= MIN_BLOCKS && g.low > 0.0
        })
        .count();
    let mut total_false = 0;
    let mut nulls = 0;
    let mut false_separations = 0;
    for a in 0..n {
        for b in a + 1..n {
            nulls += 1;
            let coin = maumau_tournament::schedule::mix(&[seed, a as u64, b as u64, 0xF11B]);
            false_separations += usize::from(separates_flipped(&gains[a * n + b], coin));
            total_false += usize::from(separates_flipped(&totals[a * n + b], coin));
        }
    }
    let blocks = model_blocks(games, None);
    let enough = blocks.len() >= MIN_BLOCKS;
    let diffs = strength_differences(n, &blocks, seed);
    let model = (0..n - 1)
        .filter(|&i| enough && diffs[i * n + i + 1].low > 0.0)
        .count();
    let null = strength_differences(n, &model_blocks(games, Some(seed ^ 0xF11B)), seed);
    let model_false = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .filter(|&(a, b)| enough && !null[a * n + b].includes_zero())
        .count();
    Reading {
        model,
        model_false,
        tau: f64::from(concordant - discordant) / f64::from(concordant + discordant),
        exact: discordant == 0,
        ci95: rows.iter().map(|r| r.rating.ci95).sum::<f64>() / rows.len() as f64,
        separated,
        pairwise,
        ordered: ordered.len(),
        ordered_pairwise,
        nulls,
        false_separations,
        by_total,
        total_false,
    }
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let seeds = env("TRUTH_SEEDS", 20);
    let max_deals = env("TRUTH_DEALS", 256);
    let seats = env("TRUTH_SEATS", 2) as u8;
    let entrants = Entrant::parse_list(ENTRANTS).expect("valid entrants");
    let names: Vec<String> = entrants.iter().map(|e| e.name.clone()).collect();
    let mut budgets = vec![1u32];
    while budgets[budgets.len() - 1] * 2 <= max_deals {
        budgets.push(budgets[budgets.len() - 1] * 2);
    }
    let started = std::time::Instant::now();
    let mut total_games = 0usize;
    // readings[dup][budget][seed]
    let mut readings: [Vec<Vec<Reading>>; 2] = [Vec::new(), Vec::new()];
    let mut games_per_deal = 0;
    for (di, duplicate) in [true, false].into_iter().enumerate() {
        readings[di] = budgets.iter().map(|_| Vec::new()).collect();
        for seed in 1..=u64::from(seeds) {
            let mut t = Tournament::new(
                entrants.clone(),
                MatchConfig::new(ProfileId::Classic, seats),
            );
            t.deals = max_deals;
            t.seed = seed;
            t.duplicate = duplicate;
            t.record_replays = false;
            let report = t.run(None, &mut |_| {}).expect("the tournament runs");
            total_games += report.games.len();
            games_per_deal = report.games.len() / max_deals as usize;
            for (bi, &d) in budgets.iter().enumerate() {
                let games: Vec<GameRecord> = report
                    .games
                    .iter()
                    .filter(|g| deal(g) < d)
                    .cloned()
                    .collect();
                let (rows, pairs) = standings(&names, &games, seed);
                readings[di][bi].push(read(&names, &rows, &pairs, &games, seed));
            }
        }
    }
    println!(
        "ranking truth: classic, {seats} seats, round robin of {ENTRANTS}\n\
         true order p0 > p2 > p4 > p6 > p8; {seeds} tournament seeds per line; \
         {total_games} games in {:.0} s\n",
        started.elapsed().as_secs_f64()
    );
    for (di, label) in ["duplicate deals", "independent deals"].iter().enumerate() {
        println!("{label}:");
        println!(
            "{:>7} {:>6} | {:>6} {:>6} {:>7} | {:>9} {:>9} {:>16} | {:>10} | {:>9} {:>6} | {:>9} {:>6}",
            "deals",
            "games",
            "tau",
            "exact",
            "±μ 95%",
            "Weng-Lin",
            "pairwise",
            "pairwise/ordered",
            "false sep.",
            "by points",
            "false",
            "model",
            "false"
        );
        for (bi, &d) in budgets.iter().enumerate() {
            let rs = &readings[di][bi];
            let n = rs.len() as f64;
            let mean = |f: &dyn Fn(&Reading) -> f64| rs.iter().map(f).sum::<f64>() / n;
            let exact = rs.iter().filter(|r| r.exact).count() as f64 / n;
            let nulls: usize = rs.iter().map(|r| r.nulls).sum();
            let false_seps: usize = rs.iter().map(|r| r.false_separations).sum();
            println!(
                "{d:>7} {:>6} | {:>6.3} {:>5.0}% {:>7.2} | {:>4.2} of 4 {:>4.2} of 4 {:>7.2} of {:<4.2}  | {:>5.1}% of {nulls} | {:>4.2} of 4 {:>5.1}% | {:>4.2} of 4 {:>5.1}%",
                d as usize * games_per_deal,
                mean(&|r| r.tau),
                exact * 100.0,
                mean(&|r| r.ci95),
                mean(&|r| r.separated as f64),
                mean(&|r| r.pairwise as f64),
                mean(&|r| r.ordered_pairwise as f64),
                mean(&|r| r.ordered as f64),
                false_seps as f64 * 100.0 / nulls.max(1) as f64,
                mean(&|r| r.by_total as f64),
                rs.iter().map(|r| r.total_false).sum::<usize>() as f64 * 100.0
                    / nulls.max(1) as f64,
                mean(&|r| r.model as f64),
                rs.iter().map(|r| r.model_false).sum::<usize>() as f64 * 100.0
                    / nulls.max(1) as f64,
            );
        }
        println!();
    }
    println!(
        "Weng-Lin, pairwise: true neighbours separated (pairwise: in the right direction), mean \
         per seed; pairwise/ordered: of the neighbours the rating order has right; false sep.: \
         equal-strength pairs (every pair's blocks, signs flipped at random) the pairwise test \
         separates; by points: the same test on penalty points per game instead of placings \
         (for comparison; the standings use placings); model: the strength model on every block, \
         and its false separations with every block flipped by a coin\n"
    );
    twins(seeds, &budgets, seats);
    model_cost(&entrants, &names, seats);
    // Games until each tournament's order is right and stays right at every larger budget.
    println!("\ngames until the order is right and stays right (per seed; > max if never):");
    for (di, label) in ["duplicate deals", "independent deals"].iter().enumerate() {
        let mut needed: Vec<usize> = (0..seeds as usize)
            .map(|s| {
                let mut first = None;
                for bi in (0..budgets.len()).rev() {
                    if readings[di][bi][s].exact {
                        first = Some(bi);
                    } else {
                        break;
                    }
                }
                first.map_or(usize::MAX, |bi| budgets[bi] as usize * games_per_deal)
            })
            .collect();
        needed.sort_unstable();
        let show = |g: usize| {
            if g == usize::MAX {
                format!("> {}", max_deals as usize * games_per_deal)
            } else {
                g.to_string()
            }
        };
        let settled = needed.iter().filter(|&&g| g != usize::MAX).count();
        println!(
            "  {label:<18} median {:>8}  90th percentile {:>8}  settled in {settled} of {seeds}",
            show(needed[needed.len() / 2]),
            show(needed[(needed.len() * 9 / 10).min(needed.len() - 1)]),
        );
    }
}

/// Two copies of one bot (`p4` twice): how often the pairwise test separates them, at each budget,
/// with duplicate deals (where at two seats they replay each other's games, so never) and with
/// independent deals (where they do not).
fn twins(seeds: u32, budgets: &[u32], seats: u8) {
    let entrants = Entrant::parse_list("p4=heuristic~0.4,p4b=heuristic~0.4").expect("valid");
    let names: Vec<String> = entrants.iter().map(|e| e.name.clone()).collect();
    let max = budgets.last().copied().unwrap_or(1);
    for duplicate in [true, false] {
        let mut separated = vec![0usize; budgets.len()];
        for seed in 1..=u64::from(seeds) {
            let mut t = Tournament::new(
                entrants.clone(),
                MatchConfig::new(ProfileId::Classic, seats),
            );
            t.deals = max;
            t.seed = seed;
            t.duplicate = duplicate;
            t.record_replays = false;
            let report = t.run(None, &mut |_| {}).expect("the tournament runs");
            for (bi, &d) in budgets.iter().enumerate() {
                let games: Vec<GameRecord> = report
                    .games
                    .iter()
                    .filter(|g| deal(g) < d)
                    .cloned()
                    .collect();
                let (_, pairs) = standings(&names, &games, seed);
                separated[bi] += pairs.iter().filter(|p| p.separable).count();
            }
        }
        let line: Vec<String> = budgets
            .iter()
            .zip(&separated)
            .map(|(d, s)| format!("{d}: {s}"))
            .collect();
        println!(
            "twins (p4 and a copy), {} deals, seeds separated of {seeds}, by deals per table: {}",
            if duplicate {
                "duplicate"
            } else {
                "independent"
            },
            line.join(", ")
        );
    }
}

/// What the strength model's bootstrap costs at 10,000 games: the blocks of one tournament,
/// repeated until they make 10,000 games, fitted and resampled once.
fn model_cost(entrants: &[Entrant], names: &[String], seats: u8) {
    let mut t = Tournament::new(
        entrants.to_vec(),
        MatchConfig::new(ProfileId::Classic, seats),
    );
    t.deals = 16;
    t.record_replays = false;
    let report = t.run(None, &mut |_| {}).expect("the tournament runs");
    let blocks = model_blocks(&report.games, None);
    let per_block = report.games.len() / blocks.len();
    let wanted = 10_000 / per_block;
    let blocks: Vec<BlockGains> = blocks.iter().cycle().take(wanted).cloned().collect();
    let started = std::time::Instant::now();
    let d = strength_differences(names.len(), &blocks, 1);
    println!(
        "\nstrength model at 10,000 games ({} blocks of {per_block} games, {} entrants): fit and \
         {} resamples in {:.3} s (p0 − p2 {:+.3} [{:+.3}, {:+.3}])",
        blocks.len(),
        names.len(),
        maumau_tournament::BOOTSTRAP_RESAMPLES,
        started.elapsed().as_secs_f64(),
        d[1].mean,
        d[1].low,
        d[1].high,
    );
}
