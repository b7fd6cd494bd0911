//! The SQLite store: one file `ladder.sqlite3` in the data directory, held by one process.
//!
//! At open the store takes an exclusive operating-system lock on `ladder.lock` in the data
//! directory (`flock` on Unix, `LockFileEx` on Windows, through `std::fs::File::try_lock`) and keeps
//! it until it is dropped; a second process (or a second store in the same process) on the same
//! directory gets [`LadderError::Locked`]. The lock dies with the process, so a crash never leaves
//! a stale lock behind.
//!
//! Only the connection, the migrations and the transaction handle are here (see `backend.rs`);
//! every store method is written once in `sql.rs`, over this handle and PostgreSQL's.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ErrorCode, ToSql, TransactionBehavior, params, params_from_iter};

use super::backend::{Backend, Dialect, EachRow, Row, Taken, Tx, Value, bad};
use super::rules::{self, Migration};
use crate::error::{LadderError, Result};
use crate::ids::MatchId;

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
    (
        5,
        "0005_rejections.sql",
        include_str!("../../migrations/sqlite/0005_rejections.sql"),
    ),
    (
        6,
        "0006_name_keys.sql",
        include_str!("../../migrations/sqlite/0006_name_keys.sql"),
    ),
    (
        7,
        "0007_server_matches.sql",
        include_str!("../../migrations/sqlite/0007_server_matches.sql"),
    ),
    (
        8,
        "0008_ends_told.sql",
        include_str!("../../migrations/sqlite/0008_ends_told.sql"),
    ),
    (
        9,
        "0009_tournament_events.sql",
        include_str!("../../migrations/sqlite/0009_tournament_events.sql"),
    ),
    (
        10,
        "0010_tournament_deals.sql",
        include_str!("../../migrations/sqlite/0010_tournament_deals.sql"),
    ),
    (
        11,
        "0011_formats.sql",
        include_str!("../../migrations/sqlite/0011_formats.sql"),
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

/// Creates `dir` (and its parents) if needed and keeps it to its owner (0700 on Unix).
fn private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    #[cfg(not(unix))]
    fs::create_dir_all(dir)?;
    owner_only(dir, 0o700)
}

/// Opens `path` for reading and writing, creating it readable by its owner alone (0600 on Unix)
/// and tightening an existing one to that.
fn private_file(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).read(true).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    owner_only(path, 0o600)?;
    Ok(file)
}

/// Sets the Unix mode of `path` (nothing elsewhere).
fn owner_only(path: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

/// How long opening waits for the directory lock before it reports it held.
const LOCK_PATIENCE: Duration = Duration::from_secs(1);
/// Tries within [`LOCK_PATIENCE`].
const LOCK_RETRIES: u32 = 20;

impl SqliteStore {
    /// Opens (creating if needed) the ladder in `dir`: takes the directory lock, opens the
    /// database and applies any schema steps it lacks.
    ///
    /// On Unix the directory is kept to its owner (mode 0700) and the files in it (database,
    /// write-ahead log, lock) are readable by the owner alone (0600): they hold key hashes and the
    /// seeds of matches still running.
    pub fn open(dir: &Path) -> Result<SqliteStore> {
        private_dir(dir)?;
        let lock_path = dir.join(LOCK_FILE);
        let mut lock = private_file(&lock_path)?;
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

        // Created (or tightened) before SQLite opens it: SQLite gives its write-ahead log and
        // shared-memory files the database file's mode.
        private_file(&dir.join(DATABASE_FILE))?;
        for suffix in ["-wal", "-shm"] {
            let path = dir.join(format!("{DATABASE_FILE}{suffix}"));
            if path.exists() {
                owner_only(&path, 0o600)?;
            }
        }
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
        self.read(|t| t.one("SELECT MAX(step) FROM schema_migrations", &[], |r| r.u32(0)))
    }

    /// The highest schema step this build knows.
    pub fn known_schema_step() -> u32 {
        rules::last_step(MIGRATIONS)
    }
}

impl Backend for SqliteStore {
    fn read<T>(&self, f: impl FnOnce(&mut dyn Tx) -> Result<T>) -> Result<T> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let tx = conn.transaction()?;
        let out = f(&mut SqliteTx(&tx))?;
        tx.commit()?;
        Ok(out)
    }

    fn write<T>(&self, f: impl FnOnce(&mut dyn Tx) -> Result<T>) -> Result<T> {
        // A panic inside a transaction drops it, which rolls it back: the connection is sound.
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&mut SqliteTx(&tx))?;
        tx.commit()?;
        Ok(out)
    }

    fn check_lease(&self, _: &mut dyn Tx, _: MatchId) -> Result<()> {
        // One process holds the store: there are no leases.
        Ok(())
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

/// A SQLite transaction as the shared code sees it (see `backend.rs`). Every statement is
/// prepared once per connection and kept.
struct SqliteTx<'c>(&'c Connection);

impl Tx for SqliteTx<'_> {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn query_each(&mut self, sql: &str, params: &[Value<'_>], each: EachRow<'_>) -> Result<()> {
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
    fn cell(&self, i: usize) -> Result<Value<'_>> {
        Ok(match self.get_ref(i)? {
            ValueRef::Null => Value::Null,
            ValueRef::Integer(v) => Value::Int(v),
            ValueRef::Real(v) => Value::Real(v),
            ValueRef::Text(v) => {
                Value::Text(std::str::from_utf8(v).map_err(|e| bad("text", &e.to_string()))?)
            }
            ValueRef::Blob(v) => Value::Blob(v),
        })
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

    #[cfg(unix)]
    #[test]
    fn the_store_directory_and_files_are_the_owners_alone() {
        use std::os::unix::fs::PermissionsExt;
        let data = tempfile::tempdir().unwrap();
        let dir = data.path().join("ladder");
        // A directory someone made readable to all first is tightened too.
        fs::create_dir_all(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        let store = SqliteStore::open(&dir).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700, "the directory");
        let mut files = 0;
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            assert_eq!(mode(&path), 0o600, "{}", path.display());
            files += 1;
        }
        assert!(files >= 2, "the database and the lock at least");
        assert_eq!(mode(&dir.join(DATABASE_FILE)), 0o600);
        drop(store);
    }
}
