//! Shared helpers for the tests of the server's web pages (the ladder's, the match viewer's): a
//! plain HTTP GET over HTTP/1.1 or HTTP/2, and Debian's headless Chromium to load a page and
//! dump the DOM its scripts built.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::time::Duration;

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
        reason,
        body,
    }
}

/// Debian's Chromium, or a failure that says how to install it. Set `MAUMAU_SKIP_CHROMIUM=1` to
/// skip the browser test on a machine without it (CI installs it, so it never skips there).
pub fn chromium_or_explain() -> Option<std::path::PathBuf> {
    let explicit = std::env::var_os("CHROMIUM").map(std::path::PathBuf::from);
    let found = explicit.or_else(|| {
        ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .flat_map(|name| {
                std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                    .map(move |dir| dir.join(name))
                    .collect::<Vec<_>>()
            })
            .find(|p| p.is_file())
    });
    if found.is_none() && std::env::var_os("MAUMAU_SKIP_CHROMIUM").is_some() {
        eprintln!("MAUMAU_SKIP_CHROMIUM is set and no Chromium was found: browser test skipped");
        return None;
    }
    Some(found.unwrap_or_else(|| {
        panic!(
            "the browser tests need headless Chromium: install it with \
             `sudo apt-get install -y chromium` (Debian/Ubuntu), or point CHROMIUM at a \
             Chromium or Chrome binary; MAUMAU_SKIP_CHROMIUM=1 skips this test"
        )
    }))
}

/// Loads `url` in headless Chromium, lets its scripts run, and returns the DOM they built.
pub fn dump_dom(chromium: &std::path::Path, url: &str) -> String {
    let profile = tempfile::tempdir().expect("a profile directory");
    let mut child = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-extensions",
            "--disable-background-networking",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        // Scripts run and their fetches finish (in virtual time) before the DOM is dumped.
        .arg("--virtual-time-budget=20000")
        .arg("--dump-dom")
        .arg(url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("Chromium starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        if child.try_wait().expect("wait for Chromium").is_some() {
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("Chromium did not finish loading {url} within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("Chromium's output");
    assert!(
        out.status.success(),
        "Chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("a UTF-8 DOM")
}
