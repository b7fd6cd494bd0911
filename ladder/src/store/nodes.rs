//! Several server nodes on one PostgreSQL ladder: what [`PgStore`] adds for them.
//!
//! - **Nodes.** Each server process joins with [`PgStore::join_node`] (a row in `nodes` with the
//!   address its invitations carry) and calls [`PgStore::heartbeat`] every second or so: it
//!   rewrites the node's open lobbies (`node_lobbies`) and renews the leases of the matches it
//!   hosts. The lobbies of nodes whose heartbeat is older than a few seconds are not offered.
//!   Each node also holds a liveness lock (a session-level advisory lock keyed by its id,
//!   [`PgStore::hold_node_lock`]): PostgreSQL releases it when the process dies, so the
//!   matchmaker's node tells a dead node (silent, lock free) from a slow one (silent, lock held)
//!   within a second and settles its matches at once ([`PgStore::bury_dead_nodes`]).
//! - **One matchmaker.** [`PgStore::try_lead`] takes a session-level advisory lock on a
//!   connection of its own; whoever holds it plans matches for the lobbies of every live node
//!   ([`PgStore::shared_lobbies`]) and schedules them ([`PgStore::schedule_laid_out`]). A node
//!   that dies closes its session, which releases the lock for the next.
//! - **The matches table is the work queue.** Nodes claim scheduled matches with
//!   `SELECT ... FOR UPDATE SKIP LOCKED` ([`PgStore::claim`]), which sets `lease_owner`,
//!   `lease_epoch` and `lease_expires_ms`. The end of a match is recorded (result, rating events
//!   and history in one transaction) only while `lease_owner` and `lease_epoch` are still the ones
//!   this process claimed (the store's `finish_match`, `abort_match` and `finish_validation` check
//!   it after locking the row).
//! - **Orphans.** A match whose lease expired (its node died or stalled) is settled by the
//!   matchmaker ([`PgStore::reap`]): aborted, nobody at fault, and scheduled again with a new seed
//!   (at most [`MAX_RETRIES`] times), or voided after that. Both happen in one transaction that
//!   locks the row and checks the lease is still expired, so a late finish and the reaper never
//!   both succeed: no match is rated twice and none is lost.
//! - **Lobby messages.** Invitations and match ends are written to `lobby_events` for the version;
//!   the node where its lobby is open takes them ([`PgStore::take_events`]).
//!
//! Every time that decides liveness (heartbeats, lease expiries, the age of lobby messages) is
//! the database's clock (`db_now!`), never a node's: nodes whose clocks disagree by seconds
//! still agree on which leases ran out. The `now` some methods take only stamps the records they
//! write (when a match ended or was scheduled), as every other store method does.

use std::sync::PoisonError;
use std::sync::atomic::Ordering;

use postgres::Transaction;

use super::postgres::{MATCHMAKER_LOCK, PgTx};
use super::rules;
use super::sql::{abort_in, load_match, schedule_in};
use super::{MatchRecord, MatchState, NewMatch, PgStore};
use crate::error::{LadderError, Result};
use crate::health::SeatOutcome;
use crate::ids::{MatchId, Millis, VersionId};
use crate::matchmaking::Lobby;

/// The first key of a node's liveness lock (the second is the node's id): one per schema, apart
/// from the matchmaker's.
macro_rules! node_lock_space {
    () => {
        "hashtext(current_schema() || ':node')"
    };
}

/// The channel the nodes of one ladder (one schema) notify each other on, as SQL text.
macro_rules! notify_channel {
    () => {
        "'maumau_' || md5(current_schema())"
    };
}

/// Times a match whose node died is scheduled again before it is voided.
pub const MAX_RETRIES: i32 = 2;

/// A node whose heartbeat is older than this (by the database's clock) is not live: its lobbies
/// are not offered, and a match is not retried for a version whose only lobby was there.
pub const STALE_MS: Millis = 3_000;

/// What a node tells the others through PostgreSQL's notifications (see [`PgStore::listen`]).
///
/// On the wire (the notification's payload): `scheduled`, `messages` or `ended`, the last two
/// followed by `:` and the ids of the nodes whose lobbies the messages are for (`messages:1,3`),
/// so that only those nodes look for them. A payload this build does not know (a newer node's)
/// reads as [`Notice::Other`], which every node acts on: a node never misses work it cannot
/// read about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Matches were scheduled: any node may claim them.
    Scheduled,
    /// Lobby messages were queued for lobbies on these nodes (none named: wherever they are).
    Messages(Vec<NodeId>),
    /// As `Messages`, and they tell of a match's end: the matchmaker plans again.
    Ended(Vec<NodeId>),
    /// A payload this build does not know.
    Other(String),
}

impl Notice {
    /// Reads a notification's payload.
    pub fn parse(payload: &str) -> Notice {
        let (what, to) = payload.split_once(':').unwrap_or((payload, ""));
        let nodes: Option<Vec<NodeId>> = to
            .split(',')
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().ok().map(NodeId))
            .collect();
        match (what, nodes) {
            ("scheduled", Some(n)) if n.is_empty() => Notice::Scheduled,
            ("messages", Some(n)) => Notice::Messages(n),
            ("ended", Some(n)) => Notice::Ended(n),
            _ => Notice::Other(payload.to_string()),
        }
    }

    /// The payload [`Notice::parse`] reads back.
    pub fn payload(&self) -> String {
        let to = |what: &str, nodes: &[NodeId]| {
            let ids: Vec<String> = nodes.iter().map(|n| n.0.to_string()).collect();
            if ids.is_empty() {
                what.to_string()
            } else {
                format!("{what}:{}", ids.join(","))
            }
        };
        match self {
            Notice::Scheduled => "scheduled".into(),
            Notice::Messages(n) => to("messages", n),
            Notice::Ended(n) => to("ended", n),
            Notice::Other(p) => p.clone(),
        }
    }

    /// Whether `node` has something to take: matches to claim or messages for its lobbies.
    pub fn concerns(&self, node: NodeId) -> bool {
        match self {
            Notice::Messages(n) | Notice::Ended(n) => n.is_empty() || n.contains(&node),
            Notice::Scheduled | Notice::Other(_) => true,
        }
    }

    /// Whether the matchmaker should plan again (a match ended, or a notice it cannot read).
    pub fn wakes_matchmaker(&self) -> bool {
        matches!(self, Notice::Ended(_) | Notice::Other(_))
    }
}

/// Tells every listening node (at commit) that there is something to do.
fn notify(t: &mut Transaction<'_>, notice: &Notice) -> Result<()> {
    t.execute(
        concat!("SELECT pg_notify(", notify_channel!(), ", $1)"),
        &[&notice.payload()],
    )?;
    Ok(())
}

/// The second key of a node's liveness lock.
fn node_key(node: NodeId) -> i32 {
    node.0 as i32
}

/// A message for a version's lobby, queued through the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Posted {
    /// The version whose lobby it is for.
    pub version: VersionId,
    /// The encoded message.
    pub payload: Vec<u8>,
    /// Set when it tells of this match's end (see [`PgStore::post_events`]).
    pub end_of: Option<MatchId>,
}

/// A node's id in the `nodes` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NodeId(pub i64);

/// How a match's table is laid out beyond its stored seats: a validation match seats copies of
/// its one stored version beside built-in bots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Seats at the table.
    pub table_seats: u8,
    /// Seats the version plays (validation matches; otherwise every seat).
    pub copies: u8,
}

/// A match claimed by this node, to host.
#[derive(Clone, Debug)]
pub struct Claimed {
    /// The match as stored (state scheduled).
    pub record: MatchRecord,
    /// Its layout.
    pub layout: Layout,
    /// The lease epoch this node holds.
    pub epoch: i64,
}

/// What the reaper did with a match whose lease expired.
#[derive(Clone, Debug)]
pub struct Reaped {
    /// The orphan (now aborted or void), as it was.
    pub record: MatchRecord,
    /// Its layout.
    pub layout: Layout,
    /// The node that held it.
    pub node: NodeId,
    /// The match scheduled in its place, if it was retried.
    pub retry: Option<MatchId>,
    /// True when it was voided (out of retries, or its retry could not be scheduled). False
    /// with no retry: aborted, nobody at fault, because a seat's lobby went away with the node.
    pub voided: bool,
}

/// A node of a shared ladder, as the store knows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeInfo {
    /// Its id.
    pub id: NodeId,
    /// Where bots reach its tables.
    pub address: String,
    /// When it joined.
    pub started_ms: Millis,
    /// Its last heartbeat.
    pub heartbeat_ms: Millis,
    /// When it left, if it stopped cleanly.
    pub stopped_ms: Option<Millis>,
}

/// The node hosting a match's table ([`PgStore::host_of`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// Its id.
    pub node: NodeId,
    /// Where bots reach it: its web pages are there too.
    pub address: String,
    /// Whether it is running (a stopped or silent node's pages cannot be reached).
    pub up: bool,
}

fn join_list<T: ToString>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn layout_of(table_seats: Option<i32>, copies: Option<i32>, seats: usize) -> Layout {
    let n = table_seats.map_or(seats, |n| n.max(1) as usize);
    Layout {
        table_seats: n as u8,
        copies: copies.map_or(n, |c| c.max(1) as usize) as u8,
    }
}

fn read_layout(t: &mut Transaction<'_>, m: &MatchRecord) -> Result<(Layout, i32)> {
    let row = t.query_one(
        "SELECT table_seats, copies, attempt FROM matches WHERE id = $1",
        &[&m.id.0],
    )?;
    Ok((layout_of(row.get(0), row.get(1), m.seats.len()), row.get(2)))
}

impl PgStore {
    /// Joins the ladder as a node whose tables are reached at `address`.
    pub fn join_node(&self, address: &str) -> Result<NodeId> {
        self.tx(|t| {
            let id: i64 = t
                .query_one(
                    concat!(
                        "INSERT INTO nodes (address, started_ms, heartbeat_ms) VALUES ($1, ",
                        db_now!(),
                        ", ",
                        db_now!(),
                        ") RETURNING id"
                    ),
                    &[&address],
                )?
                .get(0);
            Ok(NodeId(id))
        })
    }

    /// The node's heartbeat: records it alive, replaces its open lobbies with `lobbies`, and
    /// renews the leases of its matches still scheduled or running for `lease_ms` (from the
    /// database's clock). Returns the matches whose lease it renewed; a match it hosts that is
    /// missing lost its lease.
    pub fn heartbeat(
        &self,
        node: NodeId,
        lobbies: &[Lobby],
        lease_ms: Millis,
    ) -> Result<Vec<MatchId>> {
        // On the liveness lock's own connection when it has one: a pool busy with requests
        // must not hold up the renewal of the leases.
        self.on_alive(|t| {
            t.execute(
                concat!(
                    "UPDATE nodes SET stopped_ms = NULL, heartbeat_ms = ",
                    db_now!(),
                    " WHERE id = $1"
                ),
                &[&node.0],
            )?;
            t.execute("DELETE FROM node_lobbies WHERE node_id = $1", &[&node.0])?;
            let insert = t.prepare(
                "INSERT INTO node_lobbies (node_id, version_id, max_matches, profiles, seats)
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            )?;
            for l in lobbies {
                t.execute(
                    &insert,
                    &[
                        &node.0,
                        &l.version.0,
                        &i64::from(l.max_matches),
                        &l.profiles.join(","),
                        &join_list(&l.seats),
                    ],
                )?;
            }
            // Only the leases this process still holds: a match it let go of (its end could
            // not be recorded) runs out and is settled by the reaper.
            let held: Vec<(i64, i64)> = self
                .held
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
                .filter(|(_, (owner, _))| *owner == node.0)
                .map(|(id, (_, epoch))| (*id, *epoch))
                .collect();
            let ids: Vec<i64> = held.iter().map(|h| h.0).collect();
            let renewed = t.query(
                concat!(
                    "UPDATE matches SET lease_expires_ms = ",
                    db_now!(),
                    " + $1
                     WHERE id = ANY($3) AND lease_owner = $2
                       AND state IN ('scheduled', 'running')
                     RETURNING id, lease_epoch"
                ),
                &[&lease_ms, &node.0, &ids],
            )?;
            Ok(renewed
                .iter()
                .filter(|r| held.contains(&(r.get(0), r.get(1))))
                .map(|r| MatchId(r.get(0)))
                .collect())
        })
    }

    /// Holds this node's liveness lock: a session-level advisory lock on a connection of its own,
    /// which PostgreSQL releases the moment the process dies (its connection closes), so that the
    /// matchmaker's node can tell a dead node from a slow one ([`PgStore::bury_dead_nodes`]).
    /// Call it at every heartbeat: it takes the lock again after its session was lost.
    pub fn hold_node_lock(&self, node: NodeId) -> Result<()> {
        let mut alive = self.alive.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = alive.as_mut() {
            if !c.is_closed() && c.simple_query("SELECT 1").is_ok() {
                return Ok(());
            }
            *alive = None;
        }
        if self.closed.load(Ordering::SeqCst) {
            return Ok(());
        }
        let mut c = self.connect()?;
        let got: bool = c
            .query_one(
                concat!("SELECT pg_try_advisory_lock(", node_lock_space!(), ", $1)"),
                &[&node_key(node)],
            )?
            .get(0);
        if got {
            *alive = Some(c);
        }
        Ok(())
    }

    /// Runs `f` in a transaction on the liveness lock's connection, or on a pooled one when
    /// there is none (not held yet, or lost: [`PgStore::hold_node_lock`] opens it again).
    fn on_alive<T>(&self, f: impl FnOnce(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        let mut alive = self.alive.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(c) = alive.as_mut() else {
            drop(alive);
            return self.tx(f);
        };
        let out = (|| {
            let mut t = c.transaction()?;
            let out = f(&mut t)?;
            t.commit()?;
            Ok(out)
        })();
        if c.is_closed() {
            *alive = None;
        }
        drop(alive);
        self.observe(&out);
        out
    }

    /// Finds the nodes that died: not stopped, silent for `silent_ms` (by the database's clock)
    /// and without their liveness lock (their session ended). Marks them stopped, drops their
    /// lobbies and ends the leases of their matches, so that [`PgStore::reap`] settles those at
    /// once rather than when the leases run out. A node that is only slow keeps its lock and is
    /// left alone. Runs on the matchmaker's session: nothing while this process does not lead,
    /// nor in the first `silent_ms` after its session took the lock.
    pub fn bury_dead_nodes(&self, silent_ms: Millis) -> Result<Vec<NodeId>> {
        // A new matchmaker's session (after a start, or after the database restarted and every
        // session with it) judges nobody for `silent_ms`: live nodes take their locks again at
        // their next heartbeat meanwhile.
        let since = *self
            .leading_since
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if since.is_none_or(|t| t.elapsed().as_millis() < silent_ms.max(0) as u128) {
            return Ok(Vec::new());
        }
        let mut leader = self.leader.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(c) = leader.as_mut() else {
            return Ok(Vec::new());
        };
        let rows = c.query(
            concat!(
                "WITH silent AS MATERIALIZED (
                     SELECT id FROM nodes WHERE stopped_ms IS NULL AND heartbeat_ms < ",
                db_now!(),
                " - $1)
                 SELECT id FROM silent WHERE pg_try_advisory_lock(",
                node_lock_space!(),
                ", id::int4)"
            ),
            &[&silent_ms],
        )?;
        let dead: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
        for &id in &dead {
            c.query_one(
                concat!("SELECT pg_advisory_unlock(", node_lock_space!(), ", $1)"),
                &[&node_key(NodeId(id))],
            )?;
        }
        drop(leader);
        if dead.is_empty() {
            return Ok(Vec::new());
        }
        self.tx(|t| {
            t.execute(
                concat!(
                    "UPDATE nodes SET stopped_ms = ",
                    db_now!(),
                    " WHERE id = ANY($1)"
                ),
                &[&dead],
            )?;
            t.execute("DELETE FROM node_lobbies WHERE node_id = ANY($1)", &[&dead])?;
            t.execute(
                "UPDATE matches SET lease_expires_ms = 0
                 WHERE lease_owner = ANY($1) AND state IN ('scheduled', 'running')",
                &[&dead],
            )?;
            Ok(())
        })?;
        Ok(dead.into_iter().map(NodeId).collect())
    }

    /// Listens, on a thread and a connection of its own, for what the nodes of this ladder notify
    /// (matches scheduled, lobby messages queued, matches ended) and calls `heard` with it, so
    /// that a node acts at once instead of at its next poll. Reconnects after a lost session;
    /// ends once the store is closed. Polling still does everything this only hastens.
    pub fn listen(&self, heard: impl Fn(Notice) + Send + 'static) -> std::io::Result<()> {
        let store = self.clone();
        std::thread::Builder::new()
            .name("ladder-listen".into())
            .spawn(move || {
                while !store.closed.load(Ordering::SeqCst) {
                    if store.listen_once(&heard).is_err() {
                        std::thread::sleep(std::time::Duration::from_millis(500));
                    }
                }
            })?;
        Ok(())
    }

    /// One listening session, until it fails or the store closes.
    fn listen_once(&self, heard: &impl Fn(Notice)) -> Result<()> {
        use postgres::fallible_iterator::FallibleIterator as _;
        let mut c = self.connect()?;
        let channel: String = c
            .query_one(concat!("SELECT ", notify_channel!()), &[])?
            .get(0);
        c.batch_execute(&format!("LISTEN \"{channel}\""))?;
        while !self.closed.load(Ordering::SeqCst) {
            let mut notifications = c.notifications();
            let mut waiting = notifications.timeout_iter(std::time::Duration::from_millis(500));
            while let Some(n) = waiting.next()? {
                heard(Notice::parse(n.payload()));
            }
        }
        Ok(())
    }

    /// Leaves the ladder: the node's lobbies are no longer offered, and it is marked stopped.
    pub fn leave_node(&self, node: NodeId) -> Result<()> {
        self.tx(|t| {
            t.execute("DELETE FROM node_lobbies WHERE node_id = $1", &[&node.0])?;
            t.execute(
                concat!(
                    "UPDATE nodes SET stopped_ms = ",
                    db_now!(),
                    " WHERE id = $1"
                ),
                &[&node.0],
            )?;
            Ok(())
        })
    }

    /// The lobbies open on live nodes (heartbeat within `stale_ms` of the database's clock), one
    /// per version.
    pub fn shared_lobbies(&self, stale_ms: Millis) -> Result<Vec<Lobby>> {
        self.tx(|t| {
            let rows = t.query(
                concat!(
                    "SELECT DISTINCT ON (l.version_id) l.version_id, l.max_matches, l.profiles,
                        l.seats
                     FROM node_lobbies l JOIN nodes n ON n.id = l.node_id
                     WHERE n.stopped_ms IS NULL AND n.heartbeat_ms >= ",
                    db_now!(),
                    " - $1
                     ORDER BY l.version_id, n.heartbeat_ms DESC"
                ),
                &[&stale_ms],
            )?;
            Ok(rows
                .iter()
                .map(|r| {
                    let max: i64 = r.get(1);
                    let profiles: String = r.get(2);
                    let seats: String = r.get(3);
                    Lobby {
                        version: VersionId(r.get(0)),
                        max_matches: max.clamp(0, i64::from(u32::MAX)) as u32,
                        profiles: profiles
                            .split(',')
                            .filter(|p| !p.is_empty())
                            .map(str::to_string)
                            .collect(),
                        seats: seats.split(',').filter_map(|s| s.parse().ok()).collect(),
                    }
                })
                .collect())
        })
    }

    /// Whether this process runs the matchmaker: takes (or keeps) the advisory lock on a session
    /// of its own. The lock goes with the session: when the process dies, the next node takes it.
    pub fn try_lead(&self) -> Result<bool> {
        let out = self.lead_session();
        self.observe(&out);
        out
    }

    fn lead_session(&self) -> Result<bool> {
        let mut leader = self.leader.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = leader.as_mut() {
            if !c.is_closed() && c.simple_query("SELECT 1").is_ok() {
                return Ok(true);
            }
            *leader = None;
        }
        if self.closed.load(Ordering::SeqCst) {
            return Ok(false);
        }
        let mut c = self.connect()?;
        let got: bool = c
            .query_one(
                "SELECT pg_try_advisory_lock(hashtext(current_schema()), $1)",
                &[&MATCHMAKER_LOCK],
            )?
            .get(0);
        if got {
            *leader = Some(c);
            *self
                .leading_since
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(std::time::Instant::now());
        }
        Ok(got)
    }

    /// Schedules a match (see [`super::Store::schedule_match`]) with its layout, in one
    /// transaction, so that no node claims it before the layout is there.
    pub fn schedule_laid_out(&self, m: &NewMatch, layout: Layout, now: Millis) -> Result<MatchId> {
        rules::check_seat_count(m)?;
        self.tx(|t| {
            let id = schedule_in(&mut PgTx::new(t), m, now)?;
            t.execute(
                "UPDATE matches SET table_seats = $1, copies = $2 WHERE id = $3",
                &[
                    &i32::from(layout.table_seats),
                    &i32::from(layout.copies),
                    &id.0,
                ],
            )?;
            notify(t, &Notice::Scheduled)?;
            Ok(id)
        })
    }

    /// Claims up to `max` scheduled, unclaimed matches (oldest first) for `node`, with a lease
    /// of `lease_ms` from the database's clock. Matches other nodes are claiming at the same
    /// moment are skipped, not waited for.
    pub fn claim(&self, node: NodeId, max: usize, lease_ms: Millis) -> Result<Vec<Claimed>> {
        if max == 0 {
            return Ok(Vec::new());
        }
        let out = self.tx(|t| {
            let rows = t.query(
                "SELECT id FROM matches
                 WHERE state = 'scheduled' AND lease_owner IS NULL AND table_seats IS NOT NULL
                 ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED",
                &[&(max as i64)],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                let id = MatchId(r.get(0));
                let epoch: i64 = t
                    .query_one(
                        concat!(
                            "UPDATE matches SET lease_owner = $1, lease_epoch = lease_epoch + 1,
                                 ends_told = FALSE, lease_expires_ms = ",
                            db_now!(),
                            " + $2
                             WHERE id = $3 RETURNING lease_epoch"
                        ),
                        &[&node.0, &lease_ms, &id.0],
                    )?
                    .get(0);
                let record = load_match(&mut PgTx::new(t), id, false)?;
                let (layout, _) = read_layout(t, &record)?;
                out.push(Claimed {
                    record,
                    layout,
                    epoch,
                });
            }
            Ok(out)
        })?;
        let mut held = self.held.lock().unwrap_or_else(PoisonError::into_inner);
        for c in &out {
            held.insert(c.record.id.0, (node.0, c.epoch));
        }
        Ok(out)
    }

    /// Forgets this process's lease on a match (its end is recorded, or the lease was lost).
    pub fn release_lease(&self, id: MatchId) {
        self.held
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&id.0);
    }

    /// Settles every match whose lease expired by the database's clock: aborts it (unrated, nobody at
    /// fault) and schedules it again with a seed drawn from `reseed(old seed, attempt)` and the
    /// same seats and layout, or voids it once it has been retried [`MAX_RETRIES`] times (or
    /// when the retry cannot be scheduled: a closed season, a retired version). Each orphan is
    /// settled in its own transaction, which locks it and checks that its lease is still
    /// expired. `now` (this node's clock) only stamps the records: when the orphan ended and its
    /// retry was scheduled; it decides nothing.
    pub fn reap(&self, now: Millis, reseed: impl Fn(u64, i32) -> u64) -> Result<Vec<Reaped>> {
        let orphans: Vec<i64> = self.tx(|t| {
            Ok(t.query(
                concat!(
                    "SELECT id FROM matches
                     WHERE state IN ('scheduled', 'running') AND lease_owner IS NOT NULL
                       AND lease_expires_ms < ",
                    db_now!(),
                    " ORDER BY id"
                ),
                &[],
            )?
            .iter()
            .map(|r| r.get(0))
            .collect())
        })?;
        let mut out = Vec::new();
        for id in orphans {
            let reaped = self.tx(|t| {
                let row = t.query_opt(
                    concat!(
                        "SELECT lease_owner FROM matches
                         WHERE id = $1 AND state IN ('scheduled', 'running')
                           AND lease_expires_ms < ",
                        db_now!(),
                        " FOR UPDATE SKIP LOCKED"
                    ),
                    &[&id],
                )?;
                let Some(row) = row else {
                    return Ok(None);
                };
                let node = NodeId(row.get(0));
                let record = load_match(&mut PgTx::new(t), MatchId(id), false)?;
                let (layout, attempt) = read_layout(t, &record)?;
                // Retried only if every version still has a lobby on a live node: a seat whose
                // lobby went with the node could not join the retry.
                let mut versions: Vec<i64> = record.seats.iter().map(|s| s.version.0).collect();
                versions.sort_unstable();
                versions.dedup();
                let live: i64 = t
                    .query_one(
                        concat!(
                            "SELECT count(DISTINCT l.version_id) FROM node_lobbies l
                             JOIN nodes n ON n.id = l.node_id
                             WHERE l.version_id = ANY($1) AND n.stopped_ms IS NULL
                               AND n.heartbeat_ms >= ",
                            db_now!(),
                            " - $2"
                        ),
                        &[&versions, &STALE_MS],
                    )?
                    .get(0);
                let seated = live as usize == versions.len();
                let mut retry = None;
                if attempt < MAX_RETRIES && seated {
                    let again = NewMatch {
                        season: record.season,
                        profile: record.profile.clone(),
                        seed: reseed(record.seed, attempt + 1),
                        rated: record.rated,
                        seats: record.seats.iter().map(|s| s.version).collect(),
                    };
                    // A retry that cannot be scheduled voids the orphan instead; the savepoint
                    // keeps the rest of the transaction.
                    let mut sp = t.transaction()?;
                    match schedule_in(&mut PgTx::new(&mut sp), &again, now) {
                        Ok(new) => {
                            sp.execute(
                                "UPDATE matches SET table_seats = $1, copies = $2, attempt = $3,
                                     retry_of = $4
                                 WHERE id = $5",
                                &[
                                    &i32::from(layout.table_seats),
                                    &i32::from(layout.copies),
                                    &(attempt + 1),
                                    &id,
                                    &new.0,
                                ],
                            )?;
                            sp.commit()?;
                            retry = Some(new);
                        }
                        Err(LadderError::State(_) | LadderError::NotFound { .. }) => {
                            sp.rollback()?;
                        }
                        Err(e) => return Err(e),
                    }
                }
                let voided = retry.is_none() && seated;
                let why = match retry {
                    Some(new) => {
                        format!("node {} stopped hosting it; retried as match {new}", node.0)
                    }
                    None if !seated => format!(
                        "node {} stopped hosting it; not retried: a seat's lobby went away",
                        node.0
                    ),
                    None => format!(
                        "node {} stopped hosting it, and it cannot be retried again",
                        node.0
                    ),
                };
                if voided {
                    t.execute(
                        "UPDATE matches SET state = 'void', reason = $1, ended_ms = $2
                         WHERE id = $3",
                        &[&why, &now, &id],
                    )?;
                } else {
                    let nobody_at_fault = vec![
                        SeatOutcome {
                            joined: true,
                            timeouts: 0,
                            rejections: 0,
                        };
                        record.seats.len()
                    ];
                    abort_in(&mut PgTx::new(t), MatchId(id), &nobody_at_fault, &why, now)?;
                }
                Ok(Some(Reaped {
                    record,
                    layout,
                    node,
                    retry,
                    voided,
                }))
            })?;
            out.extend(reaped);
        }
        Ok(out)
    }

    /// Queues messages for versions' lobbies, wherever they are open. The messages of a match's
    /// end (`end_of`) are queued only by the first to mark the match told, in this transaction:
    /// post all of one match's end messages in one call.
    pub fn post_events(&self, events: &[Posted]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        self.tx(|t| {
            let mut ends: Vec<i64> = events
                .iter()
                .filter_map(|e| e.end_of)
                .map(|m| m.0)
                .collect();
            ends.sort_unstable();
            ends.dedup();
            let first: Vec<i64> = if ends.is_empty() {
                Vec::new()
            } else {
                t.query(
                    "UPDATE matches SET ends_told = TRUE WHERE id = ANY($1) AND NOT ends_told
                     RETURNING id",
                    &[&ends],
                )?
                .iter()
                .map(|r| r.get(0))
                .collect()
            };
            let (versions, payloads): (Vec<i64>, Vec<&[u8]>) = events
                .iter()
                .filter(|e| e.end_of.is_none_or(|m| first.contains(&m.0)))
                .map(|e| (e.version.0, e.payload.as_slice()))
                .unzip();
            if versions.is_empty() {
                return Ok(());
            }
            // One statement queues them all, in order, and names the nodes whose lobbies they
            // are for (as of those nodes' last heartbeat), so only those look for them.
            let nodes: Vec<NodeId> = t
                .query(
                    concat!(
                        "WITH queued AS (
                             INSERT INTO lobby_events (version_id, payload, created_ms)
                             SELECT v, p, ",
                        db_now!(),
                        " FROM UNNEST($1::BIGINT[], $2::BYTEA[]) WITH ORDINALITY AS u(v, p, n)
                             ORDER BY n
                             RETURNING version_id)
                         SELECT DISTINCT node_id FROM node_lobbies
                         WHERE version_id IN (SELECT version_id FROM queued)
                         ORDER BY node_id"
                    ),
                    &[&versions, &payloads],
                )?
                .iter()
                .map(|r| NodeId(r.get(0)))
                .collect();
            notify(
                t,
                &if first.is_empty() {
                    Notice::Messages(nodes)
                } else {
                    Notice::Ended(nodes)
                },
            )?;
            Ok(())
        })
    }

    /// Marks a match's end as told without a message (nobody was invited to it).
    pub fn mark_told(&self, id: MatchId) -> Result<()> {
        self.tx(|t| {
            t.execute(
                "UPDATE matches SET ends_told = TRUE WHERE id = $1",
                &[&id.0],
            )?;
            Ok(())
        })
    }

    /// The matches whose end was recorded by a node that is gone (stopped, or silent for
    /// `silent_ms` by the database's clock) before it told their lobbies: whoever posts their
    /// end messages now ([`PgStore::post_events`] with `end_of`) makes sure each reaches its bots.
    pub fn untold_ends(&self, silent_ms: Millis) -> Result<Vec<(MatchRecord, Layout)>> {
        self.tx(|t| {
            let rows = t.query(
                concat!(
                    "SELECT m.id FROM matches m JOIN nodes n ON n.id = m.lease_owner
                     WHERE NOT m.ends_told AND m.state IN ('finished', 'aborted', 'void')
                       AND (n.stopped_ms IS NOT NULL OR n.heartbeat_ms < ",
                    db_now!(),
                    " - $1)
                     ORDER BY m.id"
                ),
                &[&silent_ms],
            )?;
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                let record = load_match(&mut PgTx::new(t), MatchId(r.get(0)), false)?;
                let (layout, _) = read_layout(t, &record)?;
                out.push((record, layout));
            }
            Ok(out)
        })
    }

    /// Takes (deletes and returns, in the order they were queued) the messages for `versions`.
    pub fn take_events(&self, versions: &[VersionId]) -> Result<Vec<(VersionId, Vec<u8>)>> {
        if versions.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<i64> = versions.iter().map(|v| v.0).collect();
        self.tx(|t| {
            let mut rows: Vec<(i64, VersionId, Vec<u8>)> = t
                .query(
                    "DELETE FROM lobby_events WHERE id IN (
                         SELECT id FROM lobby_events WHERE version_id = ANY($1)
                         ORDER BY id FOR UPDATE SKIP LOCKED)
                     RETURNING id, version_id, payload",
                    &[&ids],
                )?
                .iter()
                .map(|r| (r.get(0), VersionId(r.get(1)), r.get(2)))
                .collect();
            rows.sort_by_key(|r| r.0);
            Ok(rows.into_iter().map(|(_, v, p)| (v, p)).collect())
        })
    }

    /// Whether a node's round would find anything: messages for `versions`, or (with `claim`) a
    /// scheduled match to claim. One statement: what a node asks at a poll, between the
    /// notifications that tell it of work, before it runs a whole round.
    pub fn has_work(&self, versions: &[VersionId], claim: bool) -> Result<bool> {
        let ids: Vec<i64> = versions.iter().map(|v| v.0).collect();
        self.tx(|t| {
            Ok(t.query_one(
                "SELECT EXISTS (SELECT 1 FROM lobby_events WHERE version_id = ANY($1))
                     OR ($2 AND EXISTS (
                         SELECT 1 FROM matches
                         WHERE state = 'scheduled' AND lease_owner IS NULL
                           AND table_seats IS NOT NULL))",
                &[&ids, &claim],
            )?
            .get(0))
        })
    }

    /// Deletes lobby messages older than `ttl_ms` by the database's clock (for versions whose
    /// lobby never came back).
    pub fn purge_events(&self, ttl_ms: Millis) -> Result<u64> {
        self.tx(|t| {
            Ok(t.execute(
                concat!(
                    "DELETE FROM lobby_events WHERE created_ms < ",
                    db_now!(),
                    " - $1"
                ),
                &[&ttl_ms],
            )?)
        })
    }

    /// Every node that ever joined, oldest first.
    pub fn nodes(&self) -> Result<Vec<NodeInfo>> {
        self.tx(|t| {
            Ok(t.query(
                "SELECT id, address, started_ms, heartbeat_ms, stopped_ms FROM nodes ORDER BY id",
                &[],
            )?
            .iter()
            .map(|r| NodeInfo {
                id: NodeId(r.get(0)),
                address: r.get(1),
                started_ms: r.get(2),
                heartbeat_ms: r.get(3),
                stopped_ms: r.get(4),
            })
            .collect())
        })
    }

    /// The node that hosted (or hosts) a match's table, with its address and whether it is up
    /// (not stopped, heartbeat within [`STALE_MS`] by the database's clock); `None` for a match
    /// no node claimed.
    pub fn host_of(&self, id: MatchId) -> Result<Option<Host>> {
        self.tx(|t| {
            Ok(t.query_opt(
                concat!(
                    "SELECT n.id, n.address,
                        n.stopped_ms IS NULL AND n.heartbeat_ms >= ",
                    db_now!(),
                    " - $2
                     FROM matches m JOIN nodes n ON n.id = m.lease_owner WHERE m.id = $1"
                ),
                &[&id.0, &STALE_MS],
            )?
            .map(|r| Host {
                node: NodeId(r.get(0)),
                address: r.get(1),
                up: r.get(2),
            }))
        })
    }

    /// The state of every match a node holds a lease on and that is not over (for tests and
    /// operators).
    pub fn leased_to(&self, node: NodeId) -> Result<Vec<(MatchId, MatchState)>> {
        self.tx(|t| {
            t.query(
                "SELECT id, state FROM matches
                 WHERE lease_owner = $1 AND state IN ('scheduled', 'running') ORDER BY id",
                &[&node.0],
            )?
            .iter()
            .map(|r| {
                let state: String = r.get(1);
                Ok((
                    MatchId(r.get(0)),
                    MatchState::from_str_opt(&state).unwrap_or(MatchState::Running),
                ))
            })
            .collect()
        })
    }
}
