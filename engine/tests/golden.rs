//! Golden matches: one full seeded match per profile, played by a seeded chooser defined here,
//! written as text and compared with `tests/golden/<profile>.txt`.
//!
//! A transcript holds the deal's position line (which fixes the deck order of the seed), the
//! deal's events, then for every action sent the seat, the action (its `Display` form) and
//! either the events (`Debug` form) or the rejection code, the position after every round end,
//! and the final placings. Any change in the rules, the shuffle, the generator, the order of the
//! legal actions or the text forms shows up as a diff.
//!
//! To regenerate after an intended change:
//!
//! ```text
//! UPDATE_GOLDEN=1 cargo test -p maumau-engine --test golden
//! ```
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::fmt::Write as _;
use std::path::PathBuf;

use maumau_engine::{ACTION_COUNT, Action, Call, CallsMode, Event, Game, MatchConfig, ProfileId};

const REGENERATE: &str = "UPDATE_GOLDEN=1 cargo test -p maumau-engine --test golden";

/// SplitMix64: the chooser's generator, defined here so that the transcripts depend on no
/// generator crate.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, num: u64, den: u64) -> bool {
        self.next() % den < num
    }
}

/// One golden match.
struct Golden {
    profile: ProfileId,
    seats: u8,
    seed: u64,
    chooser: u64,
}

const GOLDEN: [Golden; 4] = [
    Golden {
        profile: ProfileId::Classic,
        seats: 4,
        seed: 0x0C1A_5510,
        chooser: 1,
    },
    Golden {
        profile: ProfileId::PenaltyPoints,
        seats: 3,
        seed: 0x0001_0001,
        chooser: 7,
    },
    Golden {
        profile: ProfileId::Brazilian,
        seats: 6,
        seed: 0x0B2A_2002,
        chooser: 3,
    },
    Golden {
        profile: ProfileId::Romanian32,
        seats: 3,
        seed: 0x0003_2003,
        chooser: 4,
    },
];

fn config(spec: &Golden) -> MatchConfig {
    let mut c = MatchConfig::new(spec.profile, spec.seats);
    c.calls = CallsMode::Challenge;
    c
}

/// The seat and action the chooser sends next: a bystander's challenge or late cure half of the
/// times one is listed; now and then anything from anyone (mostly rejected); otherwise a listed
/// action of the seat to act, preferring plays, and with another call word half of the times
/// the play needs one.
fn choose(g: &Game, rng: &mut SplitMix) -> (u8, Action) {
    let mover = g.to_act().expect("the match is not over");
    let n = g.seats();
    if rng.chance(1, 25) {
        let a = Action::from_index(rng.below(ACTION_COUNT)).expect("index in range");
        return (rng.below(n as usize) as u8, a);
    }
    for k in 1..n {
        let s = (mover + k) % n;
        let listed = g.legal_actions(s);
        if let Some(&a) = listed
            .iter()
            .find(|a| matches!(a, Action::Challenge | Action::Announce(_)))
            && rng.chance(1, 2)
        {
            return (s, a);
        }
    }
    let list = g.legal_actions(mover);
    let plays: Vec<Action> = list
        .iter()
        .copied()
        .filter(|a| matches!(a, Action::Play { .. }))
        .collect();
    let mut action = if !plays.is_empty() && rng.chance(4, 5) {
        plays[rng.below(plays.len())]
    } else {
        list[rng.below(list.len())]
    };
    if let Action::Play { call, .. } = &mut action
        && g.hand(mover).len() <= 2
        && rng.chance(1, 2)
    {
        *call = Call::ALL[rng.below(3)];
    }
    (mover, action)
}

/// Plays the golden match and writes its transcript.
fn transcript(spec: &Golden) -> String {
    let config = config(spec);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# golden match: profile={} seats={} calls={} seed={:#x} chooser={:#x}",
        spec.profile,
        spec.seats,
        config.calls.name(),
        spec.seed,
        spec.chooser
    );
    let _ = writeln!(out, "# regenerate with: {REGENERATE}");
    let mut deal = Vec::new();
    let mut g = Game::new_with(config, spec.seed, &mut deal).expect("a valid configuration");
    let _ = writeln!(out, "position {}", g.position());
    for e in &deal {
        let _ = writeln!(out, "  {e:?}");
    }
    let mut rng = SplitMix(spec.chooser);
    let mut actions = 0u32;
    while g.to_act().is_some() {
        let (seat, action) = choose(&g, &mut rng);
        match g.apply(seat, action) {
            Ok(events) => {
                let _ = writeln!(out, "{seat} {action}");
                for e in &events {
                    let _ = writeln!(out, "  {e:?}");
                }
                if events.iter().any(|e| matches!(e, Event::RoundEnded(_))) {
                    let _ = writeln!(out, "position {}", g.position());
                }
            }
            Err(why) => {
                let _ = writeln!(out, "{seat} {action} -> rejected {}", why.code());
            }
        }
        actions += 1;
        assert!(actions < 200_000, "the golden match does not end");
    }
    let result = g.match_result().expect("the match is over");
    let n = spec.seats as usize;
    let _ = writeln!(
        out,
        "result rounds={} placings={:?} totals={:?} rounds_won={:?}",
        result.rounds,
        &result.placings[..n],
        &result.totals[..n],
        &result.rounds_won[..n]
    );
    out
}

fn golden_path(profile: ProfileId) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("golden")
        .join(format!("{}.txt", profile.name()))
}

fn updating() -> bool {
    std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1")
}

/// Compares `actual` with the golden file (or rewrites the file under `UPDATE_GOLDEN=1`).
fn check_golden(profile: ProfileId, actual: &str) {
    let path = golden_path(profile);
    if updating() {
        std::fs::create_dir_all(path.parent().expect("a parent folder"))
            .expect("create tests/golden");
        std::fs::write(&path, actual).expect("write the golden file");
        return;
    }
    let expected = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => panic!(
            "cannot read the golden file {}: {e}\nGenerate it with: {REGENERATE}",
            path.display()
        ),
    };
    if expected == actual {
        return;
    }
    let mut exp = expected.lines();
    let mut act = actual.lines();
    let mut line = 1;
    loop {
        match (exp.next(), act.next()) {
            (Some(e), Some(a)) if e == a => line += 1,
            (e, a) => panic!(
                "the {profile} golden match differs from {} at line {line}:\n  expected: {}\n  \
                 actual:   {}\nIf the change is intended, regenerate the files with:\n  \
                 {REGENERATE}\nand review the diff.",
                path.display(),
                e.unwrap_or("<end of file>"),
                a.unwrap_or("<end of transcript>"),
            ),
        }
    }
}

fn spec(profile: ProfileId) -> &'static Golden {
    GOLDEN
        .iter()
        .find(|g| g.profile == profile)
        .expect("one golden match per profile")
}

#[test]
fn golden_classic() {
    let s = spec(ProfileId::Classic);
    check_golden(s.profile, &transcript(s));
}

#[test]
fn golden_penalty_points() {
    let s = spec(ProfileId::PenaltyPoints);
    check_golden(s.profile, &transcript(s));
}

#[test]
fn golden_brazilian() {
    let s = spec(ProfileId::Brazilian);
    check_golden(s.profile, &transcript(s));
}

#[test]
fn golden_romanian_32() {
    let s = spec(ProfileId::Romanian32);
    check_golden(s.profile, &transcript(s));
}

/// The deck order of a fixed seed: the deal's position line (hands, up-card and stock in order)
/// is the first `position` line of each golden file. Checked on its own so that a change of the
/// shuffle or of the generator is named as such.
#[test]
fn deck_order_for_fixed_seeds() {
    if updating() {
        return;
    }
    for s in &GOLDEN {
        let deal = Game::new(config(s), s.seed)
            .expect("a valid configuration")
            .position();
        let path = golden_path(s.profile);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "cannot read {}: {e}\nGenerate it with: {REGENERATE}",
                path.display()
            )
        });
        let golden = text
            .lines()
            .find_map(|l| l.strip_prefix("position "))
            .unwrap_or_else(|| panic!("{} has no position line", path.display()));
        assert_eq!(
            deal, golden,
            "the deal of {} seed {:#x} changed: the shuffle or the generator gives another deck \
             order.\nIf intended, regenerate with: {REGENERATE}",
            s.profile, s.seed
        );
    }
}
