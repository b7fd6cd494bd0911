//! The `maumau serve` child process of the CLI's end-to-end tests (durability, metrics): started
//! on a free loopback port and waited for until it serves, killed when dropped; and the match
//! those tests play on it: seat 0 remote, seat 1 the server's random bot.
#![allow(dead_code, unreachable_pub)]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use tokio::sync::mpsc;
use tonic::transport::Channel;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

/// A running `maumau serve`.
pub struct Server {
    pub child: Child,
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `maumau serve` on `data` and a free loopback port, with `extra` arguments.
pub fn serve_command(data: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data)
        .args(extra)
        .env_remove("MAUMAU_OPERATOR_TOKEN")
        .env_remove("MAUMAU_OPERATOR_TOKEN_FILE")
        .env("RUST_LOG", "warn,maumau_server=info");
    cmd
}

/// Starts `command` (a `maumau serve`) and waits until it serves; its log goes on to our
/// stderr.
pub fn start(mut command: Command) -> Server {
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start maumau serve");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = loop {
        let line = lines
            .next()
            .expect("the server exited before serving")
            .expect("a log line");
        eprintln!("server: {line}");
        if let Some(rest) = line.split("serving on ").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .expect("an address")
                .to_string();
        }
    };
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            eprintln!("server: {line}");
        }
    });
    Server {
        child,
        url: format!("http://{addr}"),
    }
}

impl Server {
    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.url.clone())
            .expect("a URL")
            .connect()
            .await
            .expect("connect")
    }
}

/// Creates a two-seat classic match: seat 0 for the test, seat 1 the server's random bot.
pub async fn create(
    matches: &mut MatchServiceClient<Channel>,
    seed: u64,
) -> Result<pb::CreateMatchResponse, tonic::Status> {
    matches
        .create_match(pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                profile: pb::Profile::Classic as i32,
                seats: 2,
                ..Default::default()
            }),
            seed: Some(seed),
            bots: vec![pb::SeatBot {
                seat: 1,
                kind: pb::BotKind::Random as i32,
            }],
            ..Default::default()
        })
        .await
        .map(tonic::Response::into_inner)
}

/// Joins seat `token` on a Play stream: the sender for its actions, and what the server sends.
pub async fn join(
    channel: Channel,
    token: &str,
) -> (
    mpsc::Sender<pb::PlayRequest>,
    tonic::Streaming<pb::PlayResponse>,
) {
    let (tx, rx) = mpsc::channel(16);
    tx.send(pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Join(pb::Join {
            token: token.to_string(),
            client_name: "cli-test".into(),
            ..Default::default()
        })),
    })
    .await
    .expect("queue the join");
    let stream = PlayServiceClient::new(channel)
        .play(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .expect("open the Play stream")
        .into_inner();
    (tx, stream)
}

/// An action answering `state_id` with a dense index.
pub fn action(state_id: u64, index: u32, request_id: u64) -> pb::PlayRequest {
    pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Action(pb::ActionSubmission {
            state_id,
            choice: Some(pb::action_submission::Choice::ActionIndex(index)),
            request_id,
        })),
    }
}
