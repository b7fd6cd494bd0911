//! End to end: joining a ladder from the command line. `maumau ladder register` makes
//! an owner, a bot and a version and keeps the key in a file of mode 0600; two `maumau bot
//! --ladder` processes (one launching a program per match, one with a reference bot) play rated
//! matches against each other on a real `maumau serve --ladder`, print their invitations and
//! ratings, and drain on SIGINT and on SIGTERM with exit status 0.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "common/checkout.rs"]
mod checkout;
#[path = "common/process.rs"]
mod process;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

/// A ladder server: versions rated from their first match (validation has its own tests).
fn ladder_server(dir: &Path) -> process::Server {
    let config = dir.join("ladder.toml");
    std::fs::write(&config, "ladder_validation = false\n").unwrap();
    let data = dir.join("data");
    let config = config.to_str().unwrap().to_string();
    process::start(process::serve_command(
        &data,
        &["--ladder", "--config", &config],
    ))
}

fn register(url: &str, owner: &str, extra: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .args(["ladder", "register", "--server", url, "--owner", owner])
        .args(["--bot", &format!("{owner}-bot"), "--version", "1.0"])
        .args(extra)
        .env_remove("MAUMAU_OWNER_KEY")
        .output()
        .unwrap()
}

/// A running `maumau bot --ladder` whose output lines are collected.
struct Joined {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Joined {
    fn start(name: &str, args: &[&str]) -> Joined {
        let mut child = Command::new(BIN)
            .arg("bot")
            .args(args)
            .env_remove("MAUMAU_LADDER_KEY")
            .env_remove("MAUMAU_TOKEN")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let out = BufReader::new(child.stdout.take().unwrap());
        let keep = lines.clone();
        let name = name.to_string();
        std::thread::spawn(move || {
            for line in out.lines().map_while(Result::ok) {
                eprintln!("{name}: {line}");
                keep.lock().unwrap().push(line);
            }
        });
        Joined { child, lines }
    }

    fn lines(&self) -> Vec<String> {
        self.lines.lock().unwrap().clone()
    }

    fn count(&self, text: &str) -> usize {
        self.lines().iter().filter(|l| l.contains(text)).count()
    }

    /// Sends a signal by name (INT, TERM) and waits for the exit status.
    fn signal_and_wait(&mut self, signal: &str) -> std::process::ExitStatus {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args([&format!("-{signal}"), &pid])
                .status()
                .unwrap()
                .success()
        );
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "no exit after SIG{signal}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Joined {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(180);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn registered_bots_join_with_maumau_bot_play_rated_matches_and_drain_on_signals() {
    let dir = tempfile::tempdir().unwrap();
    let server = ladder_server(dir.path());
    let url = server.url.clone();

    // A: the key goes to a file only its owner may read.
    let key_file = dir.path().join("a.key");
    let out = register(&url, "cli-a", &["--key-file", key_file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("owner \"cli-a\" registered"), "{text}");
    assert!(text.contains("version key written to"), "{text}");
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "the key file is private");
    let key_a = std::fs::read_to_string(&key_file).unwrap();
    assert!(key_a.trim().starts_with("mmv_"), "{key_a}");
    assert!(
        !text.contains(key_a.trim()),
        "a written key is not printed too"
    );

    // B: the key is printed once, with where to keep it.
    let out = register(&url, "cli-b", &[]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    assert!(text.contains("shown once"), "{text}");
    assert!(text.contains("MAUMAU_LADDER_KEY"), "{text}");
    let key_b = text
        .split_whitespace()
        .find(|w| w.starts_with("mmv_"))
        .expect("the version key is printed")
        .to_string();

    // A taken name is refused with a hint, and an existing key file is never overwritten.
    let again = register(&url, "cli-a", &[]);
    assert!(!again.status.success());
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(err.contains("choose another name"), "{err}");
    let clobber = register(&url, "cli-c", &["--key-file", key_file.to_str().unwrap()]);
    assert!(!clobber.status.success());
    assert_eq!(std::fs::read_to_string(&key_file).unwrap(), key_a);

    // A launches a program per match (`maumau bot`, which reads MAUMAU_ADDR and MAUMAU_TOKEN);
    // B plays with the reference bot.
    let formats = ["--profiles", "classic", "--seats", "2"];
    let mut a = Joined::start(
        "A",
        &[
            &["--ladder", &url, "--key-file", key_file.to_str().unwrap()][..],
            &formats,
            &["--", BIN, "bot", "--kind", "random"],
        ]
        .concat(),
    );
    let mut b = Joined::start(
        "B",
        &[
            &["--ladder", &url, "--key", &key_b, "--kind", "heuristic"][..],
            &formats,
        ]
        .concat(),
    );
    wait_for("two rated matches each", || {
        a.count("rating in classic μ") >= 2 && b.count("rating in classic μ") >= 2
    });
    for j in [&a, &b] {
        let lines = j.lines();
        assert!(lines[0].starts_with("joining the ladder at"), "{lines:?}");
        assert!(
            lines.iter().any(|l| l.starts_with("lobby open: version")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("invitation: match") && l.contains("rated")),
            "{lines:?}"
        );
    }

    // SIGINT drains A, SIGTERM drains B: both finish what they play and exit 0.
    let status = a.signal_and_wait("INT");
    assert!(status.success(), "A after SIGINT: {status} {:?}", a.lines());
    let status = b.signal_and_wait("TERM");
    assert!(
        status.success(),
        "B after SIGTERM: {status} {:?}",
        b.lines()
    );
    for j in [&a, &b] {
        let lines = j.lines();
        assert!(lines.iter().any(|l| l.starts_with("draining")), "{lines:?}");
        assert!(lines.iter().any(|l| l == "drained"), "{lines:?}");
        assert!(
            !lines.iter().any(|l| l.contains("your program")),
            "no program failed: {lines:?}"
        );
    }

    // The ratings are on the leaderboard.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let board = runtime.block_on(async {
        LadderServiceClient::new(server.channel().await)
            .get_leaderboard(pb::GetLeaderboardRequest {
                profile: "classic".into(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
    });
    let mut names: Vec<_> = board.standings.iter().map(|s| s.bot_name.clone()).collect();
    names.sort();
    assert_eq!(names, ["cli-a-bot", "cli-b-bot"]);
    assert!(board.standings.iter().all(|s| s.matches >= 2), "{board:?}");
}

#[test]
fn maumau_bot_without_a_key_or_with_a_bad_one_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let server = ladder_server(dir.path());
    let no_key = Command::new(BIN)
        .args(["bot", "--ladder", &server.url])
        .env_remove("MAUMAU_LADDER_KEY")
        .output()
        .unwrap();
    assert!(!no_key.status.success());
    let err = String::from_utf8_lossy(&no_key.stderr);
    assert!(err.contains("no version key"), "{err}");
    let bad = Command::new(BIN)
        .args(["bot", "--ladder", &server.url, "--key", "mmv_nonsense"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("LADDER_ERROR_REASON_BAD_KEY"), "{err}");
}

#[test]
fn the_rust_sdk_lobby_plays_rated_matches_and_drains() {
    use maumau_bot_sdk::bots::HeuristicBot;
    use maumau_bot_sdk::lobby::{LobbyEvent, LobbyOptions, play_ladder, register};

    let dir = tempfile::tempdir().unwrap();
    let server = ladder_server(dir.path());
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (sdk, opponent) = runtime.block_on(async {
        (
            register(&server.url, "sdk", "sdk-bot", "1.0")
                .await
                .unwrap(),
            register(&server.url, "sdk-opponent", "sdk-opponent-bot", "1.0")
                .await
                .unwrap(),
        )
    });
    // The opponent: `maumau bot --ladder` with a reference bot.
    let mut other = Joined::start(
        "opponent",
        &[
            "--ladder",
            &server.url,
            "--key",
            &opponent.version_key,
            "--kind",
            "random",
            "--profiles",
            "classic",
            "--seats",
            "2",
        ],
    );
    let mut options = LobbyOptions::new(server.url.clone(), sdk.version_key.clone());
    options.profiles = vec!["classic".into()];
    options.seats = vec![2];
    options.max_matches = 2;
    let events: Arc<Mutex<Vec<String>>> = Arc::default();
    let rated = Arc::new(tokio::sync::Notify::new());
    let on_event = {
        let (events, rated) = (events.clone(), rated.clone());
        let mut count = 0;
        move |event: &LobbyEvent| {
            events.lock().unwrap().push(event.to_string());
            if let LobbyEvent::MatchEnded(e) = event
                && e.rated
                && e.finished
            {
                count += 1;
                if count == 2 {
                    rated.notify_one();
                }
            }
        }
    };
    let mut seed = 0;
    let make_bot = move |_: &pb::Invitation| {
        seed += 1;
        Box::new(HeuristicBot::new(seed)) as Box<dyn maumau_bot_sdk::Bot>
    };
    runtime
        .block_on(async {
            tokio::time::timeout(
                Duration::from_secs(180),
                play_ladder(&options, make_bot, on_event, rated.notified()),
            )
            .await
        })
        .expect("two rated matches, then drained")
        .expect("the lobby is not refused");
    let events = events.lock().unwrap().clone();
    assert!(events[0].starts_with("lobby open: version"), "{events:?}");
    assert!(
        events
            .iter()
            .filter(|e| e.contains("rating in classic μ"))
            .count()
            >= 2,
        "{events:?}"
    );
    assert_eq!(
        events.last().map(String::as_str),
        Some("drained"),
        "{events:?}"
    );
    assert!(
        !events.iter().any(|e| e.contains("failed")),
        "every seat played: {events:?}"
    );
    let status = other.signal_and_wait("TERM");
    assert!(status.success(), "{:?}", other.lines());
}

#[test]
fn maumau_bot_reopens_its_lobby_when_the_server_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = ladder_server(dir.path());
    let url = server.url.clone();
    let addr = url.trim_start_matches("http://").to_string();
    let keys: Vec<String> = ["back-a", "back-b"]
        .iter()
        .map(|owner| {
            let out = register(&url, owner, &[]);
            assert!(out.status.success());
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .find(|w| w.starts_with("mmv_"))
                .unwrap()
                .to_string()
        })
        .collect();
    let mut bots: Vec<Joined> = keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            Joined::start(
                &format!("bot{i}"),
                &[
                    "--ladder",
                    &url,
                    "--key",
                    key,
                    "--kind",
                    "random",
                    "--profiles",
                    "classic",
                    "--seats",
                    "2",
                ],
            )
        })
        .collect();
    wait_for("a rated match each", || {
        bots.iter().all(|b| b.count("rating in classic μ") >= 1)
    });

    // The server stops gracefully (its ladder drains the lobbies) and comes back on the same
    // address with the same data.
    let pid = server.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    assert!(server.child.wait().unwrap().success());
    wait_for("the lobbies to notice", || {
        bots.iter().all(|b| b.count("lobby dropped") >= 1)
    });
    let rated_before: Vec<usize> = bots
        .iter()
        .map(|b| b.count("rating in classic μ"))
        .collect();
    let config = dir.path().join("ladder.toml");
    let mut again = Command::new(BIN);
    again
        .args(["serve", "--listen", &addr, "--data-dir"])
        .arg(dir.path().join("data"))
        .args(["--ladder", "--config"])
        .arg(&config)
        .env_remove("MAUMAU_OPERATOR_TOKEN")
        .env_remove("MAUMAU_OPERATOR_TOKEN_FILE")
        .env("RUST_LOG", "warn");
    let _server = process::start(again);
    wait_for("rated matches after the restart", || {
        bots.iter()
            .zip(&rated_before)
            .all(|(b, &n)| b.count("rating in classic μ") > n && b.count("lobby open") >= 2)
    });
    for b in &mut bots {
        let status = b.signal_and_wait("TERM");
        assert!(status.success(), "{:?}", b.lines());
    }
}

#[test]
fn a_second_signal_stops_at_once_and_kills_the_launched_programs() {
    let dir = tempfile::tempdir().unwrap();
    let server = ladder_server(dir.path());
    let keys: Vec<String> = ["twice-a", "twice-b"]
        .iter()
        .map(|owner| {
            let out = register(&server.url, owner, &[]);
            assert!(out.status.success());
            String::from_utf8_lossy(&out.stdout)
                .split_whitespace()
                .find(|w| w.starts_with("mmv_"))
                .unwrap()
                .to_string()
        })
        .collect();
    // A's program never plays: it notes its process id and waits.
    let pid_file = dir.path().join("program.pid");
    let program = format!("echo $$ > '{}'; exec sleep 120", pid_file.display());
    let formats = ["--profiles", "classic", "--seats", "2"];
    let mut a = Joined::start(
        "A",
        &[
            &["--ladder", &server.url, "--key", &keys[0]][..],
            &formats,
            &["--", "sh", "-c", &program],
        ]
        .concat(),
    );
    let _b = Joined::start(
        "B",
        &[
            &[
                "--ladder",
                &server.url,
                "--key",
                &keys[1],
                "--kind",
                "random",
            ][..],
            &formats,
        ]
        .concat(),
    );
    wait_for("A's program to start", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n'))
    });
    let pid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .to_string();
    let kill = |signal: &str| {
        let status = Command::new("kill")
            .args([signal, &a.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    };
    kill("-INT");
    wait_for("A to drain", || a.count("draining") >= 1);
    // The match cannot end (the program never joins): a second Ctrl-C stops A at once.
    let status = a.signal_and_wait("INT");
    assert!(
        !status.success(),
        "stopping without draining is not a clean exit"
    );
    // The program was killed with it (a zombie until its new parent reaps it, then gone).
    wait_for("the launched program to be gone", || {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .map_or(true, |s| s.lines().any(|l| l.starts_with("State:\tZ")))
    });
}

/// The Rust SDK's ladder example (`bot-sdk/examples/ladder_bot.rs`), built once per run into this
/// test's target directory (as `tests/examples.rs` builds the root package's examples).
fn sdk_example() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .args([
            "build",
            "--quiet",
            "-p",
            "maumau-bot-sdk",
            "--example",
            "ladder_bot",
        ])
        .arg("--manifest-path")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml"))
        .arg("--target-dir")
        .arg(profile_dir.parent().unwrap());
    if profile_dir.ends_with("release") {
        cargo.arg("--release");
    }
    // Without the variables cargo set for this test, which would make build scripts rerun.
    for (name, _) in std::env::vars_os() {
        let name = name.to_string_lossy().into_owned();
        if [
            "CARGO_PKG_",
            "CARGO_MANIFEST_",
            "CARGO_CRATE_",
            "CARGO_BIN_",
        ]
        .iter()
        .any(|p| name.starts_with(p))
            || ["OUT_DIR", "CARGO_PRIMARY_PACKAGE", "CARGO_TARGET_TMPDIR"].contains(&name.as_str())
        {
            cargo.env_remove(&name);
        }
    }
    assert!(cargo.status().unwrap().success(), "cargo build failed");
    let path = profile_dir.join("examples").join("ladder_bot");
    assert!(path.is_file(), "no example binary at {}", path.display());
    path
}

#[test]
fn the_rust_ladder_example_registers_plays_and_drains() {
    let example = sdk_example();
    let dir = tempfile::tempdir().unwrap();
    let server = ladder_server(dir.path());
    let out = register(&server.url, "rs-example-opponent", &[]);
    assert!(out.status.success());
    let key = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .find(|w| w.starts_with("mmv_"))
        .unwrap()
        .to_string();
    let mut opponent = Joined::start(
        "opponent",
        &["--ladder", &server.url, "--key", &key, "--kind", "random"],
    );
    let run = Command::new(example)
        .args([
            &server.url,
            "--register",
            "rs-example",
            "rs-example-bot",
            "1.0",
        ])
        .args(["--matches", "2"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        text.contains("version key (shown once, keep it): mmv_"),
        "{text}"
    );
    assert!(text.matches("rating in ").count() >= 2, "{text}");
    assert_eq!(text.lines().last(), Some("drained"), "{text}");
    assert!(opponent.signal_and_wait("TERM").success());
}

/// The commands of docs/LADDER.md's "Join in five minutes", one per line (a line ending in `\`
/// joined with the next), from its code blocks.
fn ladder_join_commands() -> Vec<String> {
    let doc = include_str!("../../docs/LADDER.md");
    let section = doc.split("## Join in five minutes").nth(1).unwrap();
    let section = section.split("\n## ").next().unwrap();
    let mut commands = Vec::new();
    for block in section.split("```sh\n").skip(1) {
        let block = block.split("```").next().unwrap();
        let joined = block
            .lines()
            .map(str::trim)
            .collect::<Vec<_>>()
            .join("\n")
            .replace("\\\n", "");
        commands.extend(joined.lines().filter(|l| !l.is_empty()).map(String::from));
    }
    commands
}

/// docs/LADDER.md's join commands run as written, in a shell whose home is a fresh directory,
/// against a real ladder (its address for the documentation's `ladder.example.org:50051`): the
/// client installed as the page says (the README's line, into a fresh copy of the client),
/// `maumau ladder register` writes the key file, and `maumau bot --ladder` launches the Python
/// example bot for rated matches against another owner's reference bot, then drains on Ctrl-C.
#[test]
fn the_ladder_join_commands_of_the_docs_run_as_written() {
    let commands = ladder_join_commands();
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert!(
        commands[0].starts_with("maumau ladder register "),
        "{commands:?}"
    );
    assert!(
        commands[1].starts_with("maumau bot --ladder "),
        "{commands:?}"
    );
    let install = "python3 -m venv clients/python/.venv && \
                   clients/python/.venv/bin/pip install -e clients/python";
    assert!(
        include_str!("../../docs/LADDER.md").contains(&format!("`{install}`")),
        "docs/LADDER.md says how to install the client"
    );

    let dir = tempfile::tempdir().unwrap();
    let server = ladder_server(dir.path());
    let url = server.url.clone();
    let root = dir.path().join("checkout");
    let client = concat!(env!("CARGO_MANIFEST_DIR"), "/../clients/python");
    checkout::copy_clean(Path::new(client), &root.join("clients/python"));
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let path = checkout::path_without_venvs();
    // `maumau` is this package's binary; the documentation's host is the test's ladder.
    let as_run = |command: &str| {
        command
            .replace("ladder.example.org:50051", &url)
            .replacen("maumau ", "\"$MAUMAU\" ", 1)
    };
    let shell = |script: &str| {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(script)
            .current_dir(&root)
            .env_remove("VIRTUAL_ENV")
            .env_remove("MAUMAU_LADDER_KEY")
            .env_remove("MAUMAU_OWNER_KEY")
            .env("HOME", &home)
            .env("PATH", &path)
            .env("MAUMAU", BIN);
        command
    };
    let setup = shell(&format!("set -e\n{install}\n{}\n", as_run(&commands[0])))
        .output()
        .unwrap();
    assert!(
        setup.status.success(),
        "{}{}",
        String::from_utf8_lossy(&setup.stdout),
        String::from_utf8_lossy(&setup.stderr)
    );
    assert!(home.join(".maumau-key").is_file(), "the key file is in ~");

    // Another owner's reference bot to play against.
    let out = register(&url, "cli-opp", &[]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let key = text
        .split_whitespace()
        .find(|w| w.starts_with("mmv_"))
        .expect("the version key is printed")
        .to_string();
    let _opponent = Joined::start(
        "opponent",
        &["--ladder", &url, "--key", &key, "--kind", "heuristic"],
    );
    let mut joined = shell(&format!("exec {}", as_run(&commands[1])))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let out = BufReader::new(joined.stdout.take().unwrap());
    let keep = lines.clone();
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            eprintln!("docs: {line}");
            keep.lock().unwrap().push(line);
        }
    });
    let mut docs = Joined {
        child: joined,
        lines,
    };
    wait_for("a rated match of the documented bot", || {
        docs.count("rating in classic μ") >= 1
    });
    let status = docs.signal_and_wait("INT");
    assert!(status.success(), "{status} {:?}", docs.lines());
    assert!(
        !docs.lines().iter().any(|l| l.contains("your program")),
        "the launched Python bot never failed: {:?}",
        docs.lines()
    );
}

/// The id `maumau ladder register` printed for the bot ("bot "x" registered (id N)").
fn bot_id(register_output: &str) -> i64 {
    let line = register_output
        .lines()
        .find(|l| l.starts_with("bot "))
        .expect("the bot's line");
    let id = line.rsplit("(id ").next().unwrap().trim_end_matches(')');
    id.parse().unwrap()
}

#[test]
fn a_program_that_fails_before_joining_gives_its_seat_up_at_once() {
    let dir = tempfile::tempdir().unwrap();
    // A join deadline far beyond this test's patience: only the withdrawal can end the match.
    let config = dir.path().join("ladder.toml");
    std::fs::write(
        &config,
        "ladder_validation = false\nladder_join_deadline_ms = 3600000\njoin_timeout_ms = 3700000\n",
    )
    .unwrap();
    let server = process::start(process::serve_command(
        &dir.path().join("data"),
        &["--ladder", "--config", config.to_str().unwrap()],
    ));
    let registered: Vec<(String, i64)> = ["crash-a", "crash-b"]
        .iter()
        .map(|owner| {
            let out = register(&server.url, owner, &[]);
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(out.status.success(), "{text}");
            let key = text
                .split_whitespace()
                .find(|w| w.starts_with("mmv_"))
                .unwrap()
                .to_string();
            (key, bot_id(&text))
        })
        .collect();
    // A's program fails at once, as a program missing its imports does.
    let formats = ["--profiles", "classic", "--seats", "2"];
    let a = Joined::start(
        "A",
        &[
            &["--ladder", &server.url, "--key", &registered[0].0][..],
            &formats,
            &["--", "sh", "-c", "echo 'ModuleNotFoundError' >&2; exit 3"],
        ]
        .concat(),
    );
    let b = Joined::start(
        "B",
        &[
            &[
                "--ladder",
                &server.url,
                "--key",
                &registered[1].0,
                "--kind",
                "random",
            ][..],
            &formats,
        ]
        .concat(),
    );
    wait_for("B to hear that A's seat was given up", || {
        b.count("withdrew before joining") >= 1
    });
    assert!(
        a.count("withdrew before joining") >= 1,
        "A hears it too: {:?}",
        a.lines()
    );
    // Three faults in a row pause A for health; its next probe waits for the probe interval
    // (30 s by default), so B is not invited to a failing match after every round meanwhile.
    wait_for("A's health pause", || a.count("health paused") >= 1);
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(a.count("invitation:"), 3, "{:?}", a.lines());
    // The no-show is A's alone: GetBot's history says B joined and A did not.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let joined = |bot: i64| -> Vec<bool> {
        runtime.block_on(async {
            let mut c = LadderServiceClient::connect(server.url.clone())
                .await
                .unwrap();
            let page = c
                .get_bot(pb::GetBotRequest {
                    bot_id: bot,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            page.versions
                .iter()
                .flat_map(|v| &v.history)
                .filter(|m| m.reason.contains("withdrew"))
                .map(|m| m.joined)
                .collect()
        })
    };
    let (a_joined, b_joined) = (joined(registered[0].1), joined(registered[1].1));
    assert!(
        !a_joined.is_empty() && a_joined.iter().all(|j| !j),
        "{a_joined:?}"
    );
    assert!(
        !b_joined.is_empty() && b_joined.iter().all(|j| *j),
        "{b_joined:?}"
    );
}
