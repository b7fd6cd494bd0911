//! Typed reasons for the refusals tonic makes before a handler runs.
//!
//! A request message that does not decode, or is over the size limit, never reaches the service:
//! tonic answers it itself, with a bare status (`INTERNAL` "failed to decode Protobuf message",
//! `OUT_OF_RANGE` "decoded message length too large"). [`Typed`] wraps a generated service and
//! gives those answers the reason every other bad input carries:
//!
//! - a body that does not decode, or ends inside a message's frame (a truncated frame: the
//!   5-byte header promises more bytes than come), or has a frame with an invalid compression
//!   flag, becomes `INVALID_ARGUMENT` with `ERROR_REASON_MALFORMED_MESSAGE` (the client sent
//!   something that is not the request message; `INTERNAL` would blame the server);
//! - a body over the limit keeps tonic's `OUT_OF_RANGE` and gains the trailer
//!   `maumau-reason: ERROR_REASON_MALFORMED_MESSAGE`.
//!
//! This covers unary calls and the request of server-streaming calls (`Watch`). A Play stream's
//! messages are decoded by whoever reads the stream (the Join by `play.rs`, the rest by the
//! table), which answers them the same way (and, once the seat is known, counts them). Answers that are not about the message (a wrong content type, a compressed body the
//! server does not accept) keep tonic's status, without a reason.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use maumau::{pb, wire};
use tonic::codegen::Service;
use tonic::codegen::http;
use tonic::server::NamedService;
use tonic::{Code, Status};

/// A generated service whose early refusals carry a typed reason.
#[derive(Clone, Debug)]
pub(crate) struct Typed<S>(pub(crate) S);

impl<S: NamedService> NamedService for Typed<S> {
    const NAME: &'static str = S::NAME;
}

impl<S, B> Service<http::Request<B>> for Typed<S>
where
    S: Service<http::Request<B>, Response = http::Response<tonic::body::Body>>,
    S::Future: Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let answer = self.0.call(req);
        Box::pin(async move { answer.await.map(typed) })
    }
}

/// Whether tonic's `status` says a request message could not be read: it did not decode, or it
/// was over the size limit. Other errors on a request stream (a reset, a broken connection) are
/// not about a message.
pub(crate) fn unreadable_message(status: &Status) -> bool {
    status.code() == Code::OutOfRange || (status.code() == Code::Internal && undecodable(status))
}

/// tonic's `INTERNAL` answers about a request message it could not read: one that does not
/// decode, a body that ends inside a message's frame (a truncated frame), and a frame whose
/// compression flag is neither 0 nor 1.
fn undecodable(status: &Status) -> bool {
    let m = status.message();
    m.starts_with("failed to decode Protobuf message")
        || m.starts_with("Unexpected EOF decoding stream")
        || m.starts_with("protocol error: received message with invalid compression flag")
}

/// Gives a status-only answer of tonic's own (one without a reason) a reason, where it is about
/// the request message.
fn typed(response: http::Response<tonic::body::Body>) -> http::Response<tonic::body::Body> {
    // tonic keeps the status of a status-only answer in its extensions.
    let Some(status) = response.extensions().get::<Status>() else {
        return response;
    };
    if wire::reason_of(status) != pb::ErrorReason::Unspecified {
        return response;
    }
    let reason = pb::ErrorReason::MalformedMessage;
    let status = match status.code() {
        Code::Internal if undecodable(status) => wire::status(
            reason,
            format!("cannot read the request message: {}", status.message()),
        ),
        Code::OutOfRange => {
            let mut status = status.clone();
            status.metadata_mut().insert(
                wire::REASON_TRAILER,
                tonic::metadata::MetadataValue::from_static(reason.as_str_name()),
            );
            status
        }
        _ => return response,
    };
    status.into_http()
}

/// Most characters of a client's input that an error message repeats (see [`echo`]).
pub(crate) const ECHO_CHARS: usize = 64;

/// A client's input (an id, a name, a token) as an error message repeats it: its first 64
/// characters, then `…` when there were more.
///
/// Every refusal that names what the client sent goes through this (or the server's `clip`): an
/// unbounded echo would let a 60,000-character match id turn `NOT_FOUND` into a status too large
/// for the `grpc-message` header, which clients then see as `RESOURCE_EXHAUSTED` or `INTERNAL`.
pub fn echo(input: &str) -> String {
    clip(input, ECHO_CHARS)
}

/// `text` cut to at most `max` characters, with `…` in place of the rest: for messages that
/// carry pieces of a client's input (a position's tokens in the engine's errors).
pub(crate) fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", &text[..at]),
    }
}

/// Most characters of an error message built from a client's input by another crate (the
/// engine's notation errors).
pub(crate) const MESSAGE_CHARS: usize = 300;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_keeps_short_input_and_cuts_long_input() {
        assert_eq!(echo("m0123"), "m0123");
        let exact = "x".repeat(ECHO_CHARS);
        assert_eq!(echo(&exact), exact);
        let long = "é".repeat(60_000);
        let cut = echo(&long);
        assert_eq!(cut.chars().count(), ECHO_CHARS + 1);
        assert!(cut.ends_with('…'));
    }
}
