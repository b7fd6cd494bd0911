//! The ladder as a service (`maumau serve --ladder`): the `maumau.v1.LadderService` over the
//! ladder core (`maumau-ladder`), a matchmaker task, one watcher task per ladder match, and the
//! web pages, all running on the game server through its host API (`maumau_server::Host` to
//! create, await and abort matches; `maumau_server::Extension` to add the service, the pages and
//! the shutdown steps). [`run`] serves a game server with a ladder on it.
//!
//! The parts:
//!
//! - `Hub` (here): the shared state. The ladder store (SQLite in `<data_dir>/ladder`, whose
//!   own lock refuses a second process, or PostgreSQL with `LadderSettings::store`), the open
//!   lobbies (one per version, in memory) and the formats the matchmaker makes. The store keeps
//!   each ladder match's table on the game server (its `server_match_id`, recorded when the
//!   matchmaker creates it), so pages and calls find a match's viewer and replay from the store,
//!   after a restart too (`Hub::table_here`). Store calls are synchronous and run on blocking
//!   threads (`Hub::store`).
//! - `matchmaker.rs`: whenever a lobby opens, a match ends, or a tick passes, plans tables for
//!   the free capacity with the core's seeded planner (real bots first, then the house bots
//!   filling what they left), tells each lobby without an invitation why it waits (only when
//!   that changed), schedules the tables in the store, creates them
//!   on the game server (rated, from the planned seed), sends the invitations, and watches
//!   each match: a seat not joined by the deadline aborts it unrated (a no-show for health); a
//!   finished match's placings are rated.
//! - `service.rs`: the gRPC calls.
//! - `html.rs`: the web pages (leaderboard, bots, matches, replay downloads) on the same port.
//! - `nodes.rs`: with PostgreSQL, this process is one node of a ladder shared by several: it
//!   publishes its lobbies, claims scheduled matches from the store's work queue and hosts them
//!   under a lease, and carries lobby messages through the store (see `docs/LADDER.md`).
//!
//! Locks are plain `std::sync::Mutex`es over small maps, never held across an `.await`.

mod html;
mod matchmaker;
mod nodes;
mod service;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use maumau::pb;
use maumau_engine::{MatchConfig, ProfileId};
use maumau_ladder::keys::RegistrationPolicy;
use maumau_ladder::matchmaking::Format;
use maumau_ladder::store::PoolLimits;
use maumau_ladder::validation::ValidationPolicy;
use maumau_ladder::{
    Eligibility, Ladder, LadderConfig, LadderError, Lobby, Millis, OwnerId, PgStore, SqliteStore,
    Store, VersionId,
};
use rand::rngs::ChaCha20Rng;
use rand::{Rng, SeedableRng};
use tokio::sync::{Notify, mpsc, oneshot, watch};
use tonic::Status;

use maumau_server::{Host, PerAddress, echo};

use service::LadderApi;

/// A ladder format: a profile and table size with the operator's weight.
pub use maumau_ladder::matchmaking::Format as LadderFormat;
/// Whether the ladder validates new versions, and what fails them.
pub use maumau_ladder::validation::ValidationPolicy as LadderValidation;

/// Serves a game server with the ladder on it (`maumau serve --ladder`), until `shutdown`
/// completes: the game services of [`maumau_server::run_with_ready`], plus the
/// `LadderService`, its matchmaker and the ladder's web pages on the same port, with the store in
/// `<data_dir>/ladder` (or PostgreSQL, [`LadderSettings::store`]). `ready` is called with the
/// listening address once the ladder has started. At shutdown the ladder drains first (see
/// [`LadderSettings::drain_timeout`]), then the server records the matches left.
pub async fn run(
    listener: tokio::net::TcpListener,
    config: maumau_server::ServerConfig,
    settings: LadderSettings,
    ready: impl FnOnce(std::net::SocketAddr) + Send,
    shutdown: impl std::future::Future<Output = ()> + Send,
) -> Result<(), maumau_server::ServerError> {
    let extend = move |host: Host, addr: std::net::SocketAddr| async move {
        let hub = Hub::start(host, settings, addr).await.map_err(|e| {
            maumau_server::ServerError::Extension(format!("cannot start the ladder: {e}"))
        })?;
        let ladder = OnServer {
            pages: html::Pages::new(hub.clone()),
            hub,
        };
        Ok(Some(Arc::new(ladder) as Arc<dyn maumau_server::Extension>))
    };
    maumau_server::run_extended(listener, config, extend, ready, shutdown).await
}

/// The ladder as the game server runs it.
struct OnServer {
    hub: Arc<Hub>,
    pages: html::Pages,
}

impl maumau_server::Extension for OnServer {
    fn add_services(&self, routes: &mut tonic::service::RoutesBuilder, max_message_bytes: usize) {
        routes.add_service(
            pb::ladder_service_server::LadderServiceServer::new(LadderApi {
                hub: self.hub.clone(),
            })
            .max_decoding_message_size(max_message_bytes),
        );
    }

    fn service_names(&self) -> Vec<String> {
        use tonic::server::NamedService;
        vec![pb::ladder_service_server::LadderServiceServer::<LadderApi>::NAME.to_string()]
    }

    fn page(
        &self,
        uri: &tonic::codegen::http::Uri,
        head: bool,
    ) -> Option<maumau_server::BoxFuture<'static, maumau_server::PageResponse>> {
        Some(self.pages.answer(uri, head))
    }

    fn drain(&self) -> maumau_server::BoxFuture<'_, ()> {
        Box::pin(async {
            tracing::info!("shutting down: draining the ladder");
            self.hub.shutdown().await;
        })
    }

    fn matches_closed(&self) -> maumau_server::BoxFuture<'_, ()> {
        Box::pin(self.hub.close_lobbies())
    }

    fn release(&self) -> maumau_server::BoxFuture<'_, ()> {
        Box::pin(self.hub.release())
    }

    fn health(&self) -> Option<watch::Receiver<bool>> {
        self.hub.cluster.as_ref().map(|c| c.available.subscribe())
    }
}

/// How the ladder runs. `LadderSettings::default()` is an open ladder with every profile.
#[derive(Clone, Debug)]
pub struct LadderSettings {
    /// The formats (profile, table size, weight) the matchmaker makes; operators may replace them
    /// at run time (SetFormats).
    pub formats: Vec<Format>,
    /// Invitation codes; empty means anyone may register.
    pub invitation_codes: Vec<String>,
    /// How long an invited seat has to join before the match is aborted unrated. Keep it shorter
    /// than [`ServerConfig::join_timeout`](maumau_server::ServerConfig::join_timeout), which starts a
    /// table without its missing seats.
    pub join_deadline: Duration,
    /// How long a version paused for health waits at least after its last match before it is
    /// offered its next probe match (each failed probe about doubles the wait, up to 32 of
    /// these: [`maumau_ladder::health::probe_wait`]): a program that fails at once (and withdraws
    /// its seat) costs its opponents fewer and fewer aborted matches, not one per matchmaking
    /// round.
    pub probe_interval: Duration,
    /// The address sent in invitations; empty means "this server".
    pub node_address: String,
    /// The season opened when the ladder has none yet.
    pub first_season: String,
    /// How often the matchmaker looks at the lobbies when nothing else wakes it.
    pub tick: Duration,
    /// A PostgreSQL URL (`postgres://user@host/db`) for a ladder shared by several server
    /// processes; `None` keeps it in SQLite in `<data_dir>/ladder`, held by this process alone.
    pub store: Option<String>,
    /// Connections the PostgreSQL store opens at most (its pool; the matchmaker's node holds one
    /// more); calls beyond it wait up to 5 s for one, then fail UNAVAILABLE. Default 10.
    pub store_max_connections: usize,
    /// Whether new versions first play unrated validation matches (one per profile they accept,
    /// as copies of themselves beside the built-in heuristic and random bots), and what fails
    /// them.
    pub validation: ValidationPolicy,
    /// How long a stopping server lets its ladder matches play on (it invites nobody meanwhile)
    /// before it aborts the rest; lobbies get LobbyDrained once their matches have ended.
    pub drain_timeout: Duration,
    /// Seeds the matchmaker's draws (tables and deals), for reproducible runs; `None` draws a
    /// seed from the operating system.
    pub seed: Option<u64>,
    /// Registrations (RegisterOwner, RegisterBot, AddVersion and RotateKey: every call that
    /// creates an owner, a bot, a version or a key) one client IP address (for IPv6, one /64
    /// network) may make per minute, at most this many at once; more are refused with
    /// `LADDER_ERROR_REASON_RATE_LIMITED`. Each owner has a budget of the same size too, spent
    /// by the calls made with its key, from whatever address.
    pub registrations_per_minute: u32,
    /// Most versions one bot may have, retired ones included; AddVersion beyond it is refused
    /// with `LADDER_ERROR_REASON_STATE`.
    pub max_versions: usize,
    /// House bots: built-in bots kept on the ladder (`serve --house-bots heuristic,search`),
    /// registered under the reserved owner `house`, one bot per kind. They only fill tables a
    /// real bot would otherwise wait for, never a seat a real bot could take, and (one owner)
    /// never sit together. Not on a ladder shared through PostgreSQL.
    pub house_bots: Vec<pb::BotKind>,
    /// Matches each house bot plays at once.
    pub house_matches: u32,
}

impl Default for LadderSettings {
    fn default() -> LadderSettings {
        LadderSettings {
            formats: default_formats(),
            invitation_codes: Vec::new(),
            join_deadline: Duration::from_secs(30),
            probe_interval: Duration::from_secs(30),
            node_address: String::new(),
            first_season: "season-1".into(),
            tick: Duration::from_secs(2),
            store: None,
            store_max_connections: PoolLimits::default().max_connections,
            validation: ValidationPolicy::default(),
            drain_timeout: Duration::from_secs(60),
            seed: None,
            registrations_per_minute: 30,
            max_versions: maumau_ladder::MAX_VERSIONS,
            house_bots: Vec::new(),
            house_matches: 4,
        }
    }
}

/// Every profile at every table size from 2 to 4 that it allows, all of weight 1.
pub fn default_formats() -> Vec<Format> {
    let mut out = Vec::new();
    for p in ProfileId::ALL {
        for seats in 2..=4 {
            if check_format(p.name(), seats).is_ok() {
                out.push(Format {
                    profile: p.name().into(),
                    seats,
                    weight: 1.0,
                });
            }
        }
    }
    out
}

/// Says so at start when an operator set formats (SetFormats, kept in the store) that differ
/// from the configuration's, which then do not apply (a SetFormats with them restores them).
fn warn_if_formats_differ(configured: &[Format], stored: Option<(Vec<Format>, i64)>) {
    if let Some((set, set_ms)) = stored
        && set != configured
    {
        tracing::warn!(
            set_ms,
            set = %describe_formats(&set),
            configured = %describe_formats(configured),
            "the ladder makes the formats an operator set with SetFormats, not the \
             configuration's (SetFormats with the configuration's formats restores them)"
        );
    }
}

/// The formats the matchmaker makes now: those an operator set (kept in `store`), else the
/// configuration's.
pub(crate) fn formats_in(
    store: &dyn Store,
    configured: &[Format],
) -> maumau_ladder::Result<Vec<Format>> {
    Ok(store
        .formats()?
        .map_or_else(|| configured.to_vec(), |(set, _)| set))
}

/// Formats as `classic/4:1, brazilian/2:0.5`.
fn describe_formats(formats: &[Format]) -> String {
    formats
        .iter()
        .map(|f| format!("{}/{}:{}", f.profile, f.seats, f.weight))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The match configuration of a format, or why it is not one.
pub(crate) fn check_format(profile: &str, seats: u8) -> Result<MatchConfig, String> {
    let id: ProfileId = profile
        .parse()
        .map_err(|_| format!("unknown profile {:?}", echo(profile)))?;
    let config = MatchConfig::new(id, seats);
    config
        .rules()
        .map_err(|e| format!("{profile} at {seats} seats: {e}"))?;
    Ok(config)
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> Millis {
    maumau_server::now_ms() as Millis
}

use maumau_server::sync::lock;

/// The trailer naming a [`pb::LadderErrorReason`].
pub const LADDER_REASON_TRAILER: &str = "maumau-ladder-reason";

/// A refusal with its gRPC code, ladder reason and (when one fits) general reason.
pub(crate) fn refuse(
    reason: pb::LadderErrorReason,
    general: Option<pb::ErrorReason>,
    message: impl Into<String>,
) -> Status {
    use pb::LadderErrorReason as R;
    let code = match reason {
        R::BadKey => tonic::Code::Unauthenticated,
        R::Forbidden | R::InvitationRequired | R::OperatorOnly => tonic::Code::PermissionDenied,
        R::NotFound => tonic::Code::NotFound,
        R::Duplicate => tonic::Code::AlreadyExists,
        R::Invalid | R::NoHello => tonic::Code::InvalidArgument,
        R::State => tonic::Code::FailedPrecondition,
        R::Superseded => tonic::Code::Aborted,
        R::Storage => tonic::Code::Unavailable,
        R::RateLimited => tonic::Code::ResourceExhausted,
        R::Unspecified => tonic::Code::Unknown,
    };
    let mut status = Status::new(code, message);
    if let Some(g) = general {
        status.metadata_mut().insert(
            maumau::wire::REASON_TRAILER,
            tonic::metadata::MetadataValue::from_static(g.as_str_name()),
        );
    }
    status.metadata_mut().insert(
        LADDER_REASON_TRAILER,
        tonic::metadata::MetadataValue::from_static(reason.as_str_name()),
    );
    status
}

/// What a caller is told while the store cannot be reached (the detail is logged once, when the
/// outage starts: it names the database's host and user).
pub(crate) const STORE_UNAVAILABLE: &str = "the ladder's store is unavailable; try again shortly";

/// Whether a status is [`STORE_UNAVAILABLE`] (an outage is logged once, not per failed call).
pub(crate) fn is_outage(s: &Status) -> bool {
    s.code() == tonic::Code::Unavailable && s.message() == STORE_UNAVAILABLE
}

/// What a caller is told while every connection to the store is in use.
pub(crate) const STORE_BUSY: &str = "the ladder's store is busy; try again shortly";

/// What a caller is told when the store failed otherwise (the detail is logged: it may name the
/// database, its host or a file).
pub(crate) const STORE_FAILED: &str = "the ladder's store failed; the server's log has the detail";

/// The one conversion from the core's errors to a gRPC status.
pub(crate) fn to_status(e: LadderError) -> Status {
    use pb::ErrorReason as G;
    use pb::LadderErrorReason as R;
    let message = e.to_string();
    match e {
        LadderError::Unauthenticated => refuse(R::BadKey, Some(G::BadToken), message),
        LadderError::Forbidden(_) => refuse(R::Forbidden, Some(G::PermissionDenied), message),
        LadderError::InvitationRequired => {
            refuse(R::InvitationRequired, Some(G::PermissionDenied), message)
        }
        LadderError::NotFound { .. } => refuse(R::NotFound, None, message),
        LadderError::Duplicate { .. } => refuse(R::Duplicate, Some(G::InvalidArgument), message),
        LadderError::Invalid(_) => refuse(R::Invalid, Some(G::InvalidArgument), message),
        LadderError::State(_) => refuse(R::State, None, message),
        LadderError::Unavailable(_) => refuse(R::Storage, Some(G::Unavailable), STORE_UNAVAILABLE),
        LadderError::Busy(_) => {
            tracing::debug!(error = %message, "a ladder call found the store busy");
            refuse(R::Storage, Some(G::Unavailable), STORE_BUSY)
        }
        LadderError::Locked { .. }
        | LadderError::Io(_)
        | LadderError::Database(_)
        | LadderError::SchemaTooNew { .. } => {
            tracing::error!(error = %message, "ladder storage failed");
            refuse(R::Storage, Some(G::Unavailable), STORE_FAILED)
        }
    }
}

/// The wire status of a version.
pub(crate) fn status_to_wire(e: &Eligibility) -> (pb::VersionStatus, String) {
    match e {
        Eligibility::Active => (pb::VersionStatus::Active, String::new()),
        Eligibility::Validating => (
            pb::VersionStatus::Validating,
            "new: it plays unrated validation matches before it is rated".into(),
        ),
        Eligibility::Rejected { reason } => (pb::VersionStatus::Rejected, reason.clone()),
        Eligibility::Probe { reason, .. } => (pb::VersionStatus::HealthPaused, reason.clone()),
        Eligibility::Paused { reason } => (pb::VersionStatus::Paused, reason.clone()),
        Eligibility::Banned { reason } => (pb::VersionStatus::Banned, reason.clone()),
        Eligibility::Retired => (
            pb::VersionStatus::Retired,
            "a newer version replaced it".into(),
        ),
    }
}

/// An open lobby.
struct LobbyHandle {
    conn: u64,
    lobby: Lobby,
    tx: mpsc::Sender<Result<pb::LobbyResponse, Status>>,
    draining: bool,
    /// Dropped with the handle: tells the lobby's reader to stop reading, so that the stream
    /// closes in both directions (a half-open stream would hold up the server's shutdown).
    _closed: oneshot::Sender<()>,
}

#[derive(Default)]
struct Lobbies {
    open: HashMap<VersionId, LobbyHandle>,
    /// Invitations sent whose match has not ended, per version (kept across reconnects).
    in_flight: HashMap<VersionId, u32>,
    /// What each open lobby was last told about why it waits (dropped when it is invited or
    /// closes, so that the next wait is told again).
    waiting: HashMap<VersionId, pb::LobbyWaiting>,
}

/// A house bot: a built-in bot with its ladder version.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HouseBot {
    pub(crate) version: VersionId,
    pub(crate) kind: pb::BotKind,
}

/// The name of the house bot of `kind` (under the owner `house`).
pub(crate) fn house_bot_name(kind: pb::BotKind) -> String {
    let name = kind
        .as_str_name()
        .trim_start_matches("BOT_KIND_")
        .to_lowercase();
    format!("{name} (house)")
}

/// The ladder's shared state.
pub(crate) struct Hub {
    /// Taken out by [`Hub::release`] so that the store (and its lock) closes with the server.
    ladder: Mutex<Option<Arc<Ladder<dyn Store>>>>,
    /// Watchers of matches in flight (a watch channel, so shutdown awaits zero instead of
    /// polling).
    watchers: watch::Sender<usize>,
    host: Host,
    settings: LadderSettings,
    lobbies: Mutex<Lobbies>,
    wake: Notify,
    closed: AtomicBool,
    next_conn: AtomicU64,
    /// The matchmaker's seeds: a cryptographic generator, because deal seeds are revealed when
    /// their matches end and must not tell anything about the seeds of matches still running.
    rng: Mutex<ChaCha20Rng>,
    /// With PostgreSQL: this node of a shared ladder.
    cluster: Option<nodes::Cluster>,
    /// Each client address's budget of registrations.
    registrations: PerAddress,
    /// Each owner's budget of registrations.
    owner_registrations: PerOwner,
    /// The house bots.
    house: Vec<HouseBot>,
    /// Seats of this node's waiting matches that their lobbies may give up.
    withdrawals: matchmaker::Withdrawals,
}

impl Hub {
    /// Takes one registration from the budget of the client at `peer` (its IPv6 /64 network);
    /// refuses with `LADDER_ERROR_REASON_RATE_LIMITED` when it is spent. A call that did not come
    /// through a TCP connection (no peer address) is not limited.
    pub(crate) fn allow_registration(
        &self,
        peer: Option<std::net::SocketAddr>,
    ) -> Result<(), Status> {
        let per_minute = self.registrations.limit();
        let allowed = self.registrations.allow(peer);
        if allowed {
            return Ok(());
        }
        Err(refuse(
            pb::LadderErrorReason::RateLimited,
            Some(pb::ErrorReason::RateLimited),
            format!(
                "too many registrations from this address (at most {per_minute} a minute); \
                 wait and retry"
            ),
        ))
    }
}

impl Hub {
    /// Takes one registration from the budget of `owner` (the owner whose key made the call);
    /// refuses with `LADDER_ERROR_REASON_RATE_LIMITED` when it is spent.
    pub(crate) fn allow_owner_registration(&self, owner: OwnerId) -> Result<(), Status> {
        if self
            .owner_registrations
            .allow(owner, std::time::Instant::now())
        {
            return Ok(());
        }
        Err(refuse(
            pb::LadderErrorReason::RateLimited,
            Some(pb::ErrorReason::RateLimited),
            format!(
                "too many registrations by this owner (at most {} a minute); wait and retry",
                self.owner_registrations.per_minute
            ),
        ))
    }
}

/// Owners whose budgets are kept before the full ones are forgotten.
const OWNERS: usize = 10_000;

/// `n` registrations per minute for each owner, at most `n` at once: a token bucket per owner.
struct PerOwner {
    per_minute: u32,
    /// Each owner's tokens and when they were last counted.
    budgets: Mutex<HashMap<OwnerId, (f64, std::time::Instant)>>,
}

impl PerOwner {
    fn per_minute(n: u32) -> PerOwner {
        PerOwner {
            per_minute: n,
            budgets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one token from `owner`'s bucket at `now`; false when it is empty.
    fn allow(&self, owner: OwnerId, now: std::time::Instant) -> bool {
        let full = f64::from(self.per_minute);
        let refill = |(tokens, at): (f64, std::time::Instant)| {
            (
                full.min(tokens + now.saturating_duration_since(at).as_secs_f64() * full / 60.0),
                now,
            )
        };
        let mut budgets = lock(&self.budgets);
        if budgets.len() >= OWNERS {
            budgets.retain(|_, b| refill(*b).0 < full);
        }
        let bucket = budgets.entry(owner).or_insert((full, now));
        let (tokens, at) = refill(*bucket);
        if tokens >= 1.0 {
            *bucket = (tokens - 1.0, at);
            true
        } else {
            *bucket = (tokens, at);
            false
        }
    }
}

impl Hub {
    /// Opens the ladder store in `<data_dir>/ladder`, opens the first season if there is none,
    /// settles matches a previous run left open, and starts the matchmaker.
    ///
    /// `addr` is where this server listens: with PostgreSQL and no
    /// [`LadderSettings::node_address`], invitations to its tables carry `http://addr`.
    pub(crate) async fn start(
        host: Host,
        settings: LadderSettings,
        addr: std::net::SocketAddr,
    ) -> Result<Arc<Hub>, LadderError> {
        for f in &settings.formats {
            check_format(&f.profile, f.seats).map_err(LadderError::Invalid)?;
        }
        if settings.join_deadline >= host.config().join_timeout {
            return Err(LadderError::Invalid(format!(
                "the ladder's join deadline ({} ms) must be shorter than the server's join \
                 timeout ({} ms), which starts a table without its missing seats",
                settings.join_deadline.as_millis(),
                host.config().join_timeout.as_millis()
            )));
        }
        let dir = host.config().data_dir.join("ladder");
        let codes = settings.invitation_codes.clone();
        let first_season = settings.first_season.clone();
        let store_url = settings.store.clone();
        let pool = PoolLimits {
            max_connections: settings.store_max_connections,
            ..PoolLimits::default()
        };
        let validation = settings.validation;
        let max_versions = settings.max_versions;
        let house_kinds = settings.house_bots.clone();
        let node_address = if settings.node_address.is_empty() {
            format!("http://{addr}")
        } else {
            settings.node_address.clone()
        };
        let (ladder, cluster, house, stored) =
            tokio::task::spawn_blocking(move || -> Result<_, LadderError> {
                let config = LadderConfig {
                    registration: if codes.is_empty() {
                        RegistrationPolicy::Open
                    } else {
                        RegistrationPolicy::invitation(&codes)
                    },
                    validation,
                    max_versions,
                    ..LadderConfig::default()
                };
                let now = now_ms();
                let (ladder, cluster): (Arc<Ladder<dyn Store>>, _) = match &store_url {
                    Some(url) => {
                        let pg = PgStore::open_with(url, pool)?;
                        let node = pg.join_node(&node_address)?;
                        let cluster = nodes::Cluster::new(pg.clone(), node, node_address);
                        (Arc::new(Ladder::new(pg, config)), Some(cluster))
                    }
                    None => (
                        Arc::new(Ladder::new(SqliteStore::open(&dir)?, config)),
                        None,
                    ),
                };
                if ladder.store().seasons()?.is_empty() {
                    // Nodes starting together may race to open it.
                    if let Err(e) = ladder.store().open_season(&first_season, now)
                        && ladder.store().current_season()?.is_none()
                    {
                        return Err(e);
                    }
                }
                // A shared ladder's matches belong to the nodes holding their leases; the ones of
                // a node that died are settled when their lease runs out (nodes.rs).
                if cluster.is_none() {
                    matchmaker::settle_leftovers(&ladder, now)?;
                }
                let mut house = Vec::new();
                for kind in house_kinds {
                    if kind == pb::BotKind::Unspecified
                        || house.iter().any(|h: &HouseBot| h.kind == kind)
                    {
                        continue;
                    }
                    // Nodes of a shared ladder starting together may race to register it (its
                    // owner, bot and version, one step at a time): the loser of a step finds
                    // the winner's at the next attempt.
                    let name = house_bot_name(kind);
                    let attempts = if cluster.is_some() { 4 } else { 1 };
                    let mut version = ladder.house_version(&name, now);
                    for _ in 1..attempts {
                        if version.is_ok() {
                            break;
                        }
                        version = ladder.house_version(&name, now);
                    }
                    let version = version?;
                    house.push(HouseBot { version, kind });
                }
                let stored = ladder.store().formats()?;
                Ok((ladder, cluster, house, stored))
            })
            .await
            .map_err(|e| LadderError::Io(std::io::Error::other(e.to_string())))??;
        // A configured seed makes runs reproducible (for tests and benchmarks only: anyone who
        // knows it knows every deal); otherwise 256 bits from the operating system.
        let rng = match settings.seed {
            Some(seed) => ChaCha20Rng::seed_from_u64(seed),
            None => ChaCha20Rng::from_seed(rand::random()),
        };
        let registrations = PerAddress::per_minute(settings.registrations_per_minute);
        let owner_registrations = PerOwner::per_minute(settings.registrations_per_minute);
        warn_if_formats_differ(&settings.formats, stored);
        let hub = Arc::new(Hub {
            rng: Mutex::new(rng),
            ladder: Mutex::new(Some(ladder)),
            watchers: watch::Sender::new(0),
            host,
            settings,
            lobbies: Mutex::new(Lobbies::default()),
            wake: Notify::new(),
            closed: AtomicBool::new(false),
            next_conn: AtomicU64::new(1),
            cluster,
            registrations,
            owner_registrations,
            house,
            withdrawals: matchmaker::Withdrawals::default(),
        });
        tokio::spawn(matchmaker::run(hub.clone()));
        if hub.cluster.is_some() {
            tokio::spawn(nodes::run(hub.clone()));
        }
        Ok(hub)
    }

    /// Runs a store call on a blocking thread.
    pub(crate) async fn store<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Ladder<dyn Store>) -> maumau_ladder::Result<T> + Send + 'static,
    ) -> Result<T, Status> {
        let ladder = lock(&self.ladder).clone().ok_or_else(|| {
            refuse(
                pb::LadderErrorReason::Storage,
                Some(pb::ErrorReason::Unavailable),
                "the ladder is shutting down",
            )
        })?;
        tokio::task::spawn_blocking(move || f(&ladder))
            .await
            .map_err(|e| {
                refuse(
                    pb::LadderErrorReason::Storage,
                    Some(pb::ErrorReason::Internal),
                    {
                        tracing::error!(error = %e, "a ladder task failed");
                        "a ladder task failed"
                    },
                )
            })?
            .map_err(to_status)
    }

    /// The first half of a server's shutdown, a drain of every lobby: stops the matchmaker
    /// (nobody is invited any more, no lobby opens), closes the idle lobbies with LobbyDrained,
    /// and lets the ladder matches in flight play on, for at most
    /// [`LadderSettings::drain_timeout`]. A lobby closes with LobbyDrained when its last match
    /// ends. Then the registry aborts what is left (see [`Hub::close_lobbies`]).
    pub(crate) async fn shutdown(&self) {
        self.closed.store(true, Ordering::SeqCst);
        {
            let mut l = lock(&self.lobbies);
            let open: Vec<VersionId> = l.open.keys().copied().collect();
            for v in open {
                let idle = l.in_flight.get(&v).copied().unwrap_or(0) == 0;
                if let Some(h) = l.open.get_mut(&v) {
                    h.draining = true;
                }
                if idle {
                    close_drained(&mut l, v);
                }
            }
        }
        self.wake.notify_one();
        let left = self.watched_out(self.settings.drain_timeout).await;
        if left > 0 {
            tracing::warn!(
                matches = left,
                "the ladder's drain timed out; the server aborts the matches left"
            );
        }
    }

    /// The second half of a server's shutdown, after the registry aborted the matches left:
    /// waits (a few seconds at most) for their watchers to record them, then closes every lobby
    /// still open with LobbyDrained, so that no stream holds up the server.
    pub(crate) async fn close_lobbies(&self) {
        self.watched_out(RECORD_WAIT).await;
        let mut l = lock(&self.lobbies);
        let open: Vec<VersionId> = l.open.keys().copied().collect();
        for v in open {
            close_drained(&mut l, v);
        }
    }

    /// Counts a watcher of a match in flight until the returned guard is dropped.
    fn watching(self: &Arc<Self>) -> Watching {
        self.watchers.send_modify(|n| *n += 1);
        Watching(self.clone())
    }

    /// Waits until no match is watched any more, for at most `limit`; returns how many still
    /// are.
    async fn watched_out(&self, limit: Duration) -> usize {
        let mut watchers = self.watchers.subscribe();
        let _ = tokio::time::timeout(limit, watchers.wait_for(|n| *n == 0)).await;
        *self.watchers.borrow()
    }

    /// The next seed for the matchmaker.
    fn next_seed(&self) -> u64 {
        lock(&self.rng).next_u64()
    }

    /// After the server stopped: waits (a few seconds at most) for the watchers to record the
    /// matches the shutdown aborted, then closes the store, releasing its lock for the next
    /// process even while connections still hold the service.
    pub(crate) async fn release(&self) {
        self.watched_out(RECORD_WAIT).await;
        let pause = Duration::from_millis(10);
        let ladder = lock(&self.ladder).take();
        if let Some(ladder) = ladder {
            // Store calls in flight hold a clone for a moment.
            for _ in 0..500 {
                if Arc::strong_count(&ladder) == 1 {
                    break;
                }
                tokio::time::sleep(pause).await;
            }
            // A PostgreSQL client owns a small runtime of its own, which may not be dropped
            // inside this one.
            let _ = tokio::task::spawn_blocking(move || drop(ladder)).await;
        }
        if let Some(c) = &self.cluster {
            c.leave().await;
        }
    }

    fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }

    /// Opens a version's lobby, replacing (and closing) an older one of the same version.
    /// Returns the connection id and a receiver that completes when the lobby is closed.
    fn attach(
        &self,
        lobby: Lobby,
        tx: mpsc::Sender<Result<pb::LobbyResponse, Status>>,
    ) -> Option<(u64, oneshot::Receiver<()>)> {
        if self.is_closed() {
            return None;
        }
        let conn = self.next_conn.fetch_add(1, Ordering::Relaxed);
        let (closed, on_close) = oneshot::channel();
        let version = lobby.version;
        let old = lock(&self.lobbies).open.insert(
            version,
            LobbyHandle {
                conn,
                lobby,
                tx,
                draining: false,
                _closed: closed,
            },
        );
        if let Some(old) = old {
            let _ = old.tx.try_send(Err(refuse(
                pb::LadderErrorReason::Superseded,
                None,
                "a newer lobby of this version connected",
            )));
        }
        self.wake.notify_one();
        Some((conn, on_close))
    }

    /// A lobby's client went away.
    fn detach(&self, version: VersionId, conn: u64) {
        let mut l = lock(&self.lobbies);
        if l.open.get(&version).is_some_and(|h| h.conn == conn) {
            l.open.remove(&version);
            l.waiting.remove(&version);
        }
    }

    /// A lobby asks for no more invitations; closes it at once when nothing is in flight.
    fn drain(&self, version: VersionId, conn: u64) {
        let mut l = lock(&self.lobbies);
        let idle = l.in_flight.get(&version).copied().unwrap_or(0) == 0;
        let Some(h) = l.open.get_mut(&version).filter(|h| h.conn == conn) else {
            return;
        };
        h.draining = true;
        if idle {
            close_drained(&mut l, version);
        }
    }

    /// Sends a message to a version's lobby: on this server, if it is open here; on a shared
    /// ladder, through the store to whichever node has it open.
    fn tell(&self, version: VersionId, kind: pb::lobby_response::Kind) {
        match &self.cluster {
            Some(c) => c.post(version, kind),
            None => self.tell_local(version, kind),
        }
    }

    /// Tells the seats' lobbies of a match's end, all at once (on a shared ladder exactly once,
    /// through whichever node posts them first: see `PgStore::post_events`).
    fn tell_ended(
        &self,
        id: maumau_ladder::MatchId,
        ends: Vec<(VersionId, pb::lobby_response::Kind)>,
    ) {
        match &self.cluster {
            Some(c) => c.post_all(Some(id), ends),
            None => {
                for (v, kind) in ends {
                    self.tell_local(v, kind);
                }
            }
        }
    }

    /// Sends a message to a version's lobby if it is open on this server.
    fn tell_local(&self, version: VersionId, kind: pb::lobby_response::Kind) {
        if let Some(h) = lock(&self.lobbies).open.get(&version) {
            let _ = h.tx.try_send(Ok(pb::LobbyResponse { kind: Some(kind) }));
        }
    }

    /// The versions with a lobby open here, draining or not.
    fn local_versions(&self) -> Vec<VersionId> {
        lock(&self.lobbies).open.keys().copied().collect()
    }

    /// The open lobbies that take invitations.
    fn open_lobbies(&self) -> Vec<Lobby> {
        lock(&self.lobbies)
            .open
            .values()
            .filter(|h| !h.draining)
            .map(|h| h.lobby.clone())
            .collect()
    }

    /// Counts one more match in flight for each of `versions` if all of their lobbies are open
    /// and not draining; otherwise changes nothing and returns false (a lobby drained or closed
    /// between planning and the invitation).
    fn reserve(&self, versions: &[VersionId]) -> bool {
        let mut l = lock(&self.lobbies);
        if !versions
            .iter()
            .all(|v| l.open.get(v).is_some_and(|h| !h.draining))
        {
            return false;
        }
        for &v in versions {
            *l.in_flight.entry(v).or_default() += 1;
        }
        true
    }

    /// One more match in flight for `version` (an invitation delivered on a shared ladder).
    fn invited(&self, version: VersionId) {
        *lock(&self.lobbies).in_flight.entry(version).or_default() += 1;
    }

    /// A match of `version` ended; a draining lobby with nothing left in flight closes.
    fn ended(&self, version: VersionId) {
        let mut l = lock(&self.lobbies);
        let left = {
            let n = l.in_flight.entry(version).or_default();
            *n = n.saturating_sub(1);
            *n
        };
        if left == 0 {
            l.in_flight.remove(&version);
            if l.open.get(&version).is_some_and(|h| h.draining) {
                close_drained(&mut l, version);
            }
        }
    }

    /// Tells each lobby why it waits when that changed since it was last told (`waits`), and
    /// forgets what the `invited` ones were told: an invitation answers the wait.
    fn tell_waiting(&self, waits: Vec<(VersionId, pb::LobbyWaiting)>, invited: &[VersionId]) {
        let mut changed = Vec::new();
        {
            let mut l = lock(&self.lobbies);
            for v in invited {
                l.waiting.remove(v);
            }
            for (v, w) in waits {
                if self.cluster.is_none() && !l.open.contains_key(&v) {
                    continue;
                }
                if l.waiting.get(&v) != Some(&w) {
                    l.waiting.insert(v, w.clone());
                    changed.push((v, w));
                }
            }
        }
        for (v, w) in changed {
            self.tell(v, pb::lobby_response::Kind::Waiting(w));
        }
    }

    /// Why the version's open lobby waits, as it was last told; `None` without an open lobby
    /// here or before the matchmaker looked at it.
    pub(crate) fn waiting_of(&self, version: VersionId) -> Option<pb::LobbyWaiting> {
        let l = lock(&self.lobbies);
        l.open.get(&version)?;
        l.waiting.get(&version).cloned()
    }

    /// The game server's id of a ladder match's table (its `server_match_id`, as the store
    /// keeps it) when this server has that table, open or stored; `None` for a match without
    /// one. On a ladder of one process every table the store names is here. On a shared ladder
    /// it may be on another node, whose matches this server cannot show, so the id counts only
    /// once this server finds the match: blocking there (it may read the server's archive).
    pub(crate) fn table_here<'a>(&self, server_match_id: Option<&'a str>) -> Option<&'a str> {
        let id = server_match_id.filter(|id| !id.is_empty())?;
        let elsewhere = self.cluster.is_some()
            && self.host.find_open(id).is_none()
            && self.host.stored_end(id).is_none();
        (!elsewhere).then_some(id)
    }

    /// The other node of a shared ladder that hosted ladder match `id` (`None` on a ladder of
    /// one server, for a match this node hosted, or one no node claimed). Blocking: reads the
    /// store.
    pub(crate) fn host_elsewhere(
        &self,
        id: maumau_ladder::MatchId,
    ) -> Option<maumau_ladder::store::Host> {
        let c = self.cluster.as_ref()?;
        match c.pg.host_of(id) {
            Ok(host) => host.filter(|h| h.node != c.node()),
            Err(e) => {
                tracing::debug!(error = %e, ladder_match = %id, "could not read a match's node");
                None
            }
        }
    }

    /// Drains the version's open lobby, whichever form it has (the unary DrainLobby). Returns
    /// whether one was open and how many of the version's matches are in flight.
    fn drain_open(&self, version: VersionId) -> (bool, u32) {
        let mut l = lock(&self.lobbies);
        let in_flight = l.in_flight.get(&version).copied().unwrap_or(0);
        let Some(h) = l.open.get_mut(&version) else {
            return (false, in_flight);
        };
        h.draining = true;
        if in_flight == 0 {
            close_drained(&mut l, version);
        }
        (true, in_flight)
    }

    /// Whether the operator pruned the replay of a ladder match's table ([`Hub::table_here`];
    /// false without one, or when the server does not know it). Blocking (it reads the server's
    /// archive).
    pub(crate) fn replay_pruned(&self, table: Option<&str>) -> bool {
        table.is_some_and(|id| self.host.stored_end(id).is_some_and(|(_, pruned)| pruned))
    }

    /// Prunes the stored replays of ended ladder matches that ended more than `older_than` ago
    /// or are beyond the `keep_newest` most recently ended; with `dry_run` only counts them.
    pub(crate) async fn prune_replays(
        &self,
        older_than: Option<Duration>,
        keep_newest: Option<usize>,
        dry_run: bool,
    ) -> Result<Pruned, Status> {
        // Every table the store names; those this server does not keep (another node's, or
        // still open) are left out below.
        let ids = self.store(|l| l.store().server_match_ids()).await?;
        let host = self.host.clone();
        let now = now_ms().max(0) as u64;
        let cutoff = older_than
            .map(|age| now.saturating_sub(u64::try_from(age.as_millis()).unwrap_or(u64::MAX)));
        let done = tokio::task::spawn_blocking(move || {
            // Stored (finished, record committed) and not pruned yet.
            let mut stored: Vec<(u64, String)> = ids
                .into_iter()
                .filter_map(|id| match host.stored_end(&id) {
                    Some((ended, false)) => Some((ended, id)),
                    _ => None,
                })
                .collect();
            // Newest first; the match id breaks ties, so the order is the same on every run.
            stored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            let (doomed, kept): (Vec<_>, Vec<_>) =
                stored.into_iter().enumerate().partition(|(i, (ended, _))| {
                    keep_newest.is_some_and(|k| *i >= k) || cutoff.is_some_and(|c| *ended < c)
                });
            let counted = Pruned {
                pruned: doomed.len() as u32,
                kept: kept.len() as u32,
                bytes_freed: 0,
            };
            let (mut n, mut bytes) = (0u32, 0u64);
            if !dry_run {
                for (_, (_, id)) in doomed {
                    if let Some(b) = host.prune_replay(&id) {
                        n += 1;
                        bytes += b;
                    }
                }
            }
            (counted, n, bytes)
        })
        .await
        .map_err(|e| {
            refuse(
                pb::LadderErrorReason::Storage,
                Some(pb::ErrorReason::Internal),
                format!("pruning failed: {e}"),
            )
        })?;
        let (mut result, pruned, bytes) = done;
        if dry_run || result.pruned == 0 {
            return Ok(result);
        }
        // A replay that could not be rewritten (logged) stays.
        result.kept += result.pruned - pruned;
        result.pruned = pruned;
        result.bytes_freed = bytes;
        if pruned > 0 {
            tracing::info!(pruned, bytes, "ladder replays pruned");
        }
        Ok(result)
    }
}

/// How long shutdown waits for the watchers of aborted matches to record them.
const RECORD_WAIT: Duration = Duration::from_secs(5);

/// A watcher of a match in flight, counted while it lives.
struct Watching(Arc<Hub>);

impl Drop for Watching {
    fn drop(&mut self) {
        self.0.watchers.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// What [`Hub::prune_replays`] did.
pub(crate) struct Pruned {
    /// Replays pruned (or that would be).
    pub(crate) pruned: u32,
    /// Replays of ended ladder matches still stored.
    pub(crate) kept: u32,
    /// Bytes freed.
    pub(crate) bytes_freed: u64,
}

fn close_drained(l: &mut Lobbies, version: VersionId) {
    l.waiting.remove(&version);
    if let Some(h) = l.open.remove(&version) {
        let _ = h.tx.try_send(Ok(pb::LobbyResponse {
            kind: Some(pb::lobby_response::Kind::Drained(
                pb::LobbyDrained::default(),
            )),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn store_errors_name_no_database_to_callers() {
        let detail = "cannot connect to PostgreSQL at postgres://ladder@db.internal:5433/ladderdb";
        for e in [
            LadderError::Unavailable(detail.into()),
            LadderError::Database(detail.into()),
            LadderError::Busy(detail.into()),
            LadderError::Io(std::io::Error::other(detail)),
        ] {
            let status = to_status(e);
            assert_eq!(status.code(), tonic::Code::Unavailable);
            for secret in ["ladder@", "db.internal", "5433", "ladderdb", "postgres"] {
                assert!(!status.message().contains(secret), "{status:?}");
            }
        }
    }

    #[test]
    fn each_owner_has_its_own_budget_that_refills_over_a_minute() {
        let budget = PerOwner::per_minute(2);
        let t = Instant::now();
        assert!(budget.allow(OwnerId(1), t));
        assert!(budget.allow(OwnerId(1), t));
        assert!(!budget.allow(OwnerId(1), t), "the third in a burst");
        assert!(budget.allow(OwnerId(2), t), "another owner has its own");
        // Two a minute: one more after half a minute, not before.
        assert!(!budget.allow(OwnerId(1), t + Duration::from_secs(20)));
        assert!(budget.allow(OwnerId(1), t + Duration::from_secs(31)));
        assert!(!budget.allow(OwnerId(1), t + Duration::from_secs(32)));
    }
}
