//! End to end: every refusal of a seat's message is counted in its statistics; request bodies
//! that do not decode, truncated gRPC frames and unknown enum values in a time control get typed
//! reasons.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use common::{
    Seat, TestServer, config, create_match, index_request, join_request, open_play, play_to_end,
    with_bearer,
};
use maumau::pb::play_service_client::PlayServiceClient;
use maumau::{pb, wire};
use pb::ErrorReason as R;
use pb::server_message::Kind;
use prost::bytes::{Buf, BufMut};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;

/// The server's size limit for one message in these tests.
const LIMIT: usize = 4096;
/// Actions one Play connection may send per second (bursts of twice this).
const RATE: u32 = 50;

fn expect_status(status: &tonic::Status, reason: pb::ErrorReason) {
    assert_eq!(wire::reason_of(status), reason, "{status:?}");
    assert_eq!(status.code(), wire::status_code(reason), "{status:?}");
    assert!(!status.message().is_empty());
}

/// Rejections among `messages`.
fn rejections(messages: &[pb::ServerMessage]) -> u32 {
    messages
        .iter()
        .filter(|m| matches!(m.kind, Some(Kind::Rejected(_))))
        .count() as u32
}

fn submit(token: &str, action: Option<pb::ActionSubmission>) -> pb::SubmitActionRequest {
    pb::SubmitActionRequest {
        token: token.to_string(),
        action,
    }
}

fn by_index(state_id: u64, index: u32, request_id: u64) -> pb::ActionSubmission {
    pb::ActionSubmission {
        state_id,
        choice: Some(pb::action_submission::Choice::ActionIndex(index)),
        request_id,
    }
}

/// A unary SubmitAction that the table answers with a rejection of `reason`.
async fn unary_rejection(
    client: &mut PlayServiceClient<Channel>,
    token: &str,
    action: pb::ActionSubmission,
    reason: pb::ErrorReason,
) {
    let answer = client
        .submit_action(submit(token, Some(action)))
        .await
        .expect("an answer")
        .into_inner();
    match answer.result {
        Some(pb::submit_action_response::Result::Rejected(r)) => {
            assert_eq!(r.reason(), reason, "{r:?}")
        }
        other => panic!("a rejection, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_refusal_of_a_seats_message_is_counted() {
    let server = TestServer::start_with(|c| {
        c.max_message_bytes = LIMIT;
        c.actions_per_second = RATE;
    })
    .await;
    let mut matches = server.matches().await;
    // One round, so that the seats' honest play stays well inside the rate limit.
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                options: Some(pb::ProfileOptions {
                    single_round: true,
                    ..Default::default()
                }),
                ..config(pb::Profile::Classic, 2)
            }),
            seed: Some(17),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        },
    )
    .await;
    let token0 = created.seat_tokens[0].token.clone();
    let token1 = created.seat_tokens[1].token.clone();
    let mut client = server.play_client().await;
    // What the server refused of each seat, as the seat saw it.
    let (mut counted0, mut counted1) = (0u32, 0u32);

    // Before the start: on the stream and by a unary call.
    let mut seat0 = Seat::join(&mut client, &token0, None).await;
    seat0.send(index_request(1, 192, 1)).await;
    let early = seat0.verdict().await.expect_err("not started");
    assert_eq!(early.reason(), R::MatchNotStarted);
    counted0 += 1;
    unary_rejection(
        &mut client,
        &token1,
        by_index(1, 192, 2),
        R::MatchNotStarted,
    )
    .await;
    counted1 += 1;

    let seat1 = Seat::join(&mut client, &token1, None).await;
    let prompt = seat0.required_prompt().await;
    let state = prompt.state_id;

    // Refused on the stream: malformed, stale, illegal, empty, a second Join.
    seat0.send(index_request(state, 999, 3)).await;
    seat0.send(index_request(state + 100, 192, 4)).await;
    let illegal = (0..192)
        .find(|i| prompt.legal_actions.iter().all(|a| a.index != *i))
        .expect("a play that is not legal");
    seat0.send(index_request(state, illegal, 5)).await;
    seat0.send(pb::PlayRequest { kind: None }).await;
    seat0.send(join_request(&token0, None)).await;
    let seen = seat0.sync(1).await;
    let reasons: Vec<R> = seen
        .iter()
        .filter_map(|m| match &m.kind {
            Some(Kind::Rejected(r)) => Some(r.reason()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons.len(), 5, "{seen:?}");
    assert_eq!(reasons[0], R::MalformedAction);
    assert_eq!(reasons[1], R::StaleState);
    assert_eq!(reasons[3], R::MalformedMessage);
    assert_eq!(reasons[4], R::AlreadyJoined);
    counted0 += 5;

    // Refused by unary calls: no action, a malformed one, a stale one.
    let status = client
        .submit_action(submit(&token0, None))
        .await
        .expect_err("no action");
    expect_status(&status, R::MalformedMessage);
    unary_rejection(
        &mut client,
        &token0,
        by_index(state, 999, 6),
        R::MalformedAction,
    )
    .await;
    unary_rejection(&mut client, &token0, by_index(7, 192, 7), R::StaleState).await;
    counted0 += 3;

    // A flood: every action is refused, most as rate-limited, and every one counts.
    let flood = 3 * RATE as u64;
    for rid in 0..flood {
        seat0.send(index_request(u64::MAX, 192, 100 + rid)).await;
    }
    let seen = seat0.sync(2).await;
    assert_eq!(rejections(&seen) as u64, flood);
    assert!(
        seen.iter().any(|m| matches!(&m.kind,
            Some(Kind::Rejected(r)) if r.reason() == R::RateLimited)),
        "the flood was rate-limited"
    );
    counted0 += flood as u32;

    // A message too large to read ends the stream, and counts.
    seat0
        .send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Join(pb::Join {
                token: "x".repeat(2 * LIMIT),
                ..Default::default()
            })),
        })
        .await;
    expect_status(&seat0.next_error().await, R::MalformedMessage);
    counted0 += 1;
    drop(seat0);

    // Back with a fresh connection; the match plays to its end without another refusal.
    let seat0 = Seat::join(
        &mut client,
        &token0,
        Some(pb::Resume {
            last_event_number: 0,
            snapshot: true,
        }),
    )
    .await;
    let (a, b) = tokio::join!(play_to_end(seat0, 1), play_to_end(seat1, 2));
    assert_eq!(a, b);
    assert_eq!(a.status(), pb::MatchStatus::Finished);
    assert_eq!(a.seats[0].rejections, counted0, "{:?}", a.seats[0]);
    assert_eq!(a.seats[1].rejections, counted1, "{:?}", a.seats[1]);
}

/// Sends bytes as they are and reads answers as bytes.
#[derive(Clone, Copy, Debug, Default)]
struct Raw;

impl Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;

    fn encoder(&mut self) -> Raw {
        Raw
    }

    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl Encoder for Raw {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        Ok(Some(bytes.to_vec()))
    }
}

/// Calls `path` with `body` as the request message's bytes; returns the call's status.
async fn raw_call(
    channel: Channel,
    path: &'static str,
    body: Vec<u8>,
    streaming: bool,
) -> tonic::Status {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.expect("ready");
    let name = path;
    let path = PathAndQuery::from_static(path);
    let request = with_bearer(body, "0123456789abcdef0123456789abcdef");
    if streaming {
        match grpc.server_streaming(request, path, Raw).await {
            Err(status) => status,
            Ok(mut answer) => match answer.get_mut().message().await {
                Err(status) => status,
                Ok(m) => panic!("{name}: refused, got {m:?}"),
            },
        }
    } else {
        grpc.unary(request, path, Raw)
            .await
            .expect_err("an unreadable request is refused")
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn request_bodies_that_do_not_decode_get_a_reason() {
    let server = TestServer::start_with(|c| c.max_message_bytes = LIMIT).await;
    let unreadable: [&[u8]; 3] = [
        // Field 1 (a string) claims 5 bytes and has 2.
        &[0x0A, 0x05, 0x61, 0x62],
        // Field 1 (a string) is not UTF-8.
        &[0x0A, 0x02, 0xFF, 0xFE],
        // Wire type 7 does not exist.
        &[0x0F, 0x01],
    ];
    let calls = [
        ("/maumau.v1.PlayService/SubmitAction", false),
        ("/maumau.v1.PlayService/Resign", false),
        ("/maumau.v1.PlayService/Watch", true),
        ("/maumau.v1.MatchService/CreateMatch", false),
        ("/maumau.v1.MatchService/GetMatch", false),
        ("/maumau.v1.MatchService/VerifyReplay", false),
    ];
    for (path, streaming) in calls {
        for body in unreadable {
            let status = raw_call(server.channel().await, path, body.to_vec(), streaming).await;
            expect_status(&status, R::MalformedMessage);
            assert!(status.message().contains("decode"), "{path}: {status:?}");
        }
        // Over the size limit: tonic's OUT_OF_RANGE, with the reason.
        let status = raw_call(server.channel().await, path, vec![0; 2 * LIMIT], streaming).await;
        assert_eq!(status.code(), tonic::Code::OutOfRange, "{path}: {status:?}");
        assert_eq!(
            wire::reason_of(&status),
            R::MalformedMessage,
            "{path}: {status:?}"
        );
    }
    // Nothing was created, and the server still answers well-formed calls.
    let listed = server
        .matches()
        .await
        .list_matches(pb::ListMatchesRequest::default())
        .await
        .expect("list")
        .into_inner();
    assert!(listed.matches.is_empty(), "{listed:?}");
    // A well-formed request the service refuses keeps its own reason.
    let status = server
        .play_client()
        .await
        .submit_action(submit("", None))
        .await
        .expect_err("no token");
    expect_status(&status, R::BadToken);
}

/// What a raw HTTP/2 gRPC call got back: the gRPC status code and `maumau-reason`, from the
/// headers of a trailers-only answer or from the trailers.
async fn raw_http2_call(server: &TestServer, path: &str, body: Vec<u8>) -> (String, String) {
    use http_body_util::{BodyExt, Full};
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let tcp = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tcp))
            .await
            .expect("HTTP/2 handshake");
    tokio::spawn(conn);
    let request = hyper::Request::post(format!("http://{}{path}", server.addr))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .body(Full::new(prost::bytes::Bytes::from(body)))
        .expect("a request");
    let response = send.send_request(request).await.expect("a response");
    let mut fields = response.headers().clone();
    let collected = response
        .into_body()
        .collect()
        .await
        .expect("the whole answer");
    if let Some(trailers) = collected.trailers() {
        fields.extend(trailers.clone());
    }
    let field = |name: &str| {
        fields
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    (field("grpc-status"), field(wire::REASON_TRAILER))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_grpc_frame_gets_a_reason() {
    let server = TestServer::start().await;
    // A frame header that promises 10 bytes of message, followed by 3: the body ends inside it.
    let truncated = vec![0, 0, 0, 0, 10, 0x0A, 0x01, 0x61];
    for path in [
        "/maumau.v1.MatchService/GetMatch",
        "/maumau.v1.MatchService/CreateMatch",
        "/maumau.v1.PlayService/SubmitAction",
        "/maumau.v1.PlayService/Resign",
        "/maumau.v1.PlayService/Watch",
    ] {
        let (code, reason) = raw_http2_call(&server, path, truncated.clone()).await;
        assert_eq!(
            code,
            (tonic::Code::InvalidArgument as i32).to_string(),
            "{path}"
        );
        assert_eq!(reason, R::MalformedMessage.as_str_name(), "{path}");
    }
    // A frame header alone, cut short too.
    let (code, reason) =
        raw_http2_call(&server, "/maumau.v1.MatchService/GetMatch", vec![0, 0, 0]).await;
    assert_eq!(code, (tonic::Code::InvalidArgument as i32).to_string());
    assert_eq!(reason, R::MalformedMessage.as_str_name());
    // Nothing was created.
    let listed = server
        .matches()
        .await
        .list_matches(pb::ListMatchesRequest::default())
        .await
        .expect("list")
        .into_inner();
    assert!(listed.matches.is_empty(), "{listed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_give_up_policy_is_refused() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let request = |give_up: i32| pb::CreateMatchRequest {
        config: Some(config(pb::Profile::Classic, 2)),
        seed: Some(5),
        time_control: Some(pb::TimeControl {
            give_up,
            ..common::relaxed_clock()
        }),
        ..Default::default()
    };
    for unknown in [4, 7, -1, i32::MAX] {
        let status = matches
            .create_match(request(unknown))
            .await
            .expect_err("an unknown policy");
        expect_status(&status, R::InvalidArgument);
        assert!(status.message().contains("give_up"), "{status:?}");
    }
    assert!(
        matches
            .list_matches(pb::ListMatchesRequest::default())
            .await
            .expect("list")
            .into_inner()
            .matches
            .is_empty(),
        "nothing was created"
    );
    // Unset takes the server's default; the known values are kept.
    for (give_up, want) in [
        (pb::GiveUpPolicy::Unspecified, pb::GiveUpPolicy::Bot),
        (pb::GiveUpPolicy::Bot, pb::GiveUpPolicy::Bot),
        (pb::GiveUpPolicy::Forfeit, pb::GiveUpPolicy::Forfeit),
    ] {
        let created = create_match(&mut matches, request(give_up as i32)).await;
        let summary = common::summary(&mut matches, &created.match_id).await;
        let clock = summary.time_control.expect("a clock");
        assert_eq!(clock.give_up(), want);
    }
    // The same check holds on the stream's first message: a seat sees the clock it was given.
    let created = create_match(&mut matches, request(pb::GiveUpPolicy::Forfeit as i32)).await;
    let mut client = server.play_client().await;
    let mut seat = open_play(
        &mut client,
        None,
        Some(join_request(&created.seat_tokens[0].token, None)),
    )
    .await;
    let welcome = seat
        .until(|m| match &m.kind {
            Some(Kind::Welcome(w)) => Some(w.clone()),
            _ => None,
        })
        .await;
    assert_eq!(
        welcome.time_control.expect("a clock").give_up(),
        pb::GiveUpPolicy::Forfeit
    );
}

/// A loopback TCP proxy to the server whose connections can be cut, as a network would.
struct Proxy {
    addr: std::net::SocketAddr,
    links: std::sync::Arc<std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>>,
}

impl Proxy {
    async fn to(server: std::net::SocketAddr) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let links = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let held = links.clone();
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let link = tokio::spawn(async move {
                    if let Ok(mut outbound) = tokio::net::TcpStream::connect(server).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                held.lock().expect("links").push(link);
            }
        });
        Proxy { addr, links }
    }

    /// Drops every connection through the proxy at once.
    fn cut(&self) {
        for link in self.links.lock().expect("links").drain(..) {
            link.abort();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_is_not_a_refusal() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                options: Some(pb::ProfileOptions {
                    single_round: true,
                    ..Default::default()
                }),
                ..config(pb::Profile::Classic, 2)
            }),
            seed: Some(17),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        },
    )
    .await;
    let token0 = created.seat_tokens[0].token.clone();
    let seat1 = {
        let mut client = server.play_client().await;
        Seat::join(&mut client, &created.seat_tokens[1].token, None).await
    };
    let other = tokio::spawn(play_to_end(seat1, 2));
    let proxy = Proxy::to(server.addr).await;
    for _ in 0..3 {
        // Through the proxy, cut while seat 0 must act: the server's end of the stream breaks.
        let channel = Channel::from_shared(format!("http://{}", proxy.addr))
            .expect("url")
            .connect()
            .await
            .expect("connect");
        let mut client = PlayServiceClient::new(channel.clone());
        let mut seat0 = Seat::join(
            &mut client,
            &token0,
            Some(pb::Resume {
                last_event_number: 0,
                snapshot: true,
            }),
        )
        .await;
        seat0.required_prompt().await;
        proxy.cut();
        assert!(
            matches!(seat0.next_item().await, Some(Err(_)) | None),
            "the cut stream ends"
        );
    }
    let mut client = server.play_client().await;
    let seat0 = Seat::join(
        &mut client,
        &token0,
        Some(pb::Resume {
            last_event_number: 0,
            snapshot: true,
        }),
    )
    .await;
    let report = play_to_end(seat0, 1).await;
    assert_eq!(other.await.expect("seat 1"), report);
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    assert!(
        report.seats.iter().all(|s| s.rejections == 0),
        "{:?}",
        report.seats
    );
}
