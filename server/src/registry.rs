//! The matches a server knows: open ones (with their table task) and finished ones (with their
//! report and replay on disk, so they survive a restart and cost the server's memory only a
//! summary each).
//!
//! The maps sit behind plain `std::sync::Mutex`es that are never held across an `.await`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use maumau::{pb, wire};
use maumau_engine::{Event, Game, MatchConfig, Seat};
use prost::Message;
use rand::RngExt;
use tokio::sync::{mpsc, oneshot};
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
    /// The record, in memory until the store has written it (for good, if it cannot).
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
        if !Store::save(&registry.store.dir, &self.id, &record) {
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

    /// Records the end of the match (finished or aborted): keeps a summary in memory and hands
    /// the record to the store, which writes it on its own thread. Returns the report.
    pub(crate) fn finish(
        self: &Arc<Self>,
        report: pb::MatchReport,
        replay: pb::Replay,
    ) -> pb::MatchReport {
        // One end time, in memory and on disk, so a restart reads back the same summary.
        let ended = now_ms();
        {
            let mut info = lock(&self.info);
            info.status = report.status();
            info.ended_unix_ms = ended;
            info.players = report.players.clone();
            info.result = report.result.clone();
            info.unsaved = Some(Arc::new(pb::StoredMatch {
                report: Some(report.clone()),
                replay: Some(replay),
                created_unix_ms: self.created_unix_ms,
                ended_unix_ms: ended,
                label: self.label.clone(),
                rated: self.rated,
                replay_pruned: false,
            }));
            info.ended = true;
        }
        if let Some(reg) = self.registry.upgrade() {
            reg.store.submit(self.clone());
        }
        report
    }

    /// Writes the record to `dir` (on the store's thread) and lets go of it; a record that
    /// cannot be written stays in memory.
    fn write(&self, dir: &Path) {
        let Some(record) = lock(&self.info).unsaved.clone() else {
            return;
        };
        if Store::save(dir, &self.id, &record) {
            lock(&self.info).unsaved = None;
        }
    }
}

/// Finished matches on disk: `<data_dir>/matches/<id>.pb`, one encoded `StoredMatch` each,
/// written to a temporary file and renamed, so a crash never leaves half a record. Records are
/// encoded and written on the store's own thread: creating a file can take a millisecond, which
/// a table task must not spend on a runtime worker.
pub(crate) struct Store {
    dir: PathBuf,
    jobs: std::sync::mpsc::Sender<Arc<MatchEntry>>,
    /// Records handed over and not yet written.
    writing: Arc<AtomicUsize>,
}

impl Store {
    fn open(data_dir: &Path) -> std::io::Result<Store> {
        let dir = data_dir.join("matches");
        std::fs::create_dir_all(&dir)?;
        let (jobs, queue) = std::sync::mpsc::channel::<Arc<MatchEntry>>();
        let writing = Arc::new(AtomicUsize::new(0));
        let (thread_dir, done) = (dir.clone(), writing.clone());
        // Ends when the registry (the only sender) is dropped.
        std::thread::Builder::new()
            .name("maumau-store".into())
            .spawn(move || {
                for entry in queue {
                    entry.write(&thread_dir);
                    done.fetch_sub(1, Ordering::AcqRel);
                }
            })?;
        Ok(Store { dir, jobs, writing })
    }

    /// Queues an ended match's record for writing.
    fn submit(&self, entry: Arc<MatchEntry>) {
        self.writing.fetch_add(1, Ordering::AcqRel);
        if self.jobs.send(entry).is_err() {
            // The thread is gone (it never panics on a write): the record stays in memory.
            self.writing.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Records handed over and not yet written.
    fn writing(&self) -> usize {
        self.writing.load(Ordering::Acquire)
    }

    /// Writes a record; false (logged) when it could not be written.
    fn save(dir: &Path, id: &str, record: &pb::StoredMatch) -> bool {
        let tmp = dir.join(format!("{id}.pb.tmp"));
        let path = dir.join(format!("{id}.pb"));
        let written = std::fs::write(&tmp, record.encode_to_vec())
            .and_then(|()| std::fs::rename(&tmp, &path));
        match written {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(match_id = id, error = %e, "could not store the finished match; keeping it in memory");
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
        let id = format!("m{}", &secret()[..16]);
        let (tx, rx) = mpsc::channel(256);
        let entry = Arc::new(MatchEntry {
            id: id.clone(),
            config: *game.config(),
            start: m.start,
            clock: m.clock,
            rated: m.rated,
            label: m.label,
            seed_commitment: wire::seed_commitment(seed).to_vec(),
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
            self.config.actions_per_second,
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

    /// Aborts every open match and waits until each is recorded.
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
        for _ in 0..200 {
            if lock(&self.inner).open == 0 && self.store.writing() == 0 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
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
