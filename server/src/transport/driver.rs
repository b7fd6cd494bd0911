//! The driver of one connection: its streams and hosted tables are polled first, then the
//! connection, so what a step queued for every seat goes out in one `write` ([`Driver`]); and the
//! socket presented to HTTP/2 without vectored writes ([`Plain`]), so h2 copies DATA frames of up
//! to 1 KiB into its write buffer instead of chaining every frame over 256 bytes.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::stream::{FuturesUnordered, StreamExt};

use super::BoxFuture;
use super::home::{Entered, Home, remember};
use crate::sync::lock;
/// Drives one connection, its streams and the tables it hosts, streams and tables first, so that
/// what they queue goes out in the connection's next write.
///
/// The connection and its streams wake one another all the time (a stream that sends wakes the
/// connection; the connection that reads or grants send capacity wakes a stream). Inside the
/// driver's own poll those wakes only mark work for the loop ([`Wakes`]): waking the task itself
/// would reschedule it behind other tasks and rouse an idle worker, for nothing. The streams are
/// polled until none is left to run before the connection writes (a `FuturesUnordered` stops
/// after two streams that woke themselves, which h2's streams do when they send).
pub(super) struct Driver<C> {
    pub(super) conn: Pin<Box<C>>,
    streams: FuturesUnordered<BoxFuture>,
    /// Tables hosted here: when the connection ends they go on as tasks of their own.
    tables: FuturesUnordered<BoxFuture>,
    home: Home,
    wakes: Arc<Wakes>,
    conn_waker: Waker,
    streams_waker: Waker,
}

/// What woke a connection's task while it was polling, and the task to wake otherwise.
#[derive(Default)]
struct Wakes {
    /// Set while the driver is polling: a wake then only marks its flag.
    polling: AtomicBool,
    conn: AtomicBool,
    streams: AtomicBool,
    task: Mutex<Option<Waker>>,
}

impl Wakes {
    fn wake(&self, flag: &AtomicBool) {
        flag.store(true, Ordering::SeqCst);
        if !self.polling.load(Ordering::SeqCst)
            && let Some(w) = lock(&self.task).as_ref()
        {
            w.wake_by_ref();
        }
    }

    fn pending(&self) -> bool {
        self.conn.load(Ordering::SeqCst) || self.streams.load(Ordering::SeqCst)
    }
}

/// Wakes the connection's task for the connection itself.
struct ConnWake(Arc<Wakes>);

impl Wake for ConnWake {
    fn wake(self: Arc<Self>) {
        self.0.wake(&self.0.conn);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.wake(&self.0.conn);
    }
}

/// Wakes the connection's task for one of its streams.
struct StreamsWake(Arc<Wakes>);

impl Wake for StreamsWake {
    fn wake(self: Arc<Self>) {
        self.0.wake(&self.0.streams);
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.wake(&self.0.streams);
    }
}

impl<C> Driver<C> {
    pub(super) fn new(conn: C, home: Home) -> Driver<C> {
        let wakes = Arc::new(Wakes::default());
        Driver {
            conn: Box::pin(conn),
            streams: FuturesUnordered::new(),
            tables: FuturesUnordered::new(),
            home,
            conn_waker: Waker::from(Arc::new(ConnWake(wakes.clone()))),
            streams_waker: Waker::from(Arc::new(StreamsWake(wakes.clone()))),
            wakes,
        }
    }
}

/// Rounds of work one poll of a connection may do before it lets other tasks run.
const ROUNDS: usize = 16;

impl<C: Future> Future for Driver<C> {
    type Output = C::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<C::Output> {
        let this = &mut *self;
        let _entered = Entered::new(&this.home);
        this.home.polled_by(cx.waker());
        remember(&this.wakes.task, cx.waker());
        let (conn_waker, streams_waker) = (this.conn_waker.clone(), this.streams_waker.clone());
        let mut conn_cx = Context::from_waker(&conn_waker);
        let mut streams_cx = Context::from_waker(&streams_waker);
        let wakes = this.wakes.clone();
        wakes.polling.store(true, Ordering::SeqCst);
        for _ in 0..ROUNDS {
            // Every table and stream that has something to do, until none has.
            for _ in 0..ROUNDS {
                wakes.streams.store(false, Ordering::SeqCst);
                this.streams.extend(this.home.take_spawned());
                this.tables.extend(this.home.take_arrived());
                while let Poll::Ready(Some(())) = this.tables.poll_next_unpin(&mut streams_cx) {
                    // A table ended or moved on.
                    this.home.table_left();
                }
                while let Poll::Ready(Some(())) = this.streams.poll_next_unpin(&mut streams_cx) {}
                if !wakes.streams.load(Ordering::SeqCst) && this.home.idle() {
                    break;
                }
            }
            wakes.conn.store(false, Ordering::SeqCst);
            if let Poll::Ready(out) = this.conn.as_mut().poll(&mut conn_cx) {
                wakes.polling.store(false, Ordering::SeqCst);
                return Poll::Ready(out);
            }
            if this.home.flooded() {
                // Its answers so far are written; it is read no further (the tarpit follows).
                wakes.polling.store(false, Ordering::SeqCst);
                return Poll::Pending;
            }
            if !wakes.pending() && this.home.idle() {
                wakes.polling.store(false, Ordering::SeqCst);
                // A wake between the check and now was only marked: look again.
                if !wakes.pending() {
                    return Poll::Pending;
                }
                wakes.polling.store(true, Ordering::SeqCst);
            }
        }
        wakes.polling.store(false, Ordering::SeqCst);
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

impl<C> Driver<C> {
    /// The hosted tables, and those handed over meanwhile, go on as tasks of their own; the
    /// connection takes no more.
    pub(super) fn release_tables(&mut self) {
        let arrived = self.home.close();
        let tables = std::mem::take(&mut self.tables);
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for table in tables.into_iter().chain(arrived) {
            self.home.table_left();
            rt.spawn(table);
        }
    }
}

impl<C> Drop for Driver<C> {
    fn drop(&mut self) {
        self.release_tables();
    }
}

/// A connection's byte stream: plain TCP, or TLS over TCP.
pub(super) enum Io {
    Tcp(tokio::net::TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<tokio::net::TcpStream>>),
}

/// A socket that does not offer vectored writes (see the module's documentation).
pub(super) struct Plain(pub(super) Io);

impl tokio::io::AsyncRead for Plain {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match &mut self.0 {
            Io::Tcp(s) => Pin::new(s).poll_read(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl tokio::io::AsyncWrite for Plain {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match &mut self.0 {
            Io::Tcp(s) => Pin::new(s).poll_write(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.0 {
            Io::Tcp(s) => Pin::new(s).poll_flush(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match &mut self.0 {
            Io::Tcp(s) => Pin::new(s).poll_shutdown(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }

    fn is_write_vectored(&self) -> bool {
        false
    }
}
