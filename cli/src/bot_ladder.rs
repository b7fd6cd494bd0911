//! `maumau bot --ladder URL --key KEY [--kind K | -- COMMAND ...]`: a version on the ladder
//! without lobby code of its own. It holds the version's lobby (the bot SDK's `lobby::hold`),
//! plays every invitation with a reference bot or launches COMMAND once per match with the seat in
//! `MAUMAU_ADDR` and `MAUMAU_TOKEN` (as tournaments and check-bot do, through the conformance
//! kit's launcher), prints what happens, reconnects after a dropped lobby, and on Ctrl-C or
//! SIGTERM drains: no new invitations, the running matches finish, then it exits with status 0.

use std::collections::HashMap;
use std::error::Error;
use std::future::Future;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use maumau::pb;
use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::{BotKind, SearchBot};
use maumau_bot_sdk::lobby::{self, LobbyEvent, LobbyOptions};
use maumau_checkbot::launch::{Launched, ProcessGroup};
use tokio::sync::{Notify, oneshot};

/// How long a launched program may run on after the ladder says its match ended.
const EXIT_GRACE: Duration = Duration::from_secs(10);

/// The ladder half of `maumau bot`'s arguments.
#[derive(clap::Args)]
pub(crate) struct LadderBotArgs {
    /// Join the ladder of this server (`host:port` or a URL) and play its invitations instead of
    /// one seat; needs the version key (--key, --key-file or MAUMAU_LADDER_KEY). A tournament's
    /// `lobby:` entrant gets both in MAUMAU_LOBBY_ADDR and MAUMAU_LOBBY_KEY.
    #[arg(long, value_name = "URL", env = "MAUMAU_LOBBY_ADDR")]
    pub(crate) ladder: Option<String>,
    /// The version key (`mmv_...`) from `maumau ladder register` (or MAUMAU_LOBBY_KEY).
    #[arg(long, env = "MAUMAU_LADDER_KEY", hide_env_values = true)]
    key: Option<String>,
    /// Read the version key from this file (as `maumau ladder register --key-file` writes it).
    #[arg(long, value_name = "PATH", conflicts_with = "key")]
    key_file: Option<PathBuf>,
    /// Matches played at once (1 to 64).
    #[arg(long, default_value_t = 1)]
    max_matches: u32,
    /// Rule profiles accepted, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "classic,penalty-points,brazilian,romanian-32"
    )]
    profiles: Vec<String>,
    /// Table sizes accepted, comma-separated (2 to 8).
    #[arg(long, value_delimiter = ',', default_value = "2,3,4")]
    seats: Vec<u32>,
    /// Your program, launched once per match with the seat's server in MAUMAU_ADDR (host:port) and
    /// its token in MAUMAU_TOKEN ({addr} and {token} in its arguments are replaced too); it
    /// plays that one seat and exits. Without it the reference bot of --kind plays.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
    #[command(flatten)]
    sandbox: crate::sandbox::SandboxArgs,
}

/// The launched programs of running matches by (ladder match, seat): told when the ladder says
/// their match ended.
type Running = HashMap<(i64, u32), oneshot::Sender<()>>;

/// Who plays the invitations.
pub(crate) enum Player {
    /// A reference bot: kind, seed, search samples.
    BuiltIn(BotKind, u64, Option<u32>),
    /// A program launched per match.
    Command(Vec<String>),
}

/// The version key from `--key`, `MAUMAU_LADDER_KEY` or `--key-file`.
fn key(args: &LadderBotArgs) -> Result<String, Box<dyn Error>> {
    if let Some(k) = &args.key {
        return Ok(k.trim().to_string());
    }
    if args.key_file.is_none()
        && let Ok(k) = std::env::var(maumau_bot_sdk::lobby::LOBBY_KEY_VAR)
        && !k.trim().is_empty()
    {
        return Ok(k.trim().to_string());
    }
    if let Some(path) = &args.key_file {
        let text = crate::operator_token::read_secret(path, "key file")?;
        let key = text.trim();
        if key.is_empty() {
            return Err(format!("the key file {} is empty", path.display()).into());
        }
        return Ok(key.to_string());
    }
    Err(
        "no version key: pass --key KEY, --key-file PATH or set MAUMAU_LADDER_KEY \
         (`maumau ladder register` makes one)"
            .into(),
    )
}

/// `http://host:port` from `host:port` or a URL; a Unix socket (`unix:/run/maumau/maumau.sock`,
/// a sandboxed program's way to its server) as it is.
pub(crate) fn url(server: &str) -> String {
    if server.contains("://") || server.starts_with("unix:") {
        server.trim_end_matches('/').to_string()
    } else {
        format!("http://{server}")
    }
}

/// `host:port` from a URL, for `MAUMAU_ADDR`.
fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.trim_end_matches('/').to_string()
}

/// Holds the lobby until a signal drains it; `player` plays the invitations.
pub(crate) fn run(
    server: &str,
    args: &LadderBotArgs,
    player: Player,
) -> Result<(), Box<dyn Error>> {
    let mut options = LobbyOptions::new(url(server), key(args)?);
    options.max_matches = args.max_matches;
    options.profiles = args.profiles.clone();
    options.seats = args.seats.clone();
    let player = match (player, args.command.is_empty()) {
        (_, false) => Player::Command(args.command.clone()),
        (p, true) => p,
    };
    options.name = match &player {
        Player::BuiltIn(kind, ..) => format!("maumau-{kind}"),
        Player::Command(c) => c.join(" "),
    };
    if args.sandbox.sandbox && matches!(player, Player::BuiltIn(..)) {
        return Err("--sandbox confines a program launched per match: give it after `--`".into());
    }
    let sandbox = args.sandbox.build(&[])?;
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let (signals, stop) = shutdown_signals()?;
        println!(
            "joining the ladder at {} ({}); Ctrl-C drains and stops",
            options.server,
            match &player {
                Player::BuiltIn(kind, ..) => format!("reference bot {kind}"),
                Player::Command(c) => format!("launching `{}` per match", c.join(" ")),
            }
        );
        let ended: Arc<Mutex<Running>> = Arc::default();
        let ended_count = Arc::new(AtomicU32::new(0));
        let on_event = {
            let (ended, ended_count) = (ended.clone(), ended_count.clone());
            move |event: &LobbyEvent| {
                // A program that played its match and exited is no news; a failure is.
                if !matches!(
                    event,
                    LobbyEvent::Played {
                        outcome: Ok(()),
                        ..
                    }
                ) {
                    println!("{event}");
                }
                match event {
                    LobbyEvent::MatchEnded(e) => {
                        ended_count.fetch_add(1, Ordering::Relaxed);
                        let tx = lock(&ended).remove(&(e.ladder_match_id, e.seat));
                        if let Some(tx) = tx {
                            let _ = tx.send(());
                        }
                    }
                    LobbyEvent::Played { invitation, .. } => {
                        lock(&ended).remove(&(invitation.ladder_match_id, invitation.seat));
                    }
                    _ => {}
                }
            }
        };
        // A second signal drops the lobby and its players (launched programs are killed).
        let lobby = async {
            match player {
                Player::BuiltIn(kind, seed, iterations) => {
                    let mut n = 0u64;
                    let make_bot = move |_: &pb::Invitation| {
                        n += 1;
                        let seed = seed.wrapping_add(n);
                        match (kind, iterations) {
                            (BotKind::Search, Some(i)) => {
                                Box::new(SearchBot::with_iterations(seed, i)) as Box<dyn Bot>
                            }
                            _ => kind.build(seed),
                        }
                    };
                    lobby::play_ladder(&options, make_bot, on_event, signals).await?;
                }
                Player::Command(command) => {
                    // One log file per match: a failure quotes an excerpt and names the file.
                    let logs =
                        std::env::temp_dir().join(format!("maumau-bot-{}", std::process::id()));
                    std::fs::create_dir_all(&logs)
                        .map_err(|e| format!("cannot make {}: {e}", logs.display()))?;
                    println!(
                        "each match's program writes its output to a log in {}",
                        logs.display()
                    );
                    let play = move |invitation: pb::Invitation, server: String| {
                        let (tx, over) = oneshot::channel();
                        lock(&ended).insert((invitation.ladder_match_id, invitation.seat), tx);
                        let log = logs.join(format!(
                            "match-{}-seat-{}.log",
                            invitation.ladder_match_id, invitation.seat
                        ));
                        launch(
                            command.clone(),
                            host_port(&server),
                            invitation.seat_token,
                            log,
                            over,
                            sandbox.clone(),
                        )
                    };
                    lobby::hold(&options, play, on_event, signals).await?;
                }
            }
            Ok::<(), Box<dyn Error>>(())
        };
        tokio::select! {
            done = lobby => done?,
            () = stop => return Err("stopped without draining (a second signal)".into()),
        }
        println!(
            "stopped after {} matches",
            ended_count.load(Ordering::Relaxed)
        );
        Ok::<(), Box<dyn Error>>(())
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Plays one invitation with the user's program: launched, awaited, and stopped when it outlives
/// its match by [`EXIT_GRACE`].
async fn launch(
    command: Vec<String>,
    addr: String,
    token: String,
    log: PathBuf,
    over: oneshot::Receiver<()>,
    sandbox: Option<Arc<maumau_sandbox::Sandbox>>,
) -> Result<(), String> {
    let program = Launched::start(
        &command,
        &addr,
        &token,
        &log,
        sandbox.as_deref(),
        ProcessGroup::Own,
    )
    .map_err(|e| format!("cannot start `{}`: {e}", command.join(" ")))?;
    let exit = program
        .finish_after(
            async {
                let _ = over.await;
            },
            EXIT_GRACE,
        )
        .await;
    if exit.success() {
        Ok(())
    } else {
        Err(format!(
            "your program {}{}",
            exit.describe(EXIT_GRACE),
            exit.output()
        ))
    }
}

/// The first SIGINT (Ctrl-C) or SIGTERM completes the first future (drain), a second one the
/// second (stop at once). The handlers are installed before this returns, so a signal that comes
/// at once already drains. Called inside the runtime.
fn shutdown_signals() -> std::io::Result<(impl Future<Output = ()>, impl Future<Output = ()>)> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    let (drain, stop) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    let (drain_tx, stop_tx) = (drain.clone(), stop.clone());
    tokio::spawn(async move {
        for first in [true, false] {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            if first {
                eprintln!("maumau: draining; a second Ctrl-C stops at once");
                drain_tx.notify_one();
            } else {
                stop_tx.notify_one();
            }
        }
    });
    Ok((async move { drain.notified().await }, async move {
        stop.notified().await
    }))
}
