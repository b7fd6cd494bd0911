//! The deployment files of `deploy/` against the real binary. The image's command
//! (`deploy/Dockerfile`) and the systemd unit's (`deploy/maumau.service`, with the example
//! configuration and environment files) start `maumau serve`, which stops with status 0 on the
//! signal each sends; the unit passes `systemd-analyze verify` without a warning and gives the
//! server longer to stop than the ladder's drain; and, with `MAUMAU_TEST_POSTGRES`, two ladder
//! nodes started from `deploy/ladder-node.toml` share one PostgreSQL database owned by a role
//! that is no superuser (the first node creates the tables), backed up as docs/LADDER.md says.
//!
//! No image is built here: that needs a container engine and its base images. The Dockerfile is
//! read for what the image runs, and that command is run.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const BIN: &str = env!("CARGO_BIN_EXE_maumau");
const TOKEN: &str = "deploy-test-operator-token";
/// Long enough for a server to start or stop, short enough to fail a hung test.
const BOUND: Duration = Duration::from_secs(60);

/// A file of the repository, read.
fn repo_file(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("{}: {e}", full.display()))
}

// ----- the files, parsed -----

/// A Dockerfile's instructions (keyword in upper case, arguments), continuation lines joined,
/// comments and blank lines left out.
fn dockerfile_instructions(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pending = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') || (trimmed.is_empty() && pending.is_empty()) {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(part) => {
                pending.push_str(part);
                pending.push(' ');
            }
            None => {
                pending.push_str(trimmed);
                let (keyword, args) = pending.split_once(' ').unwrap_or((&pending, ""));
                out.push((keyword.to_uppercase(), args.trim().to_string()));
                pending.clear();
            }
        }
    }
    assert!(
        pending.is_empty(),
        "a continuation line ends the Dockerfile"
    );
    out
}

/// The one argument of `keyword` in `stage`.
fn only<'a>(stage: &'a [(String, String)], keyword: &str) -> &'a str {
    let found: Vec<&str> = stage
        .iter()
        .filter(|(k, _)| k == keyword)
        .map(|(_, a)| a.as_str())
        .collect();
    assert_eq!(found.len(), 1, "one {keyword} in the stage: {found:?}");
    found[0]
}

/// An exec-form instruction's arguments (`["maumau", "serve"]`).
fn exec_form(args: &str) -> Vec<String> {
    serde_json::from_str(args).unwrap_or_else(|e| panic!("not a JSON array: {args}: {e}"))
}

/// A systemd unit's assignments, `[Section]` then `Key=value`, in order.
fn unit_entries(text: &str) -> Vec<(String, String, String)> {
    let mut section = String::new();
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            section = name.to_string();
            continue;
        }
        let (key, value) = line.split_once('=').unwrap();
        out.push((section.clone(), key.trim().into(), value.trim().into()));
    }
    out
}

/// The value of the one `key` of `[section]`.
fn unit_value<'a>(entries: &'a [(String, String, String)], section: &str, key: &str) -> &'a str {
    let found: Vec<&str> = entries
        .iter()
        .filter(|(s, k, _)| s == section && k == key)
        .map(|(_, _, v)| v.as_str())
        .collect();
    assert_eq!(found.len(), 1, "one {key}= in [{section}]: {found:?}");
    found[0]
}

/// An environment file's `KEY=value` lines (systemd's and `docker run --env-file`'s format);
/// comment lines are left out.
fn env_file(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (k, v) = l.split_once('=').unwrap();
            (k.to_string(), v.to_string())
        })
        .collect()
}

/// The value after `flag` in a command's arguments.
fn flag_value<'a>(args: &'a [String], flag: &str) -> &'a str {
    let at = args.iter().position(|a| a == flag);
    let at = at.unwrap_or_else(|| panic!("{flag} in {args:?}"));
    &args[at + 1]
}

/// `args` with the value after `flag` replaced.
fn with_flag(args: &[String], flag: &str, value: &str) -> Vec<String> {
    let mut args = args.to_vec();
    let at = args.iter().position(|a| a == flag).unwrap();
    args[at + 1] = value.into();
    args
}

/// A configuration file of `deploy/` with its `listen` line (every address, as deployed) moved
/// to a free loopback port, written into `dir`.
fn loopback_config(dir: &Path, name: &str) -> PathBuf {
    let text = repo_file(&format!("deploy/{name}"));
    let listen = "listen = \"0.0.0.0:50051\"";
    assert!(
        text.contains(listen),
        "deploy/{name} listens on every address"
    );
    let path = dir.join(name);
    std::fs::write(&path, text.replace(listen, "listen = \"127.0.0.1:0\"")).unwrap();
    path
}

/// Seconds from a systemd time span of whole seconds (`90`, `90s`).
fn seconds(span: &str) -> u64 {
    span.trim_end_matches('s').parse().unwrap()
}

// ----- the server process -----

/// A `maumau serve` process, killed when dropped.
struct Served {
    child: Child,
    /// Everything it wrote to stderr so far.
    log: Arc<Mutex<String>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `maumau ARGS` with exactly the environment `env` (as systemd and a container give it) plus
/// the log filter.
fn maumau(args: &[String], env: &[(String, String)]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c
}

/// Starts `command` and waits for its "serving on" line; `Err` with its log if it exits first.
fn start(mut command: Command) -> Result<Served, String> {
    let mut child = command.spawn().unwrap();
    let log = Arc::new(Mutex::new(String::new()));
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        let Some(line) = lines.next() else {
            child.wait().unwrap();
            return Err(log.lock().unwrap().clone());
        };
        let line = line.unwrap();
        let serving = line.contains("serving on ");
        log.lock().unwrap().push_str(&(line + "\n"));
        if serving {
            break;
        }
    }
    let keep = log.clone();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            keep.lock().unwrap().push_str(&(line + "\n"));
        }
    });
    Ok(Served { child, log })
}

/// Sends `signal` (`SIGTERM`, as a unit or a Dockerfile names it) and waits for the exit.
fn stop(server: &mut Served, signal: &str, within: Duration) -> ExitStatus {
    let name = signal.strip_prefix("SIG").unwrap();
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(server.child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "still running {within:?} after {signal}: {}",
            server.log.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

// ----- the image -----

#[test]
fn the_image_builds_the_release_binary_and_runs_it_as_a_user_on_its_volume() {
    let instructions = dockerfile_instructions(&repo_file("deploy/Dockerfile"));
    let mut stages: Vec<Vec<(String, String)>> = Vec::new();
    for instruction in instructions {
        if instruction.0 == "FROM" {
            stages.push(Vec::new());
        }
        stages.last_mut().expect("FROM first").push(instruction);
    }
    let [build, run] = &stages[..] else {
        panic!("two stages, build and run: {stages:?}");
    };

    // Build: the release binary from the locked dependencies, on Debian bookworm.
    let from = only(build, "FROM");
    assert!(
        from.contains("bookworm") && from.ends_with(" AS build"),
        "{from}"
    );
    let compile = only(build, "RUN");
    assert!(
        compile.contains("cargo build --release --locked -p maumau-cli"),
        "{compile}"
    );
    // Run: Debian slim with the binary the build stage installed.
    assert_eq!(only(run, "FROM"), "debian:bookworm-slim");
    let copy: Vec<&str> = only(run, "COPY").split_whitespace().collect();
    let ["--from=build", built, installed] = copy[..] else {
        panic!("COPY --from=build SRC DST: {copy:?}");
    };
    assert!(
        compile.contains(&format!("target/release/maumau {built}")),
        "{compile}"
    );
    let entrypoint = exec_form(only(run, "ENTRYPOINT"));
    assert_eq!(installed, format!("/usr/local/bin/{}", entrypoint[0]));
    assert_eq!(entrypoint, ["maumau"]);

    // As a user of its own (not root) that owns the data directory, which is the volume.
    let user = only(run, "USER");
    let uid = user.split(':').next().unwrap();
    assert!(uid != "0" && uid != "root", "USER {user}");
    let volume = only(run, "VOLUME");
    let setup = only(run, "RUN");
    assert!(setup.contains(&format!("--uid {uid} ")), "{setup}");
    assert!(
        setup.contains(&format!("-m 0700 {volume}")),
        "the volume is made for the user: {setup}"
    );
    assert!(setup.contains("ca-certificates"), "{setup}");
    let cmd = exec_form(only(run, "CMD"));
    assert_eq!(cmd[0], "serve");
    assert_eq!(flag_value(&cmd, "--data-dir"), volume);
    let port = only(run, "EXPOSE");
    assert_eq!(flag_value(&cmd, "--listen"), format!("0.0.0.0:{port}"));
    let stop_signal = only(run, "STOPSIGNAL");
    assert_eq!(stop_signal, "SIGTERM");

    // The build context leaves out build output and history, and nothing the build needs.
    let ignore = repo_file(".dockerignore");
    let ignored: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    for needed in ["target", ".git"] {
        assert!(ignored.contains(&needed), ".dockerignore lacks {needed}");
    }
    let manifest: toml::Table = toml::from_str(&repo_file("Cargo.toml")).unwrap();
    let members = manifest["workspace"]["members"].as_array().unwrap();
    for path in members.iter().map(|m| m.as_str().unwrap()).chain([
        "Cargo.lock",
        "Cargo.toml",
        "build.rs",
        "proto",
        "src",
    ]) {
        assert!(!ignored.contains(&path), ".dockerignore leaves out {path}");
    }

    // The image's command, on loopback and a temporary volume, with the operator token from the
    // environment as `docker run --env-file` gives it: it serves there, then stops on the
    // image's stop signal with status 0.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("volume");
    let args = with_flag(&cmd, "--listen", "127.0.0.1:0");
    let args = with_flag(&args, "--data-dir", data.to_str().unwrap());
    let env = [("MAUMAU_OPERATOR_TOKEN".to_string(), TOKEN.to_string())];
    let mut server = start(maumau(&args, &env)).unwrap();
    assert!(
        server
            .log
            .lock()
            .unwrap()
            .contains(&format!("(data in {})", data.display())),
        "{}",
        server.log.lock().unwrap()
    );
    let status = stop(&mut server, stop_signal, BOUND);
    assert!(status.success(), "{status}: {}", server.log.lock().unwrap());
    assert!(data.join("matches.sqlite").is_file());
}

// ----- the systemd unit -----

/// The unit's assignments and its `ExecStart` command line after the binary.
fn unit() -> (Vec<(String, String, String)>, Vec<String>) {
    let entries = unit_entries(&repo_file("deploy/maumau.service"));
    let exec: Vec<String> = unit_value(&entries, "Service", "ExecStart")
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(exec[0], "/usr/local/bin/maumau");
    (entries, exec[1..].to_vec())
}

#[test]
fn the_unit_verifies_without_a_warning_and_waits_out_the_ladder_drain() {
    let (entries, args) = unit();
    let value = |key: &str| unit_value(&entries, "Service", key);

    // The stop: SIGTERM drains; the timeout is longer than the ladder's drain, as
    // docs/PRODUCTION.md ("Stopping") asks, and the docs name the same figures.
    assert_eq!(value("KillSignal"), "SIGTERM");
    let timeout = seconds(value("TimeoutStopSec"));
    let drain = maumau_ladder_service::LadderSettings::default()
        .drain_timeout
        .as_secs();
    assert!(timeout > drain, "TimeoutStopSec={timeout} <= drain {drain}");
    let production = repo_file("docs/PRODUCTION.md");
    let production = production.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        production.contains(&format!("`ladder_drain_timeout_ms` ({drain} s)")),
        "docs/PRODUCTION.md gives the drain"
    );
    assert!(
        production.contains(&format!("`TimeoutStopSec={timeout}`")),
        "docs/PRODUCTION.md gives the unit's stop timeout"
    );
    let node: toml::Table = toml::from_str(&repo_file("deploy/ladder-node.toml")).unwrap();
    let node_drain = node["ladder_drain_timeout_ms"].as_integer().unwrap();
    assert!(node_drain < i64::try_from(timeout * 1000).unwrap());

    // One descriptor per connection: the limit is above the server's connection cap.
    let nofile: usize = value("LimitNOFILE").parse().unwrap();
    assert!(nofile > maumau_server::ServerConfig::default().max_connections);

    // Its own user, its state directory as the data directory, the token never on the command
    // line, and the hardening.
    assert_eq!(
        flag_value(&args, "--data-dir"),
        format!("/var/lib/{}", value("StateDirectory"))
    );
    assert_eq!(value("ReadWritePaths"), flag_value(&args, "--data-dir"));
    assert!(!args.iter().any(|a| a.starts_with("--operator-token")));
    assert_eq!(value("EnvironmentFile"), "/etc/maumau/maumau.env");
    for (key, expected) in [
        ("User", "maumau"),
        ("Restart", "on-failure"),
        ("NoNewPrivileges", "yes"),
        ("ProtectSystem", "strict"),
        ("ProtectHome", "yes"),
        ("PrivateTmp", "yes"),
    ] {
        assert_eq!(value(key), expected, "{key}");
    }

    let Some(analyze) = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        assert!(std::env::var_os("CI").is_none(), "CI needs systemd-analyze");
        eprintln!("skipped systemd-analyze: not installed");
        return;
    };
    // `verify` needs the binary of ExecStart: the unit as installed, pointed at the one built.
    let dir = tempfile::tempdir().unwrap();
    let unit_path = dir.path().join("maumau.service");
    let text = repo_file("deploy/maumau.service").replace("/usr/local/bin/maumau", BIN);
    std::fs::write(&unit_path, text).unwrap();
    let out = Command::new(analyze)
        .arg("verify")
        .arg(&unit_path)
        .output()
        .unwrap();
    let printed =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    eprintln!("systemd-analyze verify: {printed}");
    assert!(out.status.success(), "{printed}");
    // It warns (unknown keys, bad values) with status 0: any line about the unit fails.
    let dir_name = dir.path().to_str().unwrap();
    assert!(
        !printed
            .lines()
            .any(|l| l.contains("maumau.service") || l.contains(dir_name)),
        "{printed}"
    );

    // The hardening keeps the unit's exposure in systemd's "OK" range.
    let out = Command::new(analyze)
        .args(["security", "--offline=true"])
        .arg(&unit_path)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    let exposure: f64 = printed
        .split("Overall exposure level for maumau.service: ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no exposure level: {printed}"))
        .parse()
        .unwrap();
    assert!(exposure <= 2.0, "exposure {exposure}: {printed}");
}

#[test]
fn the_unit_command_with_the_example_files_refuses_the_empty_token_then_serves_and_stops() {
    let (entries, args) = unit();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("state");
    let config = loopback_config(dir.path(), "maumau.toml");
    assert_eq!(flag_value(&args, "--config"), "/etc/maumau/maumau.toml");
    let args = with_flag(&args, "--config", config.to_str().unwrap());
    let args = with_flag(&args, "--data-dir", data.to_str().unwrap());

    // The environment file as shipped: the token is still to be written, and the server says so
    // instead of serving beyond loopback without one.
    let mut env = env_file(&repo_file("deploy/maumau.env"));
    assert_eq!(
        env,
        [("MAUMAU_OPERATOR_TOKEN".to_string(), String::new())],
        "deploy/maumau.env sets the token alone (the ladder's store is commented out)"
    );
    let log = start(maumau(&args, &env)).err().expect("refused");
    assert!(
        log.contains("MAUMAU_OPERATOR_TOKEN") && log.contains("is empty"),
        "{log}"
    );

    // With a token written in, it serves, and stops with status 0 on the unit's KillSignal
    // within its TimeoutStopSec.
    env[0].1 = TOKEN.into();
    let mut server = start(maumau(&args, &env)).unwrap();
    let timeout = seconds(unit_value(&entries, "Service", "TimeoutStopSec"));
    let signal = unit_value(&entries, "Service", "KillSignal");
    let status = stop(&mut server, signal, Duration::from_secs(timeout));
    let log = server.log.lock().unwrap().clone();
    assert!(status.success(), "{status}: {log}");
    assert!(
        log.contains(&format!("(data in {})", data.display())),
        "{log}"
    );
    assert!(!log.contains(TOKEN), "the token is in the log: {log}");
    assert!(data.join("matches.sqlite").is_file());
}

// ----- a ladder node -----

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// `url` (`postgres://user@host:port/db`) with another user and database.
fn other_database(url: &str, user: &str, db: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let host = rest.split_once('@').map_or(rest, |(_, h)| h);
    let host = host.split('/').next().unwrap();
    format!("{scheme}://{user}@{host}/{db}")
}

#[test]
fn two_ladder_nodes_from_the_example_files_share_one_database_that_pg_dump_backs_up() {
    let Some(admin) = std::env::var("MAUMAU_TEST_POSTGRES")
        .ok()
        .filter(|u| !u.is_empty())
    else {
        eprintln!(
            "deploy: ladder nodes SKIPPED, MAUMAU_TEST_POSTGRES is not set (scripts/test.sh and \
             CI set it; start a server with `scripts/postgres-temp.sh start`)"
        );
        return;
    };
    // As docs/LADDER.md asks: a database owned by a role of its own, which is no superuser.
    let name = format!("maumau_deploy_{}_{}", std::process::id(), now_ms());
    let mut db = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    for statement in [
        format!("CREATE ROLE {name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE"),
        format!("CREATE DATABASE {name} OWNER {name}"),
    ] {
        db.batch_execute(&statement).unwrap();
    }
    let store = other_database(&admin, &name, &name);

    let env_text = repo_file("deploy/maumau.env");
    assert!(env_text.contains("\n# MAUMAU_LADDER_STORE=postgres://"));
    let env = [
        ("MAUMAU_OPERATOR_TOKEN".to_string(), TOKEN.to_string()),
        ("MAUMAU_LADDER_STORE".to_string(), store.clone()),
    ];
    let (entries, args) = unit();
    let dir = tempfile::tempdir().unwrap();
    let config = loopback_config(dir.path(), "ladder-node.toml");
    let node: toml::Table = toml::from_str(&repo_file("deploy/ladder-node.toml")).unwrap();
    let address = node["ladder_node_address"].as_str().unwrap();

    // Two nodes, each with its own data directory: the first creates the tables, the second
    // finds them made.
    let mut nodes = Vec::new();
    for i in 0..2 {
        let data = dir.path().join(format!("node{i}"));
        let args = with_flag(&args, "--config", config.to_str().unwrap());
        let args = with_flag(&args, "--data-dir", data.to_str().unwrap());
        let server = start(maumau(&args, &env)).unwrap();
        assert!(server.log.lock().unwrap().contains("ladder on"));
        nodes.push((server, data));
    }
    let mut ladder = postgres::Client::connect(&store, postgres::NoTls).unwrap();
    let step: i64 = ladder
        .query_one("SELECT MAX(step) FROM schema_migrations", &[])
        .unwrap()
        .get(0);
    assert_eq!(step, i64::from(maumau_ladder::PgStore::known_schema_step()));
    let live: Vec<String> = ladder
        .query("SELECT address FROM nodes WHERE stopped_ms IS NULL", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(live, [address, address]);

    // The backups docs/LADDER.md gives, taken while the nodes run: the shared database with
    // pg_dump, a node's finished matches with sqlite3.
    if Path::new("/usr/bin/pg_dump").exists() {
        let dump = dir.path().join("maumau-ladder.dump");
        let out = Command::new("pg_dump")
            .args(["--format=custom", "--file"])
            .arg(&dump)
            .arg(&store)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let list = Command::new("pg_restore")
            .arg("--list")
            .arg(&dump)
            .output()
            .unwrap();
        let list = String::from_utf8_lossy(&list.stdout);
        assert!(list.contains("TABLE DATA") && list.contains("schema_migrations"));
    } else {
        assert!(std::env::var_os("CI").is_none(), "CI has pg_dump");
    }
    if Path::new("/usr/bin/sqlite3").exists() {
        let copy = dir.path().join("node0-matches.sqlite");
        let out = Command::new("sqlite3")
            .arg(nodes[0].1.join("matches.sqlite"))
            .arg(format!(".backup {}", copy.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(
            std::fs::read(&copy)
                .unwrap()
                .starts_with(b"SQLite format 3\0")
        );
    }

    // Each stops with status 0 on the unit's signal within its timeout, and leaves the store.
    let timeout = Duration::from_secs(seconds(unit_value(&entries, "Service", "TimeoutStopSec")));
    for (server, _) in &mut nodes {
        let status = stop(
            server,
            unit_value(&entries, "Service", "KillSignal"),
            timeout,
        );
        assert!(status.success(), "{status}: {}", server.log.lock().unwrap());
    }
    let live: i64 = ladder
        .query_one("SELECT COUNT(*) FROM nodes WHERE stopped_ms IS NULL", &[])
        .unwrap()
        .get(0);
    assert_eq!(live, 0);
    drop(ladder);
    for statement in [
        format!("DROP DATABASE {name} WITH (FORCE)"),
        format!("DROP ROLE {name}"),
    ] {
        db.batch_execute(&statement).unwrap();
    }
}
