//! The gRPC proxy between the bot and the kit's server.
//!
//! The bot talks to the proxy as it would to a server: `PlayService` (Play, Watch,
//! SubmitAction, Resign) and `MatchService` are served on the proxy's own loopback port. Every call is
//! forwarded to the real server over one channel; on the way the proxy
//!
//! - maps the token the bot presents to the trial it belongs to (in launch mode the bot gets
//!   the server's own seat token; in connect mode one fixed kit token stands for whichever
//!   match is being played), in `Join.token`, `WatchRequest.token`, `SubmitActionRequest.token`
//!   or the `authorization: Bearer` metadata;
//! - shows every message to the trial's record ([`Trial::on_down`], [`Trial::on_action`]), which
//!   times the bot's decisions, and
//! - carries out the trial's tamper: forwards a rewritten action, holds one back, or cuts the
//!   bot's TCP connections (real sockets shut down, as when a network drops).

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::match_service_server::{MatchService, MatchServiceServer};
use maumau::pb::play_service_client::PlayServiceClient;
use maumau::pb::play_service_server::{PlayService, PlayServiceServer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tokio_stream::{Stream, StreamExt};
use tonic::transport::Channel;
use tonic::{Request, Response, Status, Streaming};

use crate::trial::{Route, Trial};
use maumau_server::sync::lock;

type Feed<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

/// The open TCP connections of the proxy, so that they can be cut.
#[derive(Default)]
struct Sockets(Mutex<Vec<std::net::TcpStream>>);

impl Sockets {
    /// Keeps a handle on a new connection and gives the stream back to the server.
    fn track(&self, stream: TcpStream) -> std::io::Result<TcpStream> {
        let std = stream.into_std()?;
        let handle = std.try_clone()?;
        let stream = TcpStream::from_std(std)?;
        stream.set_nodelay(true)?;
        let mut conns = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // Forget connections that are already closed.
        conns.retain(|c| c.peer_addr().is_ok());
        conns.push(handle);
        Ok(stream)
    }

    /// Shuts down every open connection in both directions.
    fn cut(&self) {
        let conns = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        for c in conns {
            let _ = c.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// Which trial a token belongs to.
#[derive(Default)]
struct Trials {
    by_token: Mutex<HashMap<String, Arc<Trial>>>,
    changed: tokio::sync::Notify,
}

/// The proxy's shared state (cheap to clone).
#[derive(Clone)]
pub(crate) struct Proxy {
    upstream: Channel,
    trials: Arc<Trials>,
    sockets: Arc<Sockets>,
    /// How long a connection with an unknown token waits for its trial (connect mode).
    wait_for_trial: Duration,
}

impl Proxy {
    /// Serves the proxy on `listener` until `shutdown` completes, forwarding to `upstream`.
    pub(crate) fn start(
        listener: TcpListener,
        upstream: Channel,
        wait_for_trial: Duration,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> Proxy {
        let proxy = Proxy {
            upstream,
            trials: Arc::default(),
            sockets: Arc::default(),
            wait_for_trial,
        };
        let sockets = proxy.sockets.clone();
        let incoming =
            TcpListenerStream::new(listener).map(move |c| c.and_then(|s| sockets.track(s)));
        let router = tonic::transport::Server::builder()
            .add_service(PlayServiceServer::new(proxy.clone()))
            .add_service(MatchServiceServer::new(proxy.clone()));
        tokio::spawn(async move {
            if let Err(e) = router
                .serve_with_incoming_shutdown(incoming, shutdown)
                .await
            {
                eprintln!("check-bot: the proxy stopped: {e}");
            }
        });
        proxy
    }

    /// Connections presenting `token` belong to `trial` from now on.
    pub(crate) fn register(&self, token: &str, trial: Arc<Trial>) {
        lock(&self.trials.by_token).insert(token.to_string(), trial);
        self.trials.changed.notify_waiters();
    }

    /// Forgets a token.
    pub(crate) fn unregister(&self, token: &str) {
        lock(&self.trials.by_token).remove(token);
    }

    /// Cuts every connection to the proxy (also how the kit closes them after each match: the
    /// proxy's handles would otherwise keep closed sockets half open).
    pub(crate) fn cut(&self) {
        self.sockets.cut();
    }

    /// The trial of a token; a token not (yet) registered waits a while for its trial (in
    /// connect mode the bot may come before the next match is ready).
    async fn trial(&self, token: &str) -> Option<Arc<Trial>> {
        let wait = async {
            loop {
                let changed = self.trials.changed.notified();
                if let Some(t) = lock(&self.trials.by_token).get(token) {
                    return t.clone();
                }
                changed.await;
            }
        };
        tokio::time::timeout(self.wait_for_trial, wait).await.ok()
    }

    /// The seat token to send upstream, and the trial, for a token the bot presented.
    async fn resolve(&self, presented: &str) -> (String, Option<Arc<Trial>>) {
        if presented.is_empty() {
            return (String::new(), None);
        }
        match self.trial(presented).await {
            Some(t) => (t.token.clone(), Some(t)),
            None => (presented.to_string(), None),
        }
    }

    /// Maps the token a call presented, in its message (`body`) or else in its metadata
    /// (`meta`), to the server's ([`Proxy::resolve`]): `body` is rewritten when it held the
    /// token; returns the trial and the token for the forwarded call's metadata, when the
    /// metadata held it.
    async fn map_token(
        &self,
        meta: Option<String>,
        body: &mut String,
    ) -> (Option<Arc<Trial>>, Option<String>) {
        let presented = if body.is_empty() {
            meta.clone().unwrap_or_default()
        } else {
            body.clone()
        };
        let (token, trial) = self.resolve(&presented).await;
        if !body.is_empty() {
            *body = token.clone();
        }
        (trial, meta.map(|_| token))
    }

    fn play_client(&self) -> PlayServiceClient<Channel> {
        PlayServiceClient::new(self.upstream.clone())
    }

    fn match_client(&self) -> MatchServiceClient<Channel> {
        MatchServiceClient::new(self.upstream.clone())
    }

    /// Runs one Play stream: the first message (a Join) picks the trial, then both directions
    /// are pumped until either side ends.
    async fn pump_play(
        self,
        bearer: Option<String>,
        mut inbound: Streaming<pb::PlayRequest>,
        down: mpsc::Sender<Result<pb::PlayResponse, Status>>,
    ) {
        let Ok(Some(mut first)) = inbound.message().await else {
            return;
        };
        let presented = match &first.kind {
            Some(pb::play_request::Kind::Join(j)) if !j.token.is_empty() => j.token.clone(),
            _ => bearer.clone().unwrap_or_default(),
        };
        let (token, trial) = self.resolve(&presented).await;
        if let Some(pb::play_request::Kind::Join(j)) = &mut first.kind {
            if !j.token.is_empty() {
                j.token = token.clone();
            }
            if let Some(t) = &trial {
                t.on_join(j.resume.as_ref());
            }
        }
        let _open = trial.as_ref().map(Trial::open_stream);
        let (up, up_rx) = mpsc::channel(256);
        let _ = up.send(first).await;
        let mut request = Request::new(ReceiverStream::new(up_rx));
        if bearer.is_some() {
            set_bearer(&mut request, &token);
        }
        let mut from_server = match self.play_client().play(request).await {
            Ok(r) => r.into_inner(),
            Err(s) => {
                let _ = down.send(Err(s)).await;
                return;
            }
        };
        // Owns `up`: when the bot's side ends, so does the server's request stream.
        let watched = trial.clone();
        let to_server = async move {
            loop {
                match inbound.message().await {
                    Ok(Some(m)) => {
                        let m = match (m.kind, &trial) {
                            (Some(pb::play_request::Kind::Action(a)), Some(t)) => {
                                match t.on_action(a) {
                                    Route::Forward(a) => action_request(a),
                                    Route::Hold(a, released) => {
                                        tokio::spawn(send_when_released(
                                            up.clone(),
                                            action_request(a),
                                            released,
                                        ));
                                        continue;
                                    }
                                    Route::Cut => {
                                        t.on_cut();
                                        self.cut();
                                        return false;
                                    }
                                }
                            }
                            (kind, _) => pb::PlayRequest { kind },
                        };
                        if up.send(m).await.is_err() {
                            return false;
                        }
                    }
                    // The bot closed its side: the server may still have something to say.
                    Ok(None) => return true,
                    Err(_) => return false,
                }
            }
        };
        // Owns `down`: when the server's side ends, so does the bot's stream.
        let from_server_to_bot = async move {
            while let Some(item) = from_server.next().await {
                if let (Ok(r), Some(t)) = (&item, &watched)
                    && let Some(m) = &r.message
                {
                    t.on_down(m);
                }
                if down.send(item).await.is_err() {
                    return;
                }
            }
        };
        tokio::pin!(from_server_to_bot);
        tokio::pin!(to_server);
        tokio::select! {
            keep_listening = &mut to_server => {
                if keep_listening {
                    from_server_to_bot.await;
                }
            }
            // The server is done; the stream stays open (for `Trial::streams_closed`) until the
            // bot has read the last of it and closed its side.
            () = &mut from_server_to_bot => {
                let _ = to_server.await;
            }
        }
    }
}

fn action_request(a: pb::ActionSubmission) -> pb::PlayRequest {
    pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Action(a)),
    }
}

/// Sends a held message once the trial releases it (or drops it after a minute).
async fn send_when_released<T>(
    up: mpsc::Sender<T>,
    message: T,
    mut released: watch::Receiver<bool>,
) {
    let wait = async { released.wait_for(|r| *r).await.is_ok() };
    if let Ok(true) = tokio::time::timeout(Duration::from_secs(60), wait).await {
        let _ = up.send(message).await;
    }
}

/// The token of `authorization: Bearer TOKEN`, if any.
fn bearer<T>(req: &Request<T>) -> Option<String> {
    let v = req.metadata().get("authorization")?.to_str().ok()?;
    v.strip_prefix("Bearer ").map(|t| t.trim().to_string())
}

fn set_bearer<T>(req: &mut Request<T>, token: &str) {
    if let Ok(v) = format!("Bearer {token}").parse() {
        req.metadata_mut().insert("authorization", v);
    }
}

#[tonic::async_trait]
impl PlayService for Proxy {
    type PlayStream = Feed<pb::PlayResponse>;
    type WatchStream = Feed<pb::WatchResponse>;

    async fn play(
        &self,
        req: Request<Streaming<pb::PlayRequest>>,
    ) -> Result<Response<Self::PlayStream>, Status> {
        let bearer = bearer(&req);
        let (down, rx) = mpsc::channel(1024);
        tokio::spawn(self.clone().pump_play(bearer, req.into_inner(), down));
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn watch(
        &self,
        req: Request<pb::WatchRequest>,
    ) -> Result<Response<Self::WatchStream>, Status> {
        let meta = bearer(&req);
        let mut w = req.into_inner();
        let (trial, meta) = self.map_token(meta, &mut w.token).await;
        if let Some(t) = &trial {
            t.on_join(w.resume.as_ref());
        }
        let mut request = Request::new(w);
        if let Some(token) = meta {
            set_bearer(&mut request, &token);
        }
        let feed = self.play_client().watch(request).await?.into_inner();
        let feed = feed.map(move |item| {
            if let (Ok(r), Some(t)) = (&item, &trial)
                && let Some(m) = &r.message
            {
                t.on_down(m);
            }
            item
        });
        Ok(Response::new(Box::pin(feed)))
    }

    async fn submit_action(
        &self,
        req: Request<pb::SubmitActionRequest>,
    ) -> Result<Response<pb::SubmitActionResponse>, Status> {
        let meta = bearer(&req);
        let mut s = req.into_inner();
        let (trial, meta) = self.map_token(meta, &mut s.token).await;
        if let (Some(t), Some(a)) = (&trial, s.action.take()) {
            match t.on_action(a) {
                Route::Forward(a) => s.action = Some(a),
                Route::Hold(a, mut released) => {
                    let wait = async { released.wait_for(|r| *r).await.is_ok() };
                    let _ = tokio::time::timeout(Duration::from_secs(60), wait).await;
                    s.action = Some(a);
                }
                Route::Cut => {
                    t.on_cut();
                    self.cut();
                    return Err(Status::unavailable("check-bot cut the connection"));
                }
            }
        }
        let mut request = Request::new(s);
        if let Some(token) = meta {
            set_bearer(&mut request, &token);
        }
        let response = self.play_client().submit_action(request).await?;
        if let Some(t) = &trial {
            t.on_unary_verdict(response.get_ref());
        }
        Ok(response)
    }

    /// Forwarded with the presented token mapped, as SubmitAction's.
    async fn resign(
        &self,
        req: Request<pb::ResignRequest>,
    ) -> Result<Response<pb::ResignResponse>, Status> {
        let meta = bearer(&req);
        let mut r = req.into_inner();
        let (_, meta) = self.map_token(meta, &mut r.token).await;
        let mut request = Request::new(r);
        if let Some(token) = meta {
            set_bearer(&mut request, &token);
        }
        self.play_client().resign(request).await
    }
}

/// A unary call to forward as it is, with its metadata.
fn forwarded<T>(req: Request<T>) -> Request<T> {
    let (meta, _, message) = req.into_parts();
    let mut request = Request::new(message);
    *request.metadata_mut() = meta;
    request
}

/// Every MatchService call is forwarded unchanged.
#[tonic::async_trait]
impl MatchService for Proxy {
    async fn create_match(
        &self,
        req: Request<pb::CreateMatchRequest>,
    ) -> Result<Response<pb::CreateMatchResponse>, Status> {
        self.match_client().create_match(forwarded(req)).await
    }

    async fn create_public_match(
        &self,
        req: Request<pb::CreatePublicMatchRequest>,
    ) -> Result<Response<pb::CreateMatchResponse>, Status> {
        self.match_client()
            .create_public_match(forwarded(req))
            .await
    }

    async fn abort_match(
        &self,
        req: Request<pb::AbortMatchRequest>,
    ) -> Result<Response<pb::AbortMatchResponse>, Status> {
        self.match_client().abort_match(forwarded(req)).await
    }

    async fn reveal_match(
        &self,
        req: Request<pb::RevealMatchRequest>,
    ) -> Result<Response<pb::RevealMatchResponse>, Status> {
        self.match_client().reveal_match(forwarded(req)).await
    }

    async fn list_matches(
        &self,
        req: Request<pb::ListMatchesRequest>,
    ) -> Result<Response<pb::ListMatchesResponse>, Status> {
        self.match_client().list_matches(forwarded(req)).await
    }

    async fn get_match(
        &self,
        req: Request<pb::GetMatchRequest>,
    ) -> Result<Response<pb::GetMatchResponse>, Status> {
        self.match_client().get_match(forwarded(req)).await
    }

    async fn get_result(
        &self,
        req: Request<pb::GetResultRequest>,
    ) -> Result<Response<pb::GetResultResponse>, Status> {
        self.match_client().get_result(forwarded(req)).await
    }

    async fn get_replay(
        &self,
        req: Request<pb::GetReplayRequest>,
    ) -> Result<Response<pb::GetReplayResponse>, Status> {
        self.match_client().get_replay(forwarded(req)).await
    }

    async fn verify_replay(
        &self,
        req: Request<pb::VerifyReplayRequest>,
    ) -> Result<Response<pb::VerifyReplayResponse>, Status> {
        self.match_client().verify_replay(forwarded(req)).await
    }
}
