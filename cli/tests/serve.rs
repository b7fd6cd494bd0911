//! End to end: `maumau serve` as an operator runs it, the real binary in a child process.
//!
//! - An empty operator token (flag, environment, configuration file or token file) is refused at
//!   start with a clear message, and so is an unreadable token file; the client commands that
//!   take a token refuse an empty one too.
//! - A server started with `--operator-token-file` accepts that token and refuses an empty bearer
//!   with the typed reason.
//! - SIGTERM stops the server as SIGINT does: it exits 0 and every open match (waiting, or
//!   mid-game) is recorded as aborted, as a restart on the same data directory shows.
//! - "serving on …" is printed only by a server that serves, and the log has no colour codes
//!   when stderr is not a terminal.
//! - `--metrics-listen` answers `GET /metrics` only (404 otherwise), closes a silent connection
//!   at the handshake timeout and holds no more connections than its cap.
//! - A connection that sends half a request head, or an HTTP/2 peer that makes no request and
//!   ignores the GOAWAY, is dropped 5 s after the handshake timeout.
//! - A damaged `matches.sqlite` stops the start with a message naming it; a healthy one starts.
//! - With `--tls-cert` and `--tls-key` the server speaks TLS: a client that trusts the
//!   certificate completes calls, a plain-text client does not get through; a plain HTTP/1.1
//!   request gets a 400 saying to use https, and the log says a plain-text client came.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau_ladder_service::LADDER_REASON_TRAILER;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");
const TOKEN: &str = "s3cret-operator";

/// `maumau ARGS` with none of the operator's variables of the test's own environment.
fn maumau(args: &[&str]) -> Command {
    let mut c = Command::new(BIN);
    c.args(args)
        .env_remove("MAUMAU_OPERATOR_TOKEN")
        .env_remove("MAUMAU_OPERATOR_TOKEN_FILE")
        .env_remove("MAUMAU_ADDR")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null());
    c
}

/// Runs a command that must stop by itself; a server that starts instead is killed and fails
/// the test (the deadline only guards against hanging forever).
fn finish(mut command: Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "still running after a minute (it started?): {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Runs a command that must fail; its stderr.
fn refused(command: Command) -> String {
    let out = finish(command);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "should fail: {err}");
    assert!(!err.contains("serving on"), "it said it serves: {err}");
    err
}

/// A `maumau serve` process, killed when dropped.
struct Served {
    child: Child,
    addr: String,
    /// Everything it wrote to stderr so far.
    log: Arc<Mutex<String>>,
    /// The thread copying its stderr into `log`; it ends with the process.
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    /// Everything it wrote to stderr, once it has exited.
    fn whole_log(&mut self) -> String {
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        self.log.lock().unwrap().clone()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `command` (a `maumau serve`) and waits for its "serving on ADDR" line.
fn start(mut command: Command) -> Served {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let log = Arc::new(Mutex::new(String::new()));
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let Some(line) = lines.next() else {
            panic!("the server exited before serving: {}", log.lock().unwrap());
        };
        let line = line.unwrap();
        log.lock().unwrap().push_str(&line);
        log.lock().unwrap().push('\n');
        if let Some(rest) = line.split("serving on ").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    let keep = log.clone();
    let reader = std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let mut log = keep.lock().unwrap();
            log.push_str(&line);
            log.push('\n');
        }
    });
    Served {
        child,
        addr: format!("http://{addr}"),
        log,
        reader: Some(reader),
    }
}

fn with_bearer<T>(message: T, header: &str) -> tonic::Request<T> {
    let mut req = tonic::Request::new(message);
    req.metadata_mut()
        .insert("authorization", header.parse().unwrap());
    req
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn an_empty_operator_token_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data").display().to_string();
    let serve = |extra: &[&str]| {
        let mut args = vec!["serve", "--data-dir", &data];
        args.extend_from_slice(extra);
        maumau(&args)
    };
    // The environment variable set but empty, beyond loopback (the audit's case).
    let mut c = serve(&["--listen", "0.0.0.0:0"]);
    c.env("MAUMAU_OPERATOR_TOKEN", "");
    let err = refused(c);
    assert!(err.contains("MAUMAU_OPERATOR_TOKEN"), "{err}");
    assert!(err.contains("is empty"), "{err}");
    // The flag, empty or only whitespace, on loopback too.
    for token in ["", "   ", "\t"] {
        let err = refused(serve(&[
            "--listen",
            "127.0.0.1:0",
            "--operator-token",
            token,
        ]));
        assert!(err.contains("--operator-token"), "{token:?}: {err}");
        assert!(err.contains("is empty"), "{token:?}: {err}");
    }
    // The configuration file.
    for text in ["operator_token = \"\"\n", "operator_token = \"  \"\n"] {
        let config = write(dir.path(), "maumau.toml", text);
        let err = refused(serve(&["--listen", "127.0.0.1:0", "--config", &config]));
        assert!(err.contains("operator_token in"), "{text}: {err}");
        assert!(err.contains("is empty"), "{text}: {err}");
    }
    // A token file that is empty, or holds only a line end.
    for text in ["", "\n", " \r\n"] {
        let file = write(dir.path(), "token", text);
        let err = refused(serve(&["--operator-token-file", &file]));
        assert!(
            err.contains(&format!("the file {file} is empty")),
            "{text:?}: {err}"
        );
    }
    // The same through its variable and through the configuration file.
    let empty = write(dir.path(), "empty-token", "");
    let mut c = serve(&[]);
    c.env("MAUMAU_OPERATOR_TOKEN_FILE", &empty);
    assert!(refused(c).contains("is empty"));
    let config = write(
        dir.path(),
        "file.toml",
        &format!("operator_token_file = {empty:?}\n"),
    );
    assert!(refused(serve(&["--config", &config])).contains("is empty"));
    // A token file that cannot be read.
    let missing = dir.path().join("no-such-file").display().to_string();
    let err = refused(serve(&["--operator-token-file", &missing]));
    assert!(
        err.contains(&format!("cannot read the operator token file {missing}")),
        "{err}"
    );
    // A token and a token file at once.
    let file = write(dir.path(), "token", "x\n");
    let err = refused(serve(&[
        "--operator-token",
        "x",
        "--operator-token-file",
        &file,
    ]));
    assert!(err.contains("cannot be used with"), "{err}");
    // Nothing was started: the data directory was never made.
    assert!(!dir.path().join("data").exists());

    // The commands that send the token refuse an empty one before they connect.
    let err = refused(maumau(&[
        "ladder",
        "close-season",
        "--server",
        "127.0.0.1:1",
        "--operator-token",
        "",
    ]));
    assert!(err.contains("is empty"), "{err}");
    let err = refused(maumau(&[
        "ladder",
        "close-season",
        "--server",
        "127.0.0.1:1",
        "--operator-token-file",
        &empty,
    ]));
    assert!(err.contains("is empty"), "{err}");
    let out = dir.path().join("tournament").display().to_string();
    let err = refused(maumau(&[
        "tournament",
        "--over-grpc",
        "--server",
        "127.0.0.1:1",
        "--operator-token",
        " ",
        "--bots",
        "random,random",
        "--deals",
        "1",
        "--out",
        &out,
    ]));
    assert!(err.contains("is empty"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_file_serves_and_an_empty_bearer_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "token", &format!("{TOKEN}\n"));
    let data = dir.path().join("data").display().to_string();
    let server = start(maumau(&[
        "serve",
        "--ladder",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        &data,
        "--operator-token-file",
        &file,
    ]));
    let mut matches = MatchServiceClient::connect(server.addr.clone())
        .await
        .unwrap();
    let create = || pb::CreateMatchRequest {
        config: Some(pb::MatchConfig {
            profile: pb::Profile::Classic as i32,
            seats: 2,
            ..Default::default()
        }),
        ..Default::default()
    };
    // The file's token (without its newline) is the operator's.
    let created = matches
        .create_match(with_bearer(create(), &format!("Bearer {TOKEN}")))
        .await
        .unwrap()
        .into_inner();
    // An empty bearer is no token at all.
    for header in ["Bearer ", "Bearer    ", "Bearer"] {
        let status = matches
            .create_match(with_bearer(create(), header))
            .await
            .expect_err("an empty bearer creates nothing");
        assert_eq!(status.code(), tonic::Code::PermissionDenied, "{status:?}");
        assert_eq!(
            maumau::wire::reason_of(&status),
            pb::ErrorReason::PermissionDenied,
            "{header:?}: {status:?}"
        );
        let status = matches
            .abort_match(with_bearer(
                pb::AbortMatchRequest {
                    match_id: created.match_id.clone(),
                    reason: "no".into(),
                },
                header,
            ))
            .await
            .expect_err("an empty bearer aborts nothing");
        assert_eq!(
            maumau::wire::reason_of(&status),
            pb::ErrorReason::PermissionDenied,
            "{header:?}: {status:?}"
        );
    }
    let listed = matches
        .list_matches(pb::ListMatchesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.matches.len(), 1, "{listed:?}");
    assert_eq!(listed.matches[0].status(), pb::MatchStatus::Waiting);

    // The ladder's operator calls the same.
    let mut ladder = LadderServiceClient::connect(server.addr.clone())
        .await
        .unwrap();
    let status = ladder
        .close_season(with_bearer(pb::CloseSeasonRequest {}, "Bearer "))
        .await
        .expect_err("an empty bearer closes nothing");
    assert_eq!(status.code(), tonic::Code::PermissionDenied, "{status:?}");
    assert_eq!(
        status
            .metadata()
            .get(LADDER_REASON_TRAILER)
            .and_then(|v| v.to_str().ok()),
        Some(pb::LadderErrorReason::OperatorOnly.as_str_name()),
        "{status:?}"
    );
    ladder
        .close_season(with_bearer(
            pb::CloseSeasonRequest {},
            &format!("Bearer {TOKEN}"),
        ))
        .await
        .unwrap();
    // The secret is nowhere in what the server printed.
    assert!(!server.log.lock().unwrap().contains(TOKEN));
}

/// Sends `signal` (`TERM`, `INT`) to the process with the `kill` command.
fn send_signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits for the server to exit by itself (the deadline only guards against hanging forever).
/// Async, so that the test's own connections keep being served meanwhile.
async fn wait_exit(server: &mut Served) -> std::process::ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "still running a minute after the signal: {}",
            server.log.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Relaxed: nobody times out during the test.
fn relaxed_clock() -> pb::TimeControl {
    pb::TimeControl {
        decision_ms: 600_000,
        bank_ms: 600_000,
        max_timeouts: 3,
        disconnect_grace_ms: 600_000,
        give_up: pb::GiveUpPolicy::Bot as i32,
        ..Default::default()
    }
}

/// Starts two matches on `addr`: one waiting for seats that never join, one running with seat 0
/// joined and asked to act. Returns their ids and seat 0's open stream.
async fn open_matches(
    addr: &str,
) -> (
    String,
    String,
    tokio::sync::mpsc::Sender<pb::PlayRequest>,
    tonic::Streaming<pb::PlayResponse>,
) {
    let mut matches = MatchServiceClient::connect(addr.to_string()).await.unwrap();
    let request = |bots: Vec<u32>, seed| pb::CreateMatchRequest {
        config: Some(pb::MatchConfig {
            profile: pb::Profile::Classic as i32,
            seats: 3,
            ..Default::default()
        }),
        seed: Some(seed),
        bots: bots
            .into_iter()
            .map(|seat| pb::SeatBot {
                seat,
                kind: pb::BotKind::Random as i32,
            })
            .collect(),
        time_control: Some(relaxed_clock()),
        ..Default::default()
    };
    let waiting = matches
        .create_match(request(vec![2], 5))
        .await
        .unwrap()
        .into_inner();
    let running = matches
        .create_match(request(vec![1, 2], 6))
        .await
        .unwrap()
        .into_inner();
    let mut play = pb::play_service_client::PlayServiceClient::connect(addr.to_string())
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel(8);
    tx.send(pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Join(pb::Join {
            token: running.seat_tokens[0].token.clone(),
            client_name: "test".into(),
            ..Default::default()
        })),
    })
    .await
    .unwrap();
    let mut stream = play
        .play(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    // Read until seat 0 must act: the match is running.
    loop {
        let m = stream.message().await.unwrap().unwrap();
        let required = m
            .message
            .iter()
            .any(|m| matches!(&m.kind, Some(pb::server_message::Kind::Prompt(p)) if p.required));
        if required {
            break;
        }
    }
    let status = |id: String| {
        let mut matches = matches.clone();
        async move {
            matches
                .get_match(pb::GetMatchRequest { match_id: id })
                .await
                .unwrap()
                .into_inner()
                .r#match
                .unwrap()
                .status()
        }
    };
    assert_eq!(
        status(waiting.match_id.clone()).await,
        pb::MatchStatus::Waiting
    );
    assert_eq!(
        status(running.match_id.clone()).await,
        pb::MatchStatus::Running
    );
    (waiting.match_id, running.match_id, tx, stream)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_records_open_matches_as_aborted_like_sigint() {
    for signal in ["TERM", "INT"] {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data").display().to_string();
        let serve = || maumau(&["serve", "--listen", "127.0.0.1:0", "--data-dir", &data]);
        let mut server = start(serve());
        let (waiting, running, tx, mut stream) = open_matches(&server.addr).await;

        // The seat reads on, as a bot does: its stream ends with the aborted match's report.
        let reader = tokio::spawn(async move {
            let mut last = None;
            while let Ok(Some(m)) = stream.message().await {
                if let Some(pb::server_message::Kind::Finished(f)) = m.message.and_then(|m| m.kind)
                {
                    last = f.report;
                }
            }
            drop(tx);
            last
        });

        send_signal(&server.child, signal);
        let status = wait_exit(&mut server).await;
        assert!(
            status.success(),
            "SIG{signal}: {status:?}\n{}",
            server.log.lock().unwrap()
        );
        let last = reader.await.unwrap();
        assert_eq!(
            last.map(|r| r.status()),
            Some(pb::MatchStatus::Aborted),
            "SIG{signal}"
        );

        // After a restart on the same data directory, both matches are recorded as aborted.
        let again = start(serve());
        let mut matches = MatchServiceClient::connect(again.addr.clone())
            .await
            .unwrap();
        for id in [waiting, running] {
            let summary = matches
                .get_match(pb::GetMatchRequest {
                    match_id: id.clone(),
                })
                .await
                .unwrap()
                .into_inner()
                .r#match
                .unwrap();
            assert_eq!(
                summary.status(),
                pb::MatchStatus::Aborted,
                "SIG{signal} {id}"
            );
            let report = matches
                .get_result(pb::GetResultRequest {
                    match_id: id.clone(),
                })
                .await
                .unwrap()
                .into_inner()
                .report
                .unwrap();
            assert_eq!(
                report.status(),
                pb::MatchStatus::Aborted,
                "SIG{signal} {id}"
            );
        }
    }
}

#[test]
fn serving_on_is_announced_only_by_a_server_that_serves() {
    let dir = tempfile::tempdir().unwrap();
    // Beyond loopback without an operator token: refused after the listener is bound.
    let data = dir.path().join("data").display().to_string();
    let err = refused(maumau(&[
        "serve",
        "--listen",
        "0.0.0.0:0",
        "--data-dir",
        &data,
    ]));
    assert!(err.contains("needs an operator token"), "{err}");
    // A data directory that cannot be opened (a file is in its place).
    let file = write(dir.path(), "not-a-directory", "x");
    let err = refused(maumau(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        &file,
    ]));
    assert!(err.contains("cannot open the data directory"), "{err}");
    // A server that starts says so, with the address it serves on.
    let server = start(maumau(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        &data,
    ]));
    assert!(
        server.addr.starts_with("http://127.0.0.1:"),
        "{}",
        server.addr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_has_no_colour_codes_off_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data").display().to_string();
    let mut server = start(maumau(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        &data,
    ]));
    // Something worth a log line: a match created, then the shutdown.
    let mut matches = MatchServiceClient::connect(server.addr.clone())
        .await
        .unwrap();
    matches
        .create_match(pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                profile: pb::Profile::Classic as i32,
                seats: 2,
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    drop(matches);
    send_signal(&server.child, "TERM");
    assert!(wait_exit(&mut server).await.success());
    let log = server.whole_log();
    assert!(log.contains("recording open matches"), "{log}");
    assert!(log.contains("match created"), "{log}");
    assert!(!log.contains('\u{1b}'), "colour codes in the log: {log:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_serves_a_client_that_trusts_the_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert_pem = certified.cert.pem();
    let cert = write(dir.path(), "cert.pem", &cert_pem);
    let key = write(
        dir.path(),
        "key.pem",
        &certified.signing_key.serialize_pem(),
    );
    let token = write(dir.path(), "token", &format!("{TOKEN}\n"));
    let data = dir.path().join("data").display().to_string();

    // A key without its certificate, an unreadable file and a file that is not a key are refused.
    let err = refused(maumau(&["serve", "--data-dir", &data, "--tls-key", &key]));
    assert!(err.contains("--tls-cert"), "{err}");
    let missing = dir.path().join("missing.pem").display().to_string();
    let err = refused(maumau(&[
        "serve",
        "--data-dir",
        &data,
        "--tls-cert",
        &cert,
        "--tls-key",
        &missing,
    ]));
    assert!(err.contains("cannot read the TLS key"), "{err}");
    let err = refused(maumau(&[
        "serve",
        "--data-dir",
        &data,
        "--tls-cert",
        &cert,
        "--tls-key",
        &token,
    ]));
    assert!(err.contains("cannot serve TLS"), "{err}");

    let server = start(maumau(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        &data,
        "--operator-token-file",
        &token,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ]));
    assert!(server.log.lock().unwrap().contains(", TLS)"));
    let addr = server.addr.trim_start_matches("http://");
    let tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(&cert_pem))
        .domain_name("localhost");
    let channel = tonic::transport::Channel::from_shared(format!("https://{addr}"))
        .unwrap()
        .tls_config(tls)
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut matches = MatchServiceClient::new(channel);
    let created = matches
        .create_match(with_bearer(
            pb::CreateMatchRequest {
                config: Some(pb::MatchConfig {
                    profile: pb::Profile::Classic as i32,
                    seats: 2,
                    ..Default::default()
                }),
                ..Default::default()
            },
            &format!("Bearer {TOKEN}"),
        ))
        .await
        .unwrap()
        .into_inner();
    let listed = matches
        .list_matches(pb::ListMatchesRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(listed.matches.len(), 1);
    assert_eq!(listed.matches[0].match_id, created.match_id);

    // Plain text gets no answer from a TLS server.
    let plain = async {
        let mut c = MatchServiceClient::connect(server.addr.clone()).await?;
        c.list_matches(pb::ListMatchesRequest::default())
            .await
            .map_err(Box::<dyn std::error::Error + Send + Sync>::from)
    };
    assert!(plain.await.is_err());
}

/// The operator token on the command line is readable by every local user: refused where it
/// guards anything beyond loopback (serving there, or calling a server there), while the same
/// token from the environment or a file serves; secret files over 4 KiB are refused.
#[test]
fn the_operator_token_on_the_command_line_is_refused_beyond_loopback() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data").display().to_string();
    for flag in [
        vec!["--operator-token", TOKEN],
        vec!["--operator-token=s3cret"],
    ] {
        let mut args = vec!["serve", "--listen", "0.0.0.0:0", "--data-dir", &data];
        args.extend(flag.iter().copied());
        let err = refused(maumau(&args));
        assert!(err.contains("every local user can read"), "{err}");
        assert!(err.contains("--operator-token-file"), "{err}");
    }
    for call in [
        vec!["ladder", "close-season", "--server", "10.9.8.7:50051"],
        vec![
            "tournament",
            "--over-grpc",
            "--server",
            "http://cards.example:50051",
            "--bots",
            "random,random",
            "--deals",
            "1",
        ],
    ] {
        let mut args = call.clone();
        args.extend(["--operator-token", TOKEN]);
        let err = refused(maumau(&args));
        assert!(err.contains("every local user can read"), "{call:?}: {err}");
    }
    // The environment's token serves beyond loopback (nothing is sent to it here).
    let mut c = maumau(&["serve", "--listen", "0.0.0.0:0", "--data-dir", &data]);
    c.env("MAUMAU_OPERATOR_TOKEN", TOKEN);
    let served = start(c);
    assert!(served.addr.contains(":"), "{}", served.addr);
    drop(served);
    // On loopback the flag still works, for a quick local server.
    let served = start(maumau(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        &data,
        "--operator-token",
        TOKEN,
    ]));
    drop(served);
    // A token file that is not a token: refused before anything starts.
    let big = write(dir.path(), "big", &"x".repeat(5000));
    let err = refused(maumau(&["serve", "--operator-token-file", &big]));
    assert!(err.contains("larger than 4096 bytes"), "{err}");
}

/// One HTTP/1.1 request on a new connection to `addr` (`Connection: close`): the whole answer.
///
/// The request goes out in one write: a server that answers from its first bytes (the TLS
/// port's answer to plain text) may close before a second write, which would then fail.
fn http_request(addr: &str, method: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut tcp = std::net::TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let request = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    tcp.write_all(request.as_bytes()).unwrap();
    let mut answer = String::new();
    tcp.read_to_string(&mut answer).unwrap();
    answer
}

/// Whether the server closes `tcp` (which sends nothing) within `within`.
fn closed_within(tcp: &mut std::net::TcpStream, within: Duration) -> bool {
    use std::io::Read;
    tcp.set_read_timeout(Some(within)).unwrap();
    let mut byte = [0u8; 1];
    matches!(tcp.read(&mut byte), Ok(0) | Err(_)) && {
        // A read timeout is an error too: tell it from a close.
        tcp.set_read_timeout(Some(Duration::from_millis(1)))
            .unwrap();
        matches!(tcp.read(&mut byte), Ok(0))
    }
}

#[test]
fn the_metrics_port_serves_get_metrics_only_with_timeouts_and_a_cap() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data").display().to_string();
    let server = start(maumau(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        &data,
        "--metrics-listen",
        "127.0.0.1:0",
        "--handshake-timeout-ms",
        "1000",
        "--max-connections",
        "2",
    ]));
    let log = server.log.lock().unwrap().clone();
    let metrics = log
        .split("metrics on http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("no metrics address in {log}"))
        .to_string();

    let answer = http_request(&metrics, "GET", "/metrics");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("maumau_"), "{answer}");
    for (method, path) in [
        ("GET", "/"),
        ("GET", "/metrics/x"),
        ("POST", "/metrics"),
        ("DELETE", "/metrics"),
        ("GET", "/matches"),
    ] {
        let answer = http_request(&metrics, method, path);
        assert!(
            answer.starts_with("HTTP/1.1 404"),
            "{method} {path}: {answer}"
        );
    }

    // A connection that says nothing is closed at the handshake timeout.
    let started = Instant::now();
    let mut silent = std::net::TcpStream::connect(&metrics).unwrap();
    assert!(closed_within(&mut silent, Duration::from_secs(10)));
    assert!(
        started.elapsed() >= Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );

    // Two silent connections held: a third is closed at once.
    let _held: Vec<_> = (0..2)
        .map(|_| std::net::TcpStream::connect(&metrics).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(200));
    let mut third = std::net::TcpStream::connect(&metrics).unwrap();
    assert!(closed_within(&mut third, Duration::from_millis(500)));
}

#[test]
fn a_damaged_match_store_stops_the_start_and_a_healthy_one_starts() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let store = data.join("matches.sqlite");
    std::fs::write(&store, vec![0x5a_u8; 64 * 1024]).unwrap();
    let data = data.display().to_string();
    let serve = || maumau(&["serve", "--listen", "127.0.0.1:0", "--data-dir", &data]);
    let err = refused(serve());
    assert!(err.contains("matches.sqlite"), "{err}");
    assert!(err.contains("damaged"), "{err}");
    assert!(err.contains("backup"), "{err}");

    std::fs::remove_file(&store).unwrap();
    let _server = start(serve());
}

#[test]
fn a_plain_text_client_on_the_tls_port_is_told_to_use_https() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).unwrap();
    let cert = write(dir.path(), "cert.pem", &certified.cert.pem());
    let key = write(
        dir.path(),
        "key.pem",
        &certified.signing_key.serialize_pem(),
    );
    let data = dir.path().join("data").display().to_string();
    let mut server = start(maumau(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        &data,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ]));
    let addr = server.addr.trim_start_matches("http://").to_string();
    let answer = http_request(&addr, "GET", "/matches");
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    assert!(
        answer.contains("this port speaks TLS: use https://"),
        "{answer}"
    );

    // HTTP/2 with prior knowledge: closed, and the log says why.
    let mut tcp = std::net::TcpStream::connect(&addr).unwrap();
    tcp.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut rest = Vec::new();
    let _ = tcp.read_to_end(&mut rest);
    send_signal(&server.child, "TERM");
    let log = server.whole_log();
    assert!(log.contains("plain-text client on the TLS port"), "{log}");
}

#[test]
fn a_half_request_head_and_a_peer_that_ignores_goaway_are_dropped() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data").display().to_string();
    let server = start(maumau(&[
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        &data,
        "--handshake-timeout-ms",
        "1000",
    ]));
    let addr = server.addr.trim_start_matches("http://").to_string();
    // Half an HTTP/1.1 head, never finished.
    let mut half = std::net::TcpStream::connect(&addr).unwrap();
    half.write_all(b"GET /matches HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    // An HTTP/2 peer: the preface and its settings, then nothing (no SETTINGS ack, no request,
    // no answer to the GOAWAY and ping it is sent).
    let mut h2 = std::net::TcpStream::connect(&addr).unwrap();
    h2.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00")
        .unwrap();
    let started = Instant::now();
    for (what, tcp) in [("half a head", &mut half), ("HTTP/2", &mut h2)] {
        // Whatever it is sent is read and ignored, until the server closes.
        tcp.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        let mut buf = [0u8; 1024];
        loop {
            match std::io::Read::read(tcp, &mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                Err(e) => panic!("{what}: still open after {:?}: {e}", started.elapsed()),
            }
        }
        // The handshake timeout (1 s), then 5 s to say goodbye, checked every second or so.
        assert!(
            started.elapsed() < Duration::from_secs(9),
            "{what}: dropped after {:?}",
            started.elapsed()
        );
    }
}
