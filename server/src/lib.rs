//! The Mau Mau Arena game server.
//!
//! A library with one entry point, [`run`]: give it a bound listener, a [`ServerConfig`] and a
//! shutdown signal. It serves, on one port:
//!
//! - `maumau.v1.PlayService` (seats play; spectators watch), `maumau.v1.MatchService` (create,
//!   list, inspect, replays);
//! - `grpc.health.v1.Health` and server reflection (`v1` and `v1alpha`), so `grpcurl` and
//!   `buf curl` work without the proto files;
//! - grpc-web for all of it (browsers use `Watch` and `SubmitAction`);
//! - `/play`, a page where a person plays the built-in bots (`play_page.rs`; it creates
//!   matches only when [`ServerConfig::public_play`] is on);
//! - the match viewer's web pages (`/matches`, `/matches/{id}/view`, the frames as JSON; see
//!   [`viewer`]), and `/` too unless an extension serves its own front page;
//! - and whatever an [`Extension`] adds (gRPC services, web pages): the ladder
//!   (`maumau-ladder-service`) runs on the server this way, through [`Host`] alone.
//!
//! Each match is owned by one task (see `table/`); everything a seat receives is built there
//! from the engine's per-seat view. Finished matches go to an [`Archive`] (`archive.rs`, behind
//! the writer in `store.rs`): [`ServerConfig::archive`], which `maumau serve` sets to the SQLite
//! archive of `maumau-archive` (`<data_dir>/matches.sqlite`), or else a [`MemoryArchive`], not
//! durable. The server builds without any database; a restart reads back only the highest
//! creation number.
//!
//! # The path of a bot's action, file by file
//!
//! Imports point one way (`tests/imports.rs` checks there is no cycle): `play` → `registry` →
//! `table` → `store`, `frames`, `outbox`, `limit`, `clock`.
//!
//! 1. `transport/listen.rs` accepts the connection and `transport/driver.rs` runs it on one
//!    task (hyper under tonic's routes); `transport/home.rs` keeps its budgets.
//! 2. `play.rs` takes a new Play stream: its first message must be Join, whose token
//!    `registry.rs` resolves to the match's `table::Handle` (`table/handle.rs`); the
//!    stream goes to the table in an `Attach` command. That is the only time the stream's
//!    messages pass through `play.rs`.
//! 3. `table/connections.rs` reads the seat's stream on the table's task from then on (each
//!    message decoded by `maumau::encoded::Request`, an action by index straight from the bytes):
//!    an `Action` message is checked against the seat's limits (`limit.rs`) and handed to the step.
//! 4. `table/mod.rs` applies it to the game (the engine's `Game::apply_with`), `table/seat.rs`
//!    settles the seat's clock, `table/recording.rs` counts the decision and keeps it for the
//!    replay.
//! 5. `table/delivery.rs` stages what the step means for every connection, redacted per seat
//!    and encoded once, straight from the engine's values into wire bytes (`frames.rs`);
//!    `outbox.rs` queues it as one item per connection.
//! 6. `table/stream.rs` (`Outgoing`) yields the queued frames to the connection's HTTP/2
//!    stream, back on the task of step 1.
//!
//! A unary `SubmitAction` takes steps 1 and 2 (`play.rs` sends `Command::Act` through the
//! handle) and the table's answer comes back on a oneshot. At the end `table/recording.rs`
//! hands the record to `Handle::finish`, which submits it to `store.rs` (in front of the
//! `Archive`) and returns once it is durable; the registry lets go of the match when the
//! table's task returns.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:50051").await?;
//! let config = maumau_server::ServerConfig::default();
//! maumau_server::run(listener, config, async { let _ = tokio::signal::ctrl_c().await; }).await?;
//! # Ok(())
//! # }
//! ```

mod archive;
mod bots;
mod clock;
mod config;
mod cors;
mod frames;
mod host;
mod limit;
mod matches;
pub mod metrics;
pub mod metrics_port;
mod outbox;
mod page;
mod per_address;
mod percentile;
mod play;
mod play_page;
mod reasons;
mod registry;
mod store;
pub mod sync;
mod table;
mod transport;
pub mod viewer;

use std::future::Future;
use std::sync::Arc;

use maumau::pb;
use tokio::net::TcpListener;

pub use archive::{
    Archive, ArchiveError, ArchivedMatch, MemoryArchive, Summarize, prune_replay, token_hash,
};
pub use clock::now_ms;
pub use config::{GiveUp, ServerConfig, TimeControl, TlsIdentity};
pub use host::{Extension, Host, HostedMatch, MatchHandle};
pub use limit::RateLimit;
pub use page::{BoxFuture, PageResponse};
pub use per_address::{PerAddress, network};
pub use percentile::nearest_rank;
pub use play::{bearer, operator_bearer};
pub use reasons::echo;
pub use table::default_action;

/// Why the server could not run.
#[derive(Debug)]
pub enum ServerError {
    /// The data directory could not be opened.
    Storage(std::io::Error),
    /// The listener's address could not be read.
    Listener(std::io::Error),
    /// Operator calls would be open to the network.
    OpenToNetwork(std::net::SocketAddr),
    /// The operator token is empty or only whitespace: anyone could make operator calls.
    EmptyOperatorToken,
    /// The TLS certificate or key could not be used.
    Tls(String),
    /// Reflection could not be built from the descriptor set.
    Reflection(String),
    /// An origin in [`ServerConfig::allow_origins`] cannot be used; the message says which and
    /// why.
    Cors(String),
    /// Serving failed.
    Serve(std::io::Error),
    /// An [`Extension`] could not start (for the ladder: its store is locked by another
    /// process, damaged, or a format is invalid); the message says which and why.
    Extension(String),
}

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerError::Storage(e) => write!(f, "cannot open the data directory: {e}"),
            ServerError::Listener(e) => write!(f, "cannot read the listening address: {e}"),
            ServerError::OpenToNetwork(a) => write!(
                f,
                "listening on {a}, beyond loopback, needs an operator token \
                 (--operator-token-file, MAUMAU_OPERATOR_TOKEN or --operator-token) so strangers \
                 cannot create matches"
            ),
            ServerError::EmptyOperatorToken => write!(
                f,
                "the operator token is empty or only whitespace: anyone could make operator \
                 calls; give a secret, or leave it unset"
            ),
            ServerError::Tls(e) => write!(f, "cannot serve TLS: {e}"),
            ServerError::Reflection(e) => write!(f, "cannot build server reflection: {e}"),
            ServerError::Cors(e) => write!(f, "{e}"),
            ServerError::Serve(e) => write!(f, "cannot serve: {e}"),
            ServerError::Extension(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ServerError {}

/// Serves until `shutdown` completes, then aborts and records every open match, and returns.
pub async fn run(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    run_with_ready(listener, config, |_| {}, shutdown).await
}

/// Like [`run`], and calls `ready` with the listening address once the server has checked its
/// configuration, opened its data directory and is about to accept connections: the moment to
/// announce "serving on …". A server that cannot start returns its error without calling
/// `ready`.
pub async fn run_with_ready(
    listener: TcpListener,
    config: ServerConfig,
    ready: impl FnOnce(std::net::SocketAddr) + Send,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError> {
    run_extended(listener, config, |_, _| async { Ok(None) }, ready, shutdown).await
}

/// Like [`run_with_ready`], with an [`Extension`] served beside the game services: once the
/// data directory is open, `extend` gets the [`Host`] and the listening address and returns the
/// extension (or `None`, or why it cannot start). At shutdown the extension drains first, then
/// the server aborts and records the open matches, then the extension closes what waits on
/// them; it is released after the server stopped serving.
pub async fn run_extended<E, F>(
    listener: TcpListener,
    config: ServerConfig,
    extend: E,
    ready: impl FnOnce(std::net::SocketAddr) + Send,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), ServerError>
where
    E: FnOnce(Host, std::net::SocketAddr) -> F + Send,
    F: Future<Output = Result<Option<Arc<dyn Extension>>, ServerError>> + Send,
{
    let addr = listener.local_addr().map_err(ServerError::Listener)?;
    if config
        .operator_token
        .as_deref()
        .is_some_and(|t| t.trim().is_empty())
    {
        return Err(ServerError::EmptyOperatorToken);
    }
    if !addr.ip().is_loopback() && config.operator_token.is_none() {
        return Err(ServerError::OpenToNetwork(addr));
    }
    let tls = config
        .tls
        .as_ref()
        .map(transport::tls_acceptor)
        .transpose()
        .map_err(ServerError::Tls)?;
    let origins = cors::Origins::parse(&config.allow_origins).map_err(ServerError::Cors)?;
    let max_message = config.max_message_bytes;
    let limits = transport::Limits::from_config(&config);
    let registry = registry::Registry::open(config).map_err(ServerError::Storage)?;
    let extension = extend(Host::new(registry.clone()), addr).await?;

    let (health, health_service) = tonic_health::server::health_reporter();
    health
        .set_serving::<maumau::encoded::play_service_server::PlayServiceServer<play::Play>>()
        .await;
    health
        .set_serving::<pb::match_service_server::MatchServiceServer<matches::Matches>>()
        .await;
    // Health follows the store: NOT_SERVING while finished matches cannot be written. The
    // whole server ("") and the extension's services also follow the extension's own health.
    let mut storage = registry.storage_health();
    let mut extension_health = extension.as_ref().and_then(|e| e.health());
    let extension_services = extension
        .as_ref()
        .map(|e| e.service_names())
        .unwrap_or_default();
    let reporter = health.clone();
    tokio::spawn(async move {
        let status = |up: bool| {
            if up {
                tonic_health::ServingStatus::Serving
            } else {
                tonic_health::ServingStatus::NotServing
            }
        };
        loop {
            let stored = *storage.borrow_and_update();
            let extended = extension_health
                .as_mut()
                .is_none_or(|h| *h.borrow_and_update());
            reporter
                .set_service_status("", status(stored && extended))
                .await;
            for service in [
                <maumau::encoded::play_service_server::PlayServiceServer<play::Play> as tonic::server::NamedService>::NAME,
                <pb::match_service_server::MatchServiceServer<matches::Matches> as tonic::server::NamedService>::NAME,
            ] {
                reporter.set_service_status(service, status(stored)).await;
            }
            for service in &extension_services {
                reporter
                    .set_service_status(service, status(stored && extended))
                    .await;
            }
            // An extension that drops its sender no longer counts.
            let (changed, extension_gone) = match extension_health.as_mut() {
                Some(h) => tokio::select! {
                    r = storage.changed() => (r, false),
                    r = h.changed() => (Ok(()), r.is_err()),
                },
                None => (storage.changed().await, false),
            };
            if changed.is_err() {
                return;
            }
            if extension_gone {
                extension_health = None;
            }
        }
    });
    // Reflection lists only the services that answer here: the descriptor set holds every
    // service of the contract (the ladder's too), and an extension names its own.
    let mut answering = vec![
        <tonic_health::pb::health_server::HealthServer<tonic_health::server::HealthService> as tonic::server::NamedService>::NAME.to_string(),
        <maumau::encoded::play_service_server::PlayServiceServer<play::Play> as tonic::server::NamedService>::NAME.to_string(),
        <pb::match_service_server::MatchServiceServer<matches::Matches> as tonic::server::NamedService>::NAME.to_string(),
    ];
    if let Some(extension) = &extension {
        answering.extend(extension.service_names());
    }
    let reflection = |b: tonic_reflection::server::Builder<'static>| {
        answering.iter().fold(
            b.register_encoded_file_descriptor_set(maumau::FILE_DESCRIPTOR_SET)
                .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET),
            |b, name| b.with_service_name(name.clone()),
        )
    };
    let reflection_v1 = reflection(tonic_reflection::server::Builder::configure())
        .build_v1()
        .map_err(|e| ServerError::Reflection(e.to_string()))?;
    let reflection_v1alpha = reflection(tonic_reflection::server::Builder::configure())
        .build_v1alpha()
        .map_err(|e| ServerError::Reflection(e.to_string()))?;

    // `Typed`: a request that does not decode gets a reason like any other bad input.
    let play = reasons::Typed(
        maumau::encoded::play_service_server::PlayServiceServer::new(play::Play {
            registry: registry.clone(),
        })
        .max_decoding_message_size(max_message),
    );
    let matches = reasons::Typed(
        pb::match_service_server::MatchServiceServer::new(matches::Matches {
            public_limit: PerAddress::per_minute(registry.config.public_play_per_minute),
            public_open: Default::default(),
            registry: registry.clone(),
        })
        .max_decoding_message_size(max_message),
    );

    let mut routes = tonic::service::RoutesBuilder::default();
    routes
        .add_service(health_service)
        .add_service(reflection_v1)
        .add_service(reflection_v1alpha)
        .add_service(play)
        .add_service(matches);
    if let Some(extension) = &extension {
        extension.add_services(&mut routes, max_message);
    }
    let service = tower::Layer::layer(&tonic_web::GrpcWebLayer::new(), routes.routes().prepare());
    // Plain GET requests go to the match viewer's pages and the extension's, if it has any.
    let service = host::WithPages::new(extension.clone(), registry.clone(), service);
    // Pages of the origins in `allow_origins` may call it all from a browser.
    let service = cors::wrap(origins, service);
    let stopping = registry.clone();
    let stopping_extension = extension.clone();
    tracing::info!(%addr, "serving");
    ready(addr);
    let result = transport::serve(listener, service, tls, limits, async move {
        shutdown.await;
        if let Some(extension) = &stopping_extension {
            extension.drain().await;
        }
        tracing::info!("shutting down: recording open matches");
        stopping.shutdown().await;
        if let Some(extension) = &stopping_extension {
            extension.matches_closed().await;
        }
    })
    .await;
    if let Some(extension) = &extension {
        extension.release().await;
    }
    result.map_err(ServerError::Serve)
}
