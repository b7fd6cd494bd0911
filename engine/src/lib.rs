//! The Mau Mau rules engine: every rule profile of RULES.md, pure and deterministic.
//!
//! No I/O, no clock, no global random generator: a [`Game`] is a plain value that changes only
//! through [`Game::apply_with`] (or [`Game::apply`]), and all randomness comes from a generator
//! seeded at creation and stored in the state. The same configuration, seed and actions give the
//! same events on every machine.
//!
//! ```
//! use maumau_engine::{Game, MatchConfig, ProfileId};
//!
//! let config = MatchConfig::new(ProfileId::Classic, 4);
//! let mut game = Game::new(config, 42).expect("classic is played by 2 to 6 seats");
//! while let Some(seat) = game.to_act() {
//!     // Always take the first legal action.
//!     let action = game.legal_actions(seat)[0];
//!     game.apply(seat, action).expect("a listed action is accepted");
//! }
//! let result = game.match_result().expect("the match is over");
//! assert!(result.winners().count() >= 1);
//! ```
//!
//! - [`profile`]: the four profiles as data, their options, validation.
//! - [`action`]: the action space, its dense index, legal actions.
//! - [`view`]: what a seat may see (the observation) and how events are redacted for it.
//! - [`position`]: the position notation, one line of text per state.
//! - [`event`] and [`outcome`]: what happened, and how rounds and matches are scored.
//! - [`seed`]: SplitMix64, the seed mixer every crate of the workspace uses.

pub mod action;
pub mod card;
pub mod error;
pub mod event;
mod game;
pub mod outcome;
pub mod position;
pub mod profile;
pub mod seed;
pub mod view;

pub use action::{ACTION_COUNT, Action, ActionList, Call};
pub use card::{Card, Hand, Pile, Rank, Suit};
pub use error::Rejection;
pub use event::{ChallengeOutcome, DrawCause, Event, EventSink, OffenceKind, Seat};
pub use game::{Game, Offence, Phase, SetupError};
pub use outcome::{MatchResult, RoundEnd, RoundResult};
pub use position::PositionError;
pub use profile::{CallsMode, ConfigError, DeckSize, MatchConfig, Options, ProfileId, Rules};
pub use view::{Observation, event_for};
