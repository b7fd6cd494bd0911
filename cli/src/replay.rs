//! `maumau replay FILE`: checks a downloaded replay (or one game of a tournament's
//! `replays.jsonl`) by re-simulating it with the rules engine;
//! with `--show`, prints its readable move list first (as one seat saw it with `--seat N`; a
//! tournament's game names its entrants beside their seats, "S0 alice plays 7♥");
//! with `--html OUT`, writes the match viewer with the replay inside to one offline HTML file.

use std::path::PathBuf;

use maumau::pb;
use maumau::viewer::Perspective;
use maumau_engine::{Action, ConfigError, MatchConfig, Options};
use prost::Message as _;

/// Arguments of `maumau replay`.
#[derive(clap::Args)]
pub(crate) struct ReplayArgs {
    /// A replay file: the protobuf encoding of `maumau.v1.Replay`, as the ladder's replay links
    /// download it (and `MatchService.GetReplay` returns it), or a tournament's `replays.jsonl`
    /// (with --game when it holds more than one game).
    file: PathBuf,
    /// In a tournament's `replays.jsonl`: the id of the game to read (its `id`, e.g. `t0-d1-0`).
    #[arg(long, value_name = "ID")]
    game: Option<String>,
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
    let (replay, names) = if bytes.trim_ascii_start().starts_with(b"{") {
        tournament_game(&bytes, args.game.as_deref())
            .map_err(|e| format!("{}: {e}", args.file.display()))?
    } else {
        if args.game.is_some() {
            return Err(
                "--game picks a game of a tournament's replays.jsonl; this file is one \
                        protobuf replay"
                    .into(),
            );
        }
        let replay = pb::Replay::decode(bytes.as_slice()).map_err(|e| {
            format!(
                "{} is not a replay (a protobuf-encoded maumau.v1.Replay, or a tournament's \
                 replays.jsonl): {e}",
                args.file.display()
            )
        })?;
        (replay, Vec::new())
    };
    if args.seat.is_some() && !args.show && args.html.is_none() {
        return Err("--seat chooses whose view --show or --html gives: add one of them".into());
    }
    if args.show || args.html.is_some() {
        let perspective = args.seat.map_or(Perspective::Omniscient, Perspective::Seat);
        // The move list names a tournament's entrants beside their seats in every line, in the
        // terminal and on the viewer page (the same page as the tournament report's).
        match maumau::viewer::frames_named(&replay, perspective, &names) {
            Ok(named) => {
                if args.show {
                    crate::show::print(&named, &names)?;
                }
                if let Some(out) = &args.html {
                    // With --seat, that seat's view alone; else every perspective, so the file
                    // offers the viewer's switch (the first, every hand, shown at first). The
                    // move list names the entrants, as the tournament report's pages do.
                    let mut views =
                        vec![maumau::viewer::frames_named(&replay, perspective, &names)?];
                    if args.seat.is_none() {
                        let seats = views[0].seats as usize;
                        views.extend(
                            maumau_server::viewer::every_perspective(seats)
                                .skip(1)
                                .filter_map(|p| {
                                    maumau::viewer::frames_named(&replay, p, &names).ok()
                                }),
                        );
                    }
                    std::fs::write(out, maumau_server::viewer::standalone_page(&views, &names))
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

/// One line of a tournament's `replays.jsonl` (see `maumau_tournament`'s `ReplayLine`).
#[derive(serde::Deserialize)]
pub(crate) struct TournamentGame {
    /// The game's id in the schedule (`t0-d1-0`).
    pub(crate) id: String,
    profile: String,
    options: String,
    seats: u8,
    calls: String,
    seed: u64,
    /// The entrants' names by seat (absent in files written before they were recorded).
    #[serde(default)]
    pub(crate) entrants: Vec<String>,
    actions: Vec<String>,
}

/// The game `id` of a tournament's `replays.jsonl` (the only one when `id` is `None`), as a
/// replay, with its entrants' names by seat.
fn tournament_game(bytes: &[u8], id: Option<&str>) -> Result<(pb::Replay, Vec<String>), String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())?;
    let mut games = Vec::new();
    for (n, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        games.push(TournamentGame::parse(line, n + 1)?);
    }
    let game = match id {
        Some(id) => games
            .into_iter()
            .find(|g| g.id == id)
            .ok_or_else(|| format!("no game `{id}` in this file"))?,
        None if games.len() == 1 => games.remove(0),
        None => {
            let ids: Vec<&str> = games.iter().take(5).map(|g| g.id.as_str()).collect();
            return Err(format!(
                "{} games in this file: pick one with --game ID (e.g. {})",
                games.len(),
                ids.join(", ")
            ));
        }
    };
    let replay = game.to_replay()?;
    Ok((replay, game.entrants))
}

impl TournamentGame {
    /// Line `number` (from 1) of a `replays.jsonl`.
    pub(crate) fn parse(line: &str, number: usize) -> Result<TournamentGame, String> {
        serde_json::from_str(line)
            .map_err(|e| format!("line {number} is not a tournament game: {e}"))
    }

    /// The game as a replay: its rules (with the default turn and round limits), its seed and
    /// its actions (`"2 play 7H mau"`).
    pub(crate) fn to_replay(&self) -> Result<pb::Replay, String> {
        let game = self;
        let config = MatchConfig {
            options: Options::from_words(&game.options).map_err(|e| e.to_string())?,
            calls: game.calls.parse().map_err(|e: ConfigError| e.to_string())?,
            ..MatchConfig::new(
                game.profile
                    .parse()
                    .map_err(|e: ConfigError| e.to_string())?,
                game.seats,
            )
        };
        let actions = game
            .actions
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let bad = |why: String| format!("game {} action {i} `{a}`: {why}", game.id);
                let (seat, action) = a.split_once(' ').ok_or_else(|| bad("no seat".into()))?;
                let seat: u32 = seat.parse().map_err(|_| bad("bad seat".into()))?;
                let action: Action = action.parse().map_err(bad)?;
                Ok(pb::ReplayAction {
                    seat,
                    action: Some(action.into()),
                    index: action.index() as u32,
                    ..Default::default()
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(pb::Replay {
            format: 1,
            match_id: game.id.clone(),
            config: Some(config.into()),
            seed: game.seed,
            actions,
            ..Default::default()
        })
    }
}
