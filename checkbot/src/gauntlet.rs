//! The gauntlet: which matches are played, how each is run, and how each is judged.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use maumau_bot_sdk::bots::BotKind;
use maumau_bot_sdk::runner::{RunOptions, run as run_bot};
use maumau_engine::Action;
use maumau_server::ServerConfig;
use maumau_tournament::lobby::{Lobbies, Reserved, unix_ms_after};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

use crate::launch::{Excerpt, Exit, Launched, ProcessGroup};
use crate::positions::{self, Puzzle, Window};
use crate::proxy::Proxy;
use crate::report::{CheckResult, DecisionTimes, Report};
use crate::trial::{Record, Tamper, Trial, Verdict};
use crate::{BotFactory, BotUnderTest, Case, KitError, Options, Progress};

/// How long the kit's own seat waits before acting in the challenge window, so that the bot has
/// time to challenge.
const WINDOW_HOLD: Duration = Duration::from_millis(600);

/// How long a launched bot may take to exit after its match ended (or a lobby bot after its
/// lobby was closed).
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Deals more a check is played on when the one before ended the match before the kit could
/// exercise it.
const UNEXERCISED_DEALS: u64 = 2;

/// The name of the last check of a lobby bot: it exits when its lobby is closed.
const LOBBY_CLOSED: &str = "lobby closed";

/// Runs the gauntlet and returns the report card; `progress` hears of each check as it ends
/// (and, in connect mode, where the bot should connect).
pub async fn run(
    options: Options,
    mut progress: impl FnMut(Progress<'_>),
) -> Result<Report, KitError> {
    if options.cases.is_empty() {
        return Err(KitError::BadOption(
            "no profile to play: give at least one".into(),
        ));
    }
    if let BotUnderTest::Command(c) | BotUnderTest::Lobby(c) = &options.bot
        && c.is_empty()
    {
        return Err(KitError::BadOption(
            "no bot command: give one, or connect the bot by hand".into(),
        ));
    }
    let started = Instant::now();
    let plans = plans(&options);
    let log_dir = match options.bot {
        BotUnderTest::Command(_) | BotUnderTest::Lobby(_) => Some(log_dir(&options)?),
        _ => None,
    };
    let mut kit = Kit::start(&options).await?;
    let lobby_exit = match (&options.bot, &log_dir) {
        (BotUnderTest::Lobby(cmd), Some(dir)) => Some(kit.host_lobby(cmd, &options, dir).await?),
        _ => None,
    };
    if matches!(options.bot, BotUnderTest::Connect) {
        progress(Progress::Waiting {
            addr: &kit.proxy_addr,
            token: &kit.connect_token,
            matches: plans.len(),
        });
    }
    let mut checks = Vec::new();
    let mut times = Vec::new();
    let mut stopped = None;
    let (mut played, mut launches) = (0, usize::from(lobby_exit.is_some()));
    for (i, first) in plans.iter().enumerate() {
        // A check whose deal ended the match before the kit could exercise it is played again
        // on other deals (a launched or lobby bot only: one connected by hand plays the matches
        // it was told of): that was the deal's doing, not the bot's.
        let mut plan = first.clone();
        let mut attempt = 0;
        let outcome = loop {
            let name = match attempt {
                0 => plan.name.clone(),
                n => format!("{} again {n}", plan.name),
            };
            let log = log_dir.as_ref().map(|d| d.join(log_name(i, &name)));
            let outcome = kit.play(&plan, &options, i as u64, log.as_deref()).await;
            played += usize::from(outcome.report.is_some());
            launches += usize::from(outcome.launched);
            times.extend(
                outcome
                    .record
                    .prompts
                    .iter()
                    .filter_map(|p| p.answered_after),
            );
            let again = attempt < UNEXERCISED_DEALS
                && outcome.stop.is_none()
                && !matches!(options.bot, BotUnderTest::Connect)
                && !plan.exercised(&outcome);
            if !again {
                break outcome;
            }
            attempt += 1;
            plan = first.on_another_deal(attempt);
        };
        let mut verdict = plan.judge(&outcome, &options);
        if attempt > 0 {
            let note = format!(
                " (on deal {} of the check: the match ended too soon on the {})",
                attempt + 1,
                if attempt == 1 { "first" } else { "others" }
            );
            match &mut verdict {
                Ok(detail) | Err(detail) => detail.push_str(&note),
            }
        }
        let result = CheckResult {
            name: plan.name.clone(),
            passed: verdict.is_ok(),
            detail: verdict.unwrap_or_else(|e| e),
        };
        progress(Progress::Check(&result));
        checks.push(result);
        if let Some(why) = outcome.stop
            && (i + 1 < plans.len() || lobby_exit.is_some())
        {
            stopped = Some((i + 1, why));
            break;
        }
    }
    let mut not_run: Vec<String> = stopped.as_ref().map_or(Vec::new(), |(from, _)| {
        plans[*from..].iter().map(|p| p.name.clone()).collect()
    });
    let closed = kit.stop().await;
    if let Some(exit) = lobby_exit {
        if stopped.is_some() {
            not_run.push(LOBBY_CLOSED.into());
        } else {
            let result = lobby_closed(exit, closed, played);
            progress(Progress::Check(&result));
            checks.push(result);
        }
    }
    Ok(Report {
        bot: options.bot.to_string(),
        checks,
        not_run,
        stopped: stopped.map(|(_, why)| why),
        log_dir,
        lobby: matches!(options.bot, BotUnderTest::Lobby(_)),
        decision_times: DecisionTimes::of(&times),
        elapsed: started.elapsed(),
        matches: played,
        launches,
    })
}

/// The last check of a lobby bot: it exited cleanly once its lobby was closed.
fn lobby_closed(exit: LobbyExit, closed: Vec<String>, played: usize) -> CheckResult {
    let exit = exit.lock().unwrap_or_else(|e| e.into_inner()).take();
    let detail = match &exit {
        Some(e) if e.success() && closed.is_empty() => Ok(format!(
            "it exited with status 0 when its lobby was closed, after {} from one launch",
            plural(played, "match", "matches")
        )),
        Some(e) => Err(format!(
            "the bot {}{}",
            e.describe(EXIT_GRACE),
            if e.status.is_some() {
                e.output()
            } else {
                String::new()
            }
        )),
        None => Err(closed.join("; ")),
    };
    CheckResult {
        name: LOBBY_CLOSED.into(),
        passed: detail.is_ok(),
        detail: detail.unwrap_or_else(|e| e),
    }
}

/// How a lobby bot's program ended, once it has.
type LobbyExit = Arc<std::sync::Mutex<Option<Exit>>>;

/// The directory for the bot's output: the one given (made if need be), or a new one under the
/// system's temporary directory, kept after the run.
fn log_dir(o: &Options) -> Result<PathBuf, KitError> {
    match &o.log_dir {
        Some(dir) => std::fs::create_dir_all(dir)
            .map(|()| dir.clone())
            .map_err(|e| KitError::LogDir(format!("{}: {e}", dir.display()))),
        None => tempfile::Builder::new()
            .prefix("maumau-check-bot-")
            .tempdir()
            .map(tempfile::TempDir::keep)
            .map_err(|e| KitError::LogDir(e.to_string())),
    }
}

/// The log file of the `i`th match (0-based): `01-classic-2-seats.log`.
fn log_name(i: usize, check: &str) -> String {
    let words: Vec<String> = check
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    format!("{:02}-{}.log", i + 1, words.join("-"))
}

// ----- the plan -----------------------------------------------------------------------------

/// What a match checks.
#[derive(Clone)]
enum Check {
    Table(Case),
    Rejected,
    Stale,
    Dropped,
    Deadline,
    Window(Window),
    BestMove(Puzzle),
    /// The kit has no position for this case (a bug of the kit, reported as a failed check).
    Unavailable(String),
}

/// One match of the gauntlet.
#[derive(Clone)]
struct Plan {
    name: String,
    check: Check,
    create: pb::CreateMatchRequest,
    /// The bot's seat.
    seat: u32,
    tamper: Tamper,
    /// The required prompt (1-based) whose answer is tampered with.
    at: usize,
    /// A seat the kit plays itself (slowly, never challenging).
    kit_seat: Option<u32>,
}

fn wire_kind(kind: BotKind) -> pb::BotKind {
    match kind {
        BotKind::Random => pb::BotKind::Random,
        BotKind::Heuristic => pb::BotKind::Heuristic,
        BotKind::Search => pb::BotKind::Search,
    }
}

fn config(case: Case, max_rounds: u32) -> pb::MatchConfig {
    pb::MatchConfig {
        profile: pb::Profile::from(case.profile) as i32,
        seats: case.seats.into(),
        calls: pb::CallsMode::Challenge as i32,
        max_rounds,
        ..Default::default()
    }
}

/// Two seconds a decision and two in the bank: a bot that hangs gives up within seconds.
fn normal_clock() -> pb::TimeControl {
    pb::TimeControl {
        decision_ms: 2_000,
        bank_ms: 2_000,
        max_timeouts: 3,
        disconnect_grace_ms: 5_000,
        give_up: pb::GiveUpPolicy::Bot as i32,
        ..Default::default()
    }
}

/// `deadline` a decision and no time bank (the wire's smallest bank, 1 ms).
fn tight_clock(deadline: Duration) -> pb::TimeControl {
    pb::TimeControl {
        decision_ms: deadline.as_millis().clamp(1, u32::MAX.into()) as u32,
        bank_ms: 1,
        ..normal_clock()
    }
}

fn plans(o: &Options) -> Vec<Plan> {
    let others = |seats: u8, except: &[u32], kind: &dyn Fn(u32) -> pb::BotKind| {
        (0..seats as u32)
            .filter(|s| !except.contains(s))
            .map(|seat| pb::SeatBot {
                seat,
                kind: kind(seat) as i32,
            })
            .collect::<Vec<_>>()
    };
    let opponent = wire_kind(o.opponent);
    let mut plans = Vec::new();
    for (i, &case) in o.cases.iter().enumerate() {
        let seat = (i % case.seats as usize) as u32;
        plans.push(Plan {
            name: case.to_string(),
            check: Check::Table(case),
            create: pb::CreateMatchRequest {
                config: Some(config(case, 2)),
                seed: Some(o.seed.wrapping_add(i as u64)),
                time_control: Some(normal_clock()),
                bots: others(case.seats, &[seat], &|_| opponent),
                label: format!("check-bot: {case}"),
                ..Default::default()
            },
            seat,
            tamper: Tamper::Nothing,
            at: 0,
            kit_seat: None,
        });
    }
    let first = o.cases[0];
    let seat = 1;
    let special = |name: &str, check: Check, clock: pb::TimeControl, tamper, at, k: u64| Plan {
        name: name.into(),
        check,
        create: pb::CreateMatchRequest {
            config: Some(config(first, 1)),
            seed: Some(o.seed.wrapping_add(100 + k)),
            time_control: Some(clock),
            bots: others(first.seats, &[seat], &|_| opponent),
            label: format!("check-bot: {name}"),
            ..Default::default()
        },
        seat,
        tamper,
        at,
        kit_seat: None,
    };
    plans.push(special(
        "rejected action",
        Check::Rejected,
        normal_clock(),
        Tamper::Reject,
        1,
        0,
    ));
    plans.push(special(
        "stale state id",
        Check::Stale,
        tight_clock(o.deadline),
        Tamper::Stale,
        2,
        1,
    ));
    plans.push(special(
        "dropped connection",
        Check::Dropped,
        normal_clock(),
        Tamper::Cut,
        2,
        2,
    ));
    plans.push(special(
        "deadline",
        Check::Deadline,
        tight_clock(o.deadline),
        Tamper::Nothing,
        0,
        3,
    ));
    plans.push(match positions::window(first.profile, first.seats) {
        Ok(w) => {
            let kit_seat = (w.mover != w.seat).then_some(w.mover.into());
            let except: Vec<u32> = [Some(w.seat.into()), kit_seat]
                .into_iter()
                .flatten()
                .collect();
            let offender = u32::from(w.offender);
            Plan {
                name: "challenge window".into(),
                create: pb::CreateMatchRequest {
                    start: Some(pb::create_match_request::Start::Position(
                        w.position.clone(),
                    )),
                    seed: Some(o.seed),
                    time_control: Some(normal_clock()),
                    // The offender is a random bot: it never cures its own omission, so the
                    // window stays open until the kit's seat acts.
                    bots: others(first.seats, &except, &|s| {
                        if s == offender {
                            pb::BotKind::Random
                        } else {
                            opponent
                        }
                    }),
                    label: "check-bot: challenge window".into(),
                    ..Default::default()
                },
                seat: w.seat.into(),
                check: Check::Window(w),
                tamper: Tamper::Nothing,
                at: 0,
                kit_seat,
            }
        }
        Err(e) => unavailable("challenge window", e),
    });
    plans.push(match positions::puzzle(first.profile, first.seats) {
        Ok(p) => Plan {
            name: "best move".into(),
            create: pb::CreateMatchRequest {
                start: Some(pb::create_match_request::Start::Position(
                    p.position.clone(),
                )),
                seed: Some(o.seed),
                time_control: Some(normal_clock()),
                bots: others(first.seats, &[p.seat.into()], &|_| opponent),
                label: "check-bot: best move".into(),
                ..Default::default()
            },
            seat: p.seat.into(),
            check: Check::BestMove(p),
            tamper: Tamper::Nothing,
            at: 0,
            kit_seat: None,
        },
        Err(e) => unavailable("best move", e),
    });
    plans
}

fn unavailable(name: &str, why: String) -> Plan {
    Plan {
        name: name.into(),
        check: Check::Unavailable(why),
        create: pb::CreateMatchRequest::default(),
        seat: 0,
        tamper: Tamper::Nothing,
        at: 0,
        kit_seat: None,
    }
}

// ----- running a match ----------------------------------------------------------------------

/// The local server, the proxy and the kit's clients.
struct Kit {
    proxy: Proxy,
    proxy_addr: String,
    server: Channel,
    /// The token a connecting bot presents (connect mode).
    connect_token: String,
    stop: Vec<oneshot::Sender<()>>,
    server_task: tokio::task::JoinHandle<()>,
    /// The lobby of a lobby bot, and its output.
    lobby: Option<(Lobbies, PathBuf)>,
    _data: tempfile::TempDir,
}

/// How a bot under test is running for one match.
enum Running {
    Process(Box<Launched>),
    Thread(oneshot::Receiver<Result<(), String>>),
    ByHand,
    /// Invited through its lobby; its program's output is in the file.
    Lobby(Arc<Reserved>, PathBuf),
}

/// How the bot ended after its match.
struct BotEnd {
    /// It ended cleanly: status 0, or returned.
    ok: bool,
    /// What happened, for a reason: "exited with status 2".
    what: String,
    /// An excerpt of its output and where the whole of it is (empty when it ended cleanly).
    output: String,
}

impl BotEnd {
    /// What happened, and the excerpt.
    fn text(&self) -> String {
        format!("{}{}", self.what, self.output)
    }
}

impl Running {
    /// The end, if the bot already ended (before joining, so always a failure: its output is
    /// quoted).
    fn try_end(&mut self) -> Option<BotEnd> {
        match self {
            Running::Process(p) => p.try_exit().map(|e| BotEnd {
                ok: e.success(),
                what: e.describe(EXIT_GRACE),
                output: e.output(),
            }),
            Running::Thread(rx) => rx.try_recv().ok().map(thread_end),
            Running::ByHand => None,
            Running::Lobby(r, log) => r.failure().map(|why| left_lobby(&why, log)),
        }
    }

    /// Waits a while for the bot to end, then stops it.
    async fn finish(self) -> Option<BotEnd> {
        match self {
            Running::Process(p) => {
                let e = p.finish(EXIT_GRACE).await;
                // A bot that had to be stopped is named with its log; one that crashed quotes it.
                let output = match e.status {
                    Some(s) if !s.success() => e.output(),
                    _ => String::new(),
                };
                Some(BotEnd {
                    ok: e.success(),
                    what: e.describe(EXIT_GRACE),
                    output,
                })
            }
            Running::Thread(rx) => match tokio::time::timeout(EXIT_GRACE, rx).await {
                Ok(Ok(r)) => Some(thread_end(r)),
                _ => Some(BotEnd {
                    ok: false,
                    what: format!(
                        "did not return within {} s after its match ended",
                        EXIT_GRACE.as_secs()
                    ),
                    output: String::new(),
                }),
            },
            Running::ByHand => None,
            Running::Lobby(r, log) => r.failure().map(|why| left_lobby(&why, &log)),
        }
    }
}

/// A lobby bot that left its lobby (or never opened it), with its output's excerpt.
fn left_lobby(why: &str, log: &Path) -> BotEnd {
    BotEnd {
        ok: false,
        what: format!("left its lobby ({why})"),
        output: lobby_output(log),
    }
}

/// The excerpt of a lobby bot's output, as a failure quotes it.
fn lobby_output(log: &Path) -> String {
    Excerpt::read(log).map_or_else(
        |e| format!("; its output could not be read from {}: {e}", log.display()),
        |e| e.to_string(),
    )
}

fn thread_end(r: Result<(), String>) -> BotEnd {
    match r {
        Ok(()) => BotEnd {
            ok: true,
            what: "returned".into(),
            output: String::new(),
        },
        Err(e) => BotEnd {
            ok: false,
            what: format!("stopped with an error: {e}"),
            output: String::new(),
        },
    }
}

/// Everything known about one match after it ended.
struct Outcome {
    record: Record,
    report: Option<pb::MatchReport>,
    end: Option<BotEnd>,
    problem: Option<String>,
    /// Why the gauntlet cannot go on: the bot never joined the match (it could not be launched,
    /// or it ended or ran out of time before joining), or it left its lobby.
    stop: Option<String>,
    /// The bot was launched for this match.
    launched: bool,
}

impl Outcome {
    fn problem(why: String) -> Outcome {
        Outcome {
            record: Record::default(),
            report: None,
            end: None,
            problem: Some(why),
            stop: None,
            launched: false,
        }
    }
}

impl Kit {
    async fn start(o: &Options) -> Result<Kit, KitError> {
        let start = |e: std::io::Error| KitError::Start(e.to_string());
        let data = tempfile::tempdir().map_err(start)?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(start)?;
        let addr: SocketAddr = listener.local_addr().map_err(start)?;
        let config = ServerConfig {
            data_dir: data.path().to_path_buf(),
            join_timeout: o.join_timeout + Duration::from_secs(5),
            ..ServerConfig::default()
        };
        let (stop_server, stopped) = oneshot::channel::<()>();
        let server_task = tokio::spawn(async move {
            let shutdown = async {
                let _ = stopped.await;
            };
            if let Err(e) = maumau_server::run(listener, config, shutdown).await {
                eprintln!("check-bot: the local server stopped: {e}");
            }
        });
        let server = Channel::from_shared(format!("http://{addr}"))
            .map_err(|e| KitError::Start(e.to_string()))?
            .tcp_nodelay(true)
            .connect_lazy();
        let proxy_listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(start)?;
        let proxy_addr = proxy_listener.local_addr().map_err(start)?.to_string();
        let (stop_proxy, proxy_stopped) = oneshot::channel::<()>();
        let wait = match o.bot {
            BotUnderTest::Connect => o.join_timeout,
            _ => Duration::from_secs(2),
        };
        let proxy = Proxy::start(proxy_listener, server.clone(), wait, async {
            let _ = proxy_stopped.await;
        });
        Ok(Kit {
            proxy,
            proxy_addr,
            server,
            connect_token: connect_token(),
            stop: vec![stop_proxy, stop_server],
            server_task,
            lobby: None,
            _data: data,
        })
    }

    /// Hosts the lobby of a lobby bot and launches it (its output to `lobby.log` in `dir`); the
    /// returned slot gets its exit once it has ended.
    async fn host_lobby(
        &mut self,
        cmd: &[String],
        o: &Options,
        dir: &Path,
    ) -> Result<LobbyExit, KitError> {
        let mut lobbies = Lobbies::serve(1, o.join_timeout, "check-bot's gauntlet")
            .await
            .map_err(|e| KitError::Start(format!("cannot open the bot's lobby: {e}")))?;
        let log = dir.join("lobby.log");
        let exit = LobbyExit::default();
        let key = lobbies.key(0).unwrap_or_default();
        let sandbox = o.sandbox.as_deref().map(|s| (s, self.proxy_addr.as_str()));
        match Launched::start_lobby(cmd, lobbies.addr(), key, &log, sandbox) {
            Ok(program) => {
                let (closed, slot) = (lobbies.closed(), exit.clone());
                lobbies.watch_program(0, "the bot".into(), async move {
                    let exit = program.finish_after(closed, EXIT_GRACE).await;
                    let why = (!exit.success())
                        .then(|| format!("its program {}", exit.describe(EXIT_GRACE)));
                    *slot.lock().unwrap_or_else(|e| e.into_inner()) = Some(exit);
                    why
                });
            }
            Err(e) => {
                let why = format!("cannot launch `{}`: {e}", cmd.join(" "));
                lobbies.watch_program(0, "the bot".into(), async move { Some(why) });
            }
        }
        self.lobby = Some((lobbies, log));
        Ok(exit)
    }

    /// Stops everything; returns what went wrong at the end of a lobby bot's program.
    async fn stop(mut self) -> Vec<String> {
        let closed = match self.lobby.take() {
            Some((lobbies, _)) => lobbies.close().await,
            None => Vec::new(),
        };
        for s in self.stop.drain(..) {
            let _ = s.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(5), &mut self.server_task).await;
        closed
    }

    fn matches(&self) -> MatchServiceClient<Channel> {
        MatchServiceClient::new(self.server.clone())
    }

    fn plays(&self) -> PlayServiceClient<Channel> {
        PlayServiceClient::new(self.server.clone())
    }

    async fn abort(&self, match_id: &str, reason: &str) {
        let _ = self
            .matches()
            .abort_match(pb::AbortMatchRequest {
                match_id: match_id.into(),
                reason: reason.into(),
            })
            .await;
    }

    /// Plays one match of the gauntlet with the bot.
    async fn play(&self, plan: &Plan, o: &Options, index: u64, log: Option<&Path>) -> Outcome {
        if let Check::Unavailable(why) = &plan.check {
            return Outcome::problem(format!("the kit has no position for this check: {why}"));
        }
        // A lobby bot's room, taken before the match exists so that its clock does not run while
        // the bot opens its lobby.
        let reserved = match &self.lobby {
            Some((lobbies, log)) => match lobbies.reserve(0).await {
                Ok(r) => Some((Arc::new(r), log.clone())),
                Err(why) => return not_in_lobby(&why, log),
            },
            None => None,
        };
        let created = match self.matches().create_match(plan.create.clone()).await {
            Ok(r) => r.into_inner(),
            Err(s) => {
                return Outcome::problem(format!(
                    "the kit could not create the match: {}",
                    s.message()
                ));
            }
        };
        let token_of = |seat: u32| {
            created
                .seat_tokens
                .iter()
                .find(|t| t.seat == seat)
                .map(|t| t.token.clone())
        };
        let Some(real) = token_of(plan.seat) else {
            return Outcome::problem("the kit's match has no seat for the bot".into());
        };
        let trial = Arc::new(Trial::new(real.clone(), plan.tamper, plan.at));
        let presented = match o.bot {
            BotUnderTest::Connect => self.connect_token.clone(),
            _ => real,
        };
        self.proxy.register(&presented, trial.clone());
        let kit_seat = plan
            .kit_seat
            .and_then(token_of)
            .map(|t| tokio::spawn(kit_seat(self.plays(), t, WINDOW_HOLD)));
        let mut bot = match &o.bot {
            BotUnderTest::Lobby(_) => {
                let Some((reserved, log)) = reserved else {
                    return Outcome::problem("the kit hosts no lobby for the bot".into());
                };
                let case = match plan.check {
                    Check::Table(case) => case,
                    _ => o.cases[0],
                };
                let invitation = pb::Invitation {
                    ladder_match_id: index as i64 + 1,
                    match_id: created.match_id.clone(),
                    seat: plan.seat,
                    seat_token: presented.clone(),
                    // A sandboxed bot reaches the proxy through its socket.
                    node_address: match o.sandbox {
                        Some(_) => Launched::server_inside(),
                        None => format!("http://{}", self.proxy_addr),
                    },
                    join_deadline_unix_ms: unix_ms_after(o.join_timeout),
                    profile: case.profile.name().to_string(),
                    seats: case.seats.into(),
                    rated: false,
                    validation: false,
                };
                if let Err(why) = reserved.invite(invitation).await {
                    self.abort(&created.match_id, "the bot left its lobby")
                        .await;
                    self.proxy.unregister(&presented);
                    return not_in_lobby(&why, &log);
                }
                Running::Lobby(reserved, log)
            }
            BotUnderTest::Command(cmd) => {
                let launched = match log {
                    Some(log) => Launched::start(
                        cmd,
                        &self.proxy_addr,
                        &presented,
                        log,
                        o.sandbox.as_deref(),
                        ProcessGroup::Launcher,
                    ),
                    None => Err(std::io::Error::other("no file for its output")),
                };
                match launched {
                    Ok(p) => Running::Process(Box::new(p)),
                    Err(e) => {
                        self.abort(&created.match_id, "the bot could not be launched")
                            .await;
                        self.proxy.unregister(&presented);
                        return Outcome {
                            stop: Some(NOT_STARTED.into()),
                            ..Outcome::problem(format!("cannot launch `{}`: {e}", cmd.join(" ")))
                        };
                    }
                }
            }
            BotUnderTest::Connect => Running::ByHand,
            BotUnderTest::InProcess(f) => Running::Thread(in_process(
                f.clone(),
                o.seed.wrapping_add(index),
                format!("http://{}", self.proxy_addr),
                presented.clone(),
            )),
        };

        let finished = watch_to_end(self.plays(), created.spectator_token.clone());
        tokio::pin!(finished);
        let started = Instant::now();
        // The match's time runs from the bot's join (a bot started by hand may come late).
        let mut joined_at = None;
        let mut problem = None;
        let mut stop = None;
        let mut aborted_at = None;
        let report = loop {
            tokio::select! {
                r = &mut finished => break r,
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
            if let Some(at) = aborted_at {
                if Instant::now().duration_since(at) > Duration::from_secs(10) {
                    break None;
                }
                continue;
            }
            if joined_at.is_none() && trial.joined() {
                joined_at = Some(Instant::now());
            }
            let why = if let Some(joined) = joined_at {
                (joined.elapsed() > o.match_timeout).then(|| {
                    format!(
                        "the match did not finish within {} s",
                        o.match_timeout.as_secs()
                    )
                })
            } else if let Some(end) = bot.try_end() {
                stop = Some(NOT_STARTED.to_string());
                Some(format!(
                    "the bot {} before joining its match{}",
                    end.what, end.output
                ))
            } else if started.elapsed() > o.join_timeout {
                stop = Some(NOT_STARTED.to_string());
                Some(format!(
                    "the bot did not join its match within {} s",
                    o.join_timeout.as_secs()
                ))
            } else {
                None
            };
            if let Some(why) = why {
                self.abort(&created.match_id, &why).await;
                problem = Some(why);
                aborted_at = Some(Instant::now());
            }
        };
        let launched = matches!(bot, Running::Process(_));
        let lobby = match &bot {
            // A lobby bot goes on running: give it the time a launched bot has to exit to be
            // done with the match (its Finished forwarded, its stream closed) before its
            // connections are cut below.
            Running::Lobby(reserved, _) => {
                let _ = tokio::time::timeout(EXIT_GRACE, trial.streams_closed()).await;
                Some(reserved.clone())
            }
            _ => None,
        };
        // For a lobby bot: whether it left its lobby during the match.
        let end = bot.finish().await;
        if let Some(reserved) = lobby {
            // Only now, so that what it does when told (drain, exit) counts for the next match.
            let placing = report
                .as_ref()
                .and_then(|r| r.result.as_ref())
                .and_then(|res| res.standings.iter().find(|s| s.seat == plan.seat))
                .map_or(0, |s| s.placing);
            reserved.ended(pb::LadderMatchEnded {
                ladder_match_id: index as i64 + 1,
                match_id: created.match_id.clone(),
                finished: report
                    .as_ref()
                    .is_some_and(|r| r.status() == pb::MatchStatus::Finished),
                placing,
                seat: plan.seat,
                ..Default::default()
            });
            // A lobby bot that left its lobby plays no more matches.
            if let Some(end) = &end {
                stop = Some(format!("the bot {}", end.what));
            }
        }
        if let Some(k) = kit_seat {
            k.abort();
        }
        self.proxy.unregister(&presented);
        // Close what is left of the bot's connections (the proxy holds a handle on each).
        self.proxy.cut();
        Outcome {
            record: trial.record(),
            report,
            end,
            problem,
            stop,
            launched,
        }
    }
}

/// Why the gauntlet stops when the bot never joined a match.
const NOT_STARTED: &str = "the bot did not start (it never joined its match)";

/// The outcome of a match the bot could not be invited to: it is not in its lobby.
fn not_in_lobby(why: &str, log: &Path) -> Outcome {
    Outcome {
        stop: Some(format!("the bot is not in its lobby ({why})")),
        ..Outcome::problem(format!(
            "the bot is not in its lobby: {why}{}",
            lobby_output(log)
        ))
    }
}

/// A token for connect mode: unguessable enough for a loopback server that lives a minute.
fn connect_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default(),
    );
    h.write_u32(std::process::id());
    let a = h.finish();
    h.write_u64(a);
    format!("checkbot-{a:016x}{:016x}", h.finish())
}

/// Runs a Rust bot with the SDK's runner on its own thread (as a separate program would).
fn in_process(
    factory: BotFactory,
    seed: u64,
    server: String,
    token: String,
) -> oneshot::Receiver<Result<(), String>> {
    let (tx, rx) = oneshot::channel();
    std::thread::spawn(move || {
        let result = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
            .and_then(|rt| {
                rt.block_on(async {
                    let mut bot = factory(seed);
                    let mut options = RunOptions::new(server, token);
                    options.name = "check-bot in-process".into();
                    run_bot(bot.as_mut(), &options)
                        .await
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                })
            });
        let _ = tx.send(result);
    });
    rx
}

/// The final report, from the spectator's feed (straight from the server, not the proxy).
async fn watch_to_end(
    mut client: PlayServiceClient<Channel>,
    spectator_token: String,
) -> Option<pb::MatchReport> {
    let mut feed = client
        .watch(pb::WatchRequest {
            token: spectator_token,
            client_name: "check-bot".into(),
            resume: None,
            ..Default::default()
        })
        .await
        .ok()?
        .into_inner();
    while let Some(Ok(m)) = feed.next().await {
        if let Some(pb::server_message::Kind::Finished(f)) = m.message.and_then(|m| m.kind) {
            return f.report;
        }
    }
    None
}

/// The kit's own seat in the challenge window: it waits before its first action (the window
/// stays open meanwhile), never challenges, and draws or passes whenever it must act.
async fn kit_seat(
    mut client: PlayServiceClient<Channel>,
    token: String,
    hold: Duration,
) -> Result<(), tonic::Status> {
    use pb::play_request::Kind as Up;
    use pb::server_message::Kind as Down;
    let (tx, rx) = mpsc::channel(16);
    let send = |kind| pb::PlayRequest { kind: Some(kind) };
    let _ = tx
        .send(send(Up::Join(pb::Join {
            token,
            client_name: "check-bot".into(),
            resume: None,
            ..Default::default()
        })))
        .await;
    let mut inbound = client.play(ReceiverStream::new(rx)).await?.into_inner();
    let mut first = true;
    let mut request_id = 0;
    while let Some(m) = inbound.message().await? {
        match m.message.and_then(|m| m.kind) {
            Some(Down::Prompt(p)) if p.required => {
                if first {
                    tokio::time::sleep(hold).await;
                    first = false;
                }
                let listed = |i: u32| p.legal_actions.iter().any(|a| a.index == i);
                let draw = Action::Draw.index() as u32;
                let pass = Action::Pass.index() as u32;
                let quiet = |i: &u32| {
                    Action::from_index(*i as usize)
                        .is_some_and(|a| !matches!(a, Action::Challenge | Action::Announce(_)))
                };
                let pick = [draw, pass]
                    .into_iter()
                    .find(|&i| listed(i))
                    .or_else(|| p.legal_actions.iter().map(|a| a.index).find(quiet));
                if let Some(index) = pick {
                    request_id += 1;
                    let _ = tx
                        .send(send(Up::Action(pb::ActionSubmission {
                            state_id: p.state_id,
                            choice: Some(pb::action_submission::Choice::ActionIndex(index)),
                            request_id,
                        })))
                        .await;
                }
            }
            Some(Down::Finished(_)) => return Ok(()),
            _ => {}
        }
    }
    Ok(())
}

// ----- judging ------------------------------------------------------------------------------

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// How long the bot took over decision `n` (1-based), in its author's terms: "its answer to
/// decision 4 came after 1012 ms", or "it did not answer decision 4 before the match moved on".
fn answer_time(r: &Record, n: usize) -> String {
    match r.prompts.get(n - 1).and_then(|p| p.answered_after) {
        Some(d) => format!("its answer to decision {n} came after {}", ms(d)),
        None => format!("it did not answer decision {n} before the match moved on"),
    }
}

/// The bot's slowest decision, in its author's terms (see [`answer_time`]): the first it never
/// answered, or else the one it took longest over.
fn slowest(r: &Record) -> String {
    let unanswered = r.prompts.iter().position(|p| p.answered_after.is_none());
    let longest = r
        .prompts
        .iter()
        .enumerate()
        .filter_map(|(i, p)| Some((i, p.answered_after?)))
        .max_by_key(|&(_, d)| d)
        .map(|(i, _)| i);
    match unanswered.or(longest) {
        Some(i) => answer_time(r, i + 1),
        None => "it was sent no decision".into(),
    }
}

/// A refusal that is the bot's own fault: a turn action refused for a reason other than a
/// stale state (stale answers are normal after a reconnect), and not one the kit caused.
fn faults(record: &Record) -> Vec<(pb::ErrorReason, String)> {
    record
        .submissions
        .iter()
        .filter(|s| s.tampered.is_none())
        .filter(|s| !matches!(s.action, Some(Action::Challenge | Action::Announce(_))))
        .filter_map(|s| match &s.verdict {
            Some(Verdict::Rejected(r, m)) if *r != pb::ErrorReason::StaleState => {
                Some((*r, m.clone()))
            }
            _ => None,
        })
        .collect()
}

impl Plan {
    /// Whether the match let the kit do what the check needs: false when it ended before the
    /// tampered decision (or before the server answered the held-back one), and nothing else
    /// went wrong.
    fn exercised(&self, o: &Outcome) -> bool {
        if o.problem.is_some() {
            return true;
        }
        let r = &o.record;
        // The match ended before the bot was asked the tampered decision (a bot that was asked
        // and did not answer has been exercised: it failed).
        let ended_first = r.tampered.is_none() && r.prompts.len() < self.at;
        match self.check {
            Check::Rejected | Check::Dropped => !ended_first,
            Check::Stale => {
                let unanswered = r
                    .submissions
                    .iter()
                    .any(|s| s.tampered == Some(Tamper::Stale) && s.verdict.is_none());
                !ended_first && !unanswered
            }
            _ => true,
        }
    }

    /// The same check on another deal (the `attempt`th other).
    fn on_another_deal(&self, attempt: u64) -> Plan {
        let mut plan = self.clone();
        plan.create.seed = plan
            .create
            .seed
            .map(|s| s.wrapping_add(attempt.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        plan
    }

    /// The bot's statistics, from the match report.
    fn stats<'a>(&self, report: &'a pb::MatchReport) -> Option<&'a pb::SeatStats> {
        report.seats.iter().find(|s| s.seat == self.seat)
    }

    /// The time for one decision in this check's match.
    fn decision_time(&self) -> Duration {
        Duration::from_millis(
            self.create
                .time_control
                .as_ref()
                .map_or(0, |t| t.decision_ms)
                .into(),
        )
    }

    /// The clock in the bot author's terms: "300 ms (no time bank)", or "2000 ms (or up to 2000
    /// ms more from a time bank)".
    fn allowance(&self) -> String {
        let bank = self.create.time_control.as_ref().map_or(0, |t| t.bank_ms);
        let bank = if bank <= 1 {
            "no time bank".into()
        } else {
            format!("or up to {bank} ms more from a time bank")
        };
        format!("{} ({bank})", ms(self.decision_time()))
    }

    /// What every check needs: the match finished, the bot did not crash, give up, miss more
    /// deadlines than the kit caused, or have its own actions refused, and it ended cleanly.
    fn health(&self, o: &Outcome, expected_timeouts: u32) -> Result<(), String> {
        if let Some(p) = &o.problem {
            return Err(p.clone());
        }
        let report = o
            .report
            .as_ref()
            .ok_or("the kit got no report of the match")?;
        if report.status() != pb::MatchStatus::Finished {
            return Err(format!("the match ended {}", report.status().as_str_name()));
        }
        if let Some(end) = &o.end
            && !end.ok
        {
            return Err(format!("the bot {}", end.text()));
        }
        let stats = self
            .stats(report)
            .ok_or("the report has no statistics for the bot's seat")?;
        if stats.gave_up {
            return Err(format!(
                "the server gave the seat up after {}: {}; this check needs an answer within {}",
                plural(stats.timeouts as usize, "late decision", "late decisions"),
                slowest(&o.record),
                self.allowance()
            ));
        }
        if stats.timeouts > expected_timeouts {
            let late = stats.timeouts - expected_timeouts;
            return Err(format!(
                "{} too late, so the server played the default action: {}; this check needs \
                 an answer within {}",
                plural(late as usize, "decision came", "decisions came"),
                slowest(&o.record),
                self.allowance()
            ));
        }
        let faults = faults(&o.record);
        if let Some((reason, message)) = faults.first() {
            return Err(format!(
                "{} refused; the first: {} ({message})",
                plural(faults.len(), "action was", "actions were"),
                reason.as_str_name()
            ));
        }
        Ok(())
    }

    /// Pass (`Ok(evidence)`) or fail (`Err(reason)`).
    fn judge(&self, o: &Outcome, options: &Options) -> Result<String, String> {
        let r = &o.record;
        match &self.check {
            Check::Unavailable(why) => {
                Err(format!("the kit has no position for this check: {why}"))
            }
            Check::Table(case) => {
                self.health(o, 0)?;
                let report = o.report.as_ref().ok_or("no report")?;
                let stats = self.stats(report).ok_or("no statistics")?;
                let placing = report
                    .result
                    .as_ref()
                    .and_then(|res| res.standings.iter().find(|s| s.seat == self.seat))
                    .map_or(0, |s| s.placing);
                if stats.decisions == 0 {
                    return Err("the bot made no decision".into());
                }
                Ok(format!(
                    "{}, {} decisions, placed {placing} of {}",
                    plural(report.rounds.len(), "round", "rounds"),
                    stats.decisions,
                    case.seats
                ))
            }
            Check::Rejected => {
                let (at, state) = r.tampered.ok_or_else(|| {
                    o.problem.clone().unwrap_or_else(|| {
                        "not exercised: the match ended before the bot's first decision".into()
                    })
                })?;
                let swapped = r
                    .submissions
                    .iter()
                    .find(|s| s.tampered == Some(Tamper::Reject));
                let refused = match swapped.and_then(|s| s.verdict.clone()) {
                    Some(Verdict::Rejected(reason, _)) => reason.as_str_name(),
                    _ => "no verdict",
                };
                let retry = r
                    .submissions
                    .iter()
                    .find(|s| s.tampered.is_none() && s.state_id == state && s.at > at);
                let after = match retry {
                    None => {
                        return Err(format!(
                            "after ActionRejected({refused}) it sent nothing more for that \
                             prompt, so the server played the default action when time ran out"
                        ));
                    }
                    Some(s) => match &s.verdict {
                        Some(Verdict::Accepted) => s.at.duration_since(at),
                        Some(Verdict::Rejected(reason, m)) => {
                            return Err(format!(
                                "after ActionRejected({refused}) it answered again, but that was \
                                 refused too: {} ({m})",
                                reason.as_str_name()
                            ));
                        }
                        None => return Err("its second answer got no verdict".into()),
                    },
                };
                self.health(o, 0)?;
                Ok(format!(
                    "its first answer was swapped for a card it does not hold and refused \
                     ({refused}); it answered again {} later and was accepted",
                    ms(after)
                ))
            }
            Check::Stale => {
                // A late answer is stale already: the kit has nothing to hold back.
                let allowed = self.decision_time();
                if r.prompts
                    .get(self.at - 1)
                    .is_some_and(|p| p.answered_after.is_none_or(|d| d > allowed))
                {
                    return Err(format!(
                        "{}; this check needs an answer within {}: the kit holds back an \
                         answer that comes in time until the server has timed the decision \
                         out, to see the bot carry on after a STALE_STATE refusal",
                        answer_time(r, self.at),
                        self.allowance()
                    ));
                }
                let (_, state) = r.tampered.ok_or_else(|| {
                    o.problem.clone().unwrap_or_else(|| {
                        "not exercised: the match ended before the bot's second decision \
                         (try another --seed)"
                            .into()
                    })
                })?;
                let held = r
                    .submissions
                    .iter()
                    .find(|s| s.tampered == Some(Tamper::Stale));
                match held.and_then(|s| s.verdict.clone()) {
                    Some(Verdict::Rejected(pb::ErrorReason::StaleState, _)) => {}
                    Some(Verdict::Rejected(reason, m)) => {
                        return Err(o.problem.clone().unwrap_or(format!(
                            "the server refused its held-back answer as {}, not as \
                             STALE_STATE ({m})",
                            reason.as_str_name()
                        )));
                    }
                    Some(Verdict::Accepted) => {
                        return Err(o.problem.clone().unwrap_or(
                            "the server accepted its held-back answer: the decision had not \
                             timed out (a problem of the kit)"
                                .into(),
                        ));
                    }
                    None => {
                        return Err(o.problem.clone().unwrap_or(
                            "the match ended before the server answered its held-back answer \
                             (try another --seed)"
                                .into(),
                        ));
                    }
                }
                let later: Vec<_> = r
                    .prompts
                    .iter()
                    .skip_while(|p| p.prompt.state_id != state)
                    .skip(1)
                    .collect();
                self.health(o, 1)?;
                Ok(format!(
                    "its answer to decision {} was held until the server had timed it out and \
                     moved on, then refused as STALE_STATE; it answered the {} after that in \
                     time",
                    self.at,
                    plural(later.len(), "prompt", "prompts")
                ))
            }
            Check::Dropped => {
                let (_, state) = r.tampered.ok_or_else(|| {
                    o.problem.clone().unwrap_or_else(|| {
                        "not exercised: the match ended before the bot's second decision \
                         (try another --seed)"
                            .into()
                    })
                })?;
                let cut = r.cut_at.ok_or("the kit did not cut the connection")?;
                let Some(rejoin) = r.joins.iter().find(|j| j.at > cut) else {
                    let end = o
                        .end
                        .as_ref()
                        .map_or(String::new(), |e| format!("; the bot {}", e.text()));
                    return Err(format!(
                        "it never reconnected after its connection was cut{end}"
                    ));
                };
                let how = match rejoin.resume {
                    Some((n, false)) => format!("Join.resume after event {n}"),
                    Some((_, true)) => "Join.resume asking for a fresh snapshot".into(),
                    None => "a fresh Join without resume".into(),
                };
                let answered = r.submissions.iter().any(|s| {
                    s.state_id == state && s.at > rejoin.at && s.verdict == Some(Verdict::Accepted)
                });
                if !answered {
                    return Err(format!(
                        "it reconnected ({how}) but did not answer the pending prompt"
                    ));
                }
                self.health(o, 0)?;
                Ok(format!(
                    "cut with its answer to decision {} in flight; it reconnected {} later \
                     with {how} and answered the pending prompt",
                    self.at,
                    ms(rejoin.at.duration_since(cut))
                ))
            }
            Check::Deadline => {
                self.health(o, 0)?;
                let slowest = r.prompts.iter().filter_map(|p| p.answered_after).max();
                Ok(format!(
                    "{} within {} ms each, no time bank; slowest {}",
                    plural(r.prompts.len(), "decision", "decisions"),
                    options.deadline.as_millis(),
                    slowest.map_or("-".into(), ms)
                ))
            }
            Check::Window(w) => {
                let challenge = Action::Challenge.index() as u32;
                let lists =
                    |p: &pb::DecisionPrompt| p.legal_actions.iter().any(|a| a.index == challenge);
                let offered = r
                    .optional
                    .iter()
                    .find(|(_, p)| lists(p))
                    .map(|(at, _)| *at)
                    .or_else(|| {
                        r.prompts
                            .first()
                            .filter(|p| lists(&p.prompt))
                            .map(|p| p.sent)
                    });
                let Some(offered) = offered else {
                    return Err(o.problem.clone().unwrap_or(
                        "the challenge was never offered to the bot (a problem of the kit)".into(),
                    ));
                };
                let challenged = r
                    .submissions
                    .iter()
                    .find(|s| s.action == Some(Action::Challenge));
                let choice = match challenged.map(|s| &s.verdict) {
                    None => "let the window pass".to_string(),
                    Some(Some(Verdict::Accepted)) => "challenged (accepted)".into(),
                    Some(Some(Verdict::Rejected(reason, _))) => {
                        format!("challenged, refused as {}", reason.as_str_name())
                    }
                    Some(None) => "challenged (no verdict)".into(),
                };
                let after = r.prompts.iter().filter(|p| p.sent > offered).count();
                self.health(o, 0)?;
                Ok(format!(
                    "S{} had missed its call: the bot {choice}, then played on for {}",
                    w.offender,
                    plural(after, "more decision", "more decisions")
                ))
            }
            Check::BestMove(p) => {
                let first = r.prompts.first().ok_or_else(|| {
                    o.problem
                        .clone()
                        .unwrap_or("the bot never got the position's prompt".into())
                })?;
                // Its first turn action (an ANNOUNCE before the play may come first in brazilian).
                let answer = r
                    .submissions
                    .iter()
                    .filter(|s| s.at >= first.sent)
                    .filter_map(|s| s.action)
                    .find(|a| !matches!(a, Action::Announce(_) | Action::Challenge))
                    .ok_or_else(|| {
                        o.problem
                            .clone()
                            .unwrap_or("it never answered the position's prompt".into())
                    })?;
                if !Puzzle::is_best(answer) {
                    return Err(format!(
                        "holding J♣ and K♠ on 10♥ (`{}`) it played `{answer}`; the best move \
                         names ♠, the suit of the card it keeps, so that it can go out next turn",
                        p.position
                    ));
                }
                self.health(o, 0)?;
                Ok(format!(
                    "holding J♣ and K♠ on 10♥ it played `{answer}`, naming the suit it keeps"
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trial::{PromptRecord, Submission};

    /// Check-bot deals no seed twice, so no match of a gauntlet tells the bot (at its end, with
    /// the seed) a deal it plays later and none needs to be sealed: the tables take the seed
    /// plus their index, the special checks the seed plus 100 and up, and the set positions
    /// deal from the position (the seed they carry is unused). A profile listed twice is dealt
    /// afresh.
    #[test]
    fn a_gauntlet_deals_no_seed_twice() {
        let mut o = Options::new(BotUnderTest::Connect);
        o.cases.extend(Case::usual());
        let plans = plans(&o);
        let mut seen = std::collections::HashSet::new();
        for p in plans.iter().filter(|p| p.create.start.is_none()) {
            let seed = p
                .create
                .seed
                .expect("every match of the gauntlet is seeded");
            assert!(seen.insert(seed), "{}: seed {seed} is dealt twice", p.name);
        }
        assert!(seen.len() >= o.cases.len() + 4);
        // Nor do the other deals a check is played on when a deal ended the match too soon.
        for p in plans.iter().filter(|p| p.create.start.is_none()) {
            for attempt in 1..=UNEXERCISED_DEALS {
                let seed = p.on_another_deal(attempt).create.seed.expect("seeded");
                assert!(seen.insert(seed), "{}: seed {seed} is dealt twice", p.name);
            }
        }
    }

    fn outcome(record: Record) -> Outcome {
        Outcome {
            record,
            ..Outcome::problem(String::new())
        }
    }

    fn asked(n: usize) -> Vec<PromptRecord> {
        (0..n)
            .map(|i| PromptRecord {
                prompt: pb::DecisionPrompt {
                    state_id: i as u64 + 1,
                    ..Default::default()
                },
                sent: Instant::now(),
                answered_after: None,
            })
            .collect()
    }

    /// A check is played on another deal only when the match ended before the kit could do what
    /// it needs (the deal's doing); a bot that was asked the decision and did not answer, or
    /// whose held-back answer the server refused, was exercised (and is judged).
    #[test]
    fn only_a_deal_that_ended_the_match_first_is_replaced() {
        let mut o = Options::new(BotUnderTest::Connect);
        o.cases.extend(Case::usual());
        let plans = plans(&o);
        let plan = |check: fn(&Check) -> bool| {
            plans
                .iter()
                .find(|p| check(&p.check))
                .expect("the gauntlet has the check")
        };
        let stale = plan(|c| matches!(c, Check::Stale));
        let rejected = plan(|c| matches!(c, Check::Rejected));
        let ok = |plan: &Plan, record: Record| {
            let mut o = outcome(record);
            o.problem = None;
            plan.exercised(&o)
        };
        // Ended before the tampered decision was asked.
        assert!(!ok(stale, Record::default()));
        assert!(!ok(rejected, Record::default()));
        // Asked it and never answered: the bot's doing.
        let silent = Record {
            prompts: asked(stale.at.max(rejected.at)),
            ..Record::default()
        };
        assert!(ok(stale, silent.clone()));
        assert!(ok(rejected, silent));
        // The held-back answer got no verdict: the match ended first.
        let held = |verdict: Option<Verdict>| Record {
            prompts: asked(stale.at),
            tampered: Some((Instant::now(), stale.at as u64)),
            submissions: vec![Submission {
                at: Instant::now(),
                state_id: stale.at as u64,
                action: None,
                request_id: 1,
                tampered: Some(Tamper::Stale),
                verdict,
            }],
            ..Record::default()
        };
        assert!(!ok(stale, held(None)));
        let refused = Verdict::Rejected(pb::ErrorReason::StaleState, String::new());
        assert!(ok(stale, held(Some(refused))));
        // A problem of the kit or the bot is reported, not played again.
        assert!(stale.exercised(&outcome(Record::default())));
    }
}
