//! Serving connections: hyper's HTTP/1.1 and HTTP/2 server over tonic's routes, with each
//! connection's streams polled by the connection's own task.
//!
//! tonic's own server spawns a task per HTTP/2 stream. A table's step writes to several streams
//! of a match at once (every seat gets the events); with a task per stream they run one after
//! another or on both cores, and each wakes the connection, which writes as soon as it runs: up
//! to one `write` per stream per step. Here the streams of a connection are futures of the
//! connection's task ([`Home`]): when the task runs, every stream with something to send
//! queues it, then the connection writes it all at once. Connections (and tables) still run in
//! parallel on the runtime's workers.
//!
//! The socket is also presented to HTTP/2 as one without vectored writes ([`Plain`]): h2 then
//! copies DATA frames of up to 1 KiB into its write buffer, where with vectored writes it chains
//! every frame over 256 bytes (a prompt with its observation) and must write before the next.
//! A step's frames (a few hundred bytes each) go out in one `write`.
//!
//! A table whose seats all play through one connection runs on that connection's task too (see
//! [`Home`] and [`Roaming`]): an action read from the socket is then applied, and the next
//! prompt written, in the same poll of one task, with no wake of another task or thread in
//! between, and the actions of several tables read at once are answered in one `write`.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::stream::{FuturesUnordered, StreamExt};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tonic::codegen::http;

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// One connection's task, as a place futures can run: the futures hyper spawns for the
/// connection (its streams), and the tables it hosts ([`Home::adopt`]).
#[derive(Clone, Default)]
pub(crate) struct Home(Arc<HomeInner>);

#[derive(Default)]
struct HomeInner {
    spawned: Mutex<Vec<BoxFuture>>,
    guests: Mutex<Guests>,
    /// Tables hosted or on their way (at most [`MAX_GUESTS`]).
    hosted: AtomicUsize,
    task: Mutex<Option<Waker>>,
}

/// Most tables one connection's task hosts. A task runs on one core at a time: a connection that
/// carries many matches (a bot host with hundreds of seats) keeps the rest of its tables on tasks
/// of their own, so that they still spread over every core.
const MAX_GUESTS: usize = 8;

/// Tables handed to a connection's task, not yet taken up by its driver.
#[derive(Default)]
struct Guests {
    arrived: Vec<BoxFuture>,
    /// The connection is gone: it takes no more guests.
    closed: bool,
}

thread_local! {
    /// The connection whose driver is polling on this thread, if any.
    static CURRENT: std::cell::RefCell<Option<Home>> = const { std::cell::RefCell::new(None) };
}

/// Marks a connection as the current one while its driver polls.
struct Entered(Option<Home>);

impl Entered {
    fn new(home: &Home) -> Entered {
        Entered(CURRENT.with(|c| c.borrow_mut().replace(home.clone())))
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        let previous = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

impl Home {
    /// The connection whose request is being handled here; `None` outside this module's
    /// connections.
    pub(crate) fn current() -> Option<Home> {
        CURRENT.with(|c| c.borrow().clone())
    }

    /// Whether `self` and `other` are the same connection.
    pub(crate) fn same(&self, other: &Home) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    fn is_current(&self) -> bool {
        CURRENT.with(|c| c.borrow().as_ref().is_some_and(|h| h.same(self)))
    }

    /// Runs `table` on this connection's task; gives it back when the connection is gone or
    /// hosts [`MAX_GUESTS`] tables already.
    fn adopt(&self, table: Roaming) -> Result<(), Roaming> {
        {
            let mut guests = lock(&self.0.guests);
            if guests.closed || self.0.hosted.load(Ordering::SeqCst) >= MAX_GUESTS {
                return Err(table);
            }
            self.0.hosted.fetch_add(1, Ordering::SeqCst);
            guests.arrived.push(Box::pin(table));
        }
        if let Some(w) = lock(&self.0.task).as_ref() {
            w.wake_by_ref();
        }
        Ok(())
    }
}

/// Where a [`Roaming`] future is asked to run next.
#[derive(Clone, Default)]
pub(crate) struct Mover(Arc<MoverInner>);

#[derive(Default)]
struct MoverInner {
    wanted: Mutex<Option<Home>>,
    /// A request waits in `wanted` (read without the lock after every poll).
    pending: AtomicBool,
}

impl Mover {
    /// Asks for the future to run on `home`'s task from its next poll on (it stays where it is
    /// if that connection is gone or full).
    pub(crate) fn request(&self, home: Home) {
        *lock(&self.0.wanted) = Some(home);
        self.0.pending.store(true, Ordering::SeqCst);
    }

    fn take(&self) -> Option<Home> {
        if !self.0.pending.swap(false, Ordering::SeqCst) {
            return None;
        }
        lock(&self.0.wanted).take()
    }
}

/// A future (a table) that can move to a connection's task: after each poll it looks whether its
/// [`Mover`] asks for a move, and if so hands itself to that connection and ends where it was.
/// When that connection closes, its driver spawns the future as a task of its own again, so
/// nothing is lost; the first poll in a new place registers every waker anew.
pub(crate) struct Roaming {
    fut: Option<BoxFuture>,
    mover: Mover,
}

impl Roaming {
    /// `fut`, movable by `mover`.
    pub(crate) fn new(fut: impl Future<Output = ()> + Send + 'static, mover: Mover) -> Roaming {
        Roaming {
            fut: Some(Box::pin(fut)),
            mover,
        }
    }
}

impl Future for Roaming {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let Some(fut) = self.fut.as_mut() else {
            return Poll::Ready(());
        };
        if fut.as_mut().poll(cx).is_ready() {
            self.fut = None;
            return Poll::Ready(());
        }
        let Some(home) = self.mover.take() else {
            return Poll::Pending;
        };
        if home.is_current() {
            return Poll::Pending;
        }
        let moving = Roaming {
            fut: self.fut.take(),
            mover: self.mover.clone(),
        };
        match home.adopt(moving) {
            Ok(()) => Poll::Ready(()),
            Err(back) => {
                // The connection is gone or full: stay.
                self.fut = back.fut;
                Poll::Pending
            }
        }
    }
}

impl<F> hyper::rt::Executor<F> for Home
where
    F: Future<Output = ()> + Send + 'static,
{
    fn execute(&self, fut: F) {
        lock(&self.0.spawned).push(Box::pin(fut));
        if let Some(w) = lock(&self.0.task).as_ref() {
            w.wake_by_ref();
        }
    }
}

/// Drives one connection, its streams and the tables it hosts, streams and tables first, so that
/// what they queue goes out in the connection's next write.
///
/// The connection and its streams wake one another all the time (a stream that sends wakes the
/// connection; the connection that reads or grants send capacity wakes a stream). Inside the
/// driver's own poll those wakes only mark work for the loop ([`Wakes`]): waking the task itself
/// would reschedule it behind other tasks and rouse an idle worker, for nothing. The streams are
/// polled until none is left to run before the connection writes (a `FuturesUnordered` stops
/// after two streams that woke themselves, which h2's streams do when they send).
struct Driver<C> {
    conn: Pin<Box<C>>,
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
    fn new(conn: C, home: Home) -> Driver<C> {
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
        for task in [&this.home.0.task, &this.wakes.task] {
            let mut task = lock(task);
            if !task.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                *task = Some(cx.waker().clone());
            }
        }
        let (conn_waker, streams_waker) = (this.conn_waker.clone(), this.streams_waker.clone());
        let mut conn_cx = Context::from_waker(&conn_waker);
        let mut streams_cx = Context::from_waker(&streams_waker);
        let wakes = this.wakes.clone();
        wakes.polling.store(true, Ordering::SeqCst);
        for _ in 0..ROUNDS {
            // Every table and stream that has something to do, until none has.
            for _ in 0..ROUNDS {
                wakes.streams.store(false, Ordering::SeqCst);
                let spawned = std::mem::take(&mut *lock(&this.home.0.spawned));
                this.streams.extend(spawned);
                let arrived = std::mem::take(&mut lock(&this.home.0.guests).arrived);
                this.tables.extend(arrived);
                while let Poll::Ready(Some(())) = this.tables.poll_next_unpin(&mut streams_cx) {
                    // A table ended or moved on.
                    this.home.0.hosted.fetch_sub(1, Ordering::SeqCst);
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

impl Home {
    /// Nothing handed over waits for the driver.
    fn idle(&self) -> bool {
        lock(&self.0.spawned).is_empty() && lock(&self.0.guests).arrived.is_empty()
    }
}

impl<C> Drop for Driver<C> {
    /// The hosted tables, and those handed over meanwhile, go on as tasks of their own.
    fn drop(&mut self) {
        let arrived = {
            let mut guests = lock(&self.home.0.guests);
            guests.closed = true;
            std::mem::take(&mut guests.arrived)
        };
        let tables = std::mem::take(&mut self.tables);
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        for table in tables.into_iter().chain(arrived) {
            rt.spawn(table);
        }
    }
}

/// A connection's byte stream: plain TCP, or TLS over TCP.
enum Io {
    Tcp(tokio::net::TcpStream),
    Tls(Box<tokio_rustls::server::TlsStream<tokio::net::TcpStream>>),
}

/// A socket that does not offer vectored writes (see the module's documentation).
struct Plain(Io);

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

/// How long a client has to complete the TLS handshake before its connection is closed.
const TLS_HANDSHAKE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// A TLS acceptor for `identity` (rustls with the ring provider), offering HTTP/2 and
/// HTTP/1.1 (grpc-web) by ALPN; or why the certificate or key cannot be used.
pub(crate) fn tls_acceptor(
    identity: &crate::config::TlsIdentity,
) -> Result<tokio_rustls::TlsAcceptor, String> {
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::{CertificateDer, PrivateKeyDer};
    use tokio_rustls::rustls;
    let certs = CertificateDer::pem_slice_iter(&identity.cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("the certificate is not PEM: {e}"))?;
    if certs.is_empty() {
        return Err("the certificate file holds no certificate".into());
    }
    let key = PrivateKeyDer::from_pem_slice(&identity.key_pem)
        .map_err(|e| format!("the key is not a PEM private key: {e}"))?;
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| format!("the certificate and key do not go together: {e}"))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config)))
}

/// Accepts connections on `listener` and serves `service` on each until `shutdown` completes;
/// then stops accepting, asks every connection to finish its streams, and waits for them.
pub(crate) async fn serve<S>(
    listener: TcpListener,
    service: S,
    tls: Option<tokio_rustls::TlsAcceptor>,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    S: tower::Service<
            http::Request<hyper::body::Incoming>,
            Response = http::Response<tonic::body::Body>,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (tcp, _) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(x) => x,
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    continue;
                }
            },
        };
        // Small messages in both directions: without TCP_NODELAY every reply waits for a
        // delayed ACK.
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(service.clone());
        let mut stop = stop_rx.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let _open = crate::metrics::Open::connection();
            let io = match tls {
                None => Io::Tcp(tcp),
                Some(acceptor) => {
                    match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                        Ok(Ok(stream)) => Io::Tls(Box::new(stream)),
                        Ok(Err(e)) => {
                            tracing::debug!(error = %e, "TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            tracing::debug!("TLS handshake timed out");
                            return;
                        }
                    }
                }
            };
            let home = Home::default();
            let mut builder = auto::Builder::new(home.clone());
            // tonic's server settings: no limit on concurrent streams (hyper's default is 200;
            // a bot host may run hundreds of seats over one connection), hyper's windows.
            builder.http1().timer(TokioTimer::new());
            builder
                .http2()
                .timer(TokioTimer::new())
                .max_concurrent_streams(None)
                .max_pending_accept_reset_streams(None)
                .max_local_error_reset_streams(None);
            let conn = builder.serve_connection(TokioIo::new(Plain(io)), service);
            let mut driver = Driver::new(conn, home);
            let mut stopping = *stop.borrow();
            if stopping {
                driver.conn.as_mut().graceful_shutdown();
            }
            loop {
                tokio::select! {
                    done = &mut driver => {
                        if let Err(e) = done {
                            tracing::debug!(error = %e, "connection ended with an error");
                        }
                        break;
                    }
                    _ = stop.changed(), if !stopping => {
                        stopping = true;
                        driver.conn.as_mut().graceful_shutdown();
                    }
                }
            }
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(stop_rx);
    // Every connection holds a receiver until it has closed.
    stop_tx.closed().await;
    Ok(())
}
