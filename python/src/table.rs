//! A table where built-in bots play some seats and the caller plays the others: what
//! `maumau_engine.Table`, the Gymnasium environment and `evaluate` run on. Pure Rust, no PyO3, so
//! `cargo test` covers it and it runs without the GIL.
//!
//! [`Table::reset`] deals a match and plays the bots' turns until a seat the caller plays must
//! act (or the match ends); [`Table::step`] applies that seat's action and does the same. So the
//! caller only ever sees its own decisions, and a table of bots only plays a whole match in one
//! call.
//!
//! Bots play as [`maumau_bot_sdk::play_match`] plays them: before each turn action, every bot
//! seat that has an out-of-turn action (a challenge, a romanian-32 late cure) is offered it, in
//! seat order; a bot that listens is shown every event after the deal, redacted for its seat; an
//! illegal answer is replaced by the first legal action. The bot at seat `s` of a match dealt
//! from `seed` is seeded with [`bot_seed`]`(seed, s)`, the derivation of the server's tables and
//! the tournament, so a table of bots only plays the same match as `play_match` with those bots
//! (a test checks it). Seats the caller plays are never offered out-of-turn actions, as in the
//! AEC environment.

use std::fmt;
use std::str::FromStr;

use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::{BotKind, HeuristicBot, RandomBot, SearchBot, bot_seed};
use maumau_engine::{Action, ActionList, Event, Game, MatchConfig, Rejection, Seat, event_for};

use crate::core::{RewardMode, add_event_rewards};

/// A built-in bot as the Python API names it: `random`, `heuristic`, `search`, or `search:N`
/// (the search bot with `N` playouts per decision), as in `maumau tournament`'s entrant specs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BotSpec {
    /// Which bot.
    pub kind: BotKind,
    /// The search bot's playouts per decision (`None`: its default).
    pub iterations: Option<u32>,
}

/// A bot that may live in a Python object (PyO3 classes must be `Sync`; every built-in bot is).
pub type SeatBot = Box<dyn Bot + Sync>;

impl BotSpec {
    /// A new bot of this spec.
    pub fn build(self, seed: u64) -> SeatBot {
        match self.kind {
            BotKind::Random => Box::new(RandomBot::new(seed)),
            BotKind::Heuristic => Box::new(HeuristicBot::new(seed)),
            BotKind::Search => Box::new(match self.iterations {
                Some(n) => SearchBot::with_iterations(seed, n),
                None => SearchBot::new(seed),
            }),
        }
    }
}

impl fmt::Display for BotSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind.name())?;
        match self.iterations {
            Some(n) => write!(f, ":{n}"),
            None => Ok(()),
        }
    }
}

impl FromStr for BotSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<BotSpec, String> {
        let names = "the built-in bots are random, heuristic and search \
                     (search:N for N playouts per decision)";
        let (name, budget) = match s.split_once(':') {
            Some((n, b)) => (n, Some(b)),
            None => (s, None),
        };
        let kind: BotKind = name
            .parse()
            .map_err(|_| format!("unknown bot `{s}`: {names}"))?;
        let iterations = match budget {
            None => None,
            Some(_) if kind != BotKind::Search => {
                return Err(format!(
                    "bot `{s}`: only the search bot takes a budget (search:N)"
                ));
            }
            Some(b) => Some(b.parse().ok().filter(|&n: &u32| n > 0).ok_or_else(|| {
                format!("bot `{s}`: the number after `:` is the search budget, playouts per decision (> 0)")
            })?),
        };
        Ok(BotSpec { kind, iterations })
    }
}

/// One match with built-in bots at some seats (see the module docs).
pub struct Table {
    config: MatchConfig,
    mode: RewardMode,
    /// Per seat: the bot that plays it, `None` for a seat the caller plays.
    specs: Vec<Option<BotSpec>>,
    game: Game,
    bots: Vec<Option<SeatBot>>,
    /// Every seat's rewards since the last [`Table::reset`] or [`Table::step`] began.
    rewards: Vec<f32>,
    /// The events of the action being applied.
    events: Vec<Event>,
    legal: ActionList,
}

impl Table {
    /// A table for `config` whose seat `s` is played by `specs[s]` (`None`: by the caller), with
    /// rewards given by `mode`. The match is dealt by [`Table::reset`]. Errors: a configuration
    /// the engine refuses, or not one spec per seat.
    pub fn new(
        config: MatchConfig,
        specs: Vec<Option<BotSpec>>,
        mode: RewardMode,
    ) -> Result<Table, String> {
        let game = Game::new(config, 0).map_err(|e| e.to_string())?;
        if specs.len() != config.seats as usize {
            return Err(format!(
                "{} bots (or None) for {} seats: give one per seat",
                specs.len(),
                config.seats
            ));
        }
        Ok(Table {
            config,
            mode,
            bots: specs.iter().map(|_| None).collect(),
            rewards: vec![0.0; specs.len()],
            specs,
            game,
            events: Vec::new(),
            legal: ActionList::default(),
        })
    }

    /// Deals a new match from `seed`, seats fresh bots and plays until a seat the caller plays
    /// must act; returns that seat, or `None` when the match ended first.
    pub fn reset(&mut self, seed: u64) -> Option<Seat> {
        // The configuration was checked by `new`.
        if let Ok(game) = Game::new(self.config, seed) {
            self.game = game;
        }
        for (s, (bot, spec)) in self.bots.iter_mut().zip(&self.specs).enumerate() {
            *bot = spec.map(|spec| spec.build(bot_seed(seed, s)));
        }
        self.rewards.fill(0.0);
        self.advance()
    }

    /// Applies `action` for the seat to act (always a seat the caller plays), then plays the
    /// bots until such a seat must act again; returns it, or `None` once the match is over. A
    /// refused action changes nothing.
    pub fn step(&mut self, action: Action) -> Result<Option<Seat>, Rejection> {
        let seat = self.game.to_act().ok_or(Rejection::MatchOver)?;
        self.events.clear();
        self.game.apply_with(seat, action, &mut self.events)?;
        self.rewards.fill(0.0);
        self.after_action();
        Ok(self.advance())
    }

    /// The seat to act: one the caller plays, or `None` when the match is over.
    pub fn to_act(&self) -> Option<Seat> {
        self.game.to_act()
    }

    /// The match.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Every seat's rewards (by [`RewardMode`]) from the actions of the last [`Table::reset`] or
    /// [`Table::step`]: the caller's action and the bots' after it.
    pub fn rewards(&self) -> &[f32] {
        &self.rewards
    }

    /// Per seat, the bot that plays it (`None`: the caller).
    pub fn specs(&self) -> &[Option<BotSpec>] {
        &self.specs
    }

    /// Plays the bots until a seat the caller plays is to act or the match is over.
    fn advance(&mut self) -> Option<Seat> {
        let seats = self.game.seats();
        let windows = self.game.rules().windows_open();
        loop {
            let Some(mut mover) = self.game.to_act() else {
                let result = self.game.match_result();
                for bot in self.bots.iter_mut().flatten() {
                    bot.on_match_end(result.as_ref());
                }
                return None;
            };
            if windows {
                for s in 0..seats {
                    if s == mover || self.game.legal_actions(s).is_empty() {
                        continue;
                    }
                    let Some(bot) = self.bots[s as usize].as_mut() else {
                        continue;
                    };
                    if let Some(a) = bot.react(&self.game.observation(s)) {
                        self.events.clear();
                        if self.game.apply_with(s, a, &mut self.events).is_ok() {
                            self.after_action();
                        }
                    }
                }
                // A challenge may have ended the match or moved the turn.
                match self.game.to_act() {
                    Some(m) => mover = m,
                    None => continue,
                }
            }
            let Some(bot) = self.bots[mover as usize].as_mut() else {
                return Some(mover);
            };
            self.game.legal_actions_into(mover, &mut self.legal);
            let action = match bot.quick_decide(&self.legal) {
                Some(a) => a,
                None => bot.decide(&self.game.observation(mover)),
            };
            self.events.clear();
            if self
                .game
                .apply_with(mover, action, &mut self.events)
                .is_err()
            {
                // An illegal answer: the first legal action instead.
                self.events.clear();
                if self
                    .game
                    .apply_with(mover, self.legal[0], &mut self.events)
                    .is_err()
                {
                    // Unreachable: a seat to act always has a legal action the engine takes.
                    return self.game.to_act();
                }
            }
            self.after_action();
        }
    }

    /// Counts the rewards of the action just applied (its events are in `self.events`) and
    /// shows the events to the bots that listen.
    fn after_action(&mut self) {
        for e in &self.events {
            add_event_rewards(self.mode, &self.game, e, &mut self.rewards);
        }
        for (s, bot) in self.bots.iter_mut().enumerate() {
            let Some(bot) = bot.as_mut().filter(|b| b.listens()) else {
                continue;
            };
            for e in &self.events {
                bot.on_event(&event_for(e, Some(s as Seat)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maumau_bot_sdk::play_match_with;
    use maumau_engine::{ACTION_COUNT, Call, CallsMode, Options, ProfileId};

    fn spec(s: &str) -> BotSpec {
        s.parse().expect("a bot")
    }

    #[test]
    fn specs_parse_the_tournaments_names() {
        for kind in BotKind::ALL {
            let s = spec(kind.name());
            assert_eq!((s.kind, s.iterations), (kind, None));
            assert_eq!(s.to_string(), kind.name());
        }
        assert_eq!(spec("search:40").iterations, Some(40));
        assert_eq!(spec("search:40").to_string(), "search:40");
        for bad in [
            "greedy",
            "search:0",
            "search:x",
            "heuristic:10",
            "",
            "Random",
        ] {
            let e = bad.parse::<BotSpec>().expect_err(bad);
            assert!(e.contains(bad), "{e}");
        }
    }

    /// A table of bots only plays the match `play_match` plays with the same bots and seeds.
    #[test]
    fn a_table_of_bots_plays_the_same_match_as_play_match() {
        let cases = [
            (
                ProfileId::Classic,
                3,
                "-",
                "random,heuristic,search:30",
                CallsMode::Challenge,
            ),
            (
                ProfileId::Romanian32,
                3,
                "-",
                "heuristic,search:30,random",
                CallsMode::Challenge,
            ),
            (
                ProfileId::Brazilian,
                4,
                "-",
                "random,random,heuristic,heuristic",
                CallsMode::Enforce,
            ),
            (
                ProfileId::PenaltyPoints,
                2,
                "limit150",
                "random,random",
                CallsMode::Off,
            ),
        ];
        for (profile, seats, options, names, calls) in cases {
            let config = MatchConfig {
                calls,
                options: Options::from_words(options).expect("options"),
                ..MatchConfig::new(profile, seats)
            };
            let specs: Vec<BotSpec> = names.split(',').map(spec).collect();
            for seed in 0..3 {
                let mut table = Table::new(
                    config,
                    specs.iter().copied().map(Some).collect(),
                    RewardMode::Win,
                )
                .expect("valid");
                assert_eq!(
                    table.reset(seed),
                    None,
                    "{profile}: bots only play to the end"
                );
                let mut game = Game::new(config, seed).expect("valid");
                let mut bots: Vec<SeatBot> = (0..seats as usize)
                    .map(|s| specs[s].build(bot_seed(seed, s)))
                    .collect();
                let mut actions = 0;
                play_match_with(&mut game, &mut bots, |_, _| actions += 1);
                assert!(actions > 0);
                assert_eq!(table.game(), &game, "{profile} seed {seed}");
            }
        }
    }

    #[test]
    fn the_caller_acts_only_for_its_seats_and_the_win_rewards_add_up_to_zero() {
        let config = MatchConfig::new(ProfileId::Classic, 4);
        let specs = vec![Some(spec("heuristic")), None, Some(spec("random")), None];
        let mut table = Table::new(config, specs, RewardMode::Win).expect("valid");
        let mut to_act = table.reset(7);
        let (mut steps, mut rewarded) = (0, 0);
        while let Some(seat) = to_act {
            assert!(
                seat == 1 || seat == 3,
                "the caller is asked for seat {seat}"
            );
            let legal = table.game().legal_actions(seat);
            to_act = table.step(legal[legal.len() - 1]).expect("a legal action");
            let sum: f32 = table.rewards().iter().sum();
            assert!(sum.abs() < 1e-5, "rewards {:?}", table.rewards());
            rewarded += usize::from(table.rewards().iter().any(|&r| r != 0.0));
            steps += 1;
        }
        assert!(steps > 10 && rewarded > 0);
        assert!(table.game().match_result().is_some());
        assert_eq!(table.step(Action::Draw), Err(Rejection::MatchOver));
    }

    /// The caller omits its call whenever it may: the heuristic bot two seats on, offered its
    /// out-of-turn actions before the random bot between them moves, challenges every omission.
    #[test]
    fn bots_challenge_the_callers_omissions() {
        let config = MatchConfig::new(ProfileId::Classic, 3);
        let specs = vec![None, Some(spec("random")), Some(spec("heuristic"))];
        let mut table = Table::new(config, specs, RewardMode::Win).expect("valid");
        let (mut omitted, mut caught) = (0, 0);
        for seed in 0..4 {
            let mut to_act = table.reset(seed);
            let mut just_omitted = false;
            while let Some(seat) = to_act {
                if just_omitted && table.game().hand(seat).len() > 1 {
                    caught += 1;
                }
                let legal = table.game().legal_actions(seat);
                let action = match legal[0] {
                    Action::Play {
                        card,
                        suit,
                        call: Call::Mau,
                    } => Action::Play {
                        card,
                        suit,
                        call: Call::None,
                    },
                    a => a,
                };
                just_omitted = action != legal[0];
                omitted += usize::from(just_omitted);
                to_act = table.step(action).expect("an omission is accepted");
            }
        }
        assert!(omitted > 0);
        assert_eq!(caught, omitted);
    }

    #[test]
    fn a_refused_action_changes_nothing_and_a_seed_replays_the_match() {
        let config = MatchConfig::new(ProfileId::PenaltyPoints, 3);
        let specs = vec![None, Some(spec("search:20")), Some(spec("heuristic"))];
        let mut a = Table::new(config, specs.clone(), RewardMode::Score).expect("valid");
        let mut b = Table::new(config, specs, RewardMode::Score).expect("valid");
        let (mut to_a, to_b) = (a.reset(5), b.reset(5));
        assert_eq!(to_a, to_b);
        let before = *a.game();
        let seat = to_a.expect("seat 0 acts");
        let refused = (0..ACTION_COUNT)
            .filter_map(Action::from_index)
            .find(|&x| {
                let mut g = before;
                g.apply_with(seat, x, &mut ()).is_err()
            })
            .expect("some action is refused");
        assert!(a.step(refused).is_err());
        assert_eq!(a.game(), &before);
        let mut to_b = to_b;
        while let Some(seat) = to_a {
            let a_first = a.game().legal_actions(seat)[0];
            to_a = a.step(a_first).expect("legal");
            to_b = b.step(a_first).expect("legal");
            assert_eq!(to_a, to_b);
            assert_eq!(a.game(), b.game());
            assert_eq!(a.rewards(), b.rewards());
        }
        assert!(to_b.is_none());
    }

    #[test]
    fn not_one_spec_per_seat_is_refused() {
        let config = MatchConfig::new(ProfileId::Classic, 3);
        let e = Table::new(config, vec![None, None], RewardMode::Win)
            .err()
            .expect("refused");
        assert!(e.contains("3 seats"), "{e}");
        let too_many = MatchConfig::new(ProfileId::Classic, 12);
        assert!(Table::new(too_many, vec![None; 12], RewardMode::Win).is_err());
    }
}
