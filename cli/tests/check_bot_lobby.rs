//! End to end: `maumau check-bot --lobby` on `maumau bot` (the Rust SDK's lobby helper, which reads
//! MAUMAU_LOBBY_ADDR and MAUMAU_LOBBY_KEY): launched once, it is invited to every match of the
//! gauntlet through the lobby, passes every check and exits when the lobby closes; the report
//! says how many launches the lobby saved. (The Python ladder example's run is in
//! clients/python/tests/test_check_bot_lobby.py; failing lobby bots in checkbot/tests/lobby.rs.)
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

#[test]
fn maumau_bot_passes_the_gauntlet_from_one_launch_in_a_lobby() {
    let dir = tempfile::tempdir().unwrap();
    // A launch appends a line to `launches`.
    let launches = dir.path().join("launches");
    let script = format!(
        "echo launched >> '{}'; exec '{BIN}' bot --kind heuristic",
        launches.display()
    );
    let output = Command::new(BIN)
        .args([
            "check-bot",
            "--lobby",
            "--profile",
            "classic:2,4",
            "--seed",
            "7",
        ])
        .arg("--log-dir")
        .arg(dir.path())
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("9 of 9 checks passed"), "{stdout}");
    assert!(
        stdout.contains("PASS  lobby closed             it exited with status 0 when its lobby was closed, after 8 matches from one launch"),
        "{stdout}"
    );
    assert!(
        stdout.contains("the bot was launched once (7 launches saved by its lobby)"),
        "{stdout}"
    );
    assert_eq!(std::fs::read_to_string(&launches).unwrap(), "launched\n");
    let log = std::fs::read_to_string(dir.path().join("lobby.log")).unwrap();
    assert_eq!(log.matches("invitation: match").count(), 8, "{log}");
}

#[test]
fn lobby_and_connect_do_not_go_together() {
    let output = Command::new(BIN)
        .args(["check-bot", "--lobby", "--connect"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot be used with"), "{stderr}");
}
