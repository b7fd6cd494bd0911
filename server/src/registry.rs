//! The matches a server knows: open ones (with their table task) and finished ones (with their
//! report and replay on disk, so they survive a restart and cost the server's memory only a
//! summary each).
//!
//! The maps sit behind plain `std::sync::Mutex`es that are never held across an `.await`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use maumau::{pb, wire};
use maumau_engine::{Event, Game, MatchConfig, Seat};
use prost::Message;
use rand::RngExt;
use tokio::sync::{mpsc, oneshot, watch};
use tonic::Status;

use crate::config::{ServerConfig, TimeControl};
use crate::serve::Roaming;
use crate::table::{Command, Role, Table};

/// How a match's first deal was made.
#[derive(Clone, Debug)]
pub(crate) enum Start {
    Seed,
    Deck(pb::DeckOrder),
    Position(String),
}

/// What the match service reports about a match; updated by its table.
pub(crate) struct Info {
    pub(crate) status: pb::MatchStatus,
    pub(crate) players: Vec<pb::PlayerInfo>,
    pub(crate) round: u32,
    pub(crate) actions: u32,
    pub(crate) totals: Vec<i32>,
    pub(crate) ended_unix_ms: u64,
    /// Set when the match has ended and its record is stored.
    pub(crate) ended: bool,
    /// The result, for summaries (the full report and replay are read from disk when asked for).
    pub(crate) result: Option<pb::MatchResult>,
    /// The record, kept in memory only if the store was gone when the match ended (the server
    /// was being torn down); otherwise it is on disk.
    pub(crate) unsaved: Option<Arc<pb::StoredMatch>>,
    /// The operator pruned the replay (the stored record keeps the report).
    pub(crate) replay_pruned: bool,
}

/// One match.
pub(crate) struct MatchEntry {
    pub(crate) id: String,
    pub(crate) config: MatchConfig,
    pub(crate) start: Start,
    pub(crate) clock: TimeControl,
    pub(crate) rated: bool,
    pub(crate) label: String,
    pub(crate) seed_commitment: Vec<u8>,
    /// The commitment's salt, secret until the match ends (empty for records written before
    /// salted commitments).
    pub(crate) seed_salt: Vec<u8>,
    pub(crate) created_unix_ms: u64,
    tx: Mutex<Option<mpsc::Sender<Command>>>,
    info: Mutex<Info>,
    registry: std::sync::Weak<Registry>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

impl MatchEntry {
    pub(crate) fn update(&self, f: impl FnOnce(&mut Info)) {
        f(&mut lock(&self.info));
    }

    /// The final report, once the match has ended.
    pub(crate) fn report(&self) -> Option<pb::MatchReport> {
        self.record()?.report
    }

    /// The replay, once the match has ended and unless it was pruned.
    pub(crate) fn replay(&self) -> Option<pb::Replay> {
        self.record().filter(|r| !r.replay_pruned)?.replay
    }

    /// Whether the operator pruned the replay.
    pub(crate) fn replay_pruned(&self) -> bool {
        lock(&self.info).replay_pruned
    }

    /// When the match ended (milliseconds since the Unix epoch), once its record is on disk.
    pub(crate) fn stored_end(&self) -> Option<u64> {
        let info = lock(&self.info);
        (info.ended && info.unsaved.is_none()).then_some(info.ended_unix_ms)
    }

    /// Deletes the replay's actions from the stored record, keeping the report and the replay's
    /// header, and returns the bytes freed; `None` when there is nothing to prune (the match is
    /// open, its record is not written yet, or its replay is already pruned). Blocking file I/O:
    /// call it from a blocking thread.
    pub(crate) fn prune_replay(&self) -> Option<u64> {
        if self.replay_pruned() || self.stored_end().is_none() {
            return None;
        }
        let registry = self.registry.upgrade()?;
        let mut record = registry.store.read(&self.id)?;
        let before = record.encoded_len();
        if let Some(replay) = &mut record.replay {
            replay.actions = Vec::new();
        }
        record.replay_pruned = true;
        let after = record.encoded_len();
        if !registry.store.save(&self.id, &record) {
            return None;
        }
        lock(&self.info).replay_pruned = true;
        Some(before.saturating_sub(after) as u64)
    }

    /// The stored record of an ended match, read from disk.
    fn record(&self) -> Option<pb::StoredMatch> {
        {
            let info = lock(&self.info);
            if !info.ended {
                return None;
            }
            if let Some(r) = &info.unsaved {
                return Some(pb::StoredMatch::clone(r));
            }
        }
        self.registry.upgrade()?.store.read(&self.id)
    }

    pub(crate) fn status(&self) -> pb::MatchStatus {
        lock(&self.info).status
    }

    /// The table task's command channel, while the match is open.
    pub(crate) fn sender(&self) -> Option<mpsc::Sender<Command>> {
        lock(&self.tx).clone()
    }

    pub(crate) fn welcome(&self, seat: Option<Seat>) -> pb::Welcome {
        let info = lock(&self.info);
        pb::Welcome {
            match_id: self.id.clone(),
            seat: seat.map(u32::from),
            config: Some((&self.config).into()),
            rules: self.config.rules().ok().map(|r| (&r).into()),
            time_control: Some(self.clock.to_wire()),
            seed_commitment: self.seed_commitment.clone(),
            players: info.players.clone(),
            rated: self.rated,
            status: info.status as i32,
        }
    }

    pub(crate) fn summary(&self) -> pb::MatchSummary {
        let info = lock(&self.info);
        pb::MatchSummary {
            match_id: self.id.clone(),
            status: info.status as i32,
            config: Some((&self.config).into()),
            time_control: Some(self.clock.to_wire()),
            rated: self.rated,
            label: self.label.clone(),
            players: info.players.clone(),
            created_unix_ms: self.created_unix_ms,
            ended_unix_ms: info.ended_unix_ms,
            round: info.round,
            actions: info.actions,
            totals: info.totals.clone(),
            seed_commitment: self.seed_commitment.clone(),
            result: info.result.clone(),
            replay_pruned: info.replay_pruned,
        }
    }

    /// Records the end of the match (finished or aborted) and returns its report once the record
    /// is durable: written, synced and renamed into place by the store. Until then the match
    /// reads as still open (no report, no result), so no one is told it finished before a crash
    /// could no longer lose it; a slow or failing disk makes this wait, as long as it takes.
    pub(crate) async fn finish(
        self: &Arc<Self>,
        report: pb::MatchReport,
        replay: pb::Replay,
    ) -> pb::MatchReport {
        // One end time, in memory and on disk, so a restart reads back the same summary.
        let ended = now_ms();
        let record = Arc::new(pb::StoredMatch {
            report: Some(report.clone()),
            replay: Some(replay),
            created_unix_ms: self.created_unix_ms,
            ended_unix_ms: ended,
            label: self.label.clone(),
            rated: self.rated,
            replay_pruned: false,
        });
        let durable = self
            .registry
            .upgrade()
            .map(|reg| reg.store.submit(&self.id, record.clone()));
        let saved = match durable {
            Some(done) => done.await.is_ok(),
            None => false,
        };
        crate::metrics::match_ended(report.status());
        let mut info = lock(&self.info);
        info.status = report.status();
        info.ended_unix_ms = ended;
        info.players = report.players.clone();
        info.result = report.result.clone();
        // Only when the store is gone (the server was torn down) does a record stay here.
        info.unsaved = (!saved).then_some(record);
        info.ended = true;
        report
    }
}

/// A record for the store to make durable, and the match table waiting for it.
struct Job {
    id: String,
    record: Arc<pb::StoredMatch>,
    done: oneshot::Sender<()>,
}

/// Finished matches on disk: `<data_dir>/matches/<id>.pb`, one encoded `StoredMatch` each.
///
/// A record is written to `<id>.pb.tmp`, synced, renamed into place, and the directory synced,
/// so a crash leaves either the whole record or none, and a match is reported finished only
/// after that (see [`MatchEntry::finish`]). A writer on tokio's blocking pool does the writing
/// (creating and syncing a file takes milliseconds, which a table task must not spend on a
/// runtime worker), in batches: the records that arrive while it syncs one batch share the next
/// batch's directory sync. It runs while there is something to write, and ends when the queue
/// is empty (so tests on tokio's paused clock see it as work in progress, not as idleness).
///
/// When a write fails (a full disk, an I/O error, a directory made read-only), the writer keeps
/// the batch, deletes its partial files, reports the store unhealthy (health NOT_SERVING, and
/// `CreateMatch` refused with STORAGE_UNAVAILABLE) and retries every few seconds; the first
/// write that succeeds makes it healthy again.
pub(crate) struct Store {
    dir: PathBuf,
    queue: Arc<Mutex<Queue>>,
    /// Records handed over and not yet written.
    writing: Arc<AtomicUsize>,
    /// Whether the last write succeeded.
    healthy: Arc<watch::Sender<bool>>,
    runtime: tokio::runtime::Handle,
}

impl Drop for Store {
    fn drop(&mut self) {
        lock(&self.queue).closed = true;
    }
}

/// Records waiting for the writer.
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

impl Store {
    /// Opens the store under `data_dir`: creates its directory, deletes partial files a crash
    /// left behind, and checks that it can write there (a server that could not store results
    /// must not start). Needs a tokio runtime.
    fn open(data_dir: &Path) -> std::io::Result<Store> {
        let dir = data_dir.join("matches");
        let context = |what: &str, e: std::io::Error| {
            std::io::Error::new(e.kind(), format!("{what} {}: {e}", dir.display()))
        };
        std::fs::create_dir_all(&dir).map_err(|e| context("cannot create", e))?;
        let removed = remove_partial_files(&dir).map_err(|e| context("cannot read", e))?;
        if removed > 0 {
            tracing::warn!(dir = %dir.display(), removed, "deleted partial record files an interrupted write left");
        }
        write_synced(&dir, ".write-check", b"").map_err(|e| context("cannot write in", e))?;
        std::fs::remove_file(dir.join(".write-check.pb"))
            .map_err(|e| context("cannot write in", e))?;
        Ok(Store {
            dir,
            queue: Arc::default(),
            writing: Arc::default(),
            healthy: Arc::new(watch::Sender::new(true)),
            runtime: tokio::runtime::Handle::current(),
        })
    }

    /// Queues an ended match's record; the receiver completes once it is durable.
    fn submit(&self, id: &str, record: Arc<pb::StoredMatch>) -> oneshot::Receiver<()> {
        let (done, durable) = oneshot::channel();
        self.writing.fetch_add(1, Ordering::AcqRel);
        let mut queue = lock(&self.queue);
        queue.jobs.push(Job {
            id: id.to_string(),
            record,
            done,
        });
        if !queue.writer {
            queue.writer = true;
            let (dir, queue, writing, healthy) = (
                self.dir.clone(),
                self.queue.clone(),
                self.writing.clone(),
                self.healthy.clone(),
            );
            self.runtime
                .spawn_blocking(move || write_queued(&dir, &queue, &writing, &healthy));
        }
        durable
    }

    /// Records handed over and not yet written.
    fn writing(&self) -> usize {
        self.writing.load(Ordering::Acquire)
    }

    /// Whether the store can write (its last write succeeded).
    pub(crate) fn healthy(&self) -> bool {
        *self.healthy.borrow()
    }

    /// Follows [`Store::healthy`].
    pub(crate) fn health(&self) -> watch::Receiver<bool> {
        self.healthy.subscribe()
    }

    /// Rewrites one record durably; false (logged) when it could not be written.
    fn save(&self, id: &str, record: &pb::StoredMatch) -> bool {
        match write_synced(&self.dir, id, &record.encode_to_vec())
            .and_then(|()| sync_dir(&self.dir))
        {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(match_id = id, error = %e, "could not rewrite a stored match record");
                false
            }
        }
    }

    /// Reads the record of one match.
    fn read(&self, id: &str) -> Option<pb::StoredMatch> {
        let path = self.dir.join(format!("{id}.pb"));
        match std::fs::read(&path).map(|b| pb::StoredMatch::decode(b.as_slice())) {
            Ok(Ok(r)) => Some(r),
            Ok(Err(e)) => {
                tracing::error!(path = %path.display(), error = %e, "a stored match record is damaged");
                None
            }
            Err(e) => {
                tracing::error!(path = %path.display(), error = %e, "cannot read a stored match record");
                None
            }
        }
    }

    /// Reads every stored record, oldest first.
    ///
    /// Two files with one match id (a copy made by hand, a restored backup) give one record: the
    /// one in `<id>.pb`, which is the file the server reads the match's report and replay from
    /// afterwards; among other names, the one that ended last. The other is logged and ignored.
    fn load(&self) -> Vec<pb::StoredMatch> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut records: Vec<pb::StoredMatch> = Vec::new();
        // Match id -> (index in `records`, its preference, its path).
        let mut seen: HashMap<String, (usize, (bool, u64), PathBuf)> = HashMap::new();
        for entry in dir.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "pb") {
                continue;
            }
            match std::fs::read(&path).map(|b| pb::StoredMatch::decode(b.as_slice())) {
                Ok(Ok(r)) => {
                    let id = r
                        .report
                        .as_ref()
                        .map(|x| x.match_id.clone())
                        .unwrap_or_default();
                    let canonical = path.file_stem().is_some_and(|s| *s == *id.as_str());
                    let preference = (canonical, r.ended_unix_ms);
                    match seen.get_mut(&id) {
                        Some((at, kept_preference, kept)) => {
                            let (winner, loser) = if preference > *kept_preference {
                                records[*at] = r;
                                *kept_preference = preference;
                                (path, std::mem::replace(kept, PathBuf::new()))
                            } else {
                                (kept.clone(), path)
                            };
                            tracing::warn!(
                                match_id = %id,
                                kept = %winner.display(),
                                ignored = %loser.display(),
                                "two match records with one match id: keeping one"
                            );
                            *kept = winner;
                        }
                        None => {
                            seen.insert(id, (records.len(), preference, path));
                            records.push(r);
                        }
                    }
                }
                Ok(Err(e)) => {
                    tracing::warn!(path = %path.display(), error = %e, "skipping a damaged match record")
                }
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "cannot read a match record")
                }
            }
        }
        records.sort_by_key(|r| r.created_unix_ms);
        records
    }
}

/// The writer: writes the queued records in batches until the queue is empty, retrying a
/// failed batch until it succeeds or the store is gone.
fn write_queued(
    dir: &Path,
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
        let started = std::time::Instant::now();
        let written = batch
            .iter()
            .try_for_each(|job| write_synced(dir, &job.id, &job.record.encode_to_vec()))
            .and_then(|()| sync_dir(dir));
        match written {
            Ok(()) => {
                crate::metrics::store_written(started.elapsed());
                if healthy.send_if_modified(|h| !std::mem::replace(h, true)) {
                    crate::metrics::storage_available(true);
                    tracing::info!(dir = %dir.display(), "the data directory can be written again; taking new matches");
                }
                pause = Duration::from_millis(100);
                for job in batch.drain(..) {
                    writing.fetch_sub(1, Ordering::AcqRel);
                    // The table may be gone (the server is stopping): the record is written all
                    // the same.
                    let _ = job.done.send(());
                }
            }
            Err(e) => {
                crate::metrics::store_failed();
                if healthy.send_if_modified(|h| std::mem::replace(h, false)) {
                    crate::metrics::storage_available(false);
                    tracing::error!(dir = %dir.display(), error = %e, records = batch.len(),
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

/// Writes `<id>.pb` in `dir` durably (a synced temporary file renamed into place; the caller
/// syncs the directory). A failed write leaves no temporary file behind.
fn write_synced(dir: &Path, id: &str, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let tmp = dir.join(format!("{id}.pb.tmp"));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .and_then(|()| std::fs::rename(&tmp, dir.join(format!("{id}.pb"))));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Makes the renames in `dir` durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Deletes the `.tmp` files an interrupted write left in `dir`; how many.
fn remove_partial_files(dir: &Path) -> std::io::Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "tmp") {
            std::fs::remove_file(&path)?;
            removed += 1;
        }
    }
    Ok(removed)
}

struct Inner {
    matches: HashMap<String, Arc<MatchEntry>>,
    order: Vec<String>,
    tokens: HashMap<String, (Arc<MatchEntry>, Role)>,
    open: usize,
}

/// All matches of one server.
pub(crate) struct Registry {
    pub(crate) config: ServerConfig,
    store: Store,
    inner: Mutex<Inner>,
    next_conn: AtomicU64,
}

/// A fresh 128-bit secret, as 32 hex digits.
fn secret() -> String {
    format!("{:032x}", rand::rng().random::<u128>())
}

/// A fresh salt for a match's seed commitment, from the operating system's generator (through
/// the thread-local generator it seeds when the system call fails, which it does not on Linux).
fn seed_salt() -> [u8; wire::SEED_SALT_LEN] {
    use rand::TryRng;
    let mut salt = [0u8; wire::SEED_SALT_LEN];
    if rand::rngs::SysRng.try_fill_bytes(&mut salt).is_err() {
        rand::rng().fill(&mut salt);
    }
    salt
}

/// What a match was created with, checked.
pub(crate) struct NewMatch {
    pub(crate) config: MatchConfig,
    pub(crate) seed: u64,
    pub(crate) start: Start,
    pub(crate) clock: TimeControl,
    pub(crate) bots: Vec<Option<pb::BotKind>>,
    pub(crate) rated: bool,
    pub(crate) label: String,
}

impl Registry {
    pub(crate) fn open(config: ServerConfig) -> std::io::Result<Arc<Registry>> {
        let store = Store::open(&config.data_dir)?;
        let stored = store.load();
        let registry = Arc::new_cyclic(|weak| {
            let mut inner = Inner {
                matches: HashMap::new(),
                order: Vec::new(),
                tokens: HashMap::new(),
                open: 0,
            };
            for r in stored {
                let (Some(report), Some(replay)) = (r.report, r.replay) else {
                    tracing::warn!("skipping a match record without a report or a replay");
                    continue;
                };
                let Some(config) = replay
                    .config
                    .as_ref()
                    .and_then(|c| MatchConfig::try_from(c).ok())
                else {
                    tracing::warn!(match_id = %report.match_id, "skipping a match record with an invalid configuration");
                    continue;
                };
                let entry = Arc::new(MatchEntry {
                    id: report.match_id.clone(),
                    config,
                    start: match &replay.start {
                        None => Start::Seed,
                        Some(pb::replay::Start::DeckOrder(d)) => Start::Deck(d.clone()),
                        Some(pb::replay::Start::Position(p)) => Start::Position(p.clone()),
                    },
                    // A record this server wrote has a known policy; an unreadable one shows
                    // the defaults rather than hiding the match.
                    clock: TimeControl::from_wire(replay.time_control.as_ref(), &config_default())
                        .unwrap_or_default(),
                    rated: r.rated,
                    label: r.label,
                    seed_commitment: report.seed_commitment.clone(),
                    seed_salt: report.seed_salt.clone(),
                    created_unix_ms: r.created_unix_ms,
                    tx: Mutex::new(None),
                    info: Mutex::new(Info {
                        status: report.status(),
                        players: report.players.clone(),
                        round: report.rounds.len() as u32,
                        actions: report.actions,
                        totals: report
                            .rounds
                            .last()
                            .map(|x| x.totals.clone())
                            .unwrap_or_default(),
                        ended_unix_ms: r.ended_unix_ms,
                        ended: true,
                        result: report.result,
                        unsaved: None,
                        replay_pruned: r.replay_pruned,
                    }),
                    registry: weak.clone(),
                });
                inner.order.push(entry.id.clone());
                inner.matches.insert(entry.id.clone(), entry);
            }
            Registry {
                config,
                store,
                inner: Mutex::new(inner),
                next_conn: AtomicU64::new(1),
            }
        });
        Ok(registry)
    }

    pub(crate) fn next_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// Deals the match, starts its table task and returns the response with the tokens.
    pub(crate) fn create(self: &Arc<Self>, m: NewMatch) -> Result<pb::CreateMatchResponse, Status> {
        if !self.store.healthy() {
            return Err(wire::status(
                pb::ErrorReason::StorageUnavailable,
                "the server cannot write its data directory (see its log), so it takes no new \
                 match until it can; try again later",
            ));
        }
        let mut log = Vec::new();
        let game = match &m.start {
            Start::Seed => Game::new_with(m.config, m.seed, &mut log)
                .map_err(|e| wire::status(pb::ErrorReason::InvalidConfig, e.to_string()))?,
            Start::Deck(d) => {
                let (dealer, deck) = wire::deck_order_from_wire(d)
                    .map_err(|e| wire::status(pb::ErrorReason::InvalidSetup, e.to_string()))?;
                Game::from_deck(m.config, m.seed, dealer, &deck, &mut log)
                    .map_err(|e| wire::status(pb::ErrorReason::InvalidSetup, e.to_string()))?
            }
            Start::Position(text) => Game::from_position(text)
                .map_err(|e| wire::status(pb::ErrorReason::InvalidSetup, e.to_string()))?,
        };
        let seed = game.rng_state().0;
        let salt = seed_salt();
        let id = format!("m{}", &secret()[..16]);
        let (tx, rx) = mpsc::channel(256);
        let entry = Arc::new(MatchEntry {
            id: id.clone(),
            config: *game.config(),
            start: m.start,
            clock: m.clock,
            rated: m.rated,
            label: m.label,
            seed_commitment: wire::seed_commitment(&salt, seed).to_vec(),
            seed_salt: salt.to_vec(),
            created_unix_ms: now_ms(),
            tx: Mutex::new(Some(tx)),
            info: Mutex::new(Info {
                status: pb::MatchStatus::Waiting,
                players: Vec::new(),
                round: game.round().into(),
                actions: 0,
                totals: game.totals().to_vec(),
                ended_unix_ms: 0,
                ended: false,
                result: None,
                unsaved: None,
                replay_pruned: false,
            }),
            registry: Arc::downgrade(self),
        });
        let mut response = pb::CreateMatchResponse {
            match_id: id.clone(),
            seat_tokens: Vec::new(),
            spectator_token: secret(),
            seed_commitment: entry.seed_commitment.clone(),
        };
        {
            let mut inner = lock(&self.inner);
            if inner.open >= self.config.max_open_matches {
                return Err(wire::status(
                    pb::ErrorReason::Unavailable,
                    format!("the server already holds {} open matches", inner.open),
                ));
            }
            inner.open += 1;
            crate::metrics::match_opened();
            for seat in 0..game.seats() {
                if m.bots[seat as usize].is_none() {
                    let token = secret();
                    inner
                        .tokens
                        .insert(token.clone(), (entry.clone(), Role::Seat(seat)));
                    response.seat_tokens.push(pb::SeatToken {
                        seat: seat.into(),
                        token,
                    });
                }
            }
            inner.tokens.insert(
                response.spectator_token.clone(),
                (entry.clone(), Role::Spectator),
            );
            inner.order.push(id.clone());
            inner.matches.insert(id.clone(), entry.clone());
        }
        let table = Table::new(
            entry,
            game,
            log,
            &m.bots,
            m.clock,
            self.config.join_timeout,
            crate::table::SeatLimits::from_config(&self.config),
        );
        let registry = self.clone();
        let mover = table.mover();
        // The table starts on a task of its own and moves to its seats' connection once they
        // all play through one (see `serve::Roaming` and `Table::follow_seats`).
        tokio::spawn(Roaming::new(
            async move {
                table.run(rx).await;
                registry.closed(&id);
            },
            mover,
        ));
        Ok(response)
    }

    /// A table task ended: its slot is free. Its tokens keep working, so a seat that reconnects
    /// late still receives the final report.
    fn closed(&self, id: &str) {
        let mut inner = lock(&self.inner);
        inner.open = inner.open.saturating_sub(1);
        crate::metrics::match_closed();
        if let Some(e) = inner.matches.get(id) {
            *lock(&e.tx) = None;
        }
    }

    pub(crate) fn by_token(&self, token: &str) -> Option<(Arc<MatchEntry>, Role)> {
        lock(&self.inner).tokens.get(token).cloned()
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<MatchEntry>> {
        lock(&self.inner).matches.get(id).cloned()
    }

    /// Matches newest first (as the contract says), at most `limit`, optionally of one status,
    /// from the cursor `start`: 0 for the newest, else the cursor the previous page returned (a
    /// position in creation order, so matches created meanwhile do not shift later pages). The
    /// returned cursor is `None` when no further match would be listed.
    pub(crate) fn list(
        &self,
        start: usize,
        limit: usize,
        status: Option<pb::MatchStatus>,
    ) -> (Vec<Arc<MatchEntry>>, Option<usize>) {
        let inner = lock(&self.inner);
        let shown = |i: usize| {
            inner
                .matches
                .get(&inner.order[i])
                .filter(|e| status.is_none_or(|s| e.status() == s))
        };
        let mut out = Vec::new();
        let mut i = match start {
            0 => inner.order.len(),
            n => n.min(inner.order.len()),
        };
        while i > 0 && out.len() < limit {
            i -= 1;
            out.extend(shown(i).cloned());
        }
        let more = (0..i).any(|j| shown(j).is_some());
        (out, more.then_some(i))
    }

    /// Follows whether the store can write; health reports NOT_SERVING while it cannot.
    pub(crate) fn storage_health(&self) -> watch::Receiver<bool> {
        self.store.health()
    }

    /// Aborts every open match and waits until each is recorded (for at most a minute: a disk
    /// that cannot be written then loses the aborted matches, which no one was told had ended).
    pub(crate) async fn shutdown(&self) {
        let open: Vec<Arc<MatchEntry>> = lock(&self.inner)
            .matches
            .values()
            .filter(|e| e.sender().is_some())
            .cloned()
            .collect();
        for entry in open {
            if let Some(tx) = entry.sender() {
                let (reply, done) = oneshot::channel();
                let reason = "the server shut down".to_string();
                if tx.send(Command::Abort { reason, reply }).await.is_ok() {
                    let _ = done.await;
                }
            }
        }
        // Wait for the tables to end and their records to be written.
        let until = tokio::time::Instant::now() + Duration::from_secs(60);
        while tokio::time::Instant::now() < until {
            if lock(&self.inner).open == 0 && self.store.writing() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tracing::error!(
            open = lock(&self.inner).open,
            unwritten = self.store.writing(),
            "stopping with matches not recorded: the data directory cannot be written"
        );
    }
}

fn config_default() -> TimeControl {
    TimeControl::default()
}

/// Events of a finished match are not kept; this re-simulates a replay (see the match service).
pub(crate) fn simulate(replay: &pb::Replay) -> Result<(Game, Vec<Event>, u32), (u32, String)> {
    let config = replay
        .config
        .as_ref()
        .ok_or((0, "the replay has no configuration".to_string()))
        .and_then(|c| MatchConfig::try_from(c).map_err(|e| (0, e.to_string())))?;
    let mut events = Vec::new();
    let mut game = match &replay.start {
        None => Game::new_with(config, replay.seed, &mut events).map_err(|e| (0, e.to_string()))?,
        Some(pb::replay::Start::DeckOrder(d)) => {
            let (dealer, deck) = wire::deck_order_from_wire(d).map_err(|e| (0, e.to_string()))?;
            Game::from_deck(config, replay.seed, dealer, &deck, &mut events)
                .map_err(|e| (0, e.to_string()))?
        }
        Some(pb::replay::Start::Position(p)) => {
            Game::from_position(p).map_err(|e| (0, e.to_string()))?
        }
    };
    for (i, a) in replay.actions.iter().enumerate() {
        let seat = Seat::try_from(a.seat).map_err(|_| (i as u32, "bad seat".to_string()))?;
        let action = a
            .action
            .as_ref()
            .ok_or((i as u32, "an action is missing".to_string()))
            .and_then(|w| {
                maumau_engine::Action::try_from(w).map_err(|e| (i as u32, e.to_string()))
            })?;
        game.apply_with(seat, action, &mut events).map_err(|r| {
            (
                i as u32,
                format!("action {i} ({action}) by seat {seat} was rejected: {r}"),
            )
        })?;
    }
    Ok((game, events, replay.actions.len() as u32))
}
