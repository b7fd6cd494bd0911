//! The sandbox with the real bwrap, prlimit and cgroups: a program sees no other process, no
//! network but its socket (which reaches the TCP listener it is forwarded to), none of the host's
//! files but the system and its own folder, and the limits it hits are named.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

use std::time::Duration;

use maumau_sandbox::{Jail, Limits, Options, Route, Sandbox};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn sandbox(limits: Limits) -> Sandbox {
    Sandbox::new(Options {
        limits,
        ..Options::default()
    })
    .unwrap()
}

/// Runs `script` with `sh -c` in a jail with `routes`; its status, output and the limits hit.
async fn run(
    sandbox: &Sandbox,
    routes: &[Route],
    script: &str,
) -> (std::process::ExitStatus, String, Vec<String>) {
    let argv = vec!["sh".to_string(), "-c".into(), script.into()];
    let jail = sandbox.jail(routes, &argv).unwrap();
    let mut cmd = jail.command(&argv, &[("MAUMAU_TOKEN", "mine")]);
    let out = cmd.output().await.unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let hit = jail.verdict(Some(out.status));
    (out.status, text, hit)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_program_sees_only_itself_and_reaches_only_its_socket() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut buf = [0u8; 5];
        s.read_exact(&mut buf).await.unwrap();
        s.write_all(b"pong\n").await.unwrap();
        buf
    });
    let s = sandbox(Limits::default());
    let script = format!(
        "ls /proc | grep -c '^[0-9]'; echo env=$MAUMAU_TOKEN; echo uid=$(id -u); \
         cat /etc/shadow >/dev/null 2>&1 && echo read-shadow; \
         ls /work /root /sys 2>&1 | head -3; \
         python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); \
         s.connect('/run/maumau/m.sock'); s.send(b'ping\\n'); print(s.recv(5))\"; \
         python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), 1)\" \
         2>&1 | tail -1"
    );
    let routes = [Route::new("m.sock", &format!("127.0.0.1:{port}"))];
    let (status, out, hit) = run(&s, &routes, &script).await;
    assert!(status.success(), "{out}");
    assert_eq!(&server.await.unwrap(), b"ping\n");
    assert!(out.contains("b'pong\\n'"), "{out}");
    assert!(out.contains("env=mine"), "{out}");
    // Not root in disguise: root's files stay closed (this test runs as root in CI).
    assert!(
        out.contains("uid=65534") && !out.contains("read-shadow"),
        "{out}"
    );
    assert!(out.contains("Connection refused"), "{out}");
    assert!(out.contains("No such file"), "{out}");
    // sh, the process-counting pipeline and ls: a handful, never the host's.
    let seen: usize = out.lines().next().unwrap().trim().parse().unwrap();
    assert!(seen < 6, "{out}");
    assert!(hit.is_empty(), "{hit:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_limits_hit_are_named() {
    let limits = Limits {
        memory_mb: 64,
        pids: 8,
        cpu_secs: 1,
        tmp_mb: 1,
        ..Limits::default()
    };
    let s = sandbox(limits);
    let (_, out, hit) = run(
        &s,
        &[],
        "python3 -c 'x = bytearray(200 << 20); print(len(x))'",
    )
    .await;
    assert!(
        hit.iter().any(|h| h.contains("memory limit (64 MiB)")),
        "{hit:?} {out}"
    );
    let (_, out, hit) = run(&s, &[], "for i in $(seq 20); do sleep 2 & done; wait").await;
    assert!(
        hit.iter()
            .any(|h| h.contains("process limit (8 processes)")),
        "{hit:?} {out}"
    );
    let (_, out, hit) = run(&s, &[], "while :; do :; done").await;
    assert!(
        hit.iter().any(|h| h.contains("CPU time (1 s)")),
        "{hit:?} {out}"
    );
    let (status, out, _) = run(&s, &[], "head -c 4000000 /dev/zero > /tmp/fill").await;
    assert!(!status.success() && out.contains("No space left"), "{out}");
    tokio::time::sleep(Duration::from_millis(10)).await;
}

#[test]
fn a_missing_bwrap_is_refused_with_the_reason() {
    // Every Sandbox::new reads MAUMAU_BWRAP, so the refusal is checked in a child process of
    // this test binary (`refusal_child`) with it set, not by setting it here.
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "refusal_child", "--nocapture"])
        .env(maumau_sandbox::BWRAP_VAR, "/nonexistent/bwrap")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("MAUMAU_BWRAP names /nonexistent/bwrap, which does not exist"),
        "{text}"
    );
    let _ = Jail::addr("x");
}

#[test]
fn refusal_child() {
    if std::env::var_os(maumau_sandbox::BWRAP_VAR).is_none() {
        return;
    }
    let why = Sandbox::new(Options::default()).unwrap_err();
    println!("{why}");
}
