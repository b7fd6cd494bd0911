//! `maumau replay FILE`: checks a downloaded replay by re-simulating it with the rules engine;
//! with `--show`, prints its readable move list first (as one seat saw it with `--seat N`);
//! with `--html OUT`, writes the match viewer with the replay inside to one offline HTML file.

use std::path::PathBuf;

use maumau::pb;
use maumau::viewer::Perspective;
use prost::Message as _;

/// Arguments of `maumau replay`.
#[derive(clap::Args)]
pub(crate) struct ReplayArgs {
    /// A replay file: the protobuf encoding of `maumau.v1.Replay`, as the ladder's replay links
    /// download it (and `MatchService.GetReplay` returns it).
    file: PathBuf,
    /// Print the match's moves in readable notation, round by round, with every hand (or, with
    /// --seat, the hands that seat saw), before verifying it.
    #[arg(long)]
    show: bool,
    /// Write the match viewer with this replay inside to this HTML file: one file that opens
    /// offline in a browser (from file://) at the match's last position.
    #[arg(long, value_name = "OUT")]
    html: Option<PathBuf>,
    /// With --show or --html: see the match as this seat saw it (its own hand and draws only),
    /// not every hand.
    #[arg(long)]
    seat: Option<u8>,
}

/// Re-simulates the replay and prints the result it reaches; fails when it does not verify.
pub(crate) fn replay(args: &ReplayArgs) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(&args.file)
        .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    let replay = pb::Replay::decode(bytes.as_slice()).map_err(|e| {
        format!(
            "{} is not a replay (a protobuf-encoded maumau.v1.Replay): {e}",
            args.file.display()
        )
    })?;
    if args.seat.is_some() && !args.show && args.html.is_none() {
        return Err("--seat chooses whose view --show or --html gives: add one of them".into());
    }
    if args.show || args.html.is_some() {
        let perspective = args.seat.map_or(Perspective::Omniscient, Perspective::Seat);
        match maumau::viewer::frames(&replay, perspective) {
            Ok(viewing) => {
                if args.show {
                    crate::show::print(&viewing)?;
                }
                if let Some(out) = &args.html {
                    std::fs::write(out, maumau_server::viewer::standalone_page(&viewing))
                        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
                    println!("viewer written to {}", out.display());
                }
            }
            // A seat outside the table is the reader's mistake; a replay that stops fitting the
            // rules is reported by the verification below.
            Err(e) if e.action == 0 && e.message.starts_with("seat ") => {
                return Err(e.message.into());
            }
            Err(e) => println!("cannot show the replay: {e}"),
        }
    }
    let verdict = maumau::replay::verify(&replay);
    println!(
        "match {}: {} actions, {} applied, {} rounds",
        if replay.match_id.is_empty() {
            "(unnamed)"
        } else {
            &replay.match_id
        },
        replay.actions.len(),
        verdict.actions_applied,
        verdict.rounds.len()
    );
    if let Some(result) = &verdict.result {
        for s in &result.standings {
            println!(
                "  seat {}: placing {}, total {}, rounds won {}",
                s.seat, s.placing, s.total, s.rounds_won
            );
        }
    }
    if verdict.valid {
        println!("valid: the re-simulation reaches the recorded result");
        Ok(())
    } else {
        let why = verdict.error.map(|e| e.message).unwrap_or_default();
        let at = verdict
            .failed_action
            .map(|i| format!(" at action {i}"))
            .unwrap_or_default();
        Err(format!("the replay does not verify{at}: {why}").into())
    }
}
