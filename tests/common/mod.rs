//! Shared helpers for the end-to-end tests: a real server on 127.0.0.1:0 and real gRPC clients.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::net::SocketAddr;
use std::time::Duration;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use maumau_server::ServerConfig;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

/// A running server; dropping it (or calling `stop`) shuts it down.
pub struct TestServer {
    pub addr: SocketAddr,
    pub data_dir: tempfile::TempDir,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl TestServer {
    pub async fn start() -> TestServer {
        TestServer::start_with(|_| {}).await
    }

    pub async fn start_with(tune: impl FnOnce(&mut ServerConfig)) -> TestServer {
        let data_dir = tempfile::tempdir().expect("a temporary directory");
        TestServer::start_in(data_dir, tune).await
    }

    pub async fn start_in(
        data_dir: tempfile::TempDir,
        tune: impl FnOnce(&mut ServerConfig),
    ) -> TestServer {
        let mut config = ServerConfig {
            data_dir: data_dir.path().to_path_buf(),
            ..ServerConfig::default()
        };
        tune(&mut config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            maumau_server::run(listener, config, async {
                let _ = stopped.await;
            })
            .await
            .expect("the server runs");
        });
        TestServer {
            addr,
            data_dir,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub async fn channel(&self) -> Channel {
        Channel::from_shared(self.url())
            .expect("url")
            .connect()
            .await
            .expect("connect")
    }

    pub async fn matches(&self) -> MatchServiceClient<Channel> {
        MatchServiceClient::new(self.channel().await)
    }

    pub async fn play_client(&self) -> PlayServiceClient<Channel> {
        PlayServiceClient::new(self.channel().await)
    }

    /// Stops the server and waits until it has recorded every match; returns the data directory.
    pub async fn stop(mut self) -> tempfile::TempDir {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = t.await;
        }
        let dir = tempfile::tempdir().expect("placeholder");
        std::mem::replace(&mut self.data_dir, dir)
    }
}

/// A config message with default options.
pub fn config(profile: pb::Profile, seats: u32) -> pb::MatchConfig {
    pb::MatchConfig {
        profile: profile as i32,
        seats,
        ..Default::default()
    }
}

/// A seat's open Play stream.
pub struct Seat {
    pub tx: mpsc::Sender<pb::PlayRequest>,
    pub rx: tonic::Streaming<pb::PlayResponse>,
    pub log: Vec<pb::ServerMessage>,
}

impl Seat {
    /// Opens a Play stream and joins with `token`.
    pub async fn join(
        client: &mut PlayServiceClient<Channel>,
        token: &str,
        resume: Option<pb::Resume>,
    ) -> Seat {
        let (tx, rx) = mpsc::channel(64);
        tx.send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Join(pb::Join {
                token: token.to_string(),
                client_name: "test".into(),
                resume,
            })),
        })
        .await
        .expect("send join");
        let rx = client
            .play(ReceiverStream::new(rx))
            .await
            .expect("play")
            .into_inner();
        Seat {
            tx,
            rx,
            log: Vec::new(),
        }
    }

    /// The next server message, within 10 seconds.
    pub async fn next(&mut self) -> Option<pb::ServerMessage> {
        let m = tokio::time::timeout(Duration::from_secs(10), self.rx.next())
            .await
            .expect("a server message within 10 s")?
            .ok()?
            .message?;
        self.log.push(m.clone());
        Some(m)
    }

    pub async fn send_action(&self, state_id: u64, index: u32, request_id: u64) {
        self.tx
            .send(pb::PlayRequest {
                kind: Some(pb::play_request::Kind::Action(pb::ActionSubmission {
                    state_id,
                    choice: Some(pb::action_submission::Choice::ActionIndex(index)),
                    request_id,
                })),
            })
            .await
            .expect("send action");
    }
}

/// Plays a seat to the end with a seeded random choice among required prompts' legal actions;
/// returns the final report.
pub async fn play_to_end(mut seat: Seat, seed: u64) -> pb::MatchReport {
    let mut rng = seed;
    let mut request = 0;
    loop {
        let Some(m) = seat.next().await else {
            panic!("the stream ended before MatchFinished")
        };
        match m.kind {
            Some(pb::server_message::Kind::Prompt(p)) if p.required => {
                rng = rng
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let pick = &p.legal_actions[(rng >> 33) as usize % p.legal_actions.len()];
                request += 1;
                seat.send_action(p.state_id, pick.index, request).await;
            }
            Some(pb::server_message::Kind::Finished(f)) => return f.report.expect("a report"),
            _ => {}
        }
    }
}
