//! `maumau serve`'s server configuration: each flag over its key in the configuration file over
//! the server's default, with the operator token and TLS identity they name, and the checks that
//! refuse a setting that cannot work. The ladder's settings are [`super::ladder`]'s.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use maumau_server::{GiveUp, ServerConfig, TimeControl};

use super::ServeArgs;
use super::file::FileConfig;

/// The server's configuration and the addresses it listens on, resolved.
pub(super) struct Resolved {
    /// The game server's configuration.
    pub(super) config: ServerConfig,
    /// Where it serves the game [default: 127.0.0.1:50051].
    pub(super) listen: SocketAddr,
    /// Where it serves its metrics, if anywhere.
    pub(super) metrics_listen: Option<SocketAddr>,
}

/// The server's configuration from the flags, the configuration file and the defaults; refused
/// when a setting cannot work, or when `--operator-token` is on the command line of a server
/// beyond loopback.
pub(super) fn resolve(args: &ServeArgs, file: &FileConfig) -> Result<Resolved, String> {
    let defaults = ServerConfig::default();
    let operator_token = operator_token(args, file)?;
    let tls = super::listen::tls_identity(args, file)?;
    let data_dir = args
        .data_dir
        .clone()
        .or(file.data_dir.clone())
        .unwrap_or(defaults.data_dir);
    let mut config = ServerConfig {
        // Finished matches in `<data_dir>/matches.sqlite`, opened as the server starts.
        archive: Some(Arc::new(maumau_archive::SqliteArchive::new(&data_dir))),
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
    time_control(file, &mut config.default_time_control)?;
    match_limits(args, file, &mut config);
    connection_limits(args, file, &mut config)?;
    Ok(Resolved {
        config,
        listen,
        metrics_listen,
    })
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

/// The clock of the matches created without one of their own: from the configuration file only.
fn time_control(file: &FileConfig, t: &mut TimeControl) -> Result<(), String> {
    let ms = Duration::from_millis;
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
                ));
            }
        };
    }
    Ok(())
}

/// The limits of matches: how many are open, how large a message, how many actions a second,
/// how long a match waits for its seats.
fn match_limits(args: &ServeArgs, file: &FileConfig, config: &mut ServerConfig) {
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
        config.join_timeout = Duration::from_millis(v);
    }
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
