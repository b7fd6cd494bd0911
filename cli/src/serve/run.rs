//! Running `maumau serve`: the runtime, the listeners opened, and the server (with the ladder or
//! without) until SIGINT or SIGTERM stops it gracefully.

use std::error::Error;
use std::net::SocketAddr;

use maumau_ladder_service::LadderSettings;
use maumau_server::ServerConfig;

use super::config::Resolved;
use super::listen;

/// Runs the server on a runtime of `worker_threads` (one per CPU when `None`) until it is
/// stopped.
pub(super) fn run(
    worker_threads: Option<u16>,
    resolved: Resolved,
    ladder: Option<LadderSettings>,
) -> Result<(), Box<dyn Error>> {
    runtime(worker_threads)?.block_on(serve_until_stopped(resolved, ladder))
}

/// The runtime: one thread with `Some(1)`, else that many workers (one per CPU when `None`).
fn runtime(worker_threads: Option<u16>) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = match worker_threads {
        Some(1) => tokio::runtime::Builder::new_current_thread(),
        Some(n) => {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(n.into());
            b
        }
        None => tokio::runtime::Builder::new_multi_thread(),
    };
    // A worker that goes idle hands the memory freed on it back to the system (see
    // `crate::return_freed_memory`): after a crowd of connections leaves, the server shrinks.
    builder
        .enable_all()
        .on_thread_park(crate::return_freed_memory)
        .build()
}

/// Opens the metrics endpoint and the game listener, then serves until a signal.
async fn serve_until_stopped(
    resolved: Resolved,
    ladder: Option<LadderSettings>,
) -> Result<(), Box<dyn Error>> {
    let Resolved {
        config,
        listen,
        metrics_listen,
    } = resolved;
    if let Some(addr) = metrics_listen {
        listen::serve_metrics(addr, &config).await?;
    }
    // Before anything is announced, so that a signal sent from then on is handled.
    let stop = stop_signal()?;
    let listener = listen::bind(listen).await?;
    let ready = announcement(&config, ladder.is_some());
    match ladder {
        // The ladder runs on the game server, through its host API.
        Some(settings) => {
            maumau_ladder_service::run(listener, config, settings, ready, stop).await?;
        }
        None => maumau_server::run_with_ready(listener, config, ready, stop).await?,
    }
    Ok(())
}

/// What the server says once it has opened everything and is about to accept.
fn announcement(
    config: &ServerConfig,
    ladder_on: bool,
) -> impl FnOnce(SocketAddr) + Send + 'static {
    let data_dir = config.data_dir.display().to_string();
    let ladder_on = if ladder_on { ", ladder on" } else { "" };
    let tls = if config.tls.is_some() { ", TLS" } else { "" };
    move |addr: SocketAddr| {
        eprintln!("maumau: serving on {addr} (data in {data_dir}{ladder_on}{tls})");
    }
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM (what systemd, Docker and Kubernetes send to stop a
/// service): either one stops the server gracefully, recording every open match as aborted.
/// The handlers are installed when this is called, not when the future is first polled.
#[cfg(unix)]
fn stop_signal() -> std::io::Result<impl std::future::Future<Output = ()> + Send> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        let name = tokio::select! {
            _ = interrupt.recv() => "SIGINT",
            _ = terminate.recv() => "SIGTERM",
        };
        tracing::info!(signal = name, "stopping");
    })
}

/// Completes on Ctrl-C.
#[cfg(not(unix))]
fn stop_signal() -> std::io::Result<impl std::future::Future<Output = ()> + Send> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}
