//! Bot-versus-bot tournaments: fair schedules, duplicate deals, Weng-Lin ratings, resumable runs,
//! built-in bots in-process and external programs over gRPC.
//!
//! ```
//! use maumau_tournament::{Entrant, Format, Tournament};
//! use maumau_engine::{MatchConfig, ProfileId};
//!
//! let entrants = Entrant::parse_list("random,heuristic").unwrap();
//! let mut t = Tournament::new(entrants, MatchConfig::new(ProfileId::Classic, 2));
//! t.deals = 2;
//! let report = t.run(None, &mut |_| {}).unwrap();
//! assert_eq!(report.games.len(), 4); // 1 table × 2 deals × 2 seatings
//! assert_eq!(report.standings.len(), 2);
//! ```
//!
//! Entrants that are external programs (`name=cmd:COMMAND`, see [`entrant`]) play on a server
//! ([`Tournament::server`], a [`Remote`]); every other game is played in-process at engine speed,
//! unless [`Remote::every_game`] sends those to the server too (the same seeds give the same
//! results either way).

pub mod entrant;
mod guard;
pub mod lobby;
mod net;
pub mod schedule;
mod stats;
pub mod venue;

use std::collections::{HashMap, HashSet};
use std::fs::{self, File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Instant;

use maumau_bot_sdk::bots::RandomBot;
use maumau_bot_sdk::play_match_with;
use maumau_engine::outcome::MAX_SEATS;
use maumau_engine::profile::Scoring;
use maumau_engine::{Action, CallsMode, Game, MatchConfig, Options, ProfileId};
use serde::{Deserialize, Serialize};

pub use entrant::{BuiltIn, Entrant, Player};
use entrant::{SeatBot, TimedBot};
pub use net::{Clock, Remote, stop_programs};
pub use schedule::{Fixture, Knockout, Stage};
pub use stats::{
    BOOTSTRAP_MAX_BLOCKS, BOOTSTRAP_RESAMPLES, BlockGains, DecisionTimes, Estimate, GameRecord,
    Interval, MIN_BLOCKS, PairResult, Standing, Tally, paired_interval, standings,
    strength_differences,
};
pub use venue::{Claim, Here, Venue};

/// How entrants are brought together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Format {
    /// Every table of `seats` entrants out of all of them.
    RoundRobin,
    /// `rounds` rounds; each pairs entrants of similar standing who have not met yet.
    Swiss {
        /// Rounds to play.
        rounds: u32,
    },
    /// Two-seat knockout: seeds in entry order, the loser of each pairing is out.
    SingleElimination,
    /// Two-seat knockout with a winners' and a losers' bracket: out after two lost pairings;
    /// the two brackets' champions meet in a grand final (see [`Knockout`]).
    DoubleElimination,
}

/// A tournament: who plays, under which rules, how often.
#[derive(Clone, Debug)]
pub struct Tournament {
    /// The entrants.
    pub entrants: Vec<Entrant>,
    /// Rules of every game; `config.seats` is the table size.
    pub config: MatchConfig,
    /// The format.
    pub format: Format,
    /// Deals per table (each played once per seating).
    pub deals: u32,
    /// The tournament seed; every game seed derives from it. [`Tournament::new`] draws it from
    /// the operating system, so no entrant can know the deals in advance; a seed chosen by hand
    /// makes the tournament reproducible, and its deals predictable to anyone who knows it.
    pub seed: u64,
    /// Replay each deal with the entrants rotated over the seats.
    pub duplicate: bool,
    /// Worker threads (default: every core); also the most games played at once on a server.
    pub threads: usize,
    /// Keep every game's actions (written to `replays.jsonl`).
    pub record_replays: bool,
    /// The server for games over gRPC; needed when an entrant is an external program.
    pub server: Option<Remote>,
    /// The sandbox every external program runs in (`--sandbox`): see [`maumau_sandbox`].
    pub sandbox: Option<Arc<maumau_sandbox::Sandbox>>,
}

/// Why a tournament could not run.
#[derive(Debug)]
pub enum TournamentError {
    /// The configuration is refused (the message says why).
    Invalid(String),
    /// The output directory could not be used.
    Io(PathBuf, std::io::Error),
    /// The output directory holds a different tournament.
    OtherTournament(PathBuf),
    /// The server could not be reached or refused to play (the message says why).
    Server(String),
    /// The [`Venue`] playing the games failed (the message says why).
    Venue(String),
}

impl std::fmt::Display for TournamentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TournamentError::Invalid(why)
            | TournamentError::Server(why)
            | TournamentError::Venue(why) => f.write_str(why),
            TournamentError::Io(p, e) => write!(f, "{}: {e}", p.display()),
            TournamentError::OtherTournament(p) => write!(
                f,
                "{} holds the results of a different tournament; choose another --out or delete it",
                p.display()
            ),
        }
    }
}

impl std::error::Error for TournamentError {}

/// What a finished tournament produced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    /// The tournament, as recorded in `tournament.json`.
    pub description: Description,
    /// Every game, in schedule order.
    pub games: Vec<GameRecord>,
    /// The standings.
    pub standings: Vec<Standing>,
    /// Head-to-head results.
    pub pairs: Vec<PairResult>,
    /// The winner of a knockout's last pairing (knockout formats only).
    pub champion: Option<String>,
    /// What went wrong with entrants during this run (forfeits, crashed programs), one line each.
    pub notices: Vec<String>,
    /// Games played by this run (the rest were resumed from the output directory).
    pub played_now: usize,
    /// Seconds this run spent playing.
    pub seconds: f64,
}

/// Everything that identifies a tournament; a resumed run must match it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Description {
    /// Entrant specs (`name=spec`), in entry order.
    pub entrants: Vec<String>,
    /// Profile id.
    pub profile: String,
    /// Option words.
    pub options: String,
    /// Seats per table.
    pub seats: u8,
    /// Calls setting.
    pub calls: String,
    /// Turn limit per round.
    pub max_turns_per_round: u16,
    /// Format.
    pub format: Format,
    /// Deals per table.
    pub deals: u32,
    /// Seed.
    pub seed: u64,
    /// Duplicate deals.
    pub duplicate: bool,
}

impl Description {
    /// The heading of the mean final total per game, saying which way is better under this
    /// tournament's scoring (the engine's `Rules::scoring`): `penalty/game, lower is better`
    /// under penalty scoring (classic, penalty-points, brazilian), `points/game, higher is
    /// better` where the winner collects points (romanian-32).
    pub fn score_heading(&self) -> &'static str {
        let rules = self.profile.parse::<ProfileId>().ok().and_then(|profile| {
            let options = Options::from_words(&self.options).ok()?;
            MatchConfig {
                options,
                ..MatchConfig::new(profile, self.seats)
            }
            .rules()
            .ok()
        });
        match rules.map(|r| r.scoring) {
            Some(Scoring::Penalty) => "penalty/game, lower is better",
            Some(Scoring::Positive) => "points/game, higher is better",
            None => "total/game",
        }
    }
}

/// Progress of a run, for a progress bar.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Games finished (resumed ones included).
    pub done: usize,
    /// Games scheduled so far.
    pub total: usize,
    /// Something to tell the operator now (an entrant forfeited, a program crashed).
    pub notice: Option<String>,
}

/// Games finished before a round, and scheduled in all, for progress.
#[derive(Clone, Copy)]
struct Counts {
    done: usize,
    total: usize,
}

/// One game as played: its record, its replay line when recorded, and notices.
#[derive(Clone, Debug, PartialEq)]
pub struct Played {
    /// What `results.jsonl` keeps of it.
    pub record: GameRecord,
    /// Its line of `replays.jsonl` (without the newline), when replays are kept.
    pub replay: Option<Vec<u8>>,
    /// What went wrong with its entrants, one line each.
    pub notices: Vec<String>,
}

impl Tournament {
    /// A round robin with 10 deals per table, duplicate deals, calls `enforce` (what tournaments
    /// use), a secret seed drawn from the operating system ([`schedule::random_seed`]), every
    /// core, replays kept, no server.
    pub fn new(entrants: Vec<Entrant>, config: MatchConfig) -> Tournament {
        Tournament {
            entrants,
            config: MatchConfig {
                calls: CallsMode::Enforce,
                ..config
            },
            format: Format::RoundRobin,
            deals: 10,
            seed: schedule::random_seed(),
            duplicate: true,
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            record_replays: true,
            server: None,
            sandbox: None,
        }
    }

    /// The seed of the tournament stored in `out` (from its `tournament.json`), if one is: a
    /// run that resumes it without a chosen seed must take this one.
    pub fn stored_seed(out: &Path) -> Option<u64> {
        let text = fs::read_to_string(out.join("tournament.json")).ok()?;
        serde_json::from_str::<Description>(&text)
            .ok()
            .map(|d| d.seed)
    }

    /// What identifies this tournament.
    pub fn description(&self) -> Description {
        Description {
            entrants: self.entrants.iter().map(Entrant::spec).collect(),
            profile: self.config.profile.to_string(),
            options: self.config.options.to_words(),
            seats: self.config.seats,
            calls: self.config.calls.name().to_string(),
            max_turns_per_round: self.config.max_turns_per_round,
            format: self.format,
            deals: self.deals,
            seed: self.seed,
            duplicate: self.duplicate,
        }
    }

    /// The tournament `d` describes (as [`Tournament::description`] gave it), with replays kept
    /// when `record_replays`, every core and no server (a tournament with external programs
    /// needs one given before it is played): what a worker on another machine plays the games
    /// of an event with. Refused when the description does not parse or describes a tournament
    /// that cannot be played.
    pub fn from_description(
        d: &Description,
        record_replays: bool,
    ) -> Result<Tournament, TournamentError> {
        let invalid = |what: &str, e: String| TournamentError::Invalid(format!("{what}: {e}"));
        let entrants = Entrant::parse_all(d.entrants.iter().map(String::as_str))
            .map_err(|e| invalid("entrants", e))?;
        let profile: ProfileId = d
            .profile
            .parse()
            .map_err(|e| invalid("profile", format!("{e}")))?;
        let config = MatchConfig {
            options: Options::from_words(&d.options)
                .map_err(|e| invalid("options", format!("{e}")))?,
            calls: d
                .calls
                .parse::<CallsMode>()
                .map_err(|e| invalid("calls", format!("{e}")))?,
            max_turns_per_round: d.max_turns_per_round,
            ..MatchConfig::new(profile, d.seats)
        };
        let mut t = Tournament::new(entrants, config);
        t.config = config;
        (t.format, t.deals, t.seed, t.duplicate) = (d.format, d.deals, d.seed, d.duplicate);
        t.record_replays = record_replays;
        // The server (for external programs) is the player's to give.
        t.validate_plan()?;
        if t.description() != *d {
            return Err(TournamentError::Invalid(
                "the description does not give back the same tournament".into(),
            ));
        }
        Ok(t)
    }

    fn validate(&self) -> Result<(), TournamentError> {
        self.validate_plan()?;
        for e in &self.entrants {
            if e.is_external() && self.server.is_none() {
                return Err(TournamentError::Invalid(format!(
                    "`{}` is an external program and plays over gRPC: the tournament needs a \
                     server (`maumau tournament` starts one, or give --server)",
                    e.name
                )));
            }
        }
        Ok(())
    }

    /// [`Tournament::validate`] but for the server: the rules, the seats, the format, the names.
    fn validate_plan(&self) -> Result<(), TournamentError> {
        let invalid = |m: String| Err(TournamentError::Invalid(m));
        if let Err(e) = self.config.rules() {
            return invalid(format!("the table cannot be played: {e}"));
        }
        let k = self.config.seats as usize;
        if self.entrants.len() < k {
            return invalid(format!(
                "{} entrants cannot fill a table of {k} seats; add entrants or use --seats {}",
                self.entrants.len(),
                self.entrants.len()
            ));
        }
        if self.deals == 0 {
            return invalid("deals must be at least 1".into());
        }
        let knockout = matches!(
            self.format,
            Format::SingleElimination | Format::DoubleElimination
        );
        if knockout && k != 2 {
            return invalid("elimination is played at tables of 2 seats (--seats 2)".into());
        }
        if let Format::Swiss { rounds: 0 } = self.format {
            return invalid("a Swiss tournament needs at least one round".into());
        }
        let mut names = HashSet::new();
        for e in &self.entrants {
            if e.name.is_empty() || !names.insert(e.name.as_str()) {
                return invalid(format!(
                    "entrant names must be unique and not empty: `{}`",
                    e.name
                ));
            }
        }
        Ok(())
    }

    /// True when this fixture is played on the server.
    fn over_grpc(&self, f: &Fixture) -> bool {
        self.server.as_ref().is_some_and(|s| {
            s.every_game || f.seats.iter().any(|&e| self.entrants[e].is_external())
        })
    }

    /// Runs the tournament. With `out`, every finished game is appended to `out/results.jsonl`
    /// (and its actions to `out/replays.jsonl`) as it ends, so an interrupted run resumes where it
    /// stopped; the standings are written as JSON and CSV at the end, and external programs'
    /// output to `out/logs/`.
    pub fn run(
        &self,
        out: Option<&Path>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Report, TournamentError> {
        self.run_on(&Here::default(), out, progress)
    }

    /// [`Tournament::run`] with the games played at `venue` (see [`venue`]): the schedule,
    /// the next round's pairings, the ratings and the files are computed here as `run` does,
    /// by the same code (so that results cannot depend on where the games were played).
    pub fn run_on(
        &self,
        venue: &dyn Venue,
        out: Option<&Path>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Report, TournamentError> {
        self.validate()?;
        let description = self.description();
        let mut store = match out {
            Some(dir) => Some(Store::open(dir, &description)?),
            None => None,
        };
        let uses_server = self
            .server
            .as_ref()
            .is_some_and(|s| s.every_game || self.entrants.iter().any(Entrant::is_external));
        let session = match &self.server {
            Some(remote) if uses_server => Some(net::Session::connect(
                remote,
                self.threads,
                &self.entrants,
                out.map(|d| d.join("logs")).as_deref(),
                self.sandbox.clone(),
            )?),
            _ => None,
        };
        let names: Vec<String> = self.entrants.iter().map(|e| e.name.clone()).collect();
        let started = Instant::now();
        let mut played_now = 0;
        let mut notices = Vec::new();
        let mut games: Vec<GameRecord> = Vec::new();
        // Games are rated in schedule order as soon as every earlier one is in.
        let mut tally = Tally::new(self.entrants.len(), self.seed);
        let mut round = 0u32;
        let mut met: HashSet<(usize, usize)> = HashSet::new();
        let mut knockout = match self.format {
            Format::SingleElimination => Some(Knockout::single(self.entrants.len())),
            Format::DoubleElimination => Some(Knockout::double(self.entrants.len())),
            _ => None,
        };
        let k = self.config.seats as usize;
        loop {
            let tables: Vec<Vec<usize>> = match (self.format, knockout.as_mut()) {
                (_, Some(ko)) => ko.next_round().iter().map(|(_, t)| t.to_vec()).collect(),
                (Format::RoundRobin, _) if round == 0 => {
                    schedule::combinations(self.entrants.len(), k)
                }
                // Paired by the standings' order alone: their statistics are for the end.
                (Format::Swiss { rounds }, _) if round < rounds => {
                    schedule::swiss_tables(&tally.order(&names), k, &met)
                }
                _ => Vec::new(),
            };
            if tables.is_empty() {
                break;
            }
            for t in &tables {
                for a in 0..t.len() {
                    for b in a + 1..t.len() {
                        met.insert((t[a].min(t[b]), t[a].max(t[b])));
                    }
                }
            }
            let fixtures =
                schedule::fixtures(round, &tables, self.deals, self.seed, self.duplicate);
            let total = games.len() + fixtures.len();
            let (records, now) = self.play_round(
                venue,
                round,
                &fixtures,
                store.as_mut(),
                session.as_ref(),
                Counts {
                    done: games.len(),
                    total,
                },
                &mut tally,
                &mut notices,
                progress,
            )?;
            played_now += now;
            if let Some(ko) = knockout.as_mut() {
                let per_table = fixtures.len() / tables.len();
                let winners: Vec<usize> = tables
                    .iter()
                    .zip(records.chunks(per_table))
                    .map(|(table, games)| knockout_winner(table, games))
                    .collect();
                ko.record(&winners);
            }
            games.extend(records);
            round += 1;
        }
        if let Some(session) = session {
            notices.extend(session.finish());
        }
        let (rows, pairs) = tally.standings(&names);
        let report = Report {
            description,
            games,
            standings: rows,
            pairs,
            champion: knockout
                .and_then(|ko| ko.champion())
                .map(|e| names[e].clone()),
            notices,
            played_now,
            seconds: started.elapsed().as_secs_f64(),
        };
        if let Some(store) = &mut store {
            store.finish(&report)?;
        }
        Ok(report)
    }

    /// Plays the fixtures not already stored at `venue`, this process's share in parallel;
    /// returns every record in fixture order and how many were played now.
    #[allow(clippy::too_many_arguments)]
    fn play_round(
        &self,
        venue: &dyn Venue,
        round: u32,
        fixtures: &[Fixture],
        mut store: Option<&mut Store>,
        session: Option<&net::Session>,
        counts: Counts,
        tally: &mut Tally,
        notices: &mut Vec<String>,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<(Vec<GameRecord>, usize), TournamentError> {
        let mut records: Vec<Option<GameRecord>> = fixtures
            .iter()
            .map(|f| store.as_deref().and_then(|s| s.done.get(&f.id).cloned()))
            .collect();
        let todo: Vec<usize> = (0..fixtures.len())
            .filter(|&i| records[i].is_none())
            .collect();
        let total = counts.total;
        let mut done = counts.done + fixtures.len() - todo.len();
        // Rates the games in schedule order as far as they are in.
        let mut rated = 0;
        let mut rate = |records: &[Option<GameRecord>], tally: &mut Tally| {
            while let Some(Some(g)) = records.get(rated) {
                tally.add(g);
                rated += 1;
            }
        };
        rate(&records, tally);
        progress(Progress {
            done,
            total,
            notice: None,
        });
        venue.open_round(round, fixtures, &todo)?;
        let logs = store.as_deref().map(|s| s.dir.join("logs"));
        let head = self.record_replays.then(|| ReplayHead::new(self));
        let replays = head.as_ref();
        let deals = match session {
            Some(_) => net::Deals::plan(fixtures, &todo, &records, |f| self.over_grpc(f)),
            None => net::Deals::default(),
        };
        let deals = &deals;
        let poll = venue.poll_every();
        // Set once every game is in (or one failed): the threads stop claiming.
        let stop = AtomicBool::new(todo.is_empty());
        let (tx, rx) = mpsc::channel::<Vec<Result<(usize, Played), TournamentError>>>();
        let mut result = Ok(());
        let mut missing = todo.len();
        std::thread::scope(|scope| {
            for _ in 0..self.threads.max(1).min(todo.len().max(1)) {
                let tx = tx.clone();
                let (stop, logs) = (&stop, logs.as_deref());
                scope.spawn(move || {
                    // Results go to the collecting thread in batches, so quick games do not
                    // pay a wake-up each.
                    let mut batch = Vec::new();
                    let mut since = Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        let played = match venue.claim() {
                            Ok(Claim::Play(i)) => {
                                let f = &fixtures[i];
                                let played = match session {
                                    Some(s) if self.over_grpc(f) => s.play(self, f, deals, logs),
                                    _ => Ok(self.play_in_process(f, replays)),
                                };
                                played.and_then(|p| {
                                    // A game whose claim was lost comes from its new player.
                                    Ok(venue.commit(i, &p)?.then_some((i, p)))
                                })
                            }
                            Ok(Claim::Later) => {
                                if !batch.is_empty() && tx.send(std::mem::take(&mut batch)).is_err()
                                {
                                    return;
                                }
                                std::thread::sleep(poll.unwrap_or(BATCH_TIME));
                                continue;
                            }
                            Ok(Claim::Done) => break,
                            Err(e) => Err(e),
                        };
                        let failed = played.is_err();
                        batch.extend(played.transpose());
                        if failed || batch.len() >= BATCH_GAMES || since.elapsed() >= BATCH_TIME {
                            if tx.send(std::mem::take(&mut batch)).is_err() {
                                return;
                            }
                            since = Instant::now();
                        }
                    }
                    let _ = tx.send(batch);
                });
            }
            drop(tx);
            let mut collected = Instant::now();
            loop {
                if missing == 0 || result.is_err() {
                    // Stop handing out work; the threads finish their current game.
                    stop.store(true, Ordering::Relaxed);
                }
                let mut batch = match poll {
                    None => match rx.recv() {
                        Ok(b) => b,
                        Err(_) => break,
                    },
                    Some(every) => match rx.recv_timeout(every) {
                        Ok(b) => b,
                        Err(mpsc::RecvTimeoutError::Timeout) => Vec::new(),
                        Err(mpsc::RecvTimeoutError::Disconnected) => break,
                    },
                };
                if let Some(every) = poll
                    && missing > 0
                    && result.is_ok()
                    && collected.elapsed() >= every
                {
                    let wanted: Vec<usize> = todo
                        .iter()
                        .copied()
                        .filter(|&i| records[i].is_none())
                        .collect();
                    match venue.collect(&wanted) {
                        Ok(games) => {
                            // A deal whose last game was played elsewhere: this process's
                            // matches of it may be revealed now.
                            if let Some(s) = session {
                                for (i, _) in &games {
                                    let reveal = deals.ended(&fixtures[*i], None);
                                    notices.extend(s.reveal_now(reveal));
                                }
                            }
                            batch.extend(games.into_iter().map(Ok));
                        }
                        Err(e) => batch.push(Err(e)),
                    }
                    collected = Instant::now();
                }
                for item in batch {
                    let (i, played) = match item {
                        Ok(game) => game,
                        Err(e) => {
                            result = Err(e);
                            continue;
                        }
                    };
                    if records[i].is_some() {
                        // Already in (played twice after a lost claim: the same game).
                        continue;
                    }
                    if let Some(s) = store.as_deref_mut()
                        && let Err(e) = s.append(&played.record, played.replay.as_deref())
                    {
                        result = Err(e);
                    }
                    records[i] = Some(played.record);
                    done += 1;
                    missing -= 1;
                    for n in played.notices {
                        progress(Progress {
                            done,
                            total,
                            notice: Some(n.clone()),
                        });
                        notices.push(n);
                    }
                }
                rate(&records, tally);
                progress(Progress {
                    done,
                    total,
                    notice: None,
                });
            }
        });
        rate(&records, tally);
        result?;
        if missing > 0 {
            return Err(TournamentError::Venue(format!(
                "{missing} games of round {round} were never played"
            )));
        }
        if let Some(s) = store {
            s.flush()?;
        }
        Ok((records.into_iter().flatten().collect(), todo.len()))
    }

    /// Plays one fixture in-process (every entrant must be built in), keeping its replay line
    /// when [`Tournament::record_replays`] is set: what a worker of another process does with
    /// the fixtures it claims.
    pub fn play_fixture(&self, f: &Fixture) -> Played {
        let head = self.record_replays.then(|| ReplayHead::new(self));
        self.play_in_process(f, head.as_ref())
    }

    /// Plays one fixture in-process (every entrant must be built in); with `replays`, keeps its
    /// replay line.
    pub(crate) fn play_in_process(&self, f: &Fixture, replays: Option<&ReplayHead>) -> Played {
        #[allow(
            clippy::expect_used,
            reason = "the tournament's config was checked when it was built"
        )]
        let mut game = Game::new(self.config, f.seed).expect("validated");
        // On the stack: seats past the table's are never asked.
        let mut bots: [TimedBot; MAX_SEATS] = std::array::from_fn(|s| TimedBot {
            bot: match f.seats.get(s) {
                Some(&e) => match &self.entrants[e].player {
                    Player::BuiltIn(b) => b.seat_bot(schedule::bot_seed(f.seed, s)),
                    Player::Command(_) | Player::Lobby(_) => {
                        panic!("only built-in entrants play in-process")
                    }
                },
                None => SeatBot::Random(RandomBot::new(0)),
            },
            times: Vec::new(),
        });
        let bots = &mut bots[..f.seats.len().min(MAX_SEATS)];
        let mut count = 0u32;
        let (result, replay) = match replays {
            Some(head) => {
                let mut line = ReplayLine::start(head, f);
                let result = play_match_with(&mut game, bots, |seat, action| {
                    count += 1;
                    line.push(seat, action.index());
                });
                (result, Some(line.finish()))
            }
            None => (play_match_with(&mut game, bots, |_, _| count += 1), None),
        };
        let decision_ns = if bots.iter().any(|b| !b.times.is_empty()) {
            bots.iter_mut()
                .map(|b| DecisionTimes::of(&mut b.times).to_record())
                .collect()
        } else {
            Vec::new()
        };
        let n = self.config.seats as usize;
        let (placings, totals, rounds) = match result {
            Some(r) => (r.placings[..n].to_vec(), r.totals[..n].to_vec(), r.rounds),
            None => (vec![1; n], vec![0; n], game.round()),
        };
        Played {
            record: GameRecord {
                id: f.id.clone(),
                seed: f.seed,
                seats: f.seats.clone(),
                placings,
                totals,
                rounds,
                actions: count,
                forfeits: Vec::new(),
                game: String::new(),
                match_id: String::new(),
                decision_ns,
            },
            replay,
            notices: Vec::new(),
        }
    }

    /// One line of `replays.jsonl` from (seat, dense action index) pairs (see [`ReplayLine`]).
    pub(crate) fn replay_line(
        &self,
        f: &Fixture,
        actions: impl Iterator<Item = (u8, u32)>,
    ) -> Vec<u8> {
        let head = ReplayHead::new(self);
        let mut line = ReplayLine::start(&head, f);
        for (seat, index) in actions {
            line.push(seat, index as usize);
        }
        line.finish()
    }
}

/// Plays single games of a tournament whose other games are played elsewhere: what a `maumau
/// worker` does with each game it claims of a tournament on several machines.
///
/// Built-in entrants play in-process ([`Tournament::play_fixture`]); a game with an external
/// program is played on the tournament's server ([`Tournament::server`]) as
/// [`Tournament::run`] plays it: `cmd:` programs launched for the match (in
/// [`Tournament::sandbox`] when set) with the same environment, `lobby:` programs, launched
/// once by [`FixturePlayer::start`], invited to it. With duplicate deals every such game is
/// sealed: its seats learn its seed only when [`FixturePlayer::reveal`] is told that every
/// game of its deal has ended, wherever it was played.
pub struct FixturePlayer {
    /// The connection to the server, with the lobby programs; `None` without external
    /// entrants.
    session: Option<net::Session>,
    /// This process's sealed matches, by deal.
    deals: net::Deals,
    /// Where the programs' output goes.
    logs: Option<PathBuf>,
}

impl FixturePlayer {
    /// Ready to play games of `t`: with external entrants, connected to its server, and with its
    /// `lobby:` programs launched (output to `logs`, like every program's).
    pub fn start(t: &Tournament, logs: Option<&Path>) -> Result<FixturePlayer, TournamentError> {
        t.validate()?;
        let session = match &t.server {
            Some(remote) if t.entrants.iter().any(Entrant::is_external) || remote.every_game => {
                Some(net::Session::connect(
                    remote,
                    t.threads,
                    &t.entrants,
                    logs,
                    t.sandbox.clone(),
                )?)
            }
            _ => None,
        };
        Ok(FixturePlayer {
            session,
            deals: net::Deals::elsewhere(t.duplicate),
            logs: logs.map(Path::to_path_buf),
        })
    }

    /// Plays fixture `f` of `t` (the tournament it was started with): in-process, or on the
    /// server when an entrant is an external program.
    pub fn play(&self, t: &Tournament, f: &Fixture) -> Result<Played, TournamentError> {
        match &self.session {
            Some(s) if t.over_grpc(f) => s.play(t, f, &self.deals, self.logs.as_deref()),
            _ => Ok(t.play_fixture(f)),
        }
    }

    /// The seeds of the deals whose sealed matches were played here and are not revealed yet.
    pub fn sealed_deals(&self) -> Vec<u64> {
        self.deals.sealed_seeds()
    }

    /// Reveals the matches played here of the deals of `seeds`, every game of which has ended
    /// (wherever it was played); returns a notice per match the server would not reveal.
    pub fn reveal(&self, seeds: &[u64]) -> Vec<String> {
        match &self.session {
            Some(s) => s.reveal_now(self.deals.reveal(seeds)),
            None => Vec::new(),
        }
    }

    /// Closes the lobbies and waits for their programs to exit; returns a notice per program
    /// that ended badly.
    pub fn finish(self) -> Vec<String> {
        self.session.map(net::Session::finish).unwrap_or_default()
    }
}

/// What every replay line of a tournament shares, quoted once: the rules and the entrants' names.
pub(crate) struct ReplayHead {
    /// `,"profile":…,"options":…,"seats":…,"calls":…,"seed":`
    rules: String,
    /// Each entrant's name as a JSON string.
    names: Vec<String>,
}

impl ReplayHead {
    pub(crate) fn new(t: &Tournament) -> ReplayHead {
        ReplayHead {
            rules: format!(
                ",\"profile\":{},\"options\":{},\"seats\":{},\"calls\":{},\"seed\":",
                quoted(t.config.profile.name()),
                quoted(&t.config.options.to_words()),
                t.config.seats,
                quoted(t.config.calls.name()),
            ),
            names: t.entrants.iter().map(|e| quoted(&e.name)).collect(),
        }
    }
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_default()
}

/// One line of `replays.jsonl`, written as the game is played: the game, its rules and seed, who
/// sat where, and every accepted action as `"seat action"` (`"2 play 7H mau"`). Written by hand,
/// not through a JSON tree, each action one fixed-size copy of its text from a table made once:
/// with replays on, this is most of a tournament's cost beyond the games themselves.
pub(crate) struct ReplayLine {
    line: Vec<u8>,
    texts: &'static [ActionText],
    /// Where the actions start: the `,` before the first one becomes the list's `[`.
    actions: usize,
}

impl ReplayLine {
    pub(crate) fn start(head: &ReplayHead, f: &Fixture) -> ReplayLine {
        let mut line = Vec::with_capacity(4096);
        line.extend_from_slice(b"{\"id\":");
        push_json_str(&mut line, &f.id);
        line.extend_from_slice(head.rules.as_bytes());
        push_uint(&mut line, f.seed);
        line.extend_from_slice(b",\"entrants\":[");
        for (i, &e) in f.seats.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            line.extend_from_slice(head.names.get(e).map_or("\"?\"", String::as_str).as_bytes());
        }
        line.extend_from_slice(b"],\"actions\":");
        let actions = line.len();
        ReplayLine {
            line,
            texts: action_texts(),
            actions,
        }
    }

    /// Appends an accepted action: `,"2 play 7H mau"`.
    #[inline(always)]
    pub(crate) fn push(&mut self, seat: u8, index: usize) {
        let text = self
            .texts
            .get(seat as usize * maumau_engine::ACTION_COUNT + index);
        match text {
            Some(t) if t.len as usize <= TEXT_WIDTH => {
                // Copy the whole padded entry (a fixed size, so no call), keep its length.
                let keep = self.line.len() + t.len as usize;
                self.line.extend_from_slice(&t.bytes);
                self.line.truncate(keep);
            }
            Some(_) => {
                let text = Action::from_index(index).map_or_else(String::new, |a| a.to_string());
                self.line
                    .extend_from_slice(format!(",\"{seat} {text}\"").as_bytes());
            }
            None => self
                .line
                .extend_from_slice(format!(",\"{seat} #{index}\"").as_bytes()),
        }
    }

    /// The finished line, without its newline.
    pub(crate) fn finish(mut self) -> Vec<u8> {
        if self.line.len() > self.actions {
            self.line[self.actions] = b'[';
        } else {
            self.line.push(b'[');
        }
        self.line.extend_from_slice(b"]}");
        self.line
    }
}

/// The widest action text kept in the table (`,"3 play 10H mau-mau"` is 22 bytes).
const TEXT_WIDTH: usize = 32;

/// An action's replay text, `,"2 play 7H mau"`, padded to [`TEXT_WIDTH`] bytes.
struct ActionText {
    bytes: [u8; TEXT_WIDTH],
    len: u8,
}

/// The replay text of every (seat, action) pair, at `seat * ACTION_COUNT + index` (from the
/// engine's `Display`), computed once. A text too long for the table is marked longer than
/// [`TEXT_WIDTH`] and written the slow way.
fn action_texts() -> &'static [ActionText] {
    static TEXTS: std::sync::OnceLock<Vec<ActionText>> = std::sync::OnceLock::new();
    TEXTS.get_or_init(|| {
        let seats = maumau_engine::outcome::MAX_SEATS;
        (0..seats * maumau_engine::ACTION_COUNT)
            .map(|i| {
                let (seat, index) = (
                    i / maumau_engine::ACTION_COUNT,
                    i % maumau_engine::ACTION_COUNT,
                );
                let text = Action::from_index(index).map_or_else(
                    || format!(",\"{seat} #{index}\""),
                    |a| format!(",\"{seat} {a}\""),
                );
                let mut bytes = [b' '; TEXT_WIDTH];
                let n = text.len().min(TEXT_WIDTH);
                bytes[..n].copy_from_slice(&text.as_bytes()[..n]);
                ActionText {
                    bytes,
                    len: text.len().min(u8::MAX as usize) as u8,
                }
            })
            .collect()
    })
}

/// The entrant that did better over a knockout pairing's games: more wins, then the better
/// total, then the better seed (listed first).
fn knockout_winner(table: &[usize], games: &[GameRecord]) -> usize {
    let score = |e: usize| {
        let mut wins = 0.0;
        let mut total = 0i64;
        for g in games {
            if let Some(seat) = g.seats.iter().position(|&x| x == e) {
                let firsts = g.placings.iter().filter(|&&p| p == 1).count().max(1) as f64;
                if g.placings[seat] == 1 {
                    wins += 1.0 / firsts;
                }
                total += g.totals[seat] as i64;
            }
        }
        (wins, total)
    };
    let (a, b) = (table[0], table[1]);
    let (wa, ta) = score(a);
    let (wb, tb) = score(b);
    if wa > wb || (wa == wb && ta <= tb) {
        a
    } else {
        b
    }
}

/// The output directory: the description, results and replays appended as games end.
///
/// Writes are buffered and flushed every [`FLUSH_EVERY`] and at the end of every round, the
/// replays before the results, so a stored result always has its replay. An interruption loses
/// at most the games of the last moments, which a resumed run plays again.
struct Store {
    dir: PathBuf,
    done: HashMap<String, GameRecord>,
    results: BufWriter<File>,
    replays: BufWriter<File>,
    flushed: Instant,
    /// The results line being written, reused.
    line: Vec<u8>,
}

/// Most games a worker finishes before handing them over.
const BATCH_GAMES: usize = 256;
/// Longest a worker keeps finished games before handing them over.
const BATCH_TIME: std::time::Duration = std::time::Duration::from_millis(20);

/// How often the output directory is brought up to date while games finish.
const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

impl Store {
    fn open(dir: &Path, description: &Description) -> Result<Store, TournamentError> {
        let io = |p: &Path| {
            let p = p.to_path_buf();
            move |e| TournamentError::Io(p, e)
        };
        fs::create_dir_all(dir).map_err(io(dir))?;
        let header = dir.join("tournament.json");
        match fs::read_to_string(&header) {
            Ok(text) => {
                let same =
                    serde_json::from_str::<Description>(&text).is_ok_and(|d| d == *description);
                if !same {
                    return Err(TournamentError::OtherTournament(dir.to_path_buf()));
                }
            }
            Err(_) => {
                let text = serde_json::to_string_pretty(description).unwrap_or_default();
                fs::write(&header, text).map_err(io(&header))?;
            }
        }
        let results_path = dir.join("results.jsonl");
        let mut done = HashMap::new();
        if let Ok(f) = File::open(&results_path) {
            // A line cut short by an interruption is ignored: that game is played again.
            for line in BufReader::new(f).lines().map_while(Result::ok) {
                if let Ok(r) = serde_json::from_str::<GameRecord>(&line) {
                    done.insert(r.id.clone(), r);
                }
            }
        }
        let open = |p: PathBuf| -> Result<BufWriter<File>, TournamentError> {
            let mut file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(&p)
                .map_err(io(&p))?;
            // A line cut short by an interruption is closed, so the next one starts afresh.
            let cut = fs::read(&p)
                .map_err(io(&p))?
                .last()
                .is_some_and(|&b| b != b'\n');
            if cut {
                file.write_all(b"\n").map_err(io(&p))?;
            }
            Ok(BufWriter::with_capacity(1 << 16, file))
        };
        Ok(Store {
            dir: dir.to_path_buf(),
            done,
            results: open(results_path)?,
            replays: open(dir.join("replays.jsonl"))?,
            flushed: Instant::now(),
            line: Vec::with_capacity(256),
        })
    }

    fn append(
        &mut self,
        record: &GameRecord,
        replay: Option<&[u8]>,
    ) -> Result<(), TournamentError> {
        let io = |e| TournamentError::Io(self.dir.clone(), e);
        if let Some(r) = replay {
            self.replays.write_all(r).map_err(io)?;
            self.replays.write_all(b"\n").map_err(io)?;
        }
        self.line.clear();
        push_record(&mut self.line, record);
        self.line.push(b'\n');
        self.results.write_all(&self.line).map_err(io)?;
        if self.flushed.elapsed() >= FLUSH_EVERY {
            self.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), TournamentError> {
        let io = |e| TournamentError::Io(self.dir.clone(), e);
        self.replays.flush().map_err(io)?;
        self.results.flush().map_err(io)?;
        self.flushed = Instant::now();
        Ok(())
    }

    fn finish(&mut self, report: &Report) -> Result<(), TournamentError> {
        self.flush()?;
        let io = |p: PathBuf| move |e| TournamentError::Io(p, e);
        let json = self.dir.join("standings.json");
        let body = serde_json::json!({ "standings": report.standings, "pairs": report.pairs });
        fs::write(
            &json,
            serde_json::to_string_pretty(&body).unwrap_or_default(),
        )
        .map_err(io(json))?;
        let csv = self.dir.join("standings.csv");
        let mut text = String::from(
            "rank,tied,name,games,forfeits,mu,mu_ci95,conservative,win_share,win_share_ci95,placing,placing_ci95,score,score_ci95\n",
        );
        for r in &report.standings {
            text.push_str(&format!(
                "{},{},{},{},{},{:.3},{:.3},{:.3},{:.4},{:.4},{:.3},{:.3},{:.2},{:.2}\n",
                r.rank,
                r.tied,
                csv_field(&r.name),
                r.games,
                r.forfeits,
                r.rating.mean,
                r.rating.ci95,
                r.conservative,
                r.win_share.mean,
                r.win_share.ci95,
                r.placing.mean,
                r.placing.ci95,
                r.score.mean,
                r.score.ci95
            ));
        }
        fs::write(&csv, text).map_err(io(csv))?;
        let pairs = self.dir.join("pairs.csv");
        let mut text = String::from(
            "a,b,games,blocks,a_ahead,gain,gain_low,gain_high,model,model_low,model_high,separable,score_diff\n",
        );
        for p in &report.pairs {
            text.push_str(&format!(
                "{},{},{},{},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{},{:.2}\n",
                csv_field(&p.a),
                csv_field(&p.b),
                p.games,
                p.blocks,
                p.a_ahead,
                p.gain.mean,
                p.gain.low,
                p.gain.high,
                p.model.mean,
                p.model.low,
                p.model.high,
                p.separable,
                p.score_diff
            ));
        }
        fs::write(&pairs, text).map_err(io(pairs))
    }
}

/// Appends `record` as a line of `results.jsonl` (without the newline): the bytes
/// `serde_json::to_writer` gives, written by hand, since it is done for every game.
fn push_record(line: &mut Vec<u8>, record: &GameRecord) {
    line.extend_from_slice(b"{\"id\":");
    push_json_str(line, &record.id);
    line.extend_from_slice(b",\"seed\":");
    push_uint(line, record.seed);
    line.extend_from_slice(b",\"seats\":");
    push_list(line, record.seats.iter().map(|&x| x as i64));
    line.extend_from_slice(b",\"placings\":");
    push_list(line, record.placings.iter().map(|&x| x.into()));
    line.extend_from_slice(b",\"totals\":");
    push_list(line, record.totals.iter().map(|&x| x.into()));
    line.extend_from_slice(b",\"rounds\":");
    push_uint(line, record.rounds.into());
    line.extend_from_slice(b",\"actions\":");
    push_uint(line, record.actions.into());
    if !record.forfeits.is_empty() {
        line.extend_from_slice(b",\"forfeits\":");
        push_list(line, record.forfeits.iter().map(|&x| x.into()));
    }
    if !record.game.is_empty() {
        line.extend_from_slice(b",\"game\":");
        push_json_str(line, &record.game);
    }
    if !record.match_id.is_empty() {
        line.extend_from_slice(b",\"match_id\":");
        push_json_str(line, &record.match_id);
    }
    if !record.decision_ns.is_empty() {
        line.extend_from_slice(b",\"decision_ns\":[");
        for (i, seat) in record.decision_ns.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            push_list(
                line,
                seat.iter().map(|&x| i64::try_from(x).unwrap_or(i64::MAX)),
            );
        }
        line.push(b']');
    }
    line.push(b'}');
}

/// A JSON string: as is between quotes unless it holds something JSON escapes.
fn push_json_str(line: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) {
        line.extend_from_slice(quoted(s).as_bytes());
    } else {
        line.push(b'"');
        line.extend_from_slice(s.as_bytes());
        line.push(b'"');
    }
}

fn push_list(line: &mut Vec<u8>, items: impl Iterator<Item = i64>) {
    line.push(b'[');
    for (i, x) in items.enumerate() {
        if i > 0 {
            line.push(b',');
        }
        if x < 0 {
            line.push(b'-');
        }
        push_uint(line, x.unsigned_abs());
    }
    line.push(b']');
}

fn push_uint(line: &mut Vec<u8>, n: u64) {
    line.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_lines_are_what_serde_json_writes() {
        let mut record = GameRecord {
            id: "r0-t12-d3-s1".into(),
            seed: u64::MAX,
            seats: vec![3, 0, 11, 2],
            placings: vec![2, 1, 4, 2],
            totals: vec![-40, 0, 1_000_000, i32::MIN],
            rounds: 17,
            actions: 0,
            forfeits: Vec::new(),
            game: String::new(),
            match_id: String::new(),
            decision_ns: Vec::new(),
        };
        let mut line = Vec::new();
        for (id, forfeits, game) in [
            ("r0-t12-d3-s1", vec![], ""),
            ("odd \"id\"\\\n", vec![2, 0], "g0123456789abcdef"),
        ] {
            record.id = id.into();
            record.forfeits = forfeits;
            record.game = game.into();
            record.match_id = if game.is_empty() { "" } else { "m42" }.into();
            record.decision_ns = if game.is_empty() {
                Vec::new()
            } else {
                vec![[3, 1_500, 2_000_000], [0, 0, 0]]
            };
            line.clear();
            push_record(&mut line, &record);
            let expected = serde_json::to_string(&record).unwrap();
            assert_eq!(String::from_utf8(line.clone()).unwrap(), expected);
        }
    }

    /// The total's heading says which way is better, as the engine scores each profile.
    #[test]
    fn score_headings_say_which_way_is_better() {
        let entrants = Entrant::parse_list("random,random,random,random").unwrap();
        for (profile, heading) in [
            (ProfileId::Classic, "penalty/game, lower is better"),
            (ProfileId::PenaltyPoints, "penalty/game, lower is better"),
            (ProfileId::Brazilian, "penalty/game, lower is better"),
            (ProfileId::Romanian32, "points/game, higher is better"),
        ] {
            let mut t = Tournament::new(entrants.clone(), MatchConfig::new(profile, 4));
            (t.deals, t.seed, t.record_replays) = (3, 11, false);
            let d = t.description();
            assert_eq!(d.score_heading(), heading, "{profile}");
            // The games agree: the winner has the best total in the direction the heading says.
            let report = t.run(None, &mut |_| {}).unwrap();
            for g in &report.games {
                let winner = g.totals[g.placings.iter().position(|&p| p == 1).unwrap()];
                let best = if heading.contains("lower") {
                    g.totals.iter().min()
                } else {
                    g.totals.iter().max()
                };
                assert_eq!(Some(&winner), best, "{profile}: {g:?}");
            }
        }
    }
}
