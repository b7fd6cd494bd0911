//! One task per table: it owns the game, the clocks and the per-seat feeds. This file holds the
//! commands a table takes, its step (an action checked, applied, recorded and told to every
//! connection) and the bots it plays; each concern around that step has a file of its own:
//!
//! - `seat.rs`: a seat and its clock (who plays it, deadlines, the bank, timeouts, giving up);
//! - `connections.rs`: attaching and detaching connections, reading the seats' Play streams;
//! - `delivery.rs`: what a step sends each connection, redacted, staged and queued (a seat's
//!   [`delivery::Feed`]);
//! - `recording.rs`: each seat's statistics, the match report and replay at the end.
//!
//!
//! Commands arrive on a bounded channel ([`Command`]). Every message a connection receives is
//! built here, from the engine's [`Game::observation`], [`Game::spectator_observation`] and
//! [`event_for`](maumau_engine::event_for), so no other code decides what a seat sees; the verdict on a seat's message
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
//!
//! A seat that joined with [`Delivery::PerStep`] has them held the same way, with its prompt,
//! but only until the end of the step: each step sends the seat at most one `EventBatch` (more
//! only when the step also answers it with a Pong or a rejection, or ends the match).

mod connections;
mod delivery;
mod handle;
mod recording;
mod seat;
mod stream;

use std::sync::Arc;
use std::task::Waker;
use std::time::Duration;

use maumau::{pb, wire};
use maumau_engine::{Action, Event, Game, Phase, Rejection, Seat};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use crate::bots::BuiltinBot;
use crate::config::TimeControl;
use crate::frames::{SharedParts, Staged};
use crate::limit::RateLimit;
use crate::outbox::{Out, Outbox};
use crate::transport::Mover;

pub(crate) use connections::{Attach, drain, unreadable};
use connections::{Readiness, SeatWaker, too_many_resumes};
pub(crate) use delivery::message;
pub(crate) use delivery::{Delivery, FeedOptions};
use delivery::{EventViews, Feed};
pub(crate) use handle::{Handle, NewMatch, Start};
use recording::Tally;
pub(crate) use seat::SeatLimits;
pub use seat::default_action;
use seat::{Controller, SeatState, bank_after};
pub(crate) use stream::Outgoing;

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
        attach: Attach,
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
    /// A seat gives up for good (`PlayService.Resign`): it forfeits now. The reply says whether
    /// it forfeited now (false: it had already).
    Resign {
        seat: Seat,
        reply: oneshot::Sender<bool>,
    },
    /// Stop the match now; it is recorded as aborted.
    Abort {
        reason: String,
        reply: oneshot::Sender<()>,
    },
    /// The match's replay so far (no result yet) and the time the seat to act has left, for
    /// the viewer of a live match. The replay holds the seed: what a viewer is shown of it is
    /// decided by its perspective (see `viewer.rs`).
    Replay { reply: oneshot::Sender<Live> },
}

/// A match being played, as the viewer is given it.
pub(crate) struct Live {
    /// The replay so far, without a result.
    pub(crate) replay: pb::Replay,
    /// The time the seat to act has left before the server acts for it (its decision time and
    /// bank, or its disconnect grace); `None` before the match starts and while no remote seat
    /// is to act.
    pub(crate) time_left: Option<Duration>,
}

/// The table task's state.
pub(crate) struct Table {
    entry: Arc<Handle>,
    game: Game,
    seats: Vec<SeatState>,
    spectators: Vec<(u64, Outbox, bool)>,
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
    /// The seats' refused messages, for the replay (see `recording.rs`).
    rejections: Vec<pb::ReplayRejection>,
    rounds: Vec<pb::RoundResult>,
    aborted: Option<String>,
    /// Moves the table's future to the connection every seat plays through (see
    /// [`Table::follow_seats`]).
    mover: Mover,
    /// The encoded parts of the observations every seat shares.
    shared: SharedParts,
    /// The ways the viewers see the event being sent, encoded (kept for their room).
    views: EventViews,
    /// The connections to wake once a step's messages are queued (kept for its room).
    wakers: Vec<Waker>,
    /// The state id at which the bots were last asked for out-of-turn actions (see
    /// [`Table::play_bots`]).
    reactions_asked: u64,
}

impl Table {
    pub(crate) fn new(
        entry: Arc<Handle>,
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
                feed: Feed::default(),
                away_since: None,
                joined: false,
                name: String::new(),
                bank: clock.bank,
                tally: Tally::default(),
                gave_up: false,
                timeouts_forgiven: 0,
                forfeited: false,
                resigned: false,
                bot: BuiltinBot::new(
                    bots[s as usize],
                    maumau_bot_sdk::bots::bot_seed(seed, s as usize),
                )
                .starting_at(log.len()),
                optional_prompted: 0,
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
        let table = Table {
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
            rejections: Vec::new(),
            rounds,
            aborted: None,
            mover: Mover::default(),
            shared,
            views: EventViews::default(),
            wakers: Vec::new(),
            reactions_asked: 0,
        };
        // The players are known from the start: GetMatch and the first Welcome list them.
        table.publish_players();
        table
    }

    /// What moves this table's future to a connection's task (see [`Table::follow_seats`]).
    pub(crate) fn mover(&self) -> Mover {
        self.mover.clone()
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

    fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::Attach { attach, attached } => {
                if let (Role::Seat(s), Some(_)) = (attach.role, &attach.resume)
                    && !self.seats[s as usize].resumes.allow()
                {
                    // Refused before anything changes: the seat's connection stays as it was.
                    let status = wire::status(pb::ErrorReason::RateLimited, too_many_resumes());
                    let _ = attach.outbox.send(Out::End(status));
                    let _ = attached.send(());
                    return;
                }
                self.attach(attach);
                self.follow_seats();
                self.maybe_start();
                self.prompt();
                self.flush();
                let _ = attached.send(());
            }
            Command::Detach { role, conn } => match role {
                Role::Seat(s) => {
                    if self.seats[s as usize].feed.is_on(conn) {
                        self.detach_seat(s);
                    }
                }
                Role::Spectator => self.spectators.retain(|(c, _, _)| *c != conn),
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
                let rejected =
                    self.rejection(seat, request_id, pb::ErrorReason::RateLimited, why, None);
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
                        Err(self.rejection(seat, request_id, reason, message, Some(action)))
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
                let rejected = self.rejection(seat, request_id, reason, message, None);
                self.answer(seat, reply, Err(rejected));
            }
            Command::Resign { seat, reply } => {
                let now = self.resign(seat);
                // A table waiting only for this seat starts; a seat to move is played for.
                self.maybe_start();
                self.prompt();
                let _ = reply.send(now);
            }
            Command::Abort { reason, reply } => {
                self.aborted = Some(reason);
                let _ = reply.send(());
            }
            Command::Replay { reply } => {
                let time_left = self
                    .deadline()
                    .filter(|_| self.running)
                    .map(|d| d.saturating_duration_since(Instant::now()));
                let replay = self.replay(self.actions.clone(), None);
                let _ = reply.send(Live { replay, time_left });
            }
        }
    }

    /// Counts and records a rejection of one of a seat's messages (`action`: the action it named,
    /// if any) and words it.
    fn rejection(
        &mut self,
        s: Seat,
        request_id: u64,
        reason: pb::ErrorReason,
        message: String,
        action: Option<Action>,
    ) -> pb::ActionRejected {
        self.record_rejection(s, reason, &message, action);
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
                if self.seats[s as usize].feed.is_on(conn) {
                    let kind = match verdict {
                        Ok(a) if self.seats[s as usize].feed.delivery.batches() => {
                            self.seats[s as usize].feed.hold_accepted(a);
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
            seat.bank = bank_after(&self.clock, bank, used);
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
            seat.tally.decision(think);
            crate::metrics::decision();
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
                || seat.feed.conn.is_none()
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

    /// Plays every seat the server controls until a remote seat must act or the match ends.
    ///
    /// Before each decision, while windows can open, the bots are asked once, in seat order,
    /// for an out-of-turn action (a challenge, a late cure), each one applied as it comes: the
    /// way `maumau_bot_sdk::play_match_with` asks them, so the same bots with the same seeds
    /// play the same match here as in a tournament (asking a random bot again draws again).
    async fn play_bots(&mut self) {
        let mut played = 0u32;
        while self.running {
            let Some(s) = self.game.to_act() else { return };
            if self.game.rules().windows_open() && self.reactions_asked != self.state_id {
                for r in 0..self.game.seats() {
                    if r == s || self.seats[r as usize].controller != Controller::Bot {
                        continue;
                    }
                    let st = &mut self.seats[r as usize];
                    let Some(action) = st.bot.react(&self.game, r, &self.log) else {
                        continue;
                    };
                    if let Err(e) = self.apply(r, action, false) {
                        tracing::error!(match_id = %self.entry.id, seat = r, %action, error = %e, "a server-played reaction was refused");
                    }
                    played += 1;
                }
                self.reactions_asked = self.state_id;
                // A challenge may have ended the match or moved the turn.
                continue;
            }
            let action = match self.seats[s as usize].controller {
                Controller::Remote => return,
                Controller::Bot => {
                    let seat = &mut self.seats[s as usize];
                    seat.bot.decide(&self.game, s, &self.log).await
                }
                Controller::Default => default_action(&self.game.legal_actions(s)),
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
}
