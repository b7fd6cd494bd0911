//! A Rust bot on a ladder: registers a version (or takes its key), holds its lobby with the SDK's
//! lobby helper and plays every invitation with the heuristic reference bot, printing each event.
//!
//! ```sh
//! cargo run -p maumau-bot-sdk --example ladder_bot -- http://127.0.0.1:50051 --register me my-bot 1.0
//! cargo run -p maumau-bot-sdk --example ladder_bot -- http://127.0.0.1:50051 --key mmv_... --matches 5
//! ```
//!
//! Launched by a tournament (`--entrant 'rs=lobby:target/debug/examples/ladder_bot'`), with no
//! arguments, it holds the tournament's lobby (`LobbyOptions::from_env`) and ends when the
//! tournament closes it.
//!
//! The key may also come from `MAUMAU_LADDER_KEY`. With `--matches N` it drains after N of its
//! matches have ended (no new invitations, the running ones finish) and exits; without, it plays
//! until stopped (`maumau bot --ladder --kind heuristic` does the same and drains on Ctrl-C).
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::sync::Arc;

use maumau_bot_sdk::bots::HeuristicBot;
use maumau_bot_sdk::lobby::{LobbyEvent, LobbyOptions, play_ladder, register};
use tokio::sync::Notify;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty()
        && let Some(options) = LobbyOptions::from_env()
    {
        let mut seed = 0;
        let make_bot = move |_: &_| {
            seed += 1;
            Box::new(HeuristicBot::new(seed)) as Box<dyn maumau_bot_sdk::Bot>
        };
        let on_event = |event: &LobbyEvent| println!("{event}");
        play_ladder(&options, make_bot, on_event, std::future::pending()).await?;
        return Ok(());
    }
    let usage =
        "usage: ladder_bot SERVER-URL (--key KEY | --register OWNER BOT VERSION) [--matches N]";
    let server = args.first().ok_or(usage)?.clone();
    let flag = |name: &str, n: usize| {
        args.iter()
            .position(|a| a == name)
            .map(|i| args.get(i + 1..i + 1 + n).map(<[String]>::to_vec))
    };
    let key = match (flag("--key", 1), flag("--register", 3)) {
        (Some(Some(key)), _) => key[0].clone(),
        (_, Some(Some(r))) => {
            let keys = register(&server, &r[0], &r[1], &r[2]).await?;
            println!("owner key (shown once, keep it): {}", keys.owner_key);
            println!("version key (shown once, keep it): {}", keys.version_key);
            keys.version_key
        }
        _ => std::env::var("MAUMAU_LADDER_KEY").map_err(|_| usage)?,
    };
    let matches: Option<usize> = match flag("--matches", 1) {
        Some(Some(n)) => Some(n[0].parse()?),
        _ => None,
    };

    let options = LobbyOptions::new(server, key);
    let enough = Arc::new(Notify::new());
    let mut ended = 0;
    let mut seed = 0;
    let on_event = {
        let enough = enough.clone();
        move |event: &LobbyEvent| {
            println!("{event}");
            if let LobbyEvent::MatchEnded(_) = event {
                ended += 1;
                if Some(ended) == matches {
                    enough.notify_one();
                }
            }
        }
    };
    let make_bot = move |_: &_| {
        seed += 1;
        Box::new(HeuristicBot::new(seed)) as Box<dyn maumau_bot_sdk::Bot>
    };
    play_ladder(&options, make_bot, on_event, enough.notified()).await?;
    Ok(())
}
