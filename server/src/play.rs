//! The play service: a seat's bidirectional stream, the one-way feed for clients that cannot
//! stream both ways (grpc-web), and unary actions.
//!
//! A Play stream is read here until its Join names a seat; then the stream goes to the seat's
//! table, which reads it from there on. Every stream's answers come from its [`Feed`], the
//! reading end of the queue the table writes to.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use maumau::encoded::play_service_server::PlayService;
use maumau::{encoded, pb, wire};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status, Streaming};

use crate::frames::{Frame, Staged};
use crate::outbox::{Inbox, Out, Outbox, outbox};
use crate::registry::{MatchEntry, Registry};
use crate::table::{Command, Delivery, FeedOptions, Reply, Role, Verdict, drain, unreadable};
use crate::transport::Home;

/// Steps of the table (each a batch of messages) a connection may have queued before it counts
/// as too slow and is dropped (it can resume from its last event number).
const OUTBOX: usize = 1024;

/// The play service.
pub(crate) struct Play {
    pub(crate) registry: Arc<Registry>,
}

/// The token from `authorization: Bearer TOKEN`, if any.
pub fn bearer<T>(req: &Request<T>) -> Option<String> {
    let v = req.metadata().get("authorization")?.to_str().ok()?;
    v.strip_prefix("Bearer ").map(|t| t.trim().to_string())
}

/// Whether `req` carries `authorization: Bearer <token>` with the operator's `token`. An empty
/// (or whitespace) token on either side never matches.
pub fn operator_bearer<T>(req: &Request<T>, token: &str) -> bool {
    let token = token.trim();
    !token.is_empty() && bearer(req).as_deref() == Some(token)
}

/// Resolves the token of a request: from metadata or the message, which must agree.
async fn resolve(
    registry: &Arc<Registry>,
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
        if let Some(home) = Home::current() {
            home.store_look();
        }
        return Err(wire::status(
            pb::ErrorReason::BadToken,
            "no token: send `authorization: Bearer TOKEN` or set the token field",
        ));
    }
    if let Some(found) = registry.open_by_token(token) {
        return Ok(found);
    }
    // Not an open match's token: a finished match's, or none. Looking in the store costs the
    // server a task on the blocking pool, so the connection pays for the look first; one that
    // keeps sending such tokens is closed (see `Home::store_look`).
    if Home::current().is_some_and(|home| !home.store_look()) {
        return Err(wire::status(
            pb::ErrorReason::RateLimited,
            "too many tokens of finished or unknown matches on this connection; slow down",
        ));
    }
    registry
        .stored_by_token(token)
        .await
        .ok_or_else(|| wire::status(pb::ErrorReason::BadToken, "unknown token"))
}

/// A token bucket: `rate` calls per second, bursts of twice that (or, [`RateLimit::per_minute`],
/// `n` calls per minute, `n` at once).
pub struct RateLimit {
    rate: f64,
    burst: f64,
    tokens: f64,
    at: Instant,
}

impl RateLimit {
    /// `rate` calls per second, bursts of twice that.
    pub fn new(rate: u32) -> RateLimit {
        RateLimit::with(rate as f64, 2.0 * rate as f64)
    }

    /// `n` calls per minute, at most `n` at once.
    pub fn per_minute(n: u32) -> RateLimit {
        RateLimit::with(n as f64 / 60.0, n as f64)
    }

    fn with(rate: f64, burst: f64) -> RateLimit {
        RateLimit {
            rate,
            burst,
            tokens: burst,
            at: Instant::now(),
        }
    }

    /// Whether the bucket has refilled to its burst (it then holds no memory of past calls).
    pub fn is_full(&self) -> bool {
        let dt = Instant::now().duration_since(self.at).as_secs_f64();
        self.tokens + dt * self.rate >= self.burst
    }

    /// Takes one call from the bucket; false when it is empty (the call is refused).
    pub fn allow(&mut self) -> bool {
        let now = Instant::now();
        let dt = now.duration_since(self.at).as_secs_f64();
        self.at = now;
        self.tokens = (self.tokens + dt * self.rate).min(self.burst);
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

/// Attaches a connection to its table, or, when the match is over, sends the welcome and the
/// final report. Returns once Welcome is queued. With `inbound`, the table reads the seat's Play
/// stream from then on; it comes back when the table is gone.
#[allow(clippy::too_many_arguments)]
async fn attach(
    entry: &MatchEntry,
    role: Role,
    resume: Option<pb::Resume>,
    name: String,
    options: FeedOptions,
    outbox: Outbox,
    conn: u64,
    mut inbound: Option<Box<Streaming<pb::PlayRequest>>>,
) -> Option<Box<Streaming<pb::PlayRequest>>> {
    if let Some(tx) = entry.sender() {
        let (attached, queued) = oneshot::channel();
        let cmd = Command::Attach {
            role,
            resume,
            name,
            options,
            outbox: outbox.clone(),
            conn,
            inbound,
            attached,
        };
        match tx.send(cmd).await {
            Ok(()) => {
                if queued.await.is_ok() {
                    return None;
                }
                // The table ended before it read the command: the stream went with it.
                inbound = None;
            }
            Err(mpsc::error::SendError(cmd)) => {
                inbound = match cmd {
                    Command::Attach { inbound, .. } => inbound,
                    _ => None,
                };
            }
        }
    }
    let seat = match role {
        Role::Seat(s) => Some(s),
        Role::Spectator => None,
    };
    let mut batch = vec![kind(pb::server_message::Kind::Welcome(entry.welcome(seat)))];
    if let Some(report) = entry.public_report() {
        batch.push(kind(pb::server_message::Kind::Finished(
            pb::MatchFinished {
                report: Some(report),
            },
        )));
    }
    let frames = batch.into_iter().map(|m| Staged::Message(m).encode());
    outbox.send(Out::Frames(frames.collect()));
    inbound
}

/// One Play stream until it has joined: Join first, then the table reads the stream.
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
            outbox.send(Out::End(wire::status(pb::ErrorReason::NotJoined, why)));
            return;
        }
        Ok(Some(Err(status))) => {
            outbox.send(Out::End(unreadable(&status)));
            return;
        }
        _ => return,
    };
    let (entry, role) = match resolve(&registry, meta_token.as_deref(), &join.token).await {
        Ok(x) => x,
        Err(status) => {
            outbox.send(Out::End(status));
            return;
        }
    };
    if role == Role::Spectator {
        let why = "the spectator token cannot play; use Watch";
        outbox.send(Out::End(wire::status(pb::ErrorReason::NotSeated, why)));
        return;
    }
    let Some(delivery) = Delivery::from_wire(join.event_delivery) else {
        let why = format!(
            "unknown event_delivery {}; use EVENT_DELIVERY_WITH_PROMPT, \
             EVENT_DELIVERY_PER_STEP or EVENT_DELIVERY_AS_THEY_HAPPEN",
            join.event_delivery
        );
        outbox.send(Out::End(wire::status(
            pb::ErrorReason::InvalidArgument,
            why,
        )));
        return;
    };
    let conn = registry.next_conn();
    let name = join.client_name;
    let options = FeedOptions {
        delivery,
        snapshots: join.snapshot_every_step,
    };
    let left = attach(
        &entry,
        role,
        join.resume,
        name,
        options,
        outbox,
        conn,
        Some(Box::new(inbound)),
    )
    .await;
    // The match is over: the stream carried Welcome and the report; the rest is not read.
    if let Some(rest) = left {
        drain(rest).await;
    }
}

/// A connection's outgoing queue as seen from the stream: it yields the messages the table (and
/// the connection itself) queued, one by one, and ends after MatchFinished, after an error, or
/// when the table lets go of the queue. A stream silent for the heartbeat interval yields a
/// `Heartbeat`.
///
/// Its items are encoded already ([`encoded::Response`]: the same bytes for a Play stream and a
/// Watch stream).
pub(crate) struct Feed {
    rx: Inbox,
    batch: std::vec::IntoIter<Frame>,
    done: bool,
    /// For a Watch stream: the table to tell when the client goes away.
    detach: Option<(Arc<MatchEntry>, Role, u64)>,
    heartbeat: Option<Heartbeat>,
    /// Counts the stream in `maumau_streams_open` while it lives.
    _open: crate::metrics::Open,
}

impl Feed {
    fn new(rx: Inbox, heartbeat: Option<Duration>) -> Feed {
        Feed {
            rx,
            batch: Vec::new().into_iter(),
            done: false,
            detach: None,
            heartbeat: heartbeat.map(Heartbeat::new),
            _open: crate::metrics::Open::stream(),
        }
    }
}

/// A stream's heartbeat: a `Heartbeat` message once the stream has been silent for at least
/// `interval` (and at most one and a half times it).
///
/// Nothing is done per message sent but setting `active`, and nothing when the stream runs dry
/// but a look at the timer: the timer ticks every half interval, and a tick that finds the
/// stream was not active since the tick before it (so silent for a whole interval) sends the
/// heartbeat. No clock is read and no timer moved on the path of a decision.
struct Heartbeat {
    /// Half the interval.
    tick: Duration,
    timer: Pin<Box<tokio::time::Sleep>>,
    /// Whether the timer was polled since it was last set, so it will wake the stream.
    armed: bool,
    /// Whether the stream sent something since the last tick.
    active: bool,
    /// Ticks since the stream last sent something.
    quiet_ticks: u8,
}

impl Heartbeat {
    fn new(interval: Duration) -> Heartbeat {
        let tick = interval / 2;
        Heartbeat {
            tick,
            timer: Box::pin(tokio::time::sleep(tick)),
            armed: false,
            active: false,
            quiet_ticks: 0,
        }
    }

    /// Called when the stream has nothing to send: the heartbeat's frame if the stream has been
    /// silent for the interval, else `None` (the timer will wake the stream).
    fn poll_due(&mut self, cx: &mut Context<'_>) -> Option<encoded::Response> {
        loop {
            if !self.armed {
                if std::future::Future::poll(self.timer.as_mut(), cx).is_pending() {
                    self.armed = true;
                    return None;
                }
            } else if !self.timer.is_elapsed() {
                return None;
            }
            let next = self.timer.deadline() + self.tick;
            self.timer.as_mut().reset(next);
            self.armed = false;
            if std::mem::take(&mut self.active) {
                self.quiet_ticks = 0;
                continue;
            }
            self.quiet_ticks += 1;
            if self.quiet_ticks >= 2 {
                self.quiet_ticks = 0;
                let beat = pb::Heartbeat {
                    server_time_unix_ms: crate::registry::now_ms(),
                };
                return Some(encoded::Response::new(&kind(
                    pb::server_message::Kind::Heartbeat(beat),
                )));
            }
        }
    }
}

impl Stream for Feed {
    type Item = Result<encoded::Response, Status>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            if let Some(f) = this.batch.next() {
                this.done = f.last;
                if let Some(h) = &mut this.heartbeat {
                    h.active = true;
                }
                return Poll::Ready(Some(Ok(f.response)));
            }
            let next = match this.rx.poll_next(cx) {
                Poll::Ready(next) => next,
                Poll::Pending => {
                    let beat = this.heartbeat.as_mut().and_then(|h| h.poll_due(cx));
                    return match beat {
                        Some(frame) => Poll::Ready(Some(Ok(frame))),
                        None => Poll::Pending,
                    };
                }
            };
            match next {
                Some(Out::Frames(batch)) => this.batch = batch.into_iter(),
                Some(Out::End(status)) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(status)));
                }
                None => {
                    this.done = true;
                    return Poll::Ready(None);
                }
            }
        }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        let Some((entry, role, conn)) = self.detach.take() else {
            return;
        };
        let Some(tx) = entry.sender() else { return };
        if let Err(mpsc::error::TrySendError::Full(cmd)) =
            tx.try_send(Command::Detach { role, conn })
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(async move {
                let _ = tx.send(cmd).await;
            });
        }
    }
}

#[tonic::async_trait]
impl PlayService for Play {
    type PlayStream = Feed;
    type WatchStream = Feed;

    async fn play(
        &self,
        req: Request<Streaming<pb::PlayRequest>>,
    ) -> Result<Response<Self::PlayStream>, Status> {
        let token = bearer(&req);
        let (tx, rx) = outbox(OUTBOX, Home::current());
        tokio::spawn(session(self.registry.clone(), token, req.into_inner(), tx));
        let heartbeat = self.registry.config.heartbeat_interval;
        Ok(Response::new(Feed::new(rx, heartbeat)))
    }

    async fn watch(
        &self,
        req: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let token = bearer(&req);
        let w = req.into_inner();
        let (entry, role) = resolve(&self.registry, token.as_deref(), &w.token).await?;
        let (tx, rx) = outbox(OUTBOX, Home::current());
        let conn = self.registry.next_conn();
        let (resume, name) = (w.resume, w.client_name);
        let options = FeedOptions {
            delivery: Delivery::AsTheyHappen,
            snapshots: w.snapshot_every_step,
        };
        attach(&entry, role, resume, name, options, tx, conn, None).await;
        let mut feed = Feed::new(rx, self.registry.config.heartbeat_interval);
        // The stream is the only sign that the client went away: dropping it detaches.
        feed.detach = Some((entry, role, conn));
        Ok(Response::new(feed))
    }

    async fn submit_action(
        &self,
        req: Request<pb::SubmitActionRequest>,
    ) -> Result<Response<pb::SubmitActionResponse>, Status> {
        let token = bearer(&req);
        let r = req.into_inner();
        // The connection's budget first: a flood is refused before its token is even looked up.
        if Home::current().is_some_and(|home| !home.allow_call()) {
            return Ok(Response::new(pb::SubmitActionResponse {
                result: Some(pb::submit_action_response::Result::Rejected(
                    pb::ActionRejected {
                        request_id: r.action.as_ref().map_or(0, |a| a.request_id),
                        reason: pb::ErrorReason::RateLimited as i32,
                        message: "too many SubmitAction calls on this connection; slow down".into(),
                        state_id: 0,
                    },
                )),
            }));
        }
        let (entry, role) = resolve(&self.registry, token.as_deref(), &r.token).await?;
        let Role::Seat(seat) = role else {
            return Err(wire::status(
                pb::ErrorReason::NotSeated,
                "the spectator token cannot act",
            ));
        };
        let Some(submission) = r.action else {
            // Counted like every refusal of the seat's messages, then answered as a failed call.
            let (reason, why) = (pb::ErrorReason::MalformedMessage, "no action");
            let _ = verdict(&entry, |reply| Command::Refuse {
                seat,
                request_id: 0,
                reason,
                message: why.into(),
                reply,
            })
            .await;
            return Err(wire::status(reason, why));
        };
        let request_id = submission.request_id;
        let result = match wire::action_from_submission(&submission) {
            Ok(action) => {
                verdict(&entry, |reply| Command::Act {
                    seat,
                    state_id: submission.state_id,
                    action,
                    request_id,
                    reply,
                })
                .await
            }
            Err(e) => {
                let (reason, message) = (e.reason(), e.to_string());
                verdict(&entry, |reply| Command::Refuse {
                    seat,
                    request_id,
                    reason,
                    message,
                    reply,
                })
                .await
            }
        };
        let result = match result {
            Some(Ok(a)) => pb::submit_action_response::Result::Accepted(a),
            Some(Err(r)) => pb::submit_action_response::Result::Rejected(r),
            None => pb::submit_action_response::Result::Rejected(pb::ActionRejected {
                request_id,
                reason: pb::ErrorReason::MatchOver as i32,
                message: "the match is over".into(),
                state_id: 0,
            }),
        };
        Ok(Response::new(pb::SubmitActionResponse {
            result: Some(result),
        }))
    }
}

/// Sends a unary call's command to the table and waits for its verdict; `None` when the match is
/// over.
async fn verdict(entry: &MatchEntry, command: impl FnOnce(Reply) -> Command) -> Option<Verdict> {
    let tx = entry.sender()?;
    let (reply, verdict) = oneshot::channel();
    tx.send(command(Reply::Unary(reply))).await.ok()?;
    verdict.await.ok()
}
