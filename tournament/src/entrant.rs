//! Who plays: built-in bots and external programs, each described by a short spec.
//!
//! | spec | entrant |
//! |---|---|
//! | `random` | a uniformly random legal action |
//! | `heuristic` | the heuristic bot |
//! | `heuristic~0.2` | the heuristic bot that plays a random legal action with probability 0.2 |
//! | `search` | the search bot at its default budget |
//! | `search:100` | the search bot with 100 playouts per decision |
//! | `random+20ms` | the random bot, waiting 20 ms before each decision (same actions): a stand-in for a slow program, to measure how a tournament's machinery copes with slow entrants |
//! | `mybot=cmd:python3 bot.py` | an external program, launched once per match (see below) |
//! | `mybot=lobby:python3 ladder_bot.py` | an external program, launched once for the whole tournament: it holds a lobby and plays every match it is invited to ([`crate::lobby`]) |
//!
//! A spec may carry a display name: `name=spec` (`strong=search:800`); an external program must.
//! A `lobby:` program saves the start-up (interpreter, imports, channel) of every match but the
//! first: a Python entrant plays several times as many games per second that way.
//!
//! Built-in bots play in-process at engine speed, or over gRPC through the Rust SDK's runner when
//! the tournament plays every game on a server. An external program is started with `sh -c`
//! for every match it sits in, with these environment variables, and must play that one seat and
//! exit (the SDKs' runners do exactly this):
//!
//! | variable | value |
//! |---|---|
//! | `MAUMAU_ADDR` | the server, as `host:port` (what gRPC clients take) |
//! | `MAUMAU_URL` | the server, as `http://host:port` (what `maumau bot --server` takes) |
//! | `MAUMAU_TOKEN` | the seat token |
//! | `MAUMAU_SEED` | a seed for the bot's own choices (the one a built-in bot would get); derived one-way from the game's seed ([`crate::schedule::bot_seed`]), so it tells nothing about the deal |
//! | `MAUMAU_GAME` | an opaque id of the game (`g` and 16 hex digits, random), also in the match's label; `results.jsonl` maps it to the fixture id |
//! | `MAUMAU_ENTRANT` | the entrant's name: a program should send it as its Join's `client_name`, the name the match list and the viewer show for its seat (`maumau bot` does) |
//! | `MAUMAU_SEAT`, `MAUMAU_MATCH_ID` | for logs |
//!
//! With `--sandbox` ([`crate::Tournament::sandbox`]) each launch runs in a sandbox of its own
//! ([`maumau_sandbox`]): `MAUMAU_ADDR` and `MAUMAU_URL` are then `unix:/run/maumau/maumau.sock`,
//! a socket forwarded to the server, and the environment holds these variables only. Without
//! it a program inherits its launcher's environment but the launcher's own settings: no
//! `MAUMAU_*` variable (an operator token, a worker's `MAUMAU_STORE`) but `MAUMAU_BWRAP` and the
//! ones above, set afresh, and no `PG*` or `DATABASE_URL` (a database's credentials).
//!
//! A program runs in a process group of its own, killed at the end of its match (after a grace)
//! and, by a guard process, when its launcher dies, even by SIGKILL (see `guard.rs`).
//!
//! Nothing a program is given (nor the match's label, which anyone may read through `GetMatch`)
//! is derived from the tournament seed or the game's place in the schedule in a way that gives
//! away a deal.

use std::fmt;

use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::{BotKind, HeuristicBot, RandomBot, SearchBot, SplitMix};
use maumau_bot_sdk::engine::{Action, Event, MatchResult, Observation};

/// One participant of a tournament.
#[derive(Clone, Debug, PartialEq)]
pub struct Entrant {
    /// Unique display name.
    pub name: String,
    /// Who plays for it.
    pub player: Player,
}

/// What plays for an entrant.
#[derive(Clone, Debug, PartialEq)]
pub enum Player {
    /// A reference bot of this crate's process.
    BuiltIn(BuiltIn),
    /// An external program: a shell command launched once per match, which joins over gRPC
    /// with the seat token it is given in `MAUMAU_TOKEN`.
    Command(String),
    /// An external program launched once for the whole tournament: it holds a lobby (the
    /// ladder's protocol; see [`crate::lobby`]) and is invited to each of its matches there.
    Lobby(String),
}

/// A reference bot and how it is handicapped or tuned.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BuiltIn {
    /// The bot.
    pub kind: BotKind,
    /// Probability of playing a random legal action instead (0 = never).
    pub noise: f64,
    /// Search playouts per decision (search only).
    pub iterations: Option<u32>,
    /// Milliseconds it waits before each decision (0 = none); it plays the same actions.
    pub think_ms: u32,
}

impl Entrant {
    /// A built-in bot with default settings, named after its kind.
    pub fn built_in(kind: BotKind) -> Entrant {
        Entrant {
            name: kind.name().to_string(),
            player: Player::BuiltIn(BuiltIn {
                kind,
                noise: 0.0,
                iterations: None,
                think_ms: 0,
            }),
        }
    }

    /// Parses `[name=]kind[~noise][:iterations][+Nms]`, `name=cmd:COMMAND` or
    /// `name=lobby:COMMAND`.
    pub fn parse(spec: &str) -> Result<Entrant, String> {
        let bare = spec.trim_start();
        if bare.starts_with("cmd:") || bare.starts_with("lobby:") {
            return Err(format!(
                "`{spec}`: an external program needs a name: `mybot={}`",
                spec.trim_start()
            ));
        }
        let (name, rest) = match spec.split_once('=') {
            Some((n, r)) if !n.trim().is_empty() => (Some(n.trim().to_string()), r.trim()),
            _ => (None, spec.trim()),
        };
        for (prefix, player) in [
            ("cmd:", Player::Command as fn(String) -> Player),
            ("lobby:", Player::Lobby),
        ] {
            if let Some(command) = rest.strip_prefix(prefix) {
                let command = command.trim();
                if command.is_empty() {
                    return Err(format!("`{spec}`: `{prefix}` needs a command to run"));
                }
                return Ok(Entrant {
                    name: name.unwrap_or_default(),
                    player: player(command.to_string()),
                });
            }
        }
        let (rest, think_ms) = match rest.split_once('+') {
            Some((r, t)) => {
                let ms = t.strip_suffix("ms").and_then(|n| n.parse::<u32>().ok());
                let ms = ms.filter(|&n| n > 0).ok_or_else(|| {
                    format!("`{spec}`: the wait before each decision is written `+20ms`")
                })?;
                (r, ms)
            }
            None => (rest, 0),
        };
        let (rest, iterations) = match rest.split_once(':') {
            Some((r, n)) => {
                let n: u32 = n.parse().ok().filter(|&n| n > 0).ok_or_else(|| {
                    format!("`{spec}`: the number after `:` is the search budget (playouts per decision, > 0)")
                })?;
                (r, Some(n))
            }
            None => (rest, None),
        };
        let (kind, noise) = match rest.split_once('~') {
            Some((k, p)) => {
                let p: f64 = p
                    .parse()
                    .ok()
                    .filter(|p: &f64| (0.0..=1.0).contains(p))
                    .ok_or_else(|| {
                        format!("`{spec}`: the number after `~` is a probability from 0 to 1")
                    })?;
                (k, p)
            }
            None => (rest, 0.0),
        };
        let kind: BotKind = kind.parse().map_err(|e: String| {
            format!(
                "`{spec}`: {e}, or an external program as `name=cmd:COMMAND` or `name=lobby:COMMAND`"
            )
        })?;
        if iterations.is_some() && kind != BotKind::Search {
            return Err(format!(
                "`{spec}`: only the search bot takes a budget (`search:N`)"
            ));
        }
        Ok(Entrant {
            name: name.unwrap_or_else(|| spec.trim().to_string()),
            player: Player::BuiltIn(BuiltIn {
                kind,
                noise,
                iterations,
                think_ms,
            }),
        })
    }

    /// Parses a comma-separated list of specs (see [`Entrant::parse`]; a command with commas
    /// goes through [`Entrant::parse_all`] instead) and makes the names unique.
    pub fn parse_list(specs: &str) -> Result<Vec<Entrant>, String> {
        Entrant::parse_all(specs.split(','))
    }

    /// Parses specs one by one and makes the names unique (`heuristic`, `heuristic#2`).
    pub fn parse_all<'a>(specs: impl IntoIterator<Item = &'a str>) -> Result<Vec<Entrant>, String> {
        let mut out: Vec<Entrant> = Vec::new();
        for spec in specs.into_iter().map(str::trim).filter(|s| !s.is_empty()) {
            let mut e = Entrant::parse(spec)?;
            let base = e.name.clone();
            let mut k = 2;
            while out.iter().any(|o| o.name == e.name) {
                e.name = format!("{base}#{k}");
                k += 1;
            }
            out.push(e);
        }
        if out.len() < 2 {
            return Err("a tournament needs at least two entrants".into());
        }
        Ok(out)
    }

    /// The spec this entrant was parsed from, with its name (`name=spec`).
    pub fn spec(&self) -> String {
        match &self.player {
            Player::Command(c) => format!("{}=cmd:{c}", self.name),
            Player::Lobby(c) => format!("{}=lobby:{c}", self.name),
            Player::BuiltIn(b) => {
                let mut s = format!("{}={}", self.name, b.kind);
                if b.noise > 0.0 {
                    s.push_str(&format!("~{}", b.noise));
                }
                if let Some(n) = b.iterations {
                    s.push_str(&format!(":{n}"));
                }
                if b.think_ms > 0 {
                    s.push_str(&format!("+{}ms", b.think_ms));
                }
                s
            }
        }
    }

    /// True for an external program (`cmd:` or `lobby:`).
    pub fn is_external(&self) -> bool {
        matches!(self.player, Player::Command(_) | Player::Lobby(_))
    }

    /// A fresh bot for one game; `None` for an external program.
    pub fn bot(&self, seed: u64) -> Option<Box<dyn Bot>> {
        match &self.player {
            Player::BuiltIn(b) => Some(b.bot(seed)),
            Player::Command(_) | Player::Lobby(_) => None,
        }
    }
}

impl BuiltIn {
    /// A fresh bot for one game.
    pub fn bot(&self, seed: u64) -> Box<dyn Bot> {
        let inner: Box<dyn Bot> = match (self.kind, self.iterations) {
            (BotKind::Search, Some(n)) => Box::new(SearchBot::with_iterations(seed, n)),
            (kind, _) => kind.build(seed),
        };
        let inner: Box<dyn Bot> = if self.noise > 0.0 {
            Box::new(Noisy {
                inner,
                noise: self.noise,
                rng: SplitMix::new(seed ^ 0x004E_015E),
            })
        } else {
            inner
        };
        if self.think_ms > 0 {
            Box::new(Thinking {
                inner,
                wait: std::time::Duration::from_millis(self.think_ms.into()),
            })
        } else {
            inner
        }
    }
}

impl BuiltIn {
    /// The same bot as [`BuiltIn::bot`], unboxed where its type is known, for in-process games.
    pub(crate) fn seat_bot(&self, seed: u64) -> SeatBot {
        match (
            self.kind,
            self.iterations,
            self.noise > 0.0 || self.think_ms > 0,
        ) {
            (BotKind::Random, _, false) => SeatBot::Random(RandomBot::new(seed)),
            (BotKind::Heuristic, _, false) => SeatBot::Heuristic(HeuristicBot::new(seed)),
            _ => SeatBot::Boxed(self.bot(seed)),
        }
    }
}

/// A built-in bot in an in-process game: the common kinds held by value, so the game loop calls
/// them directly (no allocation, no dynamic call per decision); any other bot boxed. Plays exactly
/// as the boxed bot of [`BuiltIn::bot`] would.
pub(crate) enum SeatBot {
    Random(RandomBot),
    Heuristic(HeuristicBot),
    Boxed(Box<dyn Bot>),
}

macro_rules! each_bot {
    ($self:expr, $b:ident => $call:expr) => {
        match $self {
            SeatBot::Random($b) => $call,
            SeatBot::Heuristic($b) => $call,
            SeatBot::Boxed($b) => $call,
        }
    };
}

impl Bot for SeatBot {
    fn name(&self) -> &str {
        each_bot!(self, b => b.name())
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        each_bot!(self, b => b.decide(obs))
    }

    #[inline]
    fn quick_decide(&mut self, legal: &[Action]) -> Option<Action> {
        each_bot!(self, b => b.quick_decide(legal))
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        each_bot!(self, b => b.react(obs))
    }

    fn on_event(&mut self, event: &Event) {
        each_bot!(self, b => b.on_event(event))
    }

    fn listens(&self) -> bool {
        each_bot!(self, b => b.listens())
    }

    fn on_match_end(&mut self, result: Option<&MatchResult>) {
        each_bot!(self, b => b.on_match_end(result))
    }
}

/// A seat's bot in an in-process game, timing each decision that needed the observation
/// ([`Bot::decide`]). Answers from the legal actions alone ([`Bot::quick_decide`]: the random
/// bot's, tens of nanoseconds) are not timed, so the fast path of a tournament of such bots reads
/// no clock.
pub(crate) struct TimedBot {
    pub(crate) bot: SeatBot,
    /// Nanoseconds of each timed decision, in order.
    pub(crate) times: Vec<u64>,
}

impl Bot for TimedBot {
    fn name(&self) -> &str {
        self.bot.name()
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        let started = std::time::Instant::now();
        let action = self.bot.decide(obs);
        self.times
            .push(u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX));
        action
    }

    #[inline]
    fn quick_decide(&mut self, legal: &[Action]) -> Option<Action> {
        self.bot.quick_decide(legal)
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        self.bot.react(obs)
    }

    fn on_event(&mut self, event: &Event) {
        self.bot.on_event(event);
    }

    fn listens(&self) -> bool {
        self.bot.listens()
    }

    fn on_match_end(&mut self, result: Option<&MatchResult>) {
        self.bot.on_match_end(result);
    }
}

impl fmt::Display for Entrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

/// Plays a random legal action with probability `noise`, else asks the inner bot.
struct Noisy {
    inner: Box<dyn Bot>,
    noise: f64,
    rng: SplitMix,
}

impl Bot for Noisy {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        let draw = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        if draw < self.noise {
            obs.legal[self.rng.below(obs.legal.len())]
        } else {
            self.inner.decide(obs)
        }
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        self.inner.react(obs)
    }

    fn on_event(&mut self, event: &Event) {
        self.inner.on_event(event);
    }

    fn listens(&self) -> bool {
        self.inner.listens()
    }

    fn on_match_end(&mut self, result: Option<&MatchResult>) {
        self.inner.on_match_end(result);
    }
}

/// Waits before each decision, then asks the inner bot: the same actions, slower. Never answers
/// from the legal actions alone ([`Bot::quick_decide`]), so every decision waits.
struct Thinking {
    inner: Box<dyn Bot>,
    wait: std::time::Duration,
}

impl Bot for Thinking {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        std::thread::sleep(self.wait);
        self.inner.decide(obs)
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        self.inner.react(obs)
    }

    fn on_event(&mut self, event: &Event) {
        self.inner.on_event(event);
    }

    fn listens(&self) -> bool {
        self.inner.listens()
    }

    fn on_match_end(&mut self, result: Option<&MatchResult>) {
        self.inner.on_match_end(result);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built_in(e: &Entrant) -> BuiltIn {
        match &e.player {
            Player::BuiltIn(b) => *b,
            Player::Command(c) | Player::Lobby(c) => panic!("a program: {c}"),
        }
    }

    #[test]
    fn specs_parse_with_clear_errors() {
        let e = Entrant::parse("strong=search:800").unwrap();
        assert_eq!(e.name, "strong");
        assert_eq!(
            (built_in(&e).kind, built_in(&e).iterations),
            (BotKind::Search, Some(800))
        );
        let e = Entrant::parse("heuristic~0.4").unwrap();
        assert_eq!(
            (built_in(&e).kind, built_in(&e).noise),
            (BotKind::Heuristic, 0.4)
        );
        assert!(
            Entrant::parse("alphazero")
                .unwrap_err()
                .contains("unknown bot `alphazero`")
        );
        assert!(
            Entrant::parse("heuristic:5")
                .unwrap_err()
                .contains("only the search bot")
        );
        assert!(
            Entrant::parse("random~2")
                .unwrap_err()
                .contains("probability")
        );
        assert_eq!(
            built_in(&Entrant::parse("random+20ms").unwrap()).think_ms,
            20
        );
        for bad in ["random+20", "random+0ms", "random+ms"] {
            assert!(
                Entrant::parse(bad).unwrap_err().contains("`+20ms`"),
                "{bad}"
            );
        }
        let list = Entrant::parse_list("heuristic,heuristic,random").unwrap();
        assert_eq!(list[1].name, "heuristic#2");
        assert!(Entrant::parse_list("random").is_err());
    }

    #[test]
    fn commands_need_a_name_and_keep_their_text() {
        let e = Entrant::parse("py=cmd:python3 bot.py --level=3, fast").unwrap();
        assert_eq!(e.name, "py");
        assert_eq!(
            e.player,
            Player::Command("python3 bot.py --level=3, fast".into())
        );
        assert!(e.is_external() && e.bot(1).is_none());
        assert_eq!(e.spec(), "py=cmd:python3 bot.py --level=3, fast");
        assert!(
            Entrant::parse("cmd:python3 bot.py")
                .unwrap_err()
                .contains("needs a name")
        );
        assert!(
            Entrant::parse("x=cmd:  ")
                .unwrap_err()
                .contains("needs a command")
        );
        let e = Entrant::parse("py=lobby:python3 ladder_bot.py").unwrap();
        assert_eq!(e.player, Player::Lobby("python3 ladder_bot.py".into()));
        assert!(e.is_external() && e.bot(1).is_none());
        assert!(
            Entrant::parse("lobby:python3 bot.py")
                .unwrap_err()
                .contains("needs a name")
        );
        assert!(
            Entrant::parse("x=lobby:")
                .unwrap_err()
                .contains("`lobby:` needs a command")
        );
        // Specs round-trip.
        for s in [
            "a=heuristic~0.2",
            "b=search:50",
            "c=random",
            "e=heuristic~0.1+3ms",
            "f=search:20+1ms",
            "d=lobby:./bot --fast",
        ] {
            assert_eq!(Entrant::parse(s).unwrap().spec(), s);
        }
    }
}
