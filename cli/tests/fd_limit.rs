//! End to end with the real binary: a `maumau serve` that runs out of file descriptors (its
//! RLIMIT_NOFILE lowered to 64 by `prlimit`) keeps serving the connections it has, does not spin
//! on the failing `accept` (its CPU time over two seconds, read from /proc, stays small: a
//! resource check, not a timing of our code), and takes new clients once connections close.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use tonic::transport::Channel;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

/// Long enough for anything below to happen, short enough to fail a hung test.
const BOUND: Duration = Duration::from_secs(20);

/// The server process, killed on drop.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// User plus system CPU time of process `pid`, in clock ticks (fields 14 and 15 of
/// /proc/PID/stat, counted after the parenthesised command name).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = stat.rsplit(')').next().unwrap();
    let fields: Vec<&str> = after.split_whitespace().collect();
    // `after` starts at field 3 (state).
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

async fn list(channel: &Channel) -> Result<(), tonic::Status> {
    MatchServiceClient::new(channel.clone())
        .list_matches(pb::ListMatchesRequest::default())
        .await
        .map(|_| ())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_descriptor_limit_the_server_backs_off_and_keeps_serving() {
    if Command::new("prlimit").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "CI needs prlimit");
        eprintln!("skipped: no prlimit");
        return;
    }
    let data = tempfile::tempdir().unwrap();
    let mut child = Command::new("prlimit")
        .arg("--nofile=64")
        .arg(BIN)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data.path())
        // Connections that never speak must stay open for the whole test.
        .args(["--handshake-timeout-ms", "600000"])
        .env_remove("MAUMAU_OPERATOR_TOKEN")
        .env("RUST_LOG", "error")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let server = Server(child);
    let addr = loop {
        let line = lines.next().expect("the server exited").unwrap();
        if let Some(rest) = line.split("serving on ").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    std::thread::spawn(move || lines.map_while(Result::ok).for_each(drop));
    let url = format!("http://{addr}");
    let existing = Channel::from_shared(url.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    list(&existing).await.expect("served");

    // More connections than the server has descriptors for: the kernel completes them all, the
    // server accepts until `accept` fails with EMFILE.
    let mut silent = Vec::new();
    for _ in 0..100 {
        silent.push(tokio::net::TcpStream::connect(&addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    let pid = server.0.id();
    let before = cpu_ticks(pid);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = cpu_ticks(pid) - before;
    // Spinning on EMFILE costs most of a core: about 200 ticks (at 100 Hz) in two seconds.
    assert!(
        used < 40,
        "the server used {used} ticks of CPU in 2 s while out of file descriptors"
    );

    // The connection it had is still served.
    tokio::time::timeout(BOUND, list(&existing))
        .await
        .expect("an answer")
        .expect("the existing connection is served at the descriptor limit");

    // Once connections close, new clients get in.
    drop(silent);
    tokio::time::timeout(BOUND, async {
        loop {
            if let Ok(channel) = Channel::from_shared(url.clone()).unwrap().connect().await
                && list(&channel).await.is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("a new client is served once descriptors are free again");
    drop(server);
}
