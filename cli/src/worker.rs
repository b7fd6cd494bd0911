//! `maumau worker`: plays the games of tournaments started with `maumau tournament --store`, on
//! this machine, until stopped (with `--event`, until that event is over).
//!
//! Each of its threads claims the next unfinished game of a running event of its own version
//! under a lease, plays it from its seed, and commits the result; a heartbeat renews its leases.
//! Killed, it loses nothing: its leases run out (by the database's clock) and its games are
//! played again elsewhere. See `tournament/events.rs` and the ladder store's `events.rs`.
//!
//! Built-in entrants play in-process. For an event with external programs (`cmd:`, `lobby:`)
//! the worker starts a game server of its own on 127.0.0.1 (with an operator token nobody
//! sees) and plays those games there as `maumau tournament` does on one machine: `cmd:`
//! programs launched per match, `lobby:` programs launched once and invited to each match,
//! closed when the event is over; in the sandbox the event asks for (a worker that cannot make
//! it plays none of the event's games). A program gets what it gets on one machine, never the
//! store's URL or the event's seed: the arena's own variables are not passed on (see
//! `maumau_tournament::net`), and with duplicate deals its games are sealed until the store
//! says every game of their deal is in ([`Shared::reveal_due`]).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Instant;

use maumau_ladder::store::{EventInfo, EventState};
use maumau_ladder::{LadderError, PgStore};
use maumau_tournament::{Entrant, FixturePlayer, Remote, Tournament};

use crate::tournament::events::{
    self, Backoff, Heartbeat, POLL_EVERY, VERSION, event_tournament, fixture_of, record_text,
    version_refusal,
};
use crate::tournament::local::LocalServer;

/// Play the games of tournaments started with `maumau tournament --store` on this machine.
///
/// Runs until stopped (Ctrl-C, SIGTERM or SIGKILL), or with --event until that event is over: a
/// game it was playing when stopped is played again by another worker or the tournament's own
/// command once its lease runs out (10 s).
#[derive(clap::Parser)]
pub(crate) struct WorkerArgs {
    /// The PostgreSQL store the tournament was started with
    /// (`postgres://user[:password]@host[:port]/db`; TLS with `?sslmode=require` or
    /// `verify-full`). In MAUMAU_STORE it stays off the command line, which every user of the
    /// machine can read; no program this worker launches gets it.
    #[arg(long, value_name = "URL", env = "MAUMAU_STORE", hide_env_values = true)]
    store: String,
    /// Play only the games of this event (its id, printed by `maumau tournament --store`), and
    /// stop once it is over [default: of every running event, until stopped].
    #[arg(long, value_name = "ID")]
    event: Option<i64>,
    /// Games played at once [default: every core].
    #[arg(long)]
    threads: Option<usize>,
    /// Write the output of the external programs launched here to this folder (a folder
    /// `event-ID` per event, files named as in a tournament's `logs/`) [default: kept only for
    /// the notices this worker prints].
    #[arg(long, value_name = "DIR")]
    logs: Option<PathBuf>,
}

/// Runs a worker until the process is stopped (or the store fails).
pub(crate) fn worker(args: &WorkerArgs) -> Result<(), Box<dyn std::error::Error>> {
    let store = events::open_store(&args.store)?;
    let owner = events::owner_id();
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        .max(1);
    let event = match args.event {
        Some(id) => {
            let event = store
                .event(id)?
                .ok_or_else(|| format!("--event {id}: there is no event {id} in the store"))?;
            if let Some(refusal) = version_refusal(&event) {
                return Err(refusal.into());
            }
            Some(event)
        }
        None => None,
    };
    // The first line, which says who this worker is (its owner id in the store).
    eprintln!(
        "maumau worker: worker {owner} ({VERSION}) plays {} on {threads} threads; stop it any \
         time",
        match args.event {
            Some(id) => format!("the games of event {id}"),
            None => "the games of every running event".to_string(),
        }
    );
    let mut ready = HashMap::new();
    if let Some(event) = event {
        // Refused at once when this machine cannot play it (no sandbox, say).
        let play = EventPlay::open(&event, threads, args.logs.as_deref())?;
        ready.insert(event.id, Arc::new(play));
    }
    let _heartbeat = Heartbeat::start(store.clone(), owner, None);
    let shared = Shared {
        store,
        owner,
        event: args.event,
        threads,
        logs: args.logs.clone(),
        events: Mutex::new(ready),
        refused: Mutex::new(HashSet::new()),
        unplayable: Mutex::new(Vec::new()),
        opening: Mutex::new(()),
        stop: AtomicBool::new(false),
        claiming: Backoff::new(),
        reveal_due: Mutex::new(Instant::now()),
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
    // Lobby programs closed, servers stopped.
    let open: Vec<_> = shared
        .events
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .drain()
        .collect();
    drop(open);
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

/// How often a worker with sealed matches asks the store whether their deals are over.
const REVEAL_EVERY: Duration = Duration::from_secs(1);

/// What the worker's threads share.
struct Shared {
    store: PgStore,
    owner: i64,
    event: Option<i64>,
    /// Games played at once (also the threads of an event's connection to its server).
    threads: usize,
    /// Where the programs' output goes (`--logs`).
    logs: Option<PathBuf>,
    /// Each event being played here: its tournament, rebuilt once from its description, and
    /// what plays its games.
    events: Mutex<HashMap<i64, Arc<EventPlay>>>,
    /// Events of another version already refused (each is said once).
    refused: Mutex<HashSet<i64>>,
    /// Events this machine cannot play (said once each): their games are left to others.
    unplayable: Mutex<Vec<i64>>,
    /// Held while an event is opened, so that it is opened once.
    opening: Mutex<()>,
    /// Set when a thread failed: the others stop too.
    stop: AtomicBool,
    /// When an idle worker looks again for a game.
    claiming: Backoff,
    /// When to ask the store next whether the deals of this worker's sealed matches are over.
    reveal_due: Mutex<Instant>,
}

/// One event as this worker plays it: its tournament and what plays its games; with external
/// programs, the game server they play on (started for the event, stopped with it) and the
/// lobby programs. Dropped once the event is over (or this worker stops): the lobby programs are
/// closed and the server stopped.
struct EventPlay {
    t: Tournament,
    player: Option<FixturePlayer>,
    server: Option<LocalServer>,
    /// The server's data (its matches), deleted with it.
    _data: Option<tempfile::TempDir>,
}

impl EventPlay {
    /// Ready to play the games of `event`, or why this machine cannot (its description does
    /// not parse, it asks for a sandbox this machine cannot make, its server cannot start).
    fn open(event: &EventInfo, threads: usize, logs: Option<&Path>) -> Result<EventPlay, String> {
        let (mut t, programs) = event_tournament(event)?;
        t.threads = threads;
        let logs_root = logs;
        let logs = logs.map(|d| d.join(format!("event-{}", event.id)));
        let (mut server, mut data) = (None, None);
        if let Some(programs) = programs.filter(|_| t.entrants.iter().any(Entrant::is_external)) {
            let why =
                |what: &str, e: &dyn std::fmt::Display| format!("event {}: {what}: {e}", event.id);
            let dir = tempfile::Builder::new()
                .prefix("maumau-worker-")
                .tempdir()
                .map_err(|e| why("cannot make a folder for its server", &e))?;
            // No program may see the server's records (every game's seed) or the logs (of any
            // event).
            let mut hidden = vec![dir.path()];
            hidden.extend(logs_root);
            t.sandbox = match &programs.sandbox {
                Some(settings) => Some(settings.build(&hidden).map_err(|e| {
                    why(
                        "its programs run in a sandbox, which this machine cannot make",
                        &e,
                    )
                })?),
                None => None,
            };
            // An operator token of its own, never shown: the programs cannot create, abort or
            // reveal matches on it (see `maumau tournament`'s own server).
            let token = format!(
                "{:016x}{:016x}",
                maumau_tournament::schedule::random_seed(),
                maumau_tournament::schedule::random_seed()
            );
            let clock = programs.clock();
            let local = LocalServer::start(
                SocketAddr::from(([127, 0, 0, 1], 0)),
                dir.path().join("server"),
                clock.disconnect_grace,
                Some(token.clone()),
            )
            .map_err(|e| why("cannot start its game server", &e))?;
            t.server = Some(Remote {
                addr: local.addr().to_string(),
                operator_token: Some(token),
                clock,
                every_game: false,
            });
            (server, data) = (Some(local), Some(dir));
        }
        let player = FixturePlayer::start(&t, logs.as_deref())
            .map_err(|e| format!("event {}: {e}", event.id))?;
        Ok(EventPlay {
            t,
            player: Some(player),
            server,
            _data: data,
        })
    }
}

impl Drop for EventPlay {
    fn drop(&mut self) {
        if let Some(player) = self.player.take() {
            for notice in player.finish() {
                eprintln!("maumau worker: {notice}");
            }
        }
        if let Some(server) = self.server.take() {
            server.stop();
        }
    }
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
            self.reveal_over_deals()?;
            let unplayable = self
                .unplayable
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone();
            let claimed = self.store.claim_event_game_except(
                self.owner,
                VERSION,
                self.event,
                &unplayable,
                events::lease_ms(),
            );
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
            let played_here = match self.event_play(game.event)? {
                Some(event) => match event.player.as_ref() {
                    Some(player) => player.play(&event.t, &fixture_of(&game)).map_err(|e| {
                        format!(
                            "game {} of event {}: {e}; it will be played again",
                            game.fixture, game.event
                        )
                    }),
                    None => Err(String::new()),
                },
                // Said already: this machine cannot play the event.
                None => Err(String::new()),
            };
            let game_played = match played_here {
                Ok(p) => p,
                Err(why) => {
                    // Given back at once (else the heartbeat would keep renewing its lease).
                    if !why.is_empty() {
                        eprintln!("maumau worker: {why}");
                        std::thread::sleep(OUTAGE_RETRY);
                    }
                    if let Err(e) = self.store.release_event_game(&game, self.owner) {
                        eprintln!(
                            "maumau worker: cannot give game {} back ({e}); it is played \
                             again once its lease runs out",
                            game.fixture
                        );
                    }
                    continue;
                }
            };
            for notice in &game_played.notices {
                eprintln!("maumau worker: event {}: {notice}", game.event);
            }
            // A claim lost meanwhile (this worker stalled past its lease) keeps nothing: the
            // game's new player commits it. A store that does not answer is waited out (the
            // heartbeat, which renews this worker's claims, cannot reach it either, so the game
            // is played again elsewhere if the wait outlasts the lease: the commit then keeps
            // nothing).
            let record = record_text(&game_played.record);
            loop {
                let committed = self.store.commit_event_game(
                    &game,
                    self.owner,
                    &record,
                    game_played.replay.as_deref(),
                );
                match committed {
                    Ok(kept) => played += u64::from(kept),
                    Err(e) if transient(&e) && !self.stop.load(Ordering::Relaxed) => {
                        eprintln!(
                            "maumau worker: the store did not take the result of {} ({e}); \
                             trying again",
                            game.fixture
                        );
                        std::thread::sleep(OUTAGE_RETRY);
                        continue;
                    }
                    Err(e) => return Err(format!("the store: {e}")),
                }
                break;
            }
        }
        Ok(played)
    }

    /// How `event` is played here, made from its description the first time; `None` when this
    /// machine cannot play it (said once; its games are left to others from then on).
    fn event_play(&self, event: i64) -> Result<Option<Arc<EventPlay>>, String> {
        if let Some(e) = self
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&event)
        {
            return Ok(Some(e.clone()));
        }
        // One thread opens an event (its server, its lobby programs); the others wait for it.
        let _opening = self.opening.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(e) = self
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&event)
        {
            return Ok(Some(e.clone()));
        }
        let info = self
            .store
            .event(event)
            .map_err(|e| format!("the store: {e}"))?
            .ok_or_else(|| format!("event {event} is gone from the store"))?;
        let play = match EventPlay::open(&info, self.threads, self.logs.as_deref()) {
            Ok(p) => Arc::new(p),
            Err(why) => {
                eprintln!("maumau worker: {why}; this machine plays none of its games");
                self.unplayable
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(event);
                return Ok(None);
            }
        };
        let mut known = self.events.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = known.entry(event).or_insert_with(|| {
            let t = &play.t;
            eprintln!(
                "maumau worker: playing games of event {event}: {} entrants, {} at {} seats{}",
                t.entrants.len(),
                t.config.profile,
                t.config.seats,
                match (&play.server, &t.sandbox) {
                    (Some(s), Some(_)) => format!(
                        "; its programs play on {} here, each in a sandbox",
                        s.addr()
                    ),
                    (Some(s), None) => format!("; its programs play on {} here", s.addr()),
                    (None, _) => String::new(),
                }
            );
            play.clone()
        });
        Ok(Some(entry.clone()))
    }

    /// Reveals the sealed matches played here whose deals are over (every game of the deal is
    /// in the store, wherever it was played), at most every [`REVEAL_EVERY`]: a duplicate deal's
    /// seed reaches its seats once none of them has a game of it left to play, as on one
    /// machine.
    fn reveal_over_deals(&self) -> Result<(), String> {
        {
            let mut due = self
                .reveal_due
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if Instant::now() < *due {
                return Ok(());
            }
            *due = Instant::now() + REVEAL_EVERY;
        }
        let open: Vec<(i64, Arc<EventPlay>)> = self
            .events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(id, e)| (*id, e.clone()))
            .collect();
        for (id, event) in open {
            let Some(player) = event.player.as_ref() else {
                continue;
            };
            let sealed = player.sealed_deals();
            if sealed.is_empty() {
                continue;
            }
            let over = match self.store.finished_event_deals(id, &sealed) {
                Ok(over) => over,
                Err(e) if transient(&e) => continue,
                Err(e) => return Err(format!("the store: {e}")),
            };
            for notice in player.reveal(&over) {
                eprintln!("maumau worker: event {id}: {notice}");
            }
        }
        Ok(())
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
        // Events no longer running (over, or their command stopped): their lobby programs are
        // closed and their servers stopped once no thread plays a game of them.
        let gone: Vec<Arc<EventPlay>> = {
            let mut known = self.events.lock().unwrap_or_else(PoisonError::into_inner);
            let ids: Vec<i64> = known
                .keys()
                .copied()
                .filter(|id| running.iter().all(|e| e.id != *id))
                .collect();
            ids.iter().filter_map(|id| known.remove(id)).collect()
        };
        drop(gone);
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
