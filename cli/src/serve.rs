//! `maumau serve`: the game server, configured by flags, a TOML file, or nothing at all.
//!
//! Its steps, a module each: [`file`](mod@file) reads the configuration file; [`config`]
//! resolves the server's configuration (flags over the file over the defaults, with the operator
//! token and, through [`listen`], the TLS identity); [`ladder`] the ladder's settings when it runs
//! one; and [`run`] starts the runtime, opens the listeners and serves until SIGINT or SIGTERM.

mod config;
mod file;
mod ladder;
mod listen;
mod run;

use std::net::SocketAddr;
use std::path::PathBuf;

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

/// Runs `maumau serve` until SIGINT or SIGTERM: reads the configuration file, resolves the
/// server's and the ladder's settings (every refusal comes before the runtime starts), and runs.
pub(crate) fn serve(args: &ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    let file = file::read(args.config.as_deref())?;
    let resolved = config::resolve(args, &file)?;
    let ladder = ladder::settings(args, file, resolved.config.join_timeout)?;
    run::run(args.worker_threads, resolved, ladder)
}
