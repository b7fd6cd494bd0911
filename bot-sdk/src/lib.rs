//! Write Mau Mau Arena bots in Rust.
//!
//! A bot implements [`Bot`]: it is shown its seat's [`Observation`] (which carries the legal
//! actions) and answers with one of them. The same bot runs in-process, at engine speed (for
//! tournaments and tests), or against a server over gRPC.
//!
//! ```
//! use maumau_bot_sdk::{Bot, bots::HeuristicBot, engine::{Game, MatchConfig, ProfileId}};
//!
//! let mut game = Game::new(MatchConfig::new(ProfileId::Classic, 2), 5).expect("valid");
//! let mut bots = [HeuristicBot::new(1), HeuristicBot::new(2)];
//! while let Some(seat) = game.to_act() {
//!     let action = bots[seat as usize].decide(&game.observation(seat));
//!     game.apply(seat, action).expect("bots choose legal actions");
//! }
//! assert!(game.match_result().is_some());
//! ```
//!
//! The engine is re-exported as [`engine`], so a bot can simulate the game (see
//! [`engine::Observation::determinize`] and [`bots::SearchBot`]).

pub mod bots;
#[cfg(feature = "net")]
pub mod lobby;
#[cfg(feature = "net")]
pub mod runner;

pub use maumau_engine as engine;
use maumau_engine::{Action, Event, MatchResult, Observation};

/// A Mau Mau player.
///
/// Implement [`Bot::name`] and [`Bot::decide`]; [`Bot::react`] (out-of-turn actions),
/// [`Bot::on_event`] (what the seat sees happen) and [`Bot::on_match_end`] have defaults that do
/// nothing, and are what a bot that remembers or challenges overrides. The two methods after
/// them, [`Bot::quick_decide`] and [`Bot::listens`], are optional performance hooks for
/// in-process runners; a bot that leaves them alone plays exactly the same.
pub trait Bot: Send {
    /// A short name for reports.
    fn name(&self) -> &str;

    /// Chooses the action to take when the seat must act. `obs.legal` is never empty and the
    /// answer must be one of its entries.
    fn decide(&mut self, obs: &Observation) -> Action;

    /// Offered when the seat may act out of turn (a challenge, or a romanian late cure):
    /// `obs.legal` lists those actions. `None` lets the moment pass. The default declines.
    fn react(&mut self, _obs: &Observation) -> Option<Action> {
        None
    }

    /// Called with every event the seat sees, in order (already redacted for the seat).
    fn on_event(&mut self, _event: &Event) {}

    /// Called once when the match ends.
    fn on_match_end(&mut self, _result: Option<&MatchResult>) {}

    // ----- optional: performance hooks for in-process runners -----------------------------
    // Nothing above depends on them; override them only to make in-process matches faster.

    /// Optional, for speed: a bot that needs nothing but its legal actions may choose here, and
    /// runners then skip building the observation (the fast path of in-process tournaments).
    /// Must agree with [`Bot::decide`] on the same state. The default returns `None` (always
    /// ask [`Bot::decide`]).
    fn quick_decide(&mut self, _legal: &[Action]) -> Option<Action> {
        None
    }

    /// Optional, for speed: false for a bot that ignores [`Bot::on_event`], so in-process
    /// runners can skip building its events. The default is true (always deliver events).
    fn listens(&self) -> bool {
        true
    }
}

/// A boxed bot is a bot, so a table may mix kinds (`Vec<Box<dyn Bot>>`).
impl<B: Bot + ?Sized> Bot for Box<B> {
    fn name(&self) -> &str {
        (**self).name()
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        (**self).decide(obs)
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        (**self).react(obs)
    }

    fn on_event(&mut self, event: &Event) {
        (**self).on_event(event)
    }

    fn on_match_end(&mut self, result: Option<&MatchResult>) {
        (**self).on_match_end(result)
    }

    fn quick_decide(&mut self, legal: &[Action]) -> Option<Action> {
        (**self).quick_decide(legal)
    }

    fn listens(&self) -> bool {
        (**self).listens()
    }
}

/// Plays one match in-process with one bot per seat; returns the result. Bots are offered their
/// out-of-turn actions (challenges, late cures) before each turn action, in seat order.
pub fn play_match<B: Bot>(game: &mut maumau_engine::Game, bots: &mut [B]) -> Option<MatchResult> {
    play_match_with(game, bots, |_, _| {})
}

/// [`play_match`], reporting every accepted action (seat, action) to `on_action`, for replays.
/// Bots that answer from their legal actions alone ([`Bot::quick_decide`]) skip the observation,
/// and under call rules without challenges nobody is offered one, so a match of such bots runs at
/// nearly engine speed. Events are delivered to [`Bot::on_event`] only if a bot is listening
/// (always, except in that fast path).
///
/// The bots may be boxed (`&mut [Box<dyn Bot>]`) or all of one type; a type known here is called
/// directly, which is what makes a table of random bots as quick as a bare engine loop.
#[inline]
pub fn play_match_with<B: Bot>(
    game: &mut maumau_engine::Game,
    bots: &mut [B],
    mut on_action: impl FnMut(maumau_engine::Seat, Action),
) -> Option<MatchResult> {
    let seats = game.seats();
    let windows = game.rules().windows_open();
    let listening = bots.iter().any(|b| b.listens());
    let mut events = Vec::new();
    let mut legal = maumau_engine::ActionList::default();
    if !windows && !listening {
        // Nobody may act out of turn and nobody listens: the loop of a bare engine playout.
        while let Some(mover) = game.to_act() {
            game.legal_actions_into(mover, &mut legal);
            let bot = &mut bots[mover as usize];
            let action = match bot.quick_decide(&legal) {
                Some(a) => a,
                None => bot.decide(&game.observation(mover)),
            };
            // A bot that answers with an illegal action gets the first legal one instead.
            let action = if game.apply_with(mover, action, &mut ()).is_ok() {
                action
            } else {
                game.apply_with(mover, legal[0], &mut ()).ok()?;
                legal[0]
            };
            on_action(mover, action);
        }
    }
    while let Some(mut mover) = game.to_act() {
        if windows {
            for s in 0..seats {
                if s == mover || game.legal_actions(s).is_empty() {
                    continue;
                }
                if let Some(a) = bots[s as usize].react(&game.observation(s)) {
                    events.clear();
                    if game.apply_with(s, a, &mut events).is_ok() {
                        on_action(s, a);
                        deliver(game, bots, &events);
                    }
                }
            }
            // A challenge may have ended the match or moved the turn.
            match game.to_act() {
                Some(m) => mover = m,
                None => break,
            }
        }
        game.legal_actions_into(mover, &mut legal);
        let bot = &mut bots[mover as usize];
        let action = match bot.quick_decide(&legal) {
            Some(a) => a,
            None => bot.decide(&game.observation(mover)),
        };
        let accepted = if listening {
            events.clear();
            game.apply_with(mover, action, &mut events).is_ok()
        } else {
            game.apply_with(mover, action, &mut ()).is_ok()
        };
        // A bot that answers with an illegal action gets the first legal one instead.
        let action = if accepted {
            action
        } else {
            events.clear();
            game.apply_with(mover, legal[0], &mut events).ok()?;
            legal[0]
        };
        on_action(mover, action);
        if listening {
            deliver(game, bots, &events);
        }
    }
    let result = game.match_result();
    for b in bots.iter_mut() {
        b.on_match_end(result.as_ref());
    }
    result
}

fn deliver<B: Bot>(game: &maumau_engine::Game, bots: &mut [B], events: &[Event]) {
    for (s, bot) in bots.iter_mut().enumerate().take(game.seats() as usize) {
        for e in events {
            bot.on_event(&maumau_engine::event_for(e, Some(s as u8)));
        }
    }
}
