//! Golden games for the Python tests: the Rust engine plays seeded games with a seeded chooser
//! and writes, step by step, the seat, the action's dense index and the position reached, to
//! `tests/golden/games.txt`. `tests/test_game.py` replays the same actions through the Python
//! module and checks that it reaches the same positions: same seed and actions, same game in
//! Python as in Rust.
//!
//! To regenerate after an intended change of the engine:
//!
//! ```text
//! UPDATE_GOLDEN=1 cargo test -p maumau-py --test golden
//! ```
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::fmt::Write as _;
use std::path::PathBuf;

use maumau_engine::seed::SplitMix64;
use maumau_engine::{CallsMode, Game, MatchConfig, Options, ProfileId};

/// Steps recorded per game: enough to pass round ends in the short matches, small enough to
/// keep the file readable.
const STEPS: usize = 200;

/// (profile, seats, options, calls, seed)
const CASES: [(&str, u8, &str, &str, u64); 7] = [
    ("classic", 4, "-", "challenge", 0x1234),
    ("classic", 2, "single_round", "enforce", 7),
    (
        "penalty-points",
        3,
        "deck32,nine_reverses,ace_skips",
        "challenge",
        99,
    ),
    ("penalty-points", 5, "no_mau_penalty,limit150", "off", 5),
    ("brazilian", 4, "-", "challenge", 42),
    ("brazilian", 6, "jack_wild_on_paid_seven", "enforce", 8),
    ("romanian-32", 3, "-", "challenge", 2026),
];

fn transcript() -> String {
    let mut out = String::new();
    for (i, (profile, seats, options, calls, seed)) in CASES.into_iter().enumerate() {
        let config = MatchConfig {
            options: Options::from_words(options).expect("valid options"),
            calls: calls.parse::<CallsMode>().expect("a calls setting"),
            ..MatchConfig::new(profile.parse::<ProfileId>().expect("a profile"), seats)
        };
        let mut game = Game::new(config, seed).expect("a valid configuration");
        let _ = writeln!(
            out,
            "game {profile} {seats} {options} {calls} {seed}\nstart {}",
            game.position()
        );
        let mut chooser = SplitMix64::new(i as u64 + 1);
        for _ in 0..STEPS {
            let Some(seat) = game.to_act() else { break };
            let legal = game.legal_actions(seat);
            let action = legal[(chooser.next_u64() % legal.len() as u64) as usize];
            game.apply(seat, action)
                .expect("a listed action is accepted");
            let _ = writeln!(out, "{seat} {} {}", action.index(), game.position());
        }
    }
    out
}

#[test]
fn golden_games_match_the_engine() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/games.txt");
    let text = transcript();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).expect("write the golden file");
        return;
    }
    let want = std::fs::read_to_string(&path).expect("tests/golden/games.txt exists");
    assert!(
        want == text,
        "the engine plays the golden games differently; if intended, regenerate with \
         UPDATE_GOLDEN=1 cargo test -p maumau-py --test golden"
    );
}
