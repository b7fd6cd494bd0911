//! The play service: a seat's bidirectional stream, the one-way feed for clients that cannot
//! stream both ways (grpc-web), and unary actions.
//!
//! A Play stream is read here until its Join names a seat; then the stream goes to the seat's
//! table, which reads it from there on. Every stream's answers come from its
//! [`Outgoing`] stream, the reading end of the queue the table writes to.

use std::sync::Arc;
use std::time::Duration;

use maumau::encoded::{self, play_service_server::PlayService};
use maumau::{pb, wire};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::StreamExt;
use tonic::{Request, Response, Status, Streaming};

use crate::frames::Staged;
use crate::outbox::{Out, Outbox, outbox};
use crate::registry::Registry;
use crate::table::{
    Attach, Command, Delivery, FeedOptions, Handle, Outgoing, Reply, Role, Verdict, drain, message,
    unreadable,
};
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
) -> Result<(Arc<Handle>, Role), Status> {
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

/// Attaches a connection to its table, or, when the match is over, sends the welcome and the
/// final report. Returns once Welcome is queued. With `inbound`, the table reads the seat's Play
/// stream from then on; it comes back when the table is gone.
async fn attach(entry: &Handle, a: Attach) -> Option<Box<Streaming<encoded::Request>>> {
    let (role, outbox) = (a.role, a.outbox.clone());
    let inbound = match entry.sender() {
        Some(tx) => {
            let (attached, queued) = oneshot::channel();
            match tx
                .send(Command::Attach {
                    attach: a,
                    attached,
                })
                .await
            {
                Ok(()) if queued.await.is_ok() => return None,
                // The table ended before it read the command: the stream went with it.
                Ok(()) => None,
                Err(mpsc::error::SendError(cmd)) => match cmd {
                    Command::Attach { attach, .. } => attach.inbound,
                    _ => None,
                },
            }
        }
        None => a.inbound,
    };
    let seat = match role {
        Role::Seat(s) => Some(s),
        Role::Spectator => None,
    };
    let mut batch = vec![message(pb::server_message::Kind::Welcome(
        entry.welcome(seat),
    ))];
    if let Some(report) = entry.public_report() {
        batch.push(message(pb::server_message::Kind::Finished(
            pb::MatchFinished {
                report: Some(report),
            },
        )));
    }
    let frames = batch.into_iter().map(|m| Staged::message(m).encode());
    outbox.send(Out::Frames(frames.collect()));
    inbound
}

/// One Play stream until it has joined: Join first, then the table reads the stream.
async fn session(
    registry: Arc<Registry>,
    meta_token: Option<String>,
    mut inbound: Streaming<encoded::Request>,
    outbox: Outbox,
) {
    let first = tokio::time::timeout(Duration::from_secs(30), inbound.next()).await;
    let join = match first {
        Ok(Some(Ok(encoded::Request(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Join(j)),
        })))) => j,
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
    let joined = Attach {
        role,
        resume: join.resume,
        name,
        options,
        outbox,
        conn,
        inbound: Some(Box::new(inbound)),
    };
    let left = attach(&entry, joined).await;
    // The match is over: the stream carried Welcome and the report; the rest is not read.
    if let Some(rest) = left {
        drain(rest).await;
    }
}

#[tonic::async_trait]
impl PlayService for Play {
    type PlayStream = Outgoing;
    type WatchStream = Outgoing;

    async fn play(
        &self,
        req: Request<Streaming<encoded::Request>>,
    ) -> Result<Response<Self::PlayStream>, Status> {
        let token = bearer(&req);
        let (tx, rx) = outbox(OUTBOX, Home::current());
        tokio::spawn(session(self.registry.clone(), token, req.into_inner(), tx));
        let heartbeat = self.registry.config.heartbeat_interval;
        Ok(Response::new(Outgoing::new(rx, heartbeat)))
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
        let watching = Attach {
            role,
            resume,
            name,
            options,
            outbox: tx,
            conn,
            inbound: None,
        };
        attach(&entry, watching).await;
        let stream = Outgoing::new(rx, self.registry.config.heartbeat_interval);
        Ok(Response::new(stream.detach_when_dropped(entry, role, conn)))
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

    async fn resign(
        &self,
        req: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::ResignResponse>, Status> {
        let token = bearer(&req);
        let r = req.into_inner();
        if Home::current().is_some_and(|home| !home.allow_call()) {
            return Err(wire::status(
                pb::ErrorReason::RateLimited,
                "too many calls on this connection; slow down",
            ));
        }
        let (entry, role) = resolve(&self.registry, token.as_deref(), &r.token).await?;
        let Role::Seat(seat) = role else {
            return Err(wire::status(
                pb::ErrorReason::NotSeated,
                "the spectator token cannot resign",
            ));
        };
        let over = || wire::status(pb::ErrorReason::MatchOver, "the match is over");
        let tx = entry.sender().ok_or_else(over)?;
        let (reply, resigned) = oneshot::channel();
        tx.send(Command::Resign { seat, reply })
            .await
            .map_err(|_| over())?;
        let resigned = resigned.await.map_err(|_| over())?;
        Ok(Response::new(pb::ResignResponse { resigned }))
    }
}

/// Sends a unary call's command to the table and waits for its verdict; `None` when the match is
/// over.
async fn verdict(entry: &Handle, command: impl FnOnce(Reply) -> Command) -> Option<Verdict> {
    let tx = entry.sender()?;
    let (reply, verdict) = oneshot::channel();
    tx.send(command(Reply::Unary(reply))).await.ok()?;
    verdict.await.ok()
}
