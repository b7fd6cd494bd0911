//! `maumau-loadgen ladder`: the ladder's throughput, against the same matches created
//! directly.
//!
//! Two sides, one after the other, each for `--minutes` after a warm-up:
//!
//! 1. **Ladder.** Starts `maumau serve --ladder` (a child process, temporary data directory, a
//!    ladder that makes 4-seat classic matches only), registers `--bots` owners, each with one bot
//!    and one version, and opens one lobby per version declaring `--capacity` matches at once.
//!    Each lobby plays every invitation with a reference bot of the SDK (`--mix`, assigned in
//!    turn) through `maumau_bot_sdk::runner::run`, in this process. Rated matches are counted
//!    from `LadderMatchEnded` (once per ladder match), and checked at the end against the
//!    leaderboard (its match counts, summed over our bots, are four per rated match).
//! 2. **Direct.** Starts a plain `maumau serve` and keeps `bots × capacity / 4` matches of the same
//!    format running (the ladder's most tables at once), each created with
//!    `MatchService.CreateMatch` and played by the same reference bots, a new match as soon as
//!    one ends.
//!
//! It prints a progress line every `--progress` seconds, then both rates in matches per hour,
//! their ratio, the server's CPU per match, and where the ladder's time goes: how long a table
//! takes to be recorded (table end → `LadderMatchEnded`, the store's write and the rating), how
//! long a freed seat waits for its next invitation (`LadderMatchEnded` → `Invitation`, the
//! matchmaker), and how busy the declared seats were.
//!
//! `--store URL` is passed to `maumau serve --store` (the SQLite store in the data directory
//! otherwise); `--nodes N` starts N ladder servers on that one store, spreads the lobbies over
//! them, and also measures one node on the same store, for the "N nodes ≥ 80% of one node"
//! figure.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::ValueEnum;
use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::{HeuristicBot, RandomBot};
use maumau_bot_sdk::runner::{RunOptions, run};
use maumau_engine::{MatchConfig, ProfileId};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

use crate::procs::{ChildServer, Counters};
use crate::stats::{Latencies, Summary, Window};

/// Seats per match: the figures are for 4-seat matches.
const SEATS: usize = 4;
/// The profile played.
const PROFILE: ProfileId = ProfileId::Classic;
/// Longest a seat's match may take (the server's own time controls end a stuck one sooner).
const PLAY_TIMEOUT: Duration = Duration::from_secs(300);
/// Longest wait for a single call (registration, CreateMatch, leaderboard).
const CALL_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the lobbies may take to drain, and the direct slots to finish, after the window.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(90);
/// Rated matches per hour to reach.
const TARGET_PER_HOUR: f64 = 10_000.0;
/// Ladder rate ÷ direct rate to reach, and N nodes ÷ one node.
const TARGET_RATIO: f64 = 0.8;

/// A reference bot of the SDK.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Kind {
    /// `maumau_bot_sdk::bots::HeuristicBot`.
    Heuristic,
    /// `maumau_bot_sdk::bots::RandomBot`.
    Random,
}

impl Kind {
    fn bot(self, seed: u64) -> Box<dyn Bot> {
        match self {
            Kind::Heuristic => Box::new(HeuristicBot::new(seed)),
            Kind::Random => Box::new(RandomBot::new(seed)),
        }
    }
}

/// Measure the ladder's rated matches per hour against the same matches created directly.
#[derive(clap::Args, Debug)]
pub(crate) struct LadderArgs {
    /// Minutes measured per side, after the warm-up (30 for the documented figure).
    #[arg(long, default_value_t = 3.0)]
    minutes: f64,
    /// Minutes measured on the direct side [default: `--minutes`]. Both rates are per hour, so
    /// a 30-minute ladder run can be compared with a shorter direct one.
    #[arg(long)]
    direct_minutes: Option<f64>,
    /// Seconds of load before measuring starts, per side.
    #[arg(long, default_value_t = 15.0)]
    warmup: f64,
    /// Registered bots: one owner, bot and version each (the matchmaker never seats two
    /// versions of one owner together, so at least 4).
    #[arg(long, default_value_t = 8)]
    bots: usize,
    /// Matches each bot plays at once (its lobby's `max_matches`, 1 to 64). The direct side
    /// keeps `bots × capacity / 4` matches running.
    #[arg(long, default_value_t = 4)]
    capacity: u32,
    /// Reference bots, given to the registered bots in turn (and to the direct side's seats).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "heuristic,random"
    )]
    mix: Vec<Kind>,
    /// The ladder store, passed to `maumau serve --store` (e.g. postgres://...) [default: the
    /// server's SQLite store in its temporary data directory].
    #[arg(long, value_name = "URL")]
    store: Option<String>,
    /// Ladder servers sharing `--store` (needed above 1); the lobbies are spread over them, and
    /// the run also measures one node on the same store.
    #[arg(long, default_value_t = 1)]
    nodes: usize,
    /// Skip the direct side.
    #[arg(long)]
    no_direct: bool,
    /// Seconds between progress lines.
    #[arg(long, default_value_t = 5.0)]
    progress: f64,
    /// The ladder's join deadline (`ladder_join_deadline_ms`).
    #[arg(long, default_value_t = 10_000)]
    join_deadline_ms: u64,
    /// Seed of the bots (and of the direct side's deals).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The `maumau` binary [default: `maumau` next to this executable].
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// RUST_LOG for the servers (the server's default, `info`, logs a few lines per match).
    #[arg(long, default_value = "warn")]
    server_log: String,
    /// Where the servers' temporary data directories are made [default: the system's temporary
    /// directory]; `/dev/shm` keeps a slow disk out of the figures.
    #[arg(long, value_name = "DIR")]
    data_parent: Option<PathBuf>,
    /// Worker threads of this process's runtime (the bots) [default: one per CPU].
    #[arg(long)]
    pub(crate) client_threads: Option<usize>,
}

impl LadderArgs {
    fn check(&self) -> Result<(), String> {
        for m in [Some(self.minutes), self.direct_minutes]
            .into_iter()
            .flatten()
        {
            if !(m > 0.0 && m <= 24.0 * 60.0) {
                return Err("--minutes and --direct-minutes must be in (0, 1440]".into());
            }
        }
        if !(0.0..=600.0).contains(&self.warmup) || !(0.5..).contains(&self.progress) {
            return Err("--warmup must be in [0, 600] s and --progress at least 0.5 s".into());
        }
        if !(SEATS..=4096).contains(&self.bots) {
            return Err(format!(
                "--bots {}: between {SEATS} (one table's distinct owners) and 4096",
                self.bots
            ));
        }
        if !(1..=64).contains(&self.capacity) {
            return Err(format!("--capacity {}: between 1 and 64", self.capacity));
        }
        if self.tables() == 0 {
            return Err("--bots × --capacity must make at least one 4-seat table".into());
        }
        if self.mix.is_empty() {
            return Err("--mix needs at least one bot".into());
        }
        if !(1..=16).contains(&self.nodes) {
            return Err(format!("--nodes {}: between 1 and 16", self.nodes));
        }
        if self.nodes > 1 && self.store.is_none() {
            return Err(format!(
                "--nodes {}: several ladder servers need one shared store (--store \
                 postgres://...); the SQLite store belongs to one process",
                self.nodes
            ));
        }
        Ok(())
    }

    /// The most tables the declared capacity holds at once.
    fn tables(&self) -> usize {
        self.bots * self.capacity as usize / SEATS
    }

    /// The measured window of the ladder side, or of the direct side.
    fn window(&self, direct: bool) -> Window {
        let minutes = if direct {
            self.direct_minutes.unwrap_or(self.minutes)
        } else {
            self.minutes
        };
        Window::after(
            Duration::from_secs_f64(self.warmup),
            Duration::from_secs_f64(minutes * 60.0),
        )
    }

    fn kind(&self, i: usize) -> Kind {
        self.mix[i % self.mix.len()]
    }
}

/// The server's configuration file: the same for both sides, plus the ladder's part.
fn server_config(ladder: Option<(&LadderArgs, &str)>) -> String {
    let mut c = String::from(
        "actions_per_second = 1000000\ncalls_per_second = 1000000\nmax_open_matches = 100000\n",
    );
    if let Some((args, node_address)) = ladder {
        c.push_str(&format!(
            "ladder = true\nregistrations_per_minute = 1000000\nladder_join_deadline_ms = {}\nladder_node_address = \"{node_address}\"\n\
             [[ladder_formats]]\nprofile = \"{}\"\nseats = {SEATS}\nweight = 1.0\n",
            args.join_deadline_ms,
            PROFILE.name()
        ));
    }
    c
}

/// Whether this `maumau` binary's `serve` has a `--store` option.
fn serve_has_store(bin: &PathBuf) -> Result<bool, String> {
    let out = Command::new(bin)
        .args(["serve", "--help"])
        .output()
        .map_err(|e| format!("cannot run {} serve --help: {e}", bin.display()))?;
    Ok(String::from_utf8_lossy(&out.stdout).contains("--store"))
}

/// A free loopback port (bound, read, released: a node must know its address before it starts,
/// for the invitations it sends).
fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

/// Starts one `maumau serve`: a ladder node when `ladder` is set, listening on `port` (0: any).
fn start_server(
    args: &LadderArgs,
    bin: &PathBuf,
    ladder: bool,
    port: u16,
    node_address: &str,
) -> Result<ChildServer, String> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("maumau-loadgen-ladder-");
    let dir = match &args.data_parent {
        Some(p) => builder.tempdir_in(p),
        None => builder.tempdir(),
    }
    .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let config_path = dir.path().join("maumau.toml");
    let config = server_config(ladder.then_some((args, node_address)));
    std::fs::write(&config_path, config).map_err(|e| format!("cannot write the config: {e}"))?;
    let mut cmd = Command::new(bin);
    cmd.arg("serve")
        .arg("--listen")
        .arg(format!("127.0.0.1:{port}"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .arg("--config")
        .arg(&config_path)
        .env("RUST_LOG", &args.server_log);
    if ladder && let Some(url) = &args.store {
        cmd.arg("--store").arg(url);
    }
    let what = if ladder { "ladder server" } else { "server" };
    let server = ChildServer::spawn(cmd, what, Some(dir), false)?;
    eprintln!("loadgen: {what} pid {} on {}", server.pid(), server.addr);
    Ok(server)
}

/// Starts `n` ladder nodes (one with any port and an empty node address when `n` is 1).
fn start_nodes(args: &LadderArgs, bin: &PathBuf, n: usize) -> Result<Vec<ChildServer>, String> {
    let mut nodes = Vec::with_capacity(n);
    for _ in 0..n {
        let server = if n == 1 {
            start_server(args, bin, true, 0, "")?
        } else {
            let port = free_port()?;
            start_server(args, bin, true, port, &format!("http://127.0.0.1:{port}"))?
        };
        nodes.push(server);
    }
    Ok(nodes)
}

/// What the bots of one side saw, shared by their tasks.
struct Tally {
    window: Window,
    /// Matches ended (finished and, on the ladder, rated) inside the window.
    in_window: AtomicU64,
    /// Matches ended, warm-up and drain included.
    total: AtomicU64,
    /// Matches that ended unfinished or unrated.
    aborted: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
    /// Ladder match ids whose end was counted.
    seen: Mutex<HashSet<i64>>,
    /// When the first seat of a ladder match saw it finish.
    table_end: Mutex<HashMap<i64, Instant>>,
    samples: Mutex<Samples>,
}

/// Timings collected inside the window.
#[derive(Default)]
struct Samples {
    /// A seat's whole run: connect, join, play, the match report.
    play: Latencies,
    /// Table end (first seat's run done) → `LadderMatchEnded`.
    record: Latencies,
    /// `LadderMatchEnded` → the lobby's next `Invitation`.
    replan: Latencies,
    /// Seat-seconds spent in runs, clipped to the window.
    busy: f64,
}

impl Tally {
    fn new(window: Window) -> Tally {
        Tally {
            window,
            in_window: AtomicU64::new(0),
            total: AtomicU64::new(0),
            aborted: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            first_error: Mutex::new(None),
            seen: Mutex::new(HashSet::new()),
            table_end: Mutex::new(HashMap::new()),
            samples: Mutex::new(Samples::default()),
        }
    }

    fn samples(&self) -> std::sync::MutexGuard<'_, Samples> {
        self.samples.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn error(&self, e: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        let mut first = self.first_error.lock().unwrap_or_else(|p| p.into_inner());
        if first.is_none() {
            *first = Some(e);
        }
    }

    /// A match ended now, finished (and rated) or not.
    fn match_ended(&self, ok: bool) {
        if !ok {
            self.aborted.fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.total.fetch_add(1, Ordering::Relaxed);
        if self.window.contains(Instant::now()) {
            self.in_window.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A seat's run went from `start` to `end`.
    fn played(&self, start: Instant, end: Instant) {
        let busy = overlap(start, end, self.window);
        let mut s = self.samples();
        s.busy += busy;
        if self.window.contains(end) {
            s.play.push(end - start);
        }
    }

    /// A ladder seat saw its match finish at `end`.
    fn table_ended(&self, ladder_id: i64, end: Instant) {
        if lock(&self.seen).contains(&ladder_id) {
            return;
        }
        lock(&self.table_end).entry(ladder_id).or_insert(end);
    }

    /// A lobby received `LadderMatchEnded`: counts the match once, with the time its recording
    /// took.
    fn ladder_ended(&self, e: &pb::LadderMatchEnded) {
        if !lock(&self.seen).insert(e.ladder_match_id) {
            return;
        }
        let now = Instant::now();
        if let Some(t) = lock(&self.table_end).remove(&e.ladder_match_id)
            && self.window.contains(now)
        {
            self.samples().record.push(now - t);
        }
        self.match_ended(e.finished && e.rated);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Seconds of `start..end` inside `window`.
fn overlap(start: Instant, end: Instant, window: Window) -> f64 {
    let from = start.max(window.start);
    let to = end.min(window.end);
    if to > from {
        (to - from).as_secs_f64()
    } else {
        0.0
    }
}

/// Plays one seat with a reference bot.
async fn play_seat(server: String, token: String, kind: Kind, seed: u64) -> Result<bool, String> {
    let mut bot = kind.bot(seed);
    let mut options = RunOptions::new(server, token);
    options.name = "loadgen-ladder".into();
    match tokio::time::timeout(PLAY_TIMEOUT, run(bot.as_mut(), &options)).await {
        Ok(Ok(report)) => Ok(report.status() == pb::MatchStatus::Finished),
        Ok(Err(e)) => Err(format!("a seat's run: {e}")),
        Err(_) => Err(format!("a seat's run took over {PLAY_TIMEOUT:?}")),
    }
}

fn with_bearer<T>(message: T, key: &str) -> Result<tonic::Request<T>, String> {
    let mut req = tonic::Request::new(message);
    let value = format!("Bearer {key}")
        .parse()
        .map_err(|_| "a key that is not ASCII".to_string())?;
    req.metadata_mut().insert("authorization", value);
    Ok(req)
}

async fn call<T>(
    what: &str,
    f: impl std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
) -> Result<T, String> {
    match tokio::time::timeout(CALL_TIMEOUT, f).await {
        Ok(Ok(r)) => Ok(r.into_inner()),
        Ok(Err(s)) => Err(format!("{what}: {} ({:?})", s.message(), s.code())),
        Err(_) => Err(format!("{what} took over {CALL_TIMEOUT:?}")),
    }
}

/// A registered version.
struct Entrant {
    bot_id: i64,
    key: String,
}

/// Registers `n` owners with one bot and one version each; names carry `tag` so that runs on a
/// shared store do not collide.
async fn register(
    client: &mut LadderServiceClient<Channel>,
    n: usize,
    tag: &str,
) -> Result<Vec<Entrant>, String> {
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let name = format!("lb-{tag}-{i}");
        let owner = call(
            "RegisterOwner",
            client.register_owner(pb::RegisterOwnerRequest {
                name: name.clone(),
                invitation_code: String::new(),
            }),
        )
        .await?;
        let bot = call(
            "RegisterBot",
            client.register_bot(with_bearer(
                pb::RegisterBotRequest {
                    name: format!("{name}-bot"),
                },
                &owner.owner_key,
            )?),
        )
        .await?;
        let version = call(
            "AddVersion",
            client.add_version(with_bearer(
                pb::AddVersionRequest {
                    bot_id: bot.bot_id,
                    label: "v1".into(),
                },
                &owner.owner_key,
            )?),
        )
        .await?;
        out.push(Entrant {
            bot_id: bot.bot_id,
            key: version.version_key,
        });
    }
    Ok(out)
}

/// One version's lobby: plays every invitation until told to stop, then drains.
#[allow(clippy::too_many_arguments)]
async fn lobby(
    url: String,
    key: String,
    kind: Kind,
    capacity: u32,
    seed: u64,
    tally: Arc<Tally>,
    mut stop: watch::Receiver<bool>,
) {
    if let Err(e) = lobby_inner(&url, &key, kind, capacity, seed, &tally, &mut stop).await {
        tally.error(e);
    }
}

async fn lobby_inner(
    url: &str,
    key: &str,
    kind: Kind,
    capacity: u32,
    seed: u64,
    tally: &Arc<Tally>,
    stop: &mut watch::Receiver<bool>,
) -> Result<(), String> {
    let mut client = LadderServiceClient::new(crate::connect(url, 1).await?.remove(0));
    let (tx, rx) = mpsc::channel(4);
    let hello = pb::LobbyRequest {
        kind: Some(pb::lobby_request::Kind::Hello(pb::LobbyHello {
            version_key: String::new(),
            max_matches: capacity,
            profiles: vec![PROFILE.name().into()],
            seats: vec![SEATS as u32],
        })),
    };
    tx.send(hello)
        .await
        .map_err(|_| "cannot queue the hello".to_string())?;
    let mut inbound = call(
        "Lobby",
        client.lobby(with_bearer(ReceiverStream::new(rx), key)?),
    )
    .await?;
    let mut plays = JoinSet::new();
    // When each match of this version ended, oldest first: the freed seats waiting for an
    // invitation.
    let mut freed: VecDeque<Instant> = VecDeque::new();
    let mut draining = false;
    let mut n = 0u64;
    loop {
        let message = tokio::select! {
            m = inbound.message() => m,
            _ = stop.changed(), if !draining => {
                draining = true;
                let drain = pb::LobbyRequest {
                    kind: Some(pb::lobby_request::Kind::Drain(pb::LobbyDrain {})),
                };
                tx.send(drain).await.map_err(|_| "cannot queue the drain".to_string())?;
                continue;
            }
            Some(done) = plays.join_next(), if !plays.is_empty() => {
                if let Err(e) = done {
                    tally.error(format!("a seat task: {e}"));
                }
                continue;
            }
        };
        use pb::lobby_response::Kind as K;
        match message {
            Ok(Some(pb::LobbyResponse { kind: Some(k) })) => match k {
                K::Invitation(inv) => {
                    let now = Instant::now();
                    if let Some(t) = freed.pop_front()
                        && tally.window.contains(now)
                    {
                        tally.samples().replan.push(now - t);
                    }
                    n += 1;
                    let server = if inv.node_address.is_empty() {
                        url.to_string()
                    } else {
                        inv.node_address.clone()
                    };
                    let bot_seed = seed ^ n.wrapping_mul(maumau_engine::seed::GAMMA);
                    let tally = tally.clone();
                    plays.spawn(async move {
                        let start = Instant::now();
                        let played = play_seat(server, inv.seat_token, kind, bot_seed).await;
                        let end = Instant::now();
                        tally.played(start, end);
                        match played {
                            Ok(true) => tally.table_ended(inv.ladder_match_id, end),
                            Ok(false) => {}
                            Err(e) => tally.error(e),
                        }
                    });
                }
                K::MatchEnded(e) => {
                    freed.push_back(Instant::now());
                    tally.ladder_ended(&e);
                }
                K::Drained(_) => break,
                // A version that passed validation is told it is active: expected, not an
                // error. Any other status (paused, banned, rejected) is one.
                K::Notice(n) if n.status() == pb::VersionStatus::Active => {}
                K::Notice(n) => {
                    tally.error(format!("lobby notice: {:?} ({})", n.status(), n.reason))
                }
                // Why the lobby waits: expected between invitations.
                K::Welcome(_) | K::Waiting(_) => {}
            },
            Ok(Some(_)) => return Err("a lobby message without a kind".into()),
            Ok(None) if draining => break,
            Ok(None) => return Err("the lobby closed before it was drained".into()),
            Err(s) => return Err(format!("lobby: {} ({:?})", s.message(), s.code())),
        }
    }
    while let Some(done) = plays.join_next().await {
        if let Err(e) = done {
            tally.error(format!("a seat task: {e}"));
        }
    }
    Ok(())
}

/// One measured side.
struct Side {
    name: String,
    seconds: f64,
    matches: u64,
    total: u64,
    aborted: u64,
    /// Rated matches of our bots in the store (leaderboard), ladder sides only.
    board: Option<u64>,
    server: Counters,
    client: Counters,
    servers: usize,
    rss_kb: u64,
    play: Summary,
    record: Summary,
    replan: Summary,
    /// Share of the declared seat capacity spent in runs.
    busy: f64,
    errors: u64,
    first_error: Option<String>,
}

impl Side {
    fn per_hour(&self) -> f64 {
        self.matches as f64 * 3600.0 / self.seconds
    }

    fn ms_per_match(&self, cpu: f64) -> f64 {
        cpu * 1000.0 / self.matches as f64
    }

    /// The servers' and this process's share of the CPU time the whole machine spent over the
    /// window (see `maumau_benchkit::machine_verdict`).
    fn cpu_share(&self) -> f64 {
        (self.server.cpu + self.client.cpu) / self.client.machine
    }
}

fn sum_counters(servers: &[ChildServer]) -> Counters {
    let mut total = Counters::default();
    for s in servers {
        let c = s.counters();
        total.cpu += c.cpu;
        total.reads += c.reads;
        total.writes += c.writes;
        total.switches += c.switches;
    }
    total
}

/// Prints a progress line every `every` until the window closes; returns the servers' and this
/// process's counters over the window.
async fn watch_window(
    name: &str,
    servers: &[ChildServer],
    tally: &Tally,
    every: Duration,
) -> (Counters, Counters) {
    let window = tally.window;
    let started = Instant::now();
    let mut at_start = None;
    let mut last = (started, 0u64, sum_counters(servers).cpu);
    let mut tick = tokio::time::interval_at(started + every, every);
    loop {
        let now = Instant::now();
        if at_start.is_none() && now >= window.start {
            at_start = Some((sum_counters(servers), Counters::read("self")));
        }
        if now >= window.end {
            break;
        }
        tokio::select! {
            _ = tick.tick() => {}
            () = tokio::time::sleep_until(window.start), if at_start.is_none() => continue,
            () = tokio::time::sleep_until(window.end) => continue,
        }
        let now = Instant::now();
        let total = tally.total.load(Ordering::Relaxed);
        let cpu = sum_counters(servers).cpu;
        let dt = (now - last.0).as_secs_f64();
        let measured = if now > window.start {
            let secs = (now.min(window.end) - window.start).as_secs_f64();
            format!(
                "{:>6.0}/h measured",
                tally.in_window.load(Ordering::Relaxed) as f64 * 3600.0 / secs
            )
        } else {
            "warming up".to_string()
        };
        eprintln!(
            "[{name}] {:>5.0} s  {total:>6} matches  +{:<4} = {:>6.0}/h  {measured}  server {:.2} \
             cores  errors {}",
            (now - started).as_secs_f64(),
            total - last.1,
            (total - last.1) as f64 * 3600.0 / dt,
            (cpu - last.2) / dt,
            tally.errors.load(Ordering::Relaxed)
        );
        last = (now, total, cpu);
    }
    let (s0, c0) = at_start.unwrap_or_else(|| (sum_counters(servers), Counters::read("self")));
    (
        sum_counters(servers).since(&s0),
        Counters::read("self").since(&c0),
    )
}

/// Rated matches of `bots` in the store: their leaderboard lines' match counts, four per match.
async fn board_matches(
    client: &mut LadderServiceClient<Channel>,
    bots: &HashSet<i64>,
) -> Result<u64, String> {
    let mut token = String::new();
    let mut seats = 0u64;
    for _ in 0..10_000 {
        let page = call(
            "GetLeaderboard",
            client.get_leaderboard(pb::GetLeaderboardRequest {
                season: String::new(),
                profile: PROFILE.name().into(),
                page_size: 500,
                page_token: token.clone(),
            }),
        )
        .await?;
        seats += page
            .standings
            .iter()
            .filter(|s| bots.contains(&s.bot_id))
            .map(|s| u64::from(s.matches))
            .sum::<u64>();
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    Ok(seats / SEATS as u64)
}

fn finish(
    name: String,
    tally: &Tally,
    counters: (Counters, Counters),
    servers: &[ChildServer],
    seat_capacity: usize,
    board: Option<u64>,
) -> Side {
    let rss_kb = servers.iter().map(ChildServer::rss_kb).sum();
    let mut s = tally.samples();
    let seconds = tally.window.seconds();
    Side {
        name,
        seconds,
        matches: tally.in_window.load(Ordering::Relaxed),
        total: tally.total.load(Ordering::Relaxed),
        aborted: tally.aborted.load(Ordering::Relaxed),
        board,
        server: counters.0,
        client: counters.1,
        servers: servers.len(),
        rss_kb,
        play: std::mem::take(&mut s.play).summary(),
        record: std::mem::take(&mut s.record).summary(),
        replan: std::mem::take(&mut s.replan).summary(),
        busy: s.busy / (seat_capacity as f64 * seconds),
        errors: tally.errors.load(Ordering::Relaxed),
        first_error: lock(&tally.first_error).clone(),
    }
}

/// The ladder side on `n` nodes.
async fn ladder_side(args: &LadderArgs, bin: &PathBuf, n: usize) -> Result<Side, String> {
    let name = format!("ladder {n} node{}", if n == 1 { "" } else { "s" });
    eprintln!("loadgen: {name}: starting");
    let servers = start_nodes(args, bin, n)?;
    let urls: Vec<String> = servers.iter().map(ChildServer::url).collect();
    let mut admin = LadderServiceClient::new(crate::connect(&urls[0], 1).await?.remove(0));
    let tag = format!(
        "{}-{}-{n}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis())
    );
    let entrants = register(&mut admin, args.bots, &tag).await?;
    eprintln!(
        "loadgen: {name}: {} versions registered, opening lobbies",
        entrants.len()
    );
    let tally = Arc::new(Tally::new(args.window(false)));
    let (stop, stopped) = watch::channel(false);
    let lobbies: Vec<_> = entrants
        .iter()
        .enumerate()
        .map(|(i, e)| {
            tokio::spawn(lobby(
                urls[i % urls.len()].clone(),
                e.key.clone(),
                args.kind(i),
                args.capacity,
                args.seed.wrapping_add(i as u64 * 1_000_003),
                tally.clone(),
                stopped.clone(),
            ))
        })
        .collect();
    let counters = watch_window(
        &name,
        &servers,
        &tally,
        Duration::from_secs_f64(args.progress),
    )
    .await;
    let _ = stop.send(true);
    let until = Instant::now() + DRAIN_TIMEOUT;
    for mut l in lobbies {
        if tokio::time::timeout_at(until, &mut l).await.is_err() {
            l.abort();
            tally.error(format!("a lobby did not drain within {DRAIN_TIMEOUT:?}"));
        }
    }
    let bots: HashSet<i64> = entrants.iter().map(|e| e.bot_id).collect();
    let board = match board_matches(&mut admin, &bots).await {
        Ok(b) => Some(b),
        Err(e) => {
            tally.error(e);
            None
        }
    };
    let side = finish(
        name,
        &tally,
        counters,
        &servers,
        args.bots * args.capacity as usize,
        board,
    );
    if side.errors > 0 {
        for s in &servers {
            eprintln!("loadgen: server {} log tail:\n{}", s.pid(), s.log_tail());
        }
    }
    for s in servers {
        s.stop();
    }
    Ok(side)
}

/// The direct side: `args.tables()` slots, each creating and playing one match after another.
async fn direct_side(args: &LadderArgs, bin: &PathBuf) -> Result<Side, String> {
    let name = "direct".to_string();
    eprintln!("loadgen: {name}: starting");
    let server = start_server(args, bin, false, 0, "")?;
    let url = server.url();
    let control = MatchServiceClient::new(crate::connect(&url, 1).await?.remove(0));
    let tally = Arc::new(Tally::new(args.window(true)));
    let config = pb::MatchConfig::from(MatchConfig::new(PROFILE, SEATS as u8));
    let slots: Vec<_> = (0..args.tables())
        .map(|j| {
            let kinds: Vec<Kind> = (0..SEATS).map(|s| args.kind(j * SEATS + s)).collect();
            tokio::spawn(direct_slot(
                j as u64,
                url.clone(),
                control.clone(),
                config,
                kinds,
                args.seed,
                tally.clone(),
            ))
        })
        .collect();
    let servers = [server];
    let counters = watch_window(
        &name,
        &servers,
        &tally,
        Duration::from_secs_f64(args.progress),
    )
    .await;
    let until = Instant::now() + DRAIN_TIMEOUT;
    for mut s in slots {
        if tokio::time::timeout_at(until, &mut s).await.is_err() {
            s.abort();
            tally.error(format!("a slot did not finish within {DRAIN_TIMEOUT:?}"));
        }
    }
    let side = finish(
        name,
        &tally,
        counters,
        &servers,
        args.tables() * SEATS,
        None,
    );
    let [server] = servers;
    if side.errors > 0 {
        eprintln!("loadgen: server log tail:\n{}", server.log_tail());
    }
    server.stop();
    Ok(side)
}

async fn direct_slot(
    index: u64,
    url: String,
    mut control: MatchServiceClient<Channel>,
    config: pb::MatchConfig,
    kinds: Vec<Kind>,
    seed: u64,
    tally: Arc<Tally>,
) {
    let mut n = 0u64;
    while !tally.window.over() {
        n += 1;
        let match_seed = seed ^ (index << 40) ^ n;
        let request = pb::CreateMatchRequest {
            config: Some(config),
            seed: Some(match_seed),
            label: "loadgen ladder baseline".into(),
            ..Default::default()
        };
        let created = match call("CreateMatch", control.create_match(request)).await {
            Ok(c) => c,
            Err(e) => {
                tally.error(e);
                return;
            }
        };
        let mut seats = JoinSet::new();
        for t in created.seat_tokens {
            let kind = kinds[t.seat as usize % kinds.len()];
            let bot_seed = match_seed.wrapping_mul(31).wrapping_add(u64::from(t.seat));
            let server = url.clone();
            seats.spawn(async move {
                let start = Instant::now();
                let r = play_seat(server, t.token, kind, bot_seed).await;
                (r, start, Instant::now())
            });
        }
        let mut finished = seats.len() == SEATS;
        while let Some(done) = seats.join_next().await {
            match done {
                Ok((r, start, end)) => {
                    tally.played(start, end);
                    match r {
                        Ok(f) => finished &= f,
                        Err(e) => {
                            finished = false;
                            tally.error(e);
                        }
                    }
                }
                Err(e) => {
                    finished = false;
                    tally.error(format!("a seat task: {e}"));
                }
            }
        }
        tally.match_ended(finished);
        if tally.errors.load(Ordering::Relaxed) > 0 && !finished {
            // Do not spin on a failing server.
            return;
        }
    }
}

fn ms(s: &Summary) -> String {
    format!("{:.0}/{:.0}", s.p50_us / 1000.0, s.p99_us / 1000.0)
}

fn print_report(args: &LadderArgs, sides: &[Side], loadavg_before: &str) {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let mix: Vec<String> = args
        .mix
        .iter()
        .map(|k| format!("{k:?}").to_lowercase())
        .collect();
    println!();
    println!(
        "== Ladder throughput: {} bots ({}) × {} matches at once = at most {} tables; \
         4-seat {}; {:.1} min (direct {:.1} min) measured after {:.0} s warm-up per side; \
         {cpus} CPUs; store: {} ==",
        args.bots,
        mix.join(","),
        args.capacity,
        args.tables(),
        PROFILE.name(),
        args.minutes,
        args.direct_minutes.unwrap_or(args.minutes),
        args.warmup,
        args.store.as_deref().unwrap_or("SQLite (server data dir)")
    );
    println!("load average before: {}", loadavg_before.trim());
    println!("load average after:  {}", crate::loadavg().trim());
    println!();
    println!(
        "{:<16} {:>8} {:>10} {:>8} {:>9} {:>12} {:>12} {:>10} {:>9} {:>13} {:>8} {:>7}",
        "side",
        "matches",
        "matches/h",
        "≥10k/h",
        "srv cores",
        "srv CPU ms/m",
        "bots CPU ms/m",
        "srv RSS MB",
        "seat busy",
        "match p50/p99 ms",
        "aborted",
        "errors"
    );
    for s in sides {
        println!(
            "{:<16} {:>8} {:>10.0} {:>8} {:>9.2} {:>12.2} {:>12.2} {:>10.1} {:>8.0}% {:>13} {:>8} {:>7}",
            s.name,
            s.matches,
            s.per_hour(),
            if s.name.starts_with("ladder") {
                maumau_benchkit::machine_mark(s.per_hour() >= TARGET_PER_HOUR, s.cpu_share())
            } else {
                "-"
            },
            s.server.cpu / s.seconds,
            s.ms_per_match(s.server.cpu),
            s.ms_per_match(s.client.cpu),
            crate::mb(s.rss_kb),
            s.busy * 100.0,
            ms(&s.play),
            s.aborted,
            s.errors
        );
    }
    // Wall-clock targets are judged only for a run that had the machine (nearly) to itself.
    let shares: Vec<String> = sides
        .iter()
        .map(|s| format!("{} {:.2}", s.name, s.cpu_share()))
        .collect();
    println!(
        "CPU share (servers + bots ÷ the machine's busy CPU; targets judged from {}): {}",
        maumau_benchkit::MIN_SHARE,
        shares.join(", ")
    );
    let ladder: Vec<&Side> = sides
        .iter()
        .filter(|s| s.name.starts_with("ladder"))
        .collect();
    println!();
    println!(
        "-- The ladder's time (ms, p50/p99, in the window): `recorded` = table end (first seat's \
         report) → LadderMatchEnded (watcher, store write, rating); `next invitation` = \
         LadderMatchEnded → the version's next Invitation (matchmaker, store, table creation)"
    );
    for s in &ladder {
        println!(
            "{:<16} recorded {:>10}  next invitation {:>10}  rated in the store: {} (counted {} \
             from LadderMatchEnded, warm-up and drain included)",
            s.name,
            ms(&s.record),
            ms(&s.replan),
            s.board.map_or("?".into(), |b| b.to_string()),
            s.total
        );
    }
    if let Some(direct) = sides.iter().find(|s| s.name == "direct") {
        println!();
        for s in &ladder {
            let r = s.per_hour() / direct.per_hour();
            println!(
                "-- {} ÷ direct: {r:.3} (target ≥ {TARGET_RATIO}: {}); server CPU per match × {:.2}",
                s.name,
                maumau_benchkit::machine_verdict(
                    r >= TARGET_RATIO,
                    s.cpu_share().min(direct.cpu_share())
                ),
                s.ms_per_match(s.server.cpu) / direct.ms_per_match(direct.server.cpu)
            );
        }
    }
    if let (Some(one), true) = (ladder.iter().find(|s| s.servers == 1), args.nodes > 1) {
        for s in ladder.iter().filter(|s| s.servers > 1) {
            let r = s.per_hour() / one.per_hour();
            println!(
                "-- {} ÷ {}: {r:.3} (target ≥ {TARGET_RATIO}: {})",
                s.name,
                one.name,
                maumau_benchkit::machine_verdict(
                    r >= TARGET_RATIO,
                    s.cpu_share().min(one.cpu_share())
                )
            );
        }
    }
    for s in sides.iter().filter(|s| s.errors > 0) {
        println!(
            "note: {}: {} errors, first: {}",
            s.name,
            s.errors,
            s.first_error.as_deref().unwrap_or("?")
        );
    }
}

/// Runs the ladder benchmark (`maumau-loadgen ladder`).
pub(crate) async fn bench(args: LadderArgs) -> Result<(), String> {
    args.check()?;
    let loadavg_before = crate::loadavg();
    let bin = crate::server_bin(args.server_bin.as_ref())?;
    if args.store.is_some() && !serve_has_store(&bin)? {
        return Err(format!(
            "--store: {} has no `serve --store` option yet (the PostgreSQL ladder store has not \
             landed in this build); run without --store and --nodes for the one-node SQLite \
             figures",
            bin.display()
        ));
    }
    let mut sides = Vec::new();
    sides.push(ladder_side(&args, &bin, args.nodes).await?);
    if args.nodes > 1 {
        sides.push(ladder_side(&args, &bin, 1).await?);
    }
    if !args.no_direct {
        sides.push(direct_side(&args, &bin).await?);
    }
    print_report(&args, &sides, &loadavg_before);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: LadderArgs,
    }

    fn parse(argv: &[&str]) -> LadderArgs {
        Cli::try_parse_from(std::iter::once("ladder").chain(argv.iter().copied()))
            .expect("parses")
            .args
    }

    #[test]
    fn the_ladder_config_makes_4_seat_classic_only() {
        let args = parse(&["--join-deadline-ms", "5000"]);
        let c = server_config(Some((&args, "http://127.0.0.1:7")));
        let value: toml::Table = c.parse().expect("valid TOML");
        assert_eq!(value["ladder"].as_bool(), Some(true));
        assert_eq!(value["ladder_join_deadline_ms"].as_integer(), Some(5000));
        assert_eq!(
            value["ladder_node_address"].as_str(),
            Some("http://127.0.0.1:7")
        );
        let formats = value["ladder_formats"].as_array().expect("formats");
        assert_eq!(formats.len(), 1);
        assert_eq!(formats[0]["profile"].as_str(), Some("classic"));
        assert_eq!(formats[0]["seats"].as_integer(), Some(4));
        let plain: toml::Table = server_config(None).parse().expect("valid TOML");
        assert!(!plain.contains_key("ladder"));
        assert_eq!(plain["max_open_matches"], value["max_open_matches"]);
    }

    #[test]
    fn bad_arguments_are_refused() {
        assert!(parse(&[]).check().is_ok());
        assert_eq!(parse(&[]).tables(), 8);
        assert!(parse(&["--bots", "3"]).check().is_err());
        assert!(parse(&["--capacity", "0"]).check().is_err());
        assert!(parse(&["--bots", "5", "--capacity", "1"]).check().is_ok());
        let several = parse(&["--nodes", "3"]).check().expect_err("needs a store");
        assert!(several.contains("--store"), "{several}");
        assert!(
            parse(&["--nodes", "3", "--store", "postgres://x"])
                .check()
                .is_ok()
        );
        assert!(parse(&["--minutes", "0"]).check().is_err());
        assert!(parse(&["--direct-minutes=-1"]).check().is_err());
        assert!(
            parse(&["--minutes", "30", "--direct-minutes", "5"])
                .check()
                .is_ok()
        );
    }

    #[test]
    fn bots_are_assigned_in_turn() {
        let args = parse(&["--mix", "random,heuristic,heuristic"]);
        let kinds: Vec<Kind> = (0..4).map(|i| args.kind(i)).collect();
        assert_eq!(
            kinds,
            [Kind::Random, Kind::Heuristic, Kind::Heuristic, Kind::Random]
        );
    }

    #[test]
    fn busy_time_is_clipped_to_the_window() {
        let window = Window::after(Duration::from_secs(10), Duration::from_secs(10));
        let s = window.start;
        let sec = Duration::from_secs;
        assert_eq!(overlap(s - sec(5), s + sec(2), window), 2.0);
        assert_eq!(overlap(s + sec(2), s + sec(3), window), 1.0);
        assert_eq!(overlap(s + sec(8), s + sec(30), window), 2.0);
        assert_eq!(overlap(s - sec(5), s - sec(1), window), 0.0);
    }

    #[test]
    fn a_ladder_match_counts_once() {
        let tally = Tally::new(Window::after(Duration::ZERO, Duration::from_secs(3600)));
        let ended = pb::LadderMatchEnded {
            ladder_match_id: 7,
            finished: true,
            rated: true,
            ..Default::default()
        };
        tally.table_ended(7, Instant::now());
        for _ in 0..SEATS {
            tally.ladder_ended(&ended);
        }
        tally.ladder_ended(&pb::LadderMatchEnded {
            ladder_match_id: 8,
            finished: false,
            ..Default::default()
        });
        assert_eq!(tally.total.load(Ordering::Relaxed), 1);
        assert_eq!(tally.in_window.load(Ordering::Relaxed), 1);
        assert_eq!(tally.aborted.load(Ordering::Relaxed), 1);
        assert!(lock(&tally.table_end).is_empty());
        // A seat that reports after the match was counted leaves nothing behind.
        tally.table_ended(7, Instant::now());
        assert!(lock(&tally.table_end).is_empty());
    }
}
