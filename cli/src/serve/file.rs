//! `maumau serve --config FILE`: the configuration file's keys (TOML, every one optional), each
//! like a flag of `maumau serve` or a setting only the file has, and its reading.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// One `[[ladder_formats]]` entry of a configuration file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct FileFormat {
    pub(super) profile: String,
    pub(super) seats: u8,
    pub(super) weight: f64,
}

/// The settings a configuration file may hold. Every key is optional.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct FileConfig {
    pub(super) listen: Option<SocketAddr>,
    pub(super) data_dir: Option<PathBuf>,
    pub(super) operator_token: Option<String>,
    /// Like `--operator-token-file`.
    pub(super) operator_token_file: Option<PathBuf>,
    /// Like `--tls-cert`.
    pub(super) tls_cert: Option<PathBuf>,
    /// Like `--tls-key`.
    pub(super) tls_key: Option<PathBuf>,
    pub(super) max_open_matches: Option<usize>,
    pub(super) max_message_bytes: Option<usize>,
    pub(super) actions_per_second: Option<u32>,
    pub(super) join_timeout_ms: Option<u64>,
    pub(super) decision_ms: Option<u64>,
    pub(super) bank_ms: Option<u64>,
    pub(super) max_timeouts: Option<u32>,
    pub(super) disconnect_grace_ms: Option<u64>,
    /// `bot`, `forfeit` or `bot-until-back`.
    pub(super) give_up: Option<String>,
    /// Run the ladder (like `--ladder`).
    pub(super) ladder: Option<bool>,
    pub(super) ladder_invitation_codes: Option<Vec<String>>,
    pub(super) ladder_join_deadline_ms: Option<u64>,
    pub(super) ladder_probe_interval_ms: Option<u64>,
    pub(super) ladder_node_address: Option<String>,
    pub(super) ladder_formats: Option<Vec<FileFormat>>,
    /// Like `--store`.
    pub(super) ladder_store: Option<String>,
    /// Connections the PostgreSQL store opens at most.
    pub(super) ladder_store_max_connections: Option<usize>,
    /// How long a stopping server lets its ladder matches finish.
    pub(super) ladder_drain_timeout_ms: Option<u64>,
    /// Turn off validation of new versions (default on).
    pub(super) ladder_validation: Option<bool>,
    /// Like `--house-bots`: built-in bots kept on the ladder, e.g. `["heuristic", "search"]`.
    pub(super) ladder_house_bots: Option<Vec<String>>,
    /// Like `--metrics-listen`.
    pub(super) metrics_listen: Option<SocketAddr>,
    /// Like `--handshake-timeout-ms`.
    pub(super) handshake_timeout_ms: Option<u64>,
    /// Like `--idle-timeout-ms`.
    pub(super) idle_timeout_ms: Option<u64>,
    /// Like `--keepalive-interval-ms` (0: no pings).
    pub(super) keepalive_interval_ms: Option<u64>,
    /// Like `--keepalive-timeout-ms`.
    pub(super) keepalive_timeout_ms: Option<u64>,
    /// Like `--max-connections`.
    pub(super) max_connections: Option<usize>,
    /// Like `--max-streams-per-connection`.
    pub(super) max_streams_per_connection: Option<u32>,
    /// Like `--calls-per-second`.
    pub(super) calls_per_second: Option<u32>,
    /// Like `--resumes-per-minute`.
    pub(super) resumes_per_minute: Option<u32>,
    /// Like `--registrations-per-minute`.
    pub(super) registrations_per_minute: Option<u32>,
    /// Like `--allow-origin`, as a list.
    pub(super) allow_origins: Option<Vec<String>>,
    /// Like `--heartbeat-ms` (0: none).
    pub(super) heartbeat_ms: Option<u64>,
    /// Like `--public-play`.
    pub(super) public_play: Option<bool>,
    /// Like `--public-play-per-minute`.
    pub(super) public_play_per_minute: Option<u32>,
    /// Like `--public-play-max-open`.
    pub(super) public_play_max_open: Option<usize>,
}

/// The configuration file at `path`, or an empty one without `--config`.
pub(super) fn read(path: Option<&Path>) -> Result<FileConfig, String> {
    let Some(path) = path else {
        return Ok(FileConfig::default());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}
