//! The play service: a seat's bidirectional stream, the one-way feed for clients that cannot
//! stream both ways (grpc-web), and unary actions.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use maumau::pb::play_service_server::PlayService;
use maumau::{pb, wire};
use maumau_engine::{Action, Seat};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_stream::{Stream, StreamExt, wrappers::ReceiverStream};
use tonic::{Request, Response, Status, Streaming};

use crate::registry::{MatchEntry, Registry};
use crate::table::{Command, Outbox, Role};

/// Messages a connection may have queued before it counts as too slow and is dropped (it can
/// resume from its last event number).
const OUTBOX: usize = 4096;

type Feed<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// The play service.
pub(crate) struct Play {
    pub(crate) registry: Arc<Registry>,
}

/// The token from `authorization: Bearer TOKEN`, if any.
pub(crate) fn bearer<T>(req: &Request<T>) -> Option<String> {
    let v = req.metadata().get("authorization")?.to_str().ok()?;
    v.strip_prefix("Bearer ").map(|t| t.trim().to_string())
}

/// Resolves the token of a request: from metadata or the message, which must agree.
fn resolve(
    registry: &Registry,
    meta: Option<&str>,
    body: &str,
) -> Result<(Arc<MatchEntry>, Role), Status> {
    let token = match (meta, body) {
        (Some(m), b) if !b.is_empty() && m != b => {
            return Err(wire::status(
                pb::ErrorReason::BadToken,
                "the token in the metadata and the one in the message differ",
            ));
        }
        (Some(m), _) => m,
        (None, b) => b,
    };
    if token.is_empty() {
        return Err(wire::status(
            pb::ErrorReason::BadToken,
            "no token: send `authorization: Bearer TOKEN` or set the token field",
        ));
    }
    registry
        .by_token(token)
        .ok_or_else(|| wire::status(pb::ErrorReason::BadToken, "unknown token"))
}

/// A token bucket: `rate` actions per second, bursts of twice that.
struct RateLimit {
    rate: f64,
    tokens: f64,
    at: Instant,
}

impl RateLimit {
    fn new(rate: u32) -> RateLimit {
        RateLimit {
            rate: rate as f64,
            tokens: 2.0 * rate as f64,
            at: Instant::now(),
        }
    }

    fn allow(&mut self) -> bool {
        let now = Instant::now();
        let dt = now.duration_since(self.at).as_secs_f64();
        self.at = now;
        self.tokens = (self.tokens + dt * self.rate).min(2.0 * self.rate);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

fn kind(k: pb::server_message::Kind) -> pb::ServerMessage {
    pb::ServerMessage { kind: Some(k) }
}

fn rejected(request_id: u64, reason: pb::ErrorReason, message: String) -> pb::ServerMessage {
    kind(pb::server_message::Kind::Rejected(pb::ActionRejected {
        request_id,
        reason: reason as i32,
        message,
        state_id: 0,
    }))
}

/// Attaches a connection to its table, or, when the match is over, sends the welcome and the
/// final report.
async fn attach(
    registry: &Registry,
    entry: &MatchEntry,
    role: Role,
    resume: Option<pb::Resume>,
    name: String,
    outbox: Outbox,
) -> u64 {
    let conn = registry.next_conn();
    if let Some(tx) = entry.sender() {
        let (attached, queued) = oneshot::channel();
        let cmd = Command::Attach {
            role,
            resume,
            name,
            outbox: outbox.clone(),
            conn,
            attached,
        };
        // Wait until the table has queued Welcome: nothing may overtake it.
        if tx.send(cmd).await.is_ok() && queued.await.is_ok() {
            return conn;
        }
    }
    let seat = match role {
        Role::Seat(s) => Some(s),
        Role::Spectator => None,
    };
    let _ = outbox
        .send(Ok(kind(pb::server_message::Kind::Welcome(
            entry.welcome(seat),
        ))))
        .await;
    if let Some(report) = entry.report() {
        let finished = pb::MatchFinished {
            report: Some(report),
        };
        let _ = outbox
            .send(Ok(kind(pb::server_message::Kind::Finished(finished))))
            .await;
    }
    conn
}

/// Sends an action to the table and waits for its verdict.
async fn submit(
    entry: &MatchEntry,
    seat: Seat,
    submission: &pb::ActionSubmission,
) -> Result<pb::ActionAccepted, pb::ActionRejected> {
    let reject = |reason: pb::ErrorReason, message: String| pb::ActionRejected {
        request_id: submission.request_id,
        reason: reason as i32,
        message,
        state_id: 0,
    };
    let action: Action =
        wire::action_from_submission(submission).map_err(|e| reject(e.reason(), e.to_string()))?;
    let Some(tx) = entry.sender() else {
        return Err(reject(
            pb::ErrorReason::MatchOver,
            "the match is over".into(),
        ));
    };
    let (reply, verdict) = oneshot::channel();
    let cmd = Command::Act {
        seat,
        state_id: submission.state_id,
        action,
        reply,
    };
    if tx.send(cmd).await.is_err() {
        return Err(reject(
            pb::ErrorReason::MatchOver,
            "the match is over".into(),
        ));
    }
    match verdict.await {
        Ok(Ok(state_id)) => Ok(pb::ActionAccepted {
            request_id: submission.request_id,
            state_id,
            action_index: action.index() as u32,
        }),
        Ok(Err((reason, message, state_id))) => Err(pb::ActionRejected {
            state_id,
            ..reject(reason, message)
        }),
        Err(_) => Err(reject(
            pb::ErrorReason::MatchOver,
            "the match is over".into(),
        )),
    }
}

/// The refusal of a request message the stream could not read (too large, not a PlayRequest).
fn unreadable(status: &Status) -> Status {
    wire::status(
        pb::ErrorReason::MalformedMessage,
        format!("cannot read the message: {}", status.message()),
    )
}

/// One Play stream: Join first, then actions and pings until the client goes away.
async fn session(
    registry: Arc<Registry>,
    meta_token: Option<String>,
    mut inbound: Streaming<pb::PlayRequest>,
    outbox: Outbox,
) {
    let first = tokio::time::timeout(Duration::from_secs(30), inbound.next()).await;
    let join = match first {
        Ok(Some(Ok(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Join(j)),
        }))) => j,
        Ok(Some(Ok(_))) => {
            let why = "the first message on a Play stream must be Join";
            let _ = outbox
                .send(Err(wire::status(pb::ErrorReason::NotJoined, why)))
                .await;
            return;
        }
        Ok(Some(Err(status))) => {
            let _ = outbox.send(Err(unreadable(&status))).await;
            return;
        }
        _ => return,
    };
    let (entry, role) = match resolve(&registry, meta_token.as_deref(), &join.token) {
        Ok(x) => x,
        Err(status) => {
            let _ = outbox.send(Err(status)).await;
            return;
        }
    };
    let Role::Seat(seat) = role else {
        let why = "the spectator token cannot play; use Watch";
        let _ = outbox
            .send(Err(wire::status(pb::ErrorReason::NotSeated, why)))
            .await;
        return;
    };
    // The table queues this connection's feed in `feed`; this task forwards it, with its own
    // answers in between. When the table lets go of the queue (after MatchFinished, or when it
    // drops a slow or superseded connection) the stream ends.
    let (feed_tx, mut feed) = mpsc::channel(OUTBOX);
    let mut conn = attach(
        &registry,
        &entry,
        role,
        join.resume,
        join.client_name.clone(),
        feed_tx,
    )
    .await;
    let mut limit = RateLimit::new(registry.config.actions_per_second);
    loop {
        let msg = tokio::select! {
            biased;
            m = feed.recv() => match m {
                Some(m) => {
                    if forward(&outbox, m).await {
                        continue;
                    }
                    break;
                }
                None => break,
            },
            msg = inbound.next() => match msg {
                Some(msg) => msg,
                None => break,
            },
        };
        let msg = match msg {
            Ok(msg) => msg,
            Err(status) => {
                let _ = outbox.send(Err(unreadable(&status))).await;
                break;
            }
        };
        let reply = match msg.kind {
            Some(pb::play_request::Kind::Action(a)) => {
                if !limit.allow() {
                    let why = "too many actions; slow down".to_string();
                    Some(rejected(a.request_id, pb::ErrorReason::RateLimited, why))
                } else {
                    Some(match submit(&entry, seat, &a).await {
                        Ok(ok) => kind(pb::server_message::Kind::Accepted(ok)),
                        Err(no) => kind(pb::server_message::Kind::Rejected(no)),
                    })
                }
            }
            Some(pb::play_request::Kind::Ping(p)) => {
                Some(kind(pb::server_message::Kind::Pong(pb::Pong {
                    nonce: p.nonce,
                    server_time_unix_ms: std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .unwrap_or_default()
                        .as_millis() as u64,
                })))
            }
            Some(pb::play_request::Kind::Resume(r)) => {
                detach(&entry, role, conn).await;
                let (feed_tx, rx) = mpsc::channel(OUTBOX);
                feed = rx;
                conn = attach(&registry, &entry, role, Some(r), String::new(), feed_tx).await;
                None
            }
            Some(pb::play_request::Kind::Join(_)) => Some(rejected(
                0,
                pb::ErrorReason::AlreadyJoined,
                "this stream has joined already; send Resume to restart the feed".into(),
            )),
            None => Some(rejected(
                0,
                pb::ErrorReason::MalformedMessage,
                "empty message".into(),
            )),
        };
        if let Some(m) = reply
            && !answer(&outbox, &mut feed, m).await
        {
            break;
        }
    }
    detach(&entry, role, conn).await;
}

type FeedQueue = mpsc::Receiver<Result<pb::ServerMessage, Status>>;

fn is_finished(m: &Result<pb::ServerMessage, Status>) -> bool {
    matches!(
        m,
        Ok(pb::ServerMessage {
            kind: Some(pb::server_message::Kind::Finished(_))
        })
    )
}

/// Forwards one message of a connection's feed; false when the stream is over (the client went
/// away, or the message was an error or MatchFinished, the last one).
async fn forward(outbox: &Outbox, m: Result<pb::ServerMessage, Status>) -> bool {
    let more = m.is_ok() && !is_finished(&m);
    outbox.send(m).await.is_ok() && more
}

/// Sends a connection's own answer after what the table has queued so far (the events of an
/// accepted action, say), but before MatchFinished; false when the stream is over.
async fn answer(outbox: &Outbox, feed: &mut FeedQueue, reply: pb::ServerMessage) -> bool {
    let mut last = None;
    while let Ok(m) = feed.try_recv() {
        if is_finished(&m) {
            last = Some(m);
            break;
        }
        if !forward(outbox, m).await {
            return false;
        }
    }
    if outbox.send(Ok(reply)).await.is_err() {
        return false;
    }
    match last {
        Some(m) => forward(outbox, m).await,
        None => true,
    }
}

async fn detach(entry: &MatchEntry, role: Role, conn: u64) {
    if let Some(tx) = entry.sender() {
        let _ = tx.send(Command::Detach { role, conn }).await;
    }
}

fn feed<T: Send + 'static>(
    rx: mpsc::Receiver<Result<pb::ServerMessage, Status>>,
    wrap: fn(pb::ServerMessage) -> T,
) -> Feed<T> {
    Box::pin(ReceiverStream::new(rx).map(move |m| m.map(wrap)))
}

#[tonic::async_trait]
impl PlayService for Play {
    type PlayStream = Feed<pb::PlayResponse>;
    type WatchStream = Feed<pb::WatchResponse>;

    async fn play(
        &self,
        req: Request<Streaming<pb::PlayRequest>>,
    ) -> Result<Response<Self::PlayStream>, Status> {
        let token = bearer(&req);
        let (tx, rx) = mpsc::channel(OUTBOX);
        tokio::spawn(session(self.registry.clone(), token, req.into_inner(), tx));
        Ok(Response::new(feed(rx, |m| pb::PlayResponse {
            message: Some(m),
        })))
    }

    async fn watch(
        &self,
        req: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let token = bearer(&req);
        let w = req.into_inner();
        let (entry, role) = resolve(&self.registry, token.as_deref(), &w.token)?;
        let (tx, rx) = mpsc::channel(OUTBOX);
        let (feed_tx, mut queue) = mpsc::channel(OUTBOX);
        let conn = attach(
            &self.registry,
            &entry,
            role,
            w.resume,
            w.client_name,
            feed_tx,
        )
        .await;
        // Forward the table's feed until MatchFinished (or until the table lets go of this
        // connection), then end the stream; detach as soon as the client goes away.
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    m = queue.recv() => match m {
                        Some(m) => {
                            if !forward(&tx, m).await {
                                break;
                            }
                        }
                        None => break,
                    },
                    () = tx.closed() => break,
                }
            }
            drop(tx);
            detach(&entry, role, conn).await;
        });
        Ok(Response::new(feed(rx, |m| pb::WatchResponse {
            message: Some(m),
        })))
    }

    async fn submit_action(
        &self,
        req: Request<pb::SubmitActionRequest>,
    ) -> Result<Response<pb::SubmitActionResponse>, Status> {
        let token = bearer(&req);
        let r = req.into_inner();
        let (entry, role) = resolve(&self.registry, token.as_deref(), &r.token)?;
        let Role::Seat(seat) = role else {
            return Err(wire::status(
                pb::ErrorReason::NotSeated,
                "the spectator token cannot act",
            ));
        };
        let submission = r
            .action
            .ok_or_else(|| wire::status(pb::ErrorReason::MalformedMessage, "no action"))?;
        let result = match submit(&entry, seat, &submission).await {
            Ok(a) => pb::submit_action_response::Result::Accepted(a),
            Err(r) => pb::submit_action_response::Result::Rejected(r),
        };
        Ok(Response::new(pb::SubmitActionResponse {
            result: Some(result),
        }))
    }
}
