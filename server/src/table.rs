//! One task per table: it owns the game, the clocks and the per-seat feeds.
//!
//! Commands arrive on a bounded channel ([`Command`]). Every message a connection receives is
//! built here, from the engine's [`Game::observation`], [`Game::spectator_observation`] and
//! [`event_for`], so no other code decides what a seat sees; the verdict on a seat's message
//! (accepted or rejected) is sent from here too, so it is ordered with the events it caused.
//!
//! A seat's Play stream, once joined, is read by the table task itself: an action goes from the
//! connection straight to the game, with no task or queue in between, and every answer (a
//! verdict, a Pong, a refusal) is ordered with the events it follows.
//!
//! What one step produces for a connection (the events of an accepted action, the next prompt,
//! the verdict) is staged and then queued as one item of the connection's [`Outbox`]: one queue
//! operation and one wake-up per connection per step, however many messages the step made.
//!
//! Event numbers are positions in the table's one event log, starting at 1, and are the same for
//! every viewer (each sees its own redaction of event N). A reconnecting seat names the last
//! number it saw and receives the rest.
//!
//! A seat that joined with [`Delivery::WithPrompt`] has its events (already redacted) and the
//! `ActionAccepted` answers to its stream's actions held until it is sent a prompt, a Pong, an
//! `ActionRejected` or MatchFinished; they go out then as one `EventBatch`, so a decision costs
//! the connection one message in and one out. Held events and answers belong to the connection:
//! a new connection resumes from the number its client names, as after any loss (a Resume on
//! the same stream keeps its held answers).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use maumau::{pb, wire};
use maumau_engine::{Action, Event, Game, Phase, Rejection, Seat, event_for};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_stream::{Stream, StreamExt};
use tonic::{Status, Streaming};

use crate::bots::BuiltinBot;
use crate::config::{GiveUp, TimeControl};
use crate::frames::{Prompt, SharedParts, Staged, numbered_event};
use crate::outbox::{Out, Outbox};
use crate::play::RateLimit;
use crate::registry::MatchEntry;
use crate::serve::Mover;

/// What a seat's Play stream yields.
type InboundItem = Result<pb::PlayRequest, Status>;

/// The table's answer to a seat's message: accepted, or rejected with a reason.
pub(crate) type Verdict = Result<pb::ActionAccepted, pb::ActionRejected>;

/// Where the table sends its verdict on a seat's message.
pub(crate) enum Reply {
    /// On the seat's Play stream `conn`, after the messages the action caused; dropped when `conn`
    /// is no longer the seat's connection (its stream has ended).
    Stream { conn: u64 },
    /// To a unary SubmitAction call.
    Unary(oneshot::Sender<Verdict>),
}

/// How a seat's connection receives events (`Join.event_delivery`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Each event as its own message, as it happens.
    #[default]
    AsTheyHappen,
    /// Events and accepted answers held and sent in one `EventBatch` with the next prompt, or
    /// before a Pong, a rejection or MatchFinished.
    WithPrompt,
}

impl Delivery {
    /// The delivery a Join asks for; `None` for a value the server does not know.
    pub(crate) fn from_wire(v: i32) -> Option<Delivery> {
        match pb::EventDelivery::try_from(v).ok()? {
            pb::EventDelivery::Unspecified | pb::EventDelivery::AsTheyHappen => {
                Some(Delivery::AsTheyHappen)
            }
            pb::EventDelivery::WithPrompt => Some(Delivery::WithPrompt),
        }
    }
}

/// Who is attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// A seat, by its seat token.
    Seat(Seat),
    /// A spectator, by the spectator token.
    Spectator,
}

/// A request to the table task.
pub(crate) enum Command {
    /// A connection joins (or rejoins) the feed.
    Attach {
        role: Role,
        resume: Option<pb::Resume>,
        name: String,
        delivery: Delivery,
        outbox: Outbox,
        conn: u64,
        /// A seat's Play stream, read by the table from now on (none for Watch, and for a
        /// Resume on a stream the table already reads).
        inbound: Option<Box<Streaming<pb::PlayRequest>>>,
        /// Told once Welcome and the feed's first messages are queued (dropped unanswered when
        /// the table is gone, so the caller can answer by itself).
        attached: oneshot::Sender<()>,
    },
    /// A connection went away.
    Detach { role: Role, conn: u64 },
    /// A seat acts.
    Act {
        seat: Seat,
        state_id: u64,
        action: Action,
        request_id: u64,
        reply: Reply,
    },
    /// A seat's unary call was refused before it reached the game (no action, a malformed one):
    /// the table counts it and answers.
    Refuse {
        seat: Seat,
        request_id: u64,
        reason: pb::ErrorReason,
        message: String,
        reply: Reply,
    },
    /// Stop the match now; it is recorded as aborted.
    Abort {
        reason: String,
        reply: oneshot::Sender<()>,
    },
}

/// Who plays a seat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Controller {
    /// A client over the network.
    Remote,
    /// The built-in random bot.
    Bot,
    /// The server's default action (a forfeited seat).
    Default,
}

struct SeatState {
    controller: Controller,
    conn: Option<(u64, Outbox)>,
    /// When the seat's connection went away (or the match started without it).
    away_since: Option<Instant>,
    joined: bool,
    name: String,
    bank: Duration,
    decisions: u32,
    timeouts: u32,
    rejections: u32,
    /// Rejections a correct bot never causes (see [`is_protocol_error`]).
    protocol_errors: u32,
    think_ms: Vec<u32>,
    gave_up: bool,
    forfeited: bool,
    bot: BuiltinBot,
    /// The state id of the last optional prompt sent (challenge or late cure), to send it once.
    optional_prompted: u64,
    /// Messages for the connection, queued as one item at the end of the table's step.
    staged: Vec<Staged>,
    /// How the connection receives events.
    delivery: Delivery,
    /// Events held for the connection until its next prompt, Pong, rejection or MatchFinished
    /// ([`Delivery::WithPrompt`]).
    held: Vec<Bytes>,
    /// Answers to the connection's accepted actions, held with the events.
    held_accepted: Vec<pb::ActionAccepted>,
    /// The seat's Play stream, read by the table.
    inbound: Option<Inbound>,
    /// The seat's (its token's) budget of actions over all its connections, streamed or unary.
    calls: RateLimit,
    /// The seat's budget of Pings and Resume messages, apart from its actions: a seat that
    /// floods actions can still check its line.
    control: RateLimit,
    /// The seat's budget of resumes, each of which sends events again.
    resumes: RateLimit,
}

/// The limits on what one seat may repeat (see [`crate::ServerConfig`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SeatLimits {
    /// Messages one Play stream may send per second (bursts of twice this).
    pub(crate) actions_per_second: u32,
    /// Calls one seat may make per second over all its connections (bursts of twice this).
    pub(crate) calls_per_second: u32,
    /// Resumes one seat may make per minute (at most this many at once).
    pub(crate) resumes_per_minute: u32,
}

impl SeatLimits {
    pub(crate) fn from_config(c: &crate::ServerConfig) -> SeatLimits {
        SeatLimits {
            actions_per_second: c.actions_per_second,
            calls_per_second: c.calls_per_second,
            resumes_per_minute: c.resumes_per_minute,
        }
    }
}

/// Which seats' Play streams have signalled something to read, and the table task to wake when
/// one does.
#[derive(Default)]
struct Readiness {
    /// One bit per seat.
    marked: AtomicU64,
    table: std::sync::Mutex<Option<Waker>>,
}

impl Readiness {
    /// Marks seats as having something to read and wakes the table.
    fn mark(&self, bits: u64) {
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
    fn take(&self, waker: &Waker) -> u64 {
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
struct SeatWaker {
    bit: u64,
    readiness: Arc<Readiness>,
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
struct Inbound {
    conn: u64,
    stream: Box<Streaming<pb::PlayRequest>>,
    limit: RateLimit,
    /// The stream's budget of Pings and Resumes.
    control: RateLimit,
}

/// The table task's state.
pub(crate) struct Table {
    entry: Arc<MatchEntry>,
    game: Game,
    seats: Vec<SeatState>,
    spectators: Vec<(u64, Outbox)>,
    /// Messages for every spectator, queued at the end of the table's step.
    spectators_staged: Vec<Staged>,
    log: Vec<Event>,
    state_id: u64,
    clock: TimeControl,
    /// What one seat, and one of its Play streams, may repeat.
    limits: SeatLimits,
    /// The seat whose stream is read first next time (round robin).
    next_reader: usize,
    /// Which seats' streams have something to read.
    readiness: Arc<Readiness>,
    /// Each seat's stream's waker: marks the seat in `readiness` and wakes the table.
    seat_wakers: Vec<Waker>,
    running: bool,
    created: Instant,
    join_timeout: Duration,
    /// When the current decision was first prompted.
    decision_started: Option<Instant>,
    actions: Vec<pb::ReplayAction>,
    rounds: Vec<pb::RoundResult>,
    aborted: Option<String>,
    /// Moves the table's future to the connection every seat plays through (see
    /// [`Table::follow_seats`]).
    mover: Mover,
    /// The encoded parts of the observations every seat shares.
    shared: SharedParts,
}

/// The default action the server plays for a seat: DRAW if legal, else PASS, else the first listed.
pub fn default_action(legal: &[Action]) -> Action {
    [Action::Draw, Action::Pass]
        .into_iter()
        .find(|a| legal.contains(a))
        .unwrap_or(legal[0])
}

fn unix_ms(at: Instant) -> u64 {
    let now = Instant::now();
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let wall = if at >= now {
        wall + (at - now)
    } else {
        wall.saturating_sub(now - at)
    };
    wall.as_millis() as u64
}

/// Event `i` of the log (numbered from 1) as a viewer sees it (`view`).
fn numbered(i: usize, view: &Event, seats: u8) -> pb::NumberedEvent {
    pb::NumberedEvent {
        number: i as u64 + 1,
        event: Some(wire::event_to_wire(view, seats)),
    }
}

fn message(kind: pb::server_message::Kind) -> pb::ServerMessage {
    pb::ServerMessage { kind: Some(kind) }
}

/// Why a Resume was refused.
fn too_many_resumes() -> String {
    "too many resumes for this seat (each sends the events again); slow down".into()
}

/// The answer to a Ping.
pub(crate) fn pong(nonce: u64) -> pb::ServerMessage {
    message(pb::server_message::Kind::Pong(pb::Pong {
        nonce,
        server_time_unix_ms: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis() as u64,
    }))
}

impl Table {
    pub(crate) fn new(
        entry: Arc<MatchEntry>,
        game: Game,
        log: Vec<Event>,
        bots: &[Option<pb::BotKind>],
        clock: TimeControl,
        join_timeout: Duration,
        limits: SeatLimits,
    ) -> Table {
        let seed = game.rng_state().0;
        let seats = (0..game.seats())
            .map(|s| SeatState {
                controller: if bots[s as usize].is_some() {
                    Controller::Bot
                } else {
                    Controller::Remote
                },
                conn: None,
                away_since: None,
                joined: false,
                name: String::new(),
                bank: clock.bank,
                decisions: 0,
                timeouts: 0,
                rejections: 0,
                protocol_errors: 0,
                think_ms: Vec::new(),
                gave_up: false,
                forfeited: false,
                bot: BuiltinBot::new(
                    bots[s as usize],
                    maumau_bot_sdk::bots::bot_seed(seed, s as usize),
                ),
                optional_prompted: 0,
                staged: Vec::new(),
                delivery: Delivery::AsTheyHappen,
                held: Vec::new(),
                held_accepted: Vec::new(),
                inbound: None,
                calls: RateLimit::new(limits.calls_per_second),
                control: RateLimit::new(limits.calls_per_second),
                resumes: RateLimit::per_minute(limits.resumes_per_minute),
            })
            .collect();
        let seats_n = game.seats() as usize;
        let shared = SharedParts::new(game.config());
        let readiness = Arc::new(Readiness::default());
        let rounds = log
            .iter()
            .filter_map(|e| match e {
                Event::RoundEnded(r) => Some(wire::round_result_to_wire(r, game.seats())),
                _ => None,
            })
            .collect();
        Table {
            entry,
            game,
            seats,
            spectators: Vec::new(),
            spectators_staged: Vec::new(),
            log,
            state_id: 1,
            clock,
            limits,
            next_reader: 0,
            seat_wakers: (0..seats_n)
                .map(|s| {
                    Waker::from(Arc::new(SeatWaker {
                        bit: 1 << s,
                        readiness: readiness.clone(),
                    }))
                })
                .collect(),
            readiness,
            running: false,
            created: Instant::now(),
            join_timeout,
            decision_started: None,
            actions: Vec::new(),
            rounds,
            aborted: None,
            mover: Mover::default(),
            shared,
        }
    }

    /// What moves this table's future to a connection's task (see [`Table::follow_seats`]).
    pub(crate) fn mover(&self) -> Mover {
        self.mover.clone()
    }

    /// When every remote seat is connected and all play through one HTTP/2 connection, asks to
    /// run on that connection's task: an answer is then read, applied and the next prompt
    /// written in one poll of one task. Until then the table stays a task of its own: moving to
    /// the first seat's connection and staying there when the others join through theirs cost
    /// 4% more server instructions per decision (callgrind, one connection per seat), as the
    /// connection is polled at every wake of the table. (Following the seat to move from
    /// connection to connection measured no better than staying a task of its own: a move
    /// costs what it saves.)
    fn follow_seats(&self) {
        let all_joined = self
            .seats
            .iter()
            .all(|s| s.controller != Controller::Remote || s.conn.is_some());
        if !all_joined {
            return;
        }
        let mut homes = self
            .seats
            .iter()
            .filter_map(|seat| seat.conn.as_ref().map(|(_, outbox)| outbox.home()));
        let Some(Some(first)) = homes.next() else {
            return;
        };
        if homes.all(|h| h.is_some_and(|h| h.same(first))) {
            self.mover.request(first.clone());
        }
    }

    /// Runs the table until the match is over or aborted.
    pub(crate) async fn run(mut self, mut rx: mpsc::Receiver<Command>) {
        self.maybe_start();
        // One timer for the table's life, re-armed only when a deadline comes earlier than the
        // one it is set for: a decision answered in microseconds does not touch the timer
        // wheel. When it fires early (the deadline moved later) the table re-arms it.
        let timer = tokio::time::sleep_until(Instant::now());
        tokio::pin!(timer);
        let mut armed: Option<Instant> = None;
        loop {
            self.play_bots().await;
            self.flush();
            if self.game.phase() == Phase::Over || self.aborted.is_some() {
                break;
            }
            let deadline = self.deadline();
            if let Some(d) = deadline
                && armed.is_none_or(|a| d < a)
            {
                timer.as_mut().reset(d);
                armed = Some(d);
            }
            tokio::select! {
                cmd = rx.recv() => match cmd {
                    Some(cmd) => self.handle(cmd),
                    None => {
                        self.aborted = Some("the server stopped the table".into());
                        break;
                    }
                },
                (s, item) = std::future::poll_fn(|cx| self.poll_inbound(cx)) => {
                    self.on_inbound(s, item);
                }
                () = &mut timer, if armed.is_some() => {
                    armed = None;
                    if deadline.is_some_and(|d| d <= Instant::now()) {
                        self.on_deadline();
                    }
                }
            }
        }
        self.finish().await;
    }

    /// The next message on any seat's Play stream, seats taken in turn. Only streams that
    /// signalled something to read are polled (each has a waker of its own, see [`Readiness`]):
    /// polling a stream takes its connection's lock, which the connection's task needs too.
    fn poll_inbound(&mut self, cx: &mut Context<'_>) -> Poll<(Seat, Option<InboundItem>)> {
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
    fn on_inbound(&mut self, s: Seat, item: Option<InboundItem>) {
        let Some(conn) = self.seats[s as usize].inbound.as_ref().map(|i| i.conn) else {
            return;
        };
        let msg = match item {
            Some(Ok(msg)) => msg,
            Some(Err(status)) if crate::reasons::unreadable_message(&status) => {
                // Counted like every refusal of the seat's messages; the stream ends with it.
                self.seats[s as usize].rejections += 1;
                self.seats[s as usize].protocol_errors += 1;
                crate::metrics::rejection(pb::ErrorReason::MalformedMessage);
                self.flush_seat(s);
                let seat = &mut self.seats[s as usize];
                if let Some((_, outbox)) = seat.conn.take() {
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
            let rejected = table.rejection(s, request_id, reason, why);
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
                if let Some((_, outbox)) = self.seats[s as usize].conn.clone() {
                    let delivery = self.seats[s as usize].delivery;
                    let name = String::new();
                    self.attach(Role::Seat(s), Some(r), name, delivery, outbox, conn, None);
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

    /// A seat's connection went away (or was ended): the seat is away from now on.
    fn detach_seat(&mut self, s: Seat) {
        let seat = &mut self.seats[s as usize];
        seat.conn = None;
        seat.inbound = None;
        seat.staged.clear();
        seat.held.clear();
        seat.held_accepted.clear();
        seat.away_since = Some(Instant::now());
        self.publish_players();
    }

    fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::Attach {
                role,
                resume,
                name,
                delivery,
                outbox,
                conn,
                inbound,
                attached,
            } => {
                if let (Role::Seat(s), Some(_)) = (role, &resume)
                    && !self.seats[s as usize].resumes.allow()
                {
                    // Refused before anything changes: the seat's connection stays as it was.
                    let status = wire::status(pb::ErrorReason::RateLimited, too_many_resumes());
                    let _ = outbox.send(Out::End(status));
                    let _ = attached.send(());
                    return;
                }
                self.attach(role, resume, name, delivery, outbox, conn, inbound);
                self.follow_seats();
                self.maybe_start();
                self.prompt();
                self.flush();
                let _ = attached.send(());
            }
            Command::Detach { role, conn } => match role {
                Role::Seat(s) => {
                    if self.seats[s as usize]
                        .conn
                        .as_ref()
                        .is_some_and(|(c, _)| *c == conn)
                    {
                        self.detach_seat(s);
                    }
                }
                Role::Spectator => self.spectators.retain(|(c, _)| *c != conn),
            },
            Command::Act {
                seat,
                request_id,
                reply: reply @ Reply::Unary(_),
                ..
            }
            | Command::Refuse {
                seat,
                request_id,
                reply: reply @ Reply::Unary(_),
                ..
            } if !self.seats[seat as usize].calls.allow() => {
                let why = "too many SubmitAction calls for this seat; slow down".to_string();
                let rejected = self.rejection(seat, request_id, pb::ErrorReason::RateLimited, why);
                self.answer(seat, reply, Err(rejected));
            }
            Command::Act {
                seat,
                state_id,
                action,
                request_id,
                reply,
            } => {
                let verdict = match self.act(seat, state_id, action) {
                    Ok(state_id) => Ok(pb::ActionAccepted {
                        request_id,
                        state_id,
                        action_index: action.index() as u32,
                    }),
                    Err((reason, message)) => {
                        Err(self.rejection(seat, request_id, reason, message))
                    }
                };
                self.answer(seat, reply, verdict);
            }
            Command::Refuse {
                seat,
                request_id,
                reason,
                message,
                reply,
            } => {
                let rejected = self.rejection(seat, request_id, reason, message);
                self.answer(seat, reply, Err(rejected));
            }
            Command::Abort { reason, reply } => {
                self.aborted = Some(reason);
                let _ = reply.send(());
            }
        }
    }

    /// Counts a rejection of one of a seat's messages and words it.
    fn rejection(
        &mut self,
        s: Seat,
        request_id: u64,
        reason: pb::ErrorReason,
        message: String,
    ) -> pb::ActionRejected {
        self.seats[s as usize].rejections += 1;
        crate::metrics::rejection(reason);
        if is_protocol_error(reason) {
            self.seats[s as usize].protocol_errors += 1;
        }
        pb::ActionRejected {
            request_id,
            reason: reason as i32,
            message,
            state_id: self.state_id,
        }
    }

    /// Sends a verdict where it was asked for: after everything staged for the seat so far.
    fn answer(&mut self, s: Seat, reply: Reply, verdict: Verdict) {
        match reply {
            Reply::Stream { conn } => {
                if self.seats[s as usize]
                    .conn
                    .as_ref()
                    .is_some_and(|(c, _)| *c == conn)
                {
                    let kind = match verdict {
                        Ok(a) if self.seats[s as usize].delivery == Delivery::WithPrompt => {
                            self.hold_accepted(s, a);
                            return;
                        }
                        Ok(a) => pb::server_message::Kind::Accepted(a),
                        Err(r) => pb::server_message::Kind::Rejected(r),
                    };
                    self.send_seat(s, message(kind));
                }
            }
            Reply::Unary(tx) => {
                // The events go out before the call returns.
                self.flush();
                let _ = tx.send(verdict);
            }
        }
    }

    // ----- connections -------------------------------------------------------------------

    #[allow(clippy::too_many_arguments)]
    fn attach(
        &mut self,
        role: Role,
        resume: Option<pb::Resume>,
        name: String,
        delivery: Delivery,
        outbox: Outbox,
        conn: u64,
        inbound: Option<Box<Streaming<pb::PlayRequest>>>,
    ) {
        let viewer = match role {
            Role::Seat(s) => Some(s),
            Role::Spectator => None,
        };
        let welcome = self.entry.welcome(viewer);
        let mut batch = vec![Staged::Message(message(pb::server_message::Kind::Welcome(
            welcome,
        )))];
        let from = resume
            .as_ref()
            .filter(|r| !r.snapshot)
            .map(|r| r.last_event_number);
        // Events to send after Welcome; held for the next prompt under `WithPrompt`.
        let mut events = Vec::new();
        match from {
            Some(n) if (n as usize) <= self.log.len() => {
                for (i, e) in self.log.iter().enumerate().skip(n as usize) {
                    events.push(numbered_event(&self.numbered_event(i, e, viewer)));
                }
            }
            _ => batch.push(Staged::Message(message(
                pb::server_message::Kind::Snapshot(self.snapshot(viewer)),
            ))),
        }
        let delivery = match role {
            Role::Seat(_) => delivery,
            Role::Spectator => Delivery::AsTheyHappen,
        };
        if delivery == Delivery::AsTheyHappen {
            batch.extend(events.drain(..).map(Staged::Event));
        }
        match role {
            Role::Seat(s) => {
                self.flush_seat(s);
                let seat = &mut self.seats[s as usize];
                if let Some((old_conn, old)) = seat.conn.take()
                    && old_conn != conn
                {
                    let _ = old.send(Out::End(wire::status(
                        pb::ErrorReason::Superseded,
                        "a newer connection joined for this seat",
                    )));
                }
                if seat.inbound.as_ref().is_none_or(|i| i.conn != conn) {
                    // Answers held for another stream's actions are lost with that stream.
                    seat.held_accepted.clear();
                }
                seat.conn = Some((conn, outbox));
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
                seat.staged = batch;
                seat.delivery = delivery;
                seat.held = events;
                seat.away_since = None;
                seat.joined = true;
                seat.optional_prompted = 0;
                if !name.is_empty() {
                    seat.name = name.chars().take(64).collect();
                }
                self.publish_players();
                // `prompt` sends a decision's required prompt once; a seat that (re)attaches
                // while its decision is pending gets it again, after the events.
                if self.running
                    && self.decision_started.is_some()
                    && self.game.to_act() == Some(s)
                    && self.seats[s as usize].controller == Controller::Remote
                {
                    self.send_prompt(s, true);
                }
            }
            Role::Spectator => {
                // Spectators receive what is staged for them after this step; this one's start
                // goes first, on its own.
                if outbox.send(Out::Frames(batch.iter().map(Staged::encode).collect())) {
                    self.spectators.push((conn, outbox));
                }
            }
        }
    }

    fn numbered_event(&self, i: usize, e: &Event, viewer: Option<Seat>) -> pb::NumberedEvent {
        numbered(i, &event_for(e, viewer), self.game.seats())
    }

    fn snapshot(&self, viewer: Option<Seat>) -> pb::Snapshot {
        let observation = match viewer {
            Some(s) => wire::observation_to_wire(&self.game.observation(s)),
            None => wire::spectator_observation_to_wire(&self.game.spectator_observation()),
        };
        pb::Snapshot {
            state_id: self.state_id,
            last_event_number: self.log.len() as u64,
            observation: Some(observation),
        }
    }

    /// Stages `m` (not a prompt: see [`Table::send_prompt`]) for a seat's connection (see
    /// [`Table::flush`]). Under [`Delivery::WithPrompt`] a Pong, a rejection or MatchFinished
    /// has the held answers and events sent just before it.
    fn send_seat(&mut self, s: Seat, m: pb::ServerMessage) {
        let seat = &mut self.seats[s as usize];
        if seat.conn.is_none() {
            return;
        }
        if seat.delivery == Delivery::WithPrompt
            && (!seat.held.is_empty() || !seat.held_accepted.is_empty())
        {
            seat.staged.push(Staged::Batch {
                events: std::mem::take(&mut seat.held),
                prompt: None,
                accepted: std::mem::take(&mut seat.held_accepted),
            });
        }
        seat.staged.push(Staged::Message(m));
    }

    /// Holds the answer to a batched seat's accepted action for its next `EventBatch`: the one
    /// this step staged already (the action gave the seat its next prompt at once), or a later
    /// one.
    fn hold_accepted(&mut self, s: Seat, a: pb::ActionAccepted) {
        let seat = &mut self.seats[s as usize];
        let staged = seat.staged.iter_mut().rev().find_map(|m| match m {
            Staged::Batch {
                prompt: Some(_),
                accepted,
                ..
            } => Some(accepted),
            _ => None,
        });
        match staged {
            Some(accepted) => accepted.push(a),
            None => seat.held_accepted.push(a),
        }
    }

    /// Queues what was staged for a seat as one item and wakes its connection; a full or closed
    /// queue drops the connection (the client resumes from its last event number).
    fn flush_seat(&mut self, s: Seat) {
        if let Some(w) = self.queue_seat(s) {
            w.wake();
        }
    }

    /// Queues what was staged for a seat as one item; returns the connection's waker, to wake
    /// when the step's messages are all queued.
    fn queue_seat(&mut self, s: Seat) -> Option<Waker> {
        let seat = &mut self.seats[s as usize];
        if seat.staged.is_empty() {
            return None;
        }
        let batch = std::mem::take(&mut seat.staged);
        let (_, outbox) = seat.conn.as_ref()?;
        match outbox.put(Out::Frames(batch.iter().map(Staged::encode).collect())) {
            Ok(waker) => waker,
            Err(_) => {
                seat.conn = None;
                seat.held.clear();
                seat.held_accepted.clear();
                seat.away_since = Some(Instant::now());
                None
            }
        }
    }

    /// Queues everything staged for every connection, then wakes them: a connection that
    /// carries several seats finds all of their messages when it runs, and writes them at once.
    fn flush(&mut self) {
        let mut wake = Vec::new();
        for s in 0..self.game.seats() {
            wake.extend(self.queue_seat(s));
        }
        if !self.spectators_staged.is_empty() {
            // Encoded once for every spectator.
            let frames: Vec<_> = std::mem::take(&mut self.spectators_staged)
                .iter()
                .map(Staged::encode)
                .collect();
            self.spectators
                .retain(|(_, o)| match o.put(Out::Frames(frames.clone())) {
                    Ok(w) => {
                        wake.extend(w);
                        true
                    }
                    Err(_) => false,
                });
        }
        for w in wake {
            w.wake();
        }
    }

    /// Stages the events from `from` on for every connection, each redacted for its viewer.
    /// Each event is encoded once per way of seeing it: viewers that see it alike share the
    /// bytes.
    fn broadcast(&mut self, from: usize) {
        // The event as some viewer sees it, and its encoding.
        let mut seen: Vec<(Event, Bytes)> = Vec::with_capacity(2);
        let seats = self.game.seats();
        for i in from..self.log.len() {
            let e = self.log[i];
            seen.clear();
            let mut encoded = |viewer: Option<Seat>| -> Bytes {
                let view = event_for(&e, viewer);
                if let Some((_, b)) = seen.iter().find(|(v, _)| *v == view) {
                    return b.clone();
                }
                let b = numbered_event(&numbered(i, &view, seats));
                seen.push((view, b.clone()));
                b
            };
            for s in 0..seats {
                let seat = &mut self.seats[s as usize];
                if seat.conn.is_none() {
                    continue;
                }
                let b = encoded(Some(s));
                match seat.delivery {
                    Delivery::AsTheyHappen => seat.staged.push(Staged::Event(b)),
                    Delivery::WithPrompt => seat.held.push(b),
                }
            }
            if !self.spectators.is_empty() {
                let b = encoded(None);
                self.spectators_staged.push(Staged::Event(b));
            }
        }
    }

    fn publish_players(&self) {
        let players = self.players();
        self.entry.update(|info| info.players = players);
    }

    fn players(&self) -> Vec<pb::PlayerInfo> {
        self.seats
            .iter()
            .enumerate()
            .map(|(s, seat)| pb::PlayerInfo {
                seat: s as u32,
                name: seat.name.clone(),
                bot: match seat.controller {
                    Controller::Bot => seat.bot.kind_to_wire() as i32,
                    _ => pb::BotKind::Unspecified as i32,
                },
                connected: seat.conn.is_some() || seat.controller == Controller::Bot,
            })
            .collect()
    }

    // ----- the clock ---------------------------------------------------------------------

    fn maybe_start(&mut self) {
        if self.running {
            return;
        }
        let all_joined = self
            .seats
            .iter()
            .all(|s| s.joined || s.controller != Controller::Remote);
        if all_joined || self.created.elapsed() >= self.join_timeout {
            self.running = true;
            let now = Instant::now();
            for seat in self
                .seats
                .iter_mut()
                .filter(|s| s.controller == Controller::Remote)
            {
                if seat.conn.is_none() {
                    seat.away_since = Some(now);
                }
            }
            self.entry
                .update(|info| info.status = pb::MatchStatus::Running);
            self.decision_started = None;
            self.prompt();
        }
    }

    /// When the table must act by itself next: the start of a match whose seats did not all
    /// join, or the deadline of the seat to act.
    fn deadline(&self) -> Option<Instant> {
        if !self.running {
            return Some(self.created + self.join_timeout);
        }
        let seat = self.game.to_act()?;
        let st = &self.seats[seat as usize];
        if st.controller != Controller::Remote {
            return None;
        }
        let started = self.decision_started?;
        let clock = started + self.clock.decision + st.bank;
        Some(match st.away_since {
            Some(away) => clock.min(away.max(started) + self.clock.disconnect_grace),
            None => clock,
        })
    }

    fn on_deadline(&mut self) {
        if !self.running {
            self.maybe_start();
            return;
        }
        let Some(s) = self.game.to_act() else { return };
        let now = Instant::now();
        let grace_over = self.seats[s as usize]
            .away_since
            .is_some_and(|away| now >= away + self.clock.disconnect_grace);
        if grace_over {
            self.give_up(s);
            return;
        }
        let seat = &mut self.seats[s as usize];
        seat.timeouts += 1;
        crate::metrics::timeout();
        seat.bank = Duration::ZERO;
        let legal = self.game.legal_actions(s);
        let action = default_action(&legal);
        let timeouts = seat.timeouts;
        tracing::debug!(match_id = %self.entry.id, seat = s, timeouts, "decision timed out");
        if let Err(r) = self.apply(s, action, true) {
            // Cannot happen: the default action is one of the legal ones.
            tracing::error!(match_id = %self.entry.id, seat = s, %action, error = %r, "the default action was refused");
        }
        if timeouts >= self.clock.max_timeouts {
            self.give_up(s);
        }
    }

    fn give_up(&mut self, s: Seat) {
        let seat = &mut self.seats[s as usize];
        seat.gave_up = true;
        match self.clock.give_up {
            GiveUp::Bot => seat.controller = Controller::Bot,
            GiveUp::Forfeit => {
                seat.controller = Controller::Default;
                seat.forfeited = true;
            }
        }
        tracing::info!(match_id = %self.entry.id, seat = s, policy = ?self.clock.give_up, "seat gave up");
        self.publish_players();
    }

    // ----- actions -----------------------------------------------------------------------

    /// Checks and applies a seat's action; a refusal changes nothing (the caller counts it).
    fn act(
        &mut self,
        s: Seat,
        state_id: u64,
        action: Action,
    ) -> Result<u64, (pb::ErrorReason, String)> {
        if !self.running {
            return Err((
                pb::ErrorReason::MatchNotStarted,
                "not every seat has joined yet".into(),
            ));
        }
        let turn_action = !matches!(action, Action::Challenge | Action::Announce(_));
        let stale = state_id != self.state_id && (turn_action || state_id != 0);
        if self.seats[s as usize].controller != Controller::Remote {
            return Err((
                pb::ErrorReason::NotSeated,
                "the server plays this seat now".into(),
            ));
        }
        if stale {
            return Err((
                pb::ErrorReason::StaleState,
                format!(
                    "state {state_id} is stale; the current state is {}",
                    self.state_id
                ),
            ));
        }
        // The seat's bank pays for time beyond the decision's allowance; set before applying,
        // because the seat's next prompt (if it moves again) shows it, and put back on refusal.
        let bank = self.seats[s as usize].bank;
        if self.game.to_act() == Some(s) && turn_action {
            let started = self.decision_started.unwrap_or_else(Instant::now);
            let used = started.elapsed();
            let seat = &mut self.seats[s as usize];
            seat.bank = bank.saturating_sub(used.saturating_sub(self.clock.decision));
        }
        if let Err(r) = self.apply(s, action, false) {
            self.seats[s as usize].bank = bank;
            return Err((pb::ErrorReason::from(r), r.to_string()));
        }
        Ok(self.state_id)
    }

    /// Applies an action, records it and tells every connection; a refused action changes
    /// nothing (the engine checks it completely before changing anything).
    fn apply(&mut self, s: Seat, action: Action, timeout: bool) -> Result<(), Rejection> {
        let mover = self.game.to_act();
        let think = if mover == Some(s) {
            self.decision_started
                .map_or(0, |t| t.elapsed().as_millis() as u32)
        } else {
            0
        };
        let from = self.log.len();
        let log = &mut self.log;
        self.game
            .apply_with(s, action, &mut |e: &Event| log.push(*e))?;
        if mover == Some(s) {
            let seat = &mut self.seats[s as usize];
            seat.decisions += 1;
            crate::metrics::decision();
            seat.think_ms.push(think);
        }
        self.actions.push(pb::ReplayAction {
            seat: s.into(),
            action: Some(action.into()),
            index: action.index() as u32,
            think_ms: think,
            timeout,
        });
        self.state_id += 1;
        for e in &self.log[from..] {
            if let Event::RoundEnded(r) = e {
                self.rounds
                    .push(wire::round_result_to_wire(r, self.game.seats()));
            }
        }
        let (round, actions, totals) = (self.game.round(), self.actions.len(), self.game.totals());
        self.entry.update(|info| {
            info.round = round.into();
            info.actions = actions as u32;
            info.totals.clear();
            info.totals.extend_from_slice(totals);
        });
        // An out-of-turn action (a challenge, a late cure) leaves the same seat to move, on its
        // running clock, but with a new state_id: its pending prompt is stale, so it gets a fresh
        // one (same deadline) after the events.
        let reprompt = match mover {
            Some(m) if m != s && self.game.to_act() == mover && self.decision_started.is_some() => {
                (self.seats[m as usize].controller == Controller::Remote).then_some(m)
            }
            _ => None,
        };
        if self.game.to_act() != mover || mover == Some(s) {
            self.decision_started = None;
        }
        self.broadcast(from);
        if let Some(m) = reprompt {
            self.send_prompt(m, true);
        }
        self.prompt();
        Ok(())
    }

    /// Sends the seat to act its decision prompt (once per state) and optional prompts to seats
    /// that may challenge or cure.
    fn prompt(&mut self) {
        if !self.running || self.game.phase() == Phase::Over {
            return;
        }
        let Some(mover) = self.game.to_act() else {
            return;
        };
        if self.decision_started.is_none() {
            self.decision_started = Some(Instant::now());
            if self.seats[mover as usize].controller == Controller::Remote {
                self.send_prompt(mover, true);
            }
        }
        // Out-of-turn actions (challenges, late cures) exist only while windows can open.
        if !self.game.rules().windows_open() {
            return;
        }
        for s in 0..self.game.seats() {
            let seat = &self.seats[s as usize];
            if s == mover
                || seat.controller != Controller::Remote
                || seat.conn.is_none()
                || seat.optional_prompted == self.state_id
            {
                continue;
            }
            if !self.game.legal_actions(s).is_empty() {
                self.seats[s as usize].optional_prompted = self.state_id;
                self.send_prompt(s, false);
            }
        }
    }

    /// Stages a prompt for seat `s`: under [`Delivery::WithPrompt`] in an `EventBatch` with the
    /// held answers and events.
    fn send_prompt(&mut self, s: Seat, required: bool) {
        if self.seats[s as usize].conn.is_none() {
            return;
        }
        let prompt = self.prompt_for(s, required);
        let seat = &mut self.seats[s as usize];
        let staged = match seat.delivery {
            Delivery::WithPrompt => Staged::Batch {
                events: std::mem::take(&mut seat.held),
                prompt: Some(prompt),
                accepted: std::mem::take(&mut seat.held_accepted),
            },
            Delivery::AsTheyHappen => Staged::Prompt(prompt),
        };
        seat.staged.push(staged);
    }

    fn prompt_for(&mut self, s: Seat, required: bool) -> Prompt {
        let obs = self.game.observation(s);
        let seat = &self.seats[s as usize];
        let started = self.decision_started.unwrap_or_else(Instant::now);
        let (deadline, left) = if required {
            let deadline = started + self.clock.decision + seat.bank;
            (
                unix_ms(deadline),
                deadline.saturating_duration_since(Instant::now()),
            )
        } else {
            (0, Duration::ZERO)
        };
        let prompt = pb::DecisionPrompt {
            state_id: self.state_id,
            legal_actions: wire::legal_actions_to_wire(&obs),
            required,
            deadline_unix_ms: deadline,
            time_left_ms: left.as_millis() as u32,
            time_bank_ms: seat.bank.as_millis() as u32,
            observation: None,
            last_event_number: self.log.len() as u64,
        };
        self.shared.prompt(prompt, &obs)
    }

    /// Plays every seat the server controls until a remote seat must act or the match ends.
    async fn play_bots(&mut self) {
        let mut played = 0u32;
        while self.running {
            let Some(s) = self.game.to_act() else { return };
            let reaction = if self.game.rules().windows_open() {
                (0..self.game.seats()).find_map(|r| {
                    let st = &mut self.seats[r as usize];
                    (r != s && st.controller == Controller::Bot)
                        .then(|| st.bot.react(&self.game, r, &self.log).map(|a| (r, a)))?
                })
            } else {
                None
            };
            let (s, action) = match (reaction, self.seats[s as usize].controller) {
                (Some(reaction), _) => reaction,
                (None, Controller::Remote) => return,
                (None, Controller::Bot) => {
                    let seat = &mut self.seats[s as usize];
                    (s, seat.bot.decide(&self.game, s, &self.log).await)
                }
                (None, Controller::Default) => (s, default_action(&self.game.legal_actions(s))),
            };
            if let Err(r) = self.apply(s, action, false) {
                // Cannot happen: bots choose among the legal actions. Stop rather than spin.
                tracing::error!(match_id = %self.entry.id, seat = s, %action, error = %r, "a server-played action was refused");
                self.aborted = Some(format!("the server's own action was refused: {r}"));
                return;
            }
            played += 1;
            if played.is_multiple_of(64) {
                self.flush();
                tokio::task::yield_now().await;
            }
        }
    }

    // ----- the end -----------------------------------------------------------------------

    /// Records the match's end and, once the record is durable, tells every seat and spectator.
    async fn finish(&mut self) {
        let status = if self.aborted.is_some() {
            pb::MatchStatus::Aborted
        } else {
            pb::MatchStatus::Finished
        };
        let result = self.game.match_result().map(|r| {
            let mut w = pb::MatchResult::from(&r);
            self.place_forfeits_last(&mut w);
            w
        });
        let (seed, _) = self.game.rng_state();
        let stats = self
            .seats
            .iter()
            .enumerate()
            .map(|(s, seat)| seat_stats(s, seat))
            .collect();
        let report = pb::MatchReport {
            match_id: self.entry.id.clone(),
            status: status as i32,
            result: result.clone(),
            rounds: std::mem::take(&mut self.rounds),
            seats: stats,
            seed,
            seed_commitment: self.entry.seed_commitment.clone(),
            actions: self.actions.len() as u32,
            players: self.players(),
            seed_salt: self.entry.seed_salt.clone(),
        };
        let replay = pb::Replay {
            format: 1,
            match_id: self.entry.id.clone(),
            config: Some((&self.entry.config).into()),
            seed,
            start: self.entry.start.clone(),
            actions: std::mem::take(&mut self.actions),
            players: self.players(),
            time_control: Some(self.clock.to_wire()),
            result,
            seed_salt: self.entry.seed_salt.clone(),
            seed_commitment: self.entry.seed_commitment.clone(),
        };
        if let Some(why) = &self.aborted {
            tracing::info!(match_id = %self.entry.id, reason = %why, "match aborted");
        } else {
            tracing::info!(match_id = %self.entry.id, actions = report.actions, "match finished");
        }
        let report = self.entry.finish(report, replay).await;
        let done = message(pb::server_message::Kind::Finished(pb::MatchFinished {
            report: Some(report),
        }));
        for s in 0..self.game.seats() {
            self.send_seat(s, done.clone());
        }
        if !self.spectators.is_empty() {
            self.spectators_staged.push(Staged::Message(done));
        }
        self.flush();
        for seat in &mut self.seats {
            seat.conn = None;
            if let Some(inbound) = seat.inbound.take() {
                // The stream has ended for the client; what it still sends is read and dropped
                // until it closes its side.
                tokio::spawn(drain(inbound.stream));
            }
        }
        self.spectators.clear();
    }

    /// A forfeited seat is placed behind every seat that did not forfeit.
    fn place_forfeits_last(&self, result: &mut pb::MatchResult) {
        let forfeited: Vec<bool> = self.seats.iter().map(|s| s.forfeited).collect();
        if !forfeited.iter().any(|&f| f) {
            return;
        }
        let old: Vec<u32> = result.standings.iter().map(|st| st.placing).collect();
        let n = old.len();
        for (s, standing) in result.standings.iter_mut().enumerate() {
            standing.placing = 1
                + (0..n)
                    .filter(|&o| {
                        (!forfeited[o] && forfeited[s])
                            || (forfeited[o] == forfeited[s] && old[o] < old[s])
                    })
                    .count() as u32;
        }
    }
}

/// Reads a stream to its end, dropping what it carries.
pub(crate) async fn drain(mut stream: Box<Streaming<pb::PlayRequest>>) {
    while let Some(Ok(_)) = stream.next().await {}
}

/// The refusal of a message a stream could not read (too large, not a PlayRequest).
pub(crate) fn unreadable(status: &Status) -> Status {
    wire::status(
        pb::ErrorReason::MalformedMessage,
        format!("cannot read the message: {}", status.message()),
    )
}

/// Whether a refusal means the bot broke the protocol or the rules, rather than losing a race that
/// a correct bot can lose: its state id went stale (another action or a timeout came first),
/// another seat challenged first or the offence closed, the match ended or has not started yet,
/// or the server plays the seat now (it gave up).
fn is_protocol_error(reason: pb::ErrorReason) -> bool {
    use pb::ErrorReason as R;
    !matches!(
        reason,
        R::StaleState
            | R::MatchOver
            | R::MatchNotStarted
            | R::NotSeated
            | R::AlreadyChallenged
            | R::NoOpenOffence
    )
}

fn seat_stats(s: usize, seat: &SeatState) -> pb::SeatStats {
    let mut t = seat.think_ms.clone();
    t.sort_unstable();
    let pct = |p: usize| -> u32 {
        if t.is_empty() {
            0
        } else {
            t[((t.len() - 1) * p).div_ceil(100)]
        }
    };
    pb::SeatStats {
        seat: s as u32,
        decisions: seat.decisions,
        timeouts: seat.timeouts,
        rejections: seat.rejections,
        protocol_errors: seat.protocol_errors,
        decision_ms_p50: pct(50),
        decision_ms_p90: pct(90),
        decision_ms_p99: pct(99),
        decision_ms_max: t.last().copied().unwrap_or(0),
        bank_left_ms: seat.bank.as_millis() as u32,
        gave_up: seat.gave_up,
        forfeited: seat.forfeited,
    }
}
