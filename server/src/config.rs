//! Server configuration, with defaults that work with no configuration at all.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use maumau::{pb, wire};

use crate::archive::Archive;

/// Everything the server can be told at start. `ServerConfig::default()` is a working server for
/// bots on the same machine or network.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// The data directory: `maumau serve` keeps its archive of finished matches here
    /// (`<data_dir>/matches.sqlite`), and the ladder its store (`<data_dir>/ladder`). The game
    /// server itself reads and writes finished matches only through [`ServerConfig::archive`].
    pub data_dir: PathBuf,
    /// Where finished matches are kept (`maumau serve`: the SQLite archive of `maumau-archive`
    /// in `data_dir`). `None` (the default) keeps them in a [`MemoryArchive`](crate::MemoryArchive), which is **not
    /// durable**: a restart forgets every finished match.
    pub archive: Option<Arc<dyn Archive>>,
    /// When set, CreateMatch, AbortMatch and RevealMatch need `authorization: Bearer <operator
    /// token>` (and only it reads a sealed match before it is revealed).
    pub operator_token: Option<String>,
    /// Most matches that may be waiting or running at once.
    pub max_open_matches: usize,
    /// Largest message a client may send, in bytes.
    pub max_message_bytes: usize,
    /// Actions one connection may send per second (sustained); bursts of twice this are allowed.
    pub actions_per_second: u32,
    /// The time control of a match that does not set one (zero fields take these values).
    pub default_time_control: TimeControl,
    /// A match starts when every remote seat has joined, or this long after it was created.
    pub join_timeout: Duration,
    /// Serve TLS (HTTP/2 and HTTP/1.1 over rustls) with this certificate and key instead of
    /// plain TCP. `None` (the default) serves plain TCP.
    pub tls: Option<TlsIdentity>,
    /// A connection that has made no request this long after it was accepted (a silent TCP
    /// connection, an unfinished HTTP/2 handshake) is closed.
    pub handshake_timeout: Duration,
    /// A connection with no open request (no call or stream in progress) for this long is
    /// closed.
    pub idle_timeout: Duration,
    /// HTTP/2 keepalive: the server pings every connection this often; `None` sends no pings.
    pub keepalive_interval: Option<Duration>,
    /// A peer that does not answer a keepalive ping within this long is dropped.
    pub keepalive_timeout: Duration,
    /// Most connections open at once; connections beyond it are closed as soon as they are
    /// accepted (and counted in the log).
    pub max_connections: usize,
    /// Most concurrent HTTP/2 streams (calls) on one connection.
    pub max_streams_per_connection: u32,
    /// Actions one seat (one token) may send per second over all its connections, streamed or by
    /// `SubmitAction`; `SubmitAction` calls one connection may make per second; and, as a budget
    /// apart, Pings and Resume messages per seat and per Play stream. Bursts of twice this.
    pub calls_per_second: u32,
    /// Resumes (a Join or Watch with `resume`, or a Resume message) one seat may make per
    /// minute, each of which sends the match's events again; bursts of twice this.
    pub resumes_per_minute: u32,
    /// How long a connection that floods (keeps calling after its budget of calls, or of
    /// unknown tokens, is spent) is held unread before it is closed: a flooder that waits for its
    /// answers waits there instead of reconnecting at once with a fresh budget. Keep it shorter
    /// than `handshake_timeout`, so a flooder holds no socket longer than a silent client.
    pub flood_hold: Duration,
    /// Web pages of these origins (`scheme://host[:port]`, or `*` for any) may call the
    /// gRPC-web services and read the viewer's JSON from a browser (CORS). Empty (the default):
    /// no cross-origin request is answered. Credentials (cookies) are never allowed: a page
    /// sends a seat's token in the `authorization` header.
    pub allow_origins: Vec<String>,
    /// Every server stream (Play, Watch) that has sent nothing for this long gets a
    /// `Heartbeat` message (within half this long more), so that proxies which close idle
    /// connections keep it open; `None` sends none.
    pub heartbeat_interval: Option<Duration>,
    /// The public mode (`maumau serve --public-play`): anyone may create a match against the
    /// built-in bots with `CreatePublicMatch` (the `/play` page does), without the operator
    /// token, within its limits (proto/maumau/v1/match.proto). Off by default.
    pub public_play: bool,
    /// `CreatePublicMatch` calls one client address (IPv4, or IPv6 /64) may make per minute, at
    /// most this many at once.
    pub public_play_per_minute: u32,
    /// Most public matches open (waiting or being played) at once; more `CreatePublicMatch`
    /// calls are refused with `ERROR_REASON_UNAVAILABLE` until one ends. Each costs the server
    /// its bots' thinking, and a match whose person never comes is played by bots to its end.
    pub public_play_max_open: usize,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            data_dir: PathBuf::from("maumau-data"),
            archive: None,
            operator_token: None,
            max_open_matches: 20_000,
            max_message_bytes: 64 * 1024,
            actions_per_second: 1_000,
            default_time_control: TimeControl::default(),
            join_timeout: Duration::from_secs(60),
            tls: None,
            handshake_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(300),
            keepalive_interval: Some(Duration::from_secs(30)),
            keepalive_timeout: Duration::from_secs(20),
            max_connections: 10_000,
            max_streams_per_connection: 1_024,
            calls_per_second: 1_000,
            resumes_per_minute: 60,
            flood_hold: Duration::from_secs(5),
            allow_origins: Vec::new(),
            heartbeat_interval: Some(Duration::from_secs(15)),
            public_play: false,
            public_play_per_minute: 10,
            public_play_max_open: 200,
        }
    }
}

/// The server's TLS certificate chain and private key, in PEM (as `--tls-cert` and `--tls-key`
/// files hold them).
#[derive(Clone)]
pub struct TlsIdentity {
    /// The certificate chain: the server's certificate first, then any intermediates.
    pub cert_pem: Vec<u8>,
    /// The private key (PKCS#8, PKCS#1 or SEC1).
    pub key_pem: Vec<u8>,
}

impl std::fmt::Debug for TlsIdentity {
    /// Never shows the key.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsIdentity")
            .field("cert_pem", &format_args!("{} bytes", self.cert_pem.len()))
            .field("key_pem", &format_args!("(hidden)"))
            .finish()
    }
}

/// What happens to a seat that gives up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// The built-in random bot plays on for it.
    Bot,
    /// It forfeits: the server plays the default action for it and it is placed last.
    Forfeit,
    /// The built-in random bot plays for it while it is away; its client takes the seat back by
    /// joining again.
    BotUntilBack,
}

/// A match's clock (see `TimeControl` in `proto/maumau/v1/rules.proto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControl {
    /// Allowance of every decision.
    pub decision: Duration,
    /// Each seat's time bank at the start.
    pub bank: Duration,
    /// Timeouts after which a seat gives up.
    pub max_timeouts: u32,
    /// How long a seat that must act may stay disconnected before it gives up.
    pub disconnect_grace: Duration,
    /// What giving up means.
    pub give_up: GiveUp,
    /// No clock for a connected seat (for people): `decision`, `bank` and `max_timeouts` are
    /// ignored; `disconnect_grace` still applies to a seat that must act while away.
    pub untimed: bool,
}

impl Default for TimeControl {
    /// Defaults for bots on the same network: 2 s per decision, a 30 s bank, 3 timeouts, 10 s of
    /// grace after a disconnect, then the built-in bot takes over.
    fn default() -> TimeControl {
        TimeControl {
            decision: Duration::from_secs(2),
            bank: Duration::from_secs(30),
            max_timeouts: 3,
            disconnect_grace: Duration::from_secs(10),
            give_up: GiveUp::Bot,
            untimed: false,
        }
    }
}

impl TimeControl {
    /// Reads a wire time control; zero or unset fields take `defaults`' values. An unknown
    /// `give_up` value is refused with `ERROR_REASON_INVALID_ARGUMENT` (it is never read as the
    /// default: a client that asked for a policy this server does not know must hear so).
    pub fn from_wire(
        w: Option<&pb::TimeControl>,
        defaults: &TimeControl,
    ) -> Result<TimeControl, tonic::Status> {
        let Some(w) = w else { return Ok(*defaults) };
        let ms = |v: u32, d: Duration| {
            if v == 0 {
                d
            } else {
                Duration::from_millis(v.into())
            }
        };
        let give_up = match pb::GiveUpPolicy::try_from(w.give_up) {
            Ok(pb::GiveUpPolicy::Unspecified) => defaults.give_up,
            Ok(pb::GiveUpPolicy::Bot) => GiveUp::Bot,
            Ok(pb::GiveUpPolicy::Forfeit) => GiveUp::Forfeit,
            Ok(pb::GiveUpPolicy::BotUntilBack) => GiveUp::BotUntilBack,
            Err(_) => {
                return Err(wire::status(
                    pb::ErrorReason::InvalidArgument,
                    format!(
                        "time_control.give_up: unknown value {}; use GIVE_UP_POLICY_BOT, \
                         GIVE_UP_POLICY_FORFEIT or GIVE_UP_POLICY_BOT_UNTIL_BACK (or leave it \
                         unset for the server's default)",
                        w.give_up
                    ),
                ));
            }
        };
        Ok(TimeControl {
            decision: ms(w.decision_ms, defaults.decision),
            bank: ms(w.bank_ms, defaults.bank),
            max_timeouts: if w.max_timeouts == 0 {
                defaults.max_timeouts
            } else {
                w.max_timeouts
            },
            disconnect_grace: ms(w.disconnect_grace_ms, defaults.disconnect_grace),
            give_up,
            untimed: w.untimed,
        })
    }

    /// The wire form.
    pub fn to_wire(&self) -> pb::TimeControl {
        let ms = |d: Duration| d.as_millis().min(u32::MAX as u128) as u32;
        pb::TimeControl {
            decision_ms: ms(self.decision),
            bank_ms: ms(self.bank),
            max_timeouts: self.max_timeouts,
            disconnect_grace_ms: ms(self.disconnect_grace),
            give_up: match self.give_up {
                GiveUp::Bot => pb::GiveUpPolicy::Bot,
                GiveUp::Forfeit => pb::GiveUpPolicy::Forfeit,
                GiveUp::BotUntilBack => pb::GiveUpPolicy::BotUntilBack,
            } as i32,
            untimed: self.untimed,
        }
    }
}
