//! The PlayService server with responses the server encodes itself, and requests it reads
//! itself.
//!
//! A match's server sends most of what it sends to several streams: the same event to every seat
//! that may see it the same way, the same message to every spectator. [`Response`] is a
//! `PlayResponse` or `WatchResponse` (both are field 1, a `ServerMessage`) as the bytes that go
//! on the wire, so that such a part is encoded once and shared. [`play_service_server`] is the
//! generated PlayService server with [`Response`] for both streamed responses; clients decode the
//! same bytes as `pb::PlayResponse` and `pb::WatchResponse`. Its Play requests are [`Request`]s:
//! a `pb::PlayRequest` read by prost, but for the message nearly every one is (an action by its
//! index), read straight from the bytes.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use prost::DecodeError;
use prost::encoding::{DecodeContext, WireType, encode_key, encode_varint, encoded_len_varint};

/// An encoded `PlayResponse` or `WatchResponse`: its bytes, as they go on the wire.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response(pub Bytes);

/// The field number of `message` in `PlayResponse` and `WatchResponse`.
const MESSAGE: u32 = 1;
/// The field number of `action` in `PlayRequest`.
const ACTION: u32 = 3;

impl Response {
    /// The response carrying `message`, encoded in one pass into one buffer.
    pub fn new(message: &crate::pb::ServerMessage) -> Response {
        let len = prost::Message::encoded_len(message);
        let mut buf = BytesMut::with_capacity(field_len(MESSAGE, len));
        put_field_header(MESSAGE, len, &mut buf);
        prost::Message::encode_raw(message, &mut buf);
        Response(buf.freeze())
    }
}

/// The encoded length of a length-delimited field `tag` whose content is `len` bytes.
pub fn field_len(tag: u32, len: usize) -> usize {
    prost::encoding::key_len(tag) + encoded_len_varint(len as u64) + len
}

/// Writes a length-delimited field: key, length, `content`.
pub fn put_field(tag: u32, content: &[u8], buf: &mut impl BufMut) {
    put_field_header(tag, content.len(), buf);
    buf.put_slice(content);
}

/// Writes the key and length of a length-delimited field whose `len` bytes follow.
pub fn put_field_header(tag: u32, len: usize, buf: &mut impl BufMut) {
    encode_key(tag, WireType::LengthDelimited, buf);
    encode_varint(len as u64, buf);
}

impl prost::Message for Response {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        buf.put_slice(&self.0);
    }

    /// Keeps field 1 as it came (repeated occurrences concatenate, as protobuf merges an
    /// embedded message); skips any other field.
    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != MESSAGE {
            return prost::encoding::skip_field(wire_type, tag, buf, ctx);
        }
        let mut content = Vec::new();
        prost::encoding::bytes::merge(wire_type, &mut content, buf, ctx)?;
        let mut joined = BytesMut::from(&self.0[..]);
        put_field(MESSAGE, &content, &mut joined);
        self.0 = joined.freeze();
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        self.0.len()
    }

    fn clear(&mut self) {
        self.0 = Bytes::new();
    }
}

/// A `PlayRequest` as the server reads it: the message, decoded as prost decodes it, with one
/// shortcut for the message a bot sends at every decision, an `ActionSubmission` naming its
/// action by index (state id, index, request id: three varints), read from the bytes without
/// prost's generic decoding. Anything else (an action given whole, an unknown field, a
/// message split across buffers, a second `kind`) is left to prost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Request(pub crate::pb::PlayRequest);

impl prost::Message for Request {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        self.0.encode_raw(buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag == ACTION
            && wire_type == WireType::LengthDelimited
            && self.0.kind.is_none()
            && let Some((action, used)) = action_by_index(buf.chunk())
        {
            buf.advance(used);
            self.0.kind = Some(crate::pb::play_request::Kind::Action(action));
            return Ok(());
        }
        self.0.merge_field(tag, wire_type, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        self.0.encoded_len()
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

/// A length-delimited `ActionSubmission` at the start of `bytes` (its length, then its
/// content) whose fields are all varints of `state_id`, `action_index` and `request_id`: the
/// submission and the bytes it took. `None` for anything else, including malformed bytes (left
/// to prost, which says what is wrong).
fn action_by_index(bytes: &[u8]) -> Option<(crate::pb::ActionSubmission, usize)> {
    use crate::pb::action_submission::Choice;
    let (len, n) = varint(bytes)?;
    let end = n.checked_add(usize::try_from(len).ok()?)?;
    let mut rest = bytes.get(n..end)?;
    let mut action = crate::pb::ActionSubmission::default();
    while !rest.is_empty() {
        let (key, k) = varint(rest)?;
        let (value, v) = varint(rest.get(k..)?)?;
        rest = rest.get(k + v..)?;
        match key {
            // Field 1 (state_id), 3 (action_index: a uint32, truncated as prost does) and 4
            // (request_id), each a varint.
            0x08 => action.state_id = value,
            0x18 => action.choice = Some(Choice::ActionIndex(value as u32)),
            0x20 => action.request_id = value,
            _ => return None,
        }
    }
    Some((action, end))
}

/// A varint at the start of `bytes` (at most 10 bytes, no more than 64 bits) and its length.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    if let Some(&b) = bytes.first()
        && b < 0x80
    {
        return Some((u64::from(b), 1));
    }
    let mut value = 0u64;
    for (i, &b) in bytes.iter().take(10).enumerate() {
        let bits = u64::from(b & 0x7f);
        if i == 9 && b > 1 {
            return None;
        }
        value |= bits << (7 * i);
        if b < 0x80 {
            return Some((value, i + 1));
        }
    }
    None
}

pub use crate::generated::encoded::play_service_server;

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::pb;

    fn message() -> pb::ServerMessage {
        pb::ServerMessage {
            kind: Some(pb::server_message::Kind::Pong(pb::Pong {
                nonce: 7,
                server_time_unix_ms: 1_700_000_000_000,
            })),
        }
    }

    #[test]
    fn a_response_is_the_bytes_of_a_play_response_and_of_a_watch_response() {
        let m = message();
        let r = Response::new(&m);
        let play = pb::PlayResponse {
            message: Some(m.clone()),
        };
        assert_eq!(r.0, play.encode_to_vec());
        assert_eq!(r.encode_to_vec(), play.encode_to_vec());
        assert_eq!(r.encoded_len(), play.encoded_len());
        assert_eq!(
            pb::WatchResponse::decode(r.0.clone()).unwrap().message,
            Some(m)
        );
    }

    #[test]
    fn decoding_keeps_the_message_and_drops_other_fields() {
        let m = message();
        let mut bytes = pb::PlayResponse {
            message: Some(m.clone()),
        }
        .encode_to_vec();
        // An unknown varint field 5 after the message.
        encode_key(5, WireType::Varint, &mut bytes);
        encode_varint(3, &mut bytes);
        let r = Response::decode(bytes.as_slice()).unwrap();
        assert_eq!(pb::PlayResponse::decode(r.0).unwrap().message, Some(m));
    }

    /// Bytes that look like a `PlayRequest` whose `action` is given by index, with a key, a
    /// length or a varint now and then wrong, unknown or cut short.
    fn near_actions() -> impl proptest::strategy::Strategy<Value = Vec<u8>> {
        use proptest::prelude::*;
        let key = prop::sample::select(vec![0x08u8, 0x10, 0x18, 0x20, 0x28, 0x12, 0x0a, 0x80]);
        let value = prop_oneof![
            any::<u8>().prop_map(u64::from),
            any::<u64>(),
            Just(u64::MAX),
        ];
        let field = (key, value).prop_map(|(k, v)| {
            let mut out = vec![k];
            encode_varint(v, &mut out);
            out
        });
        (
            prop::collection::vec(field, 0..5),
            -2i64..3,
            prop::sample::select(vec![0x1au8, 0x1a, 0x1a, 0x0a, 0x1b]),
            prop::collection::vec(any::<u8>(), 0..4),
        )
            .prop_map(|(fields, skew, tag, tail)| {
                let body: Vec<u8> = fields.concat();
                let mut out = vec![tag];
                encode_varint((body.len() as i64 + skew).max(0) as u64, &mut out);
                out.extend(body);
                out.extend(tail);
                out
            })
    }

    proptest::proptest! {
        /// Whatever the bytes, the server reads a request exactly as prost would: the same
        /// message, or an error where prost errs.
        #[test]
        fn any_request_bytes_read_as_prost_reads_them(
            bytes in proptest::prop_oneof![
                near_actions(),
                proptest::collection::vec(proptest::prelude::any::<u8>(), 0..48),
            ]
        ) {
            let ours = Request::decode(bytes.as_slice()).map(|r| r.0);
            let prost = pb::PlayRequest::decode(bytes.as_slice());
            match (ours, prost) {
                (Ok(a), Ok(b)) => proptest::prop_assert_eq!(a, b),
                (Err(_), Err(_)) => {}
                (a, b) => proptest::prop_assert!(false, "{bytes:02x?}: ours {a:?}, prost {b:?}"),
            }
        }
    }

    #[test]
    fn a_request_reads_as_prost_reads_it() {
        use pb::action_submission::Choice;
        let by_index = |state_id, index, request_id| pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Action(pb::ActionSubmission {
                state_id,
                choice: Some(Choice::ActionIndex(index)),
                request_id,
            })),
        };
        let whole = pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Action(pb::ActionSubmission {
                state_id: 3,
                choice: Some(Choice::Action(pb::Action {
                    kind: Some(pb::action::Kind::Draw(pb::DrawAction {})),
                })),
                request_id: 9,
            })),
        };
        let join = pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Join(pb::Join {
                token: "t".into(),
                ..Default::default()
            })),
        };
        for m in [
            by_index(1, 0, 0),
            by_index(u64::MAX, 201, 1 << 40),
            by_index(0, 0, 0),
            whole,
            join,
            pb::PlayRequest::default(),
        ] {
            let bytes = m.encode_to_vec();
            assert_eq!(
                Request::decode(bytes.as_slice()).unwrap(),
                Request(m.clone())
            );
            // The same message twice merges as prost merges it.
            let twice = [bytes.clone(), bytes].concat();
            assert_eq!(
                Request::decode(twice.as_slice()).unwrap().0,
                pb::PlayRequest::decode(twice.as_slice()).unwrap()
            );
        }
        // Malformed or unusual bytes: prost's answer.
        let mut odd = vec![0x1a, 0x02, 0x08];
        assert!(Request::decode(odd.as_slice()).is_err());
        odd = vec![0x1a, 0x03, 0x28, 0x01, 0x08];
        assert_eq!(
            Request::decode(odd.as_slice()).ok().map(|r| r.0),
            pb::PlayRequest::decode(odd.as_slice()).ok()
        );
        odd = vec![
            0x1a, 0x0b, 0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f,
        ];
        assert_eq!(
            Request::decode(odd.as_slice()).ok().map(|r| r.0),
            pb::PlayRequest::decode(odd.as_slice()).ok()
        );
    }
}
