//! The matches a server knows: open ones in memory (with their table task), finished ones in
//! the store (`store.rs`, in front of the configured `Archive`), read back when asked for.
//! A match leaves memory as soon as its record is committed, so the server's memory is bounded
//! by its open matches, not by its history.
//!
//! The maps sit behind plain `std::sync::Mutex`es that are never held across an `.await`; the
//! store is read on tokio's blocking pool.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use maumau::{pb, wire};
use maumau_engine::{MatchConfig, Seat};
use rand::RngExt;
use tokio::sync::{mpsc, oneshot, watch};
use tonic::Status;

use crate::archive::MemoryArchive;
use crate::config::{ServerConfig, TimeControl};
use crate::store::{self, Store};
use crate::sync::lock;
use crate::table::{Command, Role, Table};
use crate::transport::Roaming;

/// How a match's first deal was made: `None` from its seed, else a deck order or a position
/// (as the replay records it; [`maumau::replay::start_game`] deals it).
pub(crate) type Start = Option<pb::replay::Start>;

/// What the match service reports about a match; updated by its table.
pub(crate) struct Info {
    pub(crate) status: pb::MatchStatus,
    pub(crate) players: Vec<pb::PlayerInfo>,
    pub(crate) round: u32,
    pub(crate) actions: u32,
    pub(crate) totals: Vec<i32>,
    pub(crate) ended_unix_ms: u64,
    /// Set when the match has ended and its record is stored (or, when the server was torn
    /// down before, could not be).
    pub(crate) ended: bool,
    /// The result, for summaries.
    pub(crate) result: Option<pb::MatchResult>,
    /// The record (report and replay), once the match has ended. An entry read back from the
    /// store holds it while someone uses the entry; an open match's entry leaves the registry
    /// when its record is committed.
    pub(crate) record: Option<Arc<pb::StoredMatch>>,
    /// The operator pruned the replay (the stored record keeps the report).
    pub(crate) replay_pruned: bool,
    /// Sealed (`CreateMatchRequest.sealed`) and not revealed yet: the report goes out without
    /// seed and salt, and the replay only to the operator. Read only at the match's end and by
    /// the read calls, never on a table's step.
    pub(crate) sealed: bool,
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
    /// Creation order: ListMatches lists newest first, and its page token is one of these.
    pub(crate) seq: u64,
    /// The match's tokens while it is open (kept as hashes with its record once it has ended).
    tokens: Vec<(String, Role)>,
    tx: Mutex<Option<mpsc::Sender<Command>>>,
    /// Becomes true when the table task has stopped (at once for an entry read from the store):
    /// what [`MatchEntry::ended`] awaits.
    done: watch::Sender<bool>,
    info: Mutex<Info>,
    registry: Weak<Registry>,
}

/// The wall clock, in milliseconds since the Unix epoch (0 before it).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

impl MatchEntry {
    pub(crate) fn update(&self, f: impl FnOnce(&mut Info)) {
        f(&mut lock(&self.info));
    }

    /// The final report, once the match has ended, whole (for the operator and the host's
    /// extensions: a sealed match's seed and salt included).
    pub(crate) fn report(&self) -> Option<pb::MatchReport> {
        self.record()?.report
    }

    /// The final report as seats and spectators may see it: a sealed match's without seed and
    /// salt (marked `sealed`; the commitment stays), until it is revealed.
    pub(crate) fn public_report(&self) -> Option<pb::MatchReport> {
        let report = self.report()?;
        Some(if self.sealed() { seal(report) } else { report })
    }

    /// Whether the match is sealed and not yet revealed.
    pub(crate) fn sealed(&self) -> bool {
        lock(&self.info).sealed
    }

    /// The replay, once the match has ended and unless it was pruned.
    pub(crate) fn replay(&self) -> Option<pb::Replay> {
        self.record().filter(|r| !r.replay_pruned)?.replay
    }

    /// Whether the operator pruned the replay.
    pub(crate) fn replay_pruned(&self) -> bool {
        lock(&self.info).replay_pruned
    }

    /// The record of an ended match.
    fn record(&self) -> Option<pb::StoredMatch> {
        let info = lock(&self.info);
        let record = info.record.as_ref().filter(|_| info.ended)?;
        Some(pb::StoredMatch::clone(record))
    }

    /// An ended match's entry, from its record (`None` when the record has no report, no replay
    /// or an invalid configuration).
    fn from_record(
        seq: u64,
        record: Arc<pb::StoredMatch>,
        registry: Weak<Registry>,
    ) -> Option<MatchEntry> {
        let (Some(report), Some(replay)) = (&record.report, &record.replay) else {
            return None;
        };
        let config = replay
            .config
            .as_ref()
            .and_then(|c| MatchConfig::try_from(c).ok())?;
        Some(MatchEntry {
            id: report.match_id.clone(),
            config,
            start: replay.start.clone(),
            // A record this server wrote has a known policy; an unreadable one shows the
            // defaults rather than hiding the match.
            clock: TimeControl::from_wire(replay.time_control.as_ref(), &TimeControl::default())
                .unwrap_or_default(),
            rated: record.rated,
            label: record.label.clone(),
            seed_commitment: report.seed_commitment.clone(),
            seed_salt: report.seed_salt.clone(),
            created_unix_ms: record.created_unix_ms,
            seq,
            tokens: Vec::new(),
            tx: Mutex::new(None),
            done: watch::Sender::new(true),
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
                ended_unix_ms: record.ended_unix_ms,
                ended: true,
                result: report.result.clone(),
                replay_pruned: record.replay_pruned,
                sealed: record.sealed,
                record: Some(record.clone()),
            }),
            registry,
        })
    }

    /// The summary ListMatches shows for a record (the store keeps it with the record).
    pub(crate) fn summarize(seq: u64, record: Arc<pb::StoredMatch>) -> Option<pb::MatchSummary> {
        Some(MatchEntry::from_record(seq, record, Weak::new())?.summary())
    }

    pub(crate) fn status(&self) -> pb::MatchStatus {
        lock(&self.info).status
    }

    /// The table task's command channel, while the match is open.
    pub(crate) fn sender(&self) -> Option<mpsc::Sender<Command>> {
        lock(&self.tx).clone()
    }

    /// The replay of the match so far and the time the seat to act has left, from its table;
    /// `None` once the table is gone (the match has ended: its replay is then
    /// [`MatchEntry::replay`]).
    pub(crate) async fn live_replay(&self) -> Option<crate::table::Live> {
        let tx = self.sender()?;
        let (reply, replay) = oneshot::channel();
        tx.send(Command::Replay { reply }).await.ok()?;
        replay.await.ok()
    }

    /// Asks the table to abort the match and waits until it has taken the command (nothing
    /// happens to a match that has ended).
    pub(crate) async fn abort(&self, reason: String) {
        if let Some(tx) = self.sender() {
            let (reply, taken) = oneshot::channel();
            if tx.send(Command::Abort { reason, reply }).await.is_ok() {
                let _ = taken.await;
            }
        }
    }

    /// Asks the table to abort the match without waiting.
    pub(crate) fn abort_soon(&self, reason: String) {
        if let Some(tx) = self.sender() {
            let (reply, _) = oneshot::channel();
            let _ = tx.try_send(Command::Abort { reason, reply });
        }
    }

    /// Waits until the table has stopped (its record is stored by then, unless the server was
    /// torn down first), then returns the final report.
    pub(crate) async fn ended(&self) -> Option<pb::MatchReport> {
        let mut done = self.done.subscribe();
        // The table's channel closes when its task stops, even if it never got to say so.
        let table = self.sender();
        tokio::select! {
            _ = done.wait_for(|d| *d) => {}
            () = async move {
                match table {
                    Some(tx) => tx.closed().await,
                    None => std::future::pending().await,
                }
            } => {}
        }
        self.report()
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
    /// is durable: committed to the store. Until then the match reads as still open (no report,
    /// no result), so no one is told it finished before a crash could no longer lose it; a slow
    /// or failing disk makes this wait, as long as it takes. Then the match leaves the
    /// registry's memory: from there on it is read from the store.
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
            sealed: lock(&self.info).sealed,
        });
        // The registry is not held while waiting: a store that cannot write gives up once the
        // server is torn down.
        let durable = self.registry.upgrade().and_then(|reg| {
            let summary = MatchEntry::summarize(self.seq, record.clone())?;
            let tokens = self
                .tokens
                .iter()
                .map(|(token, role)| {
                    let seat = match role {
                        Role::Seat(s) => Some(u32::from(*s)),
                        Role::Spectator => None,
                    };
                    (store::token_hash(token), seat)
                })
                .collect();
            Some(reg.store.submit(store::Row {
                seq: self.seq,
                id: self.id.clone(),
                record: record.clone(),
                summary,
                tokens,
            }))
        });
        let saved = match durable {
            Some(done) => done.await.is_ok(),
            None => false,
        };
        crate::metrics::match_ended(report.status());
        {
            let mut info = lock(&self.info);
            info.status = report.status();
            info.ended_unix_ms = ended;
            info.players = report.players.clone();
            info.result = report.result.clone();
            info.record = Some(record);
            info.ended = true;
        }
        // Only when the store is gone (the server was torn down) does the match stay here.
        if saved && let Some(reg) = self.registry.upgrade() {
            reg.forget(self);
        }
        report
    }
}

/// The matches in memory: the open ones (and, while the server is torn down, ended ones whose
/// record could not be stored).
struct Inner {
    matches: HashMap<String, Arc<MatchEntry>>,
    tokens: HashMap<String, (Arc<MatchEntry>, Role)>,
    open: usize,
}

/// All matches of one server.
pub(crate) struct Registry {
    pub(crate) config: ServerConfig,
    store: Store,
    inner: Mutex<Inner>,
    next_conn: AtomicU64,
    /// The next match's creation order.
    next_seq: AtomicU64,
}

/// A report as a sealed match shows it: without seed and salt, marked sealed.
pub(crate) fn seal(report: pb::MatchReport) -> pb::MatchReport {
    pb::MatchReport {
        seed: 0,
        seed_salt: Vec::new(),
        sealed: true,
        ..report
    }
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
    /// How long the match waits for its remote seats before it starts without them; `None`
    /// takes the server's `join_timeout`.
    pub(crate) join_timeout: Option<Duration>,
    /// Seed, salt and hidden cards stay secret after the end until RevealMatch.
    pub(crate) sealed: bool,
}

impl Registry {
    /// Opens the registry on the configured archive (in memory when none is configured), which
    /// imports records of earlier formats. Nothing finished is loaded into memory.
    pub(crate) fn open(config: ServerConfig) -> std::io::Result<Arc<Registry>> {
        let archive = config
            .archive
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryArchive::default()));
        let store = Store::open(archive, MatchEntry::summarize)?;
        let next_seq = AtomicU64::new(store.last_seq() + 1);
        Ok(Arc::new(Registry {
            config,
            store,
            inner: Mutex::new(Inner {
                matches: HashMap::new(),
                tokens: HashMap::new(),
                open: 0,
            }),
            next_conn: AtomicU64::new(1),
            next_seq,
        }))
    }

    pub(crate) fn next_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// Deals the match, starts its table task and returns the response with the tokens, and the
    /// match.
    pub(crate) fn create(
        self: &Arc<Self>,
        m: NewMatch,
    ) -> Result<(pb::CreateMatchResponse, Arc<MatchEntry>), Status> {
        if !self.store.healthy() {
            return Err(wire::status(
                pb::ErrorReason::StorageUnavailable,
                "the server cannot write its data directory (see its log), so it takes no new \
                 match until it can; try again later",
            ));
        }
        let mut log = Vec::new();
        let game = maumau::replay::start_game(m.config, m.seed, m.start.as_ref(), &mut log)
            .map_err(|e| {
                // A seeded deal fails only on its configuration; a deck or position on itself.
                let reason = match m.start {
                    None => pb::ErrorReason::InvalidConfig,
                    Some(_) => pb::ErrorReason::InvalidSetup,
                };
                wire::status(reason, e)
            })?;
        let seed = game.rng_state().0;
        let salt = seed_salt();
        let id = format!("m{}", &secret()[..16]);
        let (tx, rx) = mpsc::channel(256);
        let mut tokens = Vec::new();
        let mut response = pb::CreateMatchResponse {
            match_id: id.clone(),
            seat_tokens: Vec::new(),
            spectator_token: secret(),
            seed_commitment: Vec::new(),
        };
        for seat in 0..game.seats() {
            if m.bots[seat as usize].is_none() {
                let token = secret();
                tokens.push((token.clone(), Role::Seat(seat)));
                response.seat_tokens.push(pb::SeatToken {
                    seat: seat.into(),
                    token,
                });
            }
        }
        tokens.push((response.spectator_token.clone(), Role::Spectator));
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
            seq: self.next_seq.fetch_add(1, Ordering::Relaxed),
            tokens,
            tx: Mutex::new(Some(tx)),
            done: watch::Sender::new(false),
            info: Mutex::new(Info {
                status: pb::MatchStatus::Waiting,
                players: Vec::new(),
                round: game.round().into(),
                actions: 0,
                totals: game.totals().to_vec(),
                ended_unix_ms: 0,
                ended: false,
                result: None,
                record: None,
                replay_pruned: false,
                sealed: m.sealed,
            }),
            registry: Arc::downgrade(self),
        });
        response.seed_commitment = entry.seed_commitment.clone();
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
            for (token, role) in &entry.tokens {
                inner.tokens.insert(token.clone(), (entry.clone(), *role));
            }
            inner.matches.insert(id.clone(), entry.clone());
        }
        let ended = entry.clone();
        let created = entry.clone();
        let table = Table::new(
            entry,
            game,
            log,
            &m.bots,
            m.clock,
            m.join_timeout.unwrap_or(self.config.join_timeout),
            crate::table::SeatLimits::from_config(&self.config),
        );
        let registry = self.clone();
        let mover = table.mover();
        // The table starts on a task of its own and moves to its seats' connection once they
        // all play through one (see `transport::Roaming` and `Table::follow_seats`).
        tokio::spawn(Roaming::new(
            async move {
                table.run(rx).await;
                registry.closed(&ended);
            },
            mover,
        ));
        Ok((response, created))
    }

    /// A table task ended: its slot is free.
    fn closed(&self, entry: &MatchEntry) {
        let mut inner = lock(&self.inner);
        inner.open = inner.open.saturating_sub(1);
        crate::metrics::match_closed();
        *lock(&entry.tx) = None;
        entry.done.send_replace(true);
    }

    /// A match's record is committed: from now on it is read from the store. Its tokens keep
    /// working (the store keeps their hashes), so a seat that reconnects late still receives
    /// the final report.
    fn forget(&self, entry: &MatchEntry) {
        let mut inner = lock(&self.inner);
        inner.matches.remove(&entry.id);
        for (token, _) in &entry.tokens {
            inner.tokens.remove(token);
        }
    }

    /// How many matches and tokens the registry holds in memory (the open matches').
    #[cfg(test)]
    pub(crate) fn in_memory(&self) -> (usize, usize) {
        let inner = lock(&self.inner);
        (inner.matches.len(), inner.tokens.len())
    }

    /// An open match (in memory; `None` for a finished one).
    pub(crate) fn open_match(&self, id: &str) -> Option<Arc<MatchEntry>> {
        lock(&self.inner).matches.get(id).cloned()
    }

    /// A finished match, read from the store. Blocking.
    fn stored(self: &Arc<Self>, id: &str) -> Option<Arc<MatchEntry>> {
        let (seq, record) = self.store.read(id)?;
        MatchEntry::from_record(seq, Arc::new(record), Arc::downgrade(self)).map(Arc::new)
    }

    /// The match and role a token belongs to: an open match's from memory, else a finished
    /// match's from the store, if the connection may still pay for the look (see
    /// `Home::store_look`); `None` when neither, or when the budget is spent.
    pub(crate) async fn by_token(self: &Arc<Self>, token: &str) -> Option<(Arc<MatchEntry>, Role)> {
        if let Some(found) = self.open_by_token(token) {
            return Some(found);
        }
        if crate::transport::Home::current().is_some_and(|home| !home.store_look()) {
            return None;
        }
        self.stored_by_token(token).await
    }

    /// The open match a token belongs to, and its role there, from memory.
    pub(crate) fn open_by_token(&self, token: &str) -> Option<(Arc<MatchEntry>, Role)> {
        lock(&self.inner).tokens.get(token).cloned()
    }

    /// The finished match a token belongs to, from the store (a look on the blocking pool: see
    /// `Home::store_look` for what a connection may spend on these).
    pub(crate) async fn stored_by_token(
        self: &Arc<Self>,
        token: &str,
    ) -> Option<(Arc<MatchEntry>, Role)> {
        let (registry, token) = (self.clone(), token.to_string());
        tokio::task::spawn_blocking(move || {
            let (id, seat) = registry.store.token(&token)?;
            let role = match seat {
                Some(s) => Role::Seat(Seat::try_from(s).ok()?),
                None => Role::Spectator,
            };
            Some((registry.get_blocking(&id)?, role))
        })
        .await
        .ok()?
    }

    /// A match: an open one from memory, else a finished one from the store.
    pub(crate) async fn get(self: &Arc<Self>, id: &str) -> Option<Arc<MatchEntry>> {
        if let Some(e) = lock(&self.inner).matches.get(id).cloned() {
            return Some(e);
        }
        let (registry, id) = (self.clone(), id.to_string());
        tokio::task::spawn_blocking(move || registry.stored(&id))
            .await
            .ok()?
    }

    /// [`Registry::get`] for a caller on a blocking thread.
    pub(crate) fn get_blocking(self: &Arc<Self>, id: &str) -> Option<Arc<MatchEntry>> {
        if let Some(e) = lock(&self.inner).matches.get(id).cloned() {
            return Some(e);
        }
        self.stored(id)
    }

    /// Summaries of matches newest first (as the contract says), at most `limit`, optionally of
    /// one status, from the cursor `start`: 0 for the newest, else the cursor the previous page
    /// returned (a creation order: matches created meanwhile do not shift later pages). The
    /// returned cursor is `None` when no further match would be listed.
    pub(crate) async fn list(
        self: &Arc<Self>,
        start: u64,
        limit: usize,
        status: Option<pb::MatchStatus>,
    ) -> (Vec<pb::MatchSummary>, Option<u64>) {
        let before = if start == 0 { u64::MAX } else { start };
        // Memory first, then the store: a match that ends in between is in the store by then
        // (it leaves memory only after its commit), and is listed once.
        let mut open: Vec<(u64, pb::MatchSummary)> = lock(&self.inner)
            .matches
            .values()
            .filter(|e| e.seq < before && status.is_none_or(|s| e.status() == s))
            .map(|e| (e.seq, e.summary()))
            .collect();
        let registry = self.clone();
        let want = limit.saturating_add(1);
        let stored = tokio::task::spawn_blocking(move || {
            registry.store.list(before, status.map(|s| s as i32), want)
        })
        .await
        .unwrap_or_default();
        open.retain(|(seq, _)| !stored.iter().any(|(s, _)| s == seq));
        let mut all = stored;
        all.append(&mut open);
        all.sort_by_key(|(seq, _)| std::cmp::Reverse(*seq));
        let more = all.len() > limit;
        all.truncate(limit);
        let next = if more {
            all.last().map(|(seq, _)| *seq)
        } else {
            None
        };
        (all.into_iter().map(|(_, s)| s).collect(), next)
    }

    /// Labels and ids of the matches (open and finished) whose label starts with `prefix`, oldest
    /// first. Blocking.
    pub(crate) fn labelled(&self, prefix: &str) -> Vec<(String, String)> {
        let mut open: Vec<(u64, String, String)> = lock(&self.inner)
            .matches
            .values()
            .filter(|e| e.label.starts_with(prefix))
            .map(|e| (e.seq, e.label.clone(), e.id.clone()))
            .collect();
        open.sort();
        let mut all = self.store.labelled(prefix);
        for (_, label, id) in open {
            if !all.iter().any(|(_, i)| *i == id) {
                all.push((label, id));
            }
        }
        all
    }

    /// When a stored match ended and whether its replay is pruned; `None` while it is open or
    /// its record is not committed yet. Blocking.
    pub(crate) fn stored_end(&self, id: &str) -> Option<(u64, bool)> {
        self.store.ended(id)
    }

    /// Deletes a stored match's replay actions, keeping its report and the replay's header, and
    /// returns the bytes freed; `None` when there is nothing to prune or the write failed
    /// (logged). Blocking.
    pub(crate) fn prune_replay(&self, id: &str) -> Option<u64> {
        self.store.prune(id)
    }

    /// Reveals a sealed match that has ended: clears the flag in its stored record (and in
    /// memory, for an entry still there). `Ok(true)` when it was sealed; `Err` with the status
    /// to answer when the match is unknown, still open, or the write failed.
    pub(crate) async fn reveal(self: &Arc<Self>, id: &str) -> Result<bool, Status> {
        let open = lock(&self.inner).matches.get(id).cloned();
        if let Some(entry) = &open {
            let info = lock(&entry.info);
            if !info.ended {
                return Err(wire::status(
                    pb::ErrorReason::MatchNotFinished,
                    "the match is still being played: reveal it once it has ended",
                ));
            }
        }
        let (registry, key) = (self.clone(), id.to_string());
        let stored = tokio::task::spawn_blocking(move || registry.store.reveal(&key))
            .await
            .map_err(|_| wire::status(pb::ErrorReason::Internal, "the reveal task failed"))?;
        let was_sealed = match (stored, &open) {
            (Ok(Some(was)), _) => was,
            // Ended, but its record is not stored (the server is being torn down).
            (Ok(None), Some(_)) => false,
            (Ok(None), None) => {
                return Err(wire::status(
                    pb::ErrorReason::MatchNotFound,
                    format!("no match `{}`", crate::reasons::echo(id)),
                ));
            }
            (Err(()), _) => {
                return Err(wire::status(
                    pb::ErrorReason::StorageUnavailable,
                    "the match's record could not be rewritten; try again",
                ));
            }
        };
        if let Some(entry) = open {
            let mut info = lock(&entry.info);
            info.sealed = false;
            if let Some(record) = &mut info.record {
                Arc::make_mut(record).sealed = false;
            }
        }
        Ok(was_sealed)
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
            entry.abort("the server shut down".into()).await;
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A classic two-seat, one-round match; `bots` seats are the server's random bot.
    fn new_match(seed: u64, bots: usize) -> NewMatch {
        let config = MatchConfig::try_from(&pb::MatchConfig {
            profile: pb::Profile::Classic as i32,
            seats: 2,
            options: Some(pb::ProfileOptions {
                single_round: true,
                ..Default::default()
            }),
            ..Default::default()
        })
        .unwrap();
        let mut seats = vec![None; 2];
        for s in seats.iter_mut().rev().take(bots) {
            *s = Some(pb::BotKind::Random);
        }
        NewMatch {
            config,
            seed,
            start: None,
            clock: TimeControl::default(),
            bots: seats,
            rated: false,
            label: format!("m{seed}"),
            join_timeout: None,
            sealed: false,
        }
    }

    /// Memory holds the open matches only: finished ones leave it once stored, and are read
    /// back from the store (by id, by token and in the list, newest first).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn finished_matches_leave_memory() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(ServerConfig {
            data_dir: dir.path().to_path_buf(),
            ..ServerConfig::default()
        })
        .unwrap();
        // One open match, waiting for its remote seat.
        let (open, _) = registry.create(new_match(0, 1)).unwrap();
        const N: u64 = 60;
        let mut created = Vec::new();
        for seed in 1..=N {
            created.push(registry.create(new_match(seed, 2)).unwrap().0);
        }
        // Wait until every bots-only table has ended (after its record was stored).
        while lock(&registry.inner).open > 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            registry.in_memory(),
            (1, 2),
            "only the open match and its two tokens are in memory"
        );
        // Everything is read back from the store.
        let mut listed = Vec::new();
        let mut cursor = 0;
        loop {
            let (page, next) = registry.list(cursor, 7, None).await;
            listed.extend(page);
            match next {
                Some(n) => cursor = n,
                None => break,
            }
        }
        let mut want: Vec<&str> = created.iter().map(|c| c.match_id.as_str()).collect();
        want.insert(0, &open.match_id);
        want.reverse();
        assert_eq!(
            listed
                .iter()
                .map(|s| s.match_id.as_str())
                .collect::<Vec<_>>(),
            want,
            "newest first, each once"
        );
        let (finished, _) = registry.list(0, 500, Some(pb::MatchStatus::Finished)).await;
        assert_eq!(finished.len() as u64, N);
        let (entry, role) = registry
            .stored_by_token(&created[0].spectator_token)
            .await
            .unwrap();
        assert_eq!(role, Role::Spectator);
        assert_eq!(entry.id, created[0].match_id);
        assert_eq!(entry.status(), pb::MatchStatus::Finished);
        assert!(entry.report().is_some() && entry.replay().is_some());
        assert_eq!(registry.in_memory(), (1, 2), "reading does not keep it");
    }
}
