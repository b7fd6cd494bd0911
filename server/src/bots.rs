//! The built-in bots: the reference bots of `maumau-bot-sdk` playing seats inside a table.
//!
//! A seat named in `CreateMatchRequest.bots` is played by the kind asked for
//! (`BOT_KIND_RANDOM`, `BOT_KIND_HEURISTIC` or `BOT_KIND_SEARCH`). A remote seat that gives up
//! under `GIVE_UP_POLICY_BOT` is played on by the **random** bot: the contract has promised that
//! since the first release (and its tests pin it), and a stand-in that plays better than the
//! seat's own bot would change what a given-up seat's result means.
//!
//! A built-in bot sees exactly what a remote bot on its seat would: the engine's observation of
//! the seat (`Game::observation`) and every event of the table's log redacted for the seat
//! (`event_for`), delivered in order just before it next has to choose. Bots are seeded from the
//! match seed and the seat, so the same seed gives the same match.
//!
//! The search bot's decision is a real computation (tens of milliseconds at its default
//! budget), so it runs on tokio's blocking pool: the table task waits for it without holding a
//! runtime worker.

use maumau::pb;
use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::BotKind;
use maumau_engine::{Action, Event, Game, Seat, event_for};

/// The bot that plays one seat the server controls.
pub(crate) struct BuiltinBot {
    kind: BotKind,
    seed: u64,
    /// `None` only while a search runs on the blocking pool.
    bot: Option<Box<dyn Bot>>,
    /// How many events of the table's log the bot has been shown.
    seen: usize,
}

impl BuiltinBot {
    /// The bot for a seat: the kind asked for, or the random bot that takes over a remote seat
    /// that gives up (`None`).
    pub(crate) fn new(kind: Option<pb::BotKind>, seed: u64) -> BuiltinBot {
        let kind = match kind {
            Some(pb::BotKind::Heuristic) => BotKind::Heuristic,
            Some(pb::BotKind::Search) => BotKind::Search,
            Some(pb::BotKind::Random | pb::BotKind::Unspecified) | None => BotKind::Random,
        };
        BuiltinBot {
            kind,
            seed,
            bot: Some(kind.build(seed)),
            seen: 0,
        }
    }

    /// The bot, shown only the events after the first `seen` of the log: a bot seated from the
    /// start begins, as a remote bot that joins does, from the match as it stands (a snapshot),
    /// not from the deal's events, so it plays as the same bot in a tournament or over gRPC.
    pub(crate) fn starting_at(mut self, seen: usize) -> BuiltinBot {
        self.seen = seen;
        self
    }

    /// The kind, as sent in `PlayerInfo.bot`.
    pub(crate) fn kind_to_wire(&self) -> pb::BotKind {
        match self.kind {
            BotKind::Random => pb::BotKind::Random,
            BotKind::Heuristic => pb::BotKind::Heuristic,
            BotKind::Search => pb::BotKind::Search,
        }
    }

    /// The bot's name (`random`, `heuristic`, `search`), shown as the seat's player name.
    pub(crate) fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// Shows the bot the events it has not seen yet, redacted for its seat.
    fn catch_up(bot: &mut dyn Bot, seen: &mut usize, seat: Seat, log: &[Event]) {
        if bot.listens() {
            for e in log.iter().skip(*seen) {
                bot.on_event(&event_for(e, Some(seat)));
            }
        }
        *seen = log.len();
    }

    /// The action for `seat`, which must be the seat to act in `game`. Always one of its legal
    /// actions. The search bot thinks on the blocking pool.
    pub(crate) async fn decide(&mut self, game: &Game, seat: Seat, log: &[Event]) -> Action {
        let legal = game.legal_actions(seat);
        let mut bot = self
            .bot
            .take()
            .unwrap_or_else(|| self.kind.build(self.seed));
        Self::catch_up(bot.as_mut(), &mut self.seen, seat, log);
        let chosen = if let Some(a) = bot.quick_decide(&legal) {
            a
        } else if self.kind == BotKind::Search {
            let obs = game.observation(seat);
            match tokio::task::spawn_blocking(move || {
                let a = bot.decide(&obs);
                (bot, a)
            })
            .await
            {
                Ok((back, a)) => {
                    bot = back;
                    a
                }
                Err(e) => {
                    // Only a panic in the bot gets here: a fresh bot plays on for the seat.
                    tracing::error!(error = %e, "the built-in search bot failed; replaced");
                    bot = self.kind.build(self.seed ^ log.len() as u64);
                    legal[0]
                }
            }
        } else {
            bot.decide(&game.observation(seat))
        };
        self.bot = Some(bot);
        if legal.contains(&chosen) {
            chosen
        } else {
            legal[0]
        }
    }

    /// An out-of-turn action (a challenge, a romanian-32 late cure) the bot takes now, if the
    /// seat has one and the bot wants it. Only ever one of the seat's legal actions.
    pub(crate) fn react(&mut self, game: &Game, seat: Seat, log: &[Event]) -> Option<Action> {
        let legal = game.legal_actions(seat);
        if legal.is_empty() {
            return None;
        }
        let bot = self.bot.as_mut()?;
        Self::catch_up(bot.as_mut(), &mut self.seen, seat, log);
        bot.react(&game.observation(seat))
            .filter(|a| legal.contains(a))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maumau_engine::{MatchConfig, ProfileId};

    /// Plays a whole match with built-in bots of the given kinds, the table's way.
    async fn play(kinds: &[pb::BotKind], seed: u64) -> (Vec<Action>, maumau_engine::MatchResult) {
        let config = MatchConfig {
            max_rounds: 2,
            ..MatchConfig::new(ProfileId::Classic, kinds.len() as u8)
        };
        let mut log = Vec::new();
        let mut game = Game::new_with(config, seed, &mut log).expect("valid");
        let mut bots: Vec<BuiltinBot> = kinds
            .iter()
            .enumerate()
            .map(|(s, k)| BuiltinBot::new(Some(*k), maumau_bot_sdk::bots::bot_seed(seed, s)))
            .collect();
        let mut actions = Vec::new();
        while let Some(s) = game.to_act() {
            let a = bots[s as usize].decide(&game, s, &log).await;
            game.apply_with(s, a, &mut log)
                .expect("built-in bots play legal actions");
            actions.push(a);
        }
        (actions, game.match_result().expect("the match ends"))
    }

    #[tokio::test]
    async fn every_kind_plays_a_match_and_replays_it_exactly() {
        let kinds = [
            pb::BotKind::Random,
            pb::BotKind::Heuristic,
            pb::BotKind::Search,
        ];
        let first = play(&kinds, 7).await;
        assert!(
            first.0.len() > 10,
            "a real match: {} actions",
            first.0.len()
        );
        assert_eq!(first, play(&kinds, 7).await);
    }

    #[test]
    fn a_given_up_seat_is_played_by_the_random_bot() {
        assert_eq!(BuiltinBot::new(None, 1).kind_to_wire(), pb::BotKind::Random);
        assert_eq!(
            BuiltinBot::new(Some(pb::BotKind::Search), 1).kind_to_wire(),
            pb::BotKind::Search
        );
    }
}
