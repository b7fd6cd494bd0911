//! Games on a Mau Mau Arena server over gRPC: external programs launched per match or invited
//! through their lobby ([`crate::lobby`]), and built-in bots driven by the Rust SDK's runner.
//!
//! For each game the tournament creates a match with the game's seed and a clock whose give-up
//! policy is `GIVE_UP_POLICY_FORFEIT`, watches it with the spectator token, and seats every
//! entrant with its seat token: a built-in bot through [`maumau_bot_sdk::runner`] in this
//! process, an external program by launching its command (see [`crate::entrant`] for its
//! environment). A program that crashes, never joins, leaves or runs out of time forfeits: the
//! server plays the default action for it and places it last, the tournament notes why and
//! carries on. A program still running when its match is over is stopped after a few seconds.
//!
//! **Sealed deals.** With duplicate deals several games share one seed, and a game's seed (told
//! to its seats at its end, with every hidden card in its replay) would deal the same deal's
//! later seatings to a program that kept it. So a game whose deal is played more than once is
//! created `sealed`: the server tells its seats the report without seed and salt and keeps its
//! replay for the operator (the tournament reads it with the operator token), and [`Deals`]
//! calls RevealMatch for every game of a deal once its last game has ended, when no entrant
//! still has a game of it to play. A run that stops early reveals nothing of the deals it left
//! unfinished; the run that resumes them reveals the earlier games too (their match ids are in
//! results.jsonl). The seal holds only on a server with an operator token (without one every
//! caller is the operator): the server `maumau tournament` starts always has one, and a server
//! given with `--server` should.
//!
//! On several machines (`maumau tournament --store` and `maumau worker`) a deal's games may be
//! played on different machines, each on its own server. The coordinator counts a game
//! collected from the store as ended (without a match of its own), so its matches of a deal are
//! revealed once the whole deal is in; a worker, which sees only its own games
//! ([`crate::FixturePlayer`]), seals every game of a duplicate deal and reveals its matches of a
//! deal when the store says that every game of it is done.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use maumau::{pb, wire};
use maumau_bot_sdk::runner::{RunOptions, run};
use maumau_engine::MatchResult;
use maumau_sandbox::{Jail, Route, SERVER_SOCKET, Sandbox};
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;
use tonic::transport::{Channel, Endpoint};

use crate::entrant::{Entrant, Player};
use crate::lobby::{Lobbies, Reserved, unix_ms_after};
use crate::schedule::{Fixture, bot_seed, opaque_game_id};
use crate::{GameRecord, Played, Tournament, TournamentError};

/// How long a program may keep running once its match is over.
const EXIT_GRACE: Duration = Duration::from_secs(5);
/// Output kept per program launch (the log file gets the last this many bytes).
const OUTPUT_CAP: usize = 256 * 1024;

/// A server that plays the tournament's games with external entrants (or all of them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remote {
    /// The server: `host:port` or `http://host:port`.
    pub addr: String,
    /// The operator token, when the server asks for one to create matches.
    pub operator_token: Option<String>,
    /// The clock of every game (its give-up policy is always forfeit).
    pub clock: Clock,
    /// Play every game on the server, built-in entrants included (through the Rust SDK's runner,
    /// with the seeds they get in-process, so results are the same); otherwise only the games
    /// with an external entrant are.
    pub every_game: bool,
}

/// The clock of a tournament game on a server (see `TimeControl` in the protocol).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    /// Allowance of every decision.
    pub decision: Duration,
    /// Each seat's time bank at the start of a game.
    pub bank: Duration,
    /// Timeouts after which a seat forfeits.
    pub max_timeouts: u32,
    /// How long a seat that must act may be without a connection (crashed, or never joined)
    /// before it forfeits.
    pub disconnect_grace: Duration,
}

impl Default for Clock {
    /// 2 s per decision, a 30 s bank, forfeit after 3 timeouts or 5 s without a connection.
    fn default() -> Clock {
        Clock {
            decision: Duration::from_secs(2),
            bank: Duration::from_secs(30),
            max_timeouts: 3,
            disconnect_grace: Duration::from_secs(5),
        }
    }
}

impl Clock {
    fn to_wire(self) -> pb::TimeControl {
        let ms = |d: Duration| d.as_millis().clamp(1, u32::MAX as u128) as u32;
        pb::TimeControl {
            decision_ms: ms(self.decision),
            bank_ms: ms(self.bank),
            max_timeouts: self.max_timeouts.max(1),
            disconnect_grace_ms: ms(self.disconnect_grace),
            give_up: pb::GiveUpPolicy::Forfeit as i32,
            ..Default::default()
        }
    }
}

impl Remote {
    /// A server at `addr` with the default clock, for the games with external entrants.
    pub fn new(addr: impl Into<String>) -> Remote {
        Remote {
            addr: addr.into(),
            operator_token: None,
            clock: Clock::default(),
            every_game: false,
        }
    }

    /// The server as a URL: `http://host:port`.
    pub fn url(&self) -> String {
        let a = self.addr.trim().trim_end_matches('/');
        if a.contains("://") {
            a.to_string()
        } else {
            format!("http://{a}")
        }
    }

    /// The server as `host:port`.
    pub fn host_port(&self) -> String {
        let a = self.addr.trim().trim_end_matches('/');
        a.split_once("://").map_or(a, |(_, rest)| rest).to_string()
    }
}

/// The deals of one round's games on the server: which are sealed, and when each is revealed.
///
/// A deal is the set of games with one seed (the seatings of a duplicate deal; without
/// duplicate deals every game has a deal of its own, which needs no seal). Its games are sealed
/// when it has more than one, and all revealed once the last has ended.
///
/// A game counts as ended once, by its fixture id, whoever played it: this process (its
/// match is then revealed with the deal) or another one of a tournament on several machines
/// (collected from the store, [`Deals::ended`] without a match). A game played twice (a claim
/// lost and the game played again elsewhere) cannot end its deal early.
#[derive(Debug, Default)]
pub(crate) struct Deals {
    by_seed: Mutex<HashMap<u64, Deal>>,
    /// Sealed deals revealed already: a match of one that ends later (a game played again after
    /// its claim was lost) is revealed at once.
    revealed: Mutex<HashSet<u64>>,
    /// Set for a worker of a tournament on several machines ([`Deals::elsewhere`]), which sees
    /// only the games it plays: every game of a duplicate deal is sealed, and a deal is revealed
    /// when the store says all its games are in ([`Deals::reveal`]).
    elsewhere: bool,
}

/// One deal's games on the server.
#[derive(Debug, Default)]
struct Deal {
    /// Fixture ids of the games still to finish in this run.
    left: HashSet<String>,
    /// Games of the deal in the whole round (finished in an earlier run included).
    games: usize,
    /// Matches played for it here (this run's, and those recorded by a run that stopped early).
    matches: Vec<String>,
}

impl Deals {
    /// The deals of `fixtures` played over gRPC (`remote`): `todo` are still to play, `done` the
    /// records a stopped run left, by fixture index.
    pub(crate) fn plan(
        fixtures: &[Fixture],
        todo: &[usize],
        done: &[Option<GameRecord>],
        remote: impl Fn(&Fixture) -> bool,
    ) -> Deals {
        let mut by_seed: HashMap<u64, Deal> = HashMap::new();
        let todo: HashSet<usize> = todo.iter().copied().collect();
        for (i, f) in fixtures.iter().enumerate() {
            if !remote(f) {
                continue;
            }
            let deal = by_seed.entry(f.seed).or_default();
            deal.games += 1;
            if todo.contains(&i) {
                deal.left.insert(f.id.clone());
            } else if let Some(Some(g)) = done.get(i)
                && !g.match_id.is_empty()
            {
                deal.matches.push(g.match_id.clone());
            }
        }
        by_seed.retain(|_, d| !d.left.is_empty());
        Deals {
            by_seed: Mutex::new(by_seed),
            revealed: Mutex::default(),
            elsewhere: false,
        }
    }

    /// The deals of a worker that plays single games of a tournament whose other games are
    /// played elsewhere: with `duplicate` deals every game is sealed (its deal has a game per
    /// seating), and kept sealed until [`Deals::reveal`].
    pub(crate) fn elsewhere(duplicate: bool) -> Deals {
        Deals {
            by_seed: Mutex::default(),
            revealed: Mutex::default(),
            elsewhere: duplicate,
        }
    }

    /// Whether a game of this seed is created sealed: its deal has other games.
    fn sealed(&self, seed: u64) -> bool {
        self.elsewhere || lock(&self.by_seed).get(&seed).is_some_and(|d| d.games > 1)
    }

    /// The game `f` has ended, here as `match_id` or elsewhere (`None`); returns the deal's
    /// matches to reveal when it was the deal's last (empty otherwise, or when the deal was
    /// never sealed). A game that ended before (played twice) changes nothing.
    pub(crate) fn ended(&self, f: &Fixture, match_id: Option<&str>) -> Vec<String> {
        let mut by_seed = lock(&self.by_seed);
        if self.elsewhere {
            // Revealed when the store says the deal is over.
            if let Some(id) = match_id {
                let deal = by_seed.entry(f.seed).or_default();
                deal.matches.push(id.to_string());
            }
            return Vec::new();
        }
        let Some(deal) = by_seed.get_mut(&f.seed) else {
            // Its deal was revealed already (this game ended elsewhere first): so is this match.
            return match match_id {
                Some(id) if lock(&self.revealed).contains(&f.seed) => vec![id.to_string()],
                _ => Vec::new(),
            };
        };
        deal.matches.extend(match_id.map(str::to_string));
        if !deal.left.remove(&f.id) || !deal.left.is_empty() {
            return Vec::new();
        }
        let sealed = deal.games > 1;
        let deal = by_seed.remove(&f.seed).unwrap_or_default();
        if sealed {
            lock(&self.revealed).insert(f.seed);
            deal.matches
        } else {
            Vec::new()
        }
    }

    /// The seeds of the deals with sealed matches here that are not revealed yet (a worker's).
    pub(crate) fn sealed_seeds(&self) -> Vec<u64> {
        lock(&self.by_seed).keys().copied().collect()
    }

    /// The matches of the deals of `seeds` (all their games have ended, wherever they were
    /// played), to reveal now; forgets them.
    pub(crate) fn reveal(&self, seeds: &[u64]) -> Vec<String> {
        let mut by_seed = lock(&self.by_seed);
        seeds
            .iter()
            .filter_map(|s| by_seed.remove(s))
            .flat_map(|d| d.matches)
            .collect()
    }
}

/// The lock of a map that a panicking thread cannot leave unusable.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A connection to the server and the runtime that drives it, for one tournament run.
pub(crate) struct Session {
    runtime: tokio::runtime::Runtime,
    channel: Channel,
    remote: Remote,
    /// The lobbies of the lobby entrants, while the tournament runs.
    lobbies: Option<Lobbies>,
    /// The sandbox every external program runs in, with `--sandbox`.
    sandbox: Option<Arc<Sandbox>>,
}

/// How a program is launched: in a sandbox (with its ways out) or not.
pub(crate) struct Confinement {
    /// The sandbox.
    pub(crate) sandbox: Arc<Sandbox>,
    /// Its sockets and the TCP addresses they are forwarded to.
    pub(crate) routes: Vec<Route>,
}

impl Session {
    /// Connects to the server and launches the lobby entrants' programs (output to `logs`).
    pub(crate) fn connect(
        remote: &Remote,
        threads: usize,
        entrants: &[Entrant],
        logs: Option<&Path>,
        sandbox: Option<Arc<Sandbox>>,
    ) -> Result<Session, TournamentError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(2))
            .enable_all()
            .build()
            .map_err(|e| TournamentError::Server(format!("cannot start a runtime: {e}")))?;
        let url = remote.url();
        let endpoint = Endpoint::from_shared(url.clone())
            .map_err(|_| {
                TournamentError::Invalid(format!(
                    "`{}` is not a server address (host:port or http://host:port)",
                    remote.addr
                ))
            })?
            .tcp_nodelay(true);
        let channel = runtime.block_on(endpoint.connect()).map_err(|e| {
            TournamentError::Server(format!("cannot reach the server at {url}: {e}"))
        })?;
        let lobbies = if entrants
            .iter()
            .any(|e| matches!(e.player, Player::Lobby(_)))
        {
            let lobbies = runtime
                .block_on(Lobbies::start(entrants, logs, remote, sandbox.clone()))
                .map_err(|e| TournamentError::Server(format!("cannot open the lobbies: {e}")))?;
            Some(lobbies)
        } else {
            None
        };
        Ok(Session {
            runtime,
            channel,
            remote: remote.clone(),
            lobbies,
            sandbox,
        })
    }

    /// Closes the lobbies and waits for their programs to exit; returns a notice per program
    /// that ended badly.
    pub(crate) fn finish(mut self) -> Vec<String> {
        match self.lobbies.take() {
            Some(lobbies) => self.runtime.block_on(lobbies.close()),
            None => Vec::new(),
        }
    }

    /// Plays one game on the server (sealed when its deal has other games, see [`Deals`]).
    pub(crate) fn play(
        &self,
        t: &Tournament,
        f: &Fixture,
        deals: &Deals,
        logs: Option<&Path>,
    ) -> Result<Played, TournamentError> {
        self.runtime.block_on(self.play_async(t, f, deals, logs))
    }

    /// `message` as an operator call: with the operator token when the server has one.
    fn operator<T>(&self, message: T) -> Result<tonic::Request<T>, TournamentError> {
        let mut request = tonic::Request::new(message);
        if let Some(token) = &self.remote.operator_token {
            let value = format!("Bearer {token}").parse().map_err(|_| {
                TournamentError::Invalid(
                    "the operator token has characters a header cannot carry".into(),
                )
            })?;
            request.metadata_mut().insert("authorization", value);
        }
        Ok(request)
    }

    /// [`Session::reveal`] from outside the session's runtime.
    pub(crate) fn reveal_now(&self, ids: Vec<String>) -> Vec<String> {
        if ids.is_empty() {
            return Vec::new();
        }
        self.runtime.block_on(self.reveal(ids))
    }

    /// Reveals the sealed matches of a deal whose games have all ended; returns a notice per
    /// match the server would not reveal (one a stopped run's server no longer has is skipped).
    async fn reveal(&self, ids: Vec<String>) -> Vec<String> {
        let mut matches = pb::match_service_client::MatchServiceClient::new(self.channel.clone());
        let mut notices = Vec::new();
        for match_id in ids {
            let request = match self.operator(pb::RevealMatchRequest {
                match_id: match_id.clone(),
            }) {
                Ok(r) => r,
                Err(e) => {
                    notices.push(format!("match {match_id} stays sealed: {e}"));
                    continue;
                }
            };
            match matches.reveal_match(request).await {
                Ok(_) => {}
                Err(s) if wire::reason_of(&s) == pb::ErrorReason::MatchNotFound => {}
                Err(s) => notices.push(format!(
                    "match {match_id} stays sealed: {} ({})",
                    s.message(),
                    wire::reason_of(&s).as_str_name()
                )),
            }
        }
        notices
    }

    /// Plays one game: room in its lobby entrants' lobbies, its match created and watched, every
    /// seat taken, the match followed to its end, and the game collected.
    async fn play_async(
        &self,
        t: &Tournament,
        f: &Fixture,
        deals: &Deals,
        logs: Option<&Path>,
    ) -> Result<Played, TournamentError> {
        // Before the match exists, so that its clock does not run while they wait.
        let mut reserved = self.reserve_lobbies(t, f).await;
        // What the seats can read (the match's label, MAUMAU_GAME) names the game by an opaque
        // id: the fixture id would tell a program where its game sits in the schedule, and with
        // a known tournament seed, its deal. Only results.jsonl maps the two.
        let game = opaque_game_id();
        let created = self.create_match(t, f, deals, &game).await?;
        let g = OnServer {
            t,
            f,
            game,
            created,
        };
        let mut watch = self.watch(&g).await?;
        let (over, over_rx) = tokio::sync::watch::channel(false);
        let Seated { tasks, invited } = self.take_seats(&g, &mut reserved, logs, &over_rx);
        let report = follow(&mut watch)
            .await
            .map_err(|s| server_error(f, "follow its match", s))?;
        let _ = over.send(true);
        let failures = seat_failures(tasks, t.config.seats as usize).await;
        self.collect(&g, report, &failures, invited, deals).await
    }

    /// Room in the lobbies of the fixture's lobby entrants, by entrant (`Err` says why there is
    /// none), taken in entrant order so that no two games wait for each other.
    async fn reserve_lobbies(
        &self,
        t: &Tournament,
        f: &Fixture,
    ) -> HashMap<usize, Result<Reserved, String>> {
        let mut reserved = HashMap::new();
        if let Some(lobbies) = &self.lobbies {
            let mut at_table: Vec<usize> = f
                .seats
                .iter()
                .copied()
                .filter(|&e| matches!(t.entrants[e].player, Player::Lobby(_)))
                .collect();
            at_table.sort_unstable();
            at_table.dedup();
            for e in at_table {
                reserved.insert(e, lobbies.reserve(e).await);
            }
        }
        reserved
    }

    /// Creates the game's match with the game's seed and the tournament's clock, labelled with
    /// `game` (its opaque id), and sealed when its deal has other games.
    async fn create_match(
        &self,
        t: &Tournament,
        f: &Fixture,
        deals: &Deals,
        game: &str,
    ) -> Result<pb::CreateMatchResponse, TournamentError> {
        let mut matches = pb::match_service_client::MatchServiceClient::new(self.channel.clone());
        let request = self.operator(pb::CreateMatchRequest {
            config: Some((&t.config).into()),
            seed: Some(f.seed),
            time_control: Some(self.remote.clock.to_wire()),
            label: format!("tournament game {game}"),
            sealed: deals.sealed(f.seed),
            ..Default::default()
        })?;
        Ok(matches
            .create_match(request)
            .await
            .map_err(|s| server_error(f, "create a match", s))?
            .into_inner())
    }

    /// Watches the game's match with its spectator token.
    async fn watch(
        &self,
        g: &OnServer<'_>,
    ) -> Result<tonic::Streaming<pb::WatchResponse>, TournamentError> {
        let mut play = pb::play_service_client::PlayServiceClient::new(self.channel.clone());
        Ok(play
            .watch(pb::WatchRequest {
                token: g.created.spectator_token.clone(),
                client_name: "maumau-tournament".into(),
                resume: None,
                ..Default::default()
            })
            .await
            .map_err(|s| server_error(g.f, "watch its match", s))?
            .into_inner())
    }

    /// Takes every seat of the match: a built-in bot runs in this process, an external program is
    /// launched, a lobby entrant is invited with the room `reserved` for it. Each seat's task
    /// ends, once the match is `over`, with what went wrong for it; a seat whose player is gone
    /// before that (a program that exited, a lobby program that failed, a built-in bot that
    /// stopped) is resigned at once, so the match does not wait for its clock.
    fn take_seats(
        &self,
        g: &OnServer<'_>,
        reserved: &mut HashMap<usize, Result<Reserved, String>>,
        logs: Option<&Path>,
        over: &tokio::sync::watch::Receiver<bool>,
    ) -> Seated {
        let mut seated = Seated::default();
        for st in &g.created.seat_tokens {
            let s = st.seat as usize;
            let entrant = &g.t.entrants[g.f.seats[s]];
            // What plays the seat, ending with what went wrong; and whether its ending before
            // the match's means the seat is gone even when nothing went wrong (a program launched
            // for this match cannot come back; a built-in bot returns only at the match's end).
            let (player, gone_when_ended): (SeatPlayer, bool) = match &entrant.player {
                Player::BuiltIn(b) => {
                    let mut bot = b.bot(bot_seed(g.f.seed, s));
                    let mut options = RunOptions::new(self.remote.url(), st.token.clone());
                    options.name = entrant.name.clone();
                    let play = async move {
                        run(bot.as_mut(), &options)
                            .await
                            .err()
                            .map(|e| format!("its built-in bot stopped: {e}"))
                    };
                    (Box::pin(play), false)
                }
                Player::Command(command) => {
                    let log = logs.map(|d| d.join(format!("{}-s{s}.log", g.f.id)));
                    let env = self.program_env(g, st, &entrant.name);
                    let play = launch(
                        command.clone(),
                        env,
                        log,
                        over.clone(),
                        EXIT_GRACE,
                        "the match",
                        self.confinement(),
                    );
                    (Box::pin(play), true)
                }
                Player::Lobby(_) => match reserved.remove(&g.f.seats[s]) {
                    Some(Ok(r)) => {
                        let reserved = Arc::new(r);
                        seated.invited.push((s, reserved.clone()));
                        (self.invite(g, st, reserved, over.clone()), false)
                    }
                    Some(Err(why)) => (Box::pin(async move { Some(why) }), true),
                    None => unreachable!("every lobby entrant of the fixture was reserved"),
                },
            };
            let seat = resign_when_gone(
                self.channel.clone(),
                st.token.clone(),
                over.clone(),
                player,
                gone_when_ended,
            );
            seated.tasks.push((s, tokio::spawn(seat)));
        }
        seated
    }

    /// How an external program is launched: in the sandbox, when there is one, where the server
    /// is its socket, forwarded to the server's port.
    fn confinement(&self) -> Option<Confinement> {
        self.sandbox.as_ref().map(|sandbox| Confinement {
            sandbox: sandbox.clone(),
            routes: vec![Route::new(SERVER_SOCKET, &self.remote.host_port())],
        })
    }

    /// The environment of an external program launched for seat `st` (see [`crate::entrant`]).
    fn program_env(
        &self,
        g: &OnServer<'_>,
        st: &pb::SeatToken,
        entrant: &str,
    ) -> Vec<(&'static str, String)> {
        let s = st.seat as usize;
        let (addr, url) = match &self.sandbox {
            Some(_) => (Jail::addr(SERVER_SOCKET), Jail::addr(SERVER_SOCKET)),
            None => (self.remote.host_port(), self.remote.url()),
        };
        vec![
            ("MAUMAU_ADDR", addr),
            ("MAUMAU_URL", url),
            ("MAUMAU_TOKEN", st.token.clone()),
            ("MAUMAU_SEED", bot_seed(g.f.seed, s).to_string()),
            ("MAUMAU_SEAT", s.to_string()),
            ("MAUMAU_MATCH_ID", g.created.match_id.clone()),
            ("MAUMAU_GAME", g.game.clone()),
            ("MAUMAU_ENTRANT", entrant.to_string()),
        ]
    }

    /// Invites a lobby entrant to seat `st` in its `reserved` room; ends, once the match is
    /// `over`, with what went wrong for it, or before, when its program failed.
    fn invite(
        &self,
        g: &OnServer<'_>,
        st: &pb::SeatToken,
        reserved: Arc<Reserved>,
        mut over: tokio::sync::watch::Receiver<bool>,
    ) -> SeatPlayer {
        let invitation = pb::Invitation {
            ladder_match_id: lobby_match_id(&g.game),
            match_id: g.created.match_id.clone(),
            seat: st.seat,
            seat_token: st.token.clone(),
            // A sandboxed lobby program reaches the server through its socket.
            node_address: match self.sandbox {
                Some(_) => Jail::addr(SERVER_SOCKET),
                None => self.remote.url(),
            },
            join_deadline_unix_ms: unix_ms_after(self.remote.clock.disconnect_grace),
            profile: g.t.config.profile.name().to_string(),
            seats: g.t.config.seats as u32,
            rated: true,
            validation: false,
        };
        Box::pin(async move {
            if let Err(why) = reserved.invite(invitation).await {
                return Some(why);
            }
            tokio::select! {
                _ = over.wait_for(|&done| done) => reserved.failure(),
                why = reserved.failed() => Some(why),
            }
        })
    }

    /// The game once its match is over (`report`, `None` when the server closed it first):
    /// its result, told to the `invited` lobby entrants; a notice per seat that forfeited or
    /// failed (`failures`); its replay; and, when it was its deal's last game, the deal revealed.
    async fn collect(
        &self,
        g: &OnServer<'_>,
        report: Option<pb::MatchReport>,
        failures: &[Option<String>],
        invited: Vec<(usize, Arc<Reserved>)>,
        deals: &Deals,
    ) -> Result<Played, TournamentError> {
        let (f, match_id) = (g.f, &g.created.match_id);
        let report = report.ok_or_else(|| {
            TournamentError::Server(format!(
                "game {}: the server closed match {match_id} before its end",
                f.id
            ))
        })?;
        if report.status() != pb::MatchStatus::Finished {
            return Err(TournamentError::Server(format!(
                "game {}: match {match_id} was aborted on the server",
                f.id
            )));
        }
        let result = report
            .result
            .as_ref()
            .and_then(|r| MatchResult::try_from(r).ok())
            .ok_or_else(|| {
                TournamentError::Server(format!(
                    "game {}: match {match_id} has no readable result",
                    f.id
                ))
            })?;
        for (s, lobby) in invited {
            lobby.ended(pb::LadderMatchEnded {
                ladder_match_id: lobby_match_id(&g.game),
                match_id: match_id.clone(),
                finished: true,
                rated: true,
                placing: result.placings[s] as u32,
                rating: None,
                reason: String::new(),
                seat: s as u32,
                validation: false,
                profile: g.t.config.profile.name().to_string(),
            });
        }
        let forfeits: Vec<u8> = report
            .seats
            .iter()
            .filter(|st| st.forfeited)
            .map(|st| st.seat as u8)
            .collect();
        let mut notices = self.seat_notices(g, &report, failures, &forfeits);
        let replay = if g.t.record_replays {
            Some(self.replay(g).await?)
        } else {
            None
        };
        // The deal's last game: no entrant has a game of it left, so its seeds may be told.
        let reveal = deals.ended(f, Some(match_id));
        notices.extend(self.reveal(reveal).await);
        Ok(Played {
            record: g.record(&report, &result, forfeits),
            replay,
            notices,
        })
    }

    /// A notice per seat that forfeited (and why) or whose program or bot failed.
    fn seat_notices(
        &self,
        g: &OnServer<'_>,
        report: &pb::MatchReport,
        failures: &[Option<String>],
        forfeits: &[u8],
    ) -> Vec<String> {
        let mut notices = Vec::new();
        for (s, failure) in failures.iter().enumerate() {
            let name = &g.t.entrants[g.f.seats[s]].name;
            let stats = report.seats.iter().find(|st| st.seat as usize == s);
            if forfeits.contains(&(s as u8)) {
                let why = match (failure, stats) {
                    (Some(why), _) => why.clone(),
                    (None, Some(st)) if st.timeouts >= self.remote.clock.max_timeouts => {
                        format!("it ran out of time {} times", st.timeouts)
                    }
                    (None, Some(st)) if st.resigned => {
                        "its program gave the seat up (it resigned)".into()
                    }
                    _ => "it was not connected when it had to act".into(),
                };
                notices.push(format!(
                    "game {}: {name} (seat {s}) forfeited, placed last: {why}",
                    g.f.id
                ));
            } else if let Some(why) = failure {
                notices.push(format!("game {}: {name} (seat {s}): {why}", g.f.id));
            }
        }
        notices
    }

    /// The game's replay line, from the match's replay on the server (a sealed match's replay is
    /// the operator's until the deal is revealed).
    async fn replay(&self, g: &OnServer<'_>) -> Result<Vec<u8>, TournamentError> {
        let mut matches = pb::match_service_client::MatchServiceClient::new(self.channel.clone());
        let replay = matches
            .get_replay(self.operator(pb::GetReplayRequest {
                match_id: g.created.match_id.clone(),
            })?)
            .await
            .map_err(|s| server_error(g.f, "fetch its replay", s))?
            .into_inner()
            .replay
            .unwrap_or_default();
        Ok(g.t.replay_line(g.f, replay.actions.iter().map(|a| (a.seat as u8, a.index))))
    }
}

/// One game on the server while it is played: what it is, and the match made for it.
struct OnServer<'a> {
    t: &'a Tournament,
    f: &'a Fixture,
    /// The game's opaque id, all its seats can read of it (see [`opaque_game_id`]).
    game: String,
    /// The match: its id, the spectator's token and the seats'.
    created: pb::CreateMatchResponse,
}

impl OnServer<'_> {
    /// The game's record from its match's `report` and `result`.
    fn record(
        &self,
        report: &pb::MatchReport,
        result: &MatchResult,
        forfeits: Vec<u8>,
    ) -> GameRecord {
        let (f, n) = (self.f, self.t.config.seats as usize);
        GameRecord {
            id: f.id.clone(),
            seed: f.seed,
            seats: f.seats.clone(),
            placings: result.placings[..n].to_vec(),
            totals: result.totals[..n].to_vec(),
            rounds: result.rounds,
            actions: report.actions,
            forfeits,
            game: self.game.clone(),
            match_id: self.created.match_id.clone(),
            // The server's figures, in whole milliseconds.
            decision_ns: (0..n)
                .map(|s| {
                    report
                        .seats
                        .iter()
                        .find(|st| st.seat as usize == s)
                        .map_or([0; 3], |st| {
                            let ns = |ms: u32| u64::from(ms) * 1_000_000;
                            [
                                u64::from(st.decisions),
                                ns(st.decision_ms_p50),
                                ns(st.decision_ms_max),
                            ]
                        })
                })
                .collect(),
        }
    }
}

/// The seats of a match taken: a task per seat, and the lobby entrants invited.
#[derive(Default)]
struct Seated {
    /// By seat: a task that ends, once the match is over, with what went wrong, if anything.
    tasks: Vec<(usize, JoinHandle<Option<String>>)>,
    /// The lobby entrants' seats and their rooms, told the result when the match has ended.
    invited: Vec<(usize, Arc<Reserved>)>,
}

/// What plays one seat of a game, ending with what went wrong for it, if anything.
type SeatPlayer = std::pin::Pin<Box<dyn Future<Output = Option<String>> + Send>>;

/// Runs a seat's `player`; if it ends before the match is `over` with something wrong (or at
/// all, when `gone_when_ended`), resigns the seat with its `token` (`PlayService.Resign`), so the
/// others need not wait for the seat's clock. Best effort: a refused call leaves the seat to its
/// clock, as before.
async fn resign_when_gone(
    channel: Channel,
    token: String,
    over: tokio::sync::watch::Receiver<bool>,
    player: SeatPlayer,
    gone_when_ended: bool,
) -> Option<String> {
    let why = player.await;
    if !*over.borrow() && (why.is_some() || gone_when_ended) {
        let mut play = pb::play_service_client::PlayServiceClient::new(channel);
        let request = pb::ResignRequest { token };
        let _ = play.resign(request).await;
    }
    why
}

/// What went wrong for each of `seats` seats, once their tasks have ended.
async fn seat_failures(
    tasks: Vec<(usize, JoinHandle<Option<String>>)>,
    seats: usize,
) -> Vec<Option<String>> {
    let mut failures = vec![None; seats];
    for (s, handle) in tasks {
        failures[s] = handle
            .await
            .unwrap_or_else(|e| Some(format!("its task failed: {e}")));
    }
    failures
}

/// Follows a watched match to its end: its report, `None` when the stream closed before it.
async fn follow(
    watch: &mut tonic::Streaming<pb::WatchResponse>,
) -> Result<Option<pb::MatchReport>, tonic::Status> {
    loop {
        match watch.message().await? {
            Some(m) => {
                if let Some(pb::server_message::Kind::Finished(done)) =
                    m.message.and_then(|m| m.kind)
                {
                    return Ok(done.report);
                }
            }
            None => return Ok(None),
        }
    }
}

/// A server's refusal of a call for game `f`: "game ID: cannot WHAT: MESSAGE (REASON)".
fn server_error(f: &Fixture, what: &str, s: tonic::Status) -> TournamentError {
    TournamentError::Server(format!(
        "game {}: cannot {what}: {} ({})",
        f.id,
        s.message(),
        wire::reason_of(&s).as_str_name()
    ))
}

/// The match id a lobby's messages carry for a game: its opaque id's number.
fn lobby_match_id(game: &str) -> i64 {
    u64::from_str_radix(game.trim_start_matches('g'), 16).map_or(0, |n| (n >> 1) as i64)
}

/// Runs a program until it exits, or until `grace` after `over` (the end of `what`: its match,
/// or the tournament for a lobby entrant); returns what went wrong, if anything, with the
/// sandbox's limits it hit named. Its output goes to `log`. With `confined` it runs in a jail of
/// the sandbox with only `env` in its environment (whose addresses must be the jail's sockets).
pub(crate) async fn launch(
    command: String,
    env: Vec<(&'static str, String)>,
    log: Option<PathBuf>,
    mut over: tokio::sync::watch::Receiver<bool>,
    grace: Duration,
    what: &'static str,
    confined: Option<Confinement>,
) -> Option<String> {
    let (mut cmd, jail) = match confined {
        Some(c) => {
            let argv = ["sh".to_string(), "-c".into(), command];
            let jail = match c.sandbox.jail(&c.routes, &argv) {
                Ok(j) => j,
                Err(e) => return Some(format!("its sandbox could not be made: {e}")),
            };
            (jail.command(&argv, &env), Some(jail))
        }
        None => {
            let mut cmd = shell(&command);
            // The arena's own settings stay its own: a variable the program inherits may hold
            // the operator token (MAUMAU_OPERATOR_TOKEN), a store's URL and password
            // (MAUMAU_STORE, PG*), none of which a program may read.
            for (key, _) in std::env::vars_os() {
                if arena_only(&key.to_string_lossy()) {
                    cmd.env_remove(key);
                }
            }
            cmd.envs(env);
            (cmd, None)
        }
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    {
        cmd.process_group(0);
        // Killed with this process, even by SIGKILL (see `crate::guard`).
        crate::guard::guard(&mut cmd);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Some(format!("its program could not be started: {e}")),
    };
    let pid = child.id();
    if let Some(pid) = pid {
        live().push(pid);
    }
    let output = Arc::new(Mutex::new(Vec::new()));
    let readers = [
        child
            .stdout
            .take()
            .map(|o| tokio::spawn(collect(o, output.clone()))),
        child
            .stderr
            .take()
            .map(|o| tokio::spawn(collect(o, output.clone()))),
    ];
    let status = tokio::select! {
        s = child.wait() => s.ok(),
        () = async {
            let _ = over.wait_for(|&done| done).await;
            tokio::time::sleep(grace).await;
        } => None,
    };
    if status.is_none() {
        if let Some(pid) = pid {
            kill_group(pid);
        }
        let _ = child.kill().await;
    }
    if let Some(pid) = pid {
        live().retain(|&p| p != pid);
    }
    for r in readers.into_iter().flatten() {
        let _ = tokio::time::timeout(Duration::from_secs(2), r).await;
    }
    let text = {
        let out = output.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&out).into_owned()
    };
    let mut where_ = String::new();
    if let Some(path) = &log {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if std::fs::write(path, &text).is_ok() {
            where_ = format!(" (output in {})", path.display());
        }
    }
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .map(|l| {
            let l = l.trim();
            let cut: String = l.chars().take(200).collect();
            format!("; it last said: {cut}")
        })
        .unwrap_or_default();
    let limits = jail.as_ref().map(|j| j.verdict(status)).unwrap_or_default();
    let limits = if limits.is_empty() {
        String::new()
    } else {
        format!(" [sandbox: {}]", limits.join("; "))
    };
    match status {
        None => Some(format!(
            "its program was still running {} s after {what} and was stopped{limits}{where_}",
            grace.as_secs()
        )),
        Some(s) if !s.success() => {
            Some(format!("its program exited with {s}{limits}{last}{where_}"))
        }
        Some(_) if !limits.is_empty() => Some(format!("its program ended{limits}{where_}")),
        Some(_) => None,
    }
}

/// Whether an inherited environment variable is the arena's alone, never passed to a program
/// launched without the sandbox (a sandboxed one gets only its own variables): the `MAUMAU_*`
/// settings of the command (operator tokens, `MAUMAU_STORE`, ...; the program's own are set
/// afresh) but `MAUMAU_BWRAP` (a program may sandbox its own children), and a database's
/// (`PG*`, `DATABASE_URL`).
fn arena_only(name: &str) -> bool {
    (name.starts_with("MAUMAU_") && name != maumau_sandbox::BWRAP_VAR)
        || name.starts_with("PG")
        || name == "DATABASE_URL"
}

/// Process groups of the programs running now.
fn live() -> std::sync::MutexGuard<'static, Vec<u32>> {
    static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Stops every external program a tournament of this process is running, with whatever it
/// started: for an interrupted tournament (Ctrl-C), whose programs run in process groups of
/// their own and so do not get the terminal's interrupt.
pub fn stop_programs() {
    let pids: Vec<u32> = std::mem::take(&mut *live());
    for pid in pids {
        kill_group(pid);
    }
}

fn shell(command: &str) -> tokio::process::Command {
    #[cfg(unix)]
    {
        let mut c = tokio::process::Command::new("sh");
        c.arg("-c").arg(command);
        c
    }
    #[cfg(not(unix))]
    {
        let mut c = tokio::process::Command::new("cmd");
        c.arg("/C").arg(command);
        c
    }
}

/// Stops what the program started too (`sh -c` leaves its children in its process group).
fn kill_group(pid: u32) {
    #[cfg(unix)]
    {
        let _ = std::process::Command::new("kill")
            .args(["-s", "KILL", "--", &format!("-{pid}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Appends a stream to a shared buffer, keeping at most [`OUTPUT_CAP`] bytes (the last ones).
async fn collect(mut from: impl AsyncRead + Unpin, into: Arc<Mutex<Vec<u8>>>) {
    let mut buf = [0u8; 8192];
    while let Ok(n) = from.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let mut out = into.lock().unwrap_or_else(|e| e.into_inner());
        out.extend_from_slice(&buf[..n]);
        if out.len() > OUTPUT_CAP {
            let cut = out.len() - OUTPUT_CAP / 2;
            out.drain(..cut);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(f: &Fixture, match_id: &str) -> GameRecord {
        GameRecord {
            id: f.id.clone(),
            seed: f.seed,
            seats: f.seats.clone(),
            placings: vec![1, 2],
            totals: vec![0, 0],
            rounds: 1,
            actions: 1,
            forfeits: Vec::new(),
            game: "g".into(),
            match_id: match_id.into(),
            decision_ns: Vec::new(),
        }
    }

    /// A duplicate deal's games are sealed and all revealed with its last, including a game a
    /// stopped run recorded; a deal not finished reveals nothing; a deal of one game (no
    /// duplicates) is never sealed; games in-process do not count.
    #[test]
    fn a_deal_is_revealed_when_its_last_game_has_ended() {
        let tables = [vec![0, 1], vec![0, 2]];
        let fixtures = crate::schedule::fixtures(0, &tables, 2, 7, true);
        assert_eq!(fixtures.len(), 8);
        // Table 1 (entrants 0 and 2) plays in-process; the first game was played by a run that
        // stopped.
        let remote = |f: &Fixture| !f.seats.contains(&2);
        let mut done = vec![None; fixtures.len()];
        done[0] = Some(record(&fixtures[0], "m-earlier"));
        let todo: Vec<usize> = (1..fixtures.len()).collect();
        let deals = Deals::plan(&fixtures, &todo, &done, remote);
        let (first, second) = (&fixtures[1], &fixtures[2]);
        assert_eq!(first.seed, fixtures[0].seed, "seatings of one deal");
        assert!(deals.sealed(first.seed) && deals.sealed(second.seed));
        assert_eq!(deals.ended(first, Some("m-1")), vec!["m-earlier", "m-1"]);
        // The second deal: nothing until both seatings have ended.
        assert!(deals.ended(second, Some("m-2")).is_empty());
        assert_eq!(
            deals.ended(&fixtures[3], Some("m-3")),
            vec!["m-2".to_string(), "m-3".to_string()]
        );
        // In-process games are none of the deals' business.
        assert!(!deals.sealed(fixtures[4].seed));
        assert!(deals.ended(&fixtures[4], Some("m-4")).is_empty());

        let single = crate::schedule::fixtures(0, &tables[..1], 2, 7, false);
        let todo: Vec<usize> = (0..single.len()).collect();
        let deals = Deals::plan(&single, &todo, &vec![None; single.len()], |_| true);
        for (i, f) in single.iter().enumerate() {
            assert!(!deals.sealed(f.seed));
            assert!(deals.ended(f, Some(&format!("m-{i}"))).is_empty());
        }
    }

    /// On several machines: a game played here and collected again from the machine that kept
    /// it (its claim lost) ends its deal once, so the deal's matches wait for its other game; a
    /// game collected from elsewhere ends the deal and reveals this process's matches only; a
    /// match of a deal revealed already is revealed at once.
    #[test]
    fn a_game_played_twice_does_not_reveal_its_deal_early() {
        let fixtures = crate::schedule::fixtures(0, &[vec![0, 1]], 2, 7, true);
        let todo: Vec<usize> = (0..fixtures.len()).collect();
        let deals = Deals::plan(&fixtures, &todo, &vec![None; 4], |_| true);
        assert!(deals.ended(&fixtures[0], Some("m-here")).is_empty());
        assert!(deals.ended(&fixtures[0], None).is_empty(), "collected too");
        assert_eq!(deals.ended(&fixtures[1], None), vec!["m-here"]);
        // The second deal: collected before this process's own result of the same game.
        assert!(deals.ended(&fixtures[2], None).is_empty());
        assert!(deals.ended(&fixtures[2], Some("m-late")).is_empty());
        assert_eq!(deals.ended(&fixtures[3], None), vec!["m-late"]);
        assert_eq!(deals.ended(&fixtures[3], Some("m-later")), vec!["m-later"]);
    }

    /// A worker seals every game of a duplicate deal and reveals a deal's matches only when
    /// told that all its games are in; without duplicate deals nothing is sealed.
    #[test]
    fn a_worker_keeps_its_matches_sealed_until_the_deal_is_over() {
        let fixtures = crate::schedule::fixtures(0, &[vec![0, 1]], 2, 7, true);
        let deals = Deals::elsewhere(true);
        assert!(deals.sealed(fixtures[0].seed));
        assert!(deals.ended(&fixtures[0], Some("m-0")).is_empty());
        assert!(deals.ended(&fixtures[1], Some("m-1")).is_empty());
        assert!(deals.ended(&fixtures[2], Some("m-2")).is_empty());
        let mut seeds = deals.sealed_seeds();
        seeds.sort_unstable();
        let mut expected = vec![fixtures[0].seed, fixtures[2].seed];
        expected.sort_unstable();
        assert_eq!(seeds, expected);
        assert_eq!(deals.reveal(&[fixtures[0].seed]), vec!["m-0", "m-1"]);
        assert_eq!(deals.sealed_seeds(), vec![fixtures[2].seed]);
        assert!(!Deals::elsewhere(false).sealed(fixtures[0].seed));
    }
}
