//! Fault tests of `maumau serve`'s match store, with the real binary and real filesystems: a
//! tmpfs the test mounts (which needs root, as CI has; elsewhere these tests say so and stop,
//! except under `CI=true`, where they fail).
//!
//! - **Nothing acknowledged is lost.** With the disk full, a match that ends is not reported
//!   finished (no `MatchFinished`, no result), health says NOT_SERVING and `CreateMatch` is
//!   refused with STORAGE_UNAVAILABLE; when space comes back the record is written, the seat gets
//!   `MatchFinished`, health is SERVING again, and the result survives `kill -9`.
//! - **A read-only data directory** stops the server at start, with a message that says so.
//! - **Partial files** an interrupted write of the old file-per-match store left are deleted at
//!   start.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/process.rs"]
mod process;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use pb::server_message::Kind;
use process::{Server, action, create, join, serve_command, start};
use tokio_stream::StreamExt;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// A tmpfs of `size` mounted at a fresh directory, unmounted on drop.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts one, or returns `None` (after saying why) where this process may not mount.
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(Tmpfs { dir });
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the store's fault tests: mounting a tmpfs failed (they need root)"
        );
        eprintln!("skipped: mounting a tmpfs needs root (CI runs this test as root)");
        None
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

/// What the fault tests ask a running server.
trait Health {
    async fn health(&self) -> ServingStatus;
    async fn await_health(&self, want: ServingStatus);
}

impl Health for Server {
    async fn health(&self) -> ServingStatus {
        let response = HealthClient::new(self.channel().await)
            .check(tonic_health::pb::HealthCheckRequest {
                service: String::new(),
            })
            .await
            .expect("health answers");
        response.into_inner().status()
    }

    /// Waits (up to 20 s) until health reports `want`.
    async fn await_health(&self, want: ServingStatus) {
        for _ in 0..200 {
            if self.health().await == want {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("health never became {want:?}");
    }
}

fn reason(status: &tonic::Status) -> Option<String> {
    status
        .metadata()
        .get("maumau-reason")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Fills the filesystem at `dir` with one file until it is full; the file's path.
fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = [0u8; 4096];
    while f.write_all(&block).is_ok() {}
    path
}

/// The `.tmp` files in the data directory and in the old file-per-match store's directory.
fn partial_files(data: &Path) -> Vec<PathBuf> {
    [data.to_path_buf(), data.join("matches")]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tmp"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_delays_the_end_of_a_match_and_loses_nothing() {
    let Some(fs) = Tmpfs::mount("512k") else {
        return;
    };
    let data = fs.path().join("data");
    let mut server = start(serve_command(&data, &[]));
    let mut matches = MatchServiceClient::new(server.channel().await);
    let created = create(&mut matches, 5).await.expect("create the match");
    let filler = fill(fs.path());

    // Seat 0 plays the match to its end (random legal actions).
    let (tx, mut stream) = join(server.channel().await, &created.seat_tokens[0].token).await;
    let mut rng = 7u64;
    let mut request = 0;
    loop {
        let m = stream.next().await.expect("the stream goes on").unwrap();
        match m.message.and_then(|m| m.kind) {
            Some(Kind::Prompt(p)) if p.required => {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pick = &p.legal_actions[(rng >> 33) as usize % p.legal_actions.len()];
                request += 1;
                tx.send(action(p.state_id, pick.index, request))
                    .await
                    .unwrap();
            }
            Some(Kind::Event(e))
                if matches!(
                    e.event.as_ref().and_then(|e| e.kind.as_ref()),
                    Some(pb::event::Kind::MatchEnded(_))
                ) =>
            {
                break;
            }
            Some(Kind::Finished(_)) => panic!("MatchFinished before MatchEnded"),
            _ => {}
        }
    }

    // The disk is full: the match has ended, but it is not reported finished.
    server.await_health(ServingStatus::NotServing).await;
    // (The answer to the last action may still come; MatchFinished may not.)
    let quiet = tokio::time::Instant::now() + Duration::from_secs(2);
    while let Ok(m) = tokio::time::timeout_at(quiet, stream.next()).await {
        let kind = m
            .expect("the stream goes on")
            .unwrap()
            .message
            .and_then(|m| m.kind);
        assert!(
            matches!(kind, Some(Kind::Accepted(_))),
            "only the last action's answer may come before the record is written: {kind:?}"
        );
    }
    let id = created.match_id.clone();
    let status = matches
        .get_result(pb::GetResultRequest {
            match_id: id.clone(),
        })
        .await
        .expect_err("no result before the record is written");
    assert_eq!(
        reason(&status).as_deref(),
        Some("ERROR_REASON_MATCH_NOT_FINISHED"),
        "{status:?}"
    );
    let refused = create(&mut matches, 5)
        .await
        .expect_err("no new match on a full disk");
    assert_eq!(refused.code(), tonic::Code::Unavailable);
    assert_eq!(
        reason(&refused).as_deref(),
        Some("ERROR_REASON_STORAGE_UNAVAILABLE"),
        "{refused:?}"
    );
    assert!(
        partial_files(&data).is_empty(),
        "no partial file is left: {:?}",
        partial_files(&data)
    );

    // Space comes back: the record is written, then acknowledged.
    std::fs::remove_file(&filler).unwrap();
    let finished = tokio::time::timeout(Duration::from_secs(20), stream.next())
        .await
        .expect("MatchFinished once the disk has room")
        .expect("a message")
        .unwrap();
    let Some(Kind::Finished(finished)) = finished.message.and_then(|m| m.kind) else {
        panic!("MatchFinished expected")
    };
    let report = finished.report.expect("a report");
    server.await_health(ServingStatus::Serving).await;
    create(&mut matches, 5).await.expect("new matches again");

    // kill -9, restart: the acknowledged result is there.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let server = start(serve_command(&data, &[]));
    let mut matches = MatchServiceClient::new(server.channel().await);
    let stored = matches
        .get_result(pb::GetResultRequest { match_id: id })
        .await
        .expect("the acknowledged result survives kill -9")
        .into_inner();
    assert_eq!(stored.report, Some(report));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_data_directory_is_refused_at_start() {
    let Some(fs) = Tmpfs::mount("256k") else {
        return;
    };
    let data = fs.path().join("data");
    std::fs::create_dir_all(data.join("matches")).unwrap();
    let remounted = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(fs.path())
        .status()
        .unwrap();
    assert!(remounted.success());
    let mut child = serve_command(&data, &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // It must stop by itself; one that is still running after 20 s has started.
    let mut exited = None;
    for _ in 0..200 {
        exited = child.try_wait().unwrap();
        if exited.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    if exited.is_none() {
        child.kill().unwrap();
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        exited.is_some() && !out.status.success(),
        "the server started on a read-only directory: {stderr}"
    );
    assert!(
        stderr.contains("cannot write in") && stderr.contains("Read-only file system"),
        "the message says why: {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_record_files_are_deleted_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("matches")).unwrap();
    std::fs::write(data.join("matches/m0123456789abcdef.pb.tmp"), b"half a rec").unwrap();
    let server = start(serve_command(&data, &[]));
    assert_eq!(server.health().await, ServingStatus::Serving);
    assert!(
        partial_files(&data).is_empty(),
        "{:?}",
        partial_files(&data)
    );
    drop(server);
}
