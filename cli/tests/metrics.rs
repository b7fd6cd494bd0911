//! The operator's view: `maumau serve --metrics-listen ADDR` serves the server's metrics in
//! Prometheus's text format, scraped here during a match and after it (the real binary, a real
//! HTTP GET, a real gRPC seat).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/process.rs"]
mod process;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::server_message::Kind;
use process::{action, create, join, serve_command, start};
use tokio_stream::StreamExt;

fn free_port() -> SocketAddr {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// `GET /metrics`: the body.
fn scrape(addr: SocketAddr) -> String {
    let mut tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        tcp,
        "GET /metrics HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    response
        .split("\r\n\r\n")
        .nth(1)
        .unwrap_or_default()
        .to_string()
}

/// The value of the sample `name` (with its labels, as printed), if present.
fn sample(body: &str, name: &str) -> Option<f64> {
    body.lines()
        .filter(|l| !l.starts_with('#'))
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_scraped_during_and_after_a_match() {
    let dir = tempfile::tempdir().unwrap();
    let metrics = free_port();
    let server = start(serve_command(
        &dir.path().join("data"),
        &["--metrics-listen", &metrics.to_string()],
    ));
    let channel = server.channel().await;
    let created = create(&mut MatchServiceClient::new(channel.clone()), 3)
        .await
        .unwrap();
    let (tx, mut stream) = join(channel, &created.seat_tokens[0].token).await;

    let mut during = None;
    let mut request = 0;
    while let Some(m) = stream.next().await {
        match m.unwrap().message.and_then(|m| m.kind) {
            Some(Kind::Prompt(p)) if p.required => {
                request += 1;
                if request == 3 {
                    // One stale action, refused, then the scrape in the middle of the match.
                    tx.send(action(p.state_id + 1000, 0, 1000)).await.unwrap();
                    let body = tokio::task::spawn_blocking({
                        let addr = metrics;
                        move || scrape(addr)
                    });
                    during = Some(body.await.unwrap());
                }
                let pick = p.legal_actions[request as usize % p.legal_actions.len()].index;
                tx.send(action(p.state_id, pick, request)).await.unwrap();
            }
            Some(Kind::Finished(_)) => break,
            _ => {}
        }
    }
    let during = during.expect("the match lasted three decisions of seat 0");
    assert_eq!(
        sample(&during, "maumau_matches_open"),
        Some(1.0),
        "{during}"
    );
    assert_eq!(
        sample(&during, "maumau_streams_open"),
        Some(1.0),
        "{during}"
    );
    assert!(
        sample(&during, "maumau_connections_open").is_some_and(|n| n >= 1.0),
        "{during}"
    );
    assert!(
        sample(&during, "maumau_decisions_total").is_some_and(|n| n >= 2.0),
        "{during}"
    );
    assert_eq!(
        sample(&during, "maumau_storage_available"),
        Some(1.0),
        "{during}"
    );
    assert!(during.contains("# HELP maumau_decisions_total"), "{during}");

    let after = tokio::task::spawn_blocking(move || scrape(metrics))
        .await
        .unwrap();
    assert_eq!(sample(&after, "maumau_matches_open"), Some(0.0), "{after}");
    assert_eq!(
        sample(
            &after,
            "maumau_matches_ended_total{status=\"MATCH_STATUS_FINISHED\"}"
        ),
        Some(1.0),
        "{after}"
    );
    assert_eq!(
        sample(
            &after,
            "maumau_rejections_total{reason=\"ERROR_REASON_STALE_STATE\"}"
        ),
        Some(1.0),
        "{after}"
    );
    assert!(
        sample(&after, "maumau_store_write_seconds_count").is_some_and(|n| n >= 1.0),
        "{after}"
    );
}
