//! Random playouts: how many decisions per second one core gets out of the engine.
//!
//! A decision is one applied action. Each case plays whole matches of one profile at one seat
//! count: the seat to act lists its legal actions with [`Game::legal_actions_into`], a cheap
//! inline generator (the engine's SplitMix64) picks one uniformly, and [`Game::apply_unchecked`]
//! applies it with the no-op event sink `()` (with `PLAYOUT_CHECKED=1`: [`Game::apply_with`],
//! which checks it again). When a match ends the next one starts with a fresh seed, so dealing and
//! shuffling are part of the cost. The target from the project's issue is at least 12 million
//! decisions per second for `classic` with 4 seats, with no heap allocation per decision.
//!
//! Matches use `calls = enforce`, the setting tournaments use: the server applies a missed
//! call's penalty as the last step of the offending play, so no challenge window ever opens and
//! the seat to act ([`Game::to_act`]) is the only seat with a legal action.
//!
//! For scale: OpenSpiel's C++ `crazy_eights` makes about 1.3 M decisions/s per core on these
//! machines (not measured here; `engine/benches/instructions.sh` counts its instructions per
//! decision beside every case of this bench, in one run). The file also holds `bare`, a minimal crazy-eights loop on `u64`
//! card sets (52 cards, match suit or rank, 8s wild and name a suit, draw one card when nothing can
//! be played, uniform random legal move): what a game of this kind costs with no rules engine
//! around it. Its move choice needs no list of actions, so it is a floor, not a like-for-like
//! rival.
//!
//! Run with `cargo bench -p maumau-engine --bench playout`. Divan runs first (throughput in
//! decisions/s; its allocation profiler prints `alloc` rows under a case only if that case
//! allocates, so no such row means no allocation). A summary follows: every case measured again in
//! the same process, all cases in turn, several rounds, medians, and the ratio of `classic/4` to
//! the bare loop measured in the same rounds, and the verdict on the target, given only when the
//! summary had at least 0.8 of a core (its CPU time ÷ its wall time; `maumau-benchkit`).
//! Environment variables: `PLAYOUT_SUMMARY=0` skips the
//! summary, `PLAYOUT_ROUNDS` (default 7) and `PLAYOUT_MS` (milliseconds per case per round,
//! default 200) size it. Under `cargo test` (no `--bench` argument) the summary is skipped and
//! divan runs each benchmark once.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::fmt;
use std::hint::black_box;
use std::time::{Duration, Instant};

use divan::counter::ItemsCount;
use divan::{AllocProfiler, Bencher};
use maumau_engine::seed::SplitMix64;
use maumau_engine::{ActionList, CallsMode, Game, MatchConfig, ProfileId};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

/// Decisions per divan iteration. With 1000, divan's time per iteration in µs reads as ns per
/// decision. Ten iterations per sample keep a sample near a millisecond.
const DECISIONS_PER_ITER: u64 = 1000;

/// The cases: every profile at its typical seat counts, then the bare loop.
const CASES: [Case; 8] = [
    Case::Engine(ProfileId::Classic, 2),
    Case::Engine(ProfileId::Classic, 4),
    Case::Engine(ProfileId::PenaltyPoints, 4),
    Case::Engine(ProfileId::Brazilian, 4),
    Case::Engine(ProfileId::Brazilian, 8),
    Case::Engine(ProfileId::Romanian32, 2),
    Case::Engine(ProfileId::Romanian32, 4),
    Case::Bare(4),
];

const ENGINE_CASES: [Case; 7] = [
    CASES[0], CASES[1], CASES[2], CASES[3], CASES[4], CASES[5], CASES[6],
];

/// The case the target applies to, and the bare loop it is compared with.
const TARGET_CASE: Case = Case::Engine(ProfileId::Classic, 4);
const BARE_CASE: Case = Case::Bare(4);
const TARGET_DECISIONS_PER_SEC: f64 = 12e6;

fn main() {
    check_bare_loop();
    if let Ok(case) = std::env::var("PLAYOUT_CASE") {
        instructions_mode(&case);
        return;
    }
    divan::main();
    let bench_mode = std::env::args().any(|a| a == "--bench");
    let wanted = std::env::var("PLAYOUT_SUMMARY").map_or(true, |v| v != "0");
    if bench_mode && wanted {
        summary();
    }
}

// ----- divan benchmarks ----------------------------------------------------------------------

#[divan::bench(args = ENGINE_CASES, sample_size = 10)]
fn engine(bencher: Bencher, case: Case) {
    run_divan(bencher, case);
}

#[divan::bench(args = [BARE_CASE], sample_size = 10)]
fn bare(bencher: Bencher, case: Case) {
    run_divan(bencher, case);
}

fn run_divan(bencher: Bencher, case: Case) {
    let mut runner = Runner::new(case, 0x5EED);
    bencher
        .counter(ItemsCount::new(DECISIONS_PER_ITER))
        .bench_local(|| runner.run(DECISIONS_PER_ITER));
    black_box(runner.checksum());
}

// ----- instruction counts ------------------------------------------------------------------

/// `PLAYOUT_CASE=classic/4` (a case as the summary names it): plays that case only, for
/// `PLAYOUT_DECISIONS` decisions (default 200 000) after 10 000 of warm-up, all inside
/// [`measured_run`], so that callgrind counts exactly those decisions:
///
/// ```sh
/// PLAYOUT_CASE=classic/4 valgrind --tool=callgrind --toggle-collect='*measured_run*' \
///     target/release/deps/playout-<hash>
/// ```
///
/// The collected total (`callgrind_annotate`'s `PROGRAM TOTALS`) divided by the decisions is the
/// instructions per decision, dealing and shuffling included.
fn instructions_mode(name: &str) {
    let case = *CASES
        .iter()
        .find(|c| c.to_string() == name)
        .unwrap_or_else(|| panic!("no case `{name}`"));
    let decisions = env_u64("PLAYOUT_DECISIONS", 200_000);
    let mut runner = Runner::new(case, 0xC0FFEE);
    runner.run(10_000);
    measured_run(&mut runner, decisions);
    println!(
        "{case}: {decisions} decisions measured, checksum {:x}",
        runner.checksum()
    );
}

/// The decisions callgrind counts in [`instructions_mode`].
#[inline(never)]
fn measured_run(runner: &mut Runner, decisions: u64) {
    runner.run(decisions);
}

// ----- the summary ---------------------------------------------------------------------------

/// One measurement of one case: decisions and finished games per second.
#[derive(Clone, Copy)]
struct Sample {
    decisions_per_sec: f64,
    games_per_sec: f64,
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn measure(runner: &mut Runner, budget: Duration) -> Sample {
    const CHUNK: u64 = 20_000;
    let (games0, decisions0) = (runner.games(), runner.decisions);
    let start = Instant::now();
    let mut elapsed;
    loop {
        runner.run(CHUNK);
        elapsed = start.elapsed();
        if elapsed >= budget {
            break;
        }
    }
    let secs = elapsed.as_secs_f64();
    Sample {
        decisions_per_sec: (runner.decisions - decisions0) as f64 / secs,
        games_per_sec: (runner.games() - games0) as f64 / secs,
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn summary() {
    let rounds = env_u64("PLAYOUT_ROUNDS", 7).max(1) as usize;
    let budget = Duration::from_millis(env_u64("PLAYOUT_MS", 200).max(1));
    println!();
    println!(
        "Summary: {rounds} rounds x {} ms per case, cases interleaved, medians (min-max)",
        budget.as_millis()
    );

    // The summary runs on this thread alone: its CPU time ÷ wall time is the share of a core it
    // had.
    let watch = maumau_benchkit::Stopwatch::start();
    let mut runners: Vec<Runner> = CASES.iter().map(|&c| Runner::new(c, 0xC0FFEE)).collect();
    for r in &mut runners {
        r.run(100_000); // warm up caches and the branch predictor
    }
    let mut samples: Vec<Vec<Sample>> = vec![Vec::new(); CASES.len()];
    let mut ratios = Vec::new();
    let target = CASES.iter().position(|&c| c == TARGET_CASE);
    let bare = CASES.iter().position(|&c| c == BARE_CASE);
    for round in 0..rounds {
        // Rotate the starting case from round to round, so no case is always measured first.
        for k in 0..CASES.len() {
            let i = (k + round) % CASES.len();
            samples[i].push(measure(&mut runners[i], budget));
        }
        if let (Some(t), Some(b)) = (target, bare) {
            ratios.push(samples[t][round].decisions_per_sec / samples[b][round].decisions_per_sec);
        }
    }

    println!(
        "{:<22} {:>12} {:>17} {:>12} {:>10} {:>10}",
        "case", "Mdecisions/s", "(min-max)", "games/s", "dec/game", "rounds/g"
    );
    for (i, case) in CASES.iter().enumerate() {
        let d: Vec<f64> = samples[i].iter().map(|s| s.decisions_per_sec).collect();
        let g: Vec<f64> = samples[i].iter().map(|s| s.games_per_sec).collect();
        let (lo, hi) = d
            .iter()
            .fold((f64::MAX, f64::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let runner = &runners[i];
        println!(
            "{:<22} {:>12.2} {:>17} {:>12.0} {:>10.1} {:>10.2}",
            case.to_string(),
            median(d) / 1e6,
            format!("({:.2}-{:.2})", lo / 1e6, hi / 1e6),
            median(g),
            runner.decisions as f64 / runner.games().max(1) as f64,
            runner.rounds() as f64 / runner.games().max(1) as f64,
        );
        black_box(runner.checksum());
    }
    println!("(a game is one match, from Game::new until to_act() is None; bare: one round)");

    if let (Some(t), false) = (target, ratios.is_empty()) {
        let engine = median(samples[t].iter().map(|s| s.decisions_per_sec).collect());
        let ratio = median(ratios);
        println!(
            "{TARGET_CASE} / {BARE_CASE}: {ratio:.3} decisions/s ratio (median of per-round \
             ratios; an engine decision takes {:.1}x the time of a bare one)",
            1.0 / ratio
        );
        // Judged only when the summary had most of a core: on a shared machine a lower rate
        // measures the other work.
        let share = watch.lap().share(1);
        println!(
            "target {:.0} M decisions/s for {TARGET_CASE}: {} (median {:.2} M; the summary had \
             {share:.2} of a core)",
            TARGET_DECISIONS_PER_SEC / 1e6,
            maumau_benchkit::verdict(engine >= TARGET_DECISIONS_PER_SEC, share),
            engine / 1e6
        );
    }
    println!(
        "state sizes: Game {} bytes, ActionList {} bytes",
        std::mem::size_of::<Game>(),
        std::mem::size_of::<ActionList>()
    );
}

// ----- cases and the random chooser ----------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq)]
enum Case {
    /// The engine: profile and seat count.
    Engine(ProfileId, u8),
    /// The bare crazy-eights loop with this many seats.
    Bare(u8),
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Case::Engine(p, n) => write!(f, "{p}/{n}"),
            Case::Bare(n) => write!(f, "bare-crazy-eights/{n}"),
        }
    }
}

/// The engine's SplitMix64 (one add, three xor-shifts and two multiplies per number) with a
/// multiply-shift bounded draw.
#[derive(Clone, Copy)]
struct Rng(SplitMix64);

impl Rng {
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` by multiply-shift (no division; the bias is below 2^-50 here).
    #[inline(always)]
    fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }
}

/// Plays one case, game after game, a given number of decisions at a time.
struct Runner {
    decisions: u64,
    kind: RunnerKind,
}

enum RunnerKind {
    Engine(Box<EnginePlayout>),
    Bare(Box<BareGame>),
}

impl Runner {
    fn new(case: Case, seed: u64) -> Runner {
        let kind = match case {
            Case::Engine(profile, seats) => {
                RunnerKind::Engine(Box::new(EnginePlayout::new(profile, seats, seed)))
            }
            Case::Bare(seats) => RunnerKind::Bare(Box::new(BareGame::new(seats, seed))),
        };
        Runner { decisions: 0, kind }
    }

    fn run(&mut self, decisions: u64) {
        match &mut self.kind {
            RunnerKind::Engine(p) => {
                for _ in 0..decisions {
                    p.decide();
                }
            }
            RunnerKind::Bare(b) => {
                for _ in 0..decisions {
                    b.decide();
                }
            }
        }
        self.decisions += decisions;
    }

    fn games(&self) -> u64 {
        match &self.kind {
            RunnerKind::Engine(p) => p.games,
            RunnerKind::Bare(b) => b.games,
        }
    }

    fn rounds(&self) -> u64 {
        match &self.kind {
            RunnerKind::Engine(p) => p.rounds,
            RunnerKind::Bare(b) => b.games,
        }
    }

    /// Something that depends on every decision, so none can be optimised away.
    fn checksum(&self) -> u64 {
        match &self.kind {
            // The generator's next number stands for its state (SplitMix64 is a bijection).
            RunnerKind::Engine(p) => p.rng.0.clone().next_u64() ^ p.rounds,
            RunnerKind::Bare(b) => b.rng.0.clone().next_u64() ^ b.hands[0] ^ b.games,
        }
    }
}

// ----- the engine playout --------------------------------------------------------------------

struct EnginePlayout {
    config: MatchConfig,
    game: Game,
    list: ActionList,
    rng: Rng,
    seeds: Rng,
    games: u64,
    rounds: u64,
    /// `PLAYOUT_CHECKED=1`: apply with [`Game::apply_with`], which checks the action again,
    /// instead of [`Game::apply_unchecked`], which trusts the listed action.
    checked: bool,
}

impl EnginePlayout {
    fn new(profile: ProfileId, seats: u8, seed: u64) -> EnginePlayout {
        let mut config = MatchConfig::new(profile, seats);
        // What tournaments use: missed calls are penalised at once, no challenge windows.
        config.calls = CallsMode::Enforce;
        let mut seeds = Rng(SplitMix64::new(seed));
        let game = Game::new(config, seeds.next_u64()).expect("a valid seat count");
        EnginePlayout {
            config,
            game,
            list: ActionList::default(),
            rng: Rng(SplitMix64::new(seed ^ 0xD1CE)),
            seeds,
            games: 0,
            rounds: 0,
            checked: std::env::var("PLAYOUT_CHECKED").is_ok_and(|v| v == "1"),
        }
    }

    /// One decision: list the legal actions of the seat to act, pick one, apply it. A finished
    /// match is replaced by a new one first.
    #[inline(always)]
    fn decide(&mut self) {
        let seat = loop {
            match self.game.to_act() {
                Some(seat) => break seat,
                None => self.next_game(),
            }
        };
        self.game.legal_actions_into(seat, &mut self.list);
        let action = self.list[self.rng.below(self.list.len())];
        if self.checked {
            if let Err(e) = self.game.apply_with(seat, action, &mut ()) {
                panic!("a listed action was refused: {action} by seat {seat}: {e:?}");
            }
        } else {
            self.game.apply_unchecked(seat, action, &mut ());
        }
    }

    #[inline(never)]
    fn next_game(&mut self) {
        self.games += 1;
        self.rounds += u64::from(self.game.round());
        self.game = Game::new(self.config, self.seeds.next_u64()).expect("a valid seat count");
    }
}

// ----- the bare crazy-eights loop ------------------------------------------------------------

const BARE_MAX_SEATS: usize = 8;
const BARE_HAND: usize = 5;
const BARE_MAX_TURNS: u32 = 1000;
/// Cards are `suit * 16 + rank` (rank 0..13), one 16-bit lane per suit, as in the engine.
const LANE: u64 = 0x1FFF;
const DECK: u64 = LANE * 0x0001_0001_0001_0001;
const EIGHTS: u64 = 0x0001_0001_0001_0001 << 6;

/// Crazy eights, one round per game: 52 cards, 5 each, the next player matches the suit (or the
/// suit named by an 8) or the rank of the top card, or plays an 8 and names a suit; with no card
/// to play it draws one and its turn ends. The first empty hand wins. A play of an 8 and its suit
/// is one decision (as a J play with its suit is one engine action), and the random chooser is
/// uniform over all legal moves. When the stock runs out the discard pile under the top card is
/// shuffled into a new stock; if there is nothing to draw the seat passes.
struct BareGame {
    hands: [u64; BARE_MAX_SEATS],
    seats: usize,
    current: usize,
    stock: [u8; 52],
    stock_len: usize,
    /// The discard pile below the top card, as a set (52 distinct cards).
    discard: u64,
    top: u8,
    /// The suit to follow: the top card's, or the one an 8 named.
    suit: u8,
    turns: u32,
    rng: Rng,
    games: u64,
}

impl BareGame {
    fn new(seats: u8, seed: u64) -> BareGame {
        let mut g = BareGame {
            hands: [0; BARE_MAX_SEATS],
            seats: seats as usize,
            current: 0,
            stock: [0; 52],
            stock_len: 0,
            discard: 0,
            top: 0,
            suit: 0,
            turns: 0,
            rng: Rng(SplitMix64::new(seed)),
            games: 0,
        };
        g.deal();
        g
    }

    fn shuffle_stock(&mut self) {
        for i in (1..self.stock_len).rev() {
            let j = self.rng.below(i + 1);
            self.stock.swap(i, j);
        }
    }

    fn fill_stock(&mut self, mut set: u64) {
        self.stock_len = 0;
        while set != 0 {
            self.stock[self.stock_len] = set.trailing_zeros() as u8;
            self.stock_len += 1;
            set &= set - 1;
        }
        self.shuffle_stock();
    }

    #[inline(never)]
    fn deal(&mut self) {
        self.fill_stock(DECK);
        self.hands = [0; BARE_MAX_SEATS];
        for _ in 0..BARE_HAND {
            for s in 0..self.seats {
                self.stock_len -= 1;
                self.hands[s] |= 1 << self.stock[self.stock_len];
            }
        }
        self.stock_len -= 1;
        self.top = self.stock[self.stock_len];
        self.suit = self.top >> 4;
        self.discard = 0;
        self.current = self.rng.below(self.seats);
        self.turns = 0;
    }

    /// The `k`-th lowest card of a set (`k < popcount`).
    #[inline(always)]
    fn nth(mut set: u64, k: usize) -> u8 {
        for _ in 0..k {
            set &= set - 1;
        }
        set.trailing_zeros() as u8
    }

    #[inline(always)]
    fn decide(&mut self) {
        let seat = self.current;
        let hand = self.hands[seat];
        let matching =
            (LANE << (16 * self.suit as u32)) | (EIGHTS >> 6 << (self.top & 15)) | EIGHTS;
        let playable = hand & matching;
        if playable == 0 {
            if self.stock_len == 0 && self.discard != 0 {
                let d = self.discard;
                self.discard = 0;
                self.fill_stock(d);
            }
            if self.stock_len > 0 {
                self.stock_len -= 1;
                self.hands[seat] |= 1 << self.stock[self.stock_len];
            }
        } else {
            let plain = playable & !EIGHTS;
            let eights = playable & EIGHTS;
            let n_plain = plain.count_ones() as usize;
            let r = self.rng.below(n_plain + 4 * eights.count_ones() as usize);
            let card = if r < n_plain {
                let c = Self::nth(plain, r);
                self.suit = c >> 4;
                c
            } else {
                let k = r - n_plain;
                self.suit = (k & 3) as u8;
                Self::nth(eights, k >> 2)
            };
            self.hands[seat] = hand & !(1 << card);
            self.discard |= 1 << self.top;
            self.top = card;
            if self.hands[seat] == 0 {
                self.games += 1;
                self.deal();
                return;
            }
        }
        self.turns += 1;
        if self.turns >= BARE_MAX_TURNS {
            self.games += 1;
            self.deal();
            return;
        }
        self.current = if seat + 1 == self.seats { 0 } else { seat + 1 };
    }
}

/// Keeps the bare loop honest: every card is in exactly one place after every decision, and
/// games end. Runs before the benchmarks (a few milliseconds), also under `cargo test`.
fn check_bare_loop() {
    let mut g = BareGame::new(4, 1);
    for _ in 0..100_000 {
        g.decide();
        let mut all = g.discard | (1 << g.top);
        for &hand in &g.hands[..g.seats] {
            assert_eq!(all & hand, 0, "a card held twice");
            all |= hand;
        }
        for &c in &g.stock[..g.stock_len] {
            assert_eq!(all & (1 << c), 0, "a card in the stock and elsewhere");
            all |= 1 << c;
        }
        assert_eq!(all, DECK, "a card went missing");
    }
    assert!(g.games > 500, "bare games do not end: {}", g.games);
}
