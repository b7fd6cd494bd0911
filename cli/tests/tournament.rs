//! End to end: `maumau tournament` with an external program over gRPC (`maumau bot` launched
//! once per match on the server the command starts) gives the same games as the same bot
//! in-process, and a program that crashes forfeits while the tournament carries on.
#![allow(missing_docs, clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

fn tournament(out: &Path, args: &[&str]) -> String {
    let output = Command::new(BIN)
        .arg("tournament")
        .args(["--seats", "2", "--deals", "2", "--threads", "2", "--out"])
        .arg(out)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    stdout
}

fn sorted_lines(path: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

#[test]
fn an_external_bot_over_grpc_plays_the_same_games_as_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let (external, local) = (dir.path().join("external"), dir.path().join("local"));
    // `maumau bot` as the external program: it reads the seat token from MAUMAU_TOKEN, and is
    // given the server and the seed the tournament hands it.
    let command = format!(
        "ext=cmd:'{BIN}' bot --kind heuristic --server \"$MAUMAU_URL\" --seed \"$MAUMAU_SEED\""
    );
    let shown = tournament(
        &external,
        &["--bots", "heuristic,random", "--entrant", &command],
    );
    assert!(shown.contains("ext"), "{shown}");
    tournament(&local, &["--bots", "heuristic,random,ext=heuristic"]);
    // 3 tables × 2 deals × 2 seatings, game by game and action by action the same.
    let games = sorted_lines(&external.join("results.jsonl"));
    assert_eq!(games.len(), 12);
    assert_eq!(games, sorted_lines(&local.join("results.jsonl")));
    assert_eq!(
        sorted_lines(&external.join("replays.jsonl")),
        sorted_lines(&local.join("replays.jsonl"))
    );
    // The program's own output is kept per launch (the four games `ext` sat in).
    let logs = std::fs::read_dir(external.join("logs")).unwrap().count();
    assert_eq!(logs, 8);
}

#[test]
fn a_crashing_program_forfeits_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let shown = tournament(
        dir.path(),
        &[
            "--bots",
            "random",
            "--entrant",
            "crash=cmd:echo 'no module named grpc' >&2; exit 1",
            "--grace-ms",
            "200",
        ],
    );
    assert!(
        shown.contains("crash forfeited 4 of its 4 games"),
        "{shown}"
    );
    assert!(shown.contains("no module named grpc"), "{shown}");
}
