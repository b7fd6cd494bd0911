//! The transport: how the server's connections are accepted, polled and written. Nothing here
//! decides anything about a game; it exists for speed, and each part says what it measured.
//!
//! tonic's own server spawns a task per HTTP/2 stream. A table's step writes to several streams
//! of a match at once (every seat gets the events); with a task per stream they run one after
//! another or on both cores, and each wakes the connection, which writes as soon as it runs: up
//! to one `write` per stream per step. Here hyper serves tonic's routes with our own loop:
//!
//! - [`listen`]: the accept loop and every connection's life (TLS, handshake and idle timeouts,
//!   the connection cap, closing a flooder, graceful shutdown).
//! - [`driver`]: one task per connection that polls the connection's streams (and the tables it
//!   hosts) first, then the connection, so a step's frames for every seat go out in one `write`;
//!   the socket is presented without vectored writes so h2 copies small frames into one buffer.
//! - [`home`]: a connection's task as a place futures run ([`Home`]), and tables that move onto
//!   the task of the one connection all their seats play through ([`Roaming`], [`Mover`]): an
//!   action read from the socket is then applied, and the next prompt written, in one poll of
//!   one task, with no other task or thread woken.
//!
//! What it measured (maumau-loadgen, release builds, same-run; docs/PERFORMANCE.md): server CPU
//! per decision 43 → 21–25 µs at 16 streams on one connection and 29–35 → 17–19 µs at 256 (with
//! the encoding in `frames.rs`); callgrind 51 k → 34 k server instructions per decision at 16
//! shared streams. Following the seat to move from connection to connection measured no better
//! than a table task of its own (32.5 against 31.2 µs per decision), so a table moves only when
//! all its seats share one connection.

mod driver;
mod home;
mod listen;

use std::future::Future;
use std::pin::Pin;

pub(crate) use home::{Home, Mover, Roaming};
pub(crate) use listen::{Limits, serve, tls_acceptor};

/// A future a connection's task polls: one of its streams, or a table it hosts.
type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send>>;
