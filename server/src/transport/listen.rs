//! The accept loop and each connection's life: TLS, the connection cap, handshake and idle
//! timeouts, keepalive pings, closing a connection that floods, and graceful shutdown.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::time::Instant;
use tonic::codegen::http;

use super::driver::{Driver, Io, Plain};
use super::home::Home;
use crate::sync::lock;

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
    /// How long a flooding connection is held unread before it is closed.
    pub(crate) flood_hold: Duration,
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
            flood_hold: c.flood_hold,
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

/// How often a repeated warning (accepts failing for want of file descriptors) is logged.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// A warning that may repeat many times a second, logged at most once per `every` with the
/// number of times it happened since the last line.
struct Throttle {
    every: Duration,
    last: Option<Instant>,
    since: u64,
}

impl Throttle {
    fn new(every: Duration) -> Throttle {
        Throttle {
            every,
            last: None,
            since: 0,
        }
    }

    /// One more occurrence at `now`: `Some(count)` when a line is due (the occurrences since the
    /// last line, this one included), else `None`.
    fn note(&mut self, now: Instant) -> Option<u64> {
        self.since += 1;
        if self.last.is_some_and(|last| now < last + self.every) {
            return None;
        }
        self.last = Some(now);
        Some(std::mem::take(&mut self.since))
    }
}

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
    let mut out_of_resources_log = Throttle::new(LOG_EVERY);
    let plain_log = Arc::new(Mutex::new(Throttle::new(LOG_EVERY)));
    let local = listener.local_addr().ok();
    loop {
        let (tcp, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(x) => x,
                Err(e) if out_of_resources(&e) => {
                    if let Some(failures) = out_of_resources_log.note(Instant::now()) {
                        tracing::warn!(
                            error = %e,
                            failures,
                            "accept failed for want of resources (file descriptors?); pausing \
                             before each next accept (one line per 10 s, with the failures \
                             counted since the last)"
                        );
                    }
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
        let plain_log = plain_log.clone();
        tokio::spawn(async move {
            let _counted = counted;
            let _open = crate::metrics::Open::connection();
            let accepted = Instant::now();
            // The TLS handshake counts against the handshake timeout, like HTTP/2's.
            let io = match tls {
                None => Io::Tcp(tcp),
                Some(acceptor) => {
                    let plain = tokio::time::timeout(
                        limits.handshake_timeout,
                        plain_text_on_tls(&tcp, &plain_log, peer),
                    )
                    .await;
                    if plain.unwrap_or(true) {
                        return;
                    }
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
                .keep_alive_timeout(limits.keepalive_timeout);
            // hyper's and h2's own limits on reset streams stay as they are (20 streams reset
            // before they were accepted, 1,024 reset for the peer's errors, then GOAWAY): they
            // are the defence against rapid reset (CVE-2023-44487) and RUSTSEC-2024-0003.
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
                    // A flooder is held before its connection is read again.
                    biased;
                    () = flood.flooding() => {
                        crate::metrics::connection_flooding();
                        tracing::debug!(%peer, "tarpitting a connection that kept calling after its budget");
                        // Held unread for `flood_hold` (5 s by default) before it is closed: a
                        // flooder that waits for its answers waits here. Closed at once, it came
                        // back 100 ms later with a fresh budget, costing a connection set-up and
                        // twenty refused calls ten times a second. Its tables go on elsewhere.
                        driver.release_tables();
                        tokio::select! {
                            () = tokio::time::sleep(limits.flood_hold) => {}
                            _ = stop.changed(), if !stopping => {}
                        }
                        break;
                    }
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
                    () = &mut check => {
                        let now = Instant::now();
                        let idle = if activity.open.load(Ordering::SeqCst) == 0 {
                            *lock(&activity.idle_since)
                        } else {
                            None
                        };
                        if let Some(by) = closing {
                            // The peer did not finish the goodbye (it ignored GOAWAY, or never
                            // finished its first request's head): drop it, unless a request is
                            // still being answered.
                            if activity.open.load(Ordering::SeqCst) == 0 && now >= by {
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

/// What a plain-text HTTP/1.1 client on the TLS port is told before the connection closes.
const SPEAKS_TLS: &str = "this port speaks TLS: use https://\n";

/// Looks at the first bytes of a connection to the TLS port, without reading them: a TLS client
/// starts with a handshake record (0x16). A plain-text HTTP/2 preface or HTTP/1.1 request gets
/// a log line (at most one per [`LOG_EVERY`], with the count since the last) and, for HTTP/1.1,
/// a `400` whose body says to use https. Returns whether the connection is done with (plain
/// text, or closed before it sent anything).
async fn plain_text_on_tls(
    tcp: &tokio::net::TcpStream,
    log: &Mutex<Throttle>,
    peer: std::net::SocketAddr,
) -> bool {
    let mut first = [0u8; 16];
    let n = match tcp.peek(&mut first).await {
        Ok(0) | Err(_) => return true,
        Ok(n) => n,
    };
    let first = &first[..n];
    const METHODS: [&[u8]; 9] = [
        b"GET ",
        b"HEAD ",
        b"POST ",
        b"PUT ",
        b"DELETE ",
        b"OPTIONS ",
        b"PATCH ",
        b"CONNECT ",
        b"TRACE ",
    ];
    let http2 = first.starts_with(b"PRI * HTTP/2");
    let http1 = METHODS.iter().any(|m| first.starts_with(m));
    if !http2 && !http1 {
        return false;
    }
    if let Some(count) = lock(log).note(Instant::now()) {
        tracing::warn!(
            %peer,
            count,
            protocol = if http2 { "HTTP/2" } else { "HTTP/1.1" },
            "a plain-text client on the TLS port: it should use https:// (one line per 10 s, \
             with the count since the last)"
        );
    }
    if http1 {
        let answer = format!(
            "HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{SPEAKS_TLS}",
            SPEAKS_TLS.len()
        );
        // Best effort: the client may already be gone.
        let _ = tcp.try_write(answer.as_bytes());
    }
    // The request read off, so that the close is a FIN the client reads the answer before,
    // not a reset for unread data.
    let mut sink = [0u8; 4096];
    while matches!(tcp.try_read(&mut sink), Ok(n) if n > 0) {}
    true
}

/// One open connection in the server's count, until dropped.
struct OpenConnection(Arc<AtomicUsize>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_warning_is_logged_once_per_interval_with_its_count() {
        let t0 = Instant::now();
        let mut log = Throttle::new(Duration::from_secs(10));
        assert_eq!(log.note(t0), Some(1), "the first one at once");
        let within: Vec<_> = (1..100)
            .map(|i| log.note(t0 + Duration::from_millis(100 * i)))
            .collect();
        assert!(within.iter().all(Option::is_none), "{within:?}");
        assert_eq!(log.note(t0 + Duration::from_secs(10)), Some(100));
        assert_eq!(log.note(t0 + Duration::from_secs(11)), None);
    }
}
