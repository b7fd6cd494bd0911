//! `maumau serve`: the game server, configured by flags, a TOML file, or nothing at all.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use maumau_server::{GiveUp, LadderFormat, LadderSettings, ServerConfig};
use serde::Deserialize;

/// Start the game server.
#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:50051].
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Where finished matches are kept, in `<data-dir>/matches.sqlite` (a file-per-match
    /// `<data-dir>/matches/` of earlier versions is imported at start) [default: ./maumau-data].
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Token needed for operator calls (CreateMatch, AbortMatch); required beyond loopback.
    #[arg(long, env = "MAUMAU_OPERATOR_TOKEN", hide_env_values = true)]
    operator_token: Option<String>,
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
    max_open_matches: Option<usize>,
    max_message_bytes: Option<usize>,
    actions_per_second: Option<u32>,
    join_timeout_ms: Option<u64>,
    decision_ms: Option<u64>,
    bank_ms: Option<u64>,
    max_timeouts: Option<u32>,
    disconnect_grace_ms: Option<u64>,
    /// `bot` or `forfeit`.
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
}

fn load(path: &PathBuf) -> Result<FileConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub(crate) fn serve(args: &ServeArgs) -> Result<(), Box<dyn std::error::Error>> {
    let file = match &args.config {
        Some(p) => load(p)?,
        None => FileConfig::default(),
    };
    let defaults = ServerConfig::default();
    let mut config = ServerConfig {
        data_dir: args
            .data_dir
            .clone()
            .or(file.data_dir)
            .unwrap_or(defaults.data_dir),
        operator_token: args.operator_token.clone().or(file.operator_token),
        ..ServerConfig::default()
    };
    let listen = args
        .listen
        .or(file.listen)
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 50051)));
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
    if let Some(v) = file.give_up {
        t.give_up = match v.as_str() {
            "bot" => GiveUp::Bot,
            "forfeit" => GiveUp::Forfeit,
            other => {
                return Err(format!("give_up = {other:?}: expected \"bot\" or \"forfeit\"").into());
            }
        };
    }
    if let Some(v) = file.max_open_matches {
        config.max_open_matches = v;
    }
    if let Some(v) = file.max_message_bytes {
        config.max_message_bytes = v;
    }
    if let Some(v) = file.actions_per_second {
        config.actions_per_second = v;
    }
    if let Some(v) = file.join_timeout_ms {
        config.join_timeout = ms(v);
    }
    if args.store.is_some() && !(args.ladder || file.ladder.unwrap_or(false)) {
        return Err("--store is the ladder's storage: give --ladder too".into());
    }
    if args.ladder || file.ladder.unwrap_or(false) {
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
        if let Some(v) = file.ladder_drain_timeout_ms {
            l.drain_timeout = ms(v);
        }
        if let Some(v) = file.ladder_validation {
            l.validation.required = v;
        }
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
        config.ladder = Some(l);
    }
    let runtime = match args.worker_threads {
        Some(1) => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?,
        Some(n) => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n.into())
            .enable_all()
            .build()?,
        None => tokio::runtime::Runtime::new()?,
    };
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
        eprintln!(
            "maumau: serving on {} (data in {}{})",
            listener.local_addr()?,
            config.data_dir.display(),
            if config.ladder.is_some() {
                ", ladder on"
            } else {
                ""
            }
        );
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        maumau_server::run(listener, config, shutdown).await?;
        Ok(())
    })
}
