//! `examples/tournament.sh` runs with this package's `maumau` binary, so it cannot rot: the Swiss
//! tournament it scripts ends, with its external program playing every game it was given, and
//! the script prints the standings.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "common/checkout.rs"]
mod checkout;

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

#[test]
fn the_tournament_script_runs_a_tournament_with_an_external_program() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/tournament.sh");
    let output = Command::new("bash")
        .arg(script)
        .arg(&out)
        .env("MAUMAU", BIN)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("Swiss"), "{stderr}");

    // The standings, as the script printed them, name every entrant once.
    let csv = std::fs::read_to_string(out.join("standings.csv")).unwrap();
    let printed = stdout.split("standings.csv:\n").nth(1).unwrap();
    assert_eq!(printed, csv);
    for entrant in ["heuristic", "random", "sloppy", "mine"] {
        assert_eq!(
            csv.lines()
                .filter(|l| l.split(',').any(|f| f.trim_matches('"') == entrant))
                .count(),
            1,
            "{entrant} in {csv}"
        );
    }

    // Every game was played; none was forfeited by the external program.
    let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    assert_eq!(
        results.lines().count(),
        3 * 2 * 2 * 2,
        "3 rounds × 2 tables × 2 deals × 2 seatings"
    );
    assert!(!results.contains("\"forfeit"), "{results}");
}

/// The lines of the README's "A bot in five minutes": the setup of the Python client, the
/// gauntlet of the Python example, then a tournament with it as an entrant.
fn readme_five_minute_bot() -> Vec<String> {
    let readme = include_str!("../../README.md");
    let section = readme.split("## A bot in five minutes").nth(1).unwrap();
    let block = section.split("```sh\n").nth(1).unwrap();
    let block = block.split("```").next().unwrap();
    block.lines().map(String::from).collect()
}

/// The README's "A bot in five minutes" runs as written, from the root of a fresh copy of the
/// Python client, in a shell without any virtual environment active: its first line installs
/// the client with grpcio and protobuf (from the package index) in a new virtual environment,
/// the second puts the example bot through the whole gauntlet, which it passes, and the third
/// plays a tournament with it, which it finishes without a forfeit. docs/BOTS.md, where
/// check-bot is described in full, starts from the same two lines.
#[test]
fn the_readme_five_minute_bot_runs_as_written_without_an_active_virtual_environment() {
    let lines = readme_five_minute_bot();
    assert_eq!(lines.len(), 3, "{lines:?}");
    let bots = include_str!("../../docs/BOTS.md");
    assert!(
        bots.contains(&format!("```sh\n{}\n{}\n", lines[0], lines[1])),
        "docs/BOTS.md shows {lines:?}"
    );
    let run = lines[1]
        .strip_prefix("cargo run --release -- check-bot ")
        .unwrap_or_else(|| panic!("{lines:?}"));
    assert!(
        run.contains("clients/python/examples/random_bot.py"),
        "{run}"
    );
    let tournament = lines[2]
        .strip_prefix("cargo run --release -- tournament ")
        .unwrap_or_else(|| panic!("{lines:?}"));
    let root = tempfile::tempdir().unwrap();
    let client = concat!(env!("CARGO_MANIFEST_DIR"), "/../clients/python");
    checkout::copy_clean(
        std::path::Path::new(client),
        &root.path().join("clients/python"),
    );
    // The shell of someone who has just cloned: no virtual environment on PATH or in the
    // environment, `cargo run --release --` standing for this package's `maumau`.
    let path = checkout::path_without_venvs();
    let script = format!(
        "set -e\n{}\n\"$MAUMAU\" check-bot {run}\n\"$MAUMAU\" tournament {tournament}\n",
        lines[0]
    );
    // check-bot's log directory goes under TMPDIR: here, into the test's directory.
    let tmp = root.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let output = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(root.path())
        .env_remove("VIRTUAL_ENV")
        .env_remove("PYTHONPATH")
        .env_remove("PYTHONHOME")
        .env("PATH", &path)
        .env("MAUMAU", BIN)
        .env("TMPDIR", &tmp)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{script}\n{stdout}\n{stderr}");
    assert!(stdout.contains("11 of 11 checks passed"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "the bot's output of each match (stdout and stderr): {}",
            tmp.display()
        )),
        "{stdout}"
    );
    // The tournament's standings name the example bot, which forfeited nothing.
    assert!(stdout.contains("mine"), "{stdout}");
    assert!(!stdout.contains("forfeited"), "{stdout}");
}
