//! The PostgreSQL store: several server processes share one ladder.
//!
//! Opened from a URL (`postgres://user@host:port/db`; TLS when its `sslmode` asks, see
//! `pg_tls.rs`). The store keeps client connections of the
//! synchronous `postgres` crate in a small pool of its own (a connection is taken for one method,
//! which is one transaction, and put back), with a hard limit ([`PoolLimits`]): a call that finds
//! every connection busy waits for one, for a bounded time, then fails with
//! [`LadderError::Busy`]. The matchmaker's session (`nodes.rs`) is one more. Schema steps are in `migrations/postgres/`,
//! the same steps as SQLite's, applied at open under an advisory lock so that nodes starting
//! together apply them once.
//!
//! Transactions run at READ COMMITTED with explicit locks where SQLite relies on its one writer:
//! a match row is locked (`FOR UPDATE`) before its state changes, and every write of ratings (a
//! finish, a void, an applied rerate) first takes one transaction-level advisory lock, so ratings
//! are read and written by one transaction at a time and `rated_seq` grows without gaps or ties.
//!
//! The store follows whether the database answers: a call that finds it unreachable (connecting
//! fails, the connection breaks, the server is shutting down) fails with
//! [`LadderError::Unavailable`] and starts an outage; the next call that gets an answer ends it.
//! [`PgStore::on_availability`] hears of both, once each (see [`Availability`]), and idle
//! connections are dropped when an outage starts (they went with the server).
//!
//! The client must not be used from an async task (it runs its own small runtime): call the store
//! from blocking threads, and drop it on one.
//!
//! Only the connections, the migrations, the locks and the transaction handle are here (see
//! `backend.rs`); every store method is written once in `sql.rs`, over this handle and SQLite's.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bytes::BytesMut;
use postgres::error::SqlState;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Row, Statement, Transaction};

use super::backend::{self, Backend, Dialect, EachRow, Taken, Tx, Value, numbered_to_dollar};
use super::pg_tls::{self, Target};
use super::rules::{self, Migration};
use crate::error::{LadderError, Result};
use crate::ids::MatchId;

/// The schema steps, in order: (step, name, SQL). Step numbers match the file names in
/// `migrations/postgres/`, which carry the same steps as `migrations/sqlite/`.
const MIGRATIONS: &[Migration] = &[
    (
        1,
        "0001_init.sql",
        include_str!("../../migrations/postgres/0001_init.sql"),
    ),
    (
        2,
        "0002_validations.sql",
        include_str!("../../migrations/postgres/0002_validations.sql"),
    ),
    (
        3,
        "0003_nodes.sql",
        include_str!("../../migrations/postgres/0003_nodes.sql"),
    ),
    (
        4,
        "0004_indexes.sql",
        include_str!("../../migrations/postgres/0004_indexes.sql"),
    ),
    (
        5,
        "0005_rejections.sql",
        include_str!("../../migrations/postgres/0005_rejections.sql"),
    ),
    (
        6,
        "0006_name_keys.sql",
        include_str!("../../migrations/postgres/0006_name_keys.sql"),
    ),
    (
        7,
        "0007_server_matches.sql",
        include_str!("../../migrations/postgres/0007_server_matches.sql"),
    ),
    (
        8,
        "0008_ends_told.sql",
        include_str!("../../migrations/postgres/0008_ends_told.sql"),
    ),
    (
        9,
        "0009_tournament_events.sql",
        include_str!("../../migrations/postgres/0009_tournament_events.sql"),
    ),
    (
        10,
        "0010_tournament_deals.sql",
        include_str!("../../migrations/postgres/0010_tournament_deals.sql"),
    ),
    (
        11,
        "0011_formats.sql",
        include_str!("../../migrations/postgres/0011_formats.sql"),
    ),
];

/// Advisory lock keys (one 64-bit space per database; these spell "maumau" and a purpose).
const MIGRATE_LOCK: i64 = 0x6d61_756d_6175_0001;
const RATINGS_LOCK: i64 = 0x6d61_756d_6175_0002;
/// Held (by a session) by the one node that runs the matchmaker; with the schema's name hashed
/// beside it (advisory locks belong to the database, and ladders in separate schemas of one
/// database must not share a matchmaker).
pub(super) const MATCHMAKER_LOCK: i32 = 0x6d6d_0003;

/// How many connections the store's pool opens at most, and how long a call waits for one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolLimits {
    /// Connections open at once, idle or in use (at least 1). Default 10.
    pub max_connections: usize,
    /// How long a call waits for a connection when all are in use before it fails with
    /// [`LadderError::Busy`]. Default 5 s.
    pub wait: Duration,
}

impl Default for PoolLimits {
    fn default() -> Self {
        PoolLimits {
            max_connections: 10,
            wait: Duration::from_secs(5),
        }
    }
}

/// The pool: idle connections, and how many are open in all.
struct Pool {
    limits: PoolLimits,
    state: Mutex<PoolState>,
    /// Signalled when a connection goes back or is closed.
    freed: Condvar,
}

#[derive(Default)]
struct PoolState {
    idle: Vec<Client>,
    /// Idle and in use.
    open: usize,
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, PoolState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A connection in use was closed (or never opened).
    fn forget(&self) {
        let mut st = self.lock();
        st.open = st.open.saturating_sub(1);
        drop(st);
        self.freed.notify_one();
    }

    /// Takes the idle connections out (the caller drops them outside the lock).
    fn drain_idle(&self) -> Vec<Client> {
        let mut st = self.lock();
        let idle = std::mem::take(&mut st.idle);
        st.open = st.open.saturating_sub(idle.len());
        drop(st);
        self.freed.notify_all();
        idle
    }
}

/// A connection taken from the pool: it goes back when dropped (or, if it was closed or
/// replaced by nothing, leaves room for a new one).
struct Conn<'s> {
    store: &'s PgStore,
    client: Option<Client>,
    /// Whether it was idle in the pool (it may have been closed by the server meanwhile).
    pooled: bool,
}

impl Drop for Conn<'_> {
    fn drop(&mut self) {
        match self.client.take() {
            Some(c) => self.store.put(c),
            None => self.store.pool.forget(),
        }
    }
}

/// A change in whether the database answers, as [`PgStore::on_availability`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Availability {
    /// A call found the database unreachable; calls fail until it answers again. `error` is
    /// the first failure's detail (for the log: it names the host and user).
    Lost {
        /// What the call that found it failed with.
        error: String,
    },
    /// The database answers again.
    Back {
        /// How long it did not.
        after: Duration,
        /// Calls that failed meanwhile.
        failed: u64,
    },
}

/// What [`PgStore::on_availability`] keeps.
type Listener = Box<dyn Fn(&Availability) + Send + Sync>;

/// Whether the database answered the last call, and since when it has not.
#[derive(Default)]
struct Outage {
    /// When the current outage started, and the calls failed since.
    down: Option<(Instant, u64)>,
    /// Told of every change.
    listener: Option<Listener>,
}

/// The ladder kept in PostgreSQL. See the module docs. Clones share the connections and the
/// leases this node holds (see `nodes.rs`).
#[derive(Clone)]
pub struct PgStore {
    url: Arc<str>,
    /// The parsed URL and its TLS connector.
    target: Arc<Target>,
    pool: Arc<Pool>,
    /// Leases this process holds: match id → (node id, epoch).
    pub(super) held: Arc<Mutex<HashMap<i64, (i64, i64)>>>,
    /// The session holding [`MATCHMAKER_LOCK`], while this process holds it.
    pub(super) leader: Arc<Mutex<Option<Client>>>,
    /// The session holding this node's liveness lock, once it joined as a node.
    pub(super) alive: Arc<Mutex<Option<Client>>>,
    /// Since when the matchmaker's session (`leader`) has held its lock.
    pub(super) leading_since: Arc<Mutex<Option<std::time::Instant>>>,
    /// Set by [`PgStore::close`]: connections are no longer kept.
    pub(super) closed: Arc<AtomicBool>,
    outage: Arc<Mutex<Outage>>,
    /// Statements sent by the tournament events' methods (`events.rs`), and their
    /// transactions, for their benchmark.
    pub(super) event_statements: Arc<[AtomicU64; 2]>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &redact(&self.url))
            .finish_non_exhaustive()
    }
}

/// The URL without its password (in the user part or as a `password=` parameter), for
/// messages.
fn redact(url: &str) -> String {
    if !url.contains("://") {
        // A key=value connection string.
        let kept: Vec<&str> = url
            .split_whitespace()
            .filter(|p| !p.starts_with("password="))
            .collect();
        return kept.join(" ");
    }
    let (url, query) = match url.split_once('?') {
        Some((base, query)) => {
            let kept: Vec<&str> = query
                .split('&')
                .filter(|p| !p.starts_with("password="))
                .collect();
            (base, kept.join("&"))
        }
        None => (url, String::new()),
    };
    let query = if query.is_empty() {
        query
    } else {
        format!("?{query}")
    };
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user = &url[scheme + 3..at];
            let user = user.split(':').next().unwrap_or_default();
            format!("{}{user}{}{query}", &url[..scheme + 3], &url[at..])
        }
        _ => format!("{url}{query}"),
    }
}

impl PgStore {
    /// Connects to the database at `url` and applies any schema steps it lacks, with the
    /// default [`PoolLimits`].
    pub fn open(url: &str) -> Result<PgStore> {
        PgStore::open_with(url, PoolLimits::default())
    }

    /// [`PgStore::open`] with the pool's limits.
    pub fn open_with(url: &str, limits: PoolLimits) -> Result<PgStore> {
        let limits = PoolLimits {
            max_connections: limits.max_connections.max(1),
            ..limits
        };
        let target = pg_tls::parse(url).map_err(|e| LadderError::Database(e.into()))?;
        let store = PgStore {
            url: url.into(),
            target: Arc::new(target),
            pool: Arc::new(Pool {
                limits,
                state: Mutex::new(PoolState::default()),
                freed: Condvar::new(),
            }),
            held: Arc::new(Mutex::new(HashMap::new())),
            leader: Arc::new(Mutex::new(None)),
            alive: Arc::new(Mutex::new(None)),
            leading_since: Arc::new(Mutex::new(None)),
            closed: Arc::new(AtomicBool::new(false)),
            outage: Arc::new(Mutex::new(Outage::default())),
            event_statements: Arc::new([AtomicU64::new(0), AtomicU64::new(0)]),
        };
        let mut conn = store.take()?;
        if let Some(client) = conn.client.as_mut() {
            migrate(client)?;
        }
        drop(conn);
        Ok(store)
    }

    /// The URL without its password.
    pub fn url(&self) -> String {
        redact(&self.url)
    }

    /// The highest schema step applied.
    pub fn schema_step(&self) -> Result<u32> {
        self.read(|t| t.one("SELECT MAX(step) FROM schema_migrations", &[], |r| r.u32(0)))
    }

    /// The highest schema step this build knows.
    pub fn known_schema_step() -> u32 {
        rules::last_step(MIGRATIONS)
    }

    /// Closes the idle connections and the matchmaker's session (releasing its lock). Call it
    /// from a blocking thread before the last clone is dropped inside an async runtime.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        drop(self.pool.drain_idle());
        for session in [&self.leader, &self.alive] {
            let client = session
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take();
            drop(client);
        }
    }

    /// Calls `f` whenever the database stops or starts answering the store's calls (once per
    /// change, on the thread of the call that noticed; keep it short). Replaces any earlier
    /// listener.
    pub fn on_availability(&self, f: impl Fn(&Availability) + Send + Sync + 'static) {
        self.outage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .listener = Some(Box::new(f));
    }

    /// Whether the database answered the store's last call.
    pub fn is_available(&self) -> bool {
        self.outage
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .down
            .is_none()
    }

    /// Records what a call found: an outage starts at its first unreachable call and ends at
    /// the first call that got an answer (even a refusal).
    pub(super) fn observe<T>(&self, out: &Result<T>) {
        let change = {
            let mut o = self.outage.lock().unwrap_or_else(PoisonError::into_inner);
            match (out, &mut o.down) {
                (Err(LadderError::Unavailable(e)), None) => {
                    o.down = Some((Instant::now(), 1));
                    Some(Availability::Lost {
                        error: e.to_string(),
                    })
                }
                (Err(LadderError::Unavailable(_)), Some((_, failed))) => {
                    *failed += 1;
                    None
                }
                // Every connection in use says nothing about the database.
                (Err(LadderError::Busy(_)), _) => None,
                (_, Some((since, failed))) => {
                    let back = Availability::Back {
                        after: since.elapsed(),
                        failed: *failed,
                    };
                    o.down = None;
                    Some(back)
                }
                (_, None) => None,
            }
            .inspect(|change| {
                if let Some(listener) = &o.listener {
                    listener(change);
                }
            })
        };
        if let Some(Availability::Lost { .. }) = change {
            // The idle connections went with the server.
            drop(self.pool.drain_idle());
        }
    }

    pub(super) fn connect(&self) -> Result<Client> {
        let target = &self.target;
        match &target.tls {
            Some(tls) => target.config.connect(tls.clone()),
            None => target.config.connect(NoTls),
        }
        .map_err(|e| {
            let cause = std::error::Error::source(&e);
            // A certificate refused is a setting to fix, not an outage to wait out.
            let refused_tls = cause
                .and_then(|c| c.downcast_ref::<std::io::Error>())
                .and_then(|io| io.get_ref())
                .is_some_and(|inner| inner.is::<rustls::Error>());
            let cause = cause.map_or(String::new(), |c| format!(": {c}"));
            let detail = format!(
                "cannot connect to PostgreSQL at {}: {e}{cause}",
                redact(&self.url)
            );
            match LadderError::from(e) {
                LadderError::Unavailable(_) if !refused_tls => {
                    LadderError::Unavailable(detail.into())
                }
                _ => LadderError::Database(detail.into()),
            }
        })
    }

    /// Connections the pool has open now, idle or in use (not counting the matchmaker's
    /// session).
    pub fn open_connections(&self) -> usize {
        self.pool.lock().open
    }

    /// A connection: an idle one, or a new one while fewer than the limit are open; otherwise
    /// waits for one, at most [`PoolLimits::wait`].
    fn take(&self) -> Result<Conn<'_>> {
        let limits = self.pool.limits;
        let deadline = Instant::now() + limits.wait;
        let mut st = self.pool.lock();
        loop {
            if let Some(c) = st.idle.pop() {
                if c.is_closed() {
                    st.open = st.open.saturating_sub(1);
                    drop(st);
                    drop(c);
                    st = self.pool.lock();
                    continue;
                }
                return Ok(Conn {
                    store: self,
                    client: Some(c),
                    pooled: true,
                });
            }
            if st.open < limits.max_connections {
                st.open += 1;
                drop(st);
                let mut conn = Conn {
                    store: self,
                    client: None,
                    pooled: false,
                };
                // On failure the dropped `conn` leaves room again.
                conn.client = Some(self.connect()?);
                return Ok(conn);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(LadderError::Busy(format!(
                    "all {} connections to the store stayed in use for {:?}",
                    limits.max_connections, limits.wait
                )));
            }
            st = self
                .pool
                .freed
                .wait_timeout(st, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Puts a connection back (or closes it: it broke, or the store is closed).
    fn put(&self, c: Client) {
        if c.is_closed() || self.closed.load(Ordering::SeqCst) {
            // Dropped here, on the caller's (blocking) thread.
            drop(c);
            self.pool.forget();
            return;
        }
        self.pool.lock().idle.push(c);
        self.pool.freed.notify_one();
    }

    /// Runs `f` in one transaction on a pooled connection; commits if it returns `Ok`.
    pub(crate) fn tx<T>(&self, f: impl FnOnce(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        let out = self.tx_once(f);
        self.observe(&out);
        out
    }

    fn tx_once<T>(&self, f: impl FnOnce(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut conn = self.take()?;
        let Some(client) = conn.client.as_mut() else {
            return Err(LadderError::Busy("no connection".into()));
        };
        match begin_and_run(client, f) {
            Ok(out) => out,
            // An idle connection the server closed meanwhile (it restarted): nothing was done on
            // it, so the call starts again on a new one, in its place.
            Err((f, e)) if conn.pooled && crate::error::unreachable(&e) => {
                conn.client = None;
                let mut client = self.connect()?;
                let out = begin_and_run(&mut client, f).unwrap_or_else(|(_, e)| Err(e.into()));
                conn.client = Some(client);
                out
            }
            Err((_, e)) => Err(e.into()),
        }
    }
}

/// Runs `f` in a transaction on `client`, or hands it back when the transaction could not
/// begin.
fn begin_and_run<T, F: FnOnce(&mut Transaction<'_>) -> Result<T>>(
    client: &mut Client,
    f: F,
) -> std::result::Result<Result<T>, (F, postgres::Error)> {
    let mut t = match client.transaction() {
        Ok(t) => t,
        Err(e) => return Err((f, e)),
    };
    Ok((|| {
        let out = f(&mut t)?;
        t.commit()?;
        Ok(out)
    })())
}

impl Backend for PgStore {
    fn read<T>(&self, f: impl FnOnce(&mut dyn Tx) -> Result<T>) -> Result<T> {
        self.tx(|t| f(&mut PgTx::new(t)))
    }

    fn write<T>(&self, f: impl FnOnce(&mut dyn Tx) -> Result<T>) -> Result<T> {
        self.tx(|t| f(&mut PgTx::new(t)))
    }

    fn check_lease(&self, t: &mut dyn Tx, id: MatchId) -> Result<()> {
        let (owner, epoch) = t.one(
            "SELECT lease_owner, lease_epoch FROM matches WHERE id = ?1",
            &[id.0.into()],
            |r| Ok((r.opt_i64(0)?, r.i64(1)?)),
        )?;
        let held = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id.0)
            .copied();
        rules::check_lease_held(id, owner, epoch, held)
    }
}

fn migrate(c: &mut Client) -> Result<()> {
    let mut t = c.transaction()?;
    t.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATE_LOCK])?;
    t.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             step       BIGINT PRIMARY KEY,
             name       TEXT NOT NULL,
             applied_ms BIGINT NOT NULL
         )",
    )?;
    let current: i64 = t
        .query_one("SELECT COALESCE(MAX(step), 0) FROM schema_migrations", &[])?
        .get(0);
    let now = rules::wall_clock_ms();
    for &(step, name, sql) in rules::pending_steps(MIGRATIONS, current as u32)? {
        t.batch_execute(sql)?;
        t.execute(
            "INSERT INTO schema_migrations (step, name, applied_ms) VALUES ($1, $2, $3)",
            &[&(step as i64), &name, &now],
        )?;
    }
    t.commit()?;
    Ok(())
}

/// A PostgreSQL transaction as the shared code sees it (see `backend.rs`): placeholders are
/// rewritten to `$1` and each statement is prepared once per transaction.
pub(super) struct PgTx<'c, 't> {
    t: &'c mut Transaction<'t>,
    statements: HashMap<String, Statement>,
}

impl<'c, 't> PgTx<'c, 't> {
    /// The handle over an open transaction (or savepoint).
    pub(super) fn new(t: &'c mut Transaction<'t>) -> PgTx<'c, 't> {
        PgTx {
            t,
            statements: HashMap::new(),
        }
    }

    fn statement(&mut self, sql: &str) -> Result<Statement> {
        let sql = numbered_to_dollar(sql);
        if let Some(st) = self.statements.get(&sql) {
            return Ok(st.clone());
        }
        let st = self.t.prepare(&sql)?;
        self.statements.insert(sql, st.clone());
        Ok(st)
    }
}

fn refs<'a>(params: &'a [Value<'_>]) -> Vec<&'a (dyn ToSql + Sync)> {
    params.iter().map(|p| p as &(dyn ToSql + Sync)).collect()
}

impl Tx for PgTx<'_, '_> {
    fn query_each(&mut self, sql: &str, params: &[Value<'_>], each: EachRow<'_>) -> Result<()> {
        let st = self.statement(sql)?;
        for r in self.t.query(&st, &refs(params))? {
            each(&r)?;
        }
        Ok(())
    }

    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64> {
        let st = self.statement(sql)?;
        Ok(self.t.execute(&st, &refs(params))?)
    }

    fn insert(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Result<i64, Taken>> {
        let st = self.statement(&format!("{sql} RETURNING id"))?;
        match self.t.query_one(&st, &refs(params)) {
            Ok(r) => Ok(Ok(r.try_get(0)?)),
            Err(e) => match e.as_db_error() {
                Some(db) if db.code() == &SqlState::UNIQUE_VIOLATION => {
                    Ok(Err(Taken(db.constraint().map(str::to_string))))
                }
                _ => Err(e.into()),
            },
        }
    }

    fn lock_ratings(&mut self) -> Result<()> {
        self.t
            .execute("SELECT pg_advisory_xact_lock($1)", &[&RATINGS_LOCK])?;
        Ok(())
    }

    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }
}

impl ToSql for Value<'_> {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match *self {
            Value::Null => Ok(IsNull::Yes),
            // An integer at the column's width.
            Value::Int(v) if *ty == Type::INT2 => i16::try_from(v)?.to_sql_checked(ty, out),
            Value::Int(v) if *ty == Type::INT4 => i32::try_from(v)?.to_sql_checked(ty, out),
            Value::Int(v) => v.to_sql_checked(ty, out),
            Value::Real(v) => v.to_sql_checked(ty, out),
            Value::Bool(v) => v.to_sql_checked(ty, out),
            Value::Text(v) => v.to_sql_checked(ty, out),
            Value::Blob(v) => v.to_sql_checked(ty, out),
            Value::Ids(v) => v.to_sql_checked(ty, out),
        }
    }

    fn accepts(_: &Type) -> bool {
        // Checked per value in `to_sql`.
        true
    }

    to_sql_checked!();
}

impl backend::Row for Row {
    fn cell(&self, i: usize) -> Result<Value<'_>> {
        // By the column's type: integers of every width are read as i64.
        let ty = self.columns()[i].type_();
        let v = if *ty == Type::INT2 {
            self.try_get::<_, Option<i16>>(i)?
                .map(|v| Value::Int(v.into()))
        } else if *ty == Type::INT4 {
            self.try_get::<_, Option<i32>>(i)?
                .map(|v| Value::Int(v.into()))
        } else if *ty == Type::INT8 {
            self.try_get::<_, Option<i64>>(i)?.map(Value::Int)
        } else if *ty == Type::FLOAT8 {
            self.try_get::<_, Option<f64>>(i)?.map(Value::Real)
        } else if *ty == Type::BOOL {
            self.try_get::<_, Option<bool>>(i)?.map(Value::Bool)
        } else if *ty == Type::BYTEA {
            self.try_get::<_, Option<&[u8]>>(i)?.map(Value::Blob)
        } else {
            self.try_get::<_, Option<&str>>(i)?.map(Value::Text)
        };
        Ok(v.unwrap_or(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_migration_file_is_a_numbered_step_like_sqlites() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations");
        let list = |dir: &str| {
            let mut files: Vec<String> = std::fs::read_dir(root.join(dir))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            files.sort();
            files
        };
        let names: Vec<&str> = MIGRATIONS.iter().map(|m| m.1).collect();
        assert_eq!(list("postgres"), names);
        assert_eq!(
            list("postgres"),
            list("sqlite"),
            "the two migration folders must carry the same steps"
        );
    }

    #[test]
    fn urls_lose_their_password_in_messages() {
        assert_eq!(
            redact("postgres://ada:secret@db:5432/ladder"),
            "postgres://ada@db:5432/ladder"
        );
        assert_eq!(redact("postgres://ada@db/x"), "postgres://ada@db/x");
        assert_eq!(
            redact("host=db password=secret user=ada"),
            "host=db user=ada"
        );
        assert_eq!(
            redact("postgres://ada@db/x?password=secret&sslmode=require"),
            "postgres://ada@db/x?sslmode=require"
        );
    }
}
