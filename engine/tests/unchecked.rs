//! `Game::apply_unchecked`, the trusted path for listed actions, against `Game::apply_with`, the
//! checked one: over random games of every profile, seat count and `calls` mode, every listed
//! action of every seat, applied both ways to copies of the same state, gives the same events and
//! the same next state. (Test builds also assert the checks inside `apply_unchecked`.)
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use maumau_engine::seed::SplitMix64;
use maumau_engine::{CallsMode, Event, Game, MatchConfig, ProfileId};

/// Plays `games` random matches of one configuration; at every step compares both paths on every
/// listed action of every seat, then follows one of the seat to act's actions at random.
fn compare(profile: ProfileId, seats: u8, calls: CallsMode, games: u64) -> u64 {
    let mut config = MatchConfig::new(profile, seats);
    config.calls = calls;
    config.max_rounds = 3;
    let mut rng = SplitMix64::new(u64::from(seats) * 1_000 + calls as u64);
    let mut compared = 0;
    for _ in 0..games {
        let mut game = Game::new(config, rng.next_u64()).expect("a valid configuration");
        while let Some(to_act) = game.to_act() {
            for seat in 0..seats {
                for &action in game.legal_actions(seat).iter() {
                    let (mut checked, mut trusted) = (game, game);
                    let mut checked_events: Vec<Event> = Vec::new();
                    let mut trusted_events: Vec<Event> = Vec::new();
                    checked
                        .apply_with(seat, action, &mut checked_events)
                        .unwrap_or_else(|e| panic!("listed {action} by {seat} refused: {e:?}"));
                    trusted.apply_unchecked(seat, action, &mut trusted_events);
                    assert_eq!(checked_events, trusted_events, "{action} by {seat}");
                    assert_eq!(checked, trusted, "{action} by {seat}");
                    compared += 1;
                }
            }
            let list = game.legal_actions(to_act);
            let action = list[(rng.next_u64() % list.len() as u64) as usize];
            game.apply_unchecked(to_act, action, &mut ());
        }
    }
    compared
}

#[test]
fn unchecked_apply_matches_the_checked_one_in_every_profile() {
    let tables = [
        (ProfileId::Classic, 2),
        (ProfileId::Classic, 4),
        (ProfileId::PenaltyPoints, 3),
        (ProfileId::Brazilian, 4),
        (ProfileId::Brazilian, 8),
        (ProfileId::Romanian32, 2),
        (ProfileId::Romanian32, 4),
    ];
    for (profile, seats) in tables {
        for calls in [CallsMode::Challenge, CallsMode::Enforce, CallsMode::Off] {
            let compared = compare(profile, seats, calls, 4);
            assert!(compared > 100, "{profile}/{seats}: only {compared} actions");
        }
    }
}
