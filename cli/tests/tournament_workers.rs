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
//! - External programs: a `cmd:` entrant (`maumau bot`, deterministic from its `MAUMAU_SEED`)
//!   played by two workers gives the same games as on one machine; `lobby:` programs are
//!   launched once per worker that plays the event and closed when it is over; a program
//!   launched by a worker finds neither the store's URL nor the event's seed in its environment
//!   or arguments (nor, sandboxed, the worker's /proc); a worker killed with SIGKILL while a
//!   program plays leaves no program running, and its game is played again elsewhere.
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
    /// Its standard error so far (after the first line).
    lines: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
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
    let lines = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = lines.clone();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            kept.lock().unwrap().push(line);
        }
    });
    Worker {
        child,
        owner,
        lines,
    }
}

/// The commands of docs/TOURNAMENTS.md's "A tournament on several machines" block: a worker,
/// the tournament on the store, the same tournament alone.
fn documented_commands() -> Vec<String> {
    documented_block(1)
}

/// The lines of the `n`-th (from 1) command block of docs/TOURNAMENTS.md's "A tournament on
/// several machines".
fn documented_block(n: usize) -> Vec<String> {
    let doc = include_str!("../../docs/TOURNAMENTS.md");
    let section = doc
        .split("## A tournament on several machines")
        .nth(1)
        .unwrap();
    let section = section.split("\n## ").next().unwrap();
    let block = section.split("```sh\n").nth(n).unwrap();
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
/// run to run) and, for games on a server, the random ids of the game and its match; and the
/// ids, which must be unique.
fn games(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("results.jsonl")).unwrap();
    let mut games: Vec<serde_json::Value> = text
        .lines()
        .map(|l| {
            let mut g: serde_json::Value = serde_json::from_str(l).unwrap();
            for random in ["decision_ns", "game", "match_id"] {
                g.as_object_mut().unwrap().remove(random);
            }
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

/// A folder readable by every user (sandboxed programs run as `nobody`), with this package's
/// binary as `target/release/maumau`, the path the documented commands give it.
fn checkout() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let release = dir.path().join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    if std::fs::hard_link(BIN, release.join("maumau")).is_err() {
        std::fs::copy(BIN, release.join("maumau")).unwrap();
    }
    dir
}

/// How many games of the entrant at `entrant` the `owners` played (and kept).
fn played_by(url: &str, owners: &[i64], entrant: i32) -> i64 {
    db(url)
        .query_one(
            "SELECT COUNT(*) FROM tournament_games WHERE state = 'done' AND lease_owner = ANY($1) \
             AND $2 = ANY(seats)",
            &[&owners, &entrant],
        )
        .unwrap()
        .get(0)
}

/// docs/TOURNAMENTS.md's commands for a `cmd:` entrant on several machines, run as written:
/// `maumau bot` is deterministic from its `MAUMAU_SEED`, so the event played by two workers and
/// the command holds the same games, replays, standings and pairs as the tournament on one
/// machine, and the workers played games of the program.
#[test]
fn a_cmd_entrant_played_by_workers_gives_the_same_games_as_one_machine() {
    let Some(url) = postgres_schema::fresh_store_url("tournament_workers_programs") else {
        return;
    };
    let lines = documented_block(2);
    let [worker, shared_run, alone_run] = &lines[..] else {
        panic!("three commands expected: {lines:?}")
    };
    let dir = checkout();
    succeeded(documented(alone_run, dir.path(), &url).output().unwrap());
    let workers: Vec<Worker> = (0..2)
        .map(|_| spawn_worker(documented(worker, dir.path(), &url)))
        .collect();
    let shown = succeeded(documented(shared_run, dir.path(), &url).output().unwrap());
    assert!(!shown.contains("forfeited"), "{shown}");
    let n = assert_same_results(
        &dir.path().join("alone-programs"),
        &dir.path().join("shared-programs"),
    );
    assert_eq!(n, 3 * 6 * 2);
    let owners: Vec<i64> = workers.iter().map(|w| w.owner).collect();
    assert!(
        played_by(&url, &owners, 2) > 0,
        "the workers played no game of the program"
    );
}

/// A `maumau worker --event ID` started for `event`, its standard error collected.
struct EventWorker {
    child: Child,
    log: std::thread::JoinHandle<Vec<String>>,
}

impl EventWorker {
    /// `maumau worker --threads 1 --event EVENT EXTRA` with the store's URL in `MAUMAU_STORE`
    /// and `env` in its environment.
    fn start(url: &str, event: i64, extra: &[&str], env: &[(&str, &str)]) -> EventWorker {
        let mut child = Command::new(BIN)
            .args(["worker", "--threads", "1", "--event"])
            .arg(event.to_string())
            .args(extra)
            .env("MAUMAU_STORE", url)
            .envs(env.iter().copied())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let log = std::thread::spawn(move || {
            BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
                .collect()
        });
        EventWorker { child, log }
    }

    /// Waits (at most a minute) for the worker to stop by itself once its event is over;
    /// returns its standard error.
    fn finish(mut self) -> Vec<String> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!(
                    "the worker did not stop after its event: {:#?}",
                    self.log.join()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let log = self.log.join().unwrap();
        assert!(status.success(), "{log:#?}");
        log
    }
}

/// Starts `command` (a `maumau tournament --store`) and reads its event's id from its standard
/// error (all of which is collected, the event's line but).
fn start_event(mut command: Command) -> (Child, i64, std::thread::JoinHandle<Vec<String>>) {
    let mut child = command.stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = Vec::new();
    let event = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("no event id in {seen:#?}"))
            .unwrap();
        // "maumau: event 3 in the store; ..."
        if let Some(rest) = line.strip_prefix("maumau: event ") {
            break rest.split_whitespace().next().unwrap().parse().unwrap();
        }
        seen.push(line);
    };
    let log = std::thread::spawn(move || {
        seen.into_iter()
            .chain(lines.map_while(Result::ok))
            .collect()
    });
    (child, event, log)
}

/// Whether process `pid` is still running (a zombie, ended and not yet reaped, is not).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

/// A `lobby:` entrant is launched once by the command and once by each worker that plays its
/// event, plays every game it is invited to, and is closed when the event is over: each worker
/// of `--event` then stops by itself, a worker of every event closes it when it finds the event
/// over, and no lobby program is left running.
#[test]
fn lobby_programs_are_launched_once_per_worker_and_closed_with_the_event() {
    let Some(url) = postgres_schema::fresh_store_url("tournament_workers_lobby") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let launches = dir.path().join("launches");
    let lobby = format!(
        "lob=lobby:echo $$ >> '{}'; exec '{BIN}' bot --kind heuristic",
        launches.display()
    );
    let args = [
        "--bots",
        "random,heuristic",
        "--entrant",
        &lobby,
        "--seats",
        "2",
        "--deals",
        "6",
    ];
    let shared = dir.path().join("shared");
    // A worker of every event, which stays up.
    let lasting = start_worker(&url);
    let (mut coordinator, event, log) = start_event(tournament(&args, &shared, "1", Some(&url)));
    let workers: Vec<EventWorker> = (0..2)
        .map(|_| EventWorker::start(&url, event, &[], &[]))
        .collect();
    let status = coordinator.wait().unwrap();
    let log = log.join().unwrap();
    assert!(status.success(), "{log:#?}");
    let logs: Vec<Vec<String>> = workers.into_iter().map(EventWorker::finish).collect();
    for l in &logs {
        assert!(
            l.iter()
                .any(|x| x.contains(&format!("event {event} is over"))),
            "{l:#?}"
        );
        assert!(!l.iter().any(|x| x.contains("forfeited")), "{l:#?}");
    }
    // Every worker of --event opened the event and launched the program once; the command
    // too; and the lasting worker if it played a game of the event.
    let pids: Vec<u32> = std::fs::read_to_string(&launches)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let opened = lasting
        .lines
        .lock()
        .unwrap()
        .iter()
        .any(|l| l.contains(&format!("playing games of event {event}")));
    assert_eq!(pids.len(), 3 + usize::from(opened), "{pids:?}");
    let games = games(&shared);
    assert_eq!(games.len(), 3 * 6 * 2);
    assert!(
        !games.iter().any(|g| g.get("forfeits").is_some()),
        "{games:#?}"
    );
    // Closed with the event: the lobby programs exited (the command's at its end, the lasting
    // worker's once it found the event over, the lasting worker still running).
    let deadline = Instant::now() + Duration::from_secs(15);
    while pids.iter().any(|&p| running(p)) {
        assert!(
            Instant::now() < deadline,
            "a lobby program is still running"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(running(lasting.child.id()));
}

/// What the spy program (see `spy_script`) found, from one game's log: its environment, its
/// arguments, the command lines of every process it could see.
struct Spied {
    env: Vec<String>,
    args: Vec<String>,
    processes: Vec<String>,
}

/// A program that prints what it can read of its launcher (its environment, its arguments, the
/// command lines of every process it sees), then plays its seat with `maumau bot`.
fn spy_script(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("spy.sh");
    std::fs::write(
        &path,
        "# Prints what it can read of its launcher, then plays.\n\
         echo '== env'; env\n\
         echo '== args'; printf '%s\\n' \"$0\" \"$@\"\n\
         echo '== processes'\n\
         for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < \"$f\"; echo; done 2>/dev/null\n\
         echo '== end'\n\
         exec \"$1\" bot --kind random --server \"$MAUMAU_URL\"\n",
    )
    .unwrap();
    path
}

/// The spy's findings in every log file under `logs`.
fn spied(logs: &Path) -> Vec<Spied> {
    let mut found = Vec::new();
    let Ok(events) = std::fs::read_dir(logs) else {
        return found;
    };
    for entry in events.flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(spied(&path));
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let section = |name: &str| -> Vec<String> {
            text.split(&format!("== {name}\n"))
                .nth(1)
                .unwrap_or("")
                .split("\n== ")
                .next()
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect()
        };
        found.push(Spied {
            env: section("env"),
            args: section("args"),
            processes: section("processes"),
        });
    }
    found
}

/// A program launched by a worker (and by the command) gets what it gets on one machine and no
/// more: no variable or argument holds the store's URL, its password or the event's seed (the
/// worker's own environment holds the URL in `MAUMAU_STORE`, a `PGPASSWORD` and an operator
/// token), and its `MAUMAU_*` variables are exactly the documented ones. Sandboxed (an event
/// setting, which the workers apply), it sees no other process: neither the worker's command
/// line nor its /proc; and a worker that cannot sandbox refuses the event, saying why.
#[test]
fn programs_launched_by_workers_see_neither_the_store_nor_the_seed() {
    let Some(url) = postgres_schema::fresh_store_url("tournament_workers_secrets") else {
        return;
    };
    for sandboxed in [false, true] {
        let dir = checkout();
        let spy = spy_script(dir.path());
        let seed = "8675309123";
        let entrant = format!("spy=cmd:sleep 0.3; sh '{}' '{BIN}'", spy.display());
        let mut coordinator = Command::new(BIN);
        coordinator
            .args([
                "tournament",
                "--bots",
                "random,heuristic",
                "--entrant",
                &entrant,
            ])
            .args([
                "--seats",
                "2",
                "--deals",
                "3",
                "--threads",
                "1",
                "--seed",
                seed,
            ])
            .args(["--store", &url, "--out"])
            .arg(dir.path().join("out"))
            .env("MAUMAU_STORE", &url)
            .env("PGPASSWORD", "sekrit-password")
            .env("MAUMAU_OPERATOR_TOKEN", "sekrit-operator");
        if sandboxed {
            coordinator.arg("--sandbox");
        }
        let (mut coordinator, event, log) = start_event(coordinator);
        if sandboxed {
            // A worker that cannot sandbox plays none of the event's games: with --event, it
            // stops at once and says why.
            let out = Command::new(BIN)
                .args(["worker", "--event", &event.to_string()])
                .env("MAUMAU_STORE", &url)
                .env("MAUMAU_BWRAP", dir.path().join("no-bwrap-here"))
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{err}");
            assert!(
                err.contains("its programs run in a sandbox, which this machine cannot make"),
                "{err}"
            );
        }
        let worker_logs = dir.path().join("worker-logs");
        let workers: Vec<EventWorker> = (0..2)
            .map(|i| {
                let logs = worker_logs.join(i.to_string());
                EventWorker::start(
                    &url,
                    event,
                    &["--logs", logs.to_str().unwrap()],
                    &[
                        ("PGPASSWORD", "sekrit-password"),
                        ("MAUMAU_OPERATOR_TOKEN", "sekrit-operator"),
                    ],
                )
            })
            .collect();
        let status = coordinator.wait().unwrap();
        let log = log.join().unwrap();
        assert!(status.success(), "{log:#?}");
        for w in workers {
            w.finish();
        }
        let by_workers = spied(&worker_logs);
        assert!(
            !by_workers.is_empty(),
            "the workers launched no program (sandboxed: {sandboxed})"
        );
        let all: Vec<Spied> = by_workers
            .into_iter()
            .chain(spied(&dir.path().join("out/logs")))
            .collect();
        let documented = [
            "MAUMAU_ADDR",
            "MAUMAU_URL",
            "MAUMAU_TOKEN",
            "MAUMAU_SEED",
            "MAUMAU_GAME",
            "MAUMAU_SEAT",
            "MAUMAU_MATCH_ID",
            "MAUMAU_ENTRANT",
        ];
        let schema = url.rsplit("search_path%3D").next().unwrap();
        for s in &all {
            assert!(s.env.len() > 3, "{:?}", s.env);
            for line in s.env.iter().chain(&s.args) {
                for secret in [url.as_str(), schema, "sekrit", seed] {
                    assert!(!line.contains(secret), "{line:?} holds {secret:?}");
                }
                if let Some((name, _)) = line.split_once('=')
                    && name.starts_with("MAUMAU_")
                {
                    assert!(
                        documented.contains(&name),
                        "{line:?} (sandboxed: {sandboxed})"
                    );
                }
            }
            if sandboxed {
                // Its own processes only (the sandbox's init, bwrap, among them).
                assert!(!s.processes.is_empty());
                for p in &s.processes {
                    assert!(
                        !p.contains("maumau worker")
                            && !p.contains("maumau tournament")
                            && !p.contains(schema),
                        "a sandboxed program sees {p:?}"
                    );
                }
            }
        }
    }
}

/// A worker killed with SIGKILL while a `cmd:` program plays for it leaves nothing running: the
/// program (here a shell script and the `sleep` it waits for, a process its shell started) is
/// killed with it, by its guard. Its game is played again elsewhere once its lease runs out,
/// and the results are those of one machine.
#[test]
fn a_worker_killed_while_a_program_plays_leaves_no_program_behind() {
    let Some(url) = postgres_schema::fresh_store_url("tournament_workers_orphans") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Hangs in the first game its launcher ($1, when it is the worker to kill) gives it: a
    // `sleep` in the background, waited for; any other launch plays with `maumau bot`.
    let script = dir.path().join("hang.sh");
    std::fs::write(
        &script,
        "# Hangs once for launcher $1 (pids to $2/hung), else plays with $3.\n\
         read -r _ _ _ launcher _ < \"/proc/$PPID/stat\"\n\
         if { [ \"$PPID\" = \"$1\" ] || [ \"$launcher\" = \"$1\" ]; } && mkdir \"$2/hung\" 2>/dev/null; then\n\
             sleep 600 &\n\
             echo \"$$ $!\" > \"$2/hung/pids.tmp\"; mv \"$2/hung/pids.tmp\" \"$2/hung/pids\"\n\
             wait\n\
         fi\n\
         exec \"$3\" bot --kind heuristic --server \"$MAUMAU_URL\" --seed \"$MAUMAU_SEED\"\n",
    )
    .unwrap();
    let entrant = |victim: u32| {
        format!(
            "hang=cmd:sh '{}' {victim} '{}' '{BIN}'",
            script.display(),
            dir.path().display()
        )
    };
    let args = |victim: u32| -> Vec<String> {
        [
            "--bots",
            "random,heuristic",
            "--seats",
            "2",
            "--deals",
            "8",
            "--entrant",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([entrant(victim)])
        .collect()
    };
    let (alone, shared) = (dir.path().join("alone"), dir.path().join("shared"));
    let alone_args = args(0);
    let alone_args: Vec<&str> = alone_args.iter().map(String::as_str).collect();
    succeeded(tournament(&alone_args, &alone, "2", None).output().unwrap());

    let mut victim = start_worker(&url);
    let victim_pid = victim.child.id();
    let shared_args = args(victim_pid);
    let shared_args: Vec<&str> = shared_args.iter().map(String::as_str).collect();
    let mut coordinator = tournament(&shared_args, &shared, "1", Some(&url))
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
    let pids_file = dir.path().join("hung/pids");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pids_file.exists() {
        assert!(
            Instant::now() < deadline,
            "the worker never launched the program"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let pids: Vec<u32> = std::fs::read_to_string(&pids_file)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    assert!(pids.iter().all(|&p| running(p)), "{pids:?}");
    let lost = held_by(&url, victim.owner);
    assert!(!lost.is_empty(), "the worker held no game");
    victim.child.kill().unwrap(); // SIGKILL
    victim.child.wait().unwrap();
    // The program and the process it started die with the worker (the guard checks twice a
    // second).
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|&p| running(p)) {
        assert!(
            Instant::now() < deadline,
            "the program outlived its worker: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let status = coordinator.wait().unwrap();
    let log = log.join().unwrap();
    assert!(status.success(), "{log:#?}");
    assert_eq!(assert_same_results(&alone, &shared), 3 * 8 * 2);
    for fixture in &lost {
        let plays: i32 = db(&url)
            .query_one(
                "SELECT plays FROM tournament_games WHERE fixture = $1",
                &[fixture],
            )
            .unwrap()
            .get(0);
        assert_eq!(plays, 2, "{fixture} was not played again");
    }
}

/// With duplicate deals the games a worker plays are sealed as on one machine: a program is told
/// no seed at its game's end (`maumau bot` prints its final report), and an earlier match of its
/// server shows every hand (`/matches/ID/frames?view=omniscient`, 200 rather than 403) only once
/// every game of that match's deal has started, wherever it was played; and workers do reveal
/// their matches once the store has every game of the deal.
#[test]
fn workers_keep_deals_sealed_until_every_game_of_the_deal_is_in() {
    let Some(url) = postgres_schema::fresh_store_url("tournament_workers_sealed") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("peek.sh");
    std::fs::write(
        &script,
        "# Before playing: which earlier matches of its server show every hand; then plays.\n\
         d=\"$1\"; list=\"$d/on-$(printf %s \"$MAUMAU_URL\" | tr -c 'a-z0-9' _)\"\n\
         touch \"$list\"\n\
         for m in $(cat \"$list\"); do\n\
             code=$(curl -s -o /dev/null -w '%{http_code}' \"$MAUMAU_URL/matches/$m/frames?view=omniscient\")\n\
             echo \"check $m $code $MAUMAU_URL\" >> \"$d/log\"\n\
         done\n\
         echo \"start $MAUMAU_MATCH_ID\" >> \"$d/log\"\n\
         echo \"$MAUMAU_MATCH_ID\" >> \"$list\"\n\
         \"$2\" bot --kind heuristic --server \"$MAUMAU_URL\" --seed \"$MAUMAU_SEED\" >> \"$d/reports\"\n",
    )
    .unwrap();
    let entrant = format!(
        "peek=cmd:sleep 0.2; sh '{}' '{}' '{BIN}'",
        script.display(),
        dir.path().display()
    );
    let args = [
        "--bots",
        "heuristic",
        "--entrant",
        &entrant,
        "--seats",
        "2",
        "--deals",
        "10",
    ];
    let shared = dir.path().join("shared");
    let (mut coordinator, event, log) = start_event(tournament(&args, &shared, "1", Some(&url)));
    let workers: Vec<EventWorker> = (0..2)
        .map(|_| EventWorker::start(&url, event, &[], &[]))
        .collect();
    let status = coordinator.wait().unwrap();
    let log = log.join().unwrap();
    assert!(status.success(), "{log:#?}");
    for w in workers {
        w.finish();
    }
    // The coordinator's own server, to tell the workers' apart.
    let own = log
        .iter()
        .find_map(|l| l.split("over gRPC on ").nth(1))
        .map(|rest| rest.split_whitespace().next().unwrap().to_string());
    // Each game's match and seed (games() leaves the random match ids out).
    let seeds = std::fs::read_to_string(shared.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let g: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                g["match_id"].as_str().unwrap().to_string(),
                g["seed"].as_u64().unwrap(),
            )
        })
        .collect::<std::collections::HashMap<String, u64>>();
    assert_eq!(seeds.len(), 20);
    let reports = std::fs::read_to_string(dir.path().join("reports")).unwrap();
    assert_eq!(
        reports
            .matches("seed sealed until the operator reveals the match")
            .count(),
        20,
        "{reports}"
    );
    let lines = std::fs::read_to_string(dir.path().join("log")).unwrap();
    let mut started: Vec<&str> = Vec::new();
    let mut revealed_by_workers = 0;
    for line in lines.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[..] {
            ["start", id] => started.push(id),
            ["check", id, code, server] => {
                let seed = seeds[id];
                if code == "200" {
                    let unstarted: Vec<&String> = seeds
                        .iter()
                        .filter(|(m, s)| **s == seed && !started.contains(&m.as_str()))
                        .map(|(m, _)| m)
                        .collect();
                    assert!(
                        unstarted.is_empty(),
                        "{id} was revealed before {unstarted:?} of its deal started"
                    );
                    if own.as_deref() != Some(server) {
                        revealed_by_workers += 1;
                    }
                } else {
                    assert_eq!(code, "403", "{line}");
                }
            }
            _ => panic!("{line}"),
        }
    }
    assert!(own.is_some(), "{log:#?}");
    assert!(
        revealed_by_workers > 0,
        "no worker revealed a match of a finished deal:\n{lines}\n{log:#?}"
    );
}
