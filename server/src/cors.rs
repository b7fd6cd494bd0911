//! Cross-origin requests from web pages (`ServerConfig::allow_origins`, `maumau serve
//! --allow-origin`): a page served from another origin may call the gRPC-web services and read
//! the viewer's JSON. The headers come from tower-http's CORS layer; this module only says which
//! origins, methods and headers, so the rules live in one place, and hands the layer only the
//! requests of a listed origin: a request from any other origin (or none) gets no CORS header at
//! all, and a preflight from it is answered as if there were no CORS (refused).
//!
//! No credentials are ever allowed (no cookies are used: a seat's token travels in the
//! `authorization` header a page sets itself), so `*` is safe to offer: it lets any page call
//! the server with a token it holds, and no page act for a visitor without one.

use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::future::Either;
use tonic::codegen::http::{self, HeaderName, HeaderValue, Method, header};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// The request headers a grpc-web client sends (Connect-ES and grpc-web's own client), and the
/// bearer token.
const ALLOW_HEADERS: [&str; 6] = [
    "content-type",
    "x-grpc-web",
    "x-user-agent",
    "grpc-timeout",
    "authorization",
    "connect-protocol-version",
];

/// The response headers (and trailers, which grpc-web sends as headers when a call fails at
/// once) a page's script may read: the status, its message and the typed reason.
const EXPOSE_HEADERS: [&str; 4] = [
    "grpc-status",
    "grpc-message",
    "grpc-status-details-bin",
    maumau::wire::REASON_TRAILER,
];

/// How long a browser may keep a preflight's answer.
const MAX_AGE: Duration = Duration::from_secs(600);

/// The origins a server answers cross-origin requests from.
#[derive(Clone, Debug)]
pub(crate) enum Origins {
    /// None: no request gets CORS headers.
    None,
    /// Every origin (`*`).
    Any,
    /// These, exactly as browsers send them.
    List(Vec<HeaderValue>),
}

impl Origins {
    /// `origins` checked (each `scheme://host[:port]`, or `*` alone for any), or why one cannot
    /// be used.
    pub(crate) fn parse(origins: &[String]) -> Result<Origins, String> {
        if origins.is_empty() {
            return Ok(Origins::None);
        }
        if origins.iter().any(|o| o == "*") {
            if origins.len() > 1 {
                return Err("allow_origins: `*` allows every origin; give it alone".into());
            }
            return Ok(Origins::Any);
        }
        origins
            .iter()
            .map(|o| origin(o))
            .collect::<Result<Vec<_>, _>>()
            .map(Origins::List)
    }

    /// Whether a request with this `Origin` header gets CORS headers.
    fn allows(&self, origin: Option<&HeaderValue>) -> bool {
        match (self, origin) {
            (Origins::None, _) | (_, None) => false,
            (Origins::Any, Some(_)) => true,
            (Origins::List(list), Some(o)) => list.contains(o),
        }
    }
}

/// `inner` with CORS for `origins`: requests of a listed origin go through tower-http's CORS
/// layer, every other request straight to `inner`.
pub(crate) fn wrap<S: Clone>(origins: Origins, inner: S) -> Cors<S> {
    let allow = match &origins {
        Origins::Any => AllowOrigin::any(),
        Origins::List(list) => AllowOrigin::list(list.clone()),
        Origins::None => AllowOrigin::list([]),
    };
    let layer = CorsLayer::new()
        .allow_origin(allow)
        .allow_methods([Method::GET, Method::HEAD, Method::POST, Method::OPTIONS])
        .allow_headers(ALLOW_HEADERS.map(HeaderName::from_static))
        .expose_headers(EXPOSE_HEADERS.map(HeaderName::from_static))
        .max_age(MAX_AGE)
        .vary([header::ORIGIN]);
    Cors {
        with: tower::Layer::layer(&layer, inner.clone()),
        without: inner,
        origins,
    }
}

/// A service with CORS for some origins (see [`wrap`]).
#[derive(Clone)]
pub(crate) struct Cors<S> {
    origins: Origins,
    with: tower_http::cors::Cors<S>,
    without: S,
}

impl<S, B, R> tower::Service<http::Request<B>> for Cors<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    R: Default,
{
    type Response = http::Response<R>;
    type Error = S::Error;
    type Future = Either<tower_http::cors::ResponseFuture<S::Future>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        // Both are the same service, always ready (tonic's routes and the viewer's pages).
        std::task::ready!(self.with.poll_ready(cx))?;
        self.without.poll_ready(cx)
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        if self.origins.allows(req.headers().get(header::ORIGIN)) {
            Either::Left(self.with.call(req))
        } else {
            Either::Right(self.without.call(req))
        }
    }
}

/// One origin as a browser sends it in `Origin`: a scheme, a host and maybe a port, with no path,
/// query or trailing slash.
fn origin(o: &str) -> Result<HeaderValue, String> {
    let bad = |why: &str| {
        Err(format!(
            "allow_origins: {o:?} is not an origin ({why}); write it as a browser sends it, \
             e.g. https://example.com or http://127.0.0.1:8080"
        ))
    };
    let Some((scheme, rest)) = o.split_once("://") else {
        return bad("no scheme");
    };
    if scheme != "http" && scheme != "https" {
        return bad("the scheme must be http or https");
    }
    if rest.is_empty() {
        return bad("no host");
    }
    if rest.contains(['/', '?', '#', '@']) || rest.chars().any(char::is_whitespace) {
        return bad("an origin has no path, query, user or spaces");
    }
    HeaderValue::from_str(o).or_else(|_| bad("not a valid header value"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_checked_as_browsers_send_them() {
        let layer = Origins::parse;
        let value = HeaderValue::from_static;
        assert!(
            !layer(&[])
                .expect("none")
                .allows(Some(&value("https://a.example")))
        );
        assert!(
            layer(&["*".into()])
                .expect("any")
                .allows(Some(&value("https://a.example")))
        );
        let list = layer(&["http://127.0.0.1:8080".into(), "https://a.example".into()]);
        let list = list.expect("two origins");
        assert!(list.allows(Some(&value("https://a.example"))));
        assert!(!list.allows(Some(&value("https://b.example"))));
        assert!(
            !list.allows(None),
            "a request without Origin is not a cross-origin one"
        );
        for bad in [
            "example.com",
            "ftp://example.com",
            "https://example.com/",
            "https://example.com/play",
            "https://",
            "https://user@example.com",
        ] {
            let e = layer(&[bad.into()]).expect_err(bad);
            assert!(e.contains("is not an origin"), "{bad}: {e}");
        }
        let e = layer(&["*".into(), "https://a.example".into()]).expect_err("* with others");
        assert!(e.contains("alone"), "{e}");
    }
}
