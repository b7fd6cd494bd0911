//! Where and how `maumau serve` listens: the TLS identity it serves with (the PEM files the flags
//! or the configuration file name), its game listener, and its metrics endpoint.

use std::net::SocketAddr;
use std::sync::Arc;

use maumau_server::{ServerConfig, TlsIdentity};
use tokio::net::TcpListener;

use super::ServeArgs;
use super::file::FileConfig;

/// The TLS certificate and key: from the flags, else from the configuration file; both or none.
pub(super) fn tls_identity(
    args: &ServeArgs,
    file: &FileConfig,
) -> Result<Option<TlsIdentity>, String> {
    let (cert, key) = match (&args.tls_cert, &args.tls_key) {
        (Some(c), Some(k)) => (c, k),
        _ => match (&file.tls_cert, &file.tls_key) {
            (Some(c), Some(k)) => (c, k),
            (None, None) => return Ok(None),
            _ => return Err("tls_cert and tls_key go together: give both or neither".into()),
        },
    };
    // A PEM chain of a few certificates, a PEM key: far below these.
    let read = crate::operator_token::read_limited;
    Ok(Some(TlsIdentity {
        cert_pem: read(cert, "TLS certificate", 1 << 20)?,
        key_pem: read(key, "TLS key", 64 << 10)?,
    }))
}

/// The game server's listener on `addr`.
pub(super) async fn bind(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))
}

/// Serves the server's metrics (Prometheus text format, `GET /metrics`) on `addr` in a task of
/// its own, for as long as the runtime runs; announces where once it listens.
pub(super) async fn serve_metrics(addr: SocketAddr, config: &ServerConfig) -> Result<(), String> {
    // Served by the server's own connection loop (its timeouts and a connection cap), not by the
    // exporter's listener, which has neither.
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot serve metrics on {addr}: {e}"))?;
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .map_err(|e| format!("cannot serve metrics on {addr}: {e}"))?;
    maumau_server::metrics::describe();
    let bound = listener.local_addr().unwrap_or(addr);
    eprintln!("maumau: metrics on http://{bound}/metrics");
    let render: maumau_server::metrics_port::Render = Arc::new(move || handle.render());
    let metrics_config = config.clone();
    tokio::spawn(async move {
        let served = maumau_server::metrics_port::serve(
            listener,
            &metrics_config,
            render,
            std::future::pending(),
        )
        .await;
        if let Err(e) = served {
            tracing::error!(error = %e, "the metrics listener stopped");
        }
    });
    Ok(())
}
