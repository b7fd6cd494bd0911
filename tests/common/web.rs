//! Shared helpers for the tests of the server's web pages (the ladder's, the match viewer's): a
//! plain HTTP GET over HTTP/1.1 or HTTP/2, and Debian's headless Chromium to load a page and
//! dump the DOM its scripts built (in `chromium.rs`, which the CLI's tests share).
#![allow(dead_code, unused_imports, unreachable_pub, missing_docs)]

#[path = "chromium.rs"]
mod chromium;
pub use chromium::{chromium_or_explain, dump_dom, screenshot};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::StatusCode;
use hyper_util::rt::{TokioExecutor, TokioIo};

use super::common::TestServer;

/// A response: status, content type, content disposition and body.
pub struct Got {
    pub status: StatusCode,
    pub content_type: String,
    pub disposition: String,
    /// The `maumau-reason` header (a refusal's typed reason), or empty.
    pub reason: String,
    /// Every header of the response.
    pub headers: hyper::HeaderMap,
    pub body: Vec<u8>,
}

impl Got {
    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).expect("a UTF-8 page")
    }
}

/// GETs `path` on the server over a new HTTP/1.1 (or, with prior knowledge, HTTP/2) connection.
pub async fn get(server: &TestServer, path: &str, http2: bool) -> Got {
    let tcp = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let io = TokioIo::new(tcp);
    let request = hyper::Request::get(path)
        .header(hyper::header::HOST, server.addr.to_string())
        .body(Empty::<Bytes>::new())
        .expect("a request");
    let response = if http2 {
        let (mut send, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .expect("HTTP/2 handshake");
        tokio::spawn(conn);
        send.send_request(request).await.expect("HTTP/2 response")
    } else {
        let (mut send, conn) = hyper::client::conn::http1::handshake(io)
            .await
            .expect("HTTP/1.1 handshake");
        tokio::spawn(conn);
        send.send_request(request).await.expect("HTTP/1.1 response")
    };
    let header = |name: hyper::header::HeaderName| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    let (status, content_type, disposition, reason) = (
        response.status(),
        header(hyper::header::CONTENT_TYPE),
        header(hyper::header::CONTENT_DISPOSITION),
        header(hyper::header::HeaderName::from_static("maumau-reason")),
    );
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes()
        .to_vec();
    Got {
        status,
        content_type,
        disposition,
        headers,
        reason,
        body,
    }
}
