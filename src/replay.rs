//! Re-simulating and verifying replays, with the rules engine alone: no server, no network.
//!
//! A [`pb::Replay`] holds everything needed to play a match again: its configuration, how the
//! first round began (a shuffle from the seed, a deck order or a position) and the ordered
//! accepted actions. [`simulate`] plays it again and returns the engine state and the full event
//! log; [`verify`] also checks the seed commitment and compares the result with the one the
//! replay records, answering exactly as `MatchService.VerifyReplay` does (the server calls it),
//! so `maumau replay FILE` and any other program can check a downloaded replay offline.
//!
//! ```
//! use maumau::{pb, replay, wire};
//! use maumau_engine::{Game, MatchConfig, ProfileId};
//!
//! // Play a short match with the engine, recording each action as a server would.
//! let config = MatchConfig::new(ProfileId::Classic, 2);
//! let mut game = Game::new(config, 7).expect("a valid config");
//! let mut actions = Vec::new();
//! while let Some(seat) = game.to_act() {
//!     let action = game.legal_actions(seat)[0];
//!     game.apply(seat, action).expect("a legal action");
//!     actions.push(pb::ReplayAction {
//!         seat: u32::from(seat),
//!         action: Some(action.into()),
//!         index: action.index() as u32,
//!         ..Default::default()
//!     });
//! }
//! let replay = pb::Replay {
//!     format: 1,
//!     config: Some(config.into()),
//!     seed: 7,
//!     actions,
//!     ..Default::default()
//! };
//!
//! let verdict = replay::verify(&replay);
//! assert!(verdict.valid && verdict.finished);
//! assert_eq!(verdict.actions_applied as usize, replay.actions.len());
//! ```

use maumau_engine::{Action, Event, Game, MatchConfig, Seat};

use crate::{pb, wire};

/// A replay played again by the engine: where it ended and everything that happened.
#[derive(Debug, Clone)]
pub struct Simulation {
    /// The engine state after the last action.
    pub game: Game,
    /// Every event from the first deal on, unredacted (what an omniscient spectator sees).
    pub events: Vec<Event>,
    /// How many actions were applied: all of the replay's.
    pub actions_applied: u32,
}

/// Why a replay could not be played again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    /// The index in `Replay.actions` of the action that was refused; 0 when the replay could not
    /// even start (no or a bad configuration, deck order or position).
    pub action: u32,
    /// What was wrong, for people: for a refused action it names the action, its seat and the
    /// engine's reason.
    pub message: String,
}

impl std::fmt::Display for ReplayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "replay action {}: {}", self.action, self.message)
    }
}

impl std::error::Error for ReplayError {}

/// A [`ReplayError`] at the replay's start (index 0).
pub(crate) fn at_start(message: impl ToString) -> ReplayError {
    ReplayError {
        action: 0,
        message: message.to_string(),
    }
}

/// Plays a replay again from its start through every action.
///
/// It does not look at the seed commitment or the recorded result: [`verify`] does.
///
/// # Errors
///
/// A [`ReplayError`] naming the first action the engine refused (or that is malformed), or index
/// 0 when the configuration or start is missing or invalid.
pub fn simulate(replay: &pb::Replay) -> Result<Simulation, ReplayError> {
    let mut events = Vec::new();
    let (game, ()) = play_through(replay, &mut events, |_, _| (), |_, _, _, _, _| {})?;
    Ok(Simulation {
        game,
        events,
        actions_applied: replay.actions.len() as u32,
    })
}

/// Plays a replay from its start through every action: `events` receives the start's events
/// and then every action's. `on_start` gets the start's events and the game after the first
/// deal and makes the caller's state `T`; after each action `on_step` gets that state, the seat,
/// the action, that action's events (the tail of `events`) and the game after it. Returns the
/// final game and the state. The
/// one loop behind [`simulate`] and [`crate::viewer::frames`].
pub(crate) fn play_through<T>(
    replay: &pb::Replay,
    events: &mut Vec<Event>,
    on_start: impl FnOnce(&[Event], &Game) -> T,
    mut on_step: impl FnMut(&mut T, Seat, Action, &[Event], &Game),
) -> Result<(Game, T), ReplayError> {
    let config = replay_config(replay)?;
    let mut game =
        start_game(config, replay.seed, replay.start.as_ref(), events).map_err(at_start)?;
    let mut state = on_start(events, &game);
    for (i, a) in replay.actions.iter().enumerate() {
        let at = |message: String| ReplayError {
            action: i as u32,
            message,
        };
        let seat = Seat::try_from(a.seat).map_err(|_| at("bad seat".to_string()))?;
        let action = a
            .action
            .as_ref()
            .ok_or_else(|| at("an action is missing".to_string()))
            .and_then(|w| Action::try_from(w).map_err(|e| at(e.to_string())))?;
        let from = events.len();
        game.apply_with(seat, action, events).map_err(|r| {
            at(format!(
                "action {i} ({action}) by seat {seat} was rejected: {r}"
            ))
        })?;
        on_step(&mut state, seat, action, &events[from..], &game);
    }
    Ok((game, state))
}

/// The replay's configuration, checked.
pub(crate) fn replay_config(replay: &pb::Replay) -> Result<MatchConfig, ReplayError> {
    replay
        .config
        .as_ref()
        .ok_or_else(|| at_start("the replay has no configuration"))
        .and_then(|c| MatchConfig::try_from(c).map_err(at_start))
}

/// Deals a match's start: from `seed` when `start` is `None`, else from the given deck order
/// (shuffled afterwards from `seed`) or position. The one place the three starts are told apart:
/// the server creates matches with it and [`simulate`] replays them.
///
/// # Errors
///
/// Why the configuration, deck order or position cannot start a match.
pub fn start_game(
    config: MatchConfig,
    seed: u64,
    start: Option<&pb::replay::Start>,
    events: &mut impl maumau_engine::EventSink,
) -> Result<Game, String> {
    match start {
        None => Game::new_with(config, seed, events).map_err(|e| e.to_string()),
        Some(pb::replay::Start::DeckOrder(d)) => {
            let (dealer, deck) = wire::deck_order_from_wire(d).map_err(|e| e.to_string())?;
            Game::from_deck(config, seed, dealer, &deck, events).map_err(|e| e.to_string())
        }
        Some(pb::replay::Start::Position(p)) => Game::from_position(p).map_err(|e| e.to_string()),
    }
}

/// Verifies a replay: checks its seed commitment, plays it again and compares the result.
///
/// This is the answer `MatchService.VerifyReplay` gives. `valid` is true when the seed and salt
/// match the replay's `seed_commitment` (when it carries one; if not, nothing is played and the
/// error is `ERROR_REASON_REPLAY_MISMATCH`), every action is accepted (else
/// `ERROR_REASON_INVALID_REPLAY` with `failed_action`), and the result reached has the recorded
/// result's rounds and totals (when the replay records one; else `ERROR_REASON_REPLAY_MISMATCH`).
/// Placings are not compared: a recorded result may place forfeited seats last.
pub fn verify(replay: &pb::Replay) -> pb::VerifyReplayResponse {
    // The seed and salt must be the ones committed to before play (when the replay carries the
    // commitment): otherwise the deals it re-simulates are not the ones that were promised.
    if !replay.seed_commitment.is_empty()
        && wire::seed_commitment(&replay.seed_salt, replay.seed)[..] != replay.seed_commitment[..]
    {
        return pb::VerifyReplayResponse {
            valid: false,
            result: None,
            rounds: Vec::new(),
            actions_applied: 0,
            failed_action: None,
            error: Some(pb::ErrorDetail {
                reason: pb::ErrorReason::ReplayMismatch as i32,
                message: "the seed and salt do not match the seed commitment: \
                          SHA-256(seed_salt ‖ seed as 8 bytes, big-endian) differs"
                    .into(),
            }),
            finished: false,
        };
    }
    match simulate(replay) {
        Err(e) => pb::VerifyReplayResponse {
            valid: false,
            result: None,
            rounds: Vec::new(),
            actions_applied: e.action,
            failed_action: Some(e.action),
            error: Some(pb::ErrorDetail {
                reason: pb::ErrorReason::InvalidReplay as i32,
                message: e.message,
            }),
            finished: false,
        },
        Ok(sim) => {
            let seats = sim.game.seats();
            let rounds = sim
                .events
                .iter()
                .filter_map(|e| match e {
                    Event::RoundEnded(r) => Some(wire::round_result_to_wire(r, seats)),
                    _ => None,
                })
                .collect();
            let result = sim.game.match_result().map(|r| pb::MatchResult::from(&r));
            // A recorded result may place forfeited seats last; compare totals and rounds only.
            let mismatch = match (&replay.result, &result) {
                (Some(want), Some(got)) => {
                    let key = |r: &pb::MatchResult| {
                        (
                            r.rounds,
                            r.standings.iter().map(|s| s.total).collect::<Vec<_>>(),
                        )
                    };
                    key(want) != key(got)
                }
                (Some(_), None) => true,
                _ => false,
            };
            pb::VerifyReplayResponse {
                valid: !mismatch,
                finished: result.is_some(),
                result,
                rounds,
                actions_applied: sim.actions_applied,
                failed_action: None,
                error: mismatch.then(|| pb::ErrorDetail {
                    reason: pb::ErrorReason::ReplayMismatch as i32,
                    message: "re-simulation gives a different result than the replay records"
                        .into(),
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use maumau_engine::{ACTION_COUNT, ProfileId};

    use super::*;

    /// A whole classic three-seat match played by the engine (each seat takes its last legal
    /// action), recorded the way the server records it, with a salted seed commitment and the
    /// result.
    fn played(seed: u64) -> pb::Replay {
        let config = MatchConfig::new(ProfileId::Classic, 3);
        let mut game = Game::new(config, seed).unwrap();
        let mut actions = Vec::new();
        while let Some(seat) = game.to_act() {
            let legal = game.legal_actions(seat);
            let action = legal[legal.len() - 1];
            game.apply(seat, action).unwrap();
            actions.push(pb::ReplayAction {
                seat: u32::from(seat),
                action: Some(action.into()),
                index: action.index() as u32,
                ..Default::default()
            });
        }
        let salt = vec![9; 16];
        pb::Replay {
            format: 1,
            match_id: format!("m{seed}"),
            config: Some(config.into()),
            seed,
            actions,
            result: game.match_result().map(|r| pb::MatchResult::from(&r)),
            seed_commitment: wire::seed_commitment(&salt, seed).to_vec(),
            seed_salt: salt,
            ..Default::default()
        }
    }

    fn reason(v: &pb::VerifyReplayResponse) -> pb::ErrorReason {
        pb::ErrorReason::try_from(v.error.as_ref().unwrap().reason).unwrap()
    }

    #[test]
    fn a_played_match_verifies_and_simulates_to_its_end() {
        let replay = played(11);
        assert!(replay.actions.len() > 10, "a real match");
        let v = verify(&replay);
        assert!(v.valid, "{:?}", v.error);
        assert!(v.finished);
        assert_eq!(v.error, None);
        assert_eq!(v.failed_action, None);
        assert_eq!(v.actions_applied as usize, replay.actions.len());
        assert_eq!(v.result, replay.result);
        let rounds = replay.result.as_ref().unwrap().rounds;
        assert_eq!(v.rounds.len() as u32, rounds);

        let sim = simulate(&replay).unwrap();
        assert_eq!(sim.actions_applied as usize, replay.actions.len());
        assert_eq!(sim.game.to_act(), None, "the match is over");
        let round_ends = sim
            .events
            .iter()
            .filter(|e| matches!(e, Event::RoundEnded(_)))
            .count();
        assert_eq!(round_ends as u32, rounds);
    }

    #[test]
    fn a_refused_action_is_named_by_its_index() {
        let mut replay = played(12);
        let k = replay.actions.len() / 2;
        // The state before action k, to find an action its seat may not take there.
        let mut game = Game::new(MatchConfig::new(ProfileId::Classic, 3), 12).unwrap();
        for a in &replay.actions[..k] {
            let action = Action::try_from(a.action.as_ref().unwrap()).unwrap();
            game.apply(Seat::try_from(a.seat).unwrap(), action).unwrap();
        }
        let seat = Seat::try_from(replay.actions[k].seat).unwrap();
        let legal = game.legal_actions(seat);
        let illegal = (0..ACTION_COUNT)
            .filter_map(Action::from_index)
            .find(|a| !legal.contains(a))
            .unwrap();
        replay.actions[k].action = Some(illegal.into());

        let v = verify(&replay);
        assert!(!v.valid);
        assert!(!v.finished);
        assert_eq!(v.failed_action, Some(k as u32));
        assert_eq!(v.actions_applied, k as u32);
        assert_eq!(v.result, None);
        assert_eq!(reason(&v), pb::ErrorReason::InvalidReplay);
        let message = &v.error.as_ref().unwrap().message;
        assert!(
            message.starts_with(&format!(
                "action {k} ({illegal}) by seat {seat} was rejected: "
            )),
            "{message}"
        );
        let e = simulate(&replay).unwrap_err();
        assert_eq!(e.action, k as u32);
        assert_eq!(&e.message, message);

        // A missing action is refused at its index too.
        replay.actions[k].action = None;
        let v = verify(&replay);
        assert_eq!(v.failed_action, Some(k as u32));
        assert_eq!(v.error.unwrap().message, "an action is missing");
    }

    #[test]
    fn a_replay_without_configuration_fails_at_its_start() {
        let mut replay = played(13);
        replay.config = None;
        let v = verify(&replay);
        assert!(!v.valid);
        assert_eq!(v.failed_action, Some(0));
        assert_eq!(v.actions_applied, 0);
        assert_eq!(reason(&v), pb::ErrorReason::InvalidReplay);
        assert_eq!(v.error.unwrap().message, "the replay has no configuration");
    }

    #[test]
    fn a_changed_seed_or_result_is_a_mismatch() {
        // Another seed than the one committed to: nothing is re-simulated.
        let mut replay = played(14);
        replay.seed += 1;
        let v = verify(&replay);
        assert!(!v.valid);
        assert_eq!(reason(&v), pb::ErrorReason::ReplayMismatch);
        assert_eq!(v.actions_applied, 0);
        assert_eq!(v.failed_action, None);
        assert!(
            v.error.unwrap().message.contains("seed commitment"),
            "names the commitment"
        );

        // A recorded total the actions do not reach.
        let mut replay = played(14);
        replay.result.as_mut().unwrap().standings[0].total += 1;
        let v = verify(&replay);
        assert!(!v.valid);
        assert!(v.finished, "every action was applied");
        assert_eq!(reason(&v), pb::ErrorReason::ReplayMismatch);
        assert_eq!(v.failed_action, None);
        assert_eq!(
            v.error.unwrap().message,
            "re-simulation gives a different result than the replay records"
        );
    }
}
