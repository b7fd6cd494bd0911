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
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::time::Instant;
use tonic::codegen::http;

use crate::sync::lock;

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

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
    /// The connection's budget of unary calls a seat repeats (SubmitAction); `None` outside the
    /// server's connections.
    calls: Mutex<Option<crate::play::RateLimit>>,
    /// Refusals the connection may collect before it is closed as a flood: a bucket of half
    /// the call rate, bursts of one second's calls. An honest client that runs into the limit now
    /// and then never empties it; one that keeps calling after RATE_LIMITED does, within a
    /// second or two, and then costs the server one connection set-up per bucket instead of one
    /// request per call (issue 14 item 7).
    strikes: Mutex<Option<crate::play::RateLimit>>,
    /// SubmitAction calls with a missing or unknown token the connection may make: 10 a second,
    /// 20 at once. An honest client has its token; one that guesses or floods with a made-up
    /// one is closed once it has spent them.
    unknown_tokens: Mutex<Option<crate::play::RateLimit>>,
    /// Told when the strikes are spent; the connection's task then closes it.
    flooding: tokio::sync::Notify,
}

/// SubmitAction calls with an unknown token one connection may make per second (twice that at
/// once) before it is closed.
const UNKNOWN_TOKENS_PER_SECOND: u32 = 10;

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

    /// A connection with a budget of `calls_per_second` unary calls (bursts of twice that).
    fn with_calls(calls_per_second: u32) -> Home {
        let home = Home::default();
        *lock(&home.0.calls) = Some(crate::play::RateLimit::new(calls_per_second));
        *lock(&home.0.strikes) = Some(crate::play::RateLimit::new(calls_per_second.div_ceil(2)));
        *lock(&home.0.unknown_tokens) =
            Some(crate::play::RateLimit::new(UNKNOWN_TOKENS_PER_SECOND));
        home
    }

    /// Takes one unary call from the connection's budget; false when it is spent. A refusal
    /// also takes a strike; when the strikes are spent, [`Home::flooding`] completes.
    pub(crate) fn allow_call(&self) -> bool {
        let allowed = lock(&self.0.calls).as_mut().is_none_or(|l| l.allow());
        if !allowed && lock(&self.0.strikes).as_mut().is_some_and(|s| !s.allow()) {
            self.0.flooding.notify_one();
        }
        allowed
    }

    /// Counts a SubmitAction call whose token was missing or unknown; when the connection has
    /// made too many, [`Home::flooding`] completes.
    pub(crate) fn unknown_token(&self) {
        if lock(&self.0.unknown_tokens)
            .as_mut()
            .is_some_and(|s| !s.allow())
        {
            self.0.flooding.notify_one();
        }
    }

    /// Completes once the connection has kept calling after its budget was spent, or kept
    /// sending unknown tokens.
    async fn flooding(&self) {
        self.0.flooding.notified().await;
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

/// What a connection may hold and how long it may stay silent (see [`crate::ServerConfig`]).
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// A connection that has made no request this long after it was accepted is closed.
    pub(crate) handshake_timeout: Duration,
    /// A connection with no open request for this long is closed.
    pub(crate) idle_timeout: Duration,
    /// HTTP/2 pings this often (when set); a peer that does not answer one within
    /// `keepalive_timeout` is dropped.
    pub(crate) keepalive_interval: Option<Duration>,
    pub(crate) keepalive_timeout: Duration,
    /// Open connections beyond this are closed as soon as they are accepted.
    pub(crate) max_connections: usize,
    /// Concurrent HTTP/2 streams one connection may open.
    pub(crate) max_streams: u32,
    /// Unary calls a seat repeats (SubmitAction) one connection may make per second.
    pub(crate) calls_per_second: u32,
}

impl Limits {
    pub(crate) fn from_config(c: &crate::ServerConfig) -> Limits {
        Limits {
            handshake_timeout: c.handshake_timeout,
            idle_timeout: c.idle_timeout,
            keepalive_interval: c.keepalive_interval,
            keepalive_timeout: c.keepalive_timeout,
            max_connections: c.max_connections,
            max_streams: c.max_streams_per_connection,
            calls_per_second: c.calls_per_second,
        }
    }
}

/// How long a connection asked to close (idle, or the server stopping) has to say goodbye to a
/// peer that does not answer before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Pause of the accept loop after an error such as running out of file descriptors (EMFILE):
/// accepting again at once would fail again at once, burning a core. Existing connections run on
/// their own tasks meanwhile.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The requests open on one connection, and since when it has had none.
#[derive(Default)]
struct Activity {
    open: AtomicUsize,
    /// A request has been made on the connection.
    served: AtomicBool,
    idle_since: Mutex<Option<Instant>>,
}

/// Holds a request open in its connection's [`Activity`] until its response has been sent (or
/// abandoned).
struct Open(Arc<Activity>);

impl Open {
    fn new(activity: &Arc<Activity>) -> Open {
        activity.served.store(true, Ordering::SeqCst);
        activity.open.fetch_add(1, Ordering::SeqCst);
        Open(activity.clone())
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        let mut idle = lock(&self.0.idle_since);
        if self.0.open.fetch_sub(1, Ordering::SeqCst) == 1 {
            *idle = Some(Instant::now());
        }
    }
}

/// A response body that keeps its request open (see [`Open`]) until it is dropped.
struct Tracked {
    body: tonic::body::Body,
    _open: Open,
}

impl hyper::body::Body for Tracked {
    type Data = <tonic::body::Body as hyper::body::Body>::Data;
    type Error = <tonic::body::Body as hyper::body::Body>::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// The service of one connection: counts its open requests and tells each request its peer's
/// address (`Request::remote_addr` in tonic).
struct Counted<S> {
    service: S,
    activity: Arc<Activity>,
    peer: std::net::SocketAddr,
    local: Option<std::net::SocketAddr>,
}

impl<S> hyper::service::Service<http::Request<hyper::body::Incoming>> for Counted<S>
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
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxResponse;

    fn call(&self, mut req: http::Request<hyper::body::Incoming>) -> Self::Future {
        let open = Open::new(&self.activity);
        req.extensions_mut()
            .insert(tonic::transport::server::TcpConnectInfo {
                local_addr: self.local,
                remote_addr: Some(self.peer),
            });
        let service = self.service.clone();
        Box::pin(async move {
            let Ok(response) = tower::ServiceExt::oneshot(service, req).await;
            Ok(response.map(|body| tonic::body::Body::new(Tracked { body, _open: open })))
        })
    }
}

type BoxResponse =
    Pin<Box<dyn Future<Output = Result<http::Response<tonic::body::Body>, Infallible>> + Send>>;

/// Whether an accept error means the process or system is out of a resource (file descriptors,
/// buffers, memory), so that accepting again at once would only fail again.
fn out_of_resources(e: &std::io::Error) -> bool {
    // EMFILE, ENFILE, ENOBUFS, ENOMEM on Linux.
    matches!(e.raw_os_error(), Some(24 | 23 | 105 | 12))
}

/// Accepts connections on `listener` and serves `service` on each until `shutdown` completes;
/// then stops accepting, asks every connection to finish its streams, and waits for them.
pub(crate) async fn serve<S>(
    listener: TcpListener,
    service: S,
    tls: Option<tokio_rustls::TlsAcceptor>,
    limits: Limits,
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
    let open = Arc::new(AtomicUsize::new(0));
    let mut refused: u64 = 0;
    let local = listener.local_addr().ok();
    loop {
        let (tcp, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(x) => x,
                Err(e) if out_of_resources(&e) => {
                    tracing::warn!(error = %e, "accept failed; pausing before the next accept");
                    tokio::select! {
                        () = &mut shutdown => break,
                        () = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    }
                }
                Err(e) => {
                    tracing::debug!(error = %e, "accept failed");
                    continue;
                }
            },
        };
        if open.load(Ordering::SeqCst) >= limits.max_connections {
            refused += 1;
            crate::metrics::connection_refused();
            if refused.is_power_of_two() {
                tracing::warn!(
                    refused,
                    max_connections = limits.max_connections,
                    "connection limit reached: refusing connections"
                );
            }
            drop(tcp);
            continue;
        }
        open.fetch_add(1, Ordering::SeqCst);
        let counted = OpenConnection(open.clone());
        // Small messages in both directions: without TCP_NODELAY every reply waits for a
        // delayed ACK.
        let _ = tcp.set_nodelay(true);
        let activity = Arc::new(Activity::default());
        let service = Counted {
            service: service.clone(),
            activity: activity.clone(),
            peer,
            local,
        };
        let mut stop = stop_rx.clone();
        let tls = tls.clone();
        let limits = limits.clone();
        tokio::spawn(async move {
            let _counted = counted;
            let _open = crate::metrics::Open::connection();
            let accepted = Instant::now();
            // The TLS handshake counts against the handshake timeout, like HTTP/2's.
            let io = match tls {
                None => Io::Tcp(tcp),
                Some(acceptor) => {
                    match tokio::time::timeout(limits.handshake_timeout, acceptor.accept(tcp)).await
                    {
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
            let home = Home::with_calls(limits.calls_per_second);
            let mut builder = auto::Builder::new(home.clone());
            builder.http1().timer(TokioTimer::new());
            // Hundreds of concurrent streams (a bot host may run hundreds of seats over one
            // connection) up to the configured cap; pings that drop a peer gone silent.
            builder
                .http2()
                .timer(TokioTimer::new())
                .max_concurrent_streams(limits.max_streams)
                .keep_alive_interval(limits.keepalive_interval)
                .keep_alive_timeout(limits.keepalive_timeout)
                .max_pending_accept_reset_streams(None)
                .max_local_error_reset_streams(None);
            let conn = builder.serve_connection(TokioIo::new(Plain(io)), service);
            let flood = home.clone();
            let mut driver = Driver::new(conn, home);
            let mut stopping = *stop.borrow();
            if stopping {
                driver.conn.as_mut().graceful_shutdown();
            }
            // Closing for silence: when the connection must be gone by.
            let mut closing: Option<Instant> = None;
            // Looked at again at least every idle timeout: a connection may make its first
            // request, and finish it, long before its handshake timeout.
            let check = tokio::time::sleep(limits.handshake_timeout.min(limits.idle_timeout));
            let mut check = std::pin::pin!(check);
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
                    () = flood.flooding() => {
                        crate::metrics::connection_flooding();
                        tracing::debug!("closing a connection that kept calling after RATE_LIMITED");
                        break;
                    }
                    () = &mut check => {
                        let now = Instant::now();
                        let idle = if activity.open.load(Ordering::SeqCst) == 0 {
                            *lock(&activity.idle_since)
                        } else {
                            None
                        };
                        if let Some(by) = closing {
                            if idle.is_some() && now >= by {
                                // The peer did not finish the goodbye: drop it.
                                break;
                            }
                            check.as_mut().reset(now + CLOSE_GRACE);
                            continue;
                        }
                        let (since, limit) = if activity.served.load(Ordering::SeqCst) {
                            (idle, limits.idle_timeout)
                        } else {
                            (Some(accepted), limits.handshake_timeout)
                        };
                        match since {
                            Some(t) if now >= t + limit => {
                                tracing::debug!(%peer, "closing a silent connection");
                                if !stopping {
                                    stopping = true;
                                    driver.conn.as_mut().graceful_shutdown();
                                }
                                closing = Some(now + CLOSE_GRACE);
                                check.as_mut().reset(now + CLOSE_GRACE);
                            }
                            Some(t) => check
                                .as_mut()
                                .reset((t + limit).min(now + limits.idle_timeout)),
                            None => check.as_mut().reset(now + limits.idle_timeout),
                        }
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

/// One open connection in the server's count, until dropped.
struct OpenConnection(Arc<AtomicUsize>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
