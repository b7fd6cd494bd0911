//! `maumau worker`: plays the games of tournaments started with `maumau tournament --store`, on
//! this machine, until stopped (with `--event`, until that event is over).
//!
//! Each of its threads claims the next unfinished game of a running event of its own version
//! under a lease, plays it in-process from its seed, and commits the result; a heartbeat renews
//! its leases. Killed, it loses nothing: its leases run out (by the database's clock) and its
//! games are played again elsewhere. See `tournament/events.rs` and the ladder store's
//! `events.rs`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use maumau_ladder::store::EventState;
use maumau_ladder::{LadderError, PgStore};
use maumau_tournament::Tournament;

use crate::tournament::events::{
    self, Backoff, Heartbeat, POLL_EVERY, VERSION, event_tournament, fixture_of, record_text,
    version_refusal,
};

/// Play the games of tournaments started with `maumau tournament --store` on this machine.
///
/// Runs until stopped (Ctrl-C, SIGTERM or SIGKILL), or with --event until that event is over: a
/// game it was playing when stopped is played again by another worker or the tournament's own
/// command once its lease runs out (10 s).
#[derive(clap::Parser)]
pub(crate) struct WorkerArgs {
    /// The PostgreSQL store the tournament was started with
    /// (`postgres://user[:password]@host[:port]/db`; TLS with `?sslmode=require` or
    /// `verify-full`).
    #[arg(long, value_name = "URL")]
    store: String,
    /// Play only the games of this event (its id, printed by `maumau tournament --store`), and
    /// stop once it is over [default: of every running event, until stopped].
    #[arg(long, value_name = "ID")]
    event: Option<i64>,
    /// Games played at once [default: every core].
    #[arg(long)]
    threads: Option<usize>,
}

/// Runs a worker until the process is stopped (or the store fails).
pub(crate) fn worker(args: &WorkerArgs) -> Result<(), Box<dyn std::error::Error>> {
    let store = events::open_store(&args.store)?;
    if let Some(id) = args.event {
        let event = store
            .event(id)?
            .ok_or_else(|| format!("--event {id}: there is no event {id} in the store"))?;
        if let Some(refusal) = version_refusal(&event) {
            return Err(refusal.into());
        }
        event_tournament(&event)?;
    }
    let owner = events::owner_id();
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    eprintln!(
        "maumau worker: worker {owner} ({VERSION}) plays {} on {threads} threads; stop it any \
         time",
        match args.event {
            Some(id) => format!("the games of event {id}"),
            None => "the games of every running event".to_string(),
        }
    );
    let _heartbeat = Heartbeat::start(store.clone(), owner, None);
    let shared = Shared {
        store,
        owner,
        event: args.event,
        tournaments: Mutex::new(HashMap::new()),
        refused: Mutex::new(HashSet::new()),
        stop: AtomicBool::new(false),
        claiming: Backoff::new(),
    };
    let played: u64 = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let played = shared.play_games();
                    if played.is_err() {
                        // The first thread to fail ends the worker.
                        shared.stop.store(true, Ordering::Relaxed);
                    }
                    played
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a worker thread panicked".into()))
            })
            .sum::<Result<u64, String>>()
    })?;
    eprintln!(
        "maumau worker: event {} is over; {played} games played here; {}",
        args.event.unwrap_or_default(),
        events::statements_line(&shared.store)
    );
    Ok(())
}

/// How long a worker waits before asking a store that did not answer again.
const OUTAGE_RETRY: Duration = Duration::from_secs(1);

/// Whether the store may answer the same call later (it is down, or every connection was busy).
fn transient(e: &LadderError) -> bool {
    matches!(e, LadderError::Unavailable(_) | LadderError::Busy(_))
}

/// What the worker's threads share.
struct Shared {
    store: PgStore,
    owner: i64,
    event: Option<i64>,
    /// Each event's tournament, rebuilt once from its description.
    tournaments: Mutex<HashMap<i64, Arc<Tournament>>>,
    /// Events of another version already refused (each is said once).
    refused: Mutex<HashSet<i64>>,
    /// Set when a thread failed: the others stop too.
    stop: AtomicBool,
    /// When an idle worker looks again for a game.
    claiming: Backoff,
}

impl Shared {
    /// Claims, plays and commits games until the store refuses (a store that does not answer
    /// for a while is waited for), another thread failed, or, with `--event`, the event is
    /// over; returns how many games it played and committed.
    fn play_games(&self) -> Result<u64, String> {
        let mut played = 0;
        while !self.stop.load(Ordering::Relaxed) {
            if !self.claiming.take_turn() {
                std::thread::sleep(POLL_EVERY);
                continue;
            }
            let claimed =
                self.store
                    .claim_event_game(self.owner, VERSION, self.event, events::lease_ms());
            let claimed = match claimed {
                Ok(c) => c,
                Err(e) if transient(&e) => {
                    eprintln!("maumau worker: the store does not answer ({e}); trying again");
                    std::thread::sleep(OUTAGE_RETRY);
                    continue;
                }
                Err(e) => return Err(format!("the store: {e}")),
            };
            let Some(game) = claimed else {
                self.claiming.miss();
                if self.event_finished()? {
                    return Ok(played);
                }
                self.refuse_other_versions()?;
                std::thread::sleep(POLL_EVERY);
                continue;
            };
            self.claiming.hit();
            let t = self.tournament(game.event)?;
            let game_played = t.play_fixture(&fixture_of(&game));
            // A claim lost meanwhile (this worker stalled past its lease) keeps nothing: the
            // game's new player commits it. A result the store did not take is played again
            // once its lease runs out.
            let committed = self.store.commit_event_game(
                &game,
                self.owner,
                &record_text(&game_played.record),
                game_played.replay.as_deref(),
            );
            match committed {
                Ok(kept) => played += u64::from(kept),
                Err(e) if transient(&e) => eprintln!(
                    "maumau worker: the store did not take the result of {} ({e}); it will \
                     be played again",
                    game.fixture
                ),
                Err(e) => return Err(format!("the store: {e}")),
            }
        }
        Ok(played)
    }

    /// The tournament of `event`, rebuilt from its description the first time.
    fn tournament(&self, event: i64) -> Result<Arc<Tournament>, String> {
        if let Some(t) = self
            .tournaments
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&event)
        {
            return Ok(t.clone());
        }
        let info = self
            .store
            .event(event)
            .map_err(|e| format!("the store: {e}"))?
            .ok_or_else(|| format!("event {event} is gone from the store"))?;
        let t = Arc::new(event_tournament(&info)?);
        let mut known = self
            .tournaments
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if known.insert(event, t.clone()).is_none() {
            eprintln!(
                "maumau worker: playing games of event {event}: {} entrants, {} at {} seats",
                t.entrants.len(),
                t.config.profile,
                t.config.seats
            );
        }
        Ok(t)
    }

    /// Whether the one event this worker plays (`--event`) is over: then it has nothing left to
    /// do.
    fn event_finished(&self) -> Result<bool, String> {
        let Some(id) = self.event else {
            return Ok(false);
        };
        let event = self
            .store
            .event(id)
            .map_err(|e| format!("the store: {e}"))?;
        Ok(event.is_none_or(|e| e.state == EventState::Finished))
    }

    /// Says once of each running event of another version that this worker plays none of its
    /// games (an idle worker would otherwise look broken).
    fn refuse_other_versions(&self) -> Result<(), String> {
        let running = self
            .store
            .running_events()
            .map_err(|e| format!("the store: {e}"))?;
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        for event in running {
            if self.event.is_none_or(|id| id == event.id)
                && let Some(refusal) = version_refusal(&event)
                && refused.insert(event.id)
            {
                eprintln!("maumau worker: {refusal}");
            }
        }
        Ok(())
    }
}
