//! The metrics port: a listener of its own (`maumau serve --metrics-listen ADDR`) that answers
//! `GET /metrics` with the installed recorder's text (see [`crate::metrics`] for what is
//! counted), and nothing else (404), under the main port's handshake and idle timeouts and a
//! connection cap of its own ([`MAX_CONNECTIONS`], or `max_connections` when lower). It runs on
//! a loop of its own, so a crowd on the main port does not keep a scraper out.

use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;

use tonic::codegen::http::{self, HeaderValue, StatusCode, header};

/// Connections the metrics listener holds at once at most: a scraper needs one or two.
pub const MAX_CONNECTIONS: usize = 16;

/// The text a scrape answers with (the Prometheus recorder's `render`).
pub type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// Serves `render()` as `GET /metrics` on `listener` until `shutdown` completes. Any other path
/// or method is answered 404. Connections get `config`'s handshake and idle timeouts, as on the
/// main port, and at most [`MAX_CONNECTIONS`] (or `config.max_connections`, if lower) are open
/// at once; more are closed as soon as they are accepted.
pub async fn serve(
    listener: tokio::net::TcpListener,
    config: &crate::ServerConfig,
    render: Render,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut limits = crate::transport::Limits::from_config(config);
    limits.max_connections = limits.max_connections.min(MAX_CONNECTIONS);
    crate::transport::serve(listener, Scrape(render), None, limits, shutdown).await
}

/// The metrics listener's one page.
#[derive(Clone)]
struct Scrape(Render);

impl<B> tower::Service<http::Request<B>> for Scrape {
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Self::Response, Infallible>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        let ok = req.method() == http::Method::GET && req.uri().path() == "/metrics";
        let (status, kind, body) = if ok {
            (
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                (self.0)(),
            )
        } else {
            (
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                "only GET /metrics is served here\n".to_string(),
            )
        };
        let mut response = http::Response::new(tonic::body::Body::new(http_body_util::Full::new(
            bytes::Bytes::from(body),
        )));
        *response.status_mut() = status;
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
        std::future::ready(Ok(response))
    }
}
