//! The PlayService server with responses the server encodes itself.
//!
//! A match's server sends most of what it sends to several streams: the same event to every seat
//! that may see it the same way, the same message to every spectator. [`Response`] is a
//! `PlayResponse` or `WatchResponse` (both are field 1, a `ServerMessage`) as the bytes that go
//! on the wire, so that such a part is encoded once and shared. [`play_service_server`] is the
//! generated PlayService server with [`Response`] for both streamed responses; clients decode the
//! same bytes as `pb::PlayResponse` and `pb::WatchResponse`.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use prost::DecodeError;
use prost::encoding::{DecodeContext, WireType, encode_key, encode_varint, encoded_len_varint};

/// An encoded `PlayResponse` or `WatchResponse`: its bytes, as they go on the wire.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Response(pub Bytes);

/// The field number of `message` in `PlayResponse` and `WatchResponse`.
const MESSAGE: u32 = 1;

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
}
