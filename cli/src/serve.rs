//! `maumau serve`: the game server, configured by flags, a TOML file, or nothing at all.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use maumau_ladder_service::{LadderFormat, LadderSettings};
use maumau_server::{GiveUp, ServerConfig, TlsIdentity};
use serde::Deserialize;

/// Start the game server.
#[derive(clap::Args)]
#[command(mut_arg("operator_token", |a| a.help(
    "Token needed for operator calls (CreateMatch, AbortMatch, the ladder's operator calls); \
     required beyond loopback, never empty. Prefer MAUMAU_OPERATOR_TOKEN or \
     --operator-token-file: a flag's value is visible to every local user in the process list"
)))]
pub(crate) struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:50051].
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Where finished matches are kept, in `<data-dir>/matches.sqlite` (a file-per-match
    /// `<data-dir>/matches/` of earlier versions is imported at start) [default: ./maumau-data].
    #[arg(long)]
    data_dir: Option<PathBuf>,
    #[command(flatten)]
    operator_token: crate::operator_token::OperatorTokenArgs,
    /// Serve TLS with this certificate chain (a PEM file, the server's certificate first).
    /// Needs --tls-key. Without both, plain TCP: then keep the server on loopback or behind a
    /// TLS proxy, or bearer tokens cross the network in clear.
    #[arg(long, value_name = "PATH", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (a PEM file: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "PATH", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// A TOML file with any of the settings below; flags given on the command line win.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Run the ladder too: registration, lobbies, matchmaking and ratings (docs/LADDER.md), with
    /// its store in `<data-dir>/ladder`.
    #[arg(long)]
    ladder: bool,
    /// Ladder registration needs one of these invitation codes (comma-separated); unset: open.
    #[arg(
        long,
        env = "MAUMAU_LADDER_INVITATION_CODES",
        hide_env_values = true,
        value_delimiter = ','
    )]
    ladder_invitation_code: Vec<String>,
    /// Keep the ladder in PostgreSQL (`postgres://user[:password]@host[:port]/db`) so that
    /// several server processes share it; unset: SQLite in `<data-dir>/ladder`, one process.
    #[arg(long, env = "MAUMAU_LADDER_STORE", hide_env_values = true)]
    store: Option<String>,
    /// Threads that run matches and connections [default: one per CPU]. 1 runs everything on
    /// one thread (tokio's current-thread runtime); the search bot and the writing of finished
    /// matches use threads of their own either way.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=1024))]
    worker_threads: Option<u16>,
    /// Serve the server's metrics (Prometheus text format, `GET /metrics`) on this address, e.g.
    /// 127.0.0.1:9090; unset: no metrics endpoint. Keep it off the public internet.
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<SocketAddr>,
    /// Close a connection that has made no request this long after it connected (a silent TCP
    /// connection, an unfinished HTTP/2 handshake) [default: 10000].
    #[arg(long, value_name = "MS")]
    handshake_timeout_ms: Option<u64>,
    /// Close a connection with no call or stream open for this long [default: 300000].
    #[arg(long, value_name = "MS")]
    idle_timeout_ms: Option<u64>,
    /// Send an HTTP/2 keepalive ping on every connection this often; 0 sends none
    /// [default: 30000].
    #[arg(long, value_name = "MS")]
    keepalive_interval_ms: Option<u64>,
    /// Drop a peer that does not answer a keepalive ping within this long [default: 20000].
    #[arg(long, value_name = "MS")]
    keepalive_timeout_ms: Option<u64>,
    /// Most connections open at once; more are closed as soon as they connect
    /// [default: 10000].
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Most concurrent calls (HTTP/2 streams) on one connection [default: 1024].
    #[arg(long, value_name = "N")]
    max_streams_per_connection: Option<u32>,
    /// Actions one Play stream may send per second, bursts of twice this [default: 1000].
    #[arg(long, value_name = "N")]
    actions_per_second: Option<u32>,
    /// Actions one seat may send per second (streamed or by SubmitAction), SubmitAction calls
    /// per connection, and Pings and Resumes per seat and per stream; bursts of twice this; more
    /// get RATE_LIMITED [default: 1000].
    #[arg(long, value_name = "N")]
    calls_per_second: Option<u32>,
    /// Resumes (each re-sends the match's events) one seat may make per minute, at most this
    /// many at once; more get RATE_LIMITED [default: 60].
    #[arg(long, value_name = "N")]
    resumes_per_minute: Option<u32>,
    /// With --ladder: registrations one client IP address (IPv6: one /64) may make per minute,
    /// at most this many at once; more get LADDER_ERROR_REASON_RATE_LIMITED [default: 30].
    #[arg(long, value_name = "N")]
    registrations_per_minute: Option<u32>,
    /// With --ladder: keep these built-in bots on the ladder as house bots (comma-separated:
    /// random, heuristic, search), under the reserved owner `house`: they fill tables a real
    /// bot would otherwise wait for (docs/LADDER.md, "House bots").
    #[arg(long, value_name = "KINDS", value_delimiter = ',')]
    house_bots: Vec<String>,
    /// Let web pages of this origin call the server from a browser (CORS for gRPC-web and the
    /// viewer's JSON), e.g. https://cards.example or http://127.0.0.1:8080; repeatable; `*`
    /// allows every origin. No cookies are ever allowed: pages send seat tokens in the
    /// `authorization` header.
    #[arg(long = "allow-origin", value_name = "ORIGIN")]
    allow_origins: Vec<String>,
    /// Send a Heartbeat on every Play and Watch stream that has been silent this long, so that
    /// proxies which close idle connections keep it; 0 sends none [default: 15000].
    #[arg(long, value_name = "MS")]
    heartbeat_ms: Option<u64>,
    /// Public mode: anyone may create a match against the built-in bots without the operator
    /// token (`CreatePublicMatch`, which the `/play` page uses): never rated, a person's clock,
    /// one person per match, the rest built-in bots; rate limited per client address.
    #[arg(long)]
    public_play: bool,
    /// With --public-play: public matches one client IP address (IPv6: one /64) may create per
    /// minute, at most this many at once; more get RATE_LIMITED [default: 10].
    #[arg(long, value_name = "N")]
    public_play_per_minute: Option<u32>,
    /// With --public-play: most public matches open at once; more are refused with UNAVAILABLE
    /// until one ends [default: 200].
    #[arg(long, value_name = "N")]
    public_play_max_open: Option<usize>,
}

/// A built-in bot's kind by name, for `--house-bots`.
fn house_bot_kind(name: &str) -> Result<maumau::pb::BotKind, String> {
    match name.trim() {
        "random" => Ok(maumau::pb::BotKind::Random),
        "heuristic" => Ok(maumau::pb::BotKind::Heuristic),
        "search" => Ok(maumau::pb::BotKind::Search),
        other => Err(format!(
            "--house-bots: unknown bot {other:?} (random, heuristic or search)"
        )),
    }
}

/// One `[[ladder_formats]]` entry of a configuration file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFormat {
    profile: String,
    seats: u8,
    weight: f64,
}

/// The settings a configuration file may hold. Every key is optional.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct FileConfig {
    listen: Option<SocketAddr>,
    data_dir: Option<PathBuf>,
    operator_token: Option<String>,
    /// Like `--operator-token-file`.
    operator_token_file: Option<PathBuf>,
    /// Like `--tls-cert`.
    tls_cert: Option<PathBuf>,
    /// Like `--tls-key`.
    tls_key: Option<PathBuf>,
    max_open_matches: Option<usize>,
    max_message_bytes: Option<usize>,
    actions_per_second: Option<u32>,
    join_timeout_ms: Option<u64>,
    decision_ms: Option<u64>,
    bank_ms: Option<u64>,
    max_timeouts: Option<u32>,
    disconnect_grace_ms: Option<u64>,
    /// `bot`, `forfeit` or `bot-until-back`.
    give_up: Option<String>,
    /// Run the ladder (like `--ladder`).
    ladder: Option<bool>,
    ladder_invitation_codes: Option<Vec<String>>,
    ladder_join_deadline_ms: Option<u64>,
    ladder_node_address: Option<String>,
    ladder_formats: Option<Vec<FileFormat>>,
    /// Like `--store`.
    ladder_store: Option<String>,
    /// How long a stopping server lets its ladder matches finish.
    ladder_drain_timeout_ms: Option<u64>,
    /// Turn off validation of new versions (default on).
    ladder_validation: Option<bool>,
    /// Like `--house-bots`: built-in bots kept on the ladder, e.g. `["heuristic", "search"]`.
    ladder_house_bots: Option<Vec<String>>,
    /// Like `--metrics-listen`.
    metrics_listen: Option<SocketAddr>,
    /// Like `--handshake-timeout-ms`.
    handshake_timeout_ms: Option<u64>,
    /// Like `--idle-timeout-ms`.
    idle_timeout_ms: Option<u64>,
    /// Like `--keepalive-interval-ms` (0: no pings).
    keepalive_interval_ms: Option<u64>,
    /// Like `--keepalive-timeout-ms`.
    keepalive_timeout_ms: Option<u64>,
    /// Like `--max-connections`.
    max_connections: Option<usize>,
    /// Like `--max-streams-per-connection`.
    max_streams_per_connection: Option<u32>,
    /// Like `--calls-per-second`.
    calls_per_second: Option<u32>,
    /// Like `--resumes-per-minute`.
    resumes_per_minute: Option<u32>,
    /// Like `--registrations-per-minute`.
    registrations_per_minute: Option<u32>,
    /// Like `--allow-origin`, as a list.
    allow_origins: Option<Vec<String>>,
    /// Like `--heartbeat-ms` (0: none).
    heartbeat_ms: Option<u64>,
    /// Like `--public-play`.
    public_play: Option<bool>,
    /// Like `--public-play-per-minute`.
    public_play_per_minute: Option<u32>,
    /// Like `--public-play-max-open`.
    public_play_max_open: Option<usize>,
}

/// The connection and call limits: flags win over the file, which wins over the defaults.
fn connection_limits(
    args: &ServeArgs,
    file: &FileConfig,
    config: &mut ServerConfig,
) -> Result<(), String> {
    let ms = Duration::from_millis;
    if let Some(v) = args.handshake_timeout_ms.or(file.handshake_timeout_ms) {
        config.handshake_timeout = ms(v);
    }
    if let Some(v) = args.idle_timeout_ms.or(file.idle_timeout_ms) {
        config.idle_timeout = ms(v);
    }
    if let Some(v) = args.keepalive_interval_ms.or(file.keepalive_interval_ms) {
        config.keepalive_interval = (v > 0).then(|| ms(v));
    }
    if let Some(v) = args.keepalive_timeout_ms.or(file.keepalive_timeout_ms) {
        config.keepalive_timeout = ms(v);
    }
    if let Some(v) = args.max_connections.or(file.max_connections) {
        config.max_connections = v;
    }
    if let Some(v) = args
        .max_streams_per_connection
        .or(file.max_streams_per_connection)
    {
        config.max_streams_per_connection = v;
    }
    if let Some(v) = args.calls_per_second.or(file.calls_per_second) {
        config.calls_per_second = v;
    }
    if let Some(v) = args.resumes_per_minute.or(file.resumes_per_minute) {
        config.resumes_per_minute = v;
    }
    if let Some(v) = args.heartbeat_ms.or(file.heartbeat_ms) {
        config.heartbeat_interval = (v > 0).then(|| ms(v));
    }
    if args.public_play || file.public_play == Some(true) {
        config.public_play = true;
    }
    if let Some(v) = args.public_play_per_minute.or(file.public_play_per_minute) {
        config.public_play_per_minute = v;
    }
    if let Some(v) = args.public_play_max_open.or(file.public_play_max_open) {
        config.public_play_max_open = v;
    }
    if !args.allow_origins.is_empty() {
        config.allow_origins = args.allow_origins.clone();
    } else if let Some(origins) = &file.allow_origins {
        config.allow_origins = origins.clone();
    }
    let positive = [
        ("handshake_timeout_ms", config.handshake_timeout.is_zero()),
        ("idle_timeout_ms", config.idle_timeout.is_zero()),
        ("keepalive_timeout_ms", config.keepalive_timeout.is_zero()),
        ("max_connections", config.max_connections == 0),
        (
            "max_streams_per_connection",
            config.max_streams_per_connection == 0,
        ),
        ("actions_per_second", config.actions_per_second == 0),
        ("public_play_per_minute", config.public_play_per_minute == 0),
        ("public_play_max_open", config.public_play_max_open == 0),
        ("calls_per_second", config.calls_per_second == 0),
        ("resumes_per_minute", config.resumes_per_minute == 0),
    ];
    if let Some((name, _)) = positive.iter().find(|(_, zero)| *zero) {
        return Err(format!("{name} must be greater than 0"));
    }
    Ok(())
}

fn load(path: &PathBuf) -> Result<FileConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The operator token: from the flags (or their variables), else from the configuration file;
/// never empty.
fn operator_token(args: &ServeArgs, file: &FileConfig) -> Result<Option<String>, String> {
    let given = args.operator_token.resolve()?;
    if given.is_some() {
        return Ok(given);
    }
    let config = args
        .config
        .as_deref()
        .map_or_else(String::new, |p| p.display().to_string());
    match (&file.operator_token, &file.operator_token_file) {
        (Some(_), Some(_)) => Err(format!(
            "{config}: give operator_token or operator_token_file, not both"
        )),
        (Some(t), None) => {
            crate::operator_token::check(t.clone(), &format!("operator_token in {config}"))
                .map(Some)
        }
        (None, Some(p)) => crate::operator_token::read_file(p).map(Some),
        (None, None) => Ok(None),
    }
}

/// The TLS certificate and key: from the flags, else from the configuration file; both or none.
fn tls_identity(args: &ServeArgs, file: &FileConfig) -> Result<Option<TlsIdentity>, String> {
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

pub(crate) fn serve(args: &ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    let file = match &args.config {
        Some(p) => load(p)?,
        None => FileConfig::default(),
    };
    let defaults = ServerConfig::default();
    let operator_token = operator_token(args, &file)?;
    let tls = tls_identity(args, &file)?;
    let data_dir = args
        .data_dir
        .clone()
        .or(file.data_dir.clone())
        .unwrap_or(defaults.data_dir);
    let mut config = ServerConfig {
        // Finished matches in `<data_dir>/matches.sqlite`, opened as the server starts.
        archive: Some(std::sync::Arc::new(maumau_archive::SqliteArchive::new(
            &data_dir,
        ))),
        data_dir,
        operator_token,
        tls,
        ..ServerConfig::default()
    };
    let listen = args
        .listen
        .or(file.listen)
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 50051)));
    crate::operator_token::refuse_on_command_line(!listen.ip().is_loopback())?;
    let metrics_listen = args.metrics_listen.or(file.metrics_listen);
    let ms = Duration::from_millis;
    let t = &mut config.default_time_control;
    if let Some(v) = file.decision_ms {
        t.decision = ms(v);
    }
    if let Some(v) = file.bank_ms {
        t.bank = ms(v);
    }
    if let Some(v) = file.max_timeouts {
        t.max_timeouts = v;
    }
    if let Some(v) = file.disconnect_grace_ms {
        t.disconnect_grace = ms(v);
    }
    if let Some(v) = &file.give_up {
        t.give_up = match v.as_str() {
            "bot" => GiveUp::Bot,
            "forfeit" => GiveUp::Forfeit,
            "bot-until-back" => GiveUp::BotUntilBack,
            other => {
                return Err(format!(
                    "give_up = {other:?}: expected \"bot\", \"forfeit\" or \"bot-until-back\""
                )
                .into());
            }
        };
    }
    if let Some(v) = file.max_open_matches {
        config.max_open_matches = v;
    }
    if let Some(v) = file.max_message_bytes {
        config.max_message_bytes = v;
    }
    if let Some(v) = args.actions_per_second.or(file.actions_per_second) {
        config.actions_per_second = v;
    }
    if let Some(v) = file.join_timeout_ms {
        config.join_timeout = ms(v);
    }
    connection_limits(args, &file, &mut config)?;
    let ladder_wanted = args.ladder || file.ladder.unwrap_or(false);
    if !args.house_bots.is_empty() && !ladder_wanted {
        return Err("--house-bots keeps bots on the ladder: give --ladder too".into());
    }
    if args.store.is_some() && !ladder_wanted {
        return Err("--store is the ladder's storage: give --ladder too".into());
    }
    let mut ladder = None;
    if ladder_wanted {
        let mut l = LadderSettings::default();
        if !args.ladder_invitation_code.is_empty() {
            l.invitation_codes = args.ladder_invitation_code.clone();
        } else if let Some(codes) = file.ladder_invitation_codes {
            l.invitation_codes = codes;
        }
        if let Some(v) = file.ladder_join_deadline_ms {
            l.join_deadline = ms(v);
        }
        if let Some(v) = file.ladder_node_address {
            l.node_address = v;
        }
        if let Some(url) = args.store.clone().or(file.ladder_store) {
            if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                return Err(format!(
                    "--store: expected a postgres:// URL (SQLite is the default and needs none), \
                     not {:?}",
                    url.split('@').next_back().unwrap_or_default()
                )
                .into());
            }
            l.store = Some(url);
        }
        if let Some(v) = args
            .registrations_per_minute
            .or(file.registrations_per_minute)
        {
            if v == 0 {
                return Err("registrations_per_minute must be greater than 0".into());
            }
            l.registrations_per_minute = v;
        }
        if let Some(v) = file.ladder_drain_timeout_ms {
            l.drain_timeout = ms(v);
        }
        if let Some(v) = file.ladder_validation {
            l.validation.required = v;
        }
        let house = if args.house_bots.is_empty() {
            file.ladder_house_bots.unwrap_or_default()
        } else {
            args.house_bots.clone()
        };
        l.house_bots = house
            .iter()
            .map(|k| house_bot_kind(k))
            .collect::<Result<_, _>>()?;
        if let Some(formats) = file.ladder_formats {
            l.formats = formats
                .into_iter()
                .map(|f| LadderFormat {
                    profile: f.profile,
                    seats: f.seats,
                    weight: f.weight,
                })
                .collect();
        }
        if l.join_deadline >= config.join_timeout {
            return Err(format!(
                "ladder_join_deadline_ms ({} ms) must be shorter than join_timeout_ms ({} ms)",
                l.join_deadline.as_millis(),
                config.join_timeout.as_millis()
            )
            .into());
        }
        ladder = Some(l);
    }
    let mut builder = match args.worker_threads {
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
    let runtime = builder
        .enable_all()
        .on_thread_park(crate::return_freed_memory)
        .build()?;
    runtime.block_on(async move {
        if let Some(addr) = metrics_listen {
            // Served by the server's own connection loop (its timeouts and a connection cap),
            // not by the exporter's listener, which has neither.
            let listener = tokio::net::TcpListener::bind(addr)
                .await
                .map_err(|e| format!("cannot serve metrics on {addr}: {e}"))?;
            let handle = metrics_exporter_prometheus::PrometheusBuilder::new()
                .install_recorder()
                .map_err(|e| format!("cannot serve metrics on {addr}: {e}"))?;
            maumau_server::metrics::describe();
            let bound = listener.local_addr().unwrap_or(addr);
            eprintln!("maumau: metrics on http://{bound}/metrics");
            let render: maumau_server::metrics::Render =
                std::sync::Arc::new(move || handle.render());
            let metrics_config = config.clone();
            tokio::spawn(async move {
                let served = maumau_server::metrics::serve(
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
        }
        // Before anything is announced, so that a signal sent from then on is handled.
        let stop = stop_signal()?;
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
        let data_dir = config.data_dir.display().to_string();
        let ladder_on = if ladder.is_some() { ", ladder on" } else { "" };
        let tls = if config.tls.is_some() { ", TLS" } else { "" };
        // Announced only once the server has opened everything and is about to accept.
        let ready = move |addr: SocketAddr| {
            eprintln!("maumau: serving on {addr} (data in {data_dir}{ladder_on}{tls})");
        };
        match ladder {
            // The ladder runs on the game server, through its host API.
            Some(settings) => {
                maumau_ladder_service::run(listener, config, settings, ready, stop).await?;
            }
            None => maumau_server::run_with_ready(listener, config, ready, stop).await?,
        }
        Ok(())
    })
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
