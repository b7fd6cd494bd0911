//! The game server as a host for other services in the same process (the ladder is one): they
//! create matches, await their end and abort them through [`Host`] and [`MatchHandle`], and plug
//! their own gRPC services, web pages and shutdown steps in through [`Extension`]. This is the
//! whole seam between the game server and what runs on it: an extension never sees a table, a
//! command channel or the registry.

use std::sync::Arc;

use maumau::pb;
use maumau_engine::MatchConfig;
use tonic::Status;
use tonic::codegen::http;

use crate::config::ServerConfig;
use crate::page::{BoxFuture, PageResponse};
use crate::registry::Registry;
use crate::table::{Handle, NewMatch};

/// The server's matches, for an extension: create, find, abort, and what is stored of them.
#[derive(Clone)]
pub struct Host {
    registry: Arc<Registry>,
}

/// A match an extension hosts: dealt from `seed` (and committed to before anyone plays), with the
/// server's default time control.
#[derive(Clone, Debug)]
pub struct HostedMatch {
    /// Profile and table size.
    pub config: MatchConfig,
    /// The deal's seed.
    pub seed: u64,
    /// One entry per seat: a built-in bot, or `None` for a seat that joins with its token.
    pub bots: Vec<Option<pb::BotKind>>,
    /// Whether the match is rated (shown to its seats).
    pub rated: bool,
    /// The match's label in listings (the ladder's: `ladder match N`).
    pub label: String,
    /// The players' names by seat, as the extension knows them (the ladder's bot names): shown
    /// for the seats instead of the names their programs join with. Empty: none.
    pub names: Vec<String>,
}

/// One match of the server, open or ended.
#[derive(Clone)]
pub struct MatchHandle {
    entry: Arc<Handle>,
}

impl Host {
    pub(crate) fn new(registry: Arc<Registry>) -> Host {
        Host { registry }
    }

    /// The server's configuration.
    pub fn config(&self) -> &ServerConfig {
        &self.registry.config
    }

    /// Deals the match and starts its table; returns the seats' tokens and the match.
    pub fn create(&self, m: HostedMatch) -> Result<(pb::CreateMatchResponse, MatchHandle), Status> {
        let (response, entry) = self.registry.create(NewMatch {
            config: m.config,
            seed: m.seed,
            start: None,
            clock: self.registry.config.default_time_control,
            bots: m.bots,
            rated: m.rated,
            label: m.label,
            join_timeout: None,
            sealed: false,
            names: m.names,
        })?;
        Ok((response, MatchHandle { entry }))
    }

    /// A match by id: an open one, or an ended one read back from the store.
    pub async fn find(&self, id: &str) -> Option<MatchHandle> {
        let entry = self.registry.get(id).await?;
        Some(MatchHandle { entry })
    }

    /// [`Host::find`] for a caller on a blocking thread.
    pub fn find_blocking(&self, id: &str) -> Option<MatchHandle> {
        let entry = self.registry.get_blocking(id)?;
        Some(MatchHandle { entry })
    }

    /// A match that is still open (`None` once it has ended and its record is stored).
    pub fn find_open(&self, id: &str) -> Option<MatchHandle> {
        let entry = self.registry.open_match(id)?;
        Some(MatchHandle { entry })
    }

    /// When a stored match ended (Unix ms) and whether its replay was pruned; `None` while it is
    /// open or its record is not committed yet. Blocking.
    pub fn stored_end(&self, id: &str) -> Option<(u64, bool)> {
        self.registry.stored_end(id)
    }

    /// Deletes a stored match's replay actions (keeping its report); returns the bytes freed, or
    /// `None` when there was nothing to prune or the write failed (logged). Blocking.
    pub fn prune_replay(&self, id: &str) -> Option<u64> {
        self.registry.prune_replay(id)
    }
}

impl MatchHandle {
    /// The match id.
    pub fn id(&self) -> &str {
        &self.entry.id
    }

    /// What `GetMatch` shows of it now.
    pub fn summary(&self) -> pb::MatchSummary {
        self.entry.summary()
    }

    /// The final report, once the match has ended and its record is stored.
    pub fn report(&self) -> Option<pb::MatchReport> {
        self.entry.report()
    }

    /// The replay, once the match has ended, unless it was pruned.
    pub fn replay(&self) -> Option<pb::Replay> {
        self.entry.replay()
    }

    /// Waits until the match's table has stopped; returns its final report (`None` when the
    /// record could not be stored because the server was torn down first).
    pub async fn ended(&self) -> Option<pb::MatchReport> {
        self.entry.ended().await
    }

    /// Aborts the match (unrated) with `reason` and waits until the table has taken the
    /// command; nothing happens to a match that has ended. Await [`MatchHandle::ended`] for
    /// its report.
    pub async fn abort(&self, reason: String) {
        self.entry.abort(reason).await;
    }

    /// Asks the table to abort the match without waiting (from code that cannot await).
    pub fn abort_soon(&self, reason: String) {
        self.entry.abort_soon(reason);
    }
}

/// A service that runs in the server's process beside the game services (the ladder is one): it
/// adds gRPC services, may answer plain web requests on the same port, and takes part in the
/// server's shutdown. Every method has a default that does nothing.
pub trait Extension: Send + Sync + 'static {
    /// Adds the extension's gRPC services (decoding messages of at most `max_message_bytes`).
    fn add_services(&self, routes: &mut tonic::service::RoutesBuilder, max_message_bytes: usize) {
        let _ = (routes, max_message_bytes);
    }

    /// The full names of the gRPC services [`Extension::add_services`] adds (such as
    /// `maumau.v1.LadderService`), so that server reflection lists them: it lists only the
    /// services that answer.
    fn service_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// Answers a plain `GET` or `HEAD` (one that is not gRPC) for `uri`, or `None` to leave it
    /// to the gRPC routes. `head` asks for the headers only.
    fn page(&self, uri: &http::Uri, head: bool) -> Option<BoxFuture<'static, PageResponse>> {
        let _ = (uri, head);
        None
    }

    /// Whether the extension can serve now (`true`), for the server's health: while it says
    /// `false` (a database it needs does not answer), `grpc.health.v1` reports the whole server
    /// and the extension's services NOT_SERVING. `None` (the default): the extension has no
    /// such dependency.
    fn health(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        None
    }

    /// The first step of the server's shutdown, while the open matches still play: stop
    /// starting new work and let what runs finish (within the extension's own deadline).
    fn drain(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// The server has aborted and recorded the matches left: close what still waits on them.
    fn matches_closed(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// The server has stopped serving: release files, locks and connections.
    fn release(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// The server's routes with web pages in front of them: a plain `GET` or `HEAD` (not gRPC) for
/// the play page (`crate::play_page`) or the match viewer's pages (`crate::viewer`) goes to it, one an extension answers to the
/// extension, everything else to the routes.
#[derive(Clone)]
pub(crate) struct WithPages<S> {
    extension: Option<Arc<dyn Extension>>,
    registry: Arc<Registry>,
    inner: S,
}

impl<S> WithPages<S> {
    pub(crate) fn new(
        extension: Option<Arc<dyn Extension>>,
        registry: Arc<Registry>,
        inner: S,
    ) -> WithPages<S> {
        WithPages {
            extension,
            registry,
            inner,
        }
    }
}

impl<S, B> tower::Service<http::Request<B>> for WithPages<S>
where
    S: tower::Service<http::Request<B>, Response = PageResponse, Error = std::convert::Infallible>,
{
    type Response = PageResponse;
    type Error = std::convert::Infallible;
    type Future = futures_util::future::Either<
        S::Future,
        BoxFuture<'static, Result<PageResponse, std::convert::Infallible>>,
    >;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), std::convert::Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        use futures_util::future::Either;
        if is_page_request(&req) {
            let head = req.method() == http::Method::HEAD;
            let bearer = req
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(|t| t.trim().to_string());
            // The play page and the viewer's pages first; `/` is the viewer's only when no
            // extension has pages.
            let root = self.extension.is_none();
            let page = crate::play_page::page(&self.registry, req.uri(), head)
                .or_else(|| crate::viewer::page(&self.registry, req.uri(), head, root, bearer))
                .or_else(|| self.extension.as_ref()?.page(req.uri(), head));
            if let Some(page) = page {
                return Either::Right(Box::pin(async move { Ok(page.await) }));
            }
        }
        Either::Left(self.inner.call(req))
    }
}

/// A `GET` or `HEAD` that is not gRPC.
fn is_page_request<B>(req: &http::Request<B>) -> bool {
    let grpc = req
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/grpc"));
    !grpc && (req.method() == http::Method::GET || req.method() == http::Method::HEAD)
}
