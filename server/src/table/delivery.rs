//! Delivery: what one step of the table makes for each connection. Events are redacted for each
//! viewer (encoded once per way of seeing them), staged per connection and queued as one item of
//! its [`Outbox`] at the end of the step. Under [`Delivery::WithPrompt`] a seat's events and
//! accepted answers are held and go out in one `EventBatch` with its next prompt (or before a
//! Pong, a rejection or MatchFinished); under [`Delivery::PerStep`] they go out at the end of
//! every step, with the step's prompt, in one `EventBatch`.

use std::ops::Range;
use std::task::Waker;
use std::time::Duration;

use bytes::Bytes;
use maumau::{pb, wire};
use maumau_engine::{Event, Seat, event_for};
use tokio::time::Instant;

use super::Table;
use crate::clock::unix_ms;
use crate::frames::{Frame, HeldEvents, Prompt, Staged, put_numbered_event};
use crate::outbox::{Out, Outbox};

/// How a seat's connection receives events (`Join.event_delivery`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// Each event as its own message, as it happens.
    #[default]
    AsTheyHappen,
    /// Events and accepted answers held and sent in one `EventBatch` with the next prompt, or
    /// before a Pong, a rejection or MatchFinished.
    WithPrompt,
    /// Each step's accepted answers, events and prompt in one `EventBatch` at the end of the
    /// step (or before a Pong, a rejection or MatchFinished): events as they happen, one
    /// message per step.
    PerStep,
}

impl Delivery {
    /// The delivery a Join asks for; `None` for a value the server does not know.
    pub(crate) fn from_wire(v: i32) -> Option<Delivery> {
        match pb::EventDelivery::try_from(v).ok()? {
            pb::EventDelivery::Unspecified | pb::EventDelivery::AsTheyHappen => {
                Some(Delivery::AsTheyHappen)
            }
            pb::EventDelivery::WithPrompt => Some(Delivery::WithPrompt),
            pb::EventDelivery::PerStep => Some(Delivery::PerStep),
        }
    }

    /// Whether events and accepted answers are held for an `EventBatch` instead of sent alone.
    pub(crate) fn batches(self) -> bool {
        self != Delivery::AsTheyHappen
    }
}

/// How a connection asked for its feed: the delivery of events (seats only; Watch is always
/// [`Delivery::AsTheyHappen`]) and whether a Snapshot follows every step that sent it events
/// (`snapshot_every_step`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct FeedOptions {
    pub(crate) delivery: Delivery,
    pub(crate) snapshots: bool,
}

/// A seat's connection and what waits to go out on it: the messages staged this step, and
/// under [`Delivery::WithPrompt`] and [`Delivery::PerStep`] the events and accepted answers
/// (and, under `PerStep`, the prompt) held for its next batch.
#[derive(Default)]
pub(super) struct Feed {
    /// The connection's number and queue; `None` while the seat is away.
    pub(super) conn: Option<(u64, Outbox)>,
    /// Messages for the connection, queued as one item at the end of the table's step.
    pub(super) staged: Vec<Staged>,
    /// How the connection receives events.
    pub(super) delivery: Delivery,
    /// Events held for the connection until its next prompt, Pong, rejection or MatchFinished
    /// ([`Delivery::WithPrompt`]), or until the end of the step ([`Delivery::PerStep`]).
    pub(super) held: HeldEvents,
    /// Answers to the connection's accepted actions, held with the events.
    pub(super) held_accepted: Vec<pb::ActionAccepted>,
    /// The step's prompt, held until the end of the step ([`Delivery::PerStep`]).
    pub(super) held_prompt: Option<Prompt>,
    /// Whether a Snapshot of the seat's view follows every step that sent it events.
    pub(super) snapshots: bool,
    /// Whether this step sent the connection events (kept only when `snapshots` is on).
    pub(super) stepped: bool,
}

/// What became of a feed's staged messages when the step ended (see [`Feed::queue`]).
#[derive(Debug)]
pub(super) enum Queued {
    /// Queued (or nothing to queue); the connection's task to wake, if it sleeps.
    Done(Option<Waker>),
    /// The connection's queue was full or closed: the connection is dropped (its client resumes
    /// from its last event number), so the seat is away from now on.
    Lost,
}

/// The messages of one step that several seats receive alike, encoded once: an event
/// (as they happen) or an `EventBatch` of events alone (per step, for a seat the step neither
/// prompted nor answered). Seats that see an event alike share its encoded bytes
/// ([`Table::broadcast`]), so events made of the same bytes, by address, are the same message;
/// batches of events alone are the same message when their encoded events are equal.
#[derive(Default)]
pub(super) struct StepFrames {
    events: Vec<(Bytes, Frame)>,
    batches: Vec<(HeldEvents, Frame)>,
}

impl StepFrames {
    /// `m` encoded, or the frame a seat that saw the same was sent. A batch's emptied buffers
    /// go back to `held` and `held_accepted` when those have none, so the next step's events
    /// and answers are held without allocating.
    fn encode(
        &mut self,
        m: Staged,
        held: &mut HeldEvents,
        held_accepted: &mut Vec<pb::ActionAccepted>,
    ) -> Frame {
        match m {
            Staged::Event(e) => {
                if let Some((_, f)) = self
                    .events
                    .iter()
                    .find(|(b, _)| b.as_ptr() == e.as_ptr() && b.len() == e.len())
                {
                    return f.clone();
                }
                let f = Staged::Event(e.clone()).encode();
                self.events.push((e, f.clone()));
                f
            }
            Staged::Batch {
                events,
                prompt: None,
                accepted,
            } if accepted.is_empty() => {
                if let Some((_, f)) = self
                    .batches
                    .iter()
                    .find(|(b, _)| b.bytes() == events.bytes())
                {
                    let f = f.clone();
                    events.recycle(held);
                    recycle(accepted, held_accepted);
                    return f;
                }
                let m = Staged::Batch {
                    events,
                    prompt: None,
                    accepted,
                };
                let f = m.encode();
                if let Staged::Batch {
                    events, accepted, ..
                } = m
                {
                    self.batches.push((events, f.clone()));
                    recycle(accepted, held_accepted);
                }
                f
            }
            m => {
                let f = m.encode();
                if let Staged::Batch {
                    events, accepted, ..
                } = m
                {
                    events.recycle(held);
                    recycle(accepted, held_accepted);
                }
                f
            }
        }
    }
}

/// Gives `v`'s room to `to`, emptied, if `to` has none.
fn recycle<T>(mut v: Vec<T>, to: &mut Vec<T>) {
    if to.capacity() == 0 && v.capacity() > 0 {
        v.clear();
        *to = v;
    }
}

/// The ways the viewers of one event see it, each encoded once (a `NumberedEvent`) into one
/// buffer kept for the table's life, and as shared bytes once a connection needs the event as a
/// message of its own.
#[derive(Default)]
pub(super) struct EventViews {
    /// Each view's encoding in `buf`, and its shared bytes once made.
    encoded: Vec<(Range<usize>, Option<Bytes>)>,
    /// The views themselves, to find a viewer's among them (not kept for a public event).
    seen: Vec<Event>,
    buf: Vec<u8>,
    /// Whether a spectator sees the event whole, and so every viewer does (a seat sees at
    /// least what a spectator sees): then its one view is the first.
    public: bool,
}

impl EventViews {
    /// Starts on event `i` of the log, `e`: forgets the last event's views, and encodes this
    /// one's only view if it hides nothing from anyone (most events), so that no viewer's
    /// view has to be made and compared.
    fn start(&mut self, i: usize, e: &Event, seats: u8) {
        self.encoded.clear();
        self.seen.clear();
        self.buf.clear();
        self.public = event_for(e, None) == *e;
        if self.public {
            self.encode(i, e, seats);
        }
    }

    /// Which view of `e`, event `i` of the log, `viewer` has: encoded if no viewer had it yet.
    fn view(&mut self, i: usize, e: &Event, viewer: Option<Seat>, seats: u8) -> usize {
        if self.public {
            return 0;
        }
        let view = event_for(e, viewer);
        match self.seen.iter().position(|v| *v == view) {
            Some(k) => k,
            None => {
                self.seen.push(view);
                self.encode(i, &view, seats)
            }
        }
    }

    /// Encodes `view` of event `i` as a new view; returns its number.
    fn encode(&mut self, i: usize, view: &Event, seats: u8) -> usize {
        let start = self.buf.len();
        put_numbered_event(&mut self.buf, i as u64 + 1, view, seats);
        self.encoded.push((start..self.buf.len(), None));
        self.encoded.len() - 1
    }

    /// View `k`'s encoding, and its shared bytes if made already.
    fn get(&mut self, k: usize) -> (&[u8], &mut Option<Bytes>) {
        let (range, shared) = &mut self.encoded[k];
        (&self.buf[range.clone()], shared)
    }
}

/// `encoded`'s shared bytes, made the first time they are asked for.
fn shared_bytes(encoded: &[u8], shared: &mut Option<Bytes>) -> Bytes {
    shared
        .get_or_insert_with(|| Bytes::copy_from_slice(encoded))
        .clone()
}

impl Feed {
    /// Whether connection `conn` is the seat's current one.
    pub(super) fn is_on(&self, conn: u64) -> bool {
        self.conn.as_ref().is_some_and(|(c, _)| *c == conn)
    }

    /// Stages `m` (not an event, a prompt or a batch: see [`Feed::event`] and [`Feed::prompt`]). Under a batching delivery a Pong, a
    /// rejection or MatchFinished has the held answers and events (and under
    /// [`Delivery::PerStep`] the step's prompt) sent just before it.
    pub(super) fn send(&mut self, m: Staged) {
        if self.conn.is_none() {
            return;
        }
        self.release();
        self.staged.push(m);
    }

    /// Stages what is held, if anything, as one `EventBatch`.
    fn release(&mut self) {
        if self.held.is_empty() && self.held_accepted.is_empty() && self.held_prompt.is_none() {
            return;
        }
        self.staged.push(Staged::Batch {
            events: self.held.take(),
            prompt: self.held_prompt.take(),
            accepted: std::mem::take(&mut self.held_accepted),
        });
    }

    /// Stages a prompt: under [`Delivery::WithPrompt`] in an `EventBatch` with the held answers
    /// and events; under [`Delivery::PerStep`] it is held for the step's batch.
    pub(super) fn prompt(&mut self, prompt: Prompt) {
        let staged = match self.delivery {
            Delivery::WithPrompt => Staged::Batch {
                events: self.held.take(),
                prompt: Some(prompt),
                accepted: std::mem::take(&mut self.held_accepted),
            },
            Delivery::PerStep => {
                self.held_prompt = Some(prompt);
                return;
            }
            Delivery::AsTheyHappen => Staged::Prompt(prompt),
        };
        self.staged.push(staged);
    }

    /// An event, already redacted for this seat and encoded (a `NumberedEvent`): staged as a
    /// message of its own (as `shared`, the bytes every connection that sees it so shares, made
    /// here if no connection needed them yet), or held for the next batch. Under
    /// [`Delivery::PerStep`] an event after the step's prompt makes that prompt stale (an event
    /// comes with a new state): it is dropped, and the table prompts again for the new state if
    /// the seat may act in it.
    pub(super) fn event(&mut self, encoded: &[u8], shared: &mut Option<Bytes>) {
        if self.conn.is_none() {
            return;
        }
        self.stepped = self.snapshots;
        match self.delivery {
            Delivery::AsTheyHappen => {
                let e = shared_bytes(encoded, shared);
                self.staged.push(Staged::Event(e));
            }
            Delivery::WithPrompt => self.held.push(encoded),
            Delivery::PerStep => {
                self.held_prompt = None;
                self.held.push(encoded);
            }
        }
    }

    /// Holds the answer to an accepted action for the next `EventBatch`: under
    /// [`Delivery::WithPrompt`] the one this step staged already (the action gave the seat its
    /// next prompt at once), or a later one; under [`Delivery::PerStep`] the step's.
    pub(super) fn hold_accepted(&mut self, a: pb::ActionAccepted) {
        if self.delivery == Delivery::PerStep {
            self.held_accepted.push(a);
            return;
        }
        let staged = self.staged.iter_mut().rev().find_map(|m| match m {
            Staged::Batch {
                prompt: Some(_),
                accepted,
                ..
            } => Some(accepted),
            _ => None,
        });
        match staged {
            Some(accepted) => accepted.push(a),
            None => self.held_accepted.push(a),
        }
    }

    /// Queues what was staged as one item of the connection's queue; under
    /// [`Delivery::PerStep`] what the step held goes with it, as one `EventBatch`. Messages other
    /// seats' connections were sent alike this step are taken from `frames` instead of being
    /// encoded again.
    pub(super) fn queue(&mut self, frames: &mut StepFrames) -> Queued {
        if self.delivery == Delivery::PerStep && self.conn.is_some() {
            self.release();
        }
        if self.staged.is_empty() {
            return Queued::Done(None);
        }
        let Some((_, outbox)) = self.conn.as_ref() else {
            self.staged.clear();
            return Queued::Done(None);
        };
        // Drained, not taken: the staging vector keeps its room for the next step.
        let out = {
            let one = self.staged.len() == 1;
            let (held, held_accepted) = (&mut self.held, &mut self.held_accepted);
            let mut encoded = self
                .staged
                .drain(..)
                .map(|m| frames.encode(m, held, held_accepted));
            match encoded.next() {
                Some(f) if one => Out::Frame(f),
                Some(f) => Out::Frames(std::iter::once(f).chain(encoded).collect()),
                None => return Queued::Done(None),
            }
        };
        match outbox.put(out) {
            Ok(waker) => Queued::Done(waker),
            Err(_) => {
                self.disconnect();
                Queued::Lost
            }
        }
    }

    /// Forgets the connection and everything waiting for it: held events and answers belong to
    /// the connection, and a new one resumes from the number its client names.
    pub(super) fn disconnect(&mut self) {
        self.conn = None;
        self.staged.clear();
        self.held.clear();
        self.held_accepted.clear();
        self.held_prompt = None;
        self.stepped = false;
    }
}

pub(crate) fn message(kind: pb::server_message::Kind) -> pb::ServerMessage {
    pb::ServerMessage { kind: Some(kind) }
}

impl Table {
    /// Appends event `i` of the log (numbered from 1) as `viewer` sees it, encoded (a
    /// `NumberedEvent`).
    pub(super) fn put_event(&self, buf: &mut Vec<u8>, i: usize, viewer: Option<Seat>) {
        let view = event_for(&self.log[i], viewer);
        put_numbered_event(buf, i as u64 + 1, &view, self.game.seats());
    }

    pub(super) fn snapshot(&self, viewer: Option<Seat>) -> pb::Snapshot {
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

    /// Stages `m` for seat `s`'s connection (see [`Feed::send`] and [`Table::flush`]).
    pub(super) fn send_seat(&mut self, s: Seat, m: pb::ServerMessage) {
        self.seats[s as usize].feed.send(Staged::message(m));
    }

    /// Queues what was staged for a seat as one item and wakes its connection; a full or closed
    /// queue drops the connection (the client resumes from its last event number).
    pub(super) fn flush_seat(&mut self, s: Seat) {
        if let Some(w) = self.queue_seat(s, &mut StepFrames::default()) {
            w.wake();
        }
    }

    /// Stages the seat's whole view if this step sent it events and it asked for that
    /// (`snapshot_every_step`): after the step's events, before anything that ends the stream.
    pub(super) fn stage_snapshot(&mut self, s: Seat) {
        if self.seats[s as usize].feed.stepped {
            let snapshot = self.snapshot(Some(s));
            let feed = &mut self.seats[s as usize].feed;
            feed.stepped = false;
            feed.send(Staged::message(message(
                pb::server_message::Kind::Snapshot(snapshot),
            )));
        }
    }

    /// Queues what was staged for a seat as one item; returns the connection's waker, to wake
    /// when the step's messages are all queued. A lost connection leaves the seat away.
    pub(super) fn queue_seat(&mut self, s: Seat, frames: &mut StepFrames) -> Option<Waker> {
        self.stage_snapshot(s);
        let seat = &mut self.seats[s as usize];
        match seat.feed.queue(frames) {
            Queued::Done(waker) => waker,
            Queued::Lost => {
                seat.away_since = Some(Instant::now());
                None
            }
        }
    }

    /// Queues everything staged for every connection, then wakes them: a connection that
    /// carries several seats finds all of their messages when it runs, and writes them at once.
    pub(super) fn flush(&mut self) {
        // Taken, and put back emptied: its room is kept for the next step.
        let mut wake = std::mem::take(&mut self.wakers);
        let mut frames = StepFrames::default();
        for s in 0..self.game.seats() {
            wake.extend(self.queue_seat(s, &mut frames));
        }
        if !self.spectators_staged.is_empty() {
            let staged = std::mem::take(&mut self.spectators_staged);
            // The spectators' view after the step, for those that asked (encoded once).
            let snapshot = (self.spectators.iter().any(|(_, _, snapshots)| *snapshots)
                && staged.iter().any(|m| matches!(m, Staged::Event(_))))
            .then(|| {
                let m = message(pb::server_message::Kind::Snapshot(self.snapshot(None)));
                Staged::message(m).encode()
            });
            // Encoded once for every spectator.
            let frames: Vec<_> = staged.iter().map(Staged::encode).collect();
            self.spectators.retain(|(_, o, snapshots)| {
                let mut out = frames.clone();
                if let (true, Some(snapshot)) = (*snapshots, &snapshot) {
                    // After the step's events, before MatchFinished (which ends the stream).
                    let at = out.len() - usize::from(out.last().is_some_and(|f| f.last));
                    out.insert(at, snapshot.clone());
                }
                match o.put(Out::Frames(out)) {
                    Ok(w) => {
                        wake.extend(w);
                        true
                    }
                    Err(_) => false,
                }
            });
        }
        for w in wake.drain(..) {
            w.wake();
        }
        self.wakers = wake;
    }

    /// Stages the events from `from` on for every connection, each redacted for its viewer.
    /// Each event is encoded once per way of seeing it: viewers that see it alike are given the
    /// same bytes.
    pub(super) fn broadcast(&mut self, from: usize) {
        let seats = self.game.seats();
        let views = &mut self.views;
        for i in from..self.log.len() {
            let e = &self.log[i];
            views.start(i, e, seats);
            for s in 0..seats {
                let feed = &mut self.seats[s as usize].feed;
                if feed.conn.is_some() {
                    let k = views.view(i, e, Some(s), seats);
                    let (encoded, shared) = views.get(k);
                    feed.event(encoded, shared);
                }
            }
            if !self.spectators.is_empty() {
                let k = views.view(i, e, None, seats);
                let (encoded, shared) = views.get(k);
                let b = shared_bytes(encoded, shared);
                self.spectators_staged.push(Staged::Event(b));
            }
        }
    }

    /// Stages a prompt for seat `s` (see [`Feed::prompt`]), if it is connected.
    pub(super) fn send_prompt(&mut self, s: Seat, required: bool) {
        if self.seats[s as usize].feed.conn.is_none() {
            return;
        }
        let prompt = self.prompt_for(s, required);
        self.seats[s as usize].feed.prompt(prompt);
    }

    /// Seat `s`'s prompt for the current state; `required` for the seat to move, which is
    /// told its deadline and bank.
    pub(super) fn prompt_for(&mut self, s: Seat, required: bool) -> Prompt {
        let obs = self.game.observation(s);
        let seat = &self.seats[s as usize];
        let (deadline, left) = if required && !self.clock.untimed {
            // The monotonic clock read once for the deadline's wall time and the time left.
            let now = Instant::now();
            let deadline = self.decision_started.unwrap_or(now) + self.clock.decision + seat.bank;
            (
                unix_ms(deadline, now),
                deadline.saturating_duration_since(now),
            )
        } else {
            (0, Duration::ZERO)
        };
        // Its legal actions and observation are written from `obs`.
        let head = pb::DecisionPrompt {
            state_id: self.state_id,
            legal_actions: Vec::new(),
            required,
            deadline_unix_ms: deadline,
            time_left_ms: left.as_millis() as u32,
            time_bank_ms: seat.bank.as_millis() as u32,
            observation: None,
            last_event_number: self.log.len() as u64,
        };
        self.shared.prompt(&head, &obs, Some(self.game.rules()))
    }
}

#[cfg(test)]
mod tests {
    use maumau_engine::{Game, MatchConfig, ProfileId};

    use super::*;
    use crate::frames::SharedParts;
    use crate::outbox::{Inbox, outbox};

    fn accepted(request_id: u64) -> pb::ActionAccepted {
        pb::ActionAccepted {
            request_id,
            state_id: request_id + 1,
            action_index: 0,
        }
    }

    fn pong() -> pb::ServerMessage {
        message(pb::server_message::Kind::Pong(pb::Pong::default()))
    }

    /// A prompt for the seat to move in a fresh classic game.
    fn a_prompt() -> Prompt {
        let config = MatchConfig::new(ProfileId::Classic, 3);
        let game = Game::new(config, 1).expect("a valid config");
        let seat = game.to_act().expect("a seat to move");
        let obs = game.observation(seat);
        SharedParts::new(&config).prompt(&pb::DecisionPrompt::default(), &obs, Some(game.rules()))
    }

    fn connected(delivery: Delivery, capacity: usize) -> (Feed, Inbox) {
        let (tx, rx) = outbox(capacity, None);
        let feed = Feed {
            conn: Some((7, tx)),
            delivery,
            ..Feed::default()
        };
        (feed, rx)
    }

    /// The shape of what is staged: M message, E event, P prompt, B(events, prompt?, answers).
    fn shape(feed: &Feed) -> Vec<String> {
        feed.staged
            .iter()
            .map(|m| match m {
                Staged::Message(_) | Staged::Encoded(_) => "M".to_string(),
                Staged::Event(_) => "E".to_string(),
                Staged::Prompt(_) => "P".to_string(),
                Staged::Batch {
                    events,
                    prompt,
                    accepted,
                } => format!(
                    "B({},{},{})",
                    events.len(),
                    prompt.is_some(),
                    accepted.len()
                ),
            })
            .collect()
    }

    #[test]
    fn as_they_happen_stages_each_event_and_prompt_in_order() {
        let (mut feed, _rx) = connected(Delivery::AsTheyHappen, 4);
        feed.event(b"e1", &mut None);
        feed.event(b"e2", &mut None);
        feed.prompt(a_prompt());
        feed.send(Staged::message(pong()));
        assert_eq!(shape(&feed), ["E", "E", "P", "M"]);
        assert!(feed.held.is_empty());
    }

    #[test]
    fn with_prompt_holds_events_and_answers_for_one_batch_with_the_prompt() {
        let (mut feed, _rx) = connected(Delivery::WithPrompt, 4);
        feed.hold_accepted(accepted(1));
        feed.event(b"e1", &mut None);
        feed.event(b"e2", &mut None);
        assert!(feed.staged.is_empty(), "nothing goes out before the prompt");
        feed.prompt(a_prompt());
        assert_eq!(shape(&feed), ["B(2,true,1)"]);
        // An answer accepted after the prompt was staged joins that batch.
        feed.hold_accepted(accepted(2));
        assert_eq!(shape(&feed), ["B(2,true,2)"]);
        assert!(feed.held.is_empty() && feed.held_accepted.is_empty());
    }

    #[test]
    fn with_prompt_releases_what_it_holds_before_any_other_message() {
        let (mut feed, _rx) = connected(Delivery::WithPrompt, 4);
        feed.send(Staged::message(pong()));
        assert_eq!(shape(&feed), ["M"], "nothing held: no empty batch");
        feed.event(b"e1", &mut None);
        feed.hold_accepted(accepted(3));
        feed.send(Staged::message(pong()));
        assert_eq!(shape(&feed), ["M", "B(1,false,1)", "M"]);
    }

    #[test]
    fn per_step_sends_what_a_step_held_as_one_batch_when_the_step_ends() {
        let (mut feed, _rx) = connected(Delivery::PerStep, 4);
        feed.event(b"e1", &mut None);
        feed.hold_accepted(accepted(1));
        feed.event(b"e2", &mut None);
        feed.prompt(a_prompt());
        assert!(feed.staged.is_empty(), "held until the step ends");
        feed.release();
        assert_eq!(shape(&feed), ["B(2,true,1)"]);
        // A step with events and no prompt for the seat still sends them, at its end.
        feed.staged.clear();
        feed.event(b"e3", &mut None);
        feed.release();
        assert_eq!(shape(&feed), ["B(1,false,0)"]);
        assert!(matches!(
            feed.queue(&mut StepFrames::default()),
            Queued::Done(_)
        ));
        assert!(feed.held.is_empty() && feed.held_prompt.is_none());
    }

    #[test]
    fn per_step_drops_a_prompt_that_a_later_event_of_the_step_made_stale() {
        let (mut feed, _rx) = connected(Delivery::PerStep, 4);
        feed.prompt(a_prompt());
        feed.event(b"e1", &mut None);
        feed.release();
        assert_eq!(shape(&feed), ["B(1,false,0)"]);
        feed.staged.clear();
        // What a step held goes out before a Pong, prompt included, in order.
        feed.event(b"e2", &mut None);
        feed.prompt(a_prompt());
        feed.send(Staged::message(pong()));
        assert_eq!(shape(&feed), ["B(1,true,0)", "M"]);
    }

    #[test]
    fn a_seat_away_gets_nothing_staged() {
        let mut feed = Feed::default();
        feed.event(b"e1", &mut None);
        feed.send(Staged::message(pong()));
        assert!(feed.staged.is_empty() && feed.held.is_empty());
        assert!(matches!(
            feed.queue(&mut StepFrames::default()),
            Queued::Done(None)
        ));
        assert!(!feed.is_on(0));
    }

    #[test]
    fn a_full_queue_loses_the_connection_and_everything_held_for_it() {
        let (mut feed, _rx) = connected(Delivery::WithPrompt, 1);
        assert!(feed.is_on(7) && !feed.is_on(8));
        feed.send(Staged::message(pong()));
        assert!(matches!(
            feed.queue(&mut StepFrames::default()),
            Queued::Done(_)
        ));
        assert!(
            feed.staged.is_empty(),
            "the step's messages went as one item"
        );
        feed.event(b"e1", &mut None);
        feed.hold_accepted(accepted(4));
        feed.send(Staged::message(pong()));
        assert!(
            matches!(feed.queue(&mut StepFrames::default()), Queued::Lost),
            "the queue holds one item"
        );
        assert!(feed.conn.is_none());
        assert!(feed.staged.is_empty() && feed.held.is_empty() && feed.held_accepted.is_empty());
    }

    /// What [`EventViews`] relies on to encode an event once for everyone: an event a
    /// spectator sees whole, every seat sees whole (through whole matches of every profile).
    #[test]
    fn an_event_a_spectator_sees_whole_every_seat_sees_whole() {
        for (profile, seats) in [
            (ProfileId::Classic, 4),
            (ProfileId::PenaltyPoints, 3),
            (ProfileId::Brazilian, 8),
            (ProfileId::Romanian32, 2),
        ] {
            let mut game = Game::new(MatchConfig::new(profile, seats), 9).expect("a valid config");
            let mut log = Vec::new();
            let mut hidden = 0;
            while game.phase() != maumau_engine::Phase::Over && log.len() < 20_000 {
                let seat = game.to_act().expect("a seat to move");
                let legal = game.legal_actions(seat);
                let pick = legal[log.len() % legal.len()];
                let from = log.len();
                game.apply_with(seat, pick, &mut log)
                    .expect("a legal action");
                for e in &log[from..] {
                    if event_for(e, None) != *e {
                        hidden += 1;
                        continue;
                    }
                    for s in 0..seats {
                        assert_eq!(event_for(e, Some(s)), *e, "{profile:?}: {e:?}");
                    }
                }
            }
            assert!(hidden > 0, "{profile:?}: some events hide something");
        }
    }
}
