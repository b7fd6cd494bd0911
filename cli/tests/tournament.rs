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
        &[
            "--bots",
            "heuristic,random",
            "--entrant",
            &command,
            "--seed",
            "7",
        ],
    );
    assert!(shown.contains("ext"), "{shown}");
    tournament(
        &local,
        &["--bots", "heuristic,random,ext=heuristic", "--seed", "7"],
    );
    // 3 tables × 2 deals × 2 seatings, game by game and action by action the same (over gRPC
    // a result also names the opaque game id and the match it was played under).
    let games = results_without_server_ids(&external.join("results.jsonl"));
    assert_eq!(games.len(), 12);
    assert_eq!(
        games,
        results_without_server_ids(&local.join("results.jsonl"))
    );
    assert_eq!(
        sorted_lines(&external.join("replays.jsonl")),
        sorted_lines(&local.join("replays.jsonl"))
    );
    // The program's own output is kept per launch (the four games `ext` sat in).
    let logs = std::fs::read_dir(external.join("logs")).unwrap().count();
    assert_eq!(logs, 8);
}

/// The lines of a results.jsonl in id order, without the `game` and `match_id` fields that
/// only games over gRPC have.
fn results_without_server_ids(path: &Path) -> Vec<serde_json::Value> {
    let mut v: Vec<serde_json::Value> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let mut g: serde_json::Value = serde_json::from_str(l).unwrap();
            let map = g.as_object_mut().unwrap();
            map.remove("game");
            map.remove("match_id");
            g
        })
        .collect();
    v.sort_by_key(|g| g["id"].as_str().unwrap().to_string());
    v
}

/// The seed of each game in a results.jsonl.
fn game_seeds(out: &Path) -> Vec<u64> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seed"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// Without --seed every tournament draws a secret seed from the operating system (two runs deal
/// differently, and the seed is shown only with the results); with --seed the output says the
/// deals are reproducible and so predictable; resuming a directory takes its stored seed.
#[test]
fn without_a_seed_each_tournament_deals_secretly_and_differently() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let args = ["--bots", "random,heuristic", "--deals", "1", "--no-replays"];
    let run = |out: &Path, extra: &[&str]| {
        let output = Command::new(BIN)
            .arg("tournament")
            .args(args)
            .arg("--out")
            .arg(out)
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (stdout_a, stderr_a) = run(&a, &[]);
    let (_, stderr_b) = run(&b, &[]);
    let (seeds_a, seeds_b) = (game_seeds(&a), game_seeds(&b));
    assert_eq!(seeds_a.len(), 2);
    assert!(
        seeds_a.iter().zip(&seeds_b).all(|(x, y)| x != y),
        "two runs, two secret seeds: {seeds_a:?} {seeds_b:?}"
    );
    for stderr in [&stderr_a, &stderr_b] {
        assert!(stderr.contains("secret seed drawn"), "{stderr}");
    }
    let header: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("tournament.json")).unwrap()).unwrap();
    let seed = header["seed"].as_u64().unwrap();
    assert!(
        !stderr_a.contains(&seed.to_string()),
        "not shown at the start: {stderr_a}"
    );
    assert!(
        stdout_a.contains(&format!("seed {seed} (secret until now)")),
        "revealed with the results: {stdout_a}"
    );
    // Resuming the directory without --seed keeps its seed (nothing is played again).
    let (stdout_again, stderr_again) = run(&a, &[]);
    assert!(
        stderr_again.contains("stored in the output directory"),
        "{stderr_again}"
    );
    assert!(stdout_again.contains("0 played now"), "{stdout_again}");
    assert_eq!(game_seeds(&a), seeds_a);
    // A chosen seed is said to make the deals predictable.
    let (_, stderr_c) = run(&c, &["--seed", "4242"]);
    assert!(
        stderr_c
            .contains("seed 4242, chosen: the deals are reproducible, and therefore predictable"),
        "{stderr_c}"
    );
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
