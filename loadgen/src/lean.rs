//! What a bot that answers from its prompts reads of a Play stream, parsed straight from the
//! wire: the message's kind, a prompt's state id, whether it is required and its legal action
//! indices, answers' request ids, and how many events a batch carries. Everything else (the
//! observation, the actions themselves, the events' contents) is stepped over by its length,
//! unread.
//!
//! Field numbers are those of `proto/maumau/v1` (`PlayResponse.message = 1`, the kinds of
//! `ServerMessage`, `EventBatch`, `DecisionPrompt`, `LegalAction.index = 1`, `request_id = 1`);
//! the tests check them against messages prost encodes from the real types.
//!
//! Decoding these with prost instead, even into types that leave the rest out, cost the load
//! generator's bots a quarter of their instructions (callgrind): a batch's ten or so events each
//! became a stored value, and every field went through the `Buf` trait.

/// A server message, as much of it as the bot acts on.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lean {
    /// A prompt.
    Prompt(Prompt),
    /// A batch: held answers (their request ids), how many events, and its prompt if any.
    Batch {
        accepted: Vec<u64>,
        events: u64,
        prompt: Option<Prompt>,
    },
    /// An event.
    Event,
    /// An action was accepted.
    Accepted { request_id: u64 },
    /// An action was rejected.
    Rejected { request_id: u64 },
    /// The match is over.
    Finished,
    /// Welcome, Snapshot, Pong, or no message.
    Other,
}

/// A decision prompt: its state id, whether the seat must act, and its legal action indices.
#[derive(Debug, PartialEq, Eq, Default)]
pub(crate) struct Prompt {
    pub(crate) state_id: u64,
    pub(crate) required: bool,
    pub(crate) legal: Vec<u32>,
}

/// What in a message's bytes is not protobuf.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) struct Malformed(&'static str);

impl std::fmt::Display for Malformed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// Reads a `PlayResponse`.
pub(crate) fn read(bytes: &[u8]) -> Result<Lean, Malformed> {
    let mut message = None;
    for field in Fields(bytes) {
        if let (1, Value::Bytes(b)) = field? {
            message = Some(b);
        }
    }
    let Some(message) = message else {
        return Ok(Lean::Other);
    };
    let mut out = Lean::Other;
    for field in Fields(message) {
        out = match field? {
            (3, Value::Bytes(_)) => Lean::Event,
            (4, Value::Bytes(b)) => Lean::Prompt(prompt(b)?),
            (5, Value::Bytes(b)) => Lean::Accepted {
                request_id: request_id(b)?,
            },
            (6, Value::Bytes(b)) => Lean::Rejected {
                request_id: request_id(b)?,
            },
            (7, Value::Bytes(_)) => Lean::Finished,
            (9, Value::Bytes(b)) => batch(b)?,
            // Welcome, Snapshot, Pong, or a kind this reader does not know.
            _ => Lean::Other,
        };
    }
    Ok(out)
}

fn batch(bytes: &[u8]) -> Result<Lean, Malformed> {
    let (mut accepted, mut events, mut prompt_out) = (Vec::new(), 0, None);
    for field in Fields(bytes) {
        match field? {
            (1, Value::Bytes(_)) => events += 1,
            (2, Value::Bytes(b)) => prompt_out = Some(prompt(b)?),
            (3, Value::Bytes(b)) => accepted.push(request_id(b)?),
            _ => {}
        }
    }
    Ok(Lean::Batch {
        accepted,
        events,
        prompt: prompt_out,
    })
}

fn prompt(bytes: &[u8]) -> Result<Prompt, Malformed> {
    let mut p = Prompt::default();
    for field in Fields(bytes) {
        match field? {
            (1, Value::Varint(v)) => p.state_id = v,
            (2, Value::Bytes(b)) => {
                let mut index = 0;
                for f in Fields(b) {
                    if let (1, Value::Varint(v)) = f? {
                        index = u32::try_from(v)
                            .map_err(|_| Malformed("a legal action index over u32"))?;
                    }
                }
                p.legal.push(index);
            }
            (3, Value::Varint(v)) => p.required = v != 0,
            _ => {}
        }
    }
    Ok(p)
}

fn request_id(bytes: &[u8]) -> Result<u64, Malformed> {
    let mut id = 0;
    for field in Fields(bytes) {
        if let (1, Value::Varint(v)) = field? {
            id = v;
        }
    }
    Ok(id)
}

/// A field's value: a varint, or the bytes of a length-delimited field (fixed-width values are
/// stepped over and reported as `Fixed`).
#[derive(Debug)]
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// The fields of one message, in wire order.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    #[inline]
    fn varint(&mut self) -> Result<u64, Malformed> {
        // Most varints here (keys, small lengths, indices) are one byte.
        if let Some((&b, rest)) = self.0.split_first()
            && b < 0x80
        {
            self.0 = rest;
            return Ok(u64::from(b));
        }
        let mut value = 0u64;
        for (i, &b) in self.0.iter().enumerate().take(10) {
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                self.0 = &self.0[i + 1..];
                return Ok(value);
            }
        }
        Err(Malformed("a varint that does not end"))
    }

    #[inline]
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if n > self.0.len() {
            return Err(Malformed("a field longer than its message"));
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    #[inline]
    fn field(&mut self) -> Result<(u32, Value<'a>), Malformed> {
        let key = self.varint()?;
        let number = u32::try_from(key >> 3).map_err(|_| Malformed("a field number over u32"))?;
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed
            }
            2 => {
                let n = usize::try_from(self.varint()?)
                    .map_err(|_| Malformed("a length over usize"))?;
                Value::Bytes(self.take(n)?)
            }
            5 => {
                self.take(4)?;
                Value::Fixed
            }
            _ => return Err(Malformed("a wire type protobuf 3 does not use")),
        };
        Ok((number, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u32, Value<'a>), Malformed>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.0.is_empty() {
            return None;
        }
        let field = self.field();
        if field.is_err() {
            // One error, then the end.
            self.0 = &[];
        }
        Some(field)
    }
}

#[cfg(test)]
mod tests {
    use maumau::pb;
    use pb::server_message::Kind;
    use prost::Message;

    use super::*;

    fn encoded(kind: Kind) -> Vec<u8> {
        pb::PlayResponse {
            message: Some(pb::ServerMessage { kind: Some(kind) }),
        }
        .encode_to_vec()
    }

    fn prompt_pb(state_id: u64, required: bool, legal: &[u32]) -> pb::DecisionPrompt {
        pb::DecisionPrompt {
            state_id,
            required,
            legal_actions: legal
                .iter()
                .map(|&index| pb::LegalAction {
                    index,
                    action: Some(pb::Action::default()),
                    ..Default::default()
                })
                .collect(),
            observation: Some(pb::Observation {
                hand: vec![pb::Card::default(); 5],
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn reads_what_prost_encodes_from_the_real_types() {
        let p = prompt_pb(1 << 40, true, &[0, 3, 300]);
        let want = Prompt {
            state_id: 1 << 40,
            required: true,
            legal: vec![0, 3, 300],
        };
        assert_eq!(
            read(&encoded(Kind::Prompt(p.clone()))),
            Ok(Lean::Prompt(want))
        );
        let batch = pb::EventBatch {
            events: vec![pb::NumberedEvent::default(); 7],
            prompt: Some(prompt_pb(9, false, &[])),
            accepted: vec![
                pb::ActionAccepted {
                    request_id: 5,
                    ..Default::default()
                },
                pb::ActionAccepted {
                    request_id: 6,
                    ..Default::default()
                },
            ],
        };
        assert_eq!(
            read(&encoded(Kind::Batch(batch))),
            Ok(Lean::Batch {
                accepted: vec![5, 6],
                events: 7,
                prompt: Some(Prompt {
                    state_id: 9,
                    required: false,
                    legal: vec![],
                }),
            })
        );
        let accepted = pb::ActionAccepted {
            request_id: 77,
            ..Default::default()
        };
        assert_eq!(
            read(&encoded(Kind::Accepted(accepted))),
            Ok(Lean::Accepted { request_id: 77 })
        );
        let rejected = pb::ActionRejected {
            request_id: 78,
            ..Default::default()
        };
        assert_eq!(
            read(&encoded(Kind::Rejected(rejected))),
            Ok(Lean::Rejected { request_id: 78 })
        );
        assert_eq!(
            read(&encoded(Kind::Event(pb::NumberedEvent::default()))),
            Ok(Lean::Event)
        );
        assert_eq!(
            read(&encoded(Kind::Finished(pb::MatchFinished::default()))),
            Ok(Lean::Finished)
        );
        assert_eq!(
            read(&encoded(Kind::Welcome(pb::Welcome::default()))),
            Ok(Lean::Other)
        );
        assert_eq!(read(&[]), Ok(Lean::Other));
    }

    #[test]
    fn malformed_bytes_are_an_error_not_a_guess() {
        let whole = encoded(Kind::Prompt(prompt_pb(3, true, &[1, 2])));
        for cut in 1..whole.len() {
            assert!(
                read(&whole[..cut]).is_err(),
                "cut at {cut} of {}",
                whole.len()
            );
        }
        assert!(read(&[0x0b]).is_err(), "wire type 3");
        assert!(
            read(&[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
            ])
            .is_err()
        );
    }
}
