//! docs/PERFORMANCE.md's benchmark of a tournament on several machines runs as written (shortened
//! through its environment: 2 deals, entrants waiting 1 ms) and prints its table, with built-in
//! entrants and with external programs (`--programs`).
//!
//! Needs the `maumau` binary next to this package's (`cargo test --workspace` builds both) and
//! `MAUMAU_TEST_POSTGRES`; without either the test says so and passes without running.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "../../cli/tests/common/postgres.rs"]
mod postgres_schema;

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_maumau-loadgen");

#[test]
fn the_documented_workers_benchmark_runs() {
    run_documented("maumau-loadgen workers --store \"$MAUMAU_STORE\"");
}

/// The same with external programs (`cmd:maumau bot --kind random+1ms` per match).
#[test]
fn the_documented_workers_benchmark_of_programs_runs() {
    run_documented("maumau-loadgen workers --store \"$MAUMAU_STORE\" --programs");
}

/// Runs a command of docs/PERFORMANCE.md as written, shortened through its environment.
fn run_documented(line: &str) {
    let docs = include_str!("../../docs/PERFORMANCE.md");
    assert!(
        docs.contains(&format!("\n{line}\n")),
        "the documented command"
    );
    if !std::path::Path::new(BIN).with_file_name("maumau").is_file() {
        eprintln!("workers: SKIPPED, no `maumau` binary beside {BIN} (build maumau-cli)");
        return;
    }
    let Some(url) = postgres_schema::fresh_store_url("loadgen_workers") else {
        return;
    };
    let rest = line.strip_prefix("maumau-loadgen ").unwrap();
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("exec \"$LOADGEN\" {rest}"))
        .env("LOADGEN", BIN)
        .env("MAUMAU_STORE", url)
        .env("MAUMAU_BENCH_DEALS", "2")
        .env("MAUMAU_BENCH_THINK_MS", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("games/s  of N x one  statements/game"),
        "{stdout}"
    );
    // One row per side: 1, 2 and 3 machines.
    assert_eq!(stdout.lines().count(), 4, "{stdout}");
}
