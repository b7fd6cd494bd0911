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
//! - `SEARCH_MS`: a budget in time instead: each decision searches for this many milliseconds
//!   (no playout limit; [`SearchBot::with_time_limit`] shares the time out between the rounds of
//!   successive halving). Decisions then depend on the machine's speed and load.
//! - `SEARCH_PATHS` (default `trusted`): `trusted,checked` plays the search pair twice, in the
//!   same run and deal by deal (so both meet the same load): with playouts applied by the
//!   engine's trusted `apply_unchecked` (what the bot does) and by the checked `apply_with`
//!   ([`SearchBot::with_checked_playouts`], how it played before). Under a playout budget both
//!   make the same moves; under `SEARCH_MS` the trusted path fits more playouts into the time.
//!   The paired difference of the two win shares is printed with its 95% interval, and before
//!   the table the playout rate of each path (see below).
//! - `SPEED_ROUNDS` (default 5, 0 to skip): with `checked` among the paths, the search bot's
//!   decisions on a fixed set of positions per case (40 positions of a heuristic game, 2000
//!   playouts each, the same decisions on both paths) are timed for each path in turn, this many
//!   rounds; printed: playouts per second of each path (medians) and the median of the per-round
//!   ratios, i.e. how many more playouts the trusted path fits in a fixed time.
//! - `STRENGTH_CASES`: these cases instead, comma-separated (`classic/2,romanian-32/3`; any
//!   profile and seat count, `classic/3` for the table of `maumau tournament` with no arguments).
//! - `STRENGTH_PAIRS`: only the pairs whose first bot is named (`heuristic`, `search`).
//! - `STRENGTH_THREADS` (default: the available cores): deals are shared out between threads;
//!   the results do not depend on it.
//! - `STRENGTH_TIMED_DEALS` (default 4): after each search case, this many deals are played
//!   again on one thread (nothing else of the bench running) to time the search bot's
//!   decisions: the median, the 99th percentile and the maximum over every decision with a
//!   real choice.
//!
//! - `SEARCH_INSTRUCTIONS=classic/4:trusted`: only counts a few search decisions for callgrind
//!   (see `instructions_mode`; `SEARCH_POSITIONS` and `SEARCH_ITERATIONS` set how many and how
//!   large; `bot-sdk/benches/search_instructions.sh` compares two builds with it).
//! - `STRENGTH_DEALS_OUT=FILE`: also writes every deal's result to FILE, one tab-separated line
//!   per deal and path (case, pair, path, deal, A's win share, A's score advantage).
//! - `STRENGTH_COMPARE=BEFORE,AFTER`: plays nothing; reads two such files (of two builds run side
//!   by side on the same deals, for example the engine before and after a change) and prints,
//!   for every case, pair and path in both, each one's win share and the paired difference
//!   AFTER − BEFORE over their common deals, with 95% intervals.
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
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use maumau_bot_sdk::bots::{BotKind, SearchBot};
use maumau_bot_sdk::engine::profile::Scoring;
use maumau_bot_sdk::engine::{
    Action, CallsMode, Event, Game, MatchConfig, MatchResult, Observation, ProfileId, event_for,
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

/// How the search bot under test searches: its playout budget, or a time per decision, and
/// which apply its playouts use.
#[derive(Clone, Copy)]
struct Search {
    iterations: u32,
    ms: Option<u64>,
    checked: bool,
}

impl Search {
    fn build(self, seed: u64) -> SearchBot {
        let mut bot = match self.ms {
            Some(ms) => SearchBot::with_iterations(seed, u32::MAX)
                .with_time_limit(Duration::from_millis(ms)),
            None => SearchBot::with_iterations(seed, self.iterations),
        };
        if self.checked {
            bot = bot.with_checked_playouts();
        }
        bot
    }
}

/// A bot of `kind` for a seat; the search bot is set up as under test.
fn bot(kind: BotKind, seed: u64, search: Search) -> Box<dyn Bot> {
    match kind {
        BotKind::Search => Box::new(search.build(seed)),
        k => k.build(seed),
    }
}

/// Plays one match; returns the result and which seats were kind A.
fn play(
    config: MatchConfig,
    deal: u64,
    is_a: &[bool],
    (a, b): (BotKind, BotKind),
    search: Search,
    times: &Arc<Mutex<Vec<Duration>>>,
) -> MatchResult {
    let mut bots: Vec<Box<dyn Bot>> = is_a
        .iter()
        .enumerate()
        .map(|(s, &x)| {
            let kind = if x { a } else { b };
            let inner = bot(kind, deal * 131 + s as u64, search);
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
    search: Search,
) -> (f64, f64) {
    let positive = config
        .rules()
        .map(|r| r.scoring == Scoring::Positive)
        .unwrap_or(false);
    let times = Arc::new(Mutex::new(Vec::new()));
    let (mut w, mut d) = (0.0, 0.0);
    for is_a in seatings {
        let r = play(config, deal, is_a, kinds, search, &times);
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

/// The search bot's playout rate on each path (see `SPEED_ROUNDS` in the module docs): returns
/// the medians of playouts per second, trusted and checked, and the median per-round ratio.
fn playout_speed(config: MatchConfig, rounds: usize) -> (f64, f64, f64) {
    const ITERATIONS: u32 = 2000;
    let positions = positions(config, 40);
    let time = |checked: bool| {
        let search = Search {
            iterations: ITERATIONS,
            ms: None,
            checked,
        };
        let started = Instant::now();
        for (i, position) in positions.iter().enumerate() {
            std::hint::black_box(position.decide(search, i as u64));
        }
        (positions.len() as f64 * f64::from(ITERATIONS)) / started.elapsed().as_secs_f64()
    };
    let (mut trusted, mut checked, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        // Alternate which path goes first.
        let (t, c) = if round % 2 == 0 {
            let t = time(false);
            (t, time(true))
        } else {
            let c = time(true);
            (time(false), c)
        };
        trusted.push(t);
        checked.push(c);
        ratios.push(t / c);
    }
    (median(trusted), median(checked), median(ratios))
}

/// A position with a real choice, as its seat sees it, and the events that seat saw up to it
/// (which the search bot reads to infer hidden hands).
struct Position {
    obs: Observation,
    events: Vec<Event>,
}

impl Position {
    /// A new search bot's decision here, after it has been shown the events.
    fn decide(&self, search: Search, seed: u64) -> Action {
        let mut bot = search.build(seed);
        for e in &self.events {
            bot.on_event(e);
        }
        bot.decide(&self.obs)
    }
}

/// Up to `n` positions with a real choice, from one heuristic game, as their seats see them.
fn positions(config: MatchConfig, n: usize) -> Vec<Position> {
    let mut events = Vec::new();
    let mut game = Game::new_with(config, 0x5EED, &mut events).expect("valid");
    let mut heuristic: Vec<Box<dyn Bot>> = (0..config.seats)
        .map(|s| BotKind::Heuristic.build(u64::from(s)))
        .collect();
    let mut positions = Vec::new();
    while positions.len() < n {
        let Some(seat) = game.to_act() else { break };
        let obs = game.observation(seat);
        if obs.legal.len() > 1 {
            positions.push(Position {
                obs,
                events: events.iter().map(|e| event_for(e, Some(seat))).collect(),
            });
        }
        let action = heuristic[seat as usize].decide(&obs);
        game.apply_with(seat, action, &mut events).expect("legal");
    }
    positions
}

/// `SEARCH_INSTRUCTIONS=classic/4:trusted` (a case, then `trusted` or `checked`): decides
/// `SEARCH_POSITIONS` (default 10) positions of that case with `SEARCH_ITERATIONS` (default 500)
/// playouts each, inside [`measured_search`], and prints the decisions, the playouts and the
/// chosen actions, so that callgrind counts the instructions of exactly those decisions:
///
/// ```sh
/// SEARCH_INSTRUCTIONS=classic/4:trusted valgrind --tool=callgrind \
///     --toggle-collect='*measured_search*' target/release/deps/strength-<hash>
/// ```
///
/// Instructions divided by decisions: the cost of a decision, load-free. Two builds given the
/// same settings decide the same positions; `bot-sdk/benches/search_instructions.sh` counts both
/// and compares their choices.
fn instructions_mode(spec: &str) {
    let (case, path) = spec.split_once(':').unwrap_or((spec, "trusted"));
    let (profile, seats) = case.split_once('/').expect("a case like classic/4");
    let config = MatchConfig {
        calls: CallsMode::Enforce,
        ..MatchConfig::new(
            profile.parse().expect("a profile"),
            seats.parse().expect("seats"),
        )
    };
    let iterations: u32 = env("SEARCH_ITERATIONS").unwrap_or(500);
    let search = Search {
        iterations,
        ms: None,
        checked: path == "checked",
    };
    let positions = positions(config, env("SEARCH_POSITIONS").unwrap_or(10));
    let chosen = measured_search(search, &positions);
    let listed: Vec<String> = chosen.iter().map(ToString::to_string).collect();
    println!(
        "{case} {}: {} decisions, {} playouts each; chosen: {}",
        path_name(search),
        positions.len(),
        iterations,
        listed.join(", ")
    );
}

/// The decisions callgrind counts in [`instructions_mode`]: each position's chosen action.
#[inline(never)]
fn measured_search(search: Search, positions: &[Position]) -> Vec<Action> {
    positions
        .iter()
        .enumerate()
        .map(|(i, position)| position.decide(search, i as u64))
        .collect()
}

/// `trusted` or `checked`: how the search's playouts apply their moves.
fn path_name(search: Search) -> &'static str {
    if search.checked { "checked" } else { "trusted" }
}

/// One run's per-deal win shares (`STRENGTH_DEALS_OUT`), by case, pair and path, then deal.
type Deals =
    std::collections::BTreeMap<(String, String, String), std::collections::BTreeMap<u64, f64>>;

fn read_deals(path: &str) -> Deals {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("STRENGTH_COMPARE: cannot read {path}: {e}"));
    let mut deals = Deals::new();
    for (n, line) in text.lines().enumerate() {
        let f: Vec<&str> = line.split('\t').collect();
        let parsed = (f.len() == 6)
            .then(|| Some((f[3].parse::<u64>().ok()?, f[4].parse::<f64>().ok()?)))
            .flatten();
        let Some((deal, win)) = parsed else {
            panic!(
                "STRENGTH_COMPARE: {path} line {}: not a deal line: {line:?}",
                n + 1
            );
        };
        deals
            .entry((f[0].into(), f[1].into(), f[2].into()))
            .or_default()
            .insert(deal, win);
    }
    deals
}

/// `STRENGTH_COMPARE`: the paired difference of two runs' win shares, deal by deal.
fn compare(before: &str, after: &str) {
    let (b, a) = (read_deals(before), read_deals(after));
    println!(
        "A's win share before ({before}) and after ({after}), and after - before paired over the common deals; 95% intervals\n"
    );
    println!(
        "{:<17} {:<20} {:<8} {:>6} {:>15} {:>15} {:>17}",
        "case", "A-B", "path", "deals", "before", "after", "after - before"
    );
    for (key, after_deals) in &a {
        let Some(before_deals) = b.get(key) else {
            continue;
        };
        let common: Vec<(f64, f64)> = after_deals
            .iter()
            .filter_map(|(d, &x)| Some((before_deals.get(d).copied()?, x)))
            .collect();
        if common.len() < 2 {
            continue;
        }
        let (bm, bc) = mean_ci(&common.iter().map(|p| p.0).collect::<Vec<_>>());
        let (am, ac) = mean_ci(&common.iter().map(|p| p.1).collect::<Vec<_>>());
        let (dm, dc) = mean_ci(&common.iter().map(|p| p.1 - p.0).collect::<Vec<_>>());
        let verdict = verdict(dm, dc, 0.0, ["rises", "falls"]);
        println!(
            "{:<17} {:<20} {:<8} {:>6} {:>6.3} ± {:<6.3} {:>6.3} ± {:<6.3} {:>+7.3} ± {:<6.3} {verdict}",
            key.0,
            key.1,
            key.2,
            common.len(),
            bm,
            bc,
            am,
            ac,
            dm,
            dc
        );
    }
}

/// Whether a mean with a 95% half-width `ci` lies above `even` (`words[0]`), below it
/// (`words[1]`), or its interval covers it.
fn verdict(mean: f64, ci: f64, even: f64, words: [&'static str; 2]) -> &'static str {
    if mean - ci > even {
        words[0]
    } else if mean + ci < even {
        words[1]
    } else {
        "not separated"
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test` runs benches once; this one is a measurement, not a test.
    }
    if let Ok(spec) = std::env::var("SEARCH_INSTRUCTIONS") {
        instructions_mode(&spec);
        return;
    }
    if let Ok(files) = std::env::var("STRENGTH_COMPARE") {
        let (before, after) = files
            .split_once(',')
            .expect("STRENGTH_COMPARE=BEFORE,AFTER");
        compare(before, after);
        return;
    }
    let mut deals_out = std::env::var("STRENGTH_DEALS_OUT").ok().map(|path| {
        std::fs::File::create(&path)
            .unwrap_or_else(|e| panic!("STRENGTH_DEALS_OUT: cannot create {path}: {e}"))
    });
    let games: u64 = env("STRENGTH_GAMES").unwrap_or(600);
    let iterations: u32 = env("SEARCH_ITERATIONS").unwrap_or(SearchBot::DEFAULT_ITERATIONS);
    let ms: Option<u64> = env("SEARCH_MS");
    let paths = std::env::var("SEARCH_PATHS").unwrap_or_else(|_| "trusted".into());
    let checked_paths: Vec<bool> = paths
        .split(',')
        .filter_map(|p| match p {
            "trusted" => Some(false),
            "checked" => Some(true),
            _ => None,
        })
        .collect();
    assert!(
        !checked_paths.is_empty(),
        "SEARCH_PATHS: trusted, checked or both"
    );
    let speed_rounds: usize = env("SPEED_ROUNDS").unwrap_or(5);
    let threads: usize = env("STRENGTH_THREADS")
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let timed_deals: u64 = env("STRENGTH_TIMED_DEALS").unwrap_or(4);
    let only = std::env::var("STRENGTH_CASES").unwrap_or_default();
    let pairs = std::env::var("STRENGTH_PAIRS").unwrap_or_default();
    // The usual cases, or exactly those named.
    let cases: Vec<(ProfileId, u8)> = if only.is_empty() {
        vec![
            (ProfileId::Classic, 2),
            (ProfileId::Classic, 4),
            (ProfileId::PenaltyPoints, 4),
            (ProfileId::Brazilian, 6),
            (ProfileId::Romanian32, 3),
        ]
    } else {
        only.split(',')
            .map(|case| {
                let (profile, seats) = case
                    .split_once('/')
                    .expect("STRENGTH_CASES: cases like classic/3");
                (
                    profile.parse().expect("STRENGTH_CASES: a profile"),
                    seats.parse().expect("STRENGTH_CASES: a seat count"),
                )
            })
            .collect()
    };
    let budget = match ms {
        Some(ms) => format!("{ms} ms per decision"),
        None => format!("{iterations} playouts per decision"),
    };
    println!(
        "duplicate matches, calls=enforce, about {games} games per case: every deal played with \
         each distinct rotation of the seating and with the kinds swapped; search budget \
         {budget}; playouts applied by: {paths}; intervals are 95% over deals\n"
    );
    if checked_paths.len() > 1 && speed_rounds > 0 {
        println!(
            "search playouts per second, {speed_rounds} rounds, each path in turn (medians): \
             trusted = apply_unchecked, checked = apply_with"
        );
        println!(
            "{:<17} {:>12} {:>12} {:>16} {:>22}",
            "case", "trusted", "checked", "trusted/checked", "playouts in 10 ms t/c"
        );
        for &(profile, seats) in &cases {
            let config = MatchConfig {
                calls: CallsMode::Enforce,
                ..MatchConfig::new(profile, seats)
            };
            let (t, c, ratio) = playout_speed(config, speed_rounds);
            println!(
                "{:<17} {:>12.0} {:>12.0} {:>16.3} {:>22}",
                format!("{profile}/{seats}"),
                t,
                c,
                ratio,
                format!("{:.0} / {:.0}", t / 100.0, c / 100.0)
            );
        }
        println!();
    }
    println!(
        "{:<17} {:<28} {:>6} {:>15} {:>15} {:>24}",
        "case", "A vs B", "games", "A win share", "A score adv.", "A ms/decision p50/p99/max"
    );
    for (profile, seats) in cases {
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
            // The search pair is played once per path, deal by deal; other pairs once.
            let variants: Vec<Search> = if a == BotKind::Search {
                checked_paths
                    .iter()
                    .map(|&checked| Search {
                        iterations,
                        ms,
                        checked,
                    })
                    .collect()
            } else {
                vec![Search {
                    iterations,
                    ms,
                    checked: false,
                }]
            };
            let started = Instant::now();
            let per_deal = parallel(deals, threads, &label, |deal| {
                variants
                    .iter()
                    .map(|&search| play_deal(config, deal, &seatings, (a, b), search))
                    .collect::<Vec<_>>()
            });
            let wall = started.elapsed();
            let played = deals as usize * seatings.len();
            for (v, &search) in variants.iter().enumerate() {
                let win: Vec<f64> = per_deal.iter().map(|r| r[v].0).collect();
                let adv: Vec<f64> = per_deal.iter().map(|r| r[v].1).collect();
                if let Some(out) = deals_out.as_mut() {
                    use std::io::Write;
                    for (deal, (w, d)) in win.iter().zip(&adv).enumerate() {
                        writeln!(
                            out,
                            "{profile}/{seats}\t{a}-{b}\t{}\t{deal}\t{w}\t{d}",
                            path_name(search)
                        )
                        .expect("STRENGTH_DEALS_OUT: write");
                    }
                }
                let ms = if a == BotKind::Search {
                    let times = Arc::new(Mutex::new(Vec::new()));
                    for deal in 0..timed_deals {
                        for is_a in &seatings {
                            play(config, deal, is_a, (a, b), search, &times);
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
                let verdict = verdict(wm, wc, 0.5, ["A stronger", "B stronger"]);
                let name = if variants.len() > 1 {
                    format!("{a} ({})", path_name(search))
                } else {
                    a.name().to_string()
                };
                println!(
                    "{:<17} {:<28} {:>6} {:>6.3} ± {:<6.3} {:>6.1} ± {:<6.1} {:>24}  {verdict} [{:.0} s]",
                    format!("{profile}/{seats}"),
                    format!("{name} vs {b}"),
                    played,
                    wm,
                    wc,
                    dm,
                    dc,
                    ms,
                    wall.as_secs_f64()
                );
            }
            if variants.len() == 2 {
                // Paired over deals: the same deals and seatings on both paths.
                let diff: Vec<f64> = per_deal.iter().map(|r| r[0].0 - r[1].0).collect();
                let (dm, dc) = mean_ci(&diff);
                println!(
                    "{:<17} {:<28} {:>6} {:>+6.3} ± {:<6.3}",
                    format!("{profile}/{seats}"),
                    format!(
                        "win share {} - {}",
                        path_name(variants[0]),
                        path_name(variants[1])
                    ),
                    played,
                    dm,
                    dc
                );
            }
        }
    }
}
