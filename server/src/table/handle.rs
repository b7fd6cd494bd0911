//! A match's handle: what the rest of the server (the registry, the play and match services,
//! the viewer, the host's extensions) holds of a match while its table task owns the game.
//!
//! It keeps what the match was created with, its tokens, the info the table publishes (status,
//! players, totals) and the sender of the table's commands; `done` tells whoever awaits the
//! end. At the end the table calls [`Handle::finish`], which submits the record to the store
//! itself and returns once it is durable; the registry lets go of the handle when the table's
//! task returns. A finished match read back from the store gets a handle too
//! ([`Handle::from_record`]), with no table behind it.

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use maumau::{pb, wire};
use maumau_engine::{Game, MatchConfig, Seat};
use rand::RngExt;
use tokio::sync::{mpsc, oneshot, watch};

use super::{Command, Live, Role};
use crate::clock::now_ms;
use crate::config::TimeControl;
use crate::store::{Row, Store, token_hash};
use crate::sync::lock;

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
    /// The record is committed to the store.
    pub(crate) stored: bool,
    /// Sealed (`CreateMatchRequest.sealed`) and not revealed yet: the report goes out without
    /// seed and salt, and the replay only to the operator. Read only at the match's end and by
    /// the read calls, never on a table's step.
    pub(crate) sealed: bool,
}

/// One match, as the rest of the server holds it: what it was created with, its tokens, its
/// published info and the sender of its table's commands.
pub(crate) struct Handle {
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
    /// The players' names its creator gave, by seat (see `NewMatch::names`).
    pub(crate) names: Vec<String>,
    /// Creation order: ListMatches lists newest first, and its page token is one of these.
    pub(crate) seq: u64,
    /// The match's tokens while it is open (kept as hashes with its record once it has ended).
    tokens: Vec<(String, Role)>,
    tx: Mutex<Option<mpsc::Sender<Command>>>,
    /// Becomes true when the table task has stopped (at once for an entry read from the store):
    /// what [`Handle::ended`] awaits.
    done: watch::Sender<bool>,
    info: Mutex<Info>,
    /// Where the record goes when the match ends; gone once the server is torn down (a
    /// record that cannot be written then is given up).
    store: Weak<Store>,
}

impl Handle {
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
    pub(crate) fn from_record(seq: u64, record: Arc<pb::StoredMatch>) -> Option<Handle> {
        let (Some(report), Some(replay)) = (&record.report, &record.replay) else {
            return None;
        };
        let config = replay
            .config
            .as_ref()
            .and_then(|c| MatchConfig::try_from(c).ok())?;
        Some(Handle {
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
            names: Vec::new(),
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
                stored: true,
                record: Some(record.clone()),
            }),
            store: Weak::new(),
        })
    }

    /// The summary ListMatches shows for a record (the store keeps it with the record).
    pub(crate) fn summarize(seq: u64, record: Arc<pb::StoredMatch>) -> Option<pb::MatchSummary> {
        Some(Handle::from_record(seq, record)?.summary())
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
    /// [`Handle::replay`]).
    pub(crate) async fn live_replay(&self) -> Option<Live> {
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
    /// or failing disk makes this wait, as long as it takes. Once the table has stopped, the
    /// registry lets go of a stored match: from there on it is read from the store.
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
        // The store is not held while waiting: a store that cannot write gives up once the
        // server is torn down.
        let durable = self.store.upgrade().and_then(|store| {
            let summary = Handle::summarize(self.seq, record.clone())?;
            let tokens = self
                .tokens
                .iter()
                .map(|(token, role)| {
                    let seat = match role {
                        Role::Seat(s) => Some(u32::from(*s)),
                        Role::Spectator => None,
                    };
                    (token_hash(token), seat)
                })
                .collect();
            Some(store.submit(Row {
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
            info.stored = saved;
        }
        report
    }

    /// The table has stopped: no more commands, and whoever awaits [`Handle::ended`] is told.
    pub(crate) fn close(&self) {
        *lock(&self.tx) = None;
        self.done.send_replace(true);
    }

    /// Whether the match's record is committed to the store (so memory may let go of it).
    pub(crate) fn stored(&self) -> bool {
        lock(&self.info).stored
    }

    /// The match's tokens while it is open, with the role each gives.
    pub(crate) fn tokens(&self) -> &[(String, Role)] {
        &self.tokens
    }

    /// Reveals a sealed match in memory (its stored record is rewritten by the caller).
    pub(crate) fn unseal(&self) {
        let mut info = lock(&self.info);
        info.sealed = false;
        if let Some(record) = &mut info.record {
            Arc::make_mut(record).sealed = false;
        }
    }

    /// Whether the match has ended (its record written, or given up on at teardown).
    pub(crate) fn has_ended(&self) -> bool {
        lock(&self.info).ended
    }
}

impl Handle {
    /// The handle of a match just dealt (`game`, from `seed`), before its table runs: its
    /// commitment's salt is drawn here, secret until the match ends.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open(
        id: String,
        m: &NewMatch,
        game: &Game,
        seq: u64,
        tokens: Vec<(String, Role)>,
        tx: mpsc::Sender<Command>,
        store: Weak<Store>,
    ) -> Handle {
        let seed = game.rng_state().0;
        let salt = seed_salt();
        Handle {
            id,
            config: *game.config(),
            start: m.start.clone(),
            clock: m.clock,
            rated: m.rated,
            label: m.label.clone(),
            seed_commitment: wire::seed_commitment(&salt, seed).to_vec(),
            seed_salt: salt.to_vec(),
            created_unix_ms: now_ms(),
            names: m.names.clone(),
            seq,
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
                stored: false,
                sealed: m.sealed,
            }),
            store,
        }
    }
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
    /// The players' names as the match's creator knows them, by seat (empty: none given; a seat
    /// beyond the list has none): shown for the seat instead of the name its client joins with.
    pub(crate) names: Vec<String>,
}
