//! End to end: hostile entrants (the shell scripts in tests/data/hostile/) play a real `maumau
//! tournament --sandbox` beside honest ones (`maumau bot` launched per match, and a built-in
//! bot). Each tries to do harm: signal the other processes, read other seats' tokens, the output
//! folder and other entrants' files, abort a match through the server's operator calls, open a
//! TCP connection, fork-bomb, take all memory or CPU, fill its temporary folder. None succeeds, the honest entrants never forfeit, and each hostile
//! one forfeits with the reason (the limit it hit named). Without bubblewrap `--sandbox` refuses
//! to start, with the reason.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

/// A hostile entrant's script.
fn hostile(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/hostile")
        .join(name)
        .join("run.sh")
}

/// What a sandboxed tournament of `entrants` (plus an honest `maumau bot` and the built-in
/// heuristic bot, all at one table) printed, and its output folder.
struct Run {
    stdout: String,
    out: PathBuf,
    _dir: tempfile::TempDir,
}

impl Run {
    /// The tournament with its output in `dir`/out.
    fn new(dir: tempfile::TempDir, entrants: &[String], extra: &[&str]) -> Run {
        let out = dir.path().join("out");
        let honest = format!(
            "honest=cmd:'{BIN}' bot --kind heuristic --server \"$MAUMAU_URL\" --seed \"$MAUMAU_SEED\""
        );
        let seats = (entrants.len() + 2).to_string();
        let mut cmd = Command::new(BIN);
        cmd.arg("tournament")
            .args(["--bots", "heuristic", "--seats", &seats, "--deals", "1"])
            .args(["--threads", "2", "--grace-ms", "1000", "--seed", "11"])
            .args([
                "--sandbox",
                "--sandbox-pids",
                "16",
                "--sandbox-cpu-secs",
                "2",
            ])
            .args(["--sandbox-memory-mb", "128", "--sandbox-tmp-mb", "4"])
            .arg("--entrant")
            .arg(&honest)
            .args(extra)
            .arg("--out")
            .arg(&out);
        for e in entrants {
            cmd.arg("--entrant").arg(e);
        }
        let output = cmd.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stdout}\n{stderr}");
        assert!(
            stderr.contains("every launched program runs in a sandbox"),
            "{stderr}"
        );
        Run {
            stdout,
            out,
            _dir: dir,
        }
    }

    /// The notice lines that name `entrant`.
    fn notices(&self, entrant: &str) -> Vec<&str> {
        self.stdout
            .lines()
            .filter(|l| l.contains(&format!(" {entrant} (seat ")))
            .collect()
    }

    /// Every game completed, the honest entrants (`honest`, `heuristic`) never forfeited nor
    /// got a notice, and each of `hostile` forfeited every game.
    fn check_honest_unaffected(&self, hostile: &[&str]) {
        let games = std::fs::read_to_string(self.out.join("results.jsonl")).unwrap();
        let games: Vec<serde_json::Value> = games
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let n = hostile.len() + 2;
        assert_eq!(games.len(), n, "one game per seating: {games:?}");
        // Entrants in order: heuristic (0), honest (1), then the hostile ones.
        for g in &games {
            assert!(g["rounds"].as_u64().unwrap() >= 1, "{g}");
            let seats: Vec<u64> = serde_json::from_value(g["seats"].clone()).unwrap();
            let forfeits: Vec<usize> =
                serde_json::from_value(g["forfeits"].clone()).unwrap_or_default();
            let forfeited: Vec<u64> = forfeits.iter().map(|&s| seats[s]).collect();
            assert!(!forfeited.contains(&0) && !forfeited.contains(&1), "{g}");
            assert_eq!(forfeited.len(), hostile.len(), "{g}");
        }
        for e in ["honest", "heuristic"] {
            assert!(self.notices(e).is_empty(), "{}", self.stdout);
        }
        for h in hostile {
            assert!(
                self.stdout
                    .contains(&format!("{h} forfeited {n} of its {n} games")),
                "{}",
                self.stdout
            );
        }
    }

    /// Every hostile program's output (the logs of all launches).
    fn logs(&self) -> String {
        let mut all = String::new();
        for entry in std::fs::read_dir(self.out.join("logs")).unwrap() {
            all.push_str(&std::fs::read_to_string(entry.unwrap().path()).unwrap());
        }
        all
    }
}

fn entrant(name: &str, args: &str) -> String {
    format!("{name}=cmd:sh '{}' {args}", hostile(name).display())
}

#[test]
fn a_sandboxed_entrant_cannot_signal_others_nor_read_their_tokens_or_the_output_nor_abort_matches()
{
    // The snoop is told where the output folder is; the sandbox still hides it.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let snoop = entrant("snoop", &format!("'{}'", out.display()));
    let run = Run::new(
        dir,
        &[entrant("killer", ""), snoop, entrant("operator", "")],
        &[],
    );
    run.check_honest_unaffected(&["killer", "snoop", "operator"]);
    let logs = run.logs();
    assert!(!logs.contains("LEAK"), "{logs}");
    // Its socket reaches the server, but not as its operator: AbortMatch is refused
    // (PERMISSION_DENIED), and every game finished (check_honest_unaffected).
    assert!(!logs.contains("ABORTED"), "{logs}");
    assert!(logs.contains("AbortMatch answered grpc-status 7"), "{logs}");
    assert!(!logs.contains("read the memory"), "{logs}");
    // It sees only its own few processes (the sandbox's init and its own pipeline).
    for line in logs
        .lines()
        .filter(|l| l.starts_with("other processes visible"))
    {
        let n: u32 = line.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(n <= 2, "{logs}");
    }
    assert!(logs.contains("own token: 1"), "{logs}");
    // `kill -9 -1` reaches only its own sandbox: it may end its own shell (137), nobody else.
    for n in run.notices("killer") {
        assert!(
            n.contains("exited with exit status: 3") || n.contains("exit status: 137"),
            "{n}"
        );
    }
    for n in run.notices("snoop") {
        assert!(n.contains("exited with exit status: 4"), "{n}");
    }
}

#[test]
fn a_sandboxed_entrant_has_no_network_and_its_fork_bomb_hits_the_process_limit() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let run = Run::new(
        tempfile::tempdir().unwrap(),
        &[
            entrant("network", &port.to_string()),
            entrant("forkbomb", ""),
        ],
        &[],
    );
    run.check_honest_unaffected(&["network", "forkbomb"]);
    assert!(
        listener.accept().is_err(),
        "a sandboxed program connected to the test's listener"
    );
    let logs = run.logs();
    assert!(!logs.contains("CONNECTED"), "{logs}");
    assert!(
        logs.contains(&format!("no connection to 127.0.0.1/{port}")),
        "{logs}"
    );
    let bomb = run.notices("forkbomb");
    assert!(!bomb.is_empty());
    for n in bomb {
        assert!(
            n.contains("it reached its process limit (16 processes)"),
            "{n}"
        );
    }
}

#[test]
fn a_sandboxed_entrant_stopped_for_memory_cpu_or_a_full_tmp_forfeits_with_the_limit_named() {
    let run = Run::new(
        tempfile::tempdir().unwrap(),
        &[
            entrant("memory", ""),
            entrant("cpu", ""),
            entrant("tmpfill", ""),
        ],
        &[],
    );
    run.check_honest_unaffected(&["memory", "cpu", "tmpfill"]);
    for n in run.notices("memory") {
        assert!(
            n.contains("it went over its memory limit (128 MiB) and was killed"),
            "{n}"
        );
    }
    for n in run.notices("cpu") {
        assert!(n.contains("it used up its CPU time (2 s)"), "{n}");
    }
    for n in run.notices("tmpfill") {
        assert!(n.contains("No space left on device"), "{n}");
        // 4 MiB and not a byte more.
        assert!(n.contains("stopped at 4194304 bytes"), "{n}");
    }
}

#[test]
fn sandbox_refuses_to_start_without_bubblewrap_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let run = |env: &[(&str, &str)]| {
        let mut cmd = Command::new(BIN);
        cmd.args(["tournament", "--bots", "random,heuristic", "--deals", "1"])
            .arg("--out")
            .arg(dir.path().join("out"))
            .arg("--sandbox")
            .envs(env.iter().copied());
        let output = cmd.output().unwrap();
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let said = run(&[("MAUMAU_BWRAP", "/nonexistent/bwrap")]);
    assert!(
        said.contains(
            "--sandbox cannot be used on this machine: MAUMAU_BWRAP names /nonexistent/bwrap, \
             which does not exist"
        ),
        "{said}"
    );
    let said = run(&[("PATH", "/nonexistent")]);
    assert!(
        said.contains("bubblewrap (`bwrap`) is not on PATH"),
        "{said}"
    );
    // A folder the sandbox's user (nobody) could not read is refused up front, not at launch.
    let closed = tempfile::tempdir().unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(closed.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let output = Command::new(BIN)
        .args(["check-bot", "--sandbox", "--sandbox-bind"])
        .arg(closed.path())
        .args(["--", "true"])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        said.contains("is not readable by all users, and sandboxed programs run as nobody"),
        "{said}"
    );
    // Nothing was played.
    assert!(!dir.path().join("out").join("results.jsonl").exists());
}

/// `maumau check-bot --sandbox` with `args`; its status and stdout.
fn check_bot(args: &[&str]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(BIN)
        .args([
            "check-bot",
            "--sandbox",
            "--profile",
            "classic:2",
            "--seed",
            "7",
        ])
        .arg("--log-dir")
        .arg(dir.path())
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    (output.status.success(), format!("{stdout}\n{stderr}"))
}

#[test]
fn maumau_bot_passes_check_bot_in_the_sandbox_per_match_and_in_a_lobby() {
    // Per match: MAUMAU_ADDR is the sandbox's socket, which `maumau bot` dials.
    let (ok, said) = check_bot(&["--", BIN, "bot", "--kind", "heuristic"]);
    assert!(ok, "{said}");
    assert!(said.contains("checks passed"), "{said}");
    assert!(!said.contains("FAIL"), "{said}");
    // In a lobby: the lobby and the invitations' server are two sockets.
    let (ok, said) = check_bot(&["--lobby", "--", BIN, "bot", "--kind", "heuristic"]);
    assert!(ok, "{said}");
    assert!(said.contains("PASS  lobby closed"), "{said}");
}

#[test]
fn check_bot_names_the_limit_a_sandboxed_bot_hit() {
    let script = hostile("memory");
    let (ok, said) = check_bot(&[
        "--sandbox-memory-mb",
        "64",
        "--",
        "sh",
        script.to_str().unwrap(),
    ]);
    assert!(!ok, "{said}");
    assert!(
        said.contains("[sandbox: it went over its memory limit (64 MiB) and was killed]"),
        "{said}"
    );
}

#[test]
fn a_sandboxed_lobby_entrant_plays_its_tournament_through_two_sockets() {
    let dir = tempfile::tempdir().unwrap();
    let lobby = format!("lobbied=lobby:'{BIN}' bot --kind heuristic");
    let output = Command::new(BIN)
        .args([
            "tournament",
            "--bots",
            "random",
            "--seats",
            "2",
            "--deals",
            "2",
        ])
        .args([
            "--threads",
            "2",
            "--seed",
            "5",
            "--sandbox",
            "--entrant",
            &lobby,
        ])
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("4 games"), "{stdout}");
    assert!(!stdout.contains("forfeited"), "{stdout}");
}

/// The commands of docs/TOURNAMENTS.md's "Hosting a competition" block.
fn documented_sandbox_commands() -> Vec<String> {
    let doc = include_str!("../../docs/TOURNAMENTS.md");
    let section = doc.split("## Hosting a competition").nth(1).unwrap();
    let block = section.split("```sh\n").nth(1).unwrap();
    let block = block.split("```").next().unwrap();
    block.lines().map(String::from).collect()
}

/// docs/TOURNAMENTS.md's sandbox commands run as written from a folder with
/// `target/release/maumau` (this package's binary), `cargo run --release --` standing for it as
/// in the other tests of documented commands: the tournament has no forfeit, the gauntlet passes.
#[test]
fn the_documented_sandbox_commands_run_as_written() {
    let lines = documented_sandbox_commands();
    assert_eq!(lines.len(), 2, "{lines:?}");
    let root = tempfile::tempdir().unwrap();
    // Sandboxed programs run as nobody: the folder is readable by all, as a checkout is.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let release = root.path().join("target/release");
    std::fs::create_dir_all(&release).unwrap();
    if std::fs::hard_link(BIN, release.join("maumau")).is_err() {
        std::fs::copy(BIN, release.join("maumau")).unwrap();
    }
    for line in &lines {
        let run = line
            .strip_prefix("cargo run --release -- ")
            .unwrap_or_else(|| panic!("{line}"));
        let output = Command::new("sh")
            .arg("-c")
            .arg(format!("\"$MAUMAU\" {run}"))
            .current_dir(root.path())
            .env("MAUMAU", BIN)
            .env("TMPDIR", root.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{line}\n{stdout}\n{stderr}");
        assert!(
            stderr.contains("every launched program runs in a sandbox: 512 MiB")
                || stderr.contains("every launched program runs in a sandbox: 256 MiB"),
            "{stderr}"
        );
        assert!(!stdout.contains("forfeited"), "{stdout}");
        assert!(!stdout.contains("FAIL"), "{stdout}");
    }
}

/// docs/PERFORMANCE.md's sandbox benchmark runs as written (one short round with this package's
/// binary) and prints its ratios.
#[test]
fn the_sandbox_benchmark_script_runs() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/bench-sandbox.sh");
    let docs = include_str!("../../docs/PERFORMANCE.md");
    assert!(
        docs.contains("\nscripts/bench-sandbox.sh\n"),
        "the documented command"
    );
    let output = Command::new("bash")
        .arg(script)
        .env("MAUMAU", BIN)
        .env("ROUNDS", "1")
        .env("DEALS", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("tournament: ") && stdout.contains(" ms per game, sandboxed "),
        "{stdout}"
    );
    assert!(
        stdout.contains("gauntlet: ") && stdout.contains("ratio"),
        "{stdout}"
    );
}

/// `maumau bot --ladder --sandbox -- COMMAND` (here as a tournament's unsandboxed `lobby:`
/// entrant, whose lobby it holds) launches COMMAND per invitation in a sandbox, where the
/// invitation's server is a socket.
#[test]
fn bot_ladder_launches_each_match_in_the_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let lobby = format!("lobbied=lobby:'{BIN}' bot --sandbox -- '{BIN}' bot --kind heuristic");
    let output = Command::new(BIN)
        .args([
            "tournament",
            "--bots",
            "random",
            "--seats",
            "2",
            "--deals",
            "2",
        ])
        .args(["--threads", "2", "--seed", "5", "--entrant", &lobby])
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("4 games"), "{stdout}");
    assert!(!stdout.contains("forfeited"), "{stdout}");
    let log = std::fs::read_to_string(out.join("logs/lobbied-lobby.log")).unwrap();
    assert!(
        log.contains("every launched program runs in a sandbox"),
        "{log}"
    );
}
