//! `maumau check-bot`: a conformance kit for bot authors.
//!
//! It puts a bot, written in any language, through a scripted gauntlet and prints a report card.
//! The kit starts a Mau Mau Arena server in-process on loopback and a gRPC proxy of it; the bot
//! talks to the proxy exactly as it would to a server. For each match of the gauntlet the kit
//! creates the match, launches the bot (or waits for it to connect), and, through the proxy,
//! watches every prompt and answer and does one thing to the bot on purpose:
//!
//! | check | what the kit does | the bot passes when |
//! |---|---|---|
//! | `<profile>, <n> seats` (each profile and seat count the bot plays) | nothing: a two-round match against the built-in bots | the match finishes, no decision is late, and no action of its own is refused |
//! | `rejected action` | swaps its first answer for a play of a card it does not hold, which the server refuses | it answers the same prompt again, in time, and that answer is accepted |
//! | `stale state id` | holds its second answer back until the server has timed the decision out and moved on, then delivers it: the server refuses it as STALE_STATE | it answers within `--deadline-ms` (a late answer is stale already: the check cannot be made) and carries on: every later prompt answered in time |
//! | `dropped connection` | swallows its second answer and shuts its TCP connections down | it reconnects, resumes (`Join.resume`), and answers the pending prompt in time |
//! | `deadline` | a match where every decision must come within `--deadline-ms` (no time bank) | no decision is late |
//! | `challenge window` | a set position where another seat has just missed its call, so a CHALLENGE is open to the bot | it does not crash, and keeps playing: every later prompt answered in time (challenging is its choice) |
//! | `best move` | a set position where the bot is to act holding J♣ and K♠ on 10♥: its only plays are the jack, naming one of the four suits | it names ♠, the suit of the card it keeps, so that it can go out with K♠ next turn |
//!
//! Every check also needs the bot to end cleanly after its match: a launched bot must exit with
//! status 0 within 5 s of the match's end, and an in-process one must return. **A bot that never
//! exits fails**, although its match counts: check-bot, `maumau tournament` and the `--connect`
//! loop start a bot once per match, so one that never exits holds every tournament game until it
//! is stopped and, started by hand in a loop, never comes back for the next match; and a bot that
//! exits with an error after its match fails too.
//!
//! A bot that does not start (its program cannot be launched, or it ends, or runs out of time,
//! before it joins its match) stops the gauntlet: the report says so and names the checks not
//! run, which would all fail the same way.
//!
//! A launched bot's stdout and stderr go to one log file per match (`01-classic-2-seats.log`
//! and so on, in [`Options::log_dir`]); when the bot fails, the reason quotes the first lines of
//! its crash (a Python traceback, a Go or Rust panic, a JavaScript or Java stack trace) and its
//! last lines, and names the file.
//!
//! The report gives pass or fail per check with the evidence or the reason, and the bot's
//! decision-time percentiles, measured at the proxy.
//!
//! ```no_run
//! # async fn demo() -> Result<(), maumau_checkbot::KitError> {
//! use maumau_checkbot::{BotUnderTest, Options, run};
//! let bot = BotUnderTest::Command(vec!["python3".into(), "my_bot.py".into()]);
//! let report = run(Options::new(bot), |_| {}).await?;
//! println!("{report}");
//! assert!(report.passed());
//! # Ok(())
//! # }
//! ```
//!
//! # How the bot is given its seat
//!
//! A launched bot gets the address of the proxy (`host:port`) in `MAUMAU_ADDR` and its seat
//! token in `MAUMAU_TOKEN`; `{addr}` and `{token}` in its arguments are replaced by the same. It
//! must play one match and exit. With [`BotUnderTest::Connect`] the kit prints one address and
//! one token that stand for whichever match is being played: run the bot once per match (in a
//! loop) with them.
//!
//! # A bot that stays up between matches (`--lobby`)
//!
//! With [`BotUnderTest::Lobby`] the bot is launched once, as a tournament launches a
//! `--entrant 'name=lobby:COMMAND'`: the kit hosts the tournament's lobby
//! ([`maumau_tournament::lobby`]), the bot finds it in `MAUMAU_LOBBY_ADDR` and its key in
//! `MAUMAU_LOBBY_KEY` (the SDKs' lobby helpers read both), and each match of the gauntlet comes
//! to it as an `Invitation` (seat token, and the proxy's address as `node_address`), one at a
//! time, followed by a `LadderMatchEnded`. Its output goes to one file, `lobby.log`.
//!
//! Every check of the table above is run, unchanged: each plays on the match's own connection
//! (through the proxy), which a lobby bot opens per invitation as any bot opens per launch, so
//! the rejected action, the stale answer, the cut connection and the deadline test the same
//! code of the bot; the lobby's own connection is not tampered with. What changes:
//!
//! - The clean end after each match does not apply; instead a last check, `lobby closed`,
//!   needs the bot to exit with status 0 within 5 s of the kit closing its lobby at the end
//!   (`LobbyDrained` with `closed`), as at the end of a tournament.
//! - A bot that opens no lobby within the join timeout (`--join-timeout`, 30 s), or leaves it
//!   before the gauntlet is over (its program exits, it drains its lobby, or its lobby stays
//!   closed for the join timeout), fails the check at hand with the reason and its output's
//!   excerpt, and stops the gauntlet: in a tournament it would forfeit every later game.
//! - Connect mode has no lobby form: a bot started by hand holds a real ladder's lobby instead.

mod gauntlet;
pub mod launch;
mod positions;
mod proxy;
mod report;
mod trial;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::BotKind;
use maumau_engine::{MatchConfig, ProfileId};

pub use gauntlet::run;
pub use report::{CheckResult, DecisionTimes, Report};

/// Makes a fresh Rust bot for one match from a seed.
pub type BotFactory = Arc<dyn Fn(u64) -> Box<dyn Bot> + Send + Sync>;

/// The bot under test.
#[derive(Clone)]
pub enum BotUnderTest {
    /// A program and its arguments, launched once per match.
    Command(Vec<String>),
    /// A program and its arguments, launched once for the whole gauntlet: it holds a lobby and
    /// is invited there to each match, as a tournament's `lobby:` entrant is (see the crate's
    /// docs on `--lobby`).
    Lobby(Vec<String>),
    /// A bot started by hand: the kit prints an address and a token and waits for it to connect,
    /// once per match.
    Connect,
    /// A Rust bot played in-process by the SDK's network runner (through the proxy, like any
    /// other bot), each match on its own thread.
    InProcess(BotFactory),
}

impl fmt::Debug for BotUnderTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BotUnderTest::Command(c) => write!(f, "Command({c:?})"),
            BotUnderTest::Lobby(c) => write!(f, "Lobby({c:?})"),
            BotUnderTest::Connect => write!(f, "Connect"),
            BotUnderTest::InProcess(_) => write!(f, "InProcess"),
        }
    }
}

impl fmt::Display for BotUnderTest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BotUnderTest::Command(c) => write!(f, "`{}`", c.join(" ")),
            BotUnderTest::Lobby(c) => write!(f, "`{}` in a lobby", c.join(" ")),
            BotUnderTest::Connect => write!(f, "a bot that connects by itself"),
            BotUnderTest::InProcess(_) => write!(f, "an in-process Rust bot"),
        }
    }
}

/// A profile and a seat count the bot plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    /// The profile.
    pub profile: ProfileId,
    /// The seat count.
    pub seats: u8,
}

impl Case {
    /// The usual tables: classic with 2 and 4 seats, penalty-points with 4, brazilian with 6,
    /// romanian-32 with 3.
    pub fn usual() -> Vec<Case> {
        ProfileId::ALL
            .into_iter()
            .flat_map(Case::usual_for)
            .collect()
    }

    /// The usual seat counts of one profile.
    pub fn usual_for(profile: ProfileId) -> Vec<Case> {
        let seats: &[u8] = match profile {
            ProfileId::Classic => &[2, 4],
            ProfileId::PenaltyPoints => &[4],
            ProfileId::Brazilian => &[6],
            ProfileId::Romanian32 => &[3],
        };
        seats.iter().map(|&seats| Case { profile, seats }).collect()
    }

    /// Reads `PROFILE` (its usual seat counts) or `PROFILE:N,M,...`, e.g. `classic:2,3`.
    pub fn parse(spec: &str) -> Result<Vec<Case>, KitError> {
        let bad = |why: String| KitError::BadOption(format!("`{spec}`: {why}"));
        let (name, seats) = match spec.split_once(':') {
            Some((n, s)) => (n, Some(s)),
            None => (spec, None),
        };
        let profile: ProfileId = name.trim().parse().map_err(|e| bad(format!("{e}")))?;
        let Some(seats) = seats else {
            return Ok(Case::usual_for(profile));
        };
        let rules = MatchConfig::new(profile, 4)
            .rules()
            .map_err(|e| bad(e.to_string()))?;
        seats
            .split(',')
            .map(|s| {
                let n: u8 = s
                    .trim()
                    .parse()
                    .map_err(|_| bad(format!("`{s}` is not a seat count")))?;
                if !(rules.min_seats..=rules.max_seats).contains(&n) {
                    return Err(bad(format!(
                        "{profile} is played by {} to {} seats",
                        rules.min_seats, rules.max_seats
                    )));
                }
                Ok(Case { profile, seats: n })
            })
            .collect()
    }
}

impl fmt::Display for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, {} seats", self.profile, self.seats)
    }
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// The bot.
    pub bot: BotUnderTest,
    /// The profiles and seat counts it plays (the first one is used for the rejected-action,
    /// stale, dropped-connection, deadline, challenge-window and best-move checks).
    pub cases: Vec<Case>,
    /// The built-in bot on the other seats.
    pub opponent: BotKind,
    /// The decision time of the deadline and stale checks.
    pub deadline: Duration,
    /// Seeds every deal and the bots' choices: the same seed gives the same gauntlet.
    pub seed: u64,
    /// How long the kit waits for the bot to join a match.
    pub join_timeout: Duration,
    /// How long one match may take before the kit aborts it.
    pub match_timeout: Duration,
    /// Where a launched bot's output goes, one file per match (the directory is made if need
    /// be); `None`: a new directory under the system's temporary directory, kept after the run.
    /// The report names it.
    pub log_dir: Option<PathBuf>,
    /// The sandbox a launched bot runs in (`--sandbox`; see [`maumau_sandbox`]); `None`: it
    /// runs with the rights of the kit.
    pub sandbox: Option<std::sync::Arc<maumau_sandbox::Sandbox>>,
}

impl Options {
    /// The default gauntlet for a bot: the usual tables, heuristic opponents, a 500 ms deadline,
    /// seed 1; the bot has 30 s to join each match (5 minutes when it connects by itself) and
    /// each match may take a minute; its output goes to a new temporary directory.
    pub fn new(bot: BotUnderTest) -> Options {
        let join = match bot {
            BotUnderTest::Connect => Duration::from_secs(300),
            _ => Duration::from_secs(30),
        };
        Options {
            bot,
            cases: Case::usual(),
            opponent: BotKind::Heuristic,
            deadline: Duration::from_millis(500),
            seed: 1,
            join_timeout: join,
            match_timeout: Duration::from_secs(60),
            log_dir: None,
            sandbox: None,
        }
    }
}

/// What the kit reports while it runs.
#[derive(Debug)]
pub enum Progress<'a> {
    /// Connect mode: the bot should now connect to `addr` with `token`, once per match.
    Waiting {
        /// The proxy's address, `host:port`.
        addr: &'a str,
        /// The token that stands for the bot's seat in every match.
        token: &'a str,
        /// How many matches the gauntlet has.
        matches: usize,
    },
    /// A check is done.
    Check(&'a CheckResult),
}

/// Why the kit could not run the gauntlet (a failed check is not an error: see [`Report`]).
#[derive(Debug)]
pub enum KitError {
    /// An option makes no sense; the message says which and why.
    BadOption(String),
    /// The local server or the proxy could not start.
    Start(String),
    /// The directory for the bot's output cannot be made.
    LogDir(String),
}

impl fmt::Display for KitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KitError::BadOption(why) => write!(f, "bad option: {why}"),
            KitError::Start(why) => write!(f, "cannot start the local server: {why}"),
            KitError::LogDir(why) => {
                write!(f, "cannot make the directory for the bot's output: {why}")
            }
        }
    }
}

impl std::error::Error for KitError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_read_a_profile_with_or_without_seat_counts() {
        let c = Case::parse("classic").expect("valid");
        assert_eq!(c, Case::usual_for(ProfileId::Classic));
        let c = Case::parse("romanian-32:2,4").expect("valid");
        assert_eq!(
            c.iter().map(|c| c.seats).collect::<Vec<_>>(),
            [2, 4],
            "{c:?}"
        );
        let err = Case::parse("brazilian:2").expect_err("too few seats");
        assert!(err.to_string().contains("4 to 8 seats"), "{err}");
        assert!(Case::parse("chess").is_err());
        assert!(Case::parse("classic:x").is_err());
    }
}
