//! End to end: a tournament entrant that stays up between matches (`--entrant 'name=lobby:COMMAND'`).
//! `maumau bot` (the Rust SDK's lobby helper, reading MAUMAU_LOBBY_ADDR and MAUMAU_LOBBY_KEY) is
//! launched once and plays every one of its games through the tournament's lobby, then exits when
//! the tournament closes it; a lobby program that exits early, or never opens its lobby, forfeits
//! its games with the reason. (The Python lobby bot's run is in
//! clients/python/tests/test_tournament_lobby.py.)
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "common/within.rs"]
mod within;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

fn command_line(out: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .arg("tournament")
        .args([
            "--seats",
            "2",
            "--deals",
            "2",
            "--threads",
            "2",
            "--seed",
            "5",
        ])
        .arg("--out")
        .arg(out)
        .args(args);
    command
}

fn tournament(out: &Path, args: &[&str]) -> String {
    succeeded(command_line(out, args).output().unwrap())
}

/// The tournament's standard output, once it has exited with success within two minutes. The
/// runs that use it give programs ten minutes of grace: one still going is waiting for the clock
/// of a seat whose player is gone.
fn tournament_within(out: &Path, args: &[&str]) -> String {
    let output = within::output_within(command_line(out, args), Duration::from_secs(120))
        .expect("the tournament waited for the clock of a seat whose player was gone");
    succeeded(output)
}

/// The tournament's standard output, once it has exited with success.
fn succeeded(output: Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    stdout
}

#[test]
fn the_rust_sdk_lobby_helper_plays_every_game_from_one_launch() {
    let dir = tempfile::tempdir().unwrap();
    // A launch appends a line to `launches`; `maumau bot` finds its lobby in the environment.
    let launches = dir.path().join("launches");
    let command = format!(
        "rs=lobby:echo launched >> '{}'; exec '{BIN}' bot --kind heuristic --max-matches 2",
        launches.display()
    );
    let out = dir.path().join("out");
    let shown = tournament(&out, &["--bots", "random,heuristic", "--entrant", &command]);
    assert!(!shown.contains("forfeited"), "{shown}");
    let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    // 3 tables × 2 deals × 2 seatings; `rs` (entrant 2) sits at two tables of three.
    assert_eq!(results.lines().count(), 12);
    let played = results
        .lines()
        .filter(|l| l.contains("\"seats\":[2,") || l.contains(",2],\"placings\""))
        .count();
    assert_eq!(played, 8, "{results}");
    assert!(!results.contains("forfeits"), "{results}");
    assert_eq!(std::fs::read_to_string(&launches).unwrap(), "launched\n");
    // Its output: eight invitations, then the lobby closed by the tournament ended it cleanly.
    let log = std::fs::read_to_string(out.join("logs").join("rs-lobby.log")).unwrap();
    assert_eq!(log.matches("invitation: match").count(), 8, "{log}");
    assert!(log.contains("stopped after 8 matches"), "{log}");
}

/// A lobby program that exits early forfeits its games with its last words, its seats resigned
/// at once: with ten minutes of grace its four games are over in seconds, not forty minutes.
#[test]
fn a_lobby_program_that_exits_early_forfeits_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--bots",
        "random",
        "--grace-ms",
        "600000",
        "--entrant",
        "quitter=lobby:echo 'cannot import grpc' >&2; exit 3",
    ];
    let shown = tournament_within(dir.path(), &args);
    assert!(
        shown.contains("quitter forfeited 4 of its 4 games"),
        "{shown}"
    );
    assert!(
        shown.contains("its program exited with exit status: 3; it last said: cannot import grpc"),
        "{shown}"
    );
}

#[test]
fn a_lobby_entrant_with_a_wrong_key_is_refused_and_forfeits() {
    let dir = tempfile::tempdir().unwrap();
    // It opens a lobby with a key of its own: refused, `maumau bot` exits with the reason.
    let command = format!("liar=lobby:MAUMAU_LOBBY_KEY=mmt_guess exec '{BIN}' bot --kind random");
    let shown = tournament(
        dir.path(),
        &[
            "--bots",
            "random",
            "--grace-ms",
            "200",
            "--entrant",
            &command,
        ],
    );
    assert!(shown.contains("liar forfeited 4 of its 4 games"), "{shown}");
    assert!(shown.contains("unknown lobby key"), "{shown}");
}

/// A lobby program whose player fails for every invitation (here `maumau bot` launching a program
/// per match that exits at once) stays up, and its helper gives each seat up: at a tournament,
/// whose game server is no ladder, by resigning it with the seat token. With ten minutes of grace
/// its four games are over in seconds, and each is a forfeit.
#[test]
fn a_lobby_whose_players_fail_resigns_their_seats() {
    let dir = tempfile::tempdir().unwrap();
    let command = format!("flaky=lobby:exec '{BIN}' bot -- sh -c 'exit 4'");
    let args = [
        "--bots",
        "random",
        "--grace-ms",
        "600000",
        "--entrant",
        &command,
    ];
    let shown = tournament_within(dir.path(), &args);
    assert!(
        shown.contains("flaky forfeited 4 of its 4 games"),
        "{shown}"
    );
    assert_eq!(
        shown
            .matches("forfeited, placed last: its program gave the seat up (it resigned)")
            .count(),
        4,
        "{shown}"
    );
    let log = std::fs::read_to_string(dir.path().join("logs").join("flaky-lobby.log")).unwrap();
    assert_eq!(log.matches("invitation: match").count(), 4, "{log}");
}
