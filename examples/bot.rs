//! A complete Rust bot on the SDK: it joins a match on a server with its seat token, plays the
//! seat to the end and prints the result.
//!
//! ```sh
//! cargo run --example bot -- http://127.0.0.1:50051 SEAT-TOKEN
//! ```
//!
//! The server and the token may instead come from `MAUMAU_URL` and `MAUMAU_TOKEN`, which is how
//! `maumau tournament --entrant 'mine=cmd:...'` and `maumau check-bot` hand them to a program.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::io::Write as _;

use maumau_bot_sdk::engine::{Action, Observation};
use maumau_bot_sdk::{Bot, runner};

/// Plays its highest card whenever it can (the cards left in hand count against it), draws
/// otherwise, and challenges every missing call it sees.
struct Shedder;

impl Bot for Shedder {
    fn name(&self) -> &str {
        "shedder"
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        // `obs.legal` is never empty, and each play already carries the call the rules want.
        let worth = |a: &Action| match a {
            Action::Play { card, .. } => 1 + card.rank() as u32,
            _ => 0,
        };
        let best = obs.legal.iter().copied().max_by_key(worth);
        best.unwrap_or(obs.legal[0])
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        obs.legal.iter().copied().find(|a| *a == Action::Challenge)
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let server = args.next().or_else(|| std::env::var("MAUMAU_URL").ok());
    let token = args.next().or_else(|| std::env::var("MAUMAU_TOKEN").ok());
    let (Some(server), Some(token)) = (server, token) else {
        return Err("usage: bot SERVER-URL SEAT-TOKEN (or set MAUMAU_URL and MAUMAU_TOKEN)".into());
    };
    // Events come with each prompt (one message per decision);
    // `.with_events_as_they_happen()` gets them as they happen, one message per step.
    let mut options = runner::RunOptions::new(server, token);
    options.name = "shedder (examples/bot.rs)".into();
    let report = runner::run(&mut Shedder, &options).await?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "match {}: {:?}", report.match_id, report.status())?;
    for s in report.result.iter().flat_map(|r| &r.standings) {
        writeln!(
            out,
            "  seat {}: placing {}, total {}",
            s.seat, s.placing, s.total
        )?;
    }
    Ok(())
}
