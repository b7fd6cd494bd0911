//! What a table sends, encoded once.
//!
//! Every message a stream carries is a `PlayResponse` or `WatchResponse`: field 1, a
//! `ServerMessage`. The table encodes each event once per way of seeing it (usually once for
//! every seat and spectator alike: only a seat's own draws differ) and shares the bytes
//! ([`Bytes`] is reference-counted); a message is encoded once when its step is queued, and
//! a spectators' message once for all of them. The nesting around an encoded part (response,
//! `ServerMessage`, `EventBatch`) is written here with each length computed once, where prost
//! would compute the length of everything inside again at every level.
//!
//! A prompt's observation is mostly the match configuration and the discard pile (up to a deck
//! of cards), the same for every seat and changing by a card at a time. [`SharedParts`] keeps
//! both encoded for the match and extends the pile's encoding as cards land on it; a [`Prompt`]
//! carries them as bytes next to the rest of the observation. Protobuf reads a message's fields
//! in any order, so they are written after the rest: the bytes differ from prost's, the message
//! they decode to does not (the tests check both ways).

use bytes::{Bytes, BytesMut};
use maumau::encoded::{self, field_len, put_field, put_field_header};
use maumau::{pb, wire};
use maumau_engine::{Card, MatchConfig, Observation};
use prost::Message;

/// `ServerMessage.event` and `.prompt`.
const EVENT: u32 = 3;
const PROMPT: u32 = 4;
/// `DecisionPrompt.observation` and `.last_event_number`.
const PROMPT_OBSERVATION: u32 = 7;
const PROMPT_LAST_EVENT: u32 = 8;
/// `Observation.config` and `.discard`.
const OBSERVATION_CONFIG: u32 = 2;
const OBSERVATION_DISCARD: u32 = 10;
/// `ServerMessage.batch`.
const BATCH: u32 = 9;
/// `EventBatch.events`, `.prompt` and `.accepted`.
const BATCH_EVENTS: u32 = 1;
const BATCH_PROMPT: u32 = 2;
const BATCH_ACCEPTED: u32 = 3;
/// `PlayResponse.message` and `WatchResponse.message`.
const MESSAGE: u32 = 1;

/// One message for a stream, encoded.
#[derive(Clone)]
pub(crate) struct Frame {
    pub(crate) response: encoded::Response,
    /// MatchFinished: the stream ends after it.
    pub(crate) last: bool,
}

/// An encoded `NumberedEvent`.
pub(crate) fn numbered_event(e: &pb::NumberedEvent) -> Bytes {
    Bytes::from(e.encode_to_vec())
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
}

impl SharedParts {
    pub(crate) fn new(config: &MatchConfig) -> SharedParts {
        let mut encoded = Vec::new();
        prost::encoding::message::encode(
            OBSERVATION_CONFIG,
            &pb::MatchConfig::from(config),
            &mut encoded,
        );
        SharedParts {
            config: encoded,
            pile: Vec::new(),
            discard: Vec::new(),
        }
    }

    /// `prompt` (whose observation is ignored) with `obs` as its observation.
    pub(crate) fn prompt(&mut self, mut prompt: pb::DecisionPrompt, obs: &Observation) -> Prompt {
        let pile = obs.discard.as_slice();
        if !pile.starts_with(&self.pile) {
            self.pile.clear();
            self.discard.clear();
        }
        for &card in &pile[self.pile.len()..] {
            prost::encoding::message::encode(
                OBSERVATION_DISCARD,
                &pb::Card::from(card),
                &mut self.discard,
            );
            self.pile.push(card);
        }
        let mut shared = BytesMut::with_capacity(self.config.len() + self.discard.len());
        shared.extend_from_slice(&self.config);
        shared.extend_from_slice(&self.discard);
        prompt.observation = None;
        Prompt {
            last_event_number: std::mem::take(&mut prompt.last_event_number),
            prompt,
            observation: wire::observation_to_wire_unshared(obs),
            shared: shared.freeze(),
        }
    }
}

/// A decision prompt in parts: `prompt` without its observation and last event number,
/// `observation` without its configuration and discard pile, and those two encoded
/// (`shared`, from [`SharedParts`]).
pub(crate) struct Prompt {
    prompt: pb::DecisionPrompt,
    observation: pb::Observation,
    shared: Bytes,
    last_event_number: u64,
}

impl Prompt {
    fn observation_len(&self) -> usize {
        self.observation.encoded_len() + self.shared.len()
    }

    fn encoded_len(&self, observation_len: usize) -> usize {
        self.prompt.encoded_len()
            + field_len(PROMPT_OBSERVATION, observation_len)
            + if self.last_event_number == 0 {
                0
            } else {
                prost::encoding::uint64::encoded_len(PROMPT_LAST_EVENT, &self.last_event_number)
            }
    }

    /// Writes the prompt's fields (in field order but for the observation's two shared fields,
    /// which close the observation).
    fn encode_raw(&self, observation_len: usize, buf: &mut BytesMut) {
        self.prompt.encode_raw(buf);
        put_field_header(PROMPT_OBSERVATION, observation_len, buf);
        self.observation.encode_raw(buf);
        buf.extend_from_slice(&self.shared);
        if self.last_event_number != 0 {
            prost::encoding::uint64::encode(PROMPT_LAST_EVENT, &self.last_event_number, buf);
        }
    }
}

/// A message not yet encoded, as a table stages it for a connection.
pub(crate) enum Staged {
    /// Any message but an event, a prompt or a batch.
    Message(pb::ServerMessage),
    /// One event (an encoded `NumberedEvent`).
    Event(Bytes),
    /// A prompt on its own (`EVENT_DELIVERY_AS_THEY_HAPPEN`).
    Prompt(Prompt),
    /// An `EventBatch`: held answers, events, and (when it released them) the prompt.
    Batch {
        events: Vec<Bytes>,
        prompt: Option<Prompt>,
        accepted: Vec<pb::ActionAccepted>,
    },
}

impl Staged {
    /// The encoded message.
    pub(crate) fn encode(&self) -> Frame {
        match self {
            Staged::Message(m) => Frame {
                response: encoded::Response::new(m),
                last: matches!(m.kind, Some(pb::server_message::Kind::Finished(_))),
            },
            Staged::Event(e) => {
                let kind = field_len(EVENT, e.len());
                let mut buf = BytesMut::with_capacity(field_len(MESSAGE, kind));
                put_field_header(MESSAGE, kind, &mut buf);
                put_field(EVENT, e, &mut buf);
                frame(buf)
            }
            Staged::Prompt(p) => {
                let observation = p.observation_len();
                let prompt = p.encoded_len(observation);
                let kind = field_len(PROMPT, prompt);
                let mut buf = BytesMut::with_capacity(field_len(MESSAGE, kind));
                put_field_header(MESSAGE, kind, &mut buf);
                put_field_header(PROMPT, prompt, &mut buf);
                p.encode_raw(observation, &mut buf);
                frame(buf)
            }
            Staged::Batch {
                events,
                prompt,
                accepted,
            } => {
                let prompt_len = prompt.as_ref().map(|p| {
                    let observation = p.observation_len();
                    (observation, p.encoded_len(observation))
                });
                let accepted_lens: Vec<usize> = accepted.iter().map(Message::encoded_len).collect();
                let batch = events
                    .iter()
                    .map(|e| field_len(BATCH_EVENTS, e.len()))
                    .chain(prompt_len.map(|(_, n)| field_len(BATCH_PROMPT, n)))
                    .chain(accepted_lens.iter().map(|&n| field_len(BATCH_ACCEPTED, n)))
                    .sum();
                let kind = field_len(BATCH, batch);
                let mut buf = BytesMut::with_capacity(field_len(MESSAGE, kind));
                put_field_header(MESSAGE, kind, &mut buf);
                put_field_header(BATCH, batch, &mut buf);
                for e in events {
                    put_field(BATCH_EVENTS, e, &mut buf);
                }
                if let (Some(p), Some((observation, n))) = (prompt, prompt_len) {
                    put_field_header(BATCH_PROMPT, n, &mut buf);
                    p.encode_raw(observation, &mut buf);
                }
                for (a, &n) in accepted.iter().zip(&accepted_lens) {
                    put_field_header(BATCH_ACCEPTED, n, &mut buf);
                    a.encode_raw(&mut buf);
                }
                frame(buf)
            }
        }
    }
}

fn frame(buf: BytesMut) -> Frame {
    debug_assert_eq!(buf.len(), buf.capacity());
    Frame {
        response: encoded::Response(buf.freeze()),
        last: false,
    }
}

#[cfg(test)]
mod tests {
    use maumau_engine::{Game, Phase, ProfileId};

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

    fn decoded(f: &Frame) -> pb::ServerMessage {
        pb::PlayResponse::decode(f.response.0.clone())
            .expect("a PlayResponse")
            .message
            .expect("a message")
    }

    /// A prompt for the seat to move in `game`, whole, and in parts from `shared`.
    fn prompts(game: &Game, shared: &mut SharedParts, n: u64) -> (pb::DecisionPrompt, Prompt) {
        let seat = game.to_act().expect("a seat to move");
        let obs = game.observation(seat);
        let whole = pb::DecisionPrompt {
            state_id: n,
            legal_actions: wire::legal_actions_to_wire(&obs),
            required: true,
            deadline_unix_ms: 1_700_000_000_000 + n,
            time_left_ms: 900,
            time_bank_ms: 5000,
            observation: Some(wire::observation_to_wire(&obs)),
            last_event_number: n * 3,
        };
        let parts = shared.prompt(whole.clone(), &obs);
        (whole, parts)
    }

    #[test]
    fn frames_decode_to_what_prost_would_encode() {
        let e = event(4);
        let f = Staged::Event(numbered_event(&e)).encode();
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
                events: events.iter().map(numbered_event).collect(),
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
        let f = Staged::Message(finished.clone()).encode();
        assert!(f.last, "MatchFinished is the last message");
        assert_eq!(decoded(&f), finished);
    }

    /// Through whole matches of every profile (the pile grows, and is turned into a new stock),
    /// every prompt built from shared parts decodes to the prompt prost would have encoded,
    /// alone and in a batch.
    #[test]
    fn prompts_from_shared_parts_decode_to_the_whole_prompt() {
        for (profile, seats) in [
            (ProfileId::Classic, 4),
            (ProfileId::PenaltyPoints, 3),
            (ProfileId::Brazilian, 8),
            (ProfileId::Romanian32, 2),
        ] {
            let config = MatchConfig::new(profile, seats);
            let mut game = Game::new(config, 5).expect("a valid config");
            let mut shared = SharedParts::new(&config);
            let mut n = 0u64;
            let mut rng = 0x9e37_79b9_7f4a_7c15u64;
            while game.phase() != Phase::Over && n < 3000 {
                n += 1;
                let (whole, parts) = prompts(&game, &mut shared, n);
                if n.is_multiple_of(2) {
                    let f = Staged::Prompt(parts).encode();
                    assert_eq!(
                        decoded(&f).kind,
                        Some(pb::server_message::Kind::Prompt(whole.clone())),
                        "{profile:?} prompt {n}"
                    );
                } else {
                    let events = vec![numbered_event(&event(n))];
                    let f = Staged::Batch {
                        events,
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
                game.apply(seat, pick).expect("a legal action");
            }
            assert!(n > 20, "{profile:?}: a real match ({n} prompts)");
        }
    }
}
