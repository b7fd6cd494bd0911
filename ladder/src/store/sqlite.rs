//! The SQLite store: one file `ladder.sqlite3` in the data directory, held by one process.
//!
//! At open the store takes an exclusive operating-system lock on `ladder.lock` in the data
//! directory (`flock` on Unix, `LockFileEx` on Windows, through `std::fs::File::try_lock`) and keeps
//! it until it is dropped; a second process (or a second store in the same process) on the same
//! directory gets [`LadderError::Locked`]. The lock dies with the process, so a crash never leaves
//! a stale lock behind.
//!
//! Only the SQL and the transactions are here; what each method checks and decides is in
//! `rules.rs`, shared with the PostgreSQL store.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::types::ToSqlOutput;
use rusqlite::{
    Connection, ErrorCode, OptionalExtension, ToSql, Transaction, TransactionBehavior, params,
    params_from_iter,
};

use super::backend::{Dialect, Row, Taken, Tx, Value};
use super::rules::{self, Ending, Migration, not_found, require};
use super::sql::{self, MATCH_COLUMNS};
use super::{
    Bot, KeyRecord, KeySubject, MatchRecord, MatchState, NewMatch, Owner, PlacingStats,
    RatingCause, RatingChange, RatingEvent, RatingRow, Sanction, SanctionKind, SanctionTarget,
    Season, SeatHistory, SeatResult, Store, Validation, Version, VersionInfo,
};
use crate::error::{LadderError, Result};
use crate::health::SeatOutcome;
use crate::ids::{BotId, KeyId, MatchId, Millis, OwnerId, SanctionId, SeasonId, VersionId};
use crate::keys::KeyHash;
use crate::rating::{RatedMatch, Rating, RatingConfig, RatingState};

/// Prepared statements kept per connection: more than the store has.
const STATEMENT_CACHE: usize = 256;

/// The schema steps, in order: (step, name, SQL). Step numbers match the file names in
/// `migrations/sqlite/`.
const MIGRATIONS: &[Migration] = &[
    (
        1,
        "0001_init.sql",
        include_str!("../../migrations/sqlite/0001_init.sql"),
    ),
    (
        2,
        "0002_validations.sql",
        include_str!("../../migrations/sqlite/0002_validations.sql"),
    ),
    (
        3,
        "0003_nodes.sql",
        include_str!("../../migrations/sqlite/0003_nodes.sql"),
    ),
    (
        4,
        "0004_indexes.sql",
        include_str!("../../migrations/sqlite/0004_indexes.sql"),
    ),
];

/// The database file inside the data directory.
pub const DATABASE_FILE: &str = "ladder.sqlite3";
/// The lock file inside the data directory.
pub const LOCK_FILE: &str = "ladder.lock";

/// The ladder kept in SQLite. See the module docs for the data-directory lock.
#[derive(Debug)]
pub struct SqliteStore {
    conn: Mutex<Connection>,
    dir: PathBuf,
    // Held for the store's lifetime; dropping the file releases the lock.
    _lock: File,
}

/// How long opening waits for the directory lock before it reports it held.
const LOCK_PATIENCE: Duration = Duration::from_secs(1);
/// Tries within [`LOCK_PATIENCE`].
const LOCK_RETRIES: u32 = 20;

impl SqliteStore {
    /// Opens (creating if needed) the ladder in `dir`: takes the directory lock, opens the
    /// database and applies any schema steps it lacks.
    pub fn open(dir: &Path) -> Result<SqliteStore> {
        fs::create_dir_all(dir)?;
        let lock_path = dir.join(LOCK_FILE);
        let mut lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&lock_path)?;
        // A lock held a moment longer than its store: a child this process forks (a bot, a
        // database server) shares the lock's open file until it execs, which under load takes
        // a while. Another process's lock is still refused, after LOCK_PATIENCE.
        let mut tries = 0;
        loop {
            match lock.try_lock() {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) if tries < LOCK_RETRIES => {
                    tries += 1;
                    std::thread::sleep(LOCK_PATIENCE / LOCK_RETRIES);
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(LadderError::Locked { path: lock_path });
                }
                Err(TryLockError::Error(e)) => return Err(e.into()),
            }
        }
        // For a person wondering who holds the directory; the lock itself is what counts.
        lock.set_len(0)?;
        writeln!(lock, "{}", std::process::id())?;

        let mut conn = Connection::open(dir.join(DATABASE_FILE))?;
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "foreign_keys", true)?;
        // Every statement is prepared once and kept (`prepare_cached`): parsing SQL was a
        // twentieth of a busy ladder server's time. Room for all of them.
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        // Without the query planner stability guarantee SQLite may plan by the values bound to a
        // statement, and then recompiles it whenever they change: every run of a cached
        // statement with an ORDER BY was compiled again. The store's plans do not depend on
        // values (their indexes decide), so one plan per statement is what we want.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
        migrate(&mut conn)?;
        Ok(SqliteStore {
            conn: Mutex::new(conn),
            dir: dir.to_path_buf(),
            _lock: lock,
        })
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The highest schema step applied.
    pub fn schema_step(&self) -> Result<u32> {
        self.read(|c| Ok(c.query_row("SELECT MAX(step) FROM schema_migrations", [], |r| r.get(0))?))
    }

    /// The highest schema step this build knows.
    pub fn known_schema_step() -> u32 {
        rules::last_step(MIGRATIONS)
    }

    fn write<T>(&self, f: impl FnOnce(&Transaction<'_>) -> Result<T>) -> Result<T> {
        // A panic inside a transaction drops it, which rolls it back: the connection is sound.
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    fn read<T>(&self, f: impl FnOnce(&Connection) -> Result<T>) -> Result<T> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let tx = conn.transaction()?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }
}

fn migrate(conn: &mut Connection) -> Result<()> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             step       INTEGER PRIMARY KEY,
             name       TEXT NOT NULL,
             applied_ms INTEGER NOT NULL
         )",
    )?;
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current: u32 = tx.query_row(
        "SELECT COALESCE(MAX(step), 0) FROM schema_migrations",
        [],
        |r| r.get(0),
    )?;
    let now = rules::wall_clock_ms();
    for &(step, name, sql) in rules::pending_steps(MIGRATIONS, current)? {
        tx.execute_batch(sql)?;
        tx.execute(
            "INSERT INTO schema_migrations (step, name, applied_ms) VALUES (?1, ?2, ?3)",
            params![step, name, now],
        )?;
    }
    tx.commit()?;
    Ok(())
}

/// True for a UNIQUE or PRIMARY KEY violation.
fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _)
        if f.code == ErrorCode::ConstraintViolation
            && (f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY))
}

fn duplicate(what: &'static str, name: &str) -> impl FnOnce(rusqlite::Error) -> LadderError {
    rules::duplicate(is_unique_violation, what, name)
}

fn exists(c: &Connection, table: &str, id: i64) -> Result<bool> {
    let sql = format!("SELECT EXISTS (SELECT 1 FROM {table} WHERE id = ?1)");
    Ok(c.query_row(&sql, [id], |r| r.get(0))?)
}

fn hash_from_blob(blob: Vec<u8>) -> rusqlite::Result<KeyHash> {
    let bytes: [u8; 32] = blob.try_into().map_err(|_| {
        rusqlite::Error::InvalidColumnType(0, "hash".into(), rusqlite::types::Type::Blob)
    })?;
    Ok(KeyHash(bytes))
}

fn bad_text(col: usize, what: &str) -> rusqlite::Error {
    rusqlite::Error::InvalidColumnType(col, what.into(), rusqlite::types::Type::Text)
}

const KEY_COLUMNS: &str = "id, kind, owner_id, version_id, hash, created_ms, revoked_ms";

fn key_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<KeyRecord> {
    let kind: String = r.get(1)?;
    let subject =
        rules::key_subject(&kind, r.get(2)?, r.get(3)?).ok_or_else(|| bad_text(1, "kind"))?;
    Ok(KeyRecord {
        id: KeyId(r.get(0)?),
        subject,
        hash: hash_from_blob(r.get(4)?)?,
        created_ms: r.get(5)?,
        revoked_ms: r.get(6)?,
    })
}

fn version_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Version> {
    Ok(Version {
        id: VersionId(r.get(0)?),
        bot: BotId(r.get(1)?),
        label: r.get(2)?,
        created_ms: r.get(3)?,
        retired_ms: r.get(4)?,
    })
}

fn bot_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Bot> {
    Ok(Bot {
        id: BotId(r.get(0)?),
        owner: OwnerId(r.get(1)?),
        name: r.get(2)?,
        created_ms: r.get(3)?,
    })
}

fn season_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Season> {
    Ok(Season {
        id: SeasonId(r.get(0)?),
        name: r.get(1)?,
        opened_ms: r.get(2)?,
        closed_ms: r.get(3)?,
    })
}

const SANCTION_COLUMNS: &str =
    "id, target, target_id, kind, reason, created_ms, lifted_ms, lifted_reason";

fn sanction_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Sanction> {
    let target: String = r.get(1)?;
    let target = rules::sanction_target(&target, r.get(2)?).ok_or_else(|| bad_text(1, "target"))?;
    let kind: String = r.get(3)?;
    Ok(Sanction {
        id: SanctionId(r.get(0)?),
        target,
        kind: SanctionKind::from_str_opt(&kind).ok_or_else(|| bad_text(3, "kind"))?,
        reason: r.get(4)?,
        created_ms: r.get(5)?,
        lifted_ms: r.get(6)?,
        lifted_reason: r.get(7)?,
    })
}

fn load_match(c: &Connection, id: MatchId) -> Result<MatchRecord> {
    sql::load_match(&mut SqliteTx(c), id, false)
}

fn load_matches(c: &Connection, sql: &str, p: &[Value<'_>]) -> Result<Vec<MatchRecord>> {
    sql::load_matches(&mut SqliteTx(c), sql, p)
}

fn read_rating(
    c: &Connection,
    season: SeasonId,
    profile: &str,
    version: VersionId,
) -> Result<Option<RatingState>> {
    sql::read_rating(&mut SqliteTx(c), season, profile, version)
}

fn write_changes(
    c: &Connection,
    season: SeasonId,
    match_id: Option<MatchId>,
    cause: RatingCause,
    changes: &[RatingChange],
    now: Millis,
) -> Result<()> {
    sql::write_changes(&mut SqliteTx(c), season, match_id, cause, changes, now)
}

fn rated_matches_of(c: &Connection, season: SeasonId) -> Result<Vec<RatedMatch>> {
    sql::rated_matches_of(&mut SqliteTx(c), season)
}

fn ratings_of(c: &Connection, season: SeasonId) -> Result<Vec<RatingRow>> {
    sql::ratings_of(&mut SqliteTx(c), season)
}

impl Store for SqliteStore {
    fn create_owner(&self, name: &str, key: &KeyHash, now: Millis) -> Result<OwnerId> {
        rules::check_name("owner", name)?;
        self.write(|tx| {
            tx.execute(
                "INSERT INTO owners (name, created_ms) VALUES (?1, ?2)",
                params![name, now],
            )
            .map_err(duplicate("owner", name))?;
            let id = OwnerId(tx.last_insert_rowid());
            tx.execute(
                "INSERT INTO keys (kind, owner_id, hash, created_ms) VALUES ('owner', ?1, ?2, ?3)",
                params![id.0, &key.0[..], now],
            )
            .map_err(duplicate("key", "(hash)"))?;
            Ok(id)
        })
    }

    fn owner(&self, id: OwnerId) -> Result<Owner> {
        self.read(|c| {
            c.query_row(
                "SELECT name, created_ms FROM owners WHERE id = ?1",
                [id.0],
                |r| {
                    Ok(Owner {
                        id,
                        name: r.get(0)?,
                        created_ms: r.get(1)?,
                    })
                },
            )
            .optional()?
            .ok_or_else(|| not_found("owner", id))
        })
    }

    fn create_bot(&self, owner: OwnerId, name: &str, now: Millis) -> Result<BotId> {
        rules::check_name("bot", name)?;
        self.write(|tx| {
            require(exists(tx, "owners", owner.0)?, "owner", owner)?;
            tx.execute(
                "INSERT INTO bots (owner_id, name, created_ms) VALUES (?1, ?2, ?3)",
                params![owner.0, name, now],
            )
            .map_err(duplicate("bot", name))?;
            Ok(BotId(tx.last_insert_rowid()))
        })
    }

    fn bot(&self, id: BotId) -> Result<Bot> {
        self.read(|c| {
            c.query_row(
                "SELECT id, owner_id, name, created_ms FROM bots WHERE id = ?1",
                [id.0],
                bot_from_row,
            )
            .optional()?
            .ok_or_else(|| not_found("bot", id))
        })
    }

    fn bots_of(&self, owner: OwnerId) -> Result<Vec<Bot>> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT id, owner_id, name, created_ms FROM bots WHERE owner_id = ?1 ORDER BY id",
            )?;
            Ok(st
                .query_map([owner.0], bot_from_row)?
                .collect::<rusqlite::Result<_>>()?)
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
        self.write(|tx| {
            require(exists(tx, "bots", bot.0)?, "bot", bot)?;
            tx.execute(
                "INSERT INTO versions (bot_id, label, created_ms) VALUES (?1, ?2, ?3)",
                params![bot.0, label, now],
            )
            .map_err(duplicate("version", label))?;
            let id = VersionId(tx.last_insert_rowid());
            tx.execute(
                "INSERT INTO keys (kind, version_id, hash, created_ms)
                 VALUES ('version', ?1, ?2, ?3)",
                params![id.0, &key.0[..], now],
            )
            .map_err(duplicate("key", "(hash)"))?;
            let active: Vec<VersionId> = tx
                .prepare(
                    "SELECT id FROM versions WHERE bot_id = ?1 AND retired_ms IS NULL
                     ORDER BY created_ms DESC, id DESC",
                )?
                .query_map([bot.0], |r| Ok(VersionId(r.get(0)?)))?
                .collect::<rusqlite::Result<_>>()?;
            let retired = rules::versions_to_retire(&active, keep_active);
            for old in &retired {
                tx.execute(
                    "UPDATE versions SET retired_ms = ?1 WHERE id = ?2",
                    params![now, old.0],
                )?;
            }
            Ok((id, retired))
        })
    }

    fn version(&self, id: VersionId) -> Result<Version> {
        self.read(|c| {
            c.query_row(
                "SELECT id, bot_id, label, created_ms, retired_ms FROM versions WHERE id = ?1",
                [id.0],
                version_from_row,
            )
            .optional()?
            .ok_or_else(|| not_found("version", id))
        })
    }

    fn versions_of(&self, bot: BotId) -> Result<Vec<Version>> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT id, bot_id, label, created_ms, retired_ms FROM versions
                 WHERE bot_id = ?1 ORDER BY created_ms DESC, id DESC",
            )?;
            Ok(st
                .query_map([bot.0], version_from_row)?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn active_versions(&self) -> Result<Vec<VersionInfo>> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT v.id, v.bot_id, b.owner_id FROM versions v JOIN bots b ON b.id = v.bot_id
                 WHERE v.retired_ms IS NULL ORDER BY v.id",
            )?;
            Ok(st
                .query_map([], |r| {
                    Ok(VersionInfo {
                        version: VersionId(r.get(0)?),
                        bot: BotId(r.get(1)?),
                        owner: OwnerId(r.get(2)?),
                    })
                })?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn key_by_hash(&self, hash: &KeyHash) -> Result<Option<KeyRecord>> {
        self.read(|c| {
            let sql = format!("SELECT {KEY_COLUMNS} FROM keys WHERE hash = ?1");
            Ok(c.query_row(&sql, [&hash.0[..]], key_from_row).optional()?)
        })
    }

    fn add_key(&self, subject: KeySubject, hash: &KeyHash, now: Millis) -> Result<KeyId> {
        self.write(|tx| insert_key(tx, subject, hash, now))
    }

    fn keys_of(&self, subject: KeySubject) -> Result<Vec<KeyRecord>> {
        self.read(|c| {
            let (_, col, id) = rules::key_columns(subject);
            let sql = format!("SELECT {KEY_COLUMNS} FROM keys WHERE {col} = ?1 ORDER BY id");
            let mut st = c.prepare_cached(&sql)?;
            Ok(st
                .query_map([id], key_from_row)?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn revoke_key(&self, id: KeyId, now: Millis) -> Result<()> {
        self.write(|tx| {
            require(exists(tx, "keys", id.0)?, "key", id)?;
            tx.execute(
                "UPDATE keys SET revoked_ms = ?1 WHERE id = ?2 AND revoked_ms IS NULL",
                params![now, id.0],
            )?;
            Ok(())
        })
    }

    fn rotate_key(&self, old: KeyId, new: &KeyHash, now: Millis) -> Result<KeyId> {
        self.write(|tx| {
            let sql = format!("SELECT {KEY_COLUMNS} FROM keys WHERE id = ?1");
            let rec = tx
                .query_row(&sql, [old.0], key_from_row)
                .optional()?
                .ok_or_else(|| not_found("key", old))?;
            rules::check_rotatable(&rec)?;
            tx.execute(
                "UPDATE keys SET revoked_ms = ?1 WHERE id = ?2",
                params![now, old.0],
            )?;
            insert_key(tx, rec.subject, new, now)
        })
    }

    fn open_season(&self, name: &str, now: Millis) -> Result<SeasonId> {
        rules::check_name("season", name)?;
        self.write(|tx| {
            let open: Option<String> = tx
                .query_row(
                    "SELECT name FROM seasons WHERE closed_ms IS NULL",
                    [],
                    |r| r.get(0),
                )
                .optional()?;
            rules::check_no_open_season(open.as_deref())?;
            tx.execute(
                "INSERT INTO seasons (name, opened_ms) VALUES (?1, ?2)",
                params![name, now],
            )
            .map_err(duplicate("season", name))?;
            Ok(SeasonId(tx.last_insert_rowid()))
        })
    }

    fn close_season(&self, id: SeasonId, now: Millis) -> Result<()> {
        self.write(|tx| {
            require(exists(tx, "seasons", id.0)?, "season", id)?;
            let n = tx.execute(
                "UPDATE seasons SET closed_ms = ?1 WHERE id = ?2 AND closed_ms IS NULL",
                params![now, id.0],
            )?;
            rules::check_season_closed_now(id, n > 0)
        })
    }

    fn current_season(&self) -> Result<Option<Season>> {
        self.read(|c| {
            Ok(c.query_row(
                "SELECT id, name, opened_ms, closed_ms FROM seasons WHERE closed_ms IS NULL",
                [],
                season_from_row,
            )
            .optional()?)
        })
    }

    fn seasons(&self) -> Result<Vec<Season>> {
        self.read(|c| {
            let mut st =
                c.prepare_cached("SELECT id, name, opened_ms, closed_ms FROM seasons ORDER BY id")?;
            Ok(st
                .query_map([], season_from_row)?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn schedule_match(&self, m: &NewMatch, now: Millis) -> Result<MatchId> {
        rules::check_new_match(m)?;
        self.write(|tx| {
            let closed: Option<Option<Millis>> = tx
                .query_row(
                    "SELECT closed_ms FROM seasons WHERE id = ?1",
                    [m.season.0],
                    |r| r.get(0),
                )
                .optional()?;
            rules::check_season_takes_matches(m.season, closed)?;
            for v in &m.seats {
                let retired: Option<Option<Millis>> = tx
                    .query_row(
                        "SELECT retired_ms FROM versions WHERE id = ?1",
                        [v.0],
                        |r| r.get(0),
                    )
                    .optional()?;
                rules::check_version_takes_seat(*v, retired)?;
            }
            tx.execute(
                "INSERT INTO matches (season_id, profile, seed, rated, state, created_ms)
                 VALUES (?1, ?2, ?3, ?4, 'scheduled', ?5)",
                params![m.season.0, m.profile, m.seed as i64, m.rated, now],
            )?;
            let id = MatchId(tx.last_insert_rowid());
            let mut seat = tx.prepare_cached(
                "INSERT INTO match_seats (match_id, seat, version_id) VALUES (?1, ?2, ?3)",
            )?;
            for (i, v) in m.seats.iter().enumerate() {
                seat.execute(params![id.0, i as i64, v.0])?;
            }
            Ok(id)
        })
    }

    fn start_match(&self, id: MatchId, now: Millis) -> Result<()> {
        self.write(|tx| {
            rules::check_start(&load_match(tx, id)?)?;
            tx.execute(
                "UPDATE matches SET state = 'running', started_ms = ?1 WHERE id = ?2",
                params![now, id.0],
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
        self.write(|tx| {
            let m = load_match(tx, id)?;
            let placings = rules::check_finish(&m, results)?;
            let season_open: bool = tx.query_row(
                "SELECT closed_ms IS NULL FROM seasons WHERE id = ?1",
                [m.season.0],
                |r| r.get(0),
            )?;
            let rated = rules::finish_is_rated(&m, season_open);
            {
                let mut seat = tx.prepare_cached(
                    "UPDATE match_seats SET placing = ?1, joined = 1, timeouts = ?2
                     WHERE match_id = ?3 AND seat = ?4",
                )?;
                for (i, r) in results.iter().enumerate() {
                    seat.execute(params![r.placing, r.timeouts, id.0, i as i64])?;
                }
            }
            let mut changes = Vec::new();
            let mut seq = None;
            if rated {
                let mut before = Vec::with_capacity(m.seats.len());
                for s in &m.seats {
                    before.push(
                        read_rating(tx, m.season, &m.profile, s.version)?.unwrap_or_default(),
                    );
                }
                changes = rules::rate_finish(config, &m, &placings, &before)?;
                write_changes(tx, m.season, Some(id), RatingCause::Match, &changes, now)?;
                seq = Some(tx.query_row(
                    "SELECT COALESCE(MAX(rated_seq), 0) + 1 FROM matches",
                    [],
                    |r| r.get::<_, i64>(0),
                )?);
            }
            tx.execute(
                "UPDATE matches SET state = 'finished', rated = ?1, rated_seq = ?2,
                     started_ms = COALESCE(started_ms, ?3), ended_ms = ?3
                 WHERE id = ?4",
                params![rated, seq, now, id.0],
            )?;
            Ok(changes)
        })
    }

    fn abort_match(
        &self,
        id: MatchId,
        outcomes: &[SeatOutcome],
        reason: &str,
        now: Millis,
    ) -> Result<()> {
        self.write(|tx| {
            rules::check_abort(&load_match(tx, id)?, outcomes)?;
            let mut seat = tx.prepare_cached(
                "UPDATE match_seats SET joined = ?1, timeouts = ?2 WHERE match_id = ?3 AND seat = ?4",
            )?;
            for (i, o) in outcomes.iter().enumerate() {
                seat.execute(params![o.joined, o.timeouts, id.0, i as i64])?;
            }
            tx.execute(
                "UPDATE matches SET state = 'aborted', ended_ms = ?1, reason = ?2 WHERE id = ?3",
                params![now, reason, id.0],
            )?;
            Ok(())
        })
    }

    fn finish_validation(
        &self,
        id: MatchId,
        outcome: SeatOutcome,
        reasons: &[String],
        now: Millis,
    ) -> Result<()> {
        self.write(|tx| {
            let m = load_match(tx, id)?;
            rules::check_can_end(&m, Ending::Finish)?;
            let version = rules::validation_version(&m)?;
            let (passed, reasons) = rules::verdict_to_text(reasons);
            tx.execute(
                "UPDATE match_seats SET joined = ?1, timeouts = ?2 WHERE match_id = ?3",
                params![outcome.joined, outcome.timeouts, id.0],
            )?;
            tx.execute(
                "UPDATE matches SET state = 'finished', started_ms = COALESCE(started_ms, ?1),
                     ended_ms = ?1 WHERE id = ?2",
                params![now, id.0],
            )?;
            tx.execute(
                "INSERT INTO validations (match_id, version_id, passed, reasons)
                 VALUES (?1, ?2, ?3, ?4)",
                params![id.0, version.0, passed, reasons],
            )?;
            Ok(())
        })
    }

    fn validations_of(&self, version: VersionId) -> Result<Vec<Validation>> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT v.match_id, m.profile, v.passed, v.reasons, m.ended_ms
                 FROM validations v JOIN matches m ON m.id = v.match_id
                 WHERE v.version_id = ?1 AND m.state = 'finished' ORDER BY v.match_id",
            )?;
            Ok(st
                .query_map([version.0], |r| {
                    let reasons: String = r.get(3)?;
                    Ok(Validation {
                        match_id: MatchId(r.get(0)?),
                        version,
                        profile: r.get(1)?,
                        passed: r.get(2)?,
                        reasons: rules::reasons_from_text(&reasons),
                        ended_ms: r.get::<_, Option<Millis>>(4)?.unwrap_or(0),
                    })
                })?
                .collect::<rusqlite::Result<_>>()?)
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
        self.write(|tx| {
            let m = load_match(tx, id)?;
            let was_rated = rules::check_voidable(&m)?;
            tx.execute(
                "UPDATE matches SET state = 'void', reason = ?1, ended_ms = COALESCE(ended_ms, ?2)
                 WHERE id = ?3",
                params![reason, now, id.0],
            )?;
            if !was_rated {
                return Ok(Vec::new());
            }
            let changes = rules::void_changes(
                config,
                &m,
                rated_matches_of(tx, m.season)?,
                ratings_of(tx, m.season)?,
            );
            write_changes(tx, m.season, Some(id), RatingCause::Void, &changes, now)?;
            Ok(changes)
        })
    }

    fn match_record(&self, id: MatchId) -> Result<MatchRecord> {
        self.read(|c| load_match(c, id))
    }

    fn matches_in_state(&self, state: MatchState) -> Result<Vec<MatchRecord>> {
        self.read(|c| {
            let sql = format!("SELECT {MATCH_COLUMNS} FROM matches WHERE state = ?1 ORDER BY id");
            load_matches(c, &sql, &[state.as_str().into()])
        })
    }

    fn recent_matches(&self, limit: usize) -> Result<Vec<MatchRecord>> {
        self.read(|c| {
            // The limit is written into the SQL, not bound: SQLite re-prepares a statement
            // whenever a new LIMIT value is bound, which undoes the statement cache.
            let sql = format!("SELECT {MATCH_COLUMNS} FROM matches ORDER BY id DESC LIMIT {limit}");
            load_matches(c, &sql, &[])
        })
    }

    fn seat_history(
        &self,
        version: VersionId,
        since: Option<Millis>,
        limit: usize,
    ) -> Result<Vec<SeatHistory>> {
        self.read(|c| {
            // The limit is in the SQL, not bound (see `recent_matches`).
            let mut st = c.prepare_cached(&format!(
                "SELECT m.id, m.state, m.ended_ms, s.joined, s.timeouts
                 FROM match_seats s JOIN matches m ON m.id = s.match_id
                 WHERE s.version_id = ?1 AND s.joined IS NOT NULL
                   AND m.ended_ms IS NOT NULL AND m.ended_ms > ?2
                 ORDER BY s.match_id DESC LIMIT {limit}"
            ))?;
            Ok(st
                .query_map(params![version.0, since.unwrap_or(Millis::MIN)], |r| {
                    let state: String = r.get(1)?;
                    Ok(SeatHistory {
                        match_id: MatchId(r.get(0)?),
                        state: MatchState::from_str_opt(&state)
                            .ok_or_else(|| bad_text(1, "state"))?,
                        ended_ms: r.get(2)?,
                        outcome: SeatOutcome {
                            joined: r.get(3)?,
                            timeouts: r.get(4)?,
                        },
                    })
                })?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn last_scheduled(&self) -> Result<Vec<(VersionId, Millis)>> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                // One indexed lookup per version (match_seats_version) instead of a scan of every
                // seat ever played: the matchmaker asks every round. Ids grow with creation.
                "SELECT v.id, (SELECT m.created_ms FROM match_seats s
                               JOIN matches m ON m.id = s.match_id
                               WHERE s.version_id = v.id ORDER BY s.match_id DESC LIMIT 1) AS last
                 FROM versions v ORDER BY v.id",
            )?;
            let rows = st
                .query_map([], |r| {
                    Ok((VersionId(r.get(0)?), r.get::<_, Option<Millis>>(1)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(rows
                .into_iter()
                .filter_map(|(v, last)| Some((v, last?)))
                .collect())
        })
    }

    fn placing_stats(&self, season: SeasonId, profile: &str) -> Result<Vec<PlacingStats>> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT s.version_id, COUNT(*), SUM(s.placing = 1), SUM(s.placing), SUM(s.timeouts)
                 FROM matches m JOIN match_seats s ON s.match_id = m.id
                 WHERE m.season_id = ?1 AND m.profile = ?2 AND m.state = 'finished'
                   AND m.rated_seq IS NOT NULL
                 GROUP BY s.version_id ORDER BY s.version_id",
            )?;
            Ok(st
                .query_map(params![season.0, profile], |r| {
                    Ok(PlacingStats {
                        version: VersionId(r.get(0)?),
                        matches: r.get(1)?,
                        wins: r.get(2)?,
                        placing_sum: r.get::<_, i64>(3)?.max(0) as u64,
                        timeouts: r.get::<_, i64>(4)?.max(0) as u64,
                    })
                })?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn ratings(&self, season: SeasonId) -> Result<Vec<RatingRow>> {
        self.read(|c| ratings_of(c, season))
    }

    fn rating(
        &self,
        season: SeasonId,
        profile: &str,
        version: VersionId,
    ) -> Result<Option<RatingRow>> {
        let state = self.read(|c| read_rating(c, season, profile, version))?;
        Ok(rules::rating_row(season, profile, version, state))
    }

    fn rating_events(&self, season: SeasonId) -> Result<Vec<RatingEvent>> {
        self.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT id, profile, version_id, match_id, cause, mu_before, sigma_before,
                        matches_before, mu_after, sigma_after, matches_after, created_ms
                 FROM rating_events WHERE season_id = ?1 ORDER BY id",
            )?;
            Ok(st
                .query_map([season.0], |r| {
                    let cause: String = r.get(4)?;
                    Ok(RatingEvent {
                        id: r.get(0)?,
                        season,
                        match_id: r.get::<_, Option<i64>>(3)?.map(MatchId),
                        cause: RatingCause::from_str_opt(&cause)
                            .ok_or_else(|| bad_text(4, "cause"))?,
                        change: RatingChange {
                            profile: r.get(1)?,
                            version: VersionId(r.get(2)?),
                            before: RatingState {
                                rating: Rating {
                                    mu: r.get(5)?,
                                    sigma: r.get(6)?,
                                },
                                matches: r.get(7)?,
                            },
                            after: RatingState {
                                rating: Rating {
                                    mu: r.get(8)?,
                                    sigma: r.get(9)?,
                                },
                                matches: r.get(10)?,
                            },
                        },
                        created_ms: r.get(11)?,
                    })
                })?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn rated_matches(&self, season: SeasonId) -> Result<Vec<RatedMatch>> {
        self.read(|c| rated_matches_of(c, season))
    }

    fn apply_rating_changes(
        &self,
        season: SeasonId,
        changes: &[RatingChange],
        cause: RatingCause,
        now: Millis,
    ) -> Result<()> {
        self.write(|tx| {
            require(exists(tx, "seasons", season.0)?, "season", season)?;
            let stored = changes
                .iter()
                .map(|ch| read_rating(tx, season, &ch.profile, ch.version))
                .collect::<Result<Vec<_>>>()?;
            rules::check_ratings_unchanged(changes, &stored)?;
            write_changes(tx, season, None, cause, changes, now)
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
        let (t, tid) = target.parts();
        self.write(|tx| {
            rules::require_target(exists(tx, target.table(), tid)?, target)?;
            tx.execute(
                "INSERT INTO sanctions (target, target_id, kind, reason, created_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![t, tid, kind.as_str(), reason, now],
            )?;
            Ok(SanctionId(tx.last_insert_rowid()))
        })
    }

    fn lift_sanction(&self, id: SanctionId, reason: &str, now: Millis) -> Result<()> {
        self.write(|tx| {
            require(exists(tx, "sanctions", id.0)?, "sanction", id)?;
            let n = tx.execute(
                "UPDATE sanctions SET lifted_ms = ?1, lifted_reason = ?2
                 WHERE id = ?3 AND lifted_ms IS NULL",
                params![now, reason, id.0],
            )?;
            rules::check_sanction_lifted_now(id, n > 0)
        })
    }

    fn active_sanctions(&self) -> Result<Vec<Sanction>> {
        self.read(|c| {
            let sql = format!(
                "SELECT {SANCTION_COLUMNS} FROM sanctions WHERE lifted_ms IS NULL ORDER BY id"
            );
            let mut st = c.prepare_cached(&sql)?;
            Ok(st
                .query_map([], sanction_from_row)?
                .collect::<rusqlite::Result<_>>()?)
        })
    }

    fn sanctions_of(&self, target: SanctionTarget) -> Result<Vec<Sanction>> {
        let (t, tid) = target.parts();
        self.read(|c| {
            let sql = format!(
                "SELECT {SANCTION_COLUMNS} FROM sanctions WHERE target = ?1 AND target_id = ?2
                 ORDER BY id"
            );
            let mut st = c.prepare_cached(&sql)?;
            Ok(st
                .query_map(params![t, tid], sanction_from_row)?
                .collect::<rusqlite::Result<_>>()?)
        })
    }
}

fn insert_key(tx: &Connection, subject: KeySubject, hash: &KeyHash, now: Millis) -> Result<KeyId> {
    sql::insert_key(&mut SqliteTx(tx), subject, hash, now)
}

/// A SQLite transaction as the shared code sees it (see `backend.rs`). Every statement is
/// prepared once per connection and kept.
struct SqliteTx<'c>(&'c Connection);

impl Tx for SqliteTx<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn query_each(
        &mut self,
        sql: &str,
        params: &[Value<'_>],
        each: &mut dyn FnMut(&dyn Row) -> Result<()>,
    ) -> Result<()> {
        let mut st = self.0.prepare_cached(sql)?;
        let mut rows = st.query(params_from_iter(params))?;
        while let Some(r) = rows.next()? {
            each(r)?;
        }
        Ok(())
    }

    fn execute(&mut self, sql: &str, params: &[Value<'_>]) -> Result<u64> {
        let mut st = self.0.prepare_cached(sql)?;
        Ok(st.execute(params_from_iter(params))? as u64)
    }

    fn insert(&mut self, sql: &str, params: &[Value<'_>]) -> Result<Result<i64, Taken>> {
        let mut st = self.0.prepare_cached(sql)?;
        match st.execute(params_from_iter(params)) {
            Ok(_) => Ok(Ok(self.0.last_insert_rowid())),
            Err(e) if is_unique_violation(&e) => Ok(Err(Taken(None))),
            Err(e) => Err(e.into()),
        }
    }

    fn lock_ratings(&mut self) -> Result<()> {
        // One writer at a time already.
        Ok(())
    }
}

impl ToSql for Value<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match *self {
            Value::Null => ToSqlOutput::Owned(rusqlite::types::Value::Null),
            Value::Int(v) => ToSqlOutput::from(v),
            Value::Real(v) => ToSqlOutput::from(v),
            Value::Bool(v) => ToSqlOutput::from(v),
            Value::Text(v) => ToSqlOutput::from(v),
            Value::Blob(v) => ToSqlOutput::from(v),
            // For `IN (SELECT value FROM json_each(?1))`; ids are integers, so the JSON array
            // is safe to build.
            Value::Ids(ids) => {
                let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
                ToSqlOutput::from(format!("[{}]", ids.join(",")))
            }
        })
    }
}

impl Row for rusqlite::Row<'_> {
    fn opt_i64(&self, i: usize) -> Result<Option<i64>> {
        Ok(self.get(i)?)
    }

    fn f64(&self, i: usize) -> Result<f64> {
        Ok(self.get(i)?)
    }

    fn opt_bool(&self, i: usize) -> Result<Option<bool>> {
        Ok(self.get(i)?)
    }

    fn opt_string(&self, i: usize) -> Result<Option<String>> {
        Ok(self.get(i)?)
    }

    fn blob(&self, i: usize) -> Result<Vec<u8>> {
        Ok(self.get(i)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_migration_file_is_a_numbered_step() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("migrations/sqlite");
        let mut files: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        let names: Vec<&str> = MIGRATIONS.iter().map(|m| m.1).collect();
        assert_eq!(
            files, names,
            "a file in migrations/sqlite is not in MIGRATIONS"
        );
        for (i, (step, name, _)) in MIGRATIONS.iter().enumerate() {
            assert_eq!(*step as usize, i + 1);
            assert!(name.starts_with(&format!("{step:04}_")), "{name}");
        }
    }
}
