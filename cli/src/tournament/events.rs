//! A tournament on several machines: the [`Venue`] in PostgreSQL that `maumau tournament --store`
//! plays at ([`StoreVenue`]), and what it shares with `maumau worker` (`crate::worker`): the
//! store's opening, the lease and its [`Heartbeat`], the version check, and the translation
//! between the store's rows and the tournament's fixtures and records.
//!
//! The coordinator (the command that started the event) releases each round's fixtures into the
//! store, claims games like any worker, and collects every finished game from the store; the
//! schedule, the next round, the ratings and the files are computed by `Tournament::run_on`, the
//! same loop as a tournament played here, so results do not depend on who played which game.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use maumau_ladder::PgStore;
use maumau_ladder::store::{EventGame, EventInfo};
use maumau_tournament::{
    Claim, Description, Fixture, GameRecord, Played, Tournament, TournamentError, Venue,
};

/// The version every machine of an event must run: the same program deals the same cards and
/// makes the built-in bots play the same actions, which the results rely on.
pub(crate) const VERSION: &str = concat!("maumau ", env!("CARGO_PKG_VERSION"));

/// How long a claimed game (and a coordinator) counts as alive without a heartbeat, by the
/// database's clock: a worker killed mid-game loses its game to another after at most this.
pub(crate) const LEASE: Duration = Duration::from_secs(10);

/// How often a process renews its leases (a quarter of [`LEASE`]: three renewals may fail or be
/// late before a lease runs out).
const RENEW_EVERY: Duration = Duration::from_millis(2500);

/// How often a process with nothing to play looks again for a game (and the coordinator for
/// the results of other machines) at first; see [`Backoff`].
pub(crate) const POLL_EVERY: Duration = Duration::from_millis(100);

/// The longest a process waits before looking again (see [`Backoff`]): a worker idle for a
/// while starts on a new event within this.
const POLL_AT_MOST: Duration = Duration::from_secs(1);

/// [`LEASE`] in milliseconds, as the store takes it.
pub(crate) fn lease_ms() -> i64 {
    LEASE.as_millis() as i64
}

/// Opens the PostgreSQL store named by `--store`, refusing anything but a `postgres://` URL.
pub(crate) fn open_store(url: &str) -> Result<PgStore, Box<dyn std::error::Error>> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(format!(
            "--store: expected a PostgreSQL URL (postgres://user@host:port/db), not {url:?}"
        )
        .into());
    }
    PgStore::open(url).map_err(|e| format!("--store: {e}").into())
}

/// A random id for this process's claims (never 0): two processes never share one.
pub(crate) fn owner_id() -> i64 {
    (maumau_tournament::schedule::random_seed() >> 1).max(1) as i64
}

/// The refusal of an event started by another version of the program, if it was.
pub(crate) fn version_refusal(event: &EventInfo) -> Option<String> {
    (event.version != VERSION).then(|| {
        format!(
            "event {} was started by {} and this is {VERSION}: every machine of an event must \
             run the same version (the same program deals the same cards), so this one plays \
             none of its games",
            event.id, event.version
        )
    })
}

/// What an event records in the store: the tournament's description (its `tournament.json`,
/// secret seed included) and, when it has external programs, how every machine runs them.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct EventDescription {
    /// The tournament.
    #[serde(flatten)]
    pub(crate) tournament: Description,
    /// How its `cmd:` and `lobby:` programs are run; absent for built-in entrants only (the
    /// description is then the tournament's alone, as before workers played programs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) programs: Option<Programs>,
}

/// How the external programs of an event are run, the same on every machine: the clock of
/// their games and the sandbox (`--decision-ms`, `--grace-ms`, `--sandbox` and its limits of
/// the command that started the event). A worker that cannot make the sandbox plays none of the
/// event's games.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Programs {
    /// Milliseconds per decision.
    pub(crate) decision_ms: u64,
    /// Milliseconds a program may be missing when it must act (and the server waits for the
    /// seats to join).
    pub(crate) grace_ms: u64,
    /// The sandbox every program runs in; `None`: unsandboxed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) sandbox: Option<crate::sandbox::SandboxSettings>,
}

impl Programs {
    /// The clock of the games with programs.
    pub(crate) fn clock(&self) -> maumau_tournament::Clock {
        maumau_tournament::Clock {
            decision: Duration::from_millis(self.decision_ms.max(1)),
            disconnect_grace: Duration::from_millis(self.grace_ms.max(1)),
            ..maumau_tournament::Clock::default()
        }
    }
}

/// The tournament of `event`, as its coordinator described it, and how its programs run.
pub(crate) fn event_tournament(
    event: &EventInfo,
) -> Result<(Tournament, Option<Programs>), String> {
    let d: EventDescription = serde_json::from_str(&event.description)
        .map_err(|e| format!("event {}: its description does not parse: {e}", event.id))?;
    let t = Tournament::from_description(&d.tournament, event.replays)
        .map_err(|e| format!("event {}: {e}", event.id))?;
    if t.entrants
        .iter()
        .any(maumau_tournament::Entrant::is_external)
        && d.programs.is_none()
    {
        return Err(format!(
            "event {}: it has external programs but does not say how to run them",
            event.id
        ));
    }
    Ok((t, d.programs))
}

/// The fixture a claimed game plays.
pub(crate) fn fixture_of(game: &EventGame) -> Fixture {
    Fixture {
        id: game.fixture.clone(),
        seats: game.seats.clone(),
        seed: game.seed,
    }
}

/// A record as the store keeps it (the line `results.jsonl` gets).
pub(crate) fn record_text(record: &GameRecord) -> String {
    serde_json::to_string(record).unwrap_or_default()
}

/// When a process asks the store again after it had nothing (no game to claim, no result to
/// collect): [`POLL_EVERY`] after the first miss, twice as long after each further one up to
/// [`POLL_AT_MOST`], and freely again after a hit. Shared by a process's threads, which take
/// turns while the store has nothing: idle threads send one query per period between them, not
/// one each, so a long tournament costs the store a few statements per game rather than one per
/// thread and tenth of a second.
pub(crate) struct Backoff {
    state: Mutex<BackoffState>,
}

struct BackoffState {
    /// No turn before this.
    not_before: Instant,
    /// The wait after the next miss.
    period: Duration,
    /// Whether the last answer was a miss (then one caller per period asks).
    missing: bool,
}

impl Backoff {
    /// A backoff whose callers may ask at once.
    pub(crate) fn new() -> Backoff {
        Backoff {
            state: Mutex::new(BackoffState {
                not_before: Instant::now(),
                period: POLL_EVERY,
                missing: false,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BackoffState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether this caller may ask the store now.
    pub(crate) fn take_turn(&self) -> bool {
        let mut st = self.lock();
        let now = Instant::now();
        if now < st.not_before {
            return false;
        }
        if st.missing {
            // The others wait for this caller's answer (or the next period).
            st.not_before = now + st.period;
        }
        true
    }

    /// The store had something: anyone may ask at once.
    pub(crate) fn hit(&self) {
        let mut st = self.lock();
        (st.not_before, st.period, st.missing) = (Instant::now(), POLL_EVERY, false);
    }

    /// The store had nothing: wait, longer each time.
    pub(crate) fn miss(&self) {
        let mut st = self.lock();
        st.not_before = Instant::now() + st.period;
        st.period = (st.period * 2).min(POLL_AT_MOST);
        st.missing = true;
    }
}

/// What a process sent to the store: `the store: S statements in T transactions` (the line
/// `maumau-loadgen workers` adds up).
pub(crate) fn statements_line(store: &PgStore) -> String {
    let (statements, transactions) = store.event_statements();
    format!("the store: {statements} statements in {transactions} transactions")
}

/// Renews this process's leases (and, for a coordinator, its event's liveness) every
/// [`RENEW_EVERY`] on a thread of its own, until dropped.
pub(crate) struct Heartbeat {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Heartbeat {
    /// Starts renewing `owner`'s leases in `store` (and `coordinating`'s liveness).
    pub(crate) fn start(store: PgStore, owner: i64, coordinating: Option<i64>) -> Heartbeat {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let step = Duration::from_millis(50);
            let mut waited = Duration::ZERO;
            while !stopping.load(Ordering::Relaxed) {
                std::thread::sleep(step);
                waited += step;
                if waited < RENEW_EVERY {
                    continue;
                }
                waited = Duration::ZERO;
                // A failed renewal is tried again at the next beat; the lease outlives three.
                if let Err(e) = store.renew_event_leases(owner, coordinating, lease_ms()) {
                    eprintln!("maumau: cannot renew the leases in the store: {e}");
                }
            }
        });
        Heartbeat {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Heartbeat {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The games of one event in PostgreSQL, played by this process and any `maumau worker`.
pub(crate) struct StoreVenue {
    store: PgStore,
    event: i64,
    owner: i64,
    /// The round being played.
    round: AtomicU32,
    /// This process's claims, by fixture index.
    claims: Mutex<HashMap<usize, EventGame>>,
    /// When to look again for a game to claim, and for results to collect.
    claiming: Backoff,
    collecting: Backoff,
    _heartbeat: Heartbeat,
}

fn store_error(e: maumau_ladder::LadderError) -> TournamentError {
    TournamentError::Venue(format!("the tournament's store: {e}"))
}

impl StoreVenue {
    /// Takes over the event of `t` whose command stopped (the same tournament, run again), with
    /// the games finished meanwhile, or else records `t` as a new event in `store` (its
    /// description, secret seed included); then renews its liveness. Returns the venue and
    /// whether the event was taken over.
    pub(crate) fn open(
        store: PgStore,
        t: &Tournament,
        programs: Option<Programs>,
    ) -> Result<(StoreVenue, bool), Box<dyn std::error::Error>> {
        let description = serde_json::to_string(&EventDescription {
            tournament: t.description(),
            programs,
        })?;
        let (event, resumed) = match store.take_over_event(&description, VERSION, lease_ms())? {
            Some(event) => (event, true),
            None => (
                store.create_event(&description, t.record_replays, VERSION, lease_ms())?,
                false,
            ),
        };
        let owner = owner_id();
        let venue = StoreVenue {
            _heartbeat: Heartbeat::start(store.clone(), owner, Some(event)),
            store,
            event,
            owner,
            round: AtomicU32::new(0),
            claims: Mutex::new(HashMap::new()),
            claiming: Backoff::new(),
            collecting: Backoff::new(),
        };
        Ok((venue, resumed))
    }

    /// The event's id.
    pub(crate) fn event(&self) -> i64 {
        self.event
    }

    /// Marks the event finished: workers stop looking at it.
    pub(crate) fn finish(&self) -> Result<(), Box<dyn std::error::Error>> {
        Ok(self.store.finish_event(self.event)?)
    }

    /// The statements and transactions this process sent to the store for the event.
    pub(crate) fn statements_line(&self) -> String {
        statements_line(&self.store)
    }
}

impl Venue for StoreVenue {
    fn open_round(
        &self,
        round: u32,
        fixtures: &[Fixture],
        todo: &[usize],
    ) -> Result<(), TournamentError> {
        self.round.store(round, Ordering::SeqCst);
        // New games: claim them at once.
        self.claiming.hit();
        self.collecting.hit();
        let games: Vec<_> = todo
            .iter()
            .map(|&i| {
                let f = &fixtures[i];
                (i, f.id.as_str(), f.seed, f.seats.as_slice())
            })
            .collect();
        self.store
            .add_event_games(self.event, round, &games)
            .map_err(store_error)
    }

    fn claim(&self) -> Result<Claim, TournamentError> {
        if !self.claiming.take_turn() {
            return Ok(Claim::Later);
        }
        let game = self
            .store
            .claim_event_game(self.owner, VERSION, Some(self.event), lease_ms())
            .map_err(store_error)?;
        Ok(match game {
            // Rounds are released one at a time: a claim is always of the round being played.
            Some(g) => {
                self.claiming.hit();
                let index = g.index;
                self.claims
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(index, g);
                Claim::Play(index)
            }
            None => {
                self.claiming.miss();
                Claim::Later
            }
        })
    }

    fn commit(&self, index: usize, played: &Played) -> Result<bool, TournamentError> {
        let game = self
            .claims
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&index);
        let Some(game) = game else {
            return Ok(false);
        };
        self.store
            .commit_event_game(
                &game,
                self.owner,
                &record_text(&played.record),
                played.replay.as_deref(),
            )
            .map_err(store_error)
    }

    fn collect(&self, wanted: &[usize]) -> Result<Vec<(usize, Played)>, TournamentError> {
        if !self.collecting.take_turn() {
            return Ok(Vec::new());
        }
        let round = self.round.load(Ordering::SeqCst);
        let done = self
            .store
            .done_event_games(self.event, round, wanted)
            .map_err(store_error)?;
        if done.is_empty() {
            self.collecting.miss();
        } else {
            self.collecting.hit();
        }
        done.into_iter()
            .map(|(i, record, replay)| {
                let record: GameRecord = serde_json::from_str(&record).map_err(|e| {
                    TournamentError::Venue(format!("a stored result does not parse: {e}"))
                })?;
                Ok((
                    i,
                    Played {
                        record,
                        replay,
                        notices: Vec::new(),
                    },
                ))
            })
            .collect()
    }

    fn poll_every(&self) -> Option<Duration> {
        Some(POLL_EVERY)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Idle callers take turns, one per period that doubles up to the most; a hit frees them all.
    #[test]
    fn idle_callers_take_turns_and_a_hit_frees_them() {
        let b = Backoff::new();
        assert!(b.take_turn() && b.take_turn(), "anyone may ask at first");
        b.miss();
        assert!(
            !b.take_turn(),
            "after a miss, nobody until the period has passed"
        );
        let period = |b: &Backoff| b.lock().period;
        assert_eq!(period(&b), POLL_EVERY * 2);
        for _ in 0..10 {
            b.miss();
        }
        assert_eq!(period(&b), POLL_AT_MOST);
        // A turn that is due goes to one caller only.
        b.lock().not_before = Instant::now();
        assert!(b.take_turn());
        assert!(!b.take_turn());
        b.hit();
        assert!(b.take_turn() && b.take_turn() && b.take_turn());
        assert_eq!(period(&b), POLL_EVERY);
    }

    /// An event of built-in entrants records the tournament's description alone (as before
    /// workers played programs); one with programs adds how they run, and both read back.
    #[test]
    fn an_event_description_records_how_its_programs_run() {
        let mut t = Tournament::new(
            maumau_tournament::Entrant::parse_list("random,heuristic").unwrap(),
            maumau_engine::MatchConfig::new(maumau_engine::ProfileId::Classic, 2),
        );
        t.seed = 11;
        let plain = EventDescription {
            tournament: t.description(),
            programs: None,
        };
        let text = serde_json::to_string(&plain).unwrap();
        assert_eq!(text, serde_json::to_string(&t.description()).unwrap());
        let event = |description: String| EventInfo {
            id: 1,
            description,
            replays: true,
            version: VERSION.into(),
            state: maumau_ladder::store::EventState::Running,
            coordinated: true,
        };
        assert!(event_tournament(&event(text)).unwrap().1.is_none());
        t.entrants
            .push(maumau_tournament::Entrant::parse("mine=cmd:./bot").unwrap());
        let programs = Programs {
            decision_ms: 2000,
            grace_ms: 300,
            sandbox: Some(crate::sandbox::SandboxSettings {
                memory_mb: 256,
                pids: 64,
                open_files: 256,
                cpu_secs: 600,
                tmp_mb: 64,
                bind: vec!["bots".into()],
            }),
        };
        let with = EventDescription {
            tournament: t.description(),
            programs: Some(programs.clone()),
        };
        let text = serde_json::to_string(&with).unwrap();
        let (back, read) = event_tournament(&event(text)).unwrap();
        assert_eq!(back.description(), t.description());
        assert_eq!(read, Some(programs));
        // Programs without their settings are refused.
        let bare = serde_json::to_string(&t.description()).unwrap();
        let err = event_tournament(&event(bare)).unwrap_err();
        assert!(err.contains("does not say how to run them"), "{err}");
    }

    #[test]
    fn an_event_of_another_version_is_refused_with_both_versions() {
        let event = EventInfo {
            id: 4,
            description: String::new(),
            replays: false,
            version: "maumau 0.0.1".into(),
            state: maumau_ladder::store::EventState::Running,
            coordinated: true,
        };
        let refusal = version_refusal(&event).unwrap();
        assert!(refusal.contains("maumau 0.0.1") && refusal.contains(VERSION));
        assert!(
            version_refusal(&EventInfo {
                version: VERSION.into(),
                ..event
            })
            .is_none()
        );
    }
}
