//! Tournament overhead: a round robin of built-in random bots in classic with 4 seats against
//! bare engine playouts of the same games on the same cores. Scheduling, bots, recording and
//! rating should cost at most 15% (ratio ≥ 0.85, judged by CPU time). Measured in memory, then
//! writing results to an output directory with replay recording off and on; interleaved and
//! repeated, medians reported.
//!
//! Every line plays the very same games, action for action: the bare loop draws each seat's
//! choices from its own SplitMix seeded as the tournament seeds that seat's random bot, and a
//! checksum of every game's totals must agree across the lines (the run stops if not).
//!
//! Wall clock (games per second) and CPU time (games per CPU-second of the whole process, from
//! `/proc/self/stat`), each as the median and the best of the runs. On a machine shared with
//! other work every figure swings by a fifth or more from run to run; the best runs are the
//! least disturbed. Instruction counts do not swing: run one line under callgrind, counting only
//! the measured work (the main thread inside `timed` and every thread it starts), with one
//! tournament seed so that every line plays the same games:
//!
//! ```text
//! SPEED_ONLY=N SPEED_SEED=1 SPEED_GAMES=8000 SPEED_REPEATS=1 SPEED_THREADS=2 \
//!   valgrind --tool=callgrind --collect-atstart=no \
//!   --toggle-collect='speed::timed*' --toggle-collect='*thread_start*' \
//!   target/release/deps/speed-<hash> --bench
//! ```
//!
//! Measured so on 6 December 2026 (8 000 games, instructions, ratio to the bare loop): bare
//! 722.4 M; SDK loop with boxed bots 758.2 M (0.953); tournament in memory 838.9 M (**0.861**;
//! 858.3 M, 0.842, while each table's Weng-Lin update went through skillratings' allocating
//! `weng_lin_multi_team`); writing results 852.7 M (0.847); writing results and replays 985.7 M
//! (0.733). Before the
//! strength model's bootstrap refitted from class weights the tournament in memory was at 0.32
//! (2 268.6 M, 62% of it in the refits). What the tournament adds in memory, 14.6 k instructions
//! a game: the SDK loop's calls into the bots (4.5 k), the Weng-Lin update (2.0 k, 4.4 k before),
//! the fixture (1.8 k, its SHA-256 seed and id), the rest of the standings' tally (2.2 k) and
//! the records. Random bots under duplicate deals replay one game at every seating, so every
//! block of this bench is alike and the model's bootstrap has nothing to draw; when blocks
//! differ it costs about 27 instructions per block per resample (measured on this bench's blocks
//! before that shortcut: 108 M of 959 M), shared among the cores (see docs/PERFORMANCE.md, "The
//! strength model"). In the same run, 3 runs of 80 000 games at load
//! average 6 to 7 (the 2 cores shared with other builds), median games per CPU-second: in memory
//! 0.763 of the bare loop (0.317 before), writing results 0.750 (0.310), with replays 0.592
//! (0.283), where writing 3 kB a game costs kernel time callgrind does not see.
//!
//! `cargo bench -p maumau-tournament --bench speed` (`SPEED_GAMES=N` games per measurement,
//! default 40000; `SPEED_REPEATS`, default 5; `SPEED_ONLY=0..4` runs only that line, for a
//! profiler; `SPEED_THREADS`, default every core; `SPEED_SEED`, the tournament seed, default the
//! operating system's).
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use maumau_engine::seed::SplitMix64;
use maumau_engine::{ActionList, CallsMode, Game, MatchConfig, ProfileId};
use maumau_tournament::{Entrant, Tournament};

/// The least share of the bare loop's games per CPU-second a tournament in memory should keep.
const TARGET: f64 = 0.85;

fn config() -> MatchConfig {
    MatchConfig {
        calls: CallsMode::Enforce,
        ..MatchConfig::new(ProfileId::Classic, 4)
    }
}

/// Games per wall second and per CPU second of `games` games played by `work`, and the checksum
/// of their results.
fn measure(games: usize, work: impl FnOnce() -> u64) -> (f64, f64, u64) {
    let watch = maumau_benchkit::Stopwatch::start();
    let checksum = timed(work);
    let lap = watch.lap();
    let cpu = if lap.cpu > 0.0 { lap.cpu } else { f64::NAN };
    (games as f64 / lap.wall, games as f64 / cpu, checksum)
}

/// The measured work, and nothing else: callgrind counts only this with
/// `--collect-atstart=no --toggle-collect='speed::timed*'`.
#[inline(never)]
fn timed(work: impl FnOnce() -> u64) -> u64 {
    work()
}

/// The same games as the tournament, played by a bare loop: legal actions into a reused list, a
/// SplitMix choice inline, apply with no event sink. Each seat draws from its own SplitMix seeded
/// as the tournament seeds its random bots, so both sides play the very same games, action for
/// action (checked: the returned checksum must match the tournament's). Parallel over `threads`.
fn bare(seeds: &[u64], threads: usize) -> u64 {
    std::thread::scope(|s| {
        let workers: Vec<_> = seeds
            .chunks(seeds.len().div_ceil(threads))
            .map(|chunk| {
                s.spawn(move || {
                    let mut list = ActionList::default();
                    let mut checksum = 0u64;
                    for &seed in chunk {
                        let mut game = Game::new(config(), seed).expect("valid");
                        let mut rng: [SplitMix64; 4] = std::array::from_fn(|s| {
                            SplitMix64::new(maumau_tournament::schedule::bot_seed(seed, s))
                        });
                        while let Some(seat) = game.to_act() {
                            game.legal_actions_into(seat, &mut list);
                            let z = rng[seat as usize & 3].next_u64();
                            let pick = (((z >> 32) * list.len() as u64) >> 32) as usize;
                            let _ = game.apply_with(seat, list[pick], &mut ());
                        }
                        let result = game.match_result();
                        checksum = checksum
                            .wrapping_add(result.map_or(0, |r| checksum_of(&r.totals[..4])));
                    }
                    checksum
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("no panic"))
            .fold(0, u64::wrapping_add)
    })
}

/// A game's contribution to a checksum of many games (their wrapping sum, so order does not
/// matter).
fn checksum_of(totals: &[i32]) -> u64 {
    totals
        .iter()
        .fold(0, |h, &t| maumau_tournament::schedule::mix(&[h, t as u64]))
}

/// The same games played by the bot SDK's in-process loop with boxed random bots, seeded as the
/// tournament seeds them, without any tournament around it: what the SDK's loop costs.
fn sdk_loop(seeds: &[u64], threads: usize) -> u64 {
    use maumau_bot_sdk::Bot;
    use maumau_bot_sdk::bots::RandomBot;
    std::thread::scope(|s| {
        let workers: Vec<_> = seeds
            .chunks(seeds.len().div_ceil(threads))
            .map(|chunk| {
                s.spawn(move || {
                    let mut checksum = 0u64;
                    for &seed in chunk {
                        let mut game = Game::new(config(), seed).expect("valid");
                        let mut bots: Vec<Box<dyn Bot>> = (0..4u64)
                            .map(|s| {
                                let seed = maumau_tournament::schedule::bot_seed(seed, s as usize);
                                Box::new(RandomBot::new(seed)) as Box<dyn Bot>
                            })
                            .collect();
                        let r = maumau_bot_sdk::play_match(&mut game, &mut bots);
                        checksum =
                            checksum.wrapping_add(r.map_or(0, |r| checksum_of(&r.totals[..4])));
                    }
                    checksum
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("no panic"))
            .fold(0, u64::wrapping_add)
    })
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let games = env("SPEED_GAMES", 40_000);
    let repeats = env("SPEED_REPEATS", 5).max(1);
    let threads = env("SPEED_THREADS", 0) as usize;
    let threads = if threads > 0 {
        threads
    } else {
        std::thread::available_parallelism().map_or(2, |n| n.get())
    };
    let mut t = Tournament::new(
        Entrant::parse_list("random,random,random,random").expect("valid"),
        config(),
    );
    t.deals = games / 4;
    t.threads = threads;
    // A fixed tournament seed (otherwise the operating system's): runs under callgrind, one line
    // per process, then play the same games.
    if let Some(seed) = std::env::var("SPEED_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        t.seed = seed;
    }
    // The tournament's seeds, so both sides play exactly the same deals.
    let tables = maumau_tournament::schedule::combinations(4, 4);
    let seeds: Vec<u64> = maumau_tournament::schedule::fixtures(0, &tables, t.deals, t.seed, true)
        .iter()
        .map(|f| f.seed)
        .collect();
    let n = seeds.len();
    // Each run writes to a fresh directory (an old one would be resumed, not played).
    let tournament = |replays: bool, out: bool| {
        let mut t = t.clone();
        t.record_replays = replays;
        let dir = tempfile::tempdir().expect("a temporary directory");
        measure(n, || {
            let r = t.run(out.then(|| dir.path()), &mut |_| {}).expect("runs");
            assert_eq!(r.games.len(), n);
            r.games
                .iter()
                .fold(0, |a, g| a.wrapping_add(checksum_of(&g.totals)))
        })
    };
    let line = |i: usize| match i {
        0 => measure(n, || bare(&seeds, threads)),
        1 => measure(n, || sdk_loop(&seeds, threads)),
        2 => tournament(false, false),
        3 => tournament(false, true),
        _ => tournament(true, true),
    };
    let labels = [
        "bare engine playouts",
        "bot SDK loop, boxed random bots",
        "tournament, no output directory",
        "tournament, results written, no replays",
        "tournament, results and replays written",
    ];
    if let Some(only) = std::env::var("SPEED_ONLY")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        for _ in 0..repeats {
            let (w, c, sum) = line(only);
            println!(
                "{}: {w:.0} games/s, {c:.0} games/CPU-s, checksum {sum:016x}",
                labels[only.min(4)]
            );
        }
        return;
    }
    let mut wall = vec![Vec::new(); labels.len()];
    let mut cpu = vec![Vec::new(); labels.len()];
    for _ in 0..repeats {
        let mut expected = None;
        for (i, (w, c)) in wall.iter_mut().zip(cpu.iter_mut()).enumerate() {
            let (x, y, sum) = line(i);
            // Every line plays the very same games as the bare loop, action for action.
            assert_eq!(
                *expected.get_or_insert(sum),
                sum,
                "{} played other games than the bare loop",
                labels[i]
            );
            w.push(x);
            c.push(y);
        }
    }
    // The best run is the one least disturbed by other work on the machine; the median is
    // what a run typically sees.
    let best = |xs: &[f64]| xs.iter().copied().fold(f64::NAN, f64::max);
    let wall_best: Vec<f64> = wall.iter().map(|x| best(x)).collect();
    let cpu_best: Vec<f64> = cpu.iter().map(|x| best(x)).collect();
    let wall: Vec<f64> = wall.into_iter().map(median).collect();
    let cpu: Vec<f64> = cpu.into_iter().map(median).collect();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "classic/4, {n} random-bot games per measurement, {threads} threads, {repeats} runs \
         each, interleaved; load average {}",
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!(
        "  {:<42} {:>15} {:>15} {:>15} {:>15}",
        "", "median games/s", "best games/s", "median /CPU-s", "best /CPU-s"
    );
    for i in 0..labels.len() {
        let cell = |x: &[f64]| format!("{:>7.0} ({:.3})", x[i], x[i] / x[0]);
        println!(
            "  {:<42} {:>15} {:>15} {:>15} {:>15}",
            labels[i],
            cell(&wall),
            cell(&wall_best),
            cell(&cpu),
            cell(&cpu_best)
        );
    }
    println!("  (ratio to bare engine playouts in parentheses)");
    // Judged by CPU time, which other work on the machine moves far less than wall time.
    let in_memory = cpu[2] / cpu[0];
    println!(
        "  target: a tournament in memory at least {TARGET} of the bare loop by CPU time (median \
         games per CPU-second): {} ({in_memory:.3})",
        if in_memory >= TARGET {
            "met"
        } else {
            "NOT met"
        }
    );
}
