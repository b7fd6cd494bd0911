//! The examples in `examples/` run, so they cannot rot: `embedded_server` plays a match by
//! itself, and `bot` plays its seat of a match on a real server to the end. (The tournament
//! script is run in `cli/tests/examples.rs`, next to the `maumau` binary; the Python example in
//! `clients/python/tests/test_examples.py`.)
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::OnceLock;

use common::{TestServer, create_match};
use maumau::pb;

/// The path of a built example of this package, building the examples first (once per run):
/// `cargo test` builds them only when no test target is named, and a stale one must not pass.
fn example(name: &str) -> PathBuf {
    // This test runs as <target dir>/<profile dir>/deps/examples-<hash>; the examples are built
    // into <target dir>/<profile dir>/examples.
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .args(["build", "--quiet", "--examples", "-p", "maumau"])
            .arg("--manifest-path")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .arg("--target-dir")
            .arg(profile_dir.parent().unwrap());
        if profile_dir.ends_with("release") {
            cargo.arg("--release");
        }
        // Without the variables cargo sets for this test: build scripts such as ring's rerun
        // when CARGO_PKG_NAME, CARGO_MANIFEST_DIR or OUT_DIR change, and every run would then
        // rebuild half the tree twice (once here, once for the next `cargo test`).
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy().into_owned();
            let set_by_cargo = [
                "CARGO_PKG_",
                "CARGO_MANIFEST_",
                "CARGO_CRATE_",
                "CARGO_BIN_",
            ]
            .iter()
            .any(|p| name.starts_with(p))
                || ["OUT_DIR", "CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR"]
                    .contains(&name.as_str());
            if set_by_cargo {
                cargo.env_remove(&name);
            }
        }
        let status = cargo.status().unwrap();
        assert!(status.success(), "cargo build --examples failed");
    });
    let path = profile_dir.join("examples").join(name);
    assert!(path.is_file(), "no example binary at {}", path.display());
    path
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_embedded_server_plays_a_match_of_built_in_bots_and_shuts_down() {
    let output = Command::new(example("embedded_server")).output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let mut lines = stdout.lines();
    let first = lines.next().unwrap();
    assert!(
        first.starts_with("match ") && first.contains(": Finished after "),
        "{stdout}"
    );
    let seats: Vec<&str> = lines.collect();
    assert_eq!(seats.len(), 3, "one line per seat: {stdout}");
    for (i, kind) in ["Heuristic", "Random", "Random"].iter().enumerate() {
        assert!(
            seats
                .iter()
                .any(|l| l.starts_with(&format!("  seat {i} ({kind}): placing "))),
            "{stdout}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_bot_plays_its_seat_to_the_end() {
    let bot = example("bot");
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                max_rounds: 2,
                ..common::config(pb::Profile::Classic, 3)
            }),
            bots: (1..3)
                .map(|seat| pb::SeatBot {
                    seat,
                    kind: pb::BotKind::Heuristic as i32,
                })
                .collect(),
            ..Default::default()
        },
    )
    .await;
    let token = created.seat_tokens[0].token.clone();

    // The server and token as `maumau tournament` hands them to an external program.
    let (url, run) = (server.url(), bot.clone());
    let output = tokio::task::spawn_blocking(move || {
        Command::new(run)
            .env("MAUMAU_URL", url)
            .env("MAUMAU_TOKEN", token)
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with(&format!("match {}: Finished", created.match_id)),
        "{stdout}"
    );

    let report = matches
        .get_result(pb::GetResultRequest {
            match_id: created.match_id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .report
        .unwrap();
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    assert_eq!(report.players[0].name, "shedder (examples/bot.rs)");
    let seat = &report.seats[0];
    assert!(seat.decisions > 0, "{seat:?}");
    assert!(seat.timeouts == 0 && !seat.gave_up, "{seat:?}");

    // Without a token it says how to run it, and fails.
    let output = tokio::task::spawn_blocking(move || {
        Command::new(bot)
            .env_remove("MAUMAU_URL")
            .env_remove("MAUMAU_TOKEN")
            .output()
    })
    .await
    .unwrap()
    .unwrap();
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(
        stderr.contains("usage: bot SERVER-URL SEAT-TOKEN"),
        "{stderr}"
    );
}
