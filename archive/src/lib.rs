//! The game server's durable archive of finished matches: one SQLite database,
//! `<data_dir>/matches.sqlite`, behind the server's [`Archive`] trait. `maumau serve` opens it
//! with [`SqliteArchive::new`] and hands it to the server in `ServerConfig::archive`.
//!
//! One row per finished match (its id, creation order, times, status, label, the summary
//! ListMatches shows and the encoded `StoredMatch` record with its report and replay) and one row
//! per token of a finished match (a SHA-256 of the token, never the token), so a seat or
//! spectator that comes back late still gets the final report, also after a restart.
//!
//! **Durability.** The database runs in WAL mode with `synchronous=FULL`: a commit is on disk
//! before it returns. The server's writer (in `maumau-server`) commits batches, reports itself
//! unhealthy while commits fail and retries.
//!
//! **Migration.** Servers before this store wrote one file per match, `<data_dir>/matches/<id>.pb`.
//! At start, such files are imported in one transaction (in order of creation; a second file
//! with a match id already stored is skipped with a warning: the first wins), then moved to
//! `<data_dir>/matches.imported/` (kept, not deleted, so an operator can go back to an older
//! server). Damaged files stay where they are, with a warning; partial `.tmp` files are deleted.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! let config = maumau_server::ServerConfig {
//!     archive: Some(Arc::new(maumau_archive::SqliteArchive::new("maumau-data"))),
//!     ..maumau_server::ServerConfig::default()
//! };
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:50051").await?;
//! maumau_server::run(listener, config, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(())
//! # }
//! ```

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use maumau::pb;
use maumau_server::sync::lock;
use maumau_server::{Archive, ArchiveError, ArchivedMatch, Summarize};
use prost::Message;
use rusqlite::{Connection, OptionalExtension, params};

/// The database's file name in the data directory.
pub const FILE: &str = "matches.sqlite";
/// The file-per-match store's directory, read only to migrate it.
const OLD_DIR: &str = "matches";
/// Where migrated record files go.
const IMPORTED_DIR: &str = "matches.imported";

/// The schema, version 1 (`PRAGMA user_version`).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS matches (
    seq INTEGER PRIMARY KEY,          -- creation order: ListMatches' order and page cursor
    id TEXT NOT NULL UNIQUE,
    created_ms INTEGER NOT NULL,
    ended_ms INTEGER NOT NULL,
    status INTEGER NOT NULL,          -- maumau.v1.MatchStatus
    label TEXT NOT NULL,
    replay_pruned INTEGER NOT NULL,
    summary BLOB NOT NULL,            -- encoded maumau.v1.MatchSummary
    record BLOB NOT NULL              -- encoded maumau.v1.StoredMatch
);
CREATE INDEX IF NOT EXISTS matches_by_status ON matches (status, seq);
CREATE TABLE IF NOT EXISTS tokens (
    hash BLOB PRIMARY KEY,            -- SHA-256 of the token
    match_id TEXT NOT NULL,
    seat INTEGER                      -- NULL for the spectator token
) WITHOUT ROWID;
PRAGMA user_version = 1;
";

/// Opens a connection with the store's settings.
fn connect(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(rusqlite::Error::InvalidQuery);
    }
    conn.execute_batch("PRAGMA synchronous = FULL;")?;
    Ok(conn)
}

/// The SQLite archive in a data directory: `<data_dir>/matches.sqlite`. Opened by
/// [`Archive::start`], which the server calls as it starts.
#[derive(Debug)]
pub struct SqliteArchive {
    data_dir: PathBuf,
    path: PathBuf,
    db: OnceLock<Db>,
}

/// The open database.
#[derive(Debug)]
struct Db {
    /// The writer's connection (also used to prune).
    writer: Mutex<Connection>,
    /// Reads (WAL: they do not wait for a commit's sync).
    reader: Mutex<Connection>,
}

impl SqliteArchive {
    /// The archive in `data_dir` (`<data_dir>/matches.sqlite`). Nothing is opened until the
    /// server starts it: then it checks that the directory can be written (a server that could
    /// not store results must not start), opens or creates the database, and imports the
    /// record files of the file-per-match store.
    pub fn new(data_dir: impl Into<PathBuf>) -> SqliteArchive {
        let data_dir = data_dir.into();
        SqliteArchive {
            path: data_dir.join(FILE),
            data_dir,
            db: OnceLock::new(),
        }
    }

    /// The database, once started.
    fn db(&self) -> Result<&Db, ArchiveError> {
        self.db
            .get()
            .ok_or_else(|| format!("the match store {} is not open", self.path.display()).into())
    }
}

impl Archive for SqliteArchive {
    fn start(&self, summarize: Summarize) -> std::io::Result<u64> {
        let data_dir = &self.data_dir;
        let context = |what: &str, e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("{what} {}: {e}", data_dir.display()))
        };
        create_private_dir(data_dir).map_err(|e| context("cannot create", e))?;
        check_writable(data_dir).map_err(|e| context("cannot write in", e))?;
        let path = &self.path;
        let sql = |e: rusqlite::Error| {
            if is_damage(&e) {
                return damaged(path, &e.to_string());
            }
            std::io::Error::other(format!(
                "cannot open the match store {}: {e}",
                path.display()
            ))
        };
        create_private_file(path).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("cannot create the match store {}: {e}", path.display()),
            )
        })?;
        let mut writer = connect(path).map_err(sql)?;
        check_integrity(&writer, path).map_err(|e| match e {
            Check::Failed(problems) => damaged(path, &problems),
            Check::Sql(e) => sql(e),
        })?;
        writer.execute_batch(SCHEMA).map_err(sql)?;
        import_files(data_dir, &mut writer, summarize)?;
        let last_seq: i64 = writer
            .query_row("SELECT coalesce(max(seq), 0) FROM matches", [], |r| {
                r.get(0)
            })
            .map_err(sql)?;
        let reader = connect(path).map_err(sql)?;
        self.db
            .set(Db {
                writer: Mutex::new(writer),
                reader: Mutex::new(reader),
            })
            .map_err(|_| {
                std::io::Error::other(format!(
                    "the match store {} is open already",
                    path.display()
                ))
            })?;
        Ok(last_seq.max(0) as u64)
    }

    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn commit(&self, rows: &[&ArchivedMatch]) -> Result<(), ArchiveError> {
        insert(&mut lock(&self.db()?.writer), rows, false)?;
        Ok(())
    }

    fn read(&self, id: &str) -> Result<Option<(u64, pb::StoredMatch)>, ArchiveError> {
        let conn = lock(&self.db()?.reader);
        let row = conn
            .prepare_cached("SELECT seq, record FROM matches WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))
            .optional()?;
        let Some((seq, bytes)) = row else {
            return Ok(None);
        };
        match pb::StoredMatch::decode(bytes.as_slice()) {
            Ok(record) => Ok(Some((seq as u64, record))),
            Err(e) => {
                tracing::error!(match_id = id, error = %e, "a stored match record is damaged");
                Ok(None)
            }
        }
    }

    fn token(&self, hash: &[u8; 32]) -> Result<Option<(String, Option<u32>)>, ArchiveError> {
        let conn = lock(&self.db()?.reader);
        Ok(conn
            .prepare_cached("SELECT match_id, seat FROM tokens WHERE hash = ?1")?
            .query_row([&hash[..]], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }

    fn list(
        &self,
        before: u64,
        status: Option<i32>,
        limit: usize,
    ) -> Result<Vec<(u64, pb::MatchSummary)>, ArchiveError> {
        let conn = lock(&self.db()?.reader);
        let before = i64::try_from(before).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = |s: &mut rusqlite::CachedStatement<'_>, p: &[&dyn rusqlite::ToSql]| {
            s.query_map(p, |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()
        };
        let found = match status {
            None => rows(
                &mut conn.prepare_cached(
                    "SELECT seq, summary FROM matches WHERE seq < ?1 ORDER BY seq DESC LIMIT ?2",
                )?,
                &[&before, &limit],
            )?,
            Some(status) => rows(
                &mut conn.prepare_cached(
                    "SELECT seq, summary FROM matches WHERE status = ?1 AND seq < ?2 \
                     ORDER BY seq DESC LIMIT ?3",
                )?,
                &[&status, &before, &limit],
            )?,
        };
        Ok(found
            .into_iter()
            .filter_map(|(seq, bytes)| {
                pb::MatchSummary::decode(bytes.as_slice())
                    .map_err(|e| tracing::error!(seq, error = %e, "a stored summary is damaged"))
                    .ok()
                    .map(|s| (seq as u64, s))
            })
            .collect())
    }

    fn ended(&self, id: &str) -> Result<Option<(u64, bool)>, ArchiveError> {
        let conn = lock(&self.db()?.reader);
        Ok(conn
            .prepare_cached("SELECT ended_ms, replay_pruned FROM matches WHERE id = ?1")?
            .query_row([id], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))
            .optional()?)
    }

    fn prune(&self, id: &str) -> Result<Option<u64>, ArchiveError> {
        let mut conn = lock(&self.db()?.writer);
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let row: Option<(Vec<u8>, Vec<u8>, bool)> = tx
            .query_row(
                "SELECT record, summary, replay_pruned FROM matches WHERE id = ?1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        let Some((record, summary, false)) = row else {
            return Ok(None);
        };
        let (Ok(mut record), Ok(mut summary)) = (
            pb::StoredMatch::decode(record.as_slice()),
            pb::MatchSummary::decode(summary.as_slice()),
        ) else {
            tracing::error!(
                match_id = id,
                "a stored match record is damaged; not pruned"
            );
            return Ok(None);
        };
        let freed = maumau_server::prune_replay(&mut record, &mut summary);
        tx.execute(
            "UPDATE matches SET record = ?1, summary = ?2, replay_pruned = 1 WHERE id = ?3",
            params![record.encode_to_vec(), summary.encode_to_vec(), id],
        )?;
        tx.commit()?;
        Ok(Some(freed))
    }

    /// The flag lives in the encoded record (`StoredMatch.sealed`), not in a column: only the
    /// read calls of one match look at it, never a list or an index, so no migration is needed
    /// and records written before it read as not sealed.
    fn reveal(&self, id: &str) -> Result<Option<bool>, ArchiveError> {
        let mut conn = lock(&self.db()?.writer);
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let record: Option<Vec<u8>> = tx
            .query_row("SELECT record FROM matches WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        let Some(record) = record else {
            return Ok(None);
        };
        let mut record = pb::StoredMatch::decode(record.as_slice())?;
        if !record.sealed {
            return Ok(Some(false));
        }
        record.sealed = false;
        tx.execute(
            "UPDATE matches SET record = ?1 WHERE id = ?2",
            params![record.encode_to_vec(), id],
        )?;
        tx.commit()?;
        Ok(Some(true))
    }
}

/// Creates `dir` (and its missing parents) readable by its owner only (mode 0700 on Unix): the
/// archive holds hashed tokens and every hand of every match. A directory that exists is left
/// as it is.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Creates the database file, empty, readable by its owner only (mode 0600 on Unix), unless it
/// exists. SQLite gives its `-wal` and `-shm` files the database file's mode.
fn create_private_file(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    match options.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Why an integrity check did not pass.
enum Check {
    /// The database answered with these problems.
    Failed(String),
    /// The check could not run.
    Sql(rusqlite::Error),
}

/// `PRAGMA quick_check`: whether the database's pages and indexes hold together.
fn check_integrity(conn: &Connection, path: &Path) -> Result<(), Check> {
    let mut statement = conn.prepare("PRAGMA quick_check").map_err(Check::Sql)?;
    let problems = statement
        .query_map([], |r| r.get::<_, String>(0))
        .and_then(|rows| rows.collect::<rusqlite::Result<Vec<String>>>())
        .map_err(Check::Sql)?;
    if problems.len() == 1 && problems[0] == "ok" {
        return Ok(());
    }
    tracing::error!(path = %path.display(), problems = ?problems, "the match store failed its integrity check");
    Err(Check::Failed(
        problems.into_iter().take(3).collect::<Vec<_>>().join("; "),
    ))
}

/// Whether SQLite says the file is not a database or is damaged.
fn is_damage(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

/// The error for a damaged match store: which file, what is wrong, what to do.
fn damaged(path: &Path, what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!(
            "the match store {} is damaged ({what}): restore it (with its -wal file) from a \
             backup, or move it aside to start with an empty one; the server does not start on \
             a damaged store",
            path.display()
        ),
    )
}

/// Checks that `dir` can be written: creates, syncs and deletes a file (the error names the
/// cause, such as "Read-only file system").
fn check_writable(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(".write-check");
    std::fs::File::create(&probe)?.sync_all()?;
    std::fs::remove_file(&probe)
}

/// Inserts rows in one transaction (`INSERT OR IGNORE` on the match id when `keep_first`, so a
/// second record of one match is skipped; else a row replaces one with its id). Returns, for
/// each row, whether it was inserted.
fn insert(
    conn: &mut Connection,
    rows: &[&ArchivedMatch],
    keep_first: bool,
) -> rusqlite::Result<Vec<bool>> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut inserted = Vec::with_capacity(rows.len());
    {
        let mut put = tx.prepare_cached(if keep_first {
            "INSERT OR IGNORE INTO matches \
             (seq, id, created_ms, ended_ms, status, label, replay_pruned, summary, record) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
        } else {
            "INSERT OR REPLACE INTO matches \
             (seq, id, created_ms, ended_ms, status, label, replay_pruned, summary, record) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
        })?;
        let mut token = tx.prepare_cached(
            "INSERT OR REPLACE INTO tokens (hash, match_id, seat) VALUES (?1, ?2, ?3)",
        )?;
        for row in rows {
            let r = &row.record;
            let changed = put.execute(params![
                i64::try_from(row.seq).unwrap_or(i64::MAX),
                row.id,
                i64::try_from(r.created_unix_ms).unwrap_or(i64::MAX),
                i64::try_from(r.ended_unix_ms).unwrap_or(i64::MAX),
                row.summary.status,
                r.label,
                r.replay_pruned,
                row.summary.encode_to_vec(),
                r.encode_to_vec(),
            ])?;
            for (hash, seat) in &row.tokens {
                token.execute(params![&hash[..], row.id, seat])?;
            }
            inserted.push(changed > 0);
        }
    }
    tx.commit()?;
    Ok(inserted)
}

/// Imports `<data_dir>/matches/*.pb` (the file-per-match store) in one transaction, then moves
/// the imported files to `<data_dir>/matches.imported/`. Damaged files are left in place (with a
/// warning); partial `.tmp` files are deleted.
fn import_files(
    data_dir: &Path,
    conn: &mut Connection,
    summarize: Summarize,
) -> std::io::Result<()> {
    let dir = data_dir.join(OLD_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(std::io::Error::new(
                e.kind(),
                format!("cannot read {}: {e}", dir.display()),
            ));
        }
    };
    let mut records = Vec::new();
    let mut removed = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        match path.extension().and_then(|e| e.to_str()) {
            Some("tmp") => {
                if std::fs::remove_file(&path).is_ok() {
                    removed += 1;
                }
                continue;
            }
            Some("pb") => {}
            _ => continue,
        }
        match std::fs::read(&path).map(|b| pb::StoredMatch::decode(b.as_slice())) {
            Ok(Ok(r)) => records.push((r, path)),
            Ok(Err(e)) => {
                tracing::warn!(path = %path.display(), error = %e, "skipping a damaged match record")
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "cannot read a match record")
            }
        }
    }
    if removed > 0 {
        tracing::warn!(dir = %dir.display(), removed, "deleted partial record files an interrupted write left");
    }
    // In order of creation, as the old server listed them; the file name breaks ties.
    records.sort_by(|a, b| (a.0.created_unix_ms, &a.1).cmp(&(b.0.created_unix_ms, &b.1)));
    let sql = |e: rusqlite::Error| {
        std::io::Error::other(format!(
            "cannot import the match records of {}: {e}",
            dir.display()
        ))
    };
    let last: i64 = conn
        .query_row("SELECT coalesce(max(seq), 0) FROM matches", [], |r| {
            r.get(0)
        })
        .map_err(sql)?;
    let mut rows = Vec::new();
    let mut paths = Vec::new();
    for (record, path) in records {
        let seq = last.max(0) as u64 + 1 + rows.len() as u64;
        let record = Arc::new(record);
        let Some(summary) = summarize(seq, record.clone()) else {
            tracing::warn!(path = %path.display(), "skipping a match record without a report, a replay or a valid configuration");
            continue;
        };
        rows.push(ArchivedMatch {
            seq,
            id: summary.match_id.clone(),
            record,
            summary,
            tokens: Vec::new(),
        });
        paths.push(path);
    }
    if rows.is_empty() {
        let _ = std::fs::remove_dir(&dir);
        return Ok(());
    }
    let inserted = insert(conn, &rows.iter().collect::<Vec<_>>(), true).map_err(sql)?;
    let mut seen = std::collections::HashSet::new();
    for ((row, path), new) in rows.iter().zip(&paths).zip(&inserted) {
        if !seen.insert(row.id.as_str()) {
            tracing::warn!(match_id = %row.id, path = %path.display(),
                "two record files hold one match: the first was imported, this one skipped");
        } else if !new {
            tracing::info!(match_id = %row.id, path = %path.display(), "this record was imported before");
        }
    }
    // The rows are committed: move the files out of the way (a crash before this imports them
    // again at the next start, where they are skipped as already stored).
    let imported = data_dir.join(IMPORTED_DIR);
    let moved = std::fs::create_dir_all(&imported).and_then(|()| {
        for path in &paths {
            if let Some(name) = path.file_name() {
                std::fs::rename(path, imported.join(name))?;
            }
        }
        std::fs::File::open(&imported)?.sync_all()?;
        std::fs::File::open(&dir)?.sync_all()
    });
    moved.map_err(|e| {
        std::io::Error::new(
            e.kind(),
            format!(
                "cannot move imported match records to {}: {e}",
                imported.display()
            ),
        )
    })?;
    let fresh = inserted.iter().filter(|n| **n).count();
    tracing::info!(imported = fresh, files = paths.len(), to = %imported.display(),
        "imported the file-per-match records into {FILE}");
    let _ = std::fs::remove_dir(&dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: u64, label: &str, status: pb::MatchStatus) -> ArchivedMatch {
        let id = format!("m-{seq}");
        ArchivedMatch {
            seq,
            id: id.clone(),
            record: Arc::new(pb::StoredMatch {
                label: label.into(),
                ended_unix_ms: 1000 + seq,
                replay: Some(pb::Replay {
                    actions: vec![pb::ReplayAction::default(); 3],
                    ..Default::default()
                }),
                ..Default::default()
            }),
            summary: pb::MatchSummary {
                match_id: id,
                status: status as i32,
                ..Default::default()
            },
            tokens: vec![(maumau_server::token_hash(&format!("t-{seq}")), Some(1))],
        }
    }

    fn seqs(list: Vec<(u64, pb::MatchSummary)>) -> Vec<u64> {
        list.into_iter().map(|(s, _)| s).collect()
    }

    /// What is committed is on disk: a second archive on the directory (a restart) reads it
    /// all back, newest first, by status, tokens by hash, a replay pruned once.
    #[test]
    fn committed_matches_are_read_back_after_a_restart() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let archive = SqliteArchive::new(dir.path());
        assert_eq!(archive.start(|_, _| None).expect("start"), 0);
        let (a, b, c) = (
            row(1, "cup/1", pb::MatchStatus::Finished),
            row(2, "cup/2", pb::MatchStatus::Aborted),
            row(3, "other", pb::MatchStatus::Finished),
        );
        archive.commit(&[&a, &b]).expect("commit");
        archive.commit(&[&c]).expect("commit");
        assert!(
            archive
                .prune("m-3")
                .expect("prune")
                .is_some_and(|freed| freed > 0)
        );
        assert_eq!(archive.prune("m-3").expect("prune"), None);
        drop(archive);

        let archive = SqliteArchive::new(dir.path());
        assert_eq!(archive.start(|_, _| None).expect("start"), 3);
        assert_eq!(
            seqs(archive.list(u64::MAX, None, 10).expect("list")),
            vec![3, 2, 1]
        );
        assert_eq!(seqs(archive.list(3, None, 1).expect("list")), vec![2]);
        let finished = Some(pb::MatchStatus::Finished as i32);
        assert_eq!(
            seqs(archive.list(u64::MAX, finished, 10).expect("list")),
            vec![3, 1]
        );
        let hash = maumau_server::token_hash("t-2");
        assert_eq!(
            archive.token(&hash).expect("token"),
            Some(("m-2".into(), Some(1)))
        );
        assert_eq!(archive.ended("m-3").expect("ended"), Some((1003, true)));
        assert_eq!(archive.ended("m-1").expect("ended"), Some((1001, false)));
        let (seq, record) = archive.read("m-3").expect("read").expect("stored");
        assert_eq!(seq, 3);
        assert!(record.replay.expect("replay").actions.is_empty());
        assert_eq!(archive.read("m-9").expect("read"), None);
        assert!(dir.path().join(FILE).exists());
    }

    /// An archive that was not started reads nothing and refuses to write.
    #[test]
    fn an_archive_that_was_not_started_refuses_to_write() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let archive = SqliteArchive::new(dir.path());
        let err = archive
            .commit(&[&row(1, "", pb::MatchStatus::Finished)])
            .expect_err("not open");
        assert!(err.to_string().contains("not open"), "{err}");
        assert!(!dir.path().join(FILE).exists());
    }

    #[test]
    fn a_file_that_is_not_a_database_is_refused_with_what_to_do() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::write(dir.path().join(FILE), vec![0x5a; 64 * 1024]).expect("write");
        let archive = SqliteArchive::new(dir.path());
        let e = archive
            .start(|_, _| None)
            .expect_err("a damaged store must not start");
        let message = e.to_string();
        assert!(message.contains(FILE), "{message}");
        assert!(message.contains("damaged"), "{message}");
        assert!(message.contains("backup"), "{message}");
    }

    #[test]
    fn a_store_with_damaged_pages_is_refused_and_a_healthy_one_starts() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let archive = SqliteArchive::new(dir.path());
        archive.start(|_, _| None).expect("start");
        let rows: Vec<ArchivedMatch> = (1..=200)
            .map(|seq| row(seq, &"x".repeat(500), pb::MatchStatus::Finished))
            .collect();
        archive
            .commit(&rows.iter().collect::<Vec<_>>())
            .expect("commit");
        drop(archive);
        // Closed: the WAL is checkpointed into the file. A healthy store starts.
        let archive = SqliteArchive::new(dir.path());
        assert_eq!(archive.start(|_, _| None).expect("start"), 200);
        drop(archive);

        // Garbage over leaf pages in the middle: the header, the schema, the tables' roots and
        // the newest rows stay, so only a check of every page finds it.
        let path = dir.path().join(FILE);
        let mut bytes = std::fs::read(&path).expect("read");
        assert!(bytes.len() > 32 * 4096, "{} bytes", bytes.len());
        let end = bytes.len() / 2;
        bytes[8 * 4096..end].fill(0x5a);
        std::fs::write(&path, bytes).expect("write");
        let archive = SqliteArchive::new(dir.path());
        let e = archive
            .start(|_, _| None)
            .expect_err("a damaged store must not start");
        let message = e.to_string();
        assert!(message.contains(FILE), "{message}");
        assert!(message.contains("damaged"), "{message}");
    }

    #[cfg(unix)]
    #[test]
    fn the_store_and_its_directory_are_readable_by_their_owner_only() {
        use std::os::unix::fs::PermissionsExt;
        let parent = tempfile::tempdir().expect("a temporary directory");
        let dir = parent.path().join("data");
        let archive = SqliteArchive::new(&dir);
        archive.start(|_, _| None).expect("start");
        archive
            .commit(&[&row(1, "a", pb::MatchStatus::Finished)])
            .expect("commit");
        let mode = |p: &Path| {
            std::fs::metadata(p)
                .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode(&dir), 0o700);
        for name in [
            FILE.to_string(),
            format!("{FILE}-wal"),
            format!("{FILE}-shm"),
        ] {
            assert_eq!(mode(&dir.join(&name)), 0o600, "{name}");
        }
    }
}
