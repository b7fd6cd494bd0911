//! The writer in front of the archive of finished matches (`archive.rs`).
//!
//! The server keeps only its open matches in memory; a finished match is handed to the
//! [`Archive`] (`maumau serve`: the SQLite archive of `maumau-archive`,
//! `<data_dir>/matches.sqlite`), and everything finished is read from there (on tokio's blocking
//! pool), so memory is bounded by the live matches, not by history.
//!
//! **Durability.** A match is reported finished only after its commit (see
//! `table::Handle::finish`). A writer on the blocking pool commits the records that arrive while it
//! commits one batch in the next batch's commit. When a commit fails (a full disk, an I/O
//! error, a directory made read-only), the writer keeps the batch, reports the store unhealthy
//! (health NOT_SERVING, `CreateMatch` refused with STORAGE_UNAVAILABLE) and retries every few
//! seconds; the first commit that succeeds makes it healthy again.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use maumau::pb;
use tokio::sync::{oneshot, watch};

pub(crate) use crate::archive::token_hash;
use crate::archive::{Archive, ArchivedMatch, Summarize};
use crate::sync::lock;

/// A finished match to store.
pub(crate) type Row = ArchivedMatch;

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
    archive: Arc<dyn Archive>,
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

impl Store {
    /// Starts the archive (see [`Archive::start`]: it opens its storage and imports records of
    /// earlier formats). Needs a tokio runtime.
    pub(crate) fn open(archive: Arc<dyn Archive>, summarize: Summarize) -> std::io::Result<Store> {
        let last_seq = archive.start(summarize)?;
        Ok(Store {
            archive,
            queue: Arc::default(),
            writing: Arc::default(),
            healthy: Arc::new(watch::Sender::new(true)),
            last_seq,
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
            let (archive, queue, writing, healthy) = (
                self.archive.clone(),
                self.queue.clone(),
                self.writing.clone(),
                self.healthy.clone(),
            );
            self.runtime.spawn_blocking(move || {
                write_queued(&*archive, &queue, &writing, &healthy);
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
    fn logged<T>(&self, what: &str, r: Result<T, crate::archive::ArchiveError>) -> Option<T> {
        r.map_err(|e| {
            tracing::error!(store = %self.archive.name(), error = %e, "cannot read {what}");
        })
        .ok()
    }

    /// The creation order and record of one finished match. Blocking.
    pub(crate) fn read(&self, id: &str) -> Option<(u64, pb::StoredMatch)> {
        self.logged("a stored match", self.archive.read(id))?
    }

    /// The finished match a token belongs to, and the token's seat (`None`: the spectator).
    /// Blocking.
    pub(crate) fn token(&self, token: &str) -> Option<(String, Option<u32>)> {
        let hash = crate::archive::token_hash(token);
        self.logged("a token", self.archive.token(&hash))?
    }

    /// Summaries of finished matches created before `before` (a creation order), newest first,
    /// at most `limit`, optionally of one status. Blocking.
    pub(crate) fn list(
        &self,
        before: u64,
        status: Option<i32>,
        limit: usize,
    ) -> Vec<(u64, pb::MatchSummary)> {
        self.logged(
            "the list of matches",
            self.archive.list(before, status, limit),
        )
        .unwrap_or_default()
    }

    /// When a finished match ended and whether its replay is pruned. Blocking.
    pub(crate) fn ended(&self, id: &str) -> Option<(u64, bool)> {
        self.logged("a stored match", self.archive.ended(id))?
    }

    /// Clears a stored record's sealed flag: `Some(true)` when it was sealed, `Some(false)` when
    /// not, `None` when no finished match has this id; `Err` when the write failed (logged).
    /// Blocking.
    pub(crate) fn reveal(&self, id: &str) -> Result<Option<bool>, ()> {
        self.archive.reveal(id).map_err(|e| {
            tracing::error!(match_id = id, error = %e, "could not reveal a stored match record");
        })
    }

    /// Deletes the replay's actions from a stored record, keeping the report and the replay's
    /// header, and returns the bytes freed; `None` when there is nothing to prune (no such
    /// finished match, or its replay is pruned already) or the write failed (logged). Blocking.
    pub(crate) fn prune(&self, id: &str) -> Option<u64> {
        self.archive
            .prune(id)
            .map_err(|e| {
                tracing::error!(match_id = id, error = %e, "could not rewrite a stored match record");
            })
            .ok()?
    }
}

/// The writer: commits the queued rows in batches until the queue is empty, retrying a failed
/// batch until it succeeds or the store is gone.
fn write_queued(
    archive: &dyn Archive,
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
        let written = archive.commit(&rows);
        match written {
            Ok(_) => {
                crate::metrics::store_written(started.elapsed());
                if healthy.send_if_modified(|h| !std::mem::replace(h, true)) {
                    crate::metrics::storage_available(true);
                    tracing::info!(store = %archive.name(), "the data directory can be written again; taking new matches");
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
                    tracing::error!(store = %archive.name(), error = %e, records = batch.len(),
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
