//! One node of a ladder shared by several server processes on one PostgreSQL store.
//!
//! Every node runs [`run`]: at once when kicked (its own messages or matches, or another node's
//! notification naming it), else every [`POLL`] if a one-statement question finds anything, it
//! sends the lobby messages it queued, takes the ones queued for the lobbies open here and
//! delivers them, claims up to
//! [`CLAIM_BATCH`] scheduled matches and hosts them (a match on its game server, invitations to the
//! seats' lobbies wherever they are, a watcher that records the end), and every [`HEARTBEAT`]
//! publishes its open lobbies and renews the leases of the matches it hosts. A match whose lease
//! was not renewed (this node stalled past [`LEASE_MS`] and the reaper settled it) has its table
//! stopped, unrecorded.
//!
//! The matchmaker (`matchmaker.rs`) runs on the one node holding the store's matchmaker lock
//! ([`lead`]): it settles orphaned matches (lease run out: aborted and retried with a new seed,
//! with a new deal seed, or voided after two retries) and tells their lobbies, then plans matches for the lobbies of
//! every live node and schedules them for the nodes to claim.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use maumau::pb;
use maumau_ladder::matchmaking::Table;
use maumau_ladder::store::Availability;
use maumau_ladder::store::{
    Claimed, Layout, MatchRecord, MatchState, NodeId, Posted, RatingCause, RatingChange,
};
use maumau_ladder::validation::ValidationNeed;
use maumau_ladder::{LadderError, MatchId, Millis, PgStore, Store as _, VersionId};
use prost::Message as _;
use rand::rngs::ChaCha20Rng;
use rand::{Rng, SeedableRng};
use tokio::sync::{Notify, watch};
use tonic::Status;

use super::matchmaker::{Launch, launch};
use super::{Hub, lock, now_ms};

/// How often the matchmaker's node plans (and others try to take its lock).
pub(super) const LEADER_TICK: Duration = Duration::from_millis(200);
/// Lobbies of a node whose heartbeat is older than this are not offered.
pub(super) const STALE_MS: Millis = maumau_ladder::store::STALE_MS;
/// A node silent this long whose liveness lock is free is dead (two heartbeats missed).
const SILENT_MS: Millis = 1_000;
/// How long a claimed match's lease lasts without renewal.
const LEASE_MS: Millis = 5_000;
/// How often a node publishes its lobbies and renews its leases.
const HEARTBEAT: Duration = Duration::from_millis(500);
/// How often a node looks for work and messages when nothing kicks it.
const POLL: Duration = Duration::from_millis(50);
/// Matches a node claims at a time.
const CLAIM_BATCH: usize = 4;
/// Lobby messages nobody took within this long are deleted.
const EVENT_TTL_MS: Millis = 120_000;

/// This node of a shared ladder.
pub(crate) struct Cluster {
    /// The store, shared with the ladder (the leases it holds are this process's).
    pub(super) pg: PgStore,
    node: NodeId,
    /// Where bots reach this node's tables.
    pub(super) address: String,
    /// Matches hosted here.
    hosted: Mutex<HashMap<MatchId, Hosted>>,
    /// Lobby messages to send through the store (kept until the store took them).
    outbox: Arc<Mutex<Vec<Posted>>>,
    /// Wakes the node's loop (messages queued, matches scheduled).
    pub(super) kick: Notify,
    left: AtomicBool,
    /// Whether the store answers (the server's health follows it).
    pub(super) available: watch::Sender<bool>,
}

/// A match this node hosts.
#[derive(Clone, Debug, Default)]
struct Hosted {
    /// The game server's id of its table, once created.
    table: Option<String>,
    /// Whether its lease was lost.
    lost: bool,
}

impl Cluster {
    pub(super) fn new(pg: PgStore, node: NodeId, address: String) -> Cluster {
        tracing::info!(node = node.0, %address, "joined the shared ladder as a node");
        let available = watch::Sender::new(true);
        let health = available.clone();
        // One line when an outage starts and one when it ends: the calls failing meanwhile are
        // counted, not logged.
        pg.on_availability(move |change| {
            match change {
                Availability::Lost { error } => tracing::warn!(
                    %error,
                    "the ladder's store is unreachable: ladder calls fail and health is \
                     NOT_SERVING until it answers"
                ),
                Availability::Back { after, failed } => tracing::info!(
                    down_ms = after.as_millis() as u64,
                    failed_calls = failed,
                    "the ladder's store answers again after {:.1} s ({failed} calls failed)",
                    after.as_secs_f64()
                ),
            }
            health.send_replace(matches!(change, Availability::Back { .. }));
        });
        Cluster {
            pg,
            node,
            address,
            hosted: Mutex::new(HashMap::new()),
            outbox: Arc::new(Mutex::new(Vec::new())),
            kick: Notify::new(),
            left: AtomicBool::new(false),
            available,
        }
    }

    /// This node's id.
    pub(super) fn node(&self) -> NodeId {
        self.node
    }

    /// Queues a message for a version's lobby, wherever it is open.
    pub(super) fn post(&self, version: VersionId, kind: pb::lobby_response::Kind) {
        self.post_all(None, vec![(version, kind)]);
    }

    /// Queues messages together; `end_of` marks them as the end messages of that match (all of
    /// them: see `PgStore::post_events`).
    pub(super) fn post_all(
        &self,
        end_of: Option<MatchId>,
        messages: Vec<(VersionId, pb::lobby_response::Kind)>,
    ) {
        let mut outbox = lock(&self.outbox);
        // A match's end queued here already (the reaper's, then the same end found untold)
        // goes once: the first telling.
        if end_of.is_some() && outbox.iter().any(|p| p.end_of == end_of) {
            return;
        }
        outbox.extend(messages.into_iter().map(|(version, kind)| Posted {
            version,
            payload: pb::LobbyResponse { kind: Some(kind) }.encode_to_vec(),
            end_of,
        }));
        drop(outbox);
        self.kick.notify_one();
    }

    /// Whether this node lost the lease of a match it hosts.
    pub(super) fn lost(&self, id: MatchId) -> bool {
        lock(&self.hosted).get(&id).is_some_and(|h| h.lost)
    }

    /// The game server created the table of a match this node hosts.
    pub(super) fn hosting(&self, id: MatchId, table: &str) {
        if let Some(h) = lock(&self.hosted).get_mut(&id) {
            h.table = Some(table.to_string());
        }
    }

    /// This node no longer hosts the match (its end is recorded, or it never got a table).
    pub(super) fn unhost(&self, id: MatchId) {
        lock(&self.hosted).remove(&id);
        self.pg.release_lease(id);
    }

    /// Leaves the shared ladder (the server stopped): its lobbies are no longer offered; closes
    /// the store's connections.
    pub(super) async fn leave(&self) {
        if self.left.swap(true, Ordering::SeqCst) {
            return;
        }
        let pg = self.pg.clone();
        let node = self.node;
        let _ = tokio::task::spawn_blocking(move || {
            if let Err(e) = pg.leave_node(node) {
                tracing::warn!(error = %e, "could not leave the shared ladder");
            }
            pg.close();
        })
        .await;
    }
}

/// The table of a stored match: its seats (a validation match: copies of its version beside
/// built-in bots, as laid out when it was scheduled).
fn launch_of(hub: &Hub, record: &MatchRecord, layout: Layout) -> Launch {
    if record.rated {
        Launch::rated(
            record.id,
            Table {
                profile: record.profile.clone(),
                seats: record.seats.iter().map(|s| s.version).collect(),
                seed: record.seed,
            },
            // House bots are played by the node hosting the table (every node runs the same
            // `--house-bots`).
            |v| hub.house.iter().find(|h| h.version == v).map(|h| h.kind),
        )
    } else {
        let version = record.seats.first().map_or(VersionId(0), |s| s.version);
        Launch::validation(
            record.id,
            &ValidationNeed {
                version,
                profile: record.profile.clone(),
                seats: layout.table_seats,
                copies: layout.copies,
            },
            record.seed,
        )
    }
}

/// Takes or keeps the matchmaker's lock; while held, settles orphaned matches and tells their
/// lobbies. Returns whether this node runs the matchmaker.
pub(super) async fn lead(hub: &Arc<Hub>) -> Result<bool, Status> {
    let Some(c) = &hub.cluster else {
        return Ok(false);
    };
    let pg = c.pg.clone();
    // A retry's deal seed comes from the hub's cryptographic generator, like every deal seed:
    // nothing about it follows from the orphan's seed.
    let deals = Mutex::new(ChaCha20Rng::seed_from_u64(hub.next_seed()));
    let reseed = move |_: u64, _: i32| lock(&deals).next_u64();
    let (leading, buried, reaped, untold) = hub
        .store(move |_| {
            if !pg.try_lead()? {
                return Ok((false, Vec::new(), Vec::new(), Vec::new()));
            }
            let buried = pg.bury_dead_nodes(SILENT_MS)?;
            let now = now_ms();
            let reaped = pg.reap(now, reseed)?;
            let mut untold = Vec::new();
            for (record, layout) in pg.untold_ends(LEASE_MS)? {
                let changes: Vec<RatingChange> = pg
                    .rating_events(record.season)?
                    .into_iter()
                    .filter(|e| e.match_id == Some(record.id) && e.cause == RatingCause::Match)
                    .map(|e| e.change)
                    .collect();
                untold.push((record, layout, changes));
            }
            pg.purge_events(EVENT_TTL_MS)?;
            Ok((true, buried, reaped, untold))
        })
        .await?;
    for node in &buried {
        tracing::warn!(
            node = node.0,
            "a ladder node died (its session ended): its lobbies are no longer offered and its \
             matches are settled now"
        );
    }
    let now = now_ms();
    for r in &reaped {
        let lag = r.record.started_ms.unwrap_or(r.record.created_ms);
        tracing::warn!(
            ladder_match = %r.record.id,
            node = r.node.0,
            retry = ?r.retry.map(|m| m.0),
            voided = r.voided,
            ms_since_start = now - lag,
            "settled a ladder match whose node stopped hosting it"
        );
        let reason = match r.retry {
            Some(new) => format!(
                "the node hosting it (node {}) stopped; retried as ladder match {new}",
                r.node.0
            ),
            None if r.voided => format!(
                "the node hosting it (node {}) stopped; voided after its retries",
                r.node.0
            ),
            None => format!(
                "the node hosting it (node {}) stopped; not retried: a seat's lobby went away \
                 with it",
                r.node.0
            ),
        };
        let l = launch_of(hub, &r.record, r.layout);
        let ended = l
            .version_seats()
            .into_iter()
            .map(|(seat, v)| {
                let end = pb::LadderMatchEnded {
                    ladder_match_id: r.record.id.0,
                    match_id: String::new(),
                    finished: false,
                    rated: false,
                    placing: 0,
                    rating: None,
                    reason: reason.clone(),
                    seat: seat as u32,
                    validation: !r.record.rated,
                    profile: r.record.profile.clone(),
                };
                (v, pb::lobby_response::Kind::MatchEnded(end))
            })
            .collect();
        c.post_all(Some(r.record.id), ended);
    }
    // Ends a node recorded but did not get to tell before it died: told now, once.
    for (record, layout, changes) in untold {
        let l = launch_of(hub, &record, layout);
        tracing::warn!(ladder_match = %record.id, "told the lobbies of a match whose node died before telling them");
        let ended = l
            .version_seats()
            .into_iter()
            .map(|(seat, v)| {
                let change = changes.iter().find(|c| c.version == v);
                let end = pb::LadderMatchEnded {
                    ladder_match_id: record.id.0,
                    match_id: record.server_match_id.clone().unwrap_or_default(),
                    finished: record.state == MatchState::Finished,
                    rated: change.is_some(),
                    placing: if !record.rated {
                        0
                    } else {
                        record
                            .seats
                            .get(seat)
                            .and_then(|s| s.placing)
                            .map_or(0, u32::from)
                    },
                    rating: change.map(|c| super::service::rating_to_wire(&c.after.rating)),
                    reason: record.reason.clone().unwrap_or_default(),
                    seat: seat as u32,
                    validation: !record.rated,
                    profile: record.profile.clone(),
                };
                (v, pb::lobby_response::Kind::MatchEnded(end))
            })
            .collect();
        c.post_all(Some(record.id), ended);
    }
    if !reaped.is_empty() {
        c.kick.notify_one();
    }
    Ok(leading)
}

/// What one round of the node's loop got from the store.
#[derive(Default)]
struct Round {
    events: Vec<(VersionId, Vec<u8>)>,
    claimed: Vec<Claimed>,
    renewed: Option<Vec<MatchId>>,
}

/// The node's loop; see the module docs.
pub(super) async fn run(hub: Arc<Hub>) {
    let Some(c) = &hub.cluster else {
        return;
    };
    // What other nodes notify wakes this one at once: matches scheduled or messages for lobbies
    // open here (this node's loop), a match ended (the matchmaker, if it runs here). Messages
    // for other nodes' lobbies wake only those.
    let weak = Arc::downgrade(&hub);
    let listening = c.pg.listen(move |notice| {
        if let Some(hub) = weak.upgrade() {
            if let Some(c) = &hub.cluster
                && notice.concerns(c.node)
            {
                c.kick.notify_one();
            }
            if notice.wakes_matchmaker() {
                hub.wake.notify_one();
            }
        }
    });
    if let Err(e) = listening {
        tracing::warn!(error = %e, "cannot listen to the other ladder nodes; polling only");
    }
    let mut last_beat: Option<Instant> = None;
    // Whether this round was asked for (a notification, this node's own messages or matches, a
    // busy round before) rather than due to the poll.
    let mut asked = true;
    loop {
        if c.left.load(Ordering::SeqCst) {
            return;
        }
        let versions = hub.local_versions();
        let claim = if hub.is_closed() { 0 } else { CLAIM_BATCH };
        let beat = last_beat.is_none_or(|t| t.elapsed() >= HEARTBEAT);
        // A poll first asks whether there is anything at all (one statement): the notifications
        // bring nearly all work, and three idle nodes polling would otherwise spend more of the
        // store than the matches do.
        if !asked && !beat && lock(&c.outbox).is_empty() {
            let pg = c.pg.clone();
            let probe = versions.clone();
            let work = tokio::task::spawn_blocking(move || pg.has_work(&probe, claim > 0)).await;
            if matches!(work, Ok(Ok(false))) {
                asked = next_wake(c).await;
                continue;
            }
        }
        let outbox = std::mem::take(&mut *lock(&c.outbox));
        let lobbies = beat.then(|| hub.open_lobbies());
        let pg = c.pg.clone();
        let node = c.node;
        let queue = c.outbox.clone();
        // Each step is its own transaction, and what one did is kept when a later one fails:
        // messages it took are delivered, matches it claimed are hosted, and messages it could
        // not post are kept for the next round (a match's end is posted once whenever it goes).
        let round = tokio::task::spawn_blocking(move || {
            let mut round = Round::default();
            let steps = (|| {
                if let Err(e) = pg.post_events(&outbox) {
                    let mut kept = lock(&queue);
                    let newer = std::mem::replace(&mut *kept, outbox);
                    kept.extend(newer);
                    return Err(e);
                }
                round.events = pg.take_events(&versions)?;
                round.claimed = pg.claim(node, claim, LEASE_MS)?;
                if let Some(l) = lobbies {
                    pg.hold_node_lock(node)?;
                    round.renewed = Some(pg.heartbeat(node, &l, LEASE_MS)?);
                }
                Ok(())
            })();
            (round, steps)
        })
        .await;
        let busy = match round {
            Ok((round, steps)) => {
                if beat && round.renewed.is_some() {
                    last_beat = Some(Instant::now());
                }
                let busy = !round.events.is_empty() || !round.claimed.is_empty();
                deliver(&hub, round.events);
                if let Some(renewed) = round.renewed {
                    stop_lost(&hub, c, &renewed);
                }
                for claimed in round.claimed {
                    let l = launch_of(&hub, &claimed.record, claimed.layout);
                    lock(&c.hosted).insert(l.id, Hosted::default());
                    let _ = launch(&hub, l).await;
                }
                match steps {
                    Ok(()) => busy,
                    // An unreachable store is logged once, when the outage starts (see
                    // `Cluster::new`).
                    Err(LadderError::Unavailable(_)) => false,
                    Err(e) => {
                        tracing::warn!(error = %e, "the ladder node's round failed");
                        false
                    }
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "the ladder node's round panicked");
                false
            }
        };
        if busy {
            // More may be waiting.
            tokio::task::yield_now().await;
            asked = true;
            continue;
        }
        asked = next_wake(c).await;
    }
}

/// Waits for a kick (true: work was asked for) or the next poll (false).
async fn next_wake(c: &Cluster) -> bool {
    tokio::select! {
        () = c.kick.notified() => true,
        () = tokio::time::sleep(POLL) => false,
    }
}

/// Delivers lobby messages taken from the store to the lobbies open here.
fn deliver(hub: &Hub, events: Vec<(VersionId, Vec<u8>)>) {
    use pb::lobby_response::Kind as K;
    for (v, bytes) in events {
        let kind = match pb::LobbyResponse::decode(bytes.as_slice()) {
            Ok(pb::LobbyResponse { kind: Some(k) }) => k,
            Ok(_) => continue,
            Err(e) => {
                tracing::warn!(error = %e, "an undecodable lobby message in the store");
                continue;
            }
        };
        match kind {
            K::Invitation(ref i) => {
                // Counted either way: its match's end comes too.
                hub.invited(v);
                // An invitation whose join deadline passed (a lobby that was away, a node that
                // restarted) is for a match that is over: not delivered.
                if (i.join_deadline_unix_ms as Millis) < now_ms() {
                    tracing::debug!(version = %v, ladder_match = i.ladder_match_id, "dropped an expired invitation");
                    continue;
                }
                hub.tell_local(v, kind);
            }
            K::MatchEnded(_) => {
                hub.tell_local(v, kind);
                hub.ended(v);
            }
            other => hub.tell_local(v, other),
        }
    }
}

/// Stops the tables of hosted matches whose lease was not renewed: another node settles them.
fn stop_lost(hub: &Hub, c: &Cluster, renewed: &[MatchId]) {
    let renewed: HashSet<MatchId> = renewed.iter().copied().collect();
    let lost: Vec<(MatchId, Option<String>)> = {
        let mut hosted = lock(&c.hosted);
        hosted
            .iter_mut()
            .filter(|(id, h)| !h.lost && !renewed.contains(id))
            .map(|(id, h)| {
                h.lost = true;
                (*id, h.table.clone())
            })
            .collect()
    };
    for (id, table) in lost {
        let Some(open) = table.and_then(|t| hub.host.find_open(&t)) else {
            continue;
        };
        tracing::warn!(ladder_match = %id, "lost the lease of a ladder match; stopping its table");
        open.abort_soon("this server lost the ladder match's lease".into());
    }
}
