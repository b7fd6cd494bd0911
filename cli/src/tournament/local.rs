//! The game server `maumau tournament` starts for its games over gRPC (external programs,
//! `--over-grpc`, `--watch`), and `maumau worker` for each event with external programs:
//! `maumau_server` in this process, whose port also serves the match viewer (`/matches`,
//! `/matches/{id}/view`). It stops with the tournament, or, with `--watch`,
//! once the games are over and SIGINT (Ctrl-C) or SIGTERM comes.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Set once the games are over and the viewer alone is served: SIGINT is then the viewer's
/// (it stops it, and the command ends with status 0), no longer the interrupt of a tournament
/// that stops its programs and exits with 130 (see `stop_programs_on_interrupt`).
static VIEWER_ONLY: AtomicBool = AtomicBool::new(false);

/// Whether the games are over and only the viewer is served.
pub(super) fn viewer_only() -> bool {
    VIEWER_ONLY.load(Ordering::SeqCst)
}

/// A server in this process for the tournament's games.
pub(crate) struct LocalServer {
    /// Where it listens.
    listening: SocketAddr,
    runtime: tokio::runtime::Runtime,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), maumau_server::ServerError>>,
}

impl LocalServer {
    /// Starts a server listening on `listen` (port 0: a free one), with its data in `data_dir`.
    /// A match starts without the seats that have not joined after `join_timeout`; operator
    /// calls need `operator_token`.
    pub(crate) fn start(
        listen: SocketAddr,
        data_dir: PathBuf,
        join_timeout: Duration,
        operator_token: Option<String>,
    ) -> Result<LocalServer, Box<dyn std::error::Error>> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(listen))
            .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
        let listening = listener.local_addr()?;
        let config = maumau_server::ServerConfig {
            archive: Some(std::sync::Arc::new(maumau_archive::SqliteArchive::new(
                &data_dir,
            ))),
            data_dir,
            join_timeout,
            operator_token,
            ..maumau_server::ServerConfig::default()
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = runtime.spawn(maumau_server::run(listener, config, async {
            let _ = stopped.await;
        }));
        Ok(LocalServer {
            listening,
            runtime,
            stop,
            task,
        })
    }

    /// The address to reach it at, `host:port`: where it listens, or loopback for a server
    /// listening on every interface (`0.0.0.0`, `::`), which is no address to connect to.
    pub(crate) fn addr(&self) -> SocketAddr {
        let ip = match self.listening.ip() {
            IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        SocketAddr::new(ip, self.listening.port())
    }

    /// Where it listens, when that differs from [`LocalServer::addr`] (every interface).
    pub(super) fn listening_beyond_loopback(&self) -> Option<SocketAddr> {
        (self.listening.ip().is_unspecified()).then_some(self.listening)
    }

    /// Stops it: no new connections, the open ones closed (within the server's grace).
    pub(crate) fn stop(self) {
        let _ = self.stop.send(());
        if let Ok(Err(e)) = self.runtime.block_on(self.task) {
            eprintln!("maumau: the tournament's server stopped with an error: {e}");
        }
    }

    /// Once the games are over: says that the viewer at `list` (its match list) stays up, serves
    /// it until SIGINT (Ctrl-C) or SIGTERM, then stops.
    pub(super) fn serve_until_signal(self, list: &str) -> Result<(), Box<dyn std::error::Error>> {
        use tokio::signal::unix::{SignalKind, signal};
        VIEWER_ONLY.store(true, Ordering::SeqCst);
        // Listening before saying so: a Ctrl-C (or a script's SIGINT) right after the line is
        // heard.
        let signals = self.runtime.block_on(async {
            Ok::<_, std::io::Error>((
                signal(SignalKind::interrupt())?,
                signal(SignalKind::terminate())?,
            ))
        });
        let (mut interrupt, mut terminate) = match signals {
            Ok(s) => s,
            Err(e) => {
                self.stop();
                return Err(format!("cannot listen for Ctrl-C: {e}").into());
            }
        };
        // Not eprintln!: a closed stderr (its reader gone) must not keep the viewer from stopping.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "maumau: all games played; the viewer stays up at {list} until Ctrl-C"
        );
        self.runtime.block_on(async {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
        });
        let _ = writeln!(std::io::stderr(), "maumau: viewer stopped");
        self.stop();
        Ok(())
    }
}
