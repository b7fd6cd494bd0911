//! A tournament on several machines, end to end with the real binary: `maumau tournament --store
//! postgres://...` and `maumau worker --store postgres://...` processes on one PostgreSQL.
//!
//! - A round robin played by the command and three workers, one of them killed with SIGKILL
//!   while it holds a game, gives the same games (same deals, seats and actions) and the same
//!   standings and pairs as the same seed played by `maumau tournament` alone; every game is in
//!   the results once, and the games the killed worker held were played again.
//! - Swiss and single-elimination events, whose rounds are released one at a time, give the same
//!   results across two workers as on one machine.
//! - A command killed mid-tournament and run again takes over its event (once its liveness ran
//!   out), with the games finished meanwhile, and gives the same results.
//! - With no worker, the command plays its whole event itself, as without `--store`.
//! - Bad input is refused with a message: a URL that is not PostgreSQL's, an event that does not
//!   exist, an event started by another version.
//!
//! The commands are those of docs/TOURNAMENTS.md ("A tournament on several machines"), with the
//! test's store URL. Needs `MAUMAU_TEST_POSTGRES` (CI and `scripts/test.sh` set it); without it
//! the tests say so and pass without running.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/postgres.rs"]
mod postgres_schema;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

/// A `maumau worker`, killed when dropped.
struct Worker {
    child: Child,
    /// Its owner id, from its first line.
    owner: i64,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `maumau worker --store URL --threads 1`.
fn start_worker(url: &str) -> Worker {
    let mut c = Command::new(BIN);
    c.args(["worker", "--store", url, "--threads", "1"]);
    spawn_worker(c)
}

/// Starts a worker and reads its owner id from its first line.
fn spawn_worker(mut command: Command) -> Worker {
    let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    // "maumau worker: worker 123 (maumau 0.1.0) plays ..."
    let owner = line
        .split_whitespace()
        .nth(3)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no owner id in {line:?}"));
    // Keep reading, so the worker never blocks on a full pipe.
    std::thread::spawn(move || for _ in stderr.lines() {});
    Worker { child, owner }
}

/// The commands of docs/TOURNAMENTS.md's "A tournament on several machines" block: a worker,
/// the tournament on the store, the same tournament alone.
fn documented_commands() -> Vec<String> {
    let doc = include_str!("../../docs/TOURNAMENTS.md");
    let section = doc
        .split("## A tournament on several machines")
        .nth(1)
        .unwrap();
    let block = section.split("```sh\n").nth(1).unwrap();
    let block = block.split("```").next().unwrap();
    block.lines().map(String::from).collect()
}

/// A documented command, run as written by `sh` in `dir`, with this package's binary for
/// `maumau` and the test's store in `MAUMAU_STORE`.
fn documented(line: &str, dir: &Path, url: &str) -> Command {
    let rest = line
        .strip_prefix("maumau ")
        .unwrap_or_else(|| panic!("{line}"));
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg(format!("exec \"$MAUMAU\" {rest}"))
        .current_dir(dir)
        .env("MAUMAU", BIN)
        .env("MAUMAU_STORE", url);
    c
}

/// `maumau tournament ARGS --seed 11 --threads T --out OUT`, with `--store URL` when given.
fn tournament(args: &[&str], out: &Path, threads: &str, store: Option<&str>) -> Command {
    let mut c = Command::new(BIN);
    c.arg("tournament")
        .args(args)
        .args(["--seed", "11", "--threads", threads, "--out"])
        .arg(out);
    if let Some(url) = store {
        c.args(["--store", url]);
    }
    c
}

/// The standard output of a command that succeeded.
fn succeeded(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "failed: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The games of `results.jsonl`, sorted by id, without their decision times (which differ from
/// run to run); and the ids, which must be unique.
fn games(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let mut games: Vec<serde_json::Value> = text
        .lines()
        .map(|l| {
            let mut g: serde_json::Value = serde_json::from_str(l).unwrap();
            g.as_object_mut().unwrap().remove("decision_ns");
            g
        })
        .collect();
    games.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    let mut ids: Vec<&str> = games.iter().map(|g| g["id"].as_str().unwrap()).collect();
    ids.dedup();
    assert_eq!(ids.len(), games.len(), "a game is in the results twice");
    games
}

/// The replays, sorted by game.
fn replays(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("replays.jsonl")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

/// `standings.json` without the decision times (which differ from run to run).
fn standings(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("standings.json")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for s in v["standings"].as_array_mut().unwrap() {
        s.as_object_mut().unwrap().remove("decision_times");
    }
    v
}

/// The two output directories hold the same tournament; returns its number of games.
fn assert_same_results(alone: &Path, shared: &Path) -> usize {
    let a = games(alone);
    assert_eq!(a, games(shared), "the games differ");
    assert_eq!(replays(alone), replays(shared), "the replays differ");
    for file in ["standings.csv", "pairs.csv"] {
        assert_eq!(
            std::fs::read_to_string(alone.join(file)).unwrap(),
            std::fs::read_to_string(shared.join(file)).unwrap(),
            "{file} differs"
        );
    }
    assert_eq!(
        standings(alone),
        standings(shared),
        "standings.json differs"
    );
    a.len()
}

fn db(url: &str) -> postgres::Client {
    postgres::Client::connect(url, postgres::NoTls).unwrap()
}

/// The games `owner` holds now, by fixture id.
fn held_by(url: &str, owner: i64) -> Vec<String> {
    db(url)
        .query(
            "SELECT fixture FROM tournament_games WHERE lease_owner = $1 AND state = 'claimed'",
            &[&owner],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

#[test]
fn a_worker_killed_mid_game_changes_nothing_in_the_results() {
    let Some(url) = postgres_schema::fresh_store_url("tournament_workers") else {
        return;
    };
    let lines = documented_commands();
    let [worker, shared_run, alone_run] = &lines[..] else {
        panic!("three commands expected: {lines:?}")
    };
    let dir = tempfile::tempdir().unwrap();
    let (alone, shared) = (dir.path().join("alone"), dir.path().join("shared"));
    // 3 tables of 2 × 8 deals × 2 seatings; the search bot's games last a while.
    succeeded(documented(alone_run, dir.path(), &url).output().unwrap());

    let mut workers: Vec<Worker> = (0..3)
        .map(|_| spawn_worker(documented(worker, dir.path(), &url)))
        .collect();
    let mut coordinator = documented(shared_run, dir.path(), &url)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = coordinator.stderr.take().unwrap();
    let log = std::thread::spawn(move || {
        BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .collect::<Vec<String>>()
    });
    // Kill the first worker while it holds a game.
    let victim = workers[0].owner;
    let deadline = Instant::now() + Duration::from_secs(60);
    while held_by(&url, victim).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the first worker never got a game"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    workers[0].child.kill().unwrap();
    workers[0].child.wait().unwrap();
    let lost = held_by(&url, victim);
    assert!(!lost.is_empty(), "the worker was killed between games");

    let status = coordinator.wait().unwrap();
    let log = log.join().unwrap();
    assert!(status.success(), "{log:#?}");
    drop(workers);
    assert_eq!(assert_same_results(&alone, &shared), 48);
    // The progress line counted every machine's games.
    assert!(
        log.iter()
            .any(|l| l.starts_with("maumau: games 48/48 played")),
        "{log:#?}"
    );
    // Each game the killed worker held was played again, once its lease ran out; the others
    // were played once (no lease of a live process ran out).
    let mut c = db(&url);
    for row in c
        .query("SELECT fixture, plays, state FROM tournament_games", &[])
        .unwrap()
    {
        let (fixture, plays, state): (String, i32, String) = (row.get(0), row.get(1), row.get(2));
        assert_eq!(state, "done");
        let expected = if lost.contains(&fixture) { 2 } else { 1 };
        assert_eq!(plays, expected, "{fixture}");
    }
    let finished: String = c
        .query_one("SELECT state FROM tournament_events", &[])
        .unwrap()
        .get(0);
    assert_eq!(finished, "finished");
}

#[test]
fn a_command_killed_and_run_again_takes_over_its_event() {
    let Some(url) = postgres_schema::fresh_store_url("tournament_workers_takeover") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (alone, shared) = (dir.path().join("alone"), dir.path().join("shared"));
    let args = [
        "--bots",
        "random,heuristic,search:400",
        "--seats",
        "2",
        "--deals",
        "4",
    ];
    succeeded(tournament(&args, &alone, "2", None).output().unwrap());
    let _worker = start_worker(&url);
    let mut first = tournament(&args, &shared, "1", Some(&url))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed once some games are in.
    let done = || -> i64 {
        db(&url)
            .query_one(
                "SELECT COUNT(*) FROM tournament_games WHERE state = 'done'",
                &[],
            )
            .map_or(0, |r| r.get(0))
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while done() < 4 {
        assert!(Instant::now() < deadline, "no games were played");
        std::thread::sleep(Duration::from_millis(20));
    }
    first.kill().unwrap();
    first.wait().unwrap();
    // Its event is taken over once its liveness ran out (10 s after its last renewal, by the
    // database's clock; the worker plays on until then).
    let expired = || -> bool {
        db(&url)
            .query_one(
                "SELECT coordinator_until_ms <= (extract(epoch FROM clock_timestamp()) * 1000)::bigint \
                 FROM tournament_events",
                &[],
            )
            .unwrap()
            .get(0)
    };
    while !expired() {
        std::thread::sleep(Duration::from_millis(100));
    }
    let log = tournament(&args, &shared, "1", Some(&url))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&log.stderr).into_owned();
    assert!(log.status.success(), "{stderr}");
    assert!(stderr.contains("taken over"), "{stderr}");
    assert_eq!(assert_same_results(&alone, &shared), 24);
    let events: i64 = db(&url)
        .query_one("SELECT COUNT(*) FROM tournament_events", &[])
        .unwrap()
        .get(0);
    assert_eq!(events, 1, "the run again made a new event");
}

#[test]
fn swiss_and_elimination_rounds_released_to_workers_give_the_same_results() {
    let Some(url) = postgres_schema::fresh_store_url("tournament_workers_rounds") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let _workers: Vec<Worker> = (0..2).map(|_| start_worker(&url)).collect();
    // Swiss: 3 rounds of 3 tables; elimination: 6 entrants, 2 byes, then 2, 2 and 1 pairings.
    for (format, games_expected) in [("swiss", 3 * 3 * 6 * 2), ("elimination", 5 * 6 * 2)] {
        let args = [
            "--bots",
            "random,heuristic,random~0.5,heuristic~0.3,random,heuristic~0.1",
            "--seats",
            "2",
            "--deals",
            "6",
            "--format",
            format,
            "--rounds",
            "3",
        ];
        let alone = dir.path().join(format!("{format}-alone"));
        let shared = dir.path().join(format!("{format}-shared"));
        let one = succeeded(tournament(&args, &alone, "2", None).output().unwrap());
        let many = succeeded(
            tournament(&args, &shared, "1", Some(&url))
                .output()
                .unwrap(),
        );
        assert_eq!(
            assert_same_results(&alone, &shared),
            games_expected,
            "{format}"
        );
        // The knockout's winner too.
        let winner = |stdout: &str| {
            stdout
                .lines()
                .find(|l| l.contains("knockout winner"))
                .map(str::to_string)
        };
        assert_eq!(winner(&one), winner(&many), "{format}");
        assert_eq!(winner(&one).is_some(), format == "elimination");
    }
}

#[test]
fn bad_stores_events_and_versions_are_refused_with_a_message() {
    let refused = |args: &[&str]| {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert!(!out.status.success(), "{args:?} was accepted");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let err = refused(&["worker", "--store", "mysql://db/x"]);
    assert!(err.contains("expected a PostgreSQL URL"), "{err}");
    let err = refused(&[
        "tournament",
        "--bots",
        "random,heuristic",
        "--store",
        "sqlite:x",
    ]);
    assert!(err.contains("expected a PostgreSQL URL"), "{err}");
    let Some(url) = postgres_schema::fresh_store_url("tournament_workers_refusals") else {
        return;
    };
    let err = refused(&["worker", "--store", &url, "--event", "999"]);
    assert!(err.contains("there is no event 999"), "{err}");
    // With no worker, the command plays every game of its event itself, as without --store.
    let dir = tempfile::tempdir().unwrap();
    let (alone, shared) = (dir.path().join("alone"), dir.path().join("shared"));
    let args = ["--bots", "random,heuristic,random", "--deals", "2"];
    succeeded(tournament(&args, &alone, "2", None).output().unwrap());
    succeeded(
        tournament(&args, &shared, "2", Some(&url))
            .output()
            .unwrap(),
    );
    assert_eq!(assert_same_results(&alone, &shared), 2 * 3);
    // An event started by another version: refused by a worker given its id.
    let id: i64 = db(&url)
        .query_one(
            "UPDATE tournament_events SET version = 'maumau 0.0.0-elsewhere' RETURNING id",
            &[],
        )
        .unwrap()
        .get(0);
    let err = refused(&["worker", "--store", &url, "--event", &id.to_string()]);
    assert!(
        err.contains("was started by maumau 0.0.0-elsewhere") && err.contains("same version"),
        "{err}"
    );
}
