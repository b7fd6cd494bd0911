//! End to end: the server closes connections that stay silent (a TCP connection that never
//! speaks, an HTTP/2 connection with no open call), keeps those that are busy, refuses
//! connections beyond its cap while serving the ones it has, and limits the concurrent streams of
//! one connection, and sends GOAWAY to a peer that makes it reset stream after stream for the
//! peer's own errors. The limits are set short in the server's config; every wait below is a bound
//! against a hang, never what decides the outcome.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use std::time::Duration;

use common::{Seat, TestServer, relaxed_classic_pair};
use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// Long enough for anything below to happen, short enough to fail a hung test.
const BOUND: Duration = Duration::from_secs(20);

/// Reads from `tcp` until the server closes it (end of file or reset); panics after [`BOUND`].
async fn until_closed(tcp: &mut TcpStream) {
    let mut buf = [0u8; 4096];
    tokio::time::timeout(BOUND, async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .expect("the server closes the connection");
}

async fn list(matches: &mut MatchServiceClient<tonic::transport::Channel>) {
    tokio::time::timeout(
        BOUND,
        matches.list_matches(pb::ListMatchesRequest::default()),
    )
    .await
    .expect("an answer")
    .expect("ListMatches answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_tcp_connection_is_closed_after_the_handshake_timeout() {
    let server = TestServer::start_with(|c| {
        c.handshake_timeout = Duration::from_millis(300);
        c.idle_timeout = Duration::from_secs(3600);
    })
    .await;
    let mut tcp = TcpStream::connect(server.addr).await.expect("connect");
    until_closed(&mut tcp).await;
    // The server still serves everyone else.
    list(&mut server.matches().await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_http2_connection_is_closed_after_the_idle_timeout() {
    let server = TestServer::start_with(|c| {
        c.handshake_timeout = Duration::from_secs(3600);
        c.idle_timeout = Duration::from_millis(300);
    })
    .await;
    let tcp = TcpStream::connect(server.addr).await.expect("connect");
    let (mut send, conn) = hyper::client::conn::http2::handshake(
        hyper_util::rt::TokioExecutor::new(),
        hyper_util::rt::TokioIo::new(tcp),
    )
    .await
    .expect("HTTP/2 handshake");
    let conn = tokio::spawn(conn);
    // One call, answered; then nothing.
    let req = hyper::Request::post(format!(
        "http://{}/maumau.v1.MatchService/ListMatches",
        server.addr
    ))
    .header("content-type", "application/grpc")
    .header("te", "trailers")
    .body(http_body_util::Full::new(bytes::Bytes::from_static(&[
        0, 0, 0, 0, 0,
    ])))
    .expect("request");
    let response = send.send_request(req).await.expect("an answer");
    drop(response);
    // The client keeps its side open: only the server can end the connection.
    tokio::time::timeout(BOUND, conn)
        .await
        .expect("the server closes the idle connection")
        .expect("the connection task")
        .ok();
    drop(send);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_with_an_open_stream_is_not_idle() {
    let server = TestServer::start_with(|c| {
        c.handshake_timeout = Duration::from_millis(300);
        c.idle_timeout = Duration::from_millis(300);
    })
    .await;
    let mut matches = server.matches().await;
    let created = relaxed_classic_pair(&mut matches, 7).await;
    let mut play = PlayServiceClient::new(server.channel().await);
    let mut seat = Seat::join(&mut play, &created.seat_tokens[0].token, None).await;
    seat.next().await.expect("welcome");
    // Well past both timeouts, the stream still carries a Ping and its Pong.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    seat.tx
        .send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Ping(pb::Ping { nonce: 42 })),
        })
        .await
        .expect("send ping");
    loop {
        let m = seat.next().await.expect("the stream is open");
        if let Some(pb::server_message::Kind::Pong(p)) = m.kind {
            assert_eq!(p.nonce, 42);
            break;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_cap_are_refused_while_the_others_work() {
    let server = TestServer::start_with(|c| c.max_connections = 2).await;
    let mut first = server.matches().await;
    let second_channel = server.channel().await;
    let mut second = MatchServiceClient::new(second_channel.clone());
    list(&mut first).await;
    list(&mut second).await;
    // The third is closed at once, without a word.
    let mut third = TcpStream::connect(server.addr).await.expect("connect");
    until_closed(&mut third).await;
    // The first two still work.
    list(&mut first).await;
    list(&mut second).await;
    // Once one of them closes, a new client gets in.
    drop(second);
    drop(second_channel);
    tokio::time::timeout(BOUND, async {
        loop {
            if let Ok(channel) = tonic::transport::Channel::from_shared(server.url())
                .expect("url")
                .connect()
                .await
                && MatchServiceClient::new(channel)
                    .list_matches(pb::ListMatchesRequest::default())
                    .await
                    .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("a new client is served once a connection closed");
    list(&mut first).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_connection_holds_at_most_the_stream_cap() {
    let server = TestServer::start_with(|c| c.max_streams_per_connection = 2).await;
    let mut matches = server.matches().await;
    let created = relaxed_classic_pair(&mut matches, 3).await;
    let channel = server.channel().await;
    let watch = |channel: tonic::transport::Channel| {
        let token = created.spectator_token.clone();
        async move {
            PlayServiceClient::new(channel)
                .watch(pb::WatchRequest {
                    token,
                    ..Default::default()
                })
                .await
                .expect("watch")
                .into_inner()
        }
    };
    let first = tokio::time::timeout(BOUND, watch(channel.clone()))
        .await
        .expect("first stream");
    let _second = tokio::time::timeout(BOUND, watch(channel.clone()))
        .await
        .expect("second stream");
    // A third stream on the same connection waits for one of the two to close.
    let mut third = tokio::spawn(watch(channel.clone()));
    assert!(
        tokio::time::timeout(Duration::from_millis(500), &mut third)
            .await
            .is_err(),
        "a third concurrent stream was opened on a connection capped at two"
    );
    drop(first);
    tokio::time::timeout(BOUND, third)
        .await
        .expect("the third stream opens once one closed")
        .expect("watch task");
}

/// One HTTP/2 frame: its 9-byte header and payload.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = payload.len() as u32;
    let mut f = vec![(len >> 16) as u8, (len >> 8) as u8, len as u8, kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// A peer that makes the server reset stream after stream for its own errors (each request
/// malformed: a connection-specific header, which HTTP/2 forbids) is sent GOAWAY and closed, as
/// hyper's limit on such resets intends (RUSTSEC-2024-0003: without it, a peer makes the server
/// work on each malformed stream forever). The server then still serves everyone else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_provokes_stream_errors_without_end_is_sent_goaway() {
    use tokio::io::AsyncWriteExt;
    const HEADERS: u8 = 0x1;
    const RST_STREAM: u8 = 0x3;
    const SETTINGS: u8 = 0x4;
    const GOAWAY: u8 = 0x7;
    const END_STREAM_AND_HEADERS: u8 = 0x1 | 0x4;
    let server = TestServer::start().await;
    let mut tcp = TcpStream::connect(server.addr).await.expect("connect");
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend(frame(SETTINGS, 0, 0, &[]));
    tcp.write_all(&out).await.expect("preface");
    // :method POST, :scheme http, :path /, then "connection: x" (HPACK literal without
    // indexing, new name): a connection-specific header, malformed in HTTP/2, so the server
    // resets the stream (a stream error, not the connection's).
    let mut block = vec![0x83, 0x86, 0x84, 0x00, 10];
    block.extend_from_slice(b"connection");
    block.extend_from_slice(&[0x01, b'x']);
    const STREAMS: u32 = 3000;
    // One malformed request at a time, each answered before the next is sent (so that nothing
    // the server sends is lost to a reset when it closes): count its resets, note its GOAWAY.
    let mut buf = Vec::new();
    let (mut resets, mut goaway) = (0u32, None);
    let mut chunk = [0u8; 8192];
    tokio::time::timeout(BOUND, async {
        'streams: for n in 0..STREAMS {
            let sent = frame(HEADERS, END_STREAM_AND_HEADERS, 2 * n + 1, &block);
            if tcp.write_all(&sent).await.is_err() {
                break;
            }
            let before = resets;
            while resets == before && goaway.is_none() {
                match tcp.read(&mut chunk).await {
                    Ok(0) | Err(_) => break 'streams,
                    Ok(k) => buf.extend_from_slice(&chunk[..k]),
                }
                while buf.len() >= 9 {
                    let len = (usize::from(buf[0]) << 16)
                        | (usize::from(buf[1]) << 8)
                        | usize::from(buf[2]);
                    if buf.len() < 9 + len {
                        break;
                    }
                    match buf[3] {
                        RST_STREAM => resets += 1,
                        GOAWAY => goaway = Some(buf[9 + 7..9 + 8].to_vec()),
                        _ => {}
                    }
                    buf.drain(..9 + len);
                }
            }
            if goaway.is_some() {
                break;
            }
        }
    })
    .await
    .expect("the server answers every stream");
    assert!(resets > 0, "the malformed requests were not reset");
    assert!(
        goaway.is_some(),
        "all {resets} malformed streams were reset and the peer could go on"
    );
    // Everyone else is served.
    list(&mut server.matches().await).await;
}
