//! How strong are the reference bots? Duplicate matches (the same deals, seats rotated), for
//! classic with 2 and 4 seats and each other profile at a usual seat count: `heuristic` against
//! `random`, and `search` against `heuristic`. Prints win shares, mean score differences, 95%
//! confidence intervals, the number of games, and the search bot's decision time.
//!
//! `cargo bench -p maumau-bot-sdk --bench strength`. Environment variables:
//!
//! - `STRENGTH_GAMES` (default 600): games per case, about; a case plays this many divided by
//!   its seatings per deal (see below) deals, at least 2.
//! - `SEARCH_ITERATIONS`: the search bot's budget (default [`SearchBot::DEFAULT_ITERATIONS`]).
//! - `STRENGTH_CASES`: only these cases, comma-separated (`classic/2,romanian-32/3`).
//! - `STRENGTH_PAIRS`: only the pairs whose first bot is named (`heuristic`, `search`).
//! - `STRENGTH_THREADS` (default: the available cores): deals are shared out between threads;
//!   the results do not depend on it.
//! - `STRENGTH_TIMED_DEALS` (default 4): after each search case, this many deals are played
//!   again on one thread (nothing else of the bench running) to time the search bot's
//!   decisions: the median, the 99th percentile and the maximum over every decision with a
//!   real choice.
//!
//! Progress goes to stderr; the table to stdout.
//!
//! Every deal is one match seed. The kinds sit alternately round the table (A B A B …); the
//! deal is played with every distinct rotation of that seating and with the kinds swapped, so
//! each kind meets the same cards from every seat. Bots are deterministic, so a seating that
//! repeats would repeat its game: each distinct seating is played once (2 games per deal for an
//! even seat count, 6 for 3 seats). A deal's win share is A's share of the wins over its games
//! (co-winners share), and the intervals are over deals. A's score advantage is in match
//! points, the sign turned so that positive is good for A: the mean total of the B seats less
//! that of the A seats under penalty scoring, the other way round under positive scoring.
//!
//! # Last run
//!
//! Release build, 2 threads, on a 2-core machine shared with other builds (load average about
//! 8, so decision times are inflated); search budget 2000 (the default); brazilian with
//! `STRENGTH_GAMES=1600`, the others with the default 600. Decision times from a separate run
//! with `STRENGTH_TIMED_DEALS=16` (1,200 to 4,600 decisions per case).
//!
//! | case | A vs B | games | A win share | A score adv. | search ms/decision p50 / p99 |
//! |---|---|---:|---|---|---|
//! | classic/2 | heuristic vs random | 600 | 0.852 ± 0.029 | 58.3 ± 4.3 | |
//! | classic/2 | search vs heuristic | 600 | 0.710 ± 0.034 | 30.8 ± 4.5 | 9.4 / 21.2 |
//! | classic/4 | heuristic vs random | 600 | 0.802 ± 0.031 | 29.7 ± 2.2 | |
//! | classic/4 | search vs heuristic | 600 | 0.591 ± 0.037 | 5.4 ± 2.4 | 10.8 / 26.5 |
//! | penalty-points/4 | heuristic vs random | 600 | 0.787 ± 0.031 | 28.9 ± 2.3 | |
//! | penalty-points/4 | search vs heuristic | 600 | 0.588 ± 0.035 | 4.9 ± 2.4 | 11.2 / 27.7 |
//! | brazilian/6 | heuristic vs random | 1600 | 0.931 ± 0.013 | 17.2 ± 0.6 | |
//! | brazilian/6 | search vs heuristic | 1600 | 0.544 ± 0.023 | -0.9 ± 0.6 | 17.0 / 39.6 |
//! | romanian-32/3 | heuristic vs random | 600 | 0.997 ± 0.005 | 151.2 ± 3.3 | |
//! | romanian-32/3 | search vs heuristic | 600 | 0.597 ± 0.041 | 21.1 ± 8.9 | 7.9 / 22.8 |
//!
//! Every interval excludes an even share (0.5). In brazilian only going out wins, and the search
//! plays for that alone, so it ends slightly worse on points when it loses.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use maumau_bot_sdk::bots::{BotKind, SearchBot};
use maumau_bot_sdk::engine::profile::Scoring;
use maumau_bot_sdk::engine::{
    Action, CallsMode, Event, Game, MatchConfig, MatchResult, Observation, ProfileId,
};
use maumau_bot_sdk::{Bot, play_match};

/// A Bot wrapper that records how long each `decide` with a real choice takes.
struct Timed {
    inner: Box<dyn Bot>,
    times: Arc<Mutex<Vec<Duration>>>,
}

impl Bot for Timed {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn decide(&mut self, obs: &Observation) -> Action {
        let t = Instant::now();
        let a = self.inner.decide(obs);
        let spent = t.elapsed();
        if obs.legal.len() > 1
            && let Ok(mut times) = self.times.lock()
        {
            times.push(spent);
        }
        a
    }
    fn react(&mut self, obs: &Observation) -> Option<Action> {
        self.inner.react(obs)
    }
    fn on_event(&mut self, event: &Event) {
        self.inner.on_event(event);
    }
    fn on_match_end(&mut self, result: Option<&MatchResult>) {
        self.inner.on_match_end(result);
    }
}

/// Mean and 95% half-width of a sample.
fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, 1.96 * (var / n).sqrt())
}

/// The distinct seatings of a deal: kind A at the even positions of the alternating pattern,
/// every rotation of it, then the same with the kinds swapped (`true` = kind A).
fn seatings(seats: usize) -> Vec<Vec<bool>> {
    let mut out: Vec<Vec<bool>> = Vec::new();
    for swap in [false, true] {
        for rot in 0..seats {
            let s: Vec<bool> = (0..seats)
                .map(|i| ((i + rot) % seats).is_multiple_of(2) != swap)
                .collect();
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    out
}

/// A bot of `kind` for a seat; the search bot gets the budget under test.
fn bot(kind: BotKind, seed: u64, iterations: u32) -> Box<dyn Bot> {
    match kind {
        BotKind::Search => Box::new(SearchBot::with_iterations(seed, iterations)),
        k => k.build(seed),
    }
}

/// Plays one match; returns the result and which seats were kind A.
fn play(
    config: MatchConfig,
    deal: u64,
    is_a: &[bool],
    (a, b): (BotKind, BotKind),
    iterations: u32,
    times: &Arc<Mutex<Vec<Duration>>>,
) -> MatchResult {
    let mut bots: Vec<Box<dyn Bot>> = is_a
        .iter()
        .enumerate()
        .map(|(s, &x)| {
            let kind = if x { a } else { b };
            let inner = bot(kind, deal * 131 + s as u64, iterations);
            if kind == BotKind::Search {
                Box::new(Timed {
                    inner,
                    times: Arc::clone(times),
                })
            } else {
                inner
            }
        })
        .collect();
    let mut game = Game::new(config, 0xD00D + deal).expect("valid");
    play_match(&mut game, &mut bots).expect("finished")
}

/// A's win share and mean score advantage over the seatings of one deal.
fn play_deal(
    config: MatchConfig,
    deal: u64,
    seatings: &[Vec<bool>],
    kinds: (BotKind, BotKind),
    iterations: u32,
) -> (f64, f64) {
    let positive = config
        .rules()
        .map(|r| r.scoring == Scoring::Positive)
        .unwrap_or(false);
    let times = Arc::new(Mutex::new(Vec::new()));
    let (mut w, mut d) = (0.0, 0.0);
    for is_a in seatings {
        let r = play(config, deal, is_a, kinds, iterations, &times);
        let winners: Vec<usize> = r.winners().map(|s| s as usize).collect();
        w += winners.iter().filter(|&&s| is_a[s]).count() as f64 / winners.len() as f64;
        let mean = |want: bool| {
            let xs: Vec<f64> = (0..is_a.len())
                .filter(|&s| is_a[s] == want)
                .map(|s| r.totals[s] as f64)
                .collect();
            xs.iter().sum::<f64>() / xs.len() as f64
        };
        d += if positive {
            mean(true) - mean(false)
        } else {
            mean(false) - mean(true)
        };
    }
    let n = seatings.len() as f64;
    (w / n, d / n)
}

/// `f(deal)` for every deal in `0..deals`, shared out between `threads` threads, in deal order.
/// Reports progress on stderr under `label`.
fn parallel<T: Send>(
    deals: u64,
    threads: usize,
    label: &str,
    f: impl Fn(u64) -> T + Sync,
) -> Vec<T> {
    let threads = threads.max(1) as u64;
    let done = AtomicU64::new(0);
    let started = Instant::now();
    let f = |deal: u64| {
        let x = f(deal);
        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_multiple_of((deals / 10).max(1)) || n == deals {
            eprintln!(
                "  {label}: {n}/{deals} deals, {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
        x
    };
    let mut parts: Vec<Vec<(u64, T)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let f = &f;
                scope.spawn(move || {
                    (t..deals)
                        .step_by(threads as usize)
                        .map(|deal| (deal, f(deal)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a deal panicked"))
            .collect()
    });
    let mut all: Vec<(u64, T)> = parts.drain(..).flatten().collect();
    all.sort_by_key(|(deal, _)| *deal);
    all.into_iter().map(|(_, x)| x).collect()
}

fn env<T: std::str::FromStr>(name: &str) -> Option<T> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}

/// The `q` quantile (0 to 1) of sorted durations, in milliseconds.
fn quantile_ms(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i].as_secs_f64() * 1e3
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test` runs benches once; this one is a measurement, not a test.
    }
    let games: u64 = env("STRENGTH_GAMES").unwrap_or(600);
    let iterations: u32 = env("SEARCH_ITERATIONS").unwrap_or(SearchBot::DEFAULT_ITERATIONS);
    let threads: usize = env("STRENGTH_THREADS")
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let timed_deals: u64 = env("STRENGTH_TIMED_DEALS").unwrap_or(4);
    let only = std::env::var("STRENGTH_CASES").unwrap_or_default();
    let pairs = std::env::var("STRENGTH_PAIRS").unwrap_or_default();
    let cases = [
        (ProfileId::Classic, 2),
        (ProfileId::Classic, 4),
        (ProfileId::PenaltyPoints, 4),
        (ProfileId::Brazilian, 6),
        (ProfileId::Romanian32, 3),
    ];
    println!(
        "duplicate matches, calls=enforce, about {games} games per case: every deal played with \
         each distinct rotation of the seating and with the kinds swapped; search budget \
         {iterations} playouts per decision; intervals are 95% over deals\n"
    );
    println!(
        "{:<17} {:<20} {:>6} {:>15} {:>15} {:>24}",
        "case", "A vs B", "games", "A win share", "A score adv.", "A ms/decision p50/p99/max"
    );
    for (profile, seats) in cases {
        if !only.is_empty() && !only.split(',').any(|c| c == format!("{profile}/{seats}")) {
            continue;
        }
        for (a, b) in [
            (BotKind::Heuristic, BotKind::Random),
            (BotKind::Search, BotKind::Heuristic),
        ] {
            if !pairs.is_empty() && !pairs.split(',').any(|p| p == a.name()) {
                continue;
            }
            let config = MatchConfig {
                calls: CallsMode::Enforce,
                ..MatchConfig::new(profile, seats)
            };
            let seatings = seatings(seats as usize);
            let deals = (games / seatings.len() as u64).max(2);
            let label = format!("{profile}/{seats} {a} vs {b}");
            let started = Instant::now();
            let per_deal = parallel(deals, threads, &label, |deal| {
                play_deal(config, deal, &seatings, (a, b), iterations)
            });
            let wall = started.elapsed();
            let played = deals as usize * seatings.len();
            let win: Vec<f64> = per_deal.iter().map(|r| r.0).collect();
            let adv: Vec<f64> = per_deal.iter().map(|r| r.1).collect();
            let ms = if a == BotKind::Search {
                let times = Arc::new(Mutex::new(Vec::new()));
                for deal in 0..timed_deals {
                    for is_a in &seatings {
                        play(config, deal, is_a, (a, b), iterations, &times);
                    }
                }
                let mut times = times.lock().map(|t| t.clone()).unwrap_or_default();
                times.sort();
                format!(
                    "{:.1}/{:.1}/{:.1} ({})",
                    quantile_ms(&times, 0.5),
                    quantile_ms(&times, 0.99),
                    quantile_ms(&times, 1.0),
                    times.len()
                )
            } else {
                "-".into()
            };
            let (wm, wc) = mean_ci(&win);
            let (dm, dc) = mean_ci(&adv);
            let verdict = if wm - wc > 0.5 {
                "A stronger"
            } else if wm + wc < 0.5 {
                "B stronger"
            } else {
                "not separated"
            };
            println!(
                "{:<17} {:<20} {:>6} {:>6.3} ± {:<6.3} {:>6.1} ± {:<6.1} {:>24}  {verdict} [{:.0} s]",
                format!("{profile}/{seats}"),
                format!("{a} vs {b}"),
                played,
                wm,
                wc,
                dm,
                dc,
                ms,
                wall.as_secs_f64()
            );
        }
    }
}
