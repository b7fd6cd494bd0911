//! The baseline: a bare tonic bidirectional echo (one 100-byte request, one reply), served by this
//! binary re-executed as `maumau-loadgen echo-server`, on the same runtime and socket settings as
//! `maumau serve` (multi-threaded tokio runtime, TCP_NODELAY).

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tokio_stream::{Stream, StreamExt};
use tonic::transport::Channel;
use tonic::{Request, Response, Status, Streaming};

use crate::stats::{Latencies, Watchdog, Window};

/// The code generated from `proto/echo.proto`.
#[allow(
    clippy::all,
    clippy::pedantic,
    missing_docs,
    unreachable_pub,
    rustdoc::broken_intra_doc_links
)]
pub(crate) mod pb {
    tonic::include_proto!("loadgen.echo.v1");
}

use pb::echo_client::EchoClient;
use pb::echo_server::{Echo, EchoServer};

/// Bytes of filler in each request.
pub(crate) const PAYLOAD_BYTES: usize = 100;
/// Longest wait for one reply.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);
/// Most round trips one stream makes in a run (a bound far above what a run reaches).
const MAX_ROUND_TRIPS: u64 = 100_000_000;

/// The echo service: every request comes back as its own reply.
struct EchoService;

type EchoFeed = Pin<Box<dyn Stream<Item = Result<pb::EchoMessage, Status>> + Send>>;

#[tonic::async_trait]
impl Echo for EchoService {
    type EchoStream = EchoFeed;

    async fn echo(
        &self,
        req: Request<Streaming<pb::EchoMessage>>,
    ) -> Result<Response<EchoFeed>, Status> {
        Ok(Response::new(Box::pin(req.into_inner())))
    }
}

/// The longest an echo server lives, whatever happens to its parent.
const MAX_LIFETIME: Duration = Duration::from_secs(3600);

/// `maumau-loadgen echo-server`: serves the echo on `listen` (loopback only) until Ctrl-C, until
/// its stdin closes (the load generator exited, however it exited), or for an hour at most.
pub(crate) fn serve(listen: SocketAddr) -> Result<(), Box<dyn std::error::Error>> {
    if !listen.ip().is_loopback() {
        return Err(format!("{listen} is not a loopback address").into());
    }
    // The same runtime as `maumau serve`: `Runtime::new()`, one worker per CPU.
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        eprintln!("echo: serving on {}", listener.local_addr()?);
        let incoming = TcpListenerStream::new(listener).map(|conn| {
            conn.inspect(|c| {
                let _ = c.set_nodelay(true);
            })
        });
        let (closed, stdin_closed) = tokio::sync::oneshot::channel::<()>();
        // Reads stdin to its end (EOF when the parent goes away; at once when it is /dev/null).
        std::thread::spawn(move || {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            let _ = closed.send(());
        });
        tonic::transport::Server::builder()
            .add_service(EchoServer::new(EchoService))
            .serve_with_incoming_shutdown(incoming, async {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = stdin_closed => {}
                    () = tokio::time::sleep(MAX_LIFETIME) => {}
                }
            })
            .await?;
        Ok(())
    })
}

/// What one echo run measured.
#[derive(Debug, Default)]
pub(crate) struct EchoLoad {
    /// Round trips completed inside the window.
    pub(crate) round_trips: u64,
    /// Their latencies.
    pub(crate) latencies: Latencies,
    /// Streams that failed (first error kept).
    pub(crate) errors: u64,
    /// The first error, if any.
    pub(crate) first_error: Option<String>,
}

/// One stream: request, wait for the reply, repeat, until the window closes.
async fn ping_pong(mut client: EchoClient<Channel>, window: Window) -> Result<EchoLoad, String> {
    let (tx, rx) = mpsc::channel(8);
    let mut inbound = tokio::time::timeout(REPLY_TIMEOUT, client.echo(ReceiverStream::new(rx)))
        .await
        .map_err(|_| "echo call timed out".to_string())?
        .map_err(|s| format!("echo call: {s}"))?
        .into_inner();
    let mut out = EchoLoad::default();
    let payload = vec![0x5a; PAYLOAD_BYTES];
    // The same watchdog as the game's bots: one timer per stream, re-armed only when it fires.
    let mut watchdog = Watchdog::new(window);
    let mut sent = Instant::now();
    for seq in 0..MAX_ROUND_TRIPS {
        if sent >= window.end {
            break;
        }
        let msg = pb::EchoMessage {
            seq,
            payload: payload.clone(),
        };
        tx.send(msg)
            .await
            .map_err(|_| "the request stream closed".to_string())?;
        match watchdog.guard(inbound.next()).await {
            Some(Some(Ok(reply))) if reply.seq == seq => {}
            Some(Some(Ok(reply))) => return Err(format!("reply {} to request {seq}", reply.seq)),
            Some(Some(Err(s))) => return Err(format!("echo stream: {s}")),
            Some(None) => return Err("the echo stream ended".into()),
            None if window.over() => break,
            None => return Err("no echo reply within 10 s".into()),
        }
        let now = watchdog.progress();
        if window.contains(now) {
            out.round_trips += 1;
            out.latencies.push(now - sent);
        }
        sent = now;
    }
    Ok(out)
}

/// Runs `streams` echo streams against `url` until `window` closes: over one shared HTTP/2
/// connection, or one connection each.
pub(crate) async fn load(
    url: &str,
    streams: usize,
    shared: bool,
    window: Window,
) -> Result<EchoLoad, String> {
    let channels = crate::connect(url, if shared { 1 } else { streams }).await?;
    let channels = Arc::new(channels);
    let tasks: Vec<_> = (0..streams)
        .map(|i| {
            let client = EchoClient::new(channels[i % channels.len()].clone());
            tokio::spawn(ping_pong(client, window))
        })
        .collect();
    let mut total = EchoLoad::default();
    for mut t in tasks {
        let r = tokio::time::timeout_at(window.end + REPLY_TIMEOUT * 2, &mut t).await;
        t.abort();
        match r {
            Ok(Ok(Ok(l))) => {
                total.round_trips += l.round_trips;
                total.latencies.merge(l.latencies);
            }
            Ok(Ok(Err(e))) => {
                total.errors += 1;
                total.first_error.get_or_insert(e);
            }
            Ok(Err(e)) => {
                total.errors += 1;
                total.first_error.get_or_insert(format!("echo task: {e}"));
            }
            Err(_) => {
                total.errors += 1;
                total
                    .first_error
                    .get_or_insert("an echo task did not finish".into());
            }
        }
    }
    Ok(total)
}
