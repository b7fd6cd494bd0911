//! The hot path never touches the heap: `apply_with` (with the `()` sink or a closure sink),
//! `legal_actions_into`, `legal_actions`, `observation` and `event_for` make no heap allocation,
//! over whole matches of every profile, round ends and new deals included (a new deal happens
//! inside the `apply_with` that ends a round). `Game::new` is measured too.
//!
//! A counting global allocator wraps the system allocator. It counts only on a thread that has
//! armed it, so the test harness's own threads do not disturb the count; the file holds a single
//! test so that no two measurements run at once.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
// The global allocator needs `unsafe impl GlobalAlloc`; the workspace denies unsafe code
// everywhere else.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use maumau_engine::seed::SplitMix64;
use maumau_engine::{
    ACTION_COUNT, Action, ActionList, Call, CallsMode, DeckSize, Event, Game, MatchConfig, Options,
    ProfileId, Seat, event_for,
};

/// Allocations (and reallocations) made by armed threads.
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
/// Size of the last counted allocation, to help find it.
static LAST_SIZE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

fn armed() -> bool {
    ARMED.try_with(Cell::get).unwrap_or(false)
}

fn note(layout: Layout) {
    if armed() {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        LAST_SIZE.store(layout.size(), Ordering::SeqCst);
    }
}

struct Counting;

// SAFETY: every call is forwarded unchanged to the system allocator; counting touches only an
// atomic and a const-initialised thread-local without destructor, neither of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(layout);
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Runs `f` with counting armed on this thread; returns its result and the allocations it made.
fn counted<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    ARMED.with(|a| a.set(true));
    let r = black_box(f());
    ARMED.with(|a| a.set(false));
    (r, ALLOCATIONS.load(Ordering::SeqCst) - before)
}

/// The engine's SplitMix64 with the draws this test needs.
struct SplitMix(SplitMix64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next() % den < num
    }
}

/// What went wrong, with enough to reproduce it.
fn fail(what: &str, n: usize, config: &MatchConfig, seed: u64, g: &Game, extra: &str) -> ! {
    panic!(
        "{what} made {n} heap allocation(s) (last one {} bytes){extra}\n  profile={} options={} \
         seats={} calls={} seed={seed:#x}\n  position before the call: {}",
        LAST_SIZE.load(Ordering::SeqCst),
        config.profile,
        config.options.to_words(),
        config.seats,
        config.calls.name(),
        g.position()
    );
}

fn configs() -> Vec<MatchConfig> {
    let mut out = Vec::new();
    for profile in ProfileId::ALL {
        let mut option_sets = vec![Options::default()];
        match profile {
            ProfileId::Classic => option_sets.push(Options {
                single_round: true,
                ..Options::default()
            }),
            ProfileId::PenaltyPoints => {
                option_sets.push(Options {
                    deck: DeckSize::Short32,
                    nine_reverses: true,
                    ace_skips: true,
                    limit: 150,
                    ..Options::default()
                });
                option_sets.push(Options {
                    mau_penalty: false,
                    ..Options::default()
                });
            }
            ProfileId::Brazilian => option_sets.push(Options {
                jack_wild_on_paid_seven: true,
                ..Options::default()
            }),
            ProfileId::Romanian32 => {}
        }
        for options in option_sets {
            for calls in [CallsMode::Challenge, CallsMode::Enforce, CallsMode::Off] {
                for seats in 2..=8 {
                    let mut c = MatchConfig::new(profile, seats);
                    c.options = options;
                    c.calls = calls;
                    // Short rounds now and then, so that the turn cap ends some rounds.
                    if seats % 3 == 0 {
                        c.max_turns_per_round = 30;
                        c.max_rounds = 6;
                    }
                    if c.rules().is_ok() {
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}

/// Plays one match, measuring every engine call on the way. Returns the accepted actions and
/// the rounds played.
fn play(config: MatchConfig, seed: u64) -> (u64, u64) {
    let (game, n) = counted(|| Game::new(config, seed));
    let mut g = game.expect("valid configuration");
    if n > 0 {
        fail("Game::new", n, &config, seed, &g, "");
    }
    let mut rng = SplitMix(SplitMix64::new(seed ^ 0xA110C));
    let seats = g.seats();
    let mut list = ActionList::default();
    let mut steps = 0u64;
    while let Some(mover) = g.to_act() {
        // Every seat's legal actions and observation, each call measured.
        let mut bystander: Option<(Seat, Action)> = None;
        for s in 0..seats {
            let ((), n) = counted(|| g.legal_actions_into(s, &mut list));
            if n > 0 {
                fail(
                    "legal_actions_into",
                    n,
                    &config,
                    seed,
                    &g,
                    &format!(" for seat {s}"),
                );
            }
            if s != mover
                && let Some(&a) = list
                    .iter()
                    .find(|a| matches!(a, Action::Challenge | Action::Announce(_)))
            {
                bystander = Some((s, a));
            }
            let (obs, n) = counted(|| g.observation(s));
            if n > 0 {
                fail(
                    "observation",
                    n,
                    &config,
                    seed,
                    &g,
                    &format!(" for seat {s}"),
                );
            }
            let (legal, n) = counted(|| g.legal_actions(s));
            if n > 0 {
                fail(
                    "legal_actions",
                    n,
                    &config,
                    seed,
                    &g,
                    &format!(" for seat {s}"),
                );
            }
            assert!(obs.legal == legal, "observation lists other actions");
        }
        let (seat, action) = if rng.chance(1, 12) {
            // Anything from anyone: mostly rejected, which must not allocate either.
            let a = Action::from_index(rng.below(ACTION_COUNT)).expect("index in range");
            (rng.below(seats as usize) as Seat, a)
        } else if let Some(b) = bystander.filter(|_| rng.chance(1, 2)) {
            b
        } else {
            g.legal_actions_into(mover, &mut list);
            let mut a = list[rng.below(list.len())];
            if let Action::Play { call, .. } = &mut a
                && rng.chance(1, 3)
            {
                // Another call word: omissions, windows, enforced penalties.
                *call = Call::ALL[rng.below(3)];
            }
            (mover, a)
        };
        let before = g;
        let (result, n) = if steps.is_multiple_of(2) {
            counted(|| g.apply_with(seat, action, &mut ()))
        } else {
            // A closure sink that redacts every event for every seat and a spectator.
            let mut sink = |e: &Event| {
                for viewer in (0..seats).map(Some).chain([None]) {
                    black_box(event_for(e, viewer));
                }
            };
            counted(|| g.apply_with(seat, action, &mut sink))
        };
        if n > 0 {
            fail(
                "apply_with",
                n,
                &config,
                seed,
                &before,
                &format!(" for `{action}` by seat {seat} ({result:?})"),
            );
        }
        if result.is_ok() {
            steps += 1;
        }
        assert!(steps < 1_000_000, "the match does not end");
    }
    (steps, u64::from(g.round()))
}

#[test]
fn the_hot_path_never_allocates() {
    // The counter works: an allocation made while armed is counted.
    let (v, n) = counted(|| Vec::<u64>::with_capacity(4));
    assert!(
        n >= 1 && v.capacity() >= 4,
        "the counting allocator counts nothing"
    );
    let configs = configs();
    let mut steps = 0;
    let mut rounds = 0;
    let mut matches = 0;
    for (i, config) in configs.iter().enumerate() {
        for k in 0..6u64 {
            let seed = (i as u64) << 8 | k;
            let (s, r) = play(*config, seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
            steps += s;
            rounds += r;
            matches += 1;
        }
    }
    eprintln!("{matches} matches, {steps} accepted actions, {rounds} rounds");
    assert!(
        rounds > 2 * matches,
        "too few new deals were measured: {rounds} rounds"
    );
}
