//! Finished matches on disk: one SQLite database, `<data_dir>/matches.sqlite`.
//!
//! One row per finished match (its id, creation order, times, status, label, the summary
//! ListMatches shows and the encoded `StoredMatch` record with its report and replay) and one row
//! per token of a finished match (a SHA-256 of the token, never the token), so a seat or
//! spectator that comes back late still gets the final report, also after a restart. The server
//! keeps only its open matches in memory; everything finished is read from here (on tokio's
//! blocking pool), so memory is bounded by the live matches, not by history.
//!
//! **Durability.** The database runs in WAL mode with `synchronous=FULL`: a commit is on disk
//! before it returns, and a match is reported finished only after its commit (see
//! `MatchEntry::finish`). A writer on the blocking pool commits the records that arrive while it
//! commits one batch in the next batch's transaction. When a commit fails (a full disk, an I/O
//! error, a directory made read-only), the writer keeps the batch, reports the store unhealthy
//! (health NOT_SERVING, `CreateMatch` refused with STORAGE_UNAVAILABLE) and retries every few
//! seconds; the first commit that succeeds makes it healthy again.
//!
//! **Migration.** Servers before this store wrote one file per match, `<data_dir>/matches/<id>.pb`.
//! At start, such files are imported in one transaction (in order of creation; a second file
//! with a match id already stored is skipped with a warning: the first wins), then moved to
//! `<data_dir>/matches.imported/` (kept, not deleted, so an operator can go back to an older
//! server). Damaged files stay where they are, with a warning; partial `.tmp` files are deleted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use maumau::pb;
use prost::Message;
use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::{oneshot, watch};

use crate::sync::lock;

/// The database's file name in the data directory.
pub(crate) const FILE: &str = "matches.sqlite";
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

/// The SHA-256 of a token, as stored.
pub(crate) fn token_hash(token: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).into()
}

/// Makes the summary ListMatches shows from a record (`None`: the record is not usable).
pub(crate) type Summarize = fn(u64, Arc<pb::StoredMatch>) -> Option<pb::MatchSummary>;

/// A finished match to store.
pub(crate) struct Row {
    /// Creation order.
    pub(crate) seq: u64,
    pub(crate) id: String,
    pub(crate) record: Arc<pb::StoredMatch>,
    pub(crate) summary: pb::MatchSummary,
    /// Token hashes with their seat (`None` for the spectator).
    pub(crate) tokens: Vec<([u8; 32], Option<u32>)>,
}

/// A row for the writer, and the match table waiting for it.
struct Job {
    row: Row,
    done: oneshot::Sender<()>,
}

/// Rows waiting for the writer.
#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    /// A writer is running (it takes every job queued before it ends).
    writer: bool,
    /// The store is gone: a writer that cannot write gives up instead of retrying.
    closed: bool,
}

/// The longest pause between two tries to write after a failure.
const RETRY_MAX: Duration = Duration::from_secs(5);

/// The finished matches of one server.
pub(crate) struct Store {
    path: PathBuf,
    /// The writer's connection (also used to prune).
    writer: Arc<Mutex<Connection>>,
    /// Reads (WAL: they do not wait for a commit's sync).
    reader: Mutex<Connection>,
    queue: Arc<Mutex<Queue>>,
    /// Rows handed over and not yet committed.
    writing: Arc<AtomicUsize>,
    /// Whether the last commit succeeded.
    healthy: Arc<watch::Sender<bool>>,
    /// The creation order of the newest stored match at start.
    last_seq: u64,
    runtime: tokio::runtime::Handle,
}

impl Drop for Store {
    fn drop(&mut self) {
        lock(&self.queue).closed = true;
    }
}

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

impl Store {
    /// Opens the store in `data_dir`: checks that the directory can be written (a server that
    /// could not store results must not start), opens or creates the database, and imports the
    /// record files of the file-per-match store. Needs a tokio runtime.
    pub(crate) fn open(data_dir: &Path, summarize: Summarize) -> std::io::Result<Store> {
        let context = |what: &str, e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("{what} {}: {e}", data_dir.display()))
        };
        std::fs::create_dir_all(data_dir).map_err(|e| context("cannot create", e))?;
        check_writable(data_dir).map_err(|e| context("cannot write in", e))?;
        let path = data_dir.join(FILE);
        let sql = |e: rusqlite::Error| {
            std::io::Error::other(format!(
                "cannot open the match store {}: {e}",
                path.display()
            ))
        };
        let mut writer = connect(&path).map_err(sql)?;
        writer.execute_batch(SCHEMA).map_err(sql)?;
        import_files(data_dir, &mut writer, summarize)?;
        let last_seq: i64 = writer
            .query_row("SELECT coalesce(max(seq), 0) FROM matches", [], |r| {
                r.get(0)
            })
            .map_err(sql)?;
        let reader = connect(&path).map_err(sql)?;
        Ok(Store {
            path,
            writer: Arc::new(Mutex::new(writer)),
            reader: Mutex::new(reader),
            queue: Arc::default(),
            writing: Arc::default(),
            healthy: Arc::new(watch::Sender::new(true)),
            last_seq: last_seq.max(0) as u64,
            runtime: tokio::runtime::Handle::current(),
        })
    }

    /// The creation order of the newest match stored when the store was opened.
    pub(crate) fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Queues a finished match; the receiver completes once its commit is durable.
    pub(crate) fn submit(&self, row: Row) -> oneshot::Receiver<()> {
        let (done, durable) = oneshot::channel();
        self.writing.fetch_add(1, Ordering::AcqRel);
        let mut queue = lock(&self.queue);
        queue.jobs.push(Job { row, done });
        if !queue.writer {
            queue.writer = true;
            let (path, writer, queue, writing, healthy) = (
                self.path.clone(),
                self.writer.clone(),
                self.queue.clone(),
                self.writing.clone(),
                self.healthy.clone(),
            );
            self.runtime.spawn_blocking(move || {
                write_queued(&path, &writer, &queue, &writing, &healthy);
            });
        }
        durable
    }

    /// Rows handed over and not yet committed.
    pub(crate) fn writing(&self) -> usize {
        self.writing.load(Ordering::Acquire)
    }

    /// Whether the store can write (its last commit succeeded).
    pub(crate) fn healthy(&self) -> bool {
        *self.healthy.borrow()
    }

    /// Follows [`Store::healthy`].
    pub(crate) fn health(&self) -> watch::Receiver<bool> {
        self.healthy.subscribe()
    }

    /// Logs a failed read and turns it into `None`.
    fn logged<T>(&self, what: &str, r: rusqlite::Result<T>) -> Option<T> {
        r.map_err(|e| {
            tracing::error!(store = %self.path.display(), error = %e, "cannot read {what}");
        })
        .ok()
    }

    /// The creation order and record of one finished match. Blocking.
    pub(crate) fn read(&self, id: &str) -> Option<(u64, pb::StoredMatch)> {
        let conn = lock(&self.reader);
        let row = self.logged(
            "a stored match",
            conn.prepare_cached("SELECT seq, record FROM matches WHERE id = ?1")
                .and_then(|mut s| {
                    s.query_row([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))
                        .optional()
                }),
        )??;
        match pb::StoredMatch::decode(row.1.as_slice()) {
            Ok(record) => Some((row.0 as u64, record)),
            Err(e) => {
                tracing::error!(match_id = id, error = %e, "a stored match record is damaged");
                None
            }
        }
    }

    /// The finished match a token belongs to, and the token's seat (`None`: the spectator).
    /// Blocking.
    pub(crate) fn token(&self, token: &str) -> Option<(String, Option<u32>)> {
        let conn = lock(&self.reader);
        self.logged(
            "a token",
            conn.prepare_cached("SELECT match_id, seat FROM tokens WHERE hash = ?1")
                .and_then(|mut s| {
                    s.query_row([&token_hash(token)[..]], |r| Ok((r.get(0)?, r.get(1)?)))
                        .optional()
                }),
        )?
    }

    /// Summaries of finished matches created before `before` (a creation order), newest first,
    /// at most `limit`, optionally of one status. Blocking.
    pub(crate) fn list(
        &self,
        before: u64,
        status: Option<i32>,
        limit: usize,
    ) -> Vec<(u64, pb::MatchSummary)> {
        let conn = lock(&self.reader);
        let before = i64::try_from(before).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = |s: &mut rusqlite::CachedStatement<'_>, p: &[&dyn rusqlite::ToSql]| {
            s.query_map(p, |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()
        };
        let found = match status {
            None => conn
                .prepare_cached(
                    "SELECT seq, summary FROM matches WHERE seq < ?1 ORDER BY seq DESC LIMIT ?2",
                )
                .and_then(|mut s| rows(&mut s, &[&before, &limit])),
            Some(status) => conn
                .prepare_cached(
                    "SELECT seq, summary FROM matches WHERE status = ?1 AND seq < ?2 \
                     ORDER BY seq DESC LIMIT ?3",
                )
                .and_then(|mut s| rows(&mut s, &[&status, &before, &limit])),
        };
        self.logged("the list of matches", found)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(seq, bytes)| {
                pb::MatchSummary::decode(bytes.as_slice())
                    .map_err(|e| tracing::error!(seq, error = %e, "a stored summary is damaged"))
                    .ok()
                    .map(|s| (seq as u64, s))
            })
            .collect()
    }

    /// Labels and ids of the finished matches whose label starts with `prefix`. Blocking.
    pub(crate) fn labelled(&self, prefix: &str) -> Vec<(String, String)> {
        let conn = lock(&self.reader);
        let found = conn
            .prepare_cached(
                "SELECT label, id FROM matches WHERE substr(label, 1, length(?1)) = ?1 ORDER BY seq",
            )
            .and_then(|mut s| {
                s.query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            });
        self.logged("labels", found).unwrap_or_default()
    }

    /// When a finished match ended and whether its replay is pruned. Blocking.
    pub(crate) fn ended(&self, id: &str) -> Option<(u64, bool)> {
        let conn = lock(&self.reader);
        self.logged(
            "a stored match",
            conn.prepare_cached("SELECT ended_ms, replay_pruned FROM matches WHERE id = ?1")
                .and_then(|mut s| {
                    s.query_row([id], |r| Ok((r.get::<_, i64>(0)? as u64, r.get(1)?)))
                        .optional()
                }),
        )?
    }

    /// Deletes the replay's actions from a stored record, keeping the report and the replay's
    /// header, and returns the bytes freed; `None` when there is nothing to prune (no such
    /// finished match, or its replay is pruned already) or the write failed (logged). Blocking.
    pub(crate) fn prune(&self, id: &str) -> Option<u64> {
        let mut conn = lock(&self.writer);
        let pruned = (|| -> rusqlite::Result<Option<u64>> {
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
            let before = record.encoded_len();
            if let Some(replay) = &mut record.replay {
                replay.actions = Vec::new();
            }
            record.replay_pruned = true;
            summary.replay_pruned = true;
            let after = record.encoded_len();
            tx.execute(
                "UPDATE matches SET record = ?1, summary = ?2, replay_pruned = 1 WHERE id = ?3",
                params![record.encode_to_vec(), summary.encode_to_vec(), id],
            )?;
            tx.commit()?;
            Ok(Some(before.saturating_sub(after) as u64))
        })();
        pruned
            .map_err(|e| {
                tracing::error!(match_id = id, error = %e, "could not rewrite a stored match record");
            })
            .ok()?
    }
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
fn insert(conn: &mut Connection, rows: &[&Row], keep_first: bool) -> rusqlite::Result<Vec<bool>> {
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

/// The writer: commits the queued rows in batches until the queue is empty, retrying a failed
/// batch until it succeeds or the store is gone.
fn write_queued(
    path: &Path,
    conn: &Mutex<Connection>,
    queue: &Mutex<Queue>,
    writing: &AtomicUsize,
    healthy: &watch::Sender<bool>,
) {
    let mut batch: Vec<Job> = Vec::new();
    let mut pause = Duration::from_millis(100);
    loop {
        {
            let mut queue = lock(queue);
            batch.append(&mut queue.jobs);
            if batch.is_empty() {
                queue.writer = false;
                return;
            }
        }
        let rows: Vec<&Row> = batch.iter().map(|j| &j.row).collect();
        let started = std::time::Instant::now();
        let written = insert(&mut lock(conn), &rows, false);
        match written {
            Ok(_) => {
                crate::metrics::store_written(started.elapsed());
                if healthy.send_if_modified(|h| !std::mem::replace(h, true)) {
                    crate::metrics::storage_available(true);
                    tracing::info!(store = %path.display(), "the data directory can be written again; taking new matches");
                }
                pause = Duration::from_millis(100);
                for job in batch.drain(..) {
                    writing.fetch_sub(1, Ordering::AcqRel);
                    // The table may be gone (the server is stopping): the row is stored all the
                    // same.
                    let _ = job.done.send(());
                }
            }
            Err(e) => {
                crate::metrics::store_failed();
                if healthy.send_if_modified(|h| std::mem::replace(h, false)) {
                    crate::metrics::storage_available(false);
                    tracing::error!(store = %path.display(), error = %e, records = batch.len(),
                        "cannot write finished matches; not taking new matches and retrying until it can");
                }
                if lock(queue).closed {
                    tracing::error!(
                        records = batch.len(),
                        "the server stopped with finished matches it could not write"
                    );
                    lock(queue).writer = false;
                    return;
                }
                std::thread::sleep(pause);
                pause = (pause * 2).min(RETRY_MAX);
            }
        }
    }
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
        rows.push(Row {
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
