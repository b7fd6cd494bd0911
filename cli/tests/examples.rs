//! `examples/tournament.sh` runs with this package's `maumau` binary, so it cannot rot: the Swiss
//! tournament it scripts ends, with its external program playing every game it was given, and
//! the script prints the standings.
#![allow(missing_docs, clippy::unwrap_used)]

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
