//! Shared helpers for the end-to-end tests: a real server on 127.0.0.1:0 and real gRPC clients.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::net::SocketAddr;
use std::time::Duration;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use maumau_ladder_service::LadderSettings;
use maumau_server::ServerConfig;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

/// What a test server starts with: the game server's configuration (which `Setup` dereferences
/// to, so tests tune it as `c.join_timeout = …`) and, for ladder tests, the ladder on it.
#[derive(Clone)]
pub struct Setup {
    pub server: ServerConfig,
    pub ladder: Option<LadderSettings>,
}

impl std::ops::Deref for Setup {
    type Target = ServerConfig;

    fn deref(&self) -> &ServerConfig {
        &self.server
    }
}

impl std::ops::DerefMut for Setup {
    fn deref_mut(&mut self) -> &mut ServerConfig {
        &mut self.server
    }
}

impl Setup {
    /// Serves on `listener` until `stop` completes: the game server, with the ladder if set.
    /// Finished matches go to the SQLite archive in the data directory, as with `maumau serve`
    /// (restarts and the data directory's files are tested), unless the test set an archive.
    pub async fn run(
        mut self,
        listener: tokio::net::TcpListener,
        stop: impl std::future::Future<Output = ()> + Send,
    ) -> Result<(), maumau_server::ServerError> {
        if self.server.archive.is_none() {
            let archive = maumau_archive::SqliteArchive::new(&self.server.data_dir);
            self.server.archive = Some(std::sync::Arc::new(archive));
        }
        match self.ladder {
            Some(l) => maumau_ladder_service::run(listener, self.server, l, |_| {}, stop).await,
            None => maumau_server::run(listener, self.server, stop).await,
        }
    }
}

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

    pub async fn start_with(tune: impl FnOnce(&mut Setup)) -> TestServer {
        let data_dir = tempfile::tempdir().expect("a temporary directory");
        TestServer::start_in(data_dir, tune).await
    }

    pub async fn start_in(
        data_dir: tempfile::TempDir,
        tune: impl FnOnce(&mut Setup),
    ) -> TestServer {
        let mut config = Setup {
            server: ServerConfig {
                data_dir: data_dir.path().to_path_buf(),
                ..ServerConfig::default()
            },
            ladder: None,
        };
        tune(&mut config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            config
                .run(listener, async {
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
        Seat::join_with(client, token, resume, pb::EventDelivery::Unspecified).await
    }

    /// Opens a Play stream and joins with `token`, asking for `delivery`.
    pub async fn join_with(
        client: &mut PlayServiceClient<Channel>,
        token: &str,
        resume: Option<pb::Resume>,
        delivery: pb::EventDelivery,
    ) -> Seat {
        let (tx, rx) = mpsc::channel(64);
        tx.send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Join(pb::Join {
                token: token.to_string(),
                client_name: "test".into(),
                resume,
                event_delivery: delivery as i32,
                ..Default::default()
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

// ----- helpers for bad_input, tokens, reconnect, clock and fuzz ---------------------------------

/// `authorization: Bearer TOKEN` on a request.
pub fn with_bearer<T>(message: T, token: &str) -> tonic::Request<T> {
    let mut req = tonic::Request::new(message);
    req.metadata_mut().insert(
        "authorization",
        format!("Bearer {token}").parse().expect("ascii token"),
    );
    req
}

/// A Join message.
pub fn join_request(token: &str, resume: Option<pb::Resume>) -> pb::PlayRequest {
    pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Join(pb::Join {
            token: token.to_string(),
            client_name: "test".into(),
            resume,
            ..Default::default()
        })),
    }
}

/// An action message answering `state_id` with a dense index.
pub fn index_request(state_id: u64, index: u32, request_id: u64) -> pb::PlayRequest {
    pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Action(pb::ActionSubmission {
            state_id,
            choice: Some(pb::action_submission::Choice::ActionIndex(index)),
            request_id,
        })),
    }
}

/// Opens a Play stream (with the token in the metadata when `meta_token` is set) whose first
/// message is `first`, if any. Reads nothing.
pub async fn open_play(
    client: &mut PlayServiceClient<Channel>,
    meta_token: Option<&str>,
    first: Option<pb::PlayRequest>,
) -> Seat {
    let (tx, rx) = mpsc::channel(1024);
    if let Some(m) = first {
        tx.send(m).await.expect("send the first message");
    }
    let stream = ReceiverStream::new(rx);
    let req = match meta_token {
        Some(t) => with_bearer(stream, t),
        None => tonic::Request::new(stream),
    };
    let rx = client.play(req).await.expect("play").into_inner();
    Seat {
        tx,
        rx,
        log: Vec::new(),
    }
}

/// Generous clock: nothing in a test using it may time out or give up.
pub fn relaxed_clock() -> pb::TimeControl {
    pb::TimeControl {
        decision_ms: 60_000,
        bank_ms: 60_000,
        max_timeouts: 3,
        disconnect_grace_ms: 60_000,
        give_up: pb::GiveUpPolicy::Bot as i32,
        ..Default::default()
    }
}

/// A 2-seat classic match with `seed` and the relaxed clock.
pub async fn relaxed_classic_pair(
    matches: &mut MatchServiceClient<Channel>,
    seed: u64,
) -> pb::CreateMatchResponse {
    create_match(
        matches,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            seed: Some(seed),
            time_control: Some(relaxed_clock()),
            ..Default::default()
        },
    )
    .await
}

pub async fn create_match(
    matches: &mut MatchServiceClient<Channel>,
    req: pb::CreateMatchRequest,
) -> pb::CreateMatchResponse {
    matches
        .create_match(req)
        .await
        .expect("create")
        .into_inner()
}

/// A classic match of four seats with challenged calls, two rounds, seed 41: the match the
/// delivery tests play every seat of, so sloppy play opens challenge windows.
pub async fn four_seat_challenge_match(
    matches: &mut MatchServiceClient<Channel>,
) -> pb::CreateMatchResponse {
    let mut cfg = config(pb::Profile::Classic, 4);
    cfg.calls = pb::CallsMode::Challenge as i32;
    cfg.max_rounds = 2;
    create_match(
        matches,
        pb::CreateMatchRequest {
            config: Some(cfg),
            seed: Some(41),
            ..Default::default()
        },
    )
    .await
}

/// GetMatch's summary of a match.
pub async fn summary(matches: &mut MatchServiceClient<Channel>, id: &str) -> pb::MatchSummary {
    matches
        .get_match(pb::GetMatchRequest {
            match_id: id.to_string(),
        })
        .await
        .expect("get match")
        .into_inner()
        .r#match
        .expect("a summary")
}

/// The default action the server plays for a silent seat, by dense index: DRAW (192) if listed,
/// else PASS (193), else the first listed action.
pub fn default_index(prompt: &pb::DecisionPrompt) -> u32 {
    let listed = |i: u32| prompt.legal_actions.iter().any(|a| a.index == i);
    if listed(192) {
        192
    } else if listed(193) {
        193
    } else {
        prompt.legal_actions[0].index
    }
}

impl Seat {
    /// The next stream item within `limit`, error statuses included; `None` when the stream ended.
    pub async fn next_item_within(
        &mut self,
        limit: Duration,
    ) -> Option<Result<pb::ServerMessage, tonic::Status>> {
        let item = tokio::time::timeout(limit, self.rx.next())
            .await
            .expect("a server message in time")?;
        Some(item.map(|r| {
            let m = r.message.expect("a message");
            self.log.push(m.clone());
            m
        }))
    }

    /// The next stream item within 10 s, error statuses included; `None` when the stream ended.
    pub async fn next_item(&mut self) -> Option<Result<pb::ServerMessage, tonic::Status>> {
        self.next_item_within(Duration::from_secs(10)).await
    }

    /// The status the stream fails with next (skipping messages); panics if it ends cleanly.
    pub async fn next_error(&mut self) -> tonic::Status {
        loop {
            match self.next_item().await {
                Some(Ok(_)) => continue,
                Some(Err(status)) => return status,
                None => panic!("the stream ended without an error status"),
            }
        }
    }

    /// Reads until `pick` returns something for a message, and returns that.
    pub async fn until<T>(&mut self, mut pick: impl FnMut(&pb::ServerMessage) -> Option<T>) -> T {
        loop {
            match self.next_item().await {
                Some(Ok(m)) => {
                    if let Some(t) = pick(&m) {
                        return t;
                    }
                }
                Some(Err(status)) => panic!("the stream failed: {status:?}"),
                None => panic!("the stream ended"),
            }
        }
    }

    /// The next required prompt (skipping everything else).
    pub async fn required_prompt(&mut self) -> pb::DecisionPrompt {
        self.until(|m| match &m.kind {
            Some(pb::server_message::Kind::Prompt(p)) if p.required => Some(p.clone()),
            _ => None,
        })
        .await
    }

    /// Sends any message.
    pub async fn send(&self, m: pb::PlayRequest) {
        self.tx.send(m).await.expect("send");
    }

    /// Sends a submission.
    pub async fn submit(&self, s: pb::ActionSubmission) {
        self.send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Action(s)),
        })
        .await;
    }

    /// The next ActionAccepted or ActionRejected (skipping everything else).
    pub async fn verdict(&mut self) -> Result<pb::ActionAccepted, pb::ActionRejected> {
        self.until(|m| match &m.kind {
            Some(pb::server_message::Kind::Accepted(a)) => Some(Ok(*a)),
            Some(pb::server_message::Kind::Rejected(r)) => Some(Err(r.clone())),
            _ => None,
        })
        .await
    }

    /// Sends a Ping and reads up to its Pong: the server answers messages in order, so every
    /// reply to what was sent before has then been read. Returns the messages read before the Pong.
    pub async fn sync(&mut self, nonce: u64) -> Vec<pb::ServerMessage> {
        self.send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Ping(pb::Ping { nonce })),
        })
        .await;
        let mut seen = Vec::new();
        self.until(|m| match &m.kind {
            Some(pb::server_message::Kind::Pong(p)) if p.nonce == nonce => Some(()),
            _ => {
                seen.push(m.clone());
                None
            }
        })
        .await;
        seen
    }
}
