//! What a table sends, encoded once, straight into the bytes that go on the wire.
//!
//! Every message a stream carries is a `PlayResponse` or `WatchResponse`: field 1, a
//! `ServerMessage`. The table encodes each event once per way of seeing it (usually once for
//! every seat and spectator alike: only a seat's own draws differ) and copies those few bytes
//! to every connection that sees it so; a message is encoded once when its step is queued, and
//! a spectators' message once for all of them. The nesting around an encoded part (response,
//! `ServerMessage`, `EventBatch`) is written here with each length computed once, where prost
//! would compute the length of everything inside again at every level.
//!
//! A decision prompt is written field by field from the engine's [`Observation`], without the
//! `maumau.v1` types in between: its legal actions from a table of every action's encoding
//! (made once from [`wire::legal_action_to_wire`]), the rest of the observation as
//! [`wire::observation_to_wire`] maps it. The observation's two largest parts, the match
//! configuration and the discard pile (up to a deck of cards), are the same for every seat and
//! change by a card at a time: [`SharedParts`] keeps both encoded for the match and extends the
//! pile's encoding as cards land on it. The bytes are prost's, field for field (the tests
//! check them against prost's encoding of the `wire` conversions through whole matches).

use std::sync::OnceLock;

use bytes::Bytes;
use maumau::encoded::{self, field_len};
use maumau::{pb, wire};
use maumau_engine::{ACTION_COUNT, Action, Card, Event, MatchConfig, Observation, Rules};
use prost::Message;
use prost::encoding::encoded_len_varint;

/// `ServerMessage.event` and `.prompt`.
const EVENT: u32 = 3;
const PROMPT: u32 = 4;
/// `ServerMessage.batch`.
const BATCH: u32 = 9;
/// `EventBatch.events`, `.prompt` and `.accepted`.
const BATCH_EVENTS: u32 = 1;
const BATCH_PROMPT: u32 = 2;
const BATCH_ACCEPTED: u32 = 3;
/// `PlayResponse.message` and `WatchResponse.message`.
const MESSAGE: u32 = 1;
/// `NumberedEvent.number` and `.event`.
const NUMBERED_NUMBER: u32 = 1;
const NUMBERED_EVENT: u32 = 2;

/// `DecisionPrompt`'s fields.
mod prompt {
    pub(super) const STATE_ID: u32 = 1;
    pub(super) const LEGAL_ACTIONS: u32 = 2;
    pub(super) const REQUIRED: u32 = 3;
    pub(super) const DEADLINE: u32 = 4;
    pub(super) const TIME_LEFT: u32 = 5;
    pub(super) const TIME_BANK: u32 = 6;
    pub(super) const OBSERVATION: u32 = 7;
    pub(super) const LAST_EVENT: u32 = 8;
}

/// `Observation`'s fields.
mod observation {
    pub(super) const SEAT: u32 = 1;
    pub(super) const CONFIG: u32 = 2;
    pub(super) const ROUND: u32 = 3;
    pub(super) const DEALER: u32 = 4;
    pub(super) const PHASE: u32 = 5;
    pub(super) const TO_ACT: u32 = 6;
    pub(super) const CLOCKWISE: u32 = 7;
    pub(super) const HAND: u32 = 8;
    pub(super) const HAND_SIZES: u32 = 9;
    pub(super) const DISCARD: u32 = 10;
    pub(super) const TOP: u32 = 11;
    pub(super) const NAMED_SUIT: u32 = 12;
    pub(super) const DEBT: u32 = 13;
    pub(super) const STOCK_SIZE: u32 = 14;
    pub(super) const OFFENCE: u32 = 15;
    pub(super) const PENDING_OUT: u32 = 16;
    pub(super) const LAST_CALLS: u32 = 17;
    pub(super) const JUST_ACCUSED: u32 = 18;
    pub(super) const DRAWN_CARD: u32 = 19;
    pub(super) const PENALTY_CARDS: u32 = 20;
    pub(super) const TURNS: u32 = 21;
    pub(super) const TOTALS: u32 = 22;
    pub(super) const ROUNDS_WON: u32 = 23;
}

/// `LegalAction.opens_offence`.
const LEGAL_OPENS_OFFENCE: u32 = 3;

/// Protobuf's wire types.
const VARINT: u32 = 0;
const LEN: u32 = 2;

/// Appends `v` as a varint.
#[inline]
fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push(v as u8 | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

#[inline]
fn put_key(buf: &mut Vec<u8>, tag: u32, wire_type: u32) {
    put_varint(buf, u64::from(tag << 3 | wire_type));
}

/// A proto3 scalar field (integer, bool or enum): left out when zero. An enum or int32 is
/// passed sign-extended (`v as i64 as u64`), as protobuf encodes it.
#[inline]
fn put_scalar(buf: &mut Vec<u8>, tag: u32, v: u64) {
    if v != 0 {
        put_key(buf, tag, VARINT);
        put_varint(buf, v);
    }
}

/// An `optional` scalar field: present when set, even at zero.
#[inline]
fn put_optional(buf: &mut Vec<u8>, tag: u32, v: Option<u64>) {
    if let Some(v) = v {
        put_key(buf, tag, VARINT);
        put_varint(buf, v);
    }
}

/// The key and length of a length-delimited field whose `len` bytes follow.
#[inline]
fn put_header(buf: &mut Vec<u8>, tag: u32, len: usize) {
    put_key(buf, tag, LEN);
    put_varint(buf, len as u64);
}

/// A length-delimited field: key, length, `content`.
#[inline]
fn put_field(buf: &mut Vec<u8>, tag: u32, content: &[u8]) {
    put_header(buf, tag, content.len());
    buf.extend_from_slice(content);
}

/// A packed repeated scalar field (left out when empty).
fn put_packed(buf: &mut Vec<u8>, tag: u32, values: impl Iterator<Item = u64> + Clone) {
    let len: usize = values.clone().map(encoded_len_varint).sum();
    if len == 0 {
        return;
    }
    put_header(buf, tag, len);
    for v in values {
        put_varint(buf, v);
    }
}

/// An enum's wire number, as [`put_scalar`] takes it.
fn enum_value(v: i32) -> u64 {
    i64::from(v) as u64
}

/// A `Card` message field.
#[inline]
fn put_card(buf: &mut Vec<u8>, tag: u32, card: Card) {
    let c = pb::Card::from(card);
    put_key(buf, tag, LEN);
    match (u8::try_from(c.rank), u8::try_from(c.suit)) {
        // Every card: both fields set, each a one-byte varint.
        (Ok(rank @ 1..0x80), Ok(suit @ 1..0x80)) => {
            buf.extend_from_slice(&[4, 1 << 3 | VARINT as u8, rank, 2 << 3 | VARINT as u8, suit]);
        }
        _ => {
            put_varint(buf, c.encoded_len() as u64);
            put_scalar(buf, 1, enum_value(c.rank));
            put_scalar(buf, 2, enum_value(c.suit));
        }
    }
}

/// One message for a stream, encoded.
#[derive(Clone)]
pub(crate) struct Frame {
    pub(crate) response: encoded::Response,
    /// MatchFinished: the stream ends after it.
    pub(crate) last: bool,
}

/// Appends the encoded `NumberedEvent` number `number` showing `event` (already redacted for its
/// viewer, see `maumau_engine::event_for`); `seats` sizes a round result's per-seat lists.
pub(crate) fn put_numbered_event(buf: &mut Vec<u8>, number: u64, event: &Event, seats: u8) {
    put_scalar(buf, NUMBERED_NUMBER, number);
    if !put_frequent_event(buf, event) {
        let e = wire::event_to_wire(event, seats);
        put_header(buf, NUMBERED_EVENT, e.encoded_len());
        e.encode_raw(buf);
    }
}

/// `Event`'s fields (its `kind`) for the events a match logs most.
mod event {
    pub(super) const CARD_DRAWN: u32 = 2;
    pub(super) const TURN_STARTED: u32 = 5;
    pub(super) const CARD_PLAYED: u32 = 6;
    pub(super) const PASSED: u32 = 8;
}

/// Writes `NumberedEvent.event` for the four kinds of event that make most of a match (a turn,
/// a play, a draw, a pass) as [`wire::event_to_wire`] maps them, without the `maumau.v1` types
/// and prost's length passes; false for any other event, left to prost.
fn put_frequent_event(buf: &mut Vec<u8>, event: &Event) -> bool {
    let kind = |buf: &mut Vec<u8>, tag: u32, fields: &dyn Fn(&mut Vec<u8>)| {
        put_small(buf, NUMBERED_EVENT, |b| put_small(b, tag, fields));
    };
    match *event {
        Event::TurnStarted { seat } => kind(buf, event::TURN_STARTED, &|b| {
            put_scalar(b, 1, seat.into());
        }),
        Event::Played {
            seat,
            card,
            suit,
            call,
        } => kind(buf, event::CARD_PLAYED, &|b| {
            put_scalar(b, 1, seat.into());
            put_card(b, 2, card);
            let suit = suit.map_or(0, |s| pb::Suit::from(s) as i32);
            put_scalar(b, 3, enum_value(suit));
            put_scalar(b, 4, enum_value(pb::Call::from(call) as i32));
        }),
        Event::Drew { seat, card, cause } => kind(buf, event::CARD_DRAWN, &|b| {
            put_scalar(b, 1, seat.into());
            if let Some(card) = card {
                put_card(b, 2, card);
            }
            put_scalar(b, 3, enum_value(pb::DrawCause::from(cause) as i32));
        }),
        Event::Passed { seat, automatic } => kind(buf, event::PASSED, &|b| {
            put_scalar(b, 1, seat.into());
            put_scalar(b, 2, u64::from(automatic));
        }),
        _ => return false,
    }
    true
}

/// A message field whose content `fields` writes: its length is written after it, in the one
/// byte left for it (content this short always fits; longer content is moved to make room).
fn put_small(buf: &mut Vec<u8>, tag: u32, fields: impl FnOnce(&mut Vec<u8>)) {
    put_key(buf, tag, LEN);
    let at = buf.len();
    buf.push(0);
    fields(buf);
    let len = buf.len() - at - 1;
    if len < 0x80 {
        buf[at] = len as u8;
    } else {
        let mut varint = Vec::new();
        put_varint(&mut varint, len as u64);
        buf.splice(at..=at, varint);
    }
}

/// Events held for an `EventBatch`, already encoded as its `events` fields, in order.
#[derive(Default)]
pub(crate) struct HeldEvents(Vec<u8>);

impl HeldEvents {
    /// Appends an encoded `NumberedEvent`.
    pub(crate) fn push(&mut self, numbered: &[u8]) {
        match u8::try_from(numbered.len()) {
            // An event's usual few bytes: key and one-byte length in one go.
            Ok(len @ 0..0x80) => {
                let key = (BATCH_EVENTS << 3 | LEN) as u8;
                self.0.reserve(2 + numbered.len());
                self.0.extend_from_slice(&[key, len]);
                self.0.extend_from_slice(numbered);
            }
            _ => put_field(&mut self.0, BATCH_EVENTS, numbered),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }

    /// How many events are held (read back from the encoding: for tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        let mut rest = &self.0[..];
        let mut n = 0;
        while !rest.is_empty() {
            let (_, len) = (prost::encoding::decode_key(&mut rest), {
                prost::encoding::decode_varint(&mut rest).expect("a length")
            });
            rest = &rest[len as usize..];
            n += 1;
        }
        n
    }

    /// The encoded fields, to compare two seats' events.
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// Takes the events, leaving none (and no room).
    pub(crate) fn take(&mut self) -> HeldEvents {
        std::mem::take(self)
    }

    /// Gives this (emptied) room back to `to` if `to` has none, so the next step's events are
    /// held without allocating.
    pub(crate) fn recycle(mut self, to: &mut HeldEvents) {
        if to.0.capacity() == 0 && self.0.capacity() > 0 {
            self.0.clear();
            *to = self;
        }
    }
}

/// Every action's `LegalAction` encoding without an offence (it is the last field, appended
/// when there is one), by dense index: made once from [`wire::legal_action_to_wire`].
fn legal_action_encodings() -> &'static [Vec<u8>] {
    static TABLE: OnceLock<Vec<Vec<u8>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        (0..ACTION_COUNT)
            .map(|i| {
                Action::from_index(i)
                    .map(|a| wire::legal_action_to_wire(a, None).encode_to_vec())
                    .unwrap_or_default()
            })
            .collect()
    })
}

/// The parts of a match's observations every seat sees alike, encoded once: the configuration,
/// and the discard pile so far (extended card by card; encoded anew when the pile is turned
/// into a new stock).
pub(crate) struct SharedParts {
    /// `Observation.config`, as an encoded field.
    config: Vec<u8>,
    /// The pile whose cards `discard` encodes, bottom to top.
    pile: Vec<Card>,
    /// One encoded `Observation.discard` field per card of `pile`.
    discard: Vec<u8>,
    /// The observation being encoded, before its length is known.
    scratch: Vec<u8>,
}

impl SharedParts {
    pub(crate) fn new(config: &MatchConfig) -> SharedParts {
        let mut encoded = Vec::new();
        prost::encoding::message::encode(
            observation::CONFIG,
            &pb::MatchConfig::from(config),
            &mut encoded,
        );
        SharedParts {
            config: encoded,
            pile: Vec::new(),
            discard: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// `head` (whose legal actions and observation are ignored) with the legal actions and the
    /// observation of `obs`, encoded; `rules` are the match's, to mark the actions that open an
    /// offence (as [`wire::legal_actions_to_wire`] does).
    pub(crate) fn prompt(
        &mut self,
        head: &pb::DecisionPrompt,
        obs: &Observation,
        rules: Option<&Rules>,
    ) -> Prompt {
        self.extend_pile(obs);
        self.scratch.clear();
        put_observation(&mut self.scratch, obs, &self.config, &self.discard);
        let legal = legal_action_encodings();
        let mut buf = Vec::with_capacity(
            64 + obs.legal.len() * 24 + field_len(prompt::OBSERVATION, self.scratch.len()),
        );
        put_scalar(&mut buf, prompt::STATE_ID, head.state_id);
        for &a in obs.legal.iter() {
            let body = legal.get(a.index()).map_or(&[][..], Vec::as_slice);
            let opens = rules
                .and_then(|r| obs.offence_of(r, a))
                .map(|k| enum_value(pb::OffenceKind::from(k) as i32))
                .filter(|&k| k != 0);
            let extra = opens.map_or(0, |k| 1 + encoded_len_varint(k));
            put_header(&mut buf, prompt::LEGAL_ACTIONS, body.len() + extra);
            buf.extend_from_slice(body);
            if let Some(k) = opens {
                put_scalar(&mut buf, LEGAL_OPENS_OFFENCE, k);
            }
        }
        put_scalar(&mut buf, prompt::REQUIRED, u64::from(head.required));
        put_scalar(&mut buf, prompt::DEADLINE, head.deadline_unix_ms);
        put_scalar(&mut buf, prompt::TIME_LEFT, head.time_left_ms.into());
        put_scalar(&mut buf, prompt::TIME_BANK, head.time_bank_ms.into());
        put_field(&mut buf, prompt::OBSERVATION, &self.scratch);
        put_scalar(&mut buf, prompt::LAST_EVENT, head.last_event_number);
        Prompt(buf)
    }

    /// Brings the pile's encoding up to `obs`'s pile.
    fn extend_pile(&mut self, obs: &Observation) {
        let pile = obs.discard.as_slice();
        if !pile.starts_with(&self.pile) {
            self.pile.clear();
            self.discard.clear();
        }
        for &card in &pile[self.pile.len()..] {
            put_card(&mut self.discard, observation::DISCARD, card);
            self.pile.push(card);
        }
    }
}

/// Appends the fields of `obs` as [`wire::observation_to_wire`] maps them, in field order,
/// with `config` and `discard` (those two fields, encoded) in their places.
fn put_observation(buf: &mut Vec<u8>, obs: &Observation, config: &[u8], discard: &[u8]) {
    use observation as f;
    let seats = usize::from(obs.config.seats);
    let per_seat = |n: usize| n.min(seats);
    put_optional(buf, f::SEAT, obs.viewer.map(u64::from));
    buf.extend_from_slice(config);
    put_scalar(buf, f::ROUND, obs.round.into());
    put_scalar(buf, f::DEALER, obs.dealer.into());
    put_scalar(buf, f::PHASE, enum_value(pb::Phase::from(obs.phase) as i32));
    put_optional(buf, f::TO_ACT, obs.to_act.map(u64::from));
    put_scalar(buf, f::CLOCKWISE, u64::from(obs.clockwise));
    for card in obs.hand.iter() {
        put_card(buf, f::HAND, card);
    }
    let sizes = &obs.hand_sizes[..per_seat(obs.hand_sizes.len())];
    put_packed(buf, f::HAND_SIZES, sizes.iter().map(|&n| u64::from(n)));
    buf.extend_from_slice(discard);
    if let Some(top) = obs.discard.top() {
        put_card(buf, f::TOP, top);
    }
    let named = obs.named_suit.map_or(0, |s| pb::Suit::from(s) as i32);
    put_scalar(buf, f::NAMED_SUIT, enum_value(named));
    put_scalar(buf, f::DEBT, obs.debt.into());
    put_scalar(buf, f::STOCK_SIZE, obs.stock_size.into());
    if let Some(o) = obs.offence {
        let o = pb::Offence::from(o);
        put_header(buf, f::OFFENCE, o.encoded_len());
        put_scalar(buf, 1, o.offender.into());
        put_scalar(buf, 2, enum_value(o.kind));
    }
    put_optional(buf, f::PENDING_OUT, obs.pending_out.map(u64::from));
    let calls = &obs.last_calls[..per_seat(obs.last_calls.len())];
    let call = |c: &maumau_engine::Call| enum_value(pb::Call::from(*c) as i32);
    put_packed(buf, f::LAST_CALLS, calls.iter().map(call));
    put_scalar(buf, f::JUST_ACCUSED, u64::from(obs.just_accused));
    if let Some(card) = obs.drawn_card {
        put_card(buf, f::DRAWN_CARD, card);
    }
    for card in obs.penalty_cards.iter() {
        put_card(buf, f::PENALTY_CARDS, card);
    }
    put_scalar(buf, f::TURNS, obs.turns.into());
    let totals = &obs.totals[..per_seat(obs.totals.len())];
    // sint32: zigzag.
    let zigzag = |&t: &i32| u64::from(((t << 1) ^ (t >> 31)) as u32);
    put_packed(buf, f::TOTALS, totals.iter().map(zigzag));
    let won = &obs.rounds_won[..per_seat(obs.rounds_won.len())];
    put_packed(buf, f::ROUNDS_WON, won.iter().map(|&w| u64::from(w)));
}

/// A decision prompt, encoded (the content of a `DecisionPrompt` field).
pub(crate) struct Prompt(Vec<u8>);

/// A message not yet encoded, as a table stages it for a connection.
pub(crate) enum Staged {
    /// Any message but an event, a prompt or a batch (boxed: these are the rare ones).
    Message(Box<pb::ServerMessage>),
    /// A message encoded already (one that several connections receive alike).
    Encoded(Frame),
    /// One event (an encoded `NumberedEvent`).
    Event(Bytes),
    /// A prompt on its own (`EVENT_DELIVERY_AS_THEY_HAPPEN`).
    Prompt(Prompt),
    /// An `EventBatch`: held answers, events, and (when it released them) the prompt.
    Batch {
        events: HeldEvents,
        prompt: Option<Prompt>,
        accepted: Vec<pb::ActionAccepted>,
    },
}

/// A `PlayResponse` whose message is the field `tag` of `ServerMessage` with `len` bytes of
/// content: the buffer, its two headers written, with room for exactly the content.
fn response(tag: u32, len: usize) -> Vec<u8> {
    let kind = field_len(tag, len);
    let mut buf = Vec::with_capacity(field_len(MESSAGE, kind));
    put_header(&mut buf, MESSAGE, kind);
    put_header(&mut buf, tag, len);
    buf
}

impl Staged {
    /// `m`, to be encoded when its step is queued.
    pub(crate) fn message(m: pb::ServerMessage) -> Staged {
        Staged::Message(Box::new(m))
    }

    /// The encoded message.
    pub(crate) fn encode(&self) -> Frame {
        match self {
            Staged::Message(m) => Frame {
                response: encoded::Response::new(m),
                last: matches!(m.kind, Some(pb::server_message::Kind::Finished(_))),
            },
            Staged::Encoded(f) => f.clone(),
            Staged::Event(e) => {
                let mut buf = response(EVENT, e.len());
                buf.extend_from_slice(e);
                frame(buf)
            }
            Staged::Prompt(p) => {
                let mut buf = response(PROMPT, p.0.len());
                buf.extend_from_slice(&p.0);
                frame(buf)
            }
            Staged::Batch {
                events,
                prompt,
                accepted,
            } => {
                let accepted_len: usize = accepted
                    .iter()
                    .map(|a| field_len(BATCH_ACCEPTED, a.encoded_len()))
                    .sum();
                let batch = events.0.len()
                    + prompt
                        .as_ref()
                        .map_or(0, |p| field_len(BATCH_PROMPT, p.0.len()))
                    + accepted_len;
                let mut buf = response(BATCH, batch);
                buf.extend_from_slice(&events.0);
                if let Some(p) = prompt {
                    put_field(&mut buf, BATCH_PROMPT, &p.0);
                }
                for a in accepted {
                    put_header(&mut buf, BATCH_ACCEPTED, a.encoded_len());
                    a.encode_raw(&mut buf);
                }
                frame(buf)
            }
        }
    }
}

fn frame(buf: Vec<u8>) -> Frame {
    debug_assert_eq!(
        buf.len(),
        buf.capacity(),
        "the room computed is the room used"
    );
    Frame {
        response: encoded::Response(Bytes::from(buf)),
        last: false,
    }
}

#[cfg(test)]
mod tests {
    use maumau_engine::{Game, Phase, ProfileId, event_for};

    use super::*;

    fn event(n: u64) -> pb::NumberedEvent {
        pb::NumberedEvent {
            number: n,
            event: Some(pb::Event {
                kind: Some(pb::event::Kind::TurnStarted(pb::TurnStarted {
                    seat: n as u32 % 3,
                })),
            }),
        }
    }

    fn held(events: &[pb::NumberedEvent]) -> HeldEvents {
        let mut held = HeldEvents::default();
        for e in events {
            held.push(&e.encode_to_vec());
        }
        held
    }

    fn decoded(f: &Frame) -> pb::ServerMessage {
        pb::PlayResponse::decode(f.response.0.clone())
            .expect("a PlayResponse")
            .message
            .expect("a message")
    }

    /// The prompt for the seat to move in `game`, whole (as prost would encode it from the
    /// `wire` conversions), and encoded from `shared`.
    fn prompts(game: &Game, shared: &mut SharedParts, n: u64) -> (pb::DecisionPrompt, Prompt) {
        let seat = game.to_act().expect("a seat to move");
        let obs = game.observation(seat);
        let whole = pb::DecisionPrompt {
            state_id: n,
            legal_actions: wire::legal_actions_to_wire(&obs),
            required: !n.is_multiple_of(3),
            deadline_unix_ms: if n.is_multiple_of(5) {
                0
            } else {
                1_700_000_000_000 + n
            },
            time_left_ms: 900,
            time_bank_ms: 5000,
            observation: Some(wire::observation_to_wire(&obs)),
            last_event_number: n * 3,
        };
        let head = pb::DecisionPrompt {
            legal_actions: Vec::new(),
            observation: None,
            ..whole.clone()
        };
        let parts = shared.prompt(&head, &obs, Some(game.rules()));
        (whole, parts)
    }

    #[test]
    fn frames_are_what_prost_would_encode() {
        let e = event(4);
        let f = Staged::Event(Bytes::from(e.encode_to_vec())).encode();
        assert!(!f.last);
        assert_eq!(
            decoded(&f).kind,
            Some(pb::server_message::Kind::Event(e.clone()))
        );

        let accepted = vec![pb::ActionAccepted {
            request_id: 2,
            state_id: 8,
            action_index: 1,
        }];
        for events in [vec![], vec![event(4), event(5)], vec![event(6)]] {
            let staged = Staged::Batch {
                events: held(&events),
                prompt: None,
                accepted: accepted.clone(),
            };
            let want = pb::ServerMessage {
                kind: Some(pb::server_message::Kind::Batch(pb::EventBatch {
                    events,
                    prompt: None,
                    accepted: accepted.clone(),
                })),
            };
            let f = staged.encode();
            assert_eq!(decoded(&f), want);
            assert_eq!(
                f.response.0,
                pb::PlayResponse {
                    message: Some(want)
                }
                .encode_to_vec(),
                "the same bytes as prost's"
            );
        }

        let finished = pb::ServerMessage {
            kind: Some(pb::server_message::Kind::Finished(pb::MatchFinished {
                report: None,
            })),
        };
        let f = Staged::message(finished.clone()).encode();
        assert!(f.last, "MatchFinished is the last message");
        assert_eq!(decoded(&f), finished);
        let again = Staged::Encoded(f.clone()).encode();
        assert!(again.last && again.response == f.response);
    }

    /// Through whole matches of every profile (the pile grows, and is turned into a new stock;
    /// offences open, rounds end), every prompt is the bytes prost encodes from the `wire`
    /// conversions, alone and in a batch, and every event as every seat and a spectator see it
    /// is the bytes of its `NumberedEvent`.
    #[test]
    fn prompts_and_events_are_the_bytes_prost_encodes() {
        for (profile, seats) in [
            (ProfileId::Classic, 4),
            (ProfileId::PenaltyPoints, 3),
            (ProfileId::Brazilian, 8),
            (ProfileId::Romanian32, 2),
            (ProfileId::Romanian32, 4),
        ] {
            let config = MatchConfig::new(profile, seats);
            let mut game = Game::new(config, 5).expect("a valid config");
            let mut shared = SharedParts::new(&config);
            let mut n = 0u64;
            let mut rng = 0x9e37_79b9_7f4a_7c15u64;
            let mut log = Vec::new();
            while game.phase() != Phase::Over && n < 3000 {
                n += 1;
                let (whole, parts) = prompts(&game, &mut shared, n);
                assert_eq!(
                    parts.0,
                    whole.encode_to_vec(),
                    "{profile:?} prompt {n}: prost's bytes"
                );
                if n.is_multiple_of(2) {
                    let f = Staged::Prompt(parts).encode();
                    assert_eq!(
                        decoded(&f).kind,
                        Some(pb::server_message::Kind::Prompt(whole.clone())),
                        "{profile:?} prompt {n}"
                    );
                } else {
                    let f = Staged::Batch {
                        events: held(&[event(n)]),
                        prompt: Some(parts),
                        accepted: Vec::new(),
                    }
                    .encode();
                    let Some(pb::server_message::Kind::Batch(b)) = decoded(&f).kind else {
                        panic!("a batch")
                    };
                    assert_eq!(b.prompt, Some(whole.clone()), "{profile:?} prompt {n}");
                    assert_eq!(b.events, vec![event(n)]);
                }
                let seat = game.to_act().expect("a seat to move");
                let legal = game.legal_actions(seat);
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pick = legal[(rng >> 33) as usize % legal.len()];
                let from = log.len();
                game.apply_with(seat, pick, &mut log)
                    .expect("a legal action");
                for (i, e) in log.iter().enumerate().skip(from) {
                    let viewers = (0..seats).map(Some).chain([None]);
                    for viewer in viewers {
                        let view = event_for(e, viewer);
                        let want = pb::NumberedEvent {
                            number: i as u64 + 1,
                            event: Some(wire::event_to_wire(&view, seats)),
                        };
                        let mut got = Vec::new();
                        put_numbered_event(&mut got, i as u64 + 1, &view, seats);
                        assert_eq!(got, want.encode_to_vec(), "{profile:?} event {i}");
                    }
                }
            }
            assert!(n > 20, "{profile:?}: a real match ({n} prompts)");
            assert!(
                log.iter().any(|e| matches!(e, Event::RoundEnded(_))),
                "{profile:?}: a round ended"
            );
        }
    }

    #[test]
    fn a_small_field_longer_than_its_length_byte_is_still_right() {
        for n in [0usize, 1, 127, 128, 300] {
            let content = vec![7u8; n];
            let mut got = vec![1u8];
            put_small(&mut got, 9, |b| b.extend_from_slice(&content));
            let mut want = vec![1u8];
            put_field(&mut want, 9, &content);
            assert_eq!(got, want, "{n} bytes");
        }
    }
}
