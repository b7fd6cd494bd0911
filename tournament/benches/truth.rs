//! Does the ranking find the truth? Five entrants of known strength (the heuristic bot playing a
//! random legal action with probability 0, 0.2, 0.4, 0.6 and 0.8, so the true order is that
//! one) in a round robin, over many tournament seeds, with and without duplicate deals. For each
//! budget of games it reports how close the rating order is to the true order (Kendall's tau,
//! and how often it is exactly right), how wide the 95% intervals on μ are, and how many
//! neighbours in the true order the intervals separate; then how many games each tournament
//! needed before its order was right and stayed right.
//!
//! A tournament with `d` deals per table plays exactly the first `d` deals of one with more, in
//! the same order, so each seed is run once at the largest budget and read at every smaller one.
//!
//! `cargo bench -p maumau-tournament --bench truth`
//! (`TRUTH_SEEDS`, default 20; `TRUTH_DEALS`, the largest budget in deals per table, default 256;
//! `TRUTH_SEATS`, default 2).

use maumau_engine::{MatchConfig, ProfileId};
use maumau_tournament::{Entrant, GameRecord, Standing, Tournament, standings};

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
}

fn read(names: &[String], rows: &[Standing]) -> Reading {
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
    Reading {
        tau: f64::from(concordant - discordant) / f64::from(concordant + discordant),
        exact: discordant == 0,
        ci95: rows.iter().map(|r| r.rating.ci95).sum::<f64>() / rows.len() as f64,
        separated,
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
                let (rows, _) = standings(&names, &games);
                readings[di][bi].push(read(&names, &rows));
            }
        }
    }
    println!(
        "ranking truth: classic, {seats} seats, round robin of {ENTRANTS}\n\
         true order p0 > p2 > p4 > p6 > p8; {seeds} tournament seeds per line; \
         {total_games} games in {:.0} s\n",
        started.elapsed().as_secs_f64()
    );
    println!(
        "{:>7} {:>6} | {:^35} | {:^35}",
        "", "", "duplicate deals", "independent deals"
    );
    println!(
        "{:>7} {:>6} | {:>6} {:>6} {:>8} {:>11} | {:>6} {:>6} {:>8} {:>11}",
        "deals",
        "games",
        "tau",
        "exact",
        "±μ 95%",
        "separated",
        "tau",
        "exact",
        "±μ 95%",
        "separated"
    );
    for (bi, &d) in budgets.iter().enumerate() {
        let cols: Vec<String> = (0..2)
            .map(|di| {
                let rs = &readings[di][bi];
                let n = rs.len() as f64;
                let tau = rs.iter().map(|r| r.tau).sum::<f64>() / n;
                let exact = rs.iter().filter(|r| r.exact).count() as f64 / n;
                let ci = rs.iter().map(|r| r.ci95).sum::<f64>() / n;
                let sep = rs.iter().map(|r| r.separated as f64).sum::<f64>() / n;
                format!(
                    "{tau:>6.3} {:>5.0}% {ci:>8.2} {:>7.2} of 4",
                    exact * 100.0,
                    sep
                )
            })
            .collect();
        println!(
            "{d:>7} {:>6} | {} | {}",
            d as usize * games_per_deal,
            cols[0],
            cols[1]
        );
    }
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
