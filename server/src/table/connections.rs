//! A table's connections: attaching a seat or spectator (Welcome, then a snapshot or the events
//! since the number its client names), detaching it, and reading every joined seat's Play stream
//! from the table task itself (only the streams that signalled something, seats in turn), with
//! the per-stream and per-seat budgets applied to each message before it reaches the game.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use bytes::Bytes;
use maumau::{encoded, pb, wire};
use maumau_engine::Seat;
use tokio::time::Instant;
use tokio_stream::{Stream, StreamExt};
use tonic::{Status, Streaming};

use super::delivery::{Delivery, FeedOptions, message};
use super::{Command, Reply, Role, Table};
use crate::frames::{HeldEvents, Staged};
use crate::limit::RateLimit;
use crate::outbox::{Out, Outbox};

/// What a seat's Play stream yields.
pub(super) type InboundItem = Result<encoded::Request, Status>;

/// Which seats' Play streams have signalled something to read, and the table task to wake when
/// one does.
#[derive(Default)]
pub(super) struct Readiness {
    /// One bit per seat.
    pub(super) marked: AtomicU64,
    pub(super) table: std::sync::Mutex<Option<Waker>>,
}

impl Readiness {
    /// Marks seats as having something to read and wakes the table.
    pub(super) fn mark(&self, bits: u64) {
        if bits == 0 {
            return;
        }
        self.marked.fetch_or(bits, Ordering::AcqRel);
        let table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(w) = table.as_ref() {
            w.wake_by_ref();
        }
    }

    /// Takes the marked seats, and keeps `waker` to wake when more are marked.
    pub(super) fn take(&self, waker: &Waker) -> u64 {
        {
            let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
            if !table.as_ref().is_some_and(|w| w.will_wake(waker)) {
                *table = Some(waker.clone());
            }
        }
        self.marked.swap(0, Ordering::AcqRel)
    }
}

/// The waker a seat's Play stream is polled with.
pub(super) struct SeatWaker {
    pub(super) bit: u64,
    pub(super) readiness: Arc<Readiness>,
}

impl Wake for SeatWaker {
    fn wake(self: Arc<Self>) {
        self.readiness.mark(self.bit);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.readiness.mark(self.bit);
    }
}

/// A seat's Play stream and its connection's action budget.
pub(super) struct Inbound {
    pub(super) conn: u64,
    pub(super) stream: Box<Streaming<encoded::Request>>,
    pub(super) limit: RateLimit,
    /// The stream's budget of Pings and Resumes.
    pub(super) control: RateLimit,
}

/// Why a Resume was refused.
pub(super) fn too_many_resumes() -> String {
    "too many resumes for this seat (each sends the events again); slow down".into()
}

/// The answer to a Ping.
pub(crate) fn pong(nonce: u64) -> pb::ServerMessage {
    message(pb::server_message::Kind::Pong(pb::Pong {
        nonce,
        server_time_unix_ms: crate::clock::now_ms(),
    }))
}

/// A connection that joins (or rejoins) a table's feed.
pub(crate) struct Attach {
    /// The seat it plays, or a spectator.
    pub(crate) role: Role,
    /// Where its client's feed resumes (`None`: from a snapshot).
    pub(crate) resume: Option<pb::Resume>,
    /// The client's name (Join's `client_name`).
    pub(crate) name: String,
    /// How its events are delivered.
    pub(crate) options: FeedOptions,
    /// Its outgoing queue.
    pub(crate) outbox: Outbox,
    /// The connection's number.
    pub(crate) conn: u64,
    /// A seat's Play stream, read by the table from now on (none for Watch, and for a Resume
    /// on a stream the table already reads).
    pub(crate) inbound: Option<Box<Streaming<encoded::Request>>>,
}

impl Table {
    /// When every remote seat is connected and all play through one HTTP/2 connection, asks to
    /// run on that connection's task: an answer is then read, applied and the next prompt
    /// written in one poll of one task. Until then the table stays a task of its own: moving to
    /// the first seat's connection and staying there when the others join through theirs cost
    /// 4% more server instructions per decision (callgrind, one connection per seat), as the
    /// connection is polled at every wake of the table. (Following the seat to move from
    /// connection to connection measured no better than staying a task of its own: a move
    /// costs what it saves.)
    pub(super) fn follow_seats(&self) {
        let all_joined = self
            .seats
            .iter()
            .all(|s| !s.is_remote() || s.feed.conn.is_some());
        if !all_joined {
            return;
        }
        let mut homes = self
            .seats
            .iter()
            .filter_map(|seat| seat.feed.conn.as_ref().map(|(_, outbox)| outbox.home()));
        let Some(Some(first)) = homes.next() else {
            return;
        };
        if homes.all(|h| h.is_some_and(|h| h.same(first))) {
            self.mover.request(first.clone());
        }
    }

    /// The next message on any seat's Play stream, seats taken in turn. Only streams that
    /// signalled something to read are polled (each has a waker of its own, see [`Readiness`]):
    /// polling a stream takes its connection's lock, which the connection's task needs too.
    pub(super) fn poll_inbound(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<(Seat, Option<InboundItem>)> {
        let marked = self.readiness.take(cx.waker());
        if marked == 0 {
            return Poll::Pending;
        }
        let n = self.seats.len();
        for k in 0..n {
            let s = (self.next_reader + k) % n;
            if marked & (1 << s) == 0 {
                continue;
            }
            let waker = &self.seat_wakers[s];
            if let Some(inbound) = &mut self.seats[s].inbound
                && let Poll::Ready(item) =
                    Pin::new(&mut *inbound.stream).poll_next(&mut Context::from_waker(waker))
            {
                // This stream may hold more; the ones not polled yet still have to be.
                let polled: u64 = (0..=k).map(|j| 1 << ((self.next_reader + j) % n)).sum();
                self.readiness.mark((marked & !polled) | (1 << s));
                self.next_reader = (s + 1) % n;
                return Poll::Ready((s as Seat, item));
            }
        }
        Poll::Pending
    }

    /// Handles what a seat's Play stream carried: a message, an unreadable one, or its end.
    pub(super) fn on_inbound(&mut self, s: Seat, item: Option<InboundItem>) {
        let Some(conn) = self.seats[s as usize].inbound.as_ref().map(|i| i.conn) else {
            return;
        };
        let msg = match item {
            Some(Ok(encoded::Request(msg))) => msg,
            Some(Err(status)) if crate::reasons::unreadable_message(&status) => {
                // Counted like every refusal of the seat's messages; the stream ends with it.
                self.record_rejection(s, pb::ErrorReason::MalformedMessage, status.message(), None);
                self.flush_seat(s);
                let seat = &mut self.seats[s as usize];
                if let Some((_, outbox)) = seat.feed.conn.take() {
                    let _ = outbox.send(Out::End(unreadable(&status)));
                }
                self.detach_seat(s);
                return;
            }
            // The client went away, or the connection broke.
            Some(Err(_)) | None => {
                self.detach_seat(s);
                return;
            }
        };
        let refuse = |table: &mut Table, request_id: u64, reason: pb::ErrorReason, why: String| {
            let rejected = table.rejection(s, request_id, reason, why, None);
            table.answer(s, Reply::Stream { conn }, Err(rejected));
        };
        // Every message costs one from the stream's budget and one from the seat's: actions
        // from those of actions, Pings and Resumes from those of the rest.
        let action = matches!(msg.kind, Some(pb::play_request::Kind::Action(_)));
        let allowed = {
            let seat = &mut self.seats[s as usize];
            let stream = seat.inbound.as_mut().is_some_and(|i| {
                if action {
                    i.limit.allow()
                } else {
                    i.control.allow()
                }
            });
            stream
                && if action {
                    seat.calls.allow()
                } else {
                    seat.control.allow()
                }
        };
        match msg.kind {
            Some(pb::play_request::Kind::Action(a)) => {
                if !allowed {
                    let why = "too many actions; slow down".to_string();
                    return refuse(self, a.request_id, pb::ErrorReason::RateLimited, why);
                }
                match wire::action_from_submission(&a) {
                    Ok(action) => self.handle(Command::Act {
                        seat: s,
                        state_id: a.state_id,
                        action,
                        request_id: a.request_id,
                        reply: Reply::Stream { conn },
                    }),
                    Err(e) => refuse(self, a.request_id, e.reason(), e.to_string()),
                }
            }
            Some(pb::play_request::Kind::Ping(_)) if !allowed => {
                let why = "too many Pings; slow down".to_string();
                refuse(self, 0, pb::ErrorReason::RateLimited, why);
            }
            Some(pb::play_request::Kind::Ping(p)) => self.send_seat(s, pong(p.nonce)),
            Some(pb::play_request::Kind::Resume(_))
                if !allowed || !self.seats[s as usize].resumes.allow() =>
            {
                refuse(self, 0, pb::ErrorReason::RateLimited, too_many_resumes());
            }
            Some(pb::play_request::Kind::Resume(r)) => {
                // The same connection attaches again: Welcome, then the feed from where asked.
                if let Some((_, outbox)) = self.seats[s as usize].feed.conn.clone() {
                    let feed = &self.seats[s as usize].feed;
                    let options = FeedOptions {
                        delivery: feed.delivery,
                        snapshots: feed.snapshots,
                    };
                    self.attach(Attach {
                        role: Role::Seat(s),
                        resume: Some(r),
                        name: String::new(),
                        options,
                        outbox,
                        conn,
                        inbound: None,
                    });
                    self.prompt();
                }
            }
            Some(pb::play_request::Kind::Join(_)) => {
                let why = "this stream has joined already; send Resume to restart the feed";
                refuse(self, 0, pb::ErrorReason::AlreadyJoined, why.into());
            }
            None => refuse(
                self,
                0,
                pb::ErrorReason::MalformedMessage,
                "empty message".into(),
            ),
        }
    }

    pub(super) fn attach(&mut self, a: Attach) {
        let Attach {
            role,
            resume,
            name,
            options,
            outbox,
            conn,
            inbound,
        } = a;
        let viewer = match role {
            Role::Seat(s) => Some(s),
            Role::Spectator => None,
        };
        // Welcome goes first; it is made last, so that it shows this seat joined (its name, its
        // connection) like every player listed.
        let mut batch = Vec::new();
        let from = resume
            .as_ref()
            .filter(|r| !r.snapshot)
            .map(|r| r.last_event_number);
        let delivery = match role {
            Role::Seat(_) => options.delivery,
            Role::Spectator => Delivery::AsTheyHappen,
        };
        // Events to send after Welcome, each a message of its own; held for the next batch
        // under a batching delivery.
        let mut held = HeldEvents::default();
        match from {
            Some(n) if (n as usize) <= self.log.len() => {
                let mut buf = Vec::new();
                for i in n as usize..self.log.len() {
                    buf.clear();
                    self.put_event(&mut buf, i, viewer);
                    if delivery.batches() {
                        held.push(&buf);
                    } else {
                        batch.push(Staged::Event(Bytes::copy_from_slice(&buf)));
                    }
                }
            }
            _ => batch.push(Staged::message(message(
                pb::server_message::Kind::Snapshot(self.snapshot(viewer)),
            ))),
        }
        match role {
            Role::Seat(s) => {
                self.flush_seat(s);
                let seat = &mut self.seats[s as usize];
                if let Some((old_conn, old)) = seat.feed.conn.take()
                    && old_conn != conn
                {
                    let _ = old.send(Out::End(wire::status(
                        pb::ErrorReason::Superseded,
                        "a newer connection joined for this seat",
                    )));
                }
                if seat.inbound.as_ref().is_none_or(|i| i.conn != conn) {
                    // Answers held for another stream's actions are lost with that stream.
                    seat.feed.held_accepted.clear();
                }
                seat.feed.conn = Some((conn, outbox));
                if let Some(stream) = inbound {
                    seat.inbound = Some(Inbound {
                        conn,
                        stream,
                        limit: RateLimit::new(self.limits.actions_per_second),
                        control: RateLimit::new(self.limits.calls_per_second),
                    });
                    self.readiness.mark(1 << s);
                } else if seat.inbound.as_ref().is_some_and(|i| i.conn != conn) {
                    // A Watch took the seat over: the older Play stream is no longer read.
                    seat.inbound = None;
                }
                seat.feed.delivery = delivery;
                seat.feed.snapshots = options.snapshots;
                seat.feed.stepped = false;
                seat.feed.held = held;
                seat.away_since = None;
                seat.joined = true;
                seat.optional_prompted = 0;
                if !name.is_empty() {
                    seat.name = name.chars().take(64).collect();
                }
                self.take_back(s);
                self.publish_players();
                batch.insert(0, self.welcome(viewer));
                self.seats[s as usize].feed.staged = batch;
                // `prompt` sends a decision's required prompt once; a seat that (re)attaches
                // while its decision is pending gets it again, after the events.
                if self.running
                    && self.decision_started.is_some()
                    && self.game.to_act() == Some(s)
                    && self.seats[s as usize].is_remote()
                {
                    self.send_prompt(s, true);
                }
            }
            Role::Spectator => {
                batch.insert(0, self.welcome(viewer));
                // Spectators receive what is staged for them after this step; this one's start
                // goes first, on its own.
                if outbox.send(Out::Frames(batch.iter().map(Staged::encode).collect())) {
                    self.spectators.push((conn, outbox, options.snapshots));
                }
            }
        }
    }

    /// The Welcome for `viewer`, with the players as the table has them now.
    fn welcome(&self, viewer: Option<Seat>) -> Staged {
        let mut welcome = self.entry.welcome(viewer);
        welcome.players = self.players();
        Staged::message(message(pb::server_message::Kind::Welcome(welcome)))
    }

    /// A seat's connection went away (or was ended): the seat is away from now on.
    pub(super) fn detach_seat(&mut self, s: Seat) {
        let seat = &mut self.seats[s as usize];
        seat.feed.disconnect();
        seat.inbound = None;
        seat.away_since = Some(Instant::now());
        self.publish_players();
    }
}

/// Reads a stream to its end, dropping what it carries.
pub(crate) async fn drain(mut stream: Box<Streaming<encoded::Request>>) {
    while let Some(Ok(_)) = stream.next().await {}
}

/// The refusal of a message a stream could not read (too large, not a PlayRequest).
pub(crate) fn unreadable(status: &Status) -> Status {
    wire::status(
        pb::ErrorReason::MalformedMessage,
        format!("cannot read the message: {}", status.message()),
    )
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_stream_that_signals_marks_its_seat_and_wakes_the_table_once_per_signal() {
        let readiness = Arc::new(Readiness::default());
        let table = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(table.clone());
        assert_eq!(readiness.take(&waker), 0, "nothing marked yet");
        let seat2 = Waker::from(Arc::new(SeatWaker {
            bit: 1 << 2,
            readiness: readiness.clone(),
        }));
        seat2.wake_by_ref();
        readiness.mark(1 << 0);
        readiness.mark(0);
        assert_eq!(
            table.0.load(Ordering::SeqCst),
            2,
            "an empty mark wakes nobody"
        );
        assert_eq!(readiness.take(&waker), 0b101);
        assert_eq!(readiness.take(&waker), 0, "taking clears the marks");
    }
}
