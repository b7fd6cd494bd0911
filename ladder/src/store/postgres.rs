//! The PostgreSQL store: several server processes share one ladder.
//!
//! Opened from a URL (`postgres://user@host:port/db`). The store keeps a few client connections
//! of the synchronous `postgres` crate in a small pool of its own (a connection is taken for one
//! method, which is one transaction, and put back). Schema steps are in `migrations/postgres/`,
//! the same steps as SQLite's, applied at open under an advisory lock so that nodes starting
//! together apply them once.
//!
//! Transactions run at READ COMMITTED with explicit locks where SQLite relies on its one writer:
//! a match row is locked (`FOR UPDATE`) before its state changes, and every write of ratings (a
//! finish, a void, an applied rerate) first takes one transaction-level advisory lock, so ratings
//! are read and written by one transaction at a time and `rated_seq` grows without gaps or ties.
//!
//! The client must not be used from an async task (it runs its own small runtime): call the store
//! from blocking threads, and drop it on one.
//!
//! Only the SQL, the locks and the transactions are here; what each method checks and decides is
//! in `rules.rs`, shared with the SQLite store.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use bytes::BytesMut;
use postgres::error::SqlState;
use postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use postgres::{Client, NoTls, Row, Statement, Transaction};

use super::backend::{self, Dialect, Taken, Tx, Value, numbered_to_dollar};
use super::rules::{self, Ending, Migration, not_found, require};
use super::sql;
use super::{
    Bot, KeyRecord, KeySubject, MatchRecord, MatchState, NewMatch, Owner, PlacingStats,
    RatingCause, RatingChange, RatingEvent, RatingRow, Sanction, SanctionKind, SanctionTarget,
    Season, SeatHistory, SeatResult, Store, Validation, Version, VersionInfo,
};
use crate::error::{LadderError, Result};
use crate::health::SeatOutcome;
use crate::ids::{BotId, KeyId, MatchId, Millis, OwnerId, SanctionId, SeasonId, VersionId};
use crate::keys::KeyHash;
use crate::rating::{RatedMatch, RatingConfig, RatingState};

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
];

/// Advisory lock keys (one 64-bit space per database; these spell "maumau" and a purpose).
const MIGRATE_LOCK: i64 = 0x6d61_756d_6175_0001;
const RATINGS_LOCK: i64 = 0x6d61_756d_6175_0002;
/// Held (by a session) by the one node that runs the matchmaker; with the schema's name hashed
/// beside it (advisory locks belong to the database, and ladders in separate schemas of one
/// database must not share a matchmaker).
pub(super) const MATCHMAKER_LOCK: i32 = 0x6d6d_0003;

/// Connections kept idle at most; more may be open while many calls run at once.
const IDLE_CONNECTIONS: usize = 8;

/// The ladder kept in PostgreSQL. See the module docs. Clones share the connections and the
/// leases this node holds (see `nodes.rs`).
#[derive(Clone)]
pub struct PgStore {
    url: Arc<str>,
    idle: Arc<Mutex<Vec<Client>>>,
    /// Leases this process holds: match id → (node id, epoch).
    pub(super) held: Arc<Mutex<HashMap<i64, (i64, i64)>>>,
    /// The session holding [`MATCHMAKER_LOCK`], while this process holds it.
    pub(super) leader: Arc<Mutex<Option<Client>>>,
    /// Set by [`PgStore::close`]: connections are no longer kept.
    pub(super) closed: Arc<AtomicBool>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("url", &redact(&self.url))
            .finish_non_exhaustive()
    }
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user = &url[scheme + 3..at];
            let user = user.split(':').next().unwrap_or_default();
            format!("{}{user}{}", &url[..scheme + 3], &url[at..])
        }
        _ => url.to_string(),
    }
}

impl PgStore {
    /// Connects to the database at `url` and applies any schema steps it lacks.
    pub fn open(url: &str) -> Result<PgStore> {
        let store = PgStore {
            url: url.into(),
            idle: Arc::new(Mutex::new(Vec::new())),
            held: Arc::new(Mutex::new(HashMap::new())),
            leader: Arc::new(Mutex::new(None)),
            closed: Arc::new(AtomicBool::new(false)),
        };
        let mut client = store.connect()?;
        migrate(&mut client)?;
        store.put(client);
        Ok(store)
    }

    /// The URL without its password.
    pub fn url(&self) -> String {
        redact(&self.url)
    }

    /// The highest schema step applied.
    pub fn schema_step(&self) -> Result<u32> {
        self.tx(|t| {
            let n: i64 = t
                .query_one("SELECT MAX(step) FROM schema_migrations", &[])?
                .get(0);
            Ok(n as u32)
        })
    }

    /// The highest schema step this build knows.
    pub fn known_schema_step() -> u32 {
        rules::last_step(MIGRATIONS)
    }

    /// Closes the idle connections and the matchmaker's session (releasing its lock). Call it
    /// from a blocking thread before the last clone is dropped inside an async runtime.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let idle: Vec<Client> =
            std::mem::take(&mut *self.idle.lock().unwrap_or_else(PoisonError::into_inner));
        drop(idle);
        let leader = self
            .leader
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(leader);
    }

    pub(super) fn connect(&self) -> Result<Client> {
        Client::connect(&self.url, NoTls).map_err(|e| {
            LadderError::Database(
                format!("cannot connect to PostgreSQL at {}: {e}", redact(&self.url)).into(),
            )
        })
    }

    fn take(&self) -> Result<Client> {
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        match idle {
            Some(c) if !c.is_closed() => Ok(c),
            _ => self.connect(),
        }
    }

    fn put(&self, c: Client) {
        // Dropped here, on the caller's (blocking) thread, once the store is closed.
        if c.is_closed() || self.closed.load(Ordering::SeqCst) {
            return;
        }
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < IDLE_CONNECTIONS {
            idle.push(c);
        }
    }

    /// Runs `f` in one transaction on a pooled connection; commits if it returns `Ok`.
    /// Fails unless the match's lease, if it has one, is held by this process (checked inside
    /// the transaction that records the match's end, after its row is locked).
    pub(super) fn check_lease(&self, t: &mut Transaction<'_>, id: MatchId) -> Result<()> {
        let row = t.query_one(
            "SELECT lease_owner, lease_epoch FROM matches WHERE id = $1",
            &[&id.0],
        )?;
        let held = self
            .held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id.0)
            .copied();
        rules::check_lease_held(id, row.get(0), row.get(1), held)
    }

    pub(crate) fn tx<T>(&self, f: impl FnOnce(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut client = self.take()?;
        let out = (|| {
            let mut t = client.transaction()?;
            let out = f(&mut t)?;
            t.commit()?;
            Ok(out)
        })();
        self.put(client);
        out
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

fn is_unique_violation(e: &postgres::Error) -> bool {
    e.code() == Some(&SqlState::UNIQUE_VIOLATION)
}

fn duplicate(what: &'static str, name: &str) -> impl FnOnce(postgres::Error) -> LadderError {
    rules::duplicate(is_unique_violation, what, name)
}

fn bad(what: &str, value: &str) -> LadderError {
    LadderError::Database(format!("unexpected {what} {value:?} in the database").into())
}

fn exists(t: &mut Transaction<'_>, table: &str, id: i64) -> Result<bool> {
    let sql = format!("SELECT EXISTS (SELECT 1 FROM {table} WHERE id = $1)");
    Ok(t.query_one(&sql, &[&id])?.get(0))
}

use sql::{KEY_COLUMNS, MATCH_COLUMNS, SANCTION_COLUMNS, key_from_row, sanction_from_row};

const VERSION_COLUMNS: &str = "id, bot_id, label, created_ms, retired_ms";

fn version_from_row(r: &Row) -> Version {
    Version {
        id: VersionId(r.get(0)),
        bot: BotId(r.get(1)),
        label: r.get(2),
        created_ms: r.get(3),
        retired_ms: r.get(4),
    }
}

fn bot_from_row(r: &Row) -> Bot {
    Bot {
        id: BotId(r.get(0)),
        owner: OwnerId(r.get(1)),
        name: r.get(2),
        created_ms: r.get(3),
    }
}

fn season_from_row(r: &Row) -> Season {
    Season {
        id: SeasonId(r.get(0)),
        name: r.get(1),
        opened_ms: r.get(2),
        closed_ms: r.get(3),
    }
}

/// Loads a match; with `lock`, locks its row until the transaction ends.
pub(super) fn load_match(t: &mut Transaction<'_>, id: MatchId, lock: bool) -> Result<MatchRecord> {
    sql::load_match(&mut PgTx::new(t), id, lock)
}

fn load_matches(t: &mut Transaction<'_>, sql: &str, p: &[Value<'_>]) -> Result<Vec<MatchRecord>> {
    sql::load_matches(&mut PgTx::new(t), sql, p)
}

fn read_rating(
    t: &mut Transaction<'_>,
    season: SeasonId,
    profile: &str,
    version: VersionId,
) -> Result<Option<RatingState>> {
    sql::read_rating(&mut PgTx::new(t), season, profile, version)
}

fn write_changes(
    t: &mut Transaction<'_>,
    season: SeasonId,
    match_id: Option<MatchId>,
    cause: RatingCause,
    changes: &[RatingChange],
    now: Millis,
) -> Result<()> {
    sql::write_changes(&mut PgTx::new(t), season, match_id, cause, changes, now)
}

fn rated_matches_of(t: &mut Transaction<'_>, season: SeasonId) -> Result<Vec<RatedMatch>> {
    sql::rated_matches_of(&mut PgTx::new(t), season)
}

fn ratings_of(t: &mut Transaction<'_>, season: SeasonId) -> Result<Vec<RatingRow>> {
    sql::ratings_of(&mut PgTx::new(t), season)
}

fn lock_ratings(t: &mut Transaction<'_>) -> Result<()> {
    PgTx::new(t).lock_ratings()
}

fn insert_key(
    t: &mut Transaction<'_>,
    subject: KeySubject,
    hash: &KeyHash,
    now: Millis,
) -> Result<KeyId> {
    sql::insert_key(&mut PgTx::new(t), subject, hash, now)
}

impl Store for PgStore {
    fn create_owner(&self, name: &str, key: &KeyHash, now: Millis) -> Result<OwnerId> {
        rules::check_name("owner", name)?;
        self.tx(|t| {
            let id: i64 = t
                .query_one(
                    "INSERT INTO owners (name, created_ms) VALUES ($1, $2) RETURNING id",
                    &[&name, &now],
                )
                .map_err(duplicate("owner", name))?
                .get(0);
            t.execute(
                "INSERT INTO keys (kind, owner_id, hash, created_ms) VALUES ('owner', $1, $2, $3)",
                &[&id, &&key.0[..], &now],
            )
            .map_err(duplicate("key", "(hash)"))?;
            Ok(OwnerId(id))
        })
    }

    fn owner(&self, id: OwnerId) -> Result<Owner> {
        self.tx(|t| {
            let r = t
                .query_opt(
                    "SELECT name, created_ms FROM owners WHERE id = $1",
                    &[&id.0],
                )?
                .ok_or_else(|| not_found("owner", id))?;
            Ok(Owner {
                id,
                name: r.get(0),
                created_ms: r.get(1),
            })
        })
    }

    fn create_bot(&self, owner: OwnerId, name: &str, now: Millis) -> Result<BotId> {
        rules::check_name("bot", name)?;
        self.tx(|t| {
            require(exists(t, "owners", owner.0)?, "owner", owner)?;
            let r = t
                .query_one(
                    "INSERT INTO bots (owner_id, name, created_ms) VALUES ($1, $2, $3)
                     RETURNING id",
                    &[&owner.0, &name, &now],
                )
                .map_err(duplicate("bot", name))?;
            Ok(BotId(r.get(0)))
        })
    }

    fn bot(&self, id: BotId) -> Result<Bot> {
        self.tx(|t| {
            t.query_opt(
                "SELECT id, owner_id, name, created_ms FROM bots WHERE id = $1",
                &[&id.0],
            )?
            .map(|r| bot_from_row(&r))
            .ok_or_else(|| not_found("bot", id))
        })
    }

    fn bots_of(&self, owner: OwnerId) -> Result<Vec<Bot>> {
        self.tx(|t| {
            Ok(t.query(
                "SELECT id, owner_id, name, created_ms FROM bots WHERE owner_id = $1 ORDER BY id",
                &[&owner.0],
            )?
            .iter()
            .map(bot_from_row)
            .collect())
        })
    }

    fn create_version(
        &self,
        bot: BotId,
        label: &str,
        key: &KeyHash,
        keep_active: usize,
        now: Millis,
    ) -> Result<(VersionId, Vec<VersionId>)> {
        rules::check_name("version", label)?;
        rules::check_keep_active(keep_active)?;
        self.tx(|t| {
            // Locks the bot, so that two new versions of one bot retire in turn.
            if t.query_opt("SELECT 1 FROM bots WHERE id = $1 FOR UPDATE", &[&bot.0])?
                .is_none()
            {
                return Err(not_found("bot", bot));
            }
            let id: i64 = t
                .query_one(
                    "INSERT INTO versions (bot_id, label, created_ms) VALUES ($1, $2, $3)
                     RETURNING id",
                    &[&bot.0, &label, &now],
                )
                .map_err(duplicate("version", label))?
                .get(0);
            t.execute(
                "INSERT INTO keys (kind, version_id, hash, created_ms)
                 VALUES ('version', $1, $2, $3)",
                &[&id, &&key.0[..], &now],
            )
            .map_err(duplicate("key", "(hash)"))?;
            let active: Vec<VersionId> = t
                .query(
                    "SELECT id FROM versions WHERE bot_id = $1 AND retired_ms IS NULL
                     ORDER BY created_ms DESC, id DESC",
                    &[&bot.0],
                )?
                .iter()
                .map(|r| VersionId(r.get(0)))
                .collect();
            let retired = rules::versions_to_retire(&active, keep_active);
            for old in &retired {
                t.execute(
                    "UPDATE versions SET retired_ms = $1 WHERE id = $2",
                    &[&now, &old.0],
                )?;
            }
            Ok((VersionId(id), retired))
        })
    }

    fn version(&self, id: VersionId) -> Result<Version> {
        self.tx(|t| {
            let sql = format!("SELECT {VERSION_COLUMNS} FROM versions WHERE id = $1");
            t.query_opt(&sql, &[&id.0])?
                .map(|r| version_from_row(&r))
                .ok_or_else(|| not_found("version", id))
        })
    }

    fn versions_of(&self, bot: BotId) -> Result<Vec<Version>> {
        self.tx(|t| {
            let sql = format!(
                "SELECT {VERSION_COLUMNS} FROM versions WHERE bot_id = $1
                 ORDER BY created_ms DESC, id DESC"
            );
            Ok(t.query(&sql, &[&bot.0])?
                .iter()
                .map(version_from_row)
                .collect())
        })
    }

    fn active_versions(&self) -> Result<Vec<VersionInfo>> {
        self.tx(|t| {
            Ok(t.query(
                "SELECT v.id, v.bot_id, b.owner_id FROM versions v JOIN bots b ON b.id = v.bot_id
                 WHERE v.retired_ms IS NULL ORDER BY v.id",
                &[],
            )?
            .iter()
            .map(|r| VersionInfo {
                version: VersionId(r.get(0)),
                bot: BotId(r.get(1)),
                owner: OwnerId(r.get(2)),
            })
            .collect())
        })
    }

    fn key_by_hash(&self, hash: &KeyHash) -> Result<Option<KeyRecord>> {
        self.tx(|t| {
            let sql = format!("SELECT {KEY_COLUMNS} FROM keys WHERE hash = $1");
            t.query_opt(&sql, &[&&hash.0[..]])?
                .map(|r| key_from_row(&r))
                .transpose()
        })
    }

    fn add_key(&self, subject: KeySubject, hash: &KeyHash, now: Millis) -> Result<KeyId> {
        self.tx(|t| insert_key(t, subject, hash, now))
    }

    fn keys_of(&self, subject: KeySubject) -> Result<Vec<KeyRecord>> {
        self.tx(|t| {
            let (_, col, id) = rules::key_columns(subject);
            let sql = format!("SELECT {KEY_COLUMNS} FROM keys WHERE {col} = $1 ORDER BY id");
            t.query(&sql, &[&id])?
                .iter()
                .map(|r| key_from_row(r))
                .collect()
        })
    }

    fn revoke_key(&self, id: KeyId, now: Millis) -> Result<()> {
        self.tx(|t| {
            require(exists(t, "keys", id.0)?, "key", id)?;
            t.execute(
                "UPDATE keys SET revoked_ms = $1 WHERE id = $2 AND revoked_ms IS NULL",
                &[&now, &id.0],
            )?;
            Ok(())
        })
    }

    fn rotate_key(&self, old: KeyId, new: &KeyHash, now: Millis) -> Result<KeyId> {
        self.tx(|t| {
            let sql = format!("SELECT {KEY_COLUMNS} FROM keys WHERE id = $1 FOR UPDATE");
            let rec = t
                .query_opt(&sql, &[&old.0])?
                .map(|r| key_from_row(&r))
                .transpose()?
                .ok_or_else(|| not_found("key", old))?;
            rules::check_rotatable(&rec)?;
            t.execute(
                "UPDATE keys SET revoked_ms = $1 WHERE id = $2",
                &[&now, &old.0],
            )?;
            insert_key(t, rec.subject, new, now)
        })
    }

    fn open_season(&self, name: &str, now: Millis) -> Result<SeasonId> {
        rules::check_name("season", name)?;
        self.tx(|t| {
            let open: Option<String> = t
                .query_opt("SELECT name FROM seasons WHERE closed_ms IS NULL", &[])?
                .map(|r| r.get(0));
            rules::check_no_open_season(open.as_deref())?;
            let r = t
                .query_one(
                    "INSERT INTO seasons (name, opened_ms) VALUES ($1, $2) RETURNING id",
                    &[&name, &now],
                )
                .map_err(|e| {
                    // Two nodes opening a season at once: the one-open index refuses the second.
                    match t_is_name_taken(&e) {
                        Some(false) => rules::season_opened_meanwhile(),
                        _ => duplicate("season", name)(e),
                    }
                })?;
            Ok(SeasonId(r.get(0)))
        })
    }

    fn close_season(&self, id: SeasonId, now: Millis) -> Result<()> {
        self.tx(|t| {
            require(exists(t, "seasons", id.0)?, "season", id)?;
            let n = t.execute(
                "UPDATE seasons SET closed_ms = $1 WHERE id = $2 AND closed_ms IS NULL",
                &[&now, &id.0],
            )?;
            rules::check_season_closed_now(id, n > 0)
        })
    }

    fn current_season(&self) -> Result<Option<Season>> {
        self.tx(|t| {
            Ok(t.query_opt(
                "SELECT id, name, opened_ms, closed_ms FROM seasons WHERE closed_ms IS NULL",
                &[],
            )?
            .map(|r| season_from_row(&r)))
        })
    }

    fn seasons(&self) -> Result<Vec<Season>> {
        self.tx(|t| {
            Ok(t.query(
                "SELECT id, name, opened_ms, closed_ms FROM seasons ORDER BY id",
                &[],
            )?
            .iter()
            .map(season_from_row)
            .collect())
        })
    }

    fn schedule_match(&self, m: &NewMatch, now: Millis) -> Result<MatchId> {
        rules::check_new_match(m)?;
        self.tx(|t| schedule_in(t, m, now))
    }

    fn start_match(&self, id: MatchId, now: Millis) -> Result<()> {
        self.tx(|t| {
            rules::check_start(&load_match(t, id, true)?)?;
            t.execute(
                "UPDATE matches SET state = 'running', started_ms = $1 WHERE id = $2",
                &[&now, &id.0],
            )?;
            Ok(())
        })
    }

    fn finish_match(
        &self,
        id: MatchId,
        results: &[SeatResult],
        config: &RatingConfig,
        now: Millis,
    ) -> Result<Vec<RatingChange>> {
        self.tx(|t| {
            lock_ratings(t)?;
            load_match(t, id, true)?;
            self.check_lease(t, id)?;
            finish_in(t, id, results, config, now)
        })
    }

    fn abort_match(
        &self,
        id: MatchId,
        outcomes: &[SeatOutcome],
        reason: &str,
        now: Millis,
    ) -> Result<()> {
        self.tx(|t| {
            load_match(t, id, true)?;
            self.check_lease(t, id)?;
            abort_in(t, id, outcomes, reason, now)
        })
    }

    fn finish_validation(
        &self,
        id: MatchId,
        outcome: SeatOutcome,
        reasons: &[String],
        now: Millis,
    ) -> Result<()> {
        self.tx(|t| {
            let m = load_match(t, id, true)?;
            rules::check_can_end(&m, Ending::Finish)?;
            self.check_lease(t, id)?;
            let version = rules::validation_version(&m)?;
            let (passed, reasons) = rules::verdict_to_text(reasons);
            t.execute(
                "UPDATE match_seats SET joined = $1, timeouts = $2 WHERE match_id = $3",
                &[&outcome.joined, &i64::from(outcome.timeouts), &id.0],
            )?;
            t.execute(
                "UPDATE matches SET state = 'finished', started_ms = COALESCE(started_ms, $1),
                     ended_ms = $1 WHERE id = $2",
                &[&now, &id.0],
            )?;
            t.execute(
                "INSERT INTO validations (match_id, version_id, passed, reasons)
                 VALUES ($1, $2, $3, $4)",
                &[&id.0, &version.0, &passed, &reasons],
            )?;
            Ok(())
        })
    }

    fn validations_of(&self, version: VersionId) -> Result<Vec<Validation>> {
        self.tx(|t| {
            let rows = t.query(
                "SELECT v.match_id, m.profile, v.passed, v.reasons, m.ended_ms
                 FROM validations v JOIN matches m ON m.id = v.match_id
                 WHERE v.version_id = $1 AND m.state = 'finished' ORDER BY v.match_id",
                &[&version.0],
            )?;
            Ok(rows
                .iter()
                .map(|r| {
                    let reasons: String = r.get(3);
                    Validation {
                        match_id: MatchId(r.get(0)),
                        version,
                        profile: r.get(1),
                        passed: r.get(2),
                        reasons: rules::reasons_from_text(&reasons),
                        ended_ms: r.get::<_, Option<Millis>>(4).unwrap_or(0),
                    }
                })
                .collect())
        })
    }

    fn void_match(
        &self,
        id: MatchId,
        reason: &str,
        config: &RatingConfig,
        now: Millis,
    ) -> Result<Vec<RatingChange>> {
        rules::check_void_reason(reason)?;
        self.tx(|t| {
            lock_ratings(t)?;
            let m = load_match(t, id, true)?;
            let was_rated = rules::check_voidable(&m)?;
            t.execute(
                "UPDATE matches SET state = 'void', reason = $1, ended_ms = COALESCE(ended_ms, $2)
                 WHERE id = $3",
                &[&reason, &now, &id.0],
            )?;
            if !was_rated {
                return Ok(Vec::new());
            }
            let matches = rated_matches_of(t, m.season)?;
            let ratings = ratings_of(t, m.season)?;
            let changes = rules::void_changes(config, &m, matches, ratings);
            write_changes(t, m.season, Some(id), RatingCause::Void, &changes, now)?;
            Ok(changes)
        })
    }

    fn match_record(&self, id: MatchId) -> Result<MatchRecord> {
        self.tx(|t| load_match(t, id, false))
    }

    fn matches_in_state(&self, state: MatchState) -> Result<Vec<MatchRecord>> {
        self.tx(|t| {
            let sql = format!("SELECT {MATCH_COLUMNS} FROM matches WHERE state = $1 ORDER BY id");
            load_matches(t, &sql, &[state.as_str().into()])
        })
    }

    fn recent_matches(&self, limit: usize) -> Result<Vec<MatchRecord>> {
        self.tx(|t| {
            let sql = format!("SELECT {MATCH_COLUMNS} FROM matches ORDER BY id DESC LIMIT $1");
            load_matches(t, &sql, &[limit.into()])
        })
    }

    fn seat_history(
        &self,
        version: VersionId,
        since: Option<Millis>,
        limit: usize,
    ) -> Result<Vec<SeatHistory>> {
        self.tx(|t| {
            t.query(
                "SELECT m.id, m.state, m.ended_ms, s.joined, s.timeouts
                 FROM match_seats s JOIN matches m ON m.id = s.match_id
                 WHERE s.version_id = $1 AND s.joined IS NOT NULL
                   AND m.ended_ms IS NOT NULL AND m.ended_ms > $2
                 ORDER BY s.match_id DESC LIMIT $3",
                &[&version.0, &since.unwrap_or(Millis::MIN), &(limit as i64)],
            )?
            .iter()
            .map(|r| {
                let state: String = r.get(1);
                let timeouts: i64 = r.get(4);
                Ok(SeatHistory {
                    match_id: MatchId(r.get(0)),
                    state: MatchState::from_str_opt(&state)
                        .ok_or_else(|| bad("match state", &state))?,
                    ended_ms: r.get(2),
                    outcome: SeatOutcome {
                        joined: r.get(3),
                        timeouts: timeouts as u32,
                    },
                })
            })
            .collect()
        })
    }

    fn last_scheduled(&self) -> Result<Vec<(VersionId, Millis)>> {
        self.tx(|t| {
            Ok(t.query(
                // One indexed lookup per version (match_seats_version) instead of a scan of every
                // seat ever played: the matchmaker asks every round. Ids grow with creation.
                "SELECT v.id, (SELECT m.created_ms FROM match_seats s
                               JOIN matches m ON m.id = s.match_id
                               WHERE s.version_id = v.id ORDER BY s.match_id DESC LIMIT 1) AS last
                 FROM versions v ORDER BY v.id",
                &[],
            )?
            .iter()
            .filter_map(|r| Some((VersionId(r.get(0)), r.get::<_, Option<Millis>>(1)?)))
            .collect())
        })
    }

    fn placing_stats(&self, season: SeasonId, profile: &str) -> Result<Vec<PlacingStats>> {
        self.tx(|t| {
            let rows = t.query(
                "SELECT s.version_id, COUNT(*), COUNT(*) FILTER (WHERE s.\"placing\" = 1),
                        COALESCE(SUM(s.\"placing\"), 0)::BIGINT,
                        COALESCE(SUM(s.timeouts), 0)::BIGINT
                 FROM matches m JOIN match_seats s ON s.match_id = m.id
                 WHERE m.season_id = $1 AND m.profile = $2 AND m.state = 'finished'
                   AND m.rated_seq IS NOT NULL
                 GROUP BY s.version_id ORDER BY s.version_id",
                &[&season.0, &profile],
            )?;
            Ok(rows
                .iter()
                .map(|r| {
                    let matches: i64 = r.get(1);
                    let wins: i64 = r.get(2);
                    let placing_sum: i64 = r.get(3);
                    let timeouts: i64 = r.get(4);
                    PlacingStats {
                        version: VersionId(r.get(0)),
                        matches: matches as u32,
                        wins: wins as u32,
                        placing_sum: placing_sum.max(0) as u64,
                        timeouts: timeouts.max(0) as u64,
                    }
                })
                .collect())
        })
    }

    fn ratings(&self, season: SeasonId) -> Result<Vec<RatingRow>> {
        self.tx(|t| ratings_of(t, season))
    }

    fn rating(
        &self,
        season: SeasonId,
        profile: &str,
        version: VersionId,
    ) -> Result<Option<RatingRow>> {
        let state = self.tx(|t| read_rating(t, season, profile, version))?;
        Ok(rules::rating_row(season, profile, version, state))
    }

    fn rating_events(&self, season: SeasonId) -> Result<Vec<RatingEvent>> {
        self.tx(|t| {
            t.query(
                "SELECT id, profile, version_id, match_id, cause, mu_before, sigma_before,
                        matches_before, mu_after, sigma_after, matches_after, created_ms
                 FROM rating_events WHERE season_id = $1 ORDER BY id",
                &[&season.0],
            )?
            .iter()
            .map(|r| {
                let cause: String = r.get(4);
                Ok(RatingEvent {
                    id: r.get(0),
                    season,
                    match_id: r.get::<_, Option<i64>>(3).map(MatchId),
                    cause: RatingCause::from_str_opt(&cause)
                        .ok_or_else(|| bad("rating cause", &cause))?,
                    change: RatingChange {
                        profile: r.get(1),
                        version: VersionId(r.get(2)),
                        before: sql::rating_from(r, 5)?,
                        after: sql::rating_from(r, 8)?,
                    },
                    created_ms: r.get(11),
                })
            })
            .collect()
        })
    }

    fn rated_matches(&self, season: SeasonId) -> Result<Vec<RatedMatch>> {
        self.tx(|t| rated_matches_of(t, season))
    }

    fn apply_rating_changes(
        &self,
        season: SeasonId,
        changes: &[RatingChange],
        cause: RatingCause,
        now: Millis,
    ) -> Result<()> {
        self.tx(|t| {
            lock_ratings(t)?;
            require(exists(t, "seasons", season.0)?, "season", season)?;
            let stored = changes
                .iter()
                .map(|ch| read_rating(t, season, &ch.profile, ch.version))
                .collect::<Result<Vec<_>>>()?;
            rules::check_ratings_unchanged(changes, &stored)?;
            write_changes(t, season, None, cause, changes, now)
        })
    }

    fn add_sanction(
        &self,
        target: SanctionTarget,
        kind: SanctionKind,
        reason: &str,
        now: Millis,
    ) -> Result<SanctionId> {
        rules::check_sanction_reason(reason)?;
        let (tname, tid) = target.parts();
        self.tx(|t| {
            rules::require_target(exists(t, target.table(), tid)?, target)?;
            let r = t.query_one(
                "INSERT INTO sanctions (target, target_id, kind, reason, created_ms)
                 VALUES ($1, $2, $3, $4, $5) RETURNING id",
                &[&tname, &tid, &kind.as_str(), &reason, &now],
            )?;
            Ok(SanctionId(r.get(0)))
        })
    }

    fn lift_sanction(&self, id: SanctionId, reason: &str, now: Millis) -> Result<()> {
        self.tx(|t| {
            require(exists(t, "sanctions", id.0)?, "sanction", id)?;
            let n = t.execute(
                "UPDATE sanctions SET lifted_ms = $1, lifted_reason = $2
                 WHERE id = $3 AND lifted_ms IS NULL",
                &[&now, &reason, &id.0],
            )?;
            rules::check_sanction_lifted_now(id, n > 0)
        })
    }

    fn active_sanctions(&self) -> Result<Vec<Sanction>> {
        self.tx(|t| {
            let sql = format!(
                "SELECT {SANCTION_COLUMNS} FROM sanctions WHERE lifted_ms IS NULL ORDER BY id"
            );
            t.query(&sql, &[])?
                .iter()
                .map(|r| sanction_from_row(r))
                .collect()
        })
    }

    fn sanctions_of(&self, target: SanctionTarget) -> Result<Vec<Sanction>> {
        let (tname, tid) = target.parts();
        self.tx(|t| {
            let sql = format!(
                "SELECT {SANCTION_COLUMNS} FROM sanctions WHERE target = $1 AND target_id = $2
                 ORDER BY id"
            );
            t.query(&sql, &[&tname, &tid])?
                .iter()
                .map(|r| sanction_from_row(r))
                .collect()
        })
    }
}

/// For a unique violation on `seasons`: `Some(true)` when the name was taken, `Some(false)` when
/// the one-open index refused; `None` for any other error.
fn t_is_name_taken(e: &postgres::Error) -> Option<bool> {
    let db = e.as_db_error()?;
    if db.code() != &SqlState::UNIQUE_VIOLATION {
        return None;
    }
    Some(db.constraint() != Some("seasons_one_open"))
}

/// Schedules a match inside `t` (see [`Store::schedule_match`]; the caller checked its seats).
pub(super) fn schedule_in(t: &mut Transaction<'_>, m: &NewMatch, now: Millis) -> Result<MatchId> {
    sql::schedule_in(&mut PgTx::new(t), m, now)
}

/// Finishes a match inside `t` (see [`Store::finish_match`]).
pub(crate) fn finish_in(
    t: &mut Transaction<'_>,
    id: MatchId,
    results: &[SeatResult],
    config: &RatingConfig,
    now: Millis,
) -> Result<Vec<RatingChange>> {
    sql::finish_in(&mut PgTx::new(t), id, results, config, now)
}

/// Aborts a match inside `t` (see [`Store::abort_match`]).
pub(crate) fn abort_in(
    t: &mut Transaction<'_>,
    id: MatchId,
    outcomes: &[SeatOutcome],
    reason: &str,
    now: Millis,
) -> Result<()> {
    sql::abort_in(&mut PgTx::new(t), id, outcomes, reason, now)
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
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn query_each(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        each: &mut dyn FnMut(&dyn backend::Row) -> Result<()>,
    ) -> Result<()> {
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
    fn opt_i64(&self, i: usize) -> Result<Option<i64>> {
        let ty = self.columns()[i].type_();
        Ok(if *ty == Type::INT2 {
            self.try_get::<_, Option<i16>>(i)?.map(i64::from)
        } else if *ty == Type::INT4 {
            self.try_get::<_, Option<i32>>(i)?.map(i64::from)
        } else {
            self.try_get(i)?
        })
    }

    fn f64(&self, i: usize) -> Result<f64> {
        Ok(self.try_get(i)?)
    }

    fn opt_bool(&self, i: usize) -> Result<Option<bool>> {
        Ok(self.try_get(i)?)
    }

    fn opt_string(&self, i: usize) -> Result<Option<String>> {
        Ok(self.try_get(i)?)
    }

    fn blob(&self, i: usize) -> Result<Vec<u8>> {
        Ok(self.try_get(i)?)
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
    }
}
