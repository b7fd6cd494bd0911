//! End to end: what operators and tools rely on.
//!
//! - `grpc.health.v1.Health/Check` answers SERVING for the server and both services.
//! - Server reflection (v1 and v1alpha) lists `maumau.v1.PlayService` and
//!   `maumau.v1.MatchService` (and not the ladder's service, which a plain server does not
//!   answer) and serves their descriptors.
//! - grpc-web: a plain HTTP/1.1 POST with `application/grpc-web+proto` and a framed body reaches
//!   MatchService/ListMatches.
//! - ListMatches pages (page_size, next_page_token), newest first, and filters by status.
//!
//! The health and reflection messages are declared here with prost, so the test needs no client
//! crate beyond tonic.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/feed.rs"]
mod feed;

use std::io::{Read, Write};
use std::time::Duration;

use common::{Seat, TestServer, config};
use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use prost::Message;
use tokio_stream::StreamExt;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;

// ----- grpc.health.v1 ------------------------------------------------------------------------

#[derive(Clone, PartialEq, prost::Message)]
struct HealthCheckRequest {
    #[prost(string, tag = "1")]
    service: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct HealthCheckResponse {
    /// UNKNOWN 0, SERVING 1, NOT_SERVING 2, SERVICE_UNKNOWN 3.
    #[prost(int32, tag = "1")]
    status: i32,
}

const SERVING: i32 = 1;

async fn health_check(channel: Channel, service: &str) -> Result<i32, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(e.to_string()))?;
    let codec = tonic_prost::ProstCodec::<HealthCheckRequest, HealthCheckResponse>::default();
    let response = grpc
        .unary(
            tonic::Request::new(HealthCheckRequest {
                service: service.to_string(),
            }),
            PathAndQuery::from_static("/grpc.health.v1.Health/Check"),
            codec,
        )
        .await?;
    Ok(response.into_inner().status)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_reports_serving() {
    let server = TestServer::start().await;
    for service in ["", "maumau.v1.PlayService", "maumau.v1.MatchService"] {
        let status = health_check(server.channel().await, service)
            .await
            .expect("health answers");
        assert_eq!(status, SERVING, "`{service}` is serving");
    }
    let unknown = health_check(server.channel().await, "maumau.v1.NoSuchService")
        .await
        .expect_err("an unknown service");
    assert_eq!(unknown.code(), tonic::Code::NotFound, "{unknown:?}");
}

// ----- grpc.reflection.v1 / v1alpha (the same messages in both) ------------------------------

#[derive(Clone, PartialEq, prost::Message)]
struct ReflectionRequest {
    #[prost(string, tag = "1")]
    host: String,
    /// One of the `message_request` oneof.
    #[prost(string, optional, tag = "4")]
    file_containing_symbol: Option<String>,
    /// One of the `message_request` oneof.
    #[prost(string, optional, tag = "7")]
    list_services: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ReflectionResponse {
    #[prost(string, tag = "1")]
    valid_host: String,
    #[prost(message, optional, tag = "4")]
    file_descriptor_response: Option<FileDescriptorResponse>,
    #[prost(message, optional, tag = "6")]
    list_services_response: Option<ListServiceResponse>,
    #[prost(message, optional, tag = "7")]
    error_response: Option<ErrorResponse>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct FileDescriptorResponse {
    #[prost(bytes = "vec", repeated, tag = "1")]
    file_descriptor_proto: Vec<Vec<u8>>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ListServiceResponse {
    #[prost(message, repeated, tag = "1")]
    service: Vec<ServiceResponse>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ServiceResponse {
    #[prost(string, tag = "1")]
    name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ErrorResponse {
    #[prost(int32, tag = "1")]
    error_code: i32,
    #[prost(string, tag = "2")]
    error_message: String,
}

/// The parts of `google.protobuf.FileDescriptorProto` the test reads.
#[derive(Clone, PartialEq, prost::Message)]
struct FileDescriptorProto {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(string, optional, tag = "2")]
    package: Option<String>,
    #[prost(message, repeated, tag = "6")]
    service: Vec<ServiceDescriptorProto>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct ServiceDescriptorProto {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(message, repeated, tag = "2")]
    method: Vec<MethodDescriptorProto>,
}

#[derive(Clone, PartialEq, prost::Message)]
struct MethodDescriptorProto {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
}

/// Sends `requests` on one ServerReflectionInfo stream of `package` and returns the answers,
/// up to the first error status.
async fn reflect(
    channel: Channel,
    package: &str,
    requests: Vec<ReflectionRequest>,
) -> Vec<Result<ReflectionResponse, tonic::Status>> {
    let n = requests.len();
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.expect("ready");
    let path: PathAndQuery = format!("/{package}.ServerReflection/ServerReflectionInfo")
        .parse()
        .expect("a path");
    let codec = tonic_prost::ProstCodec::<ReflectionRequest, ReflectionResponse>::default();
    let mut answers = grpc
        .streaming(
            tonic::Request::new(tokio_stream::iter(requests)),
            path,
            codec,
        )
        .await
        .unwrap_or_else(|s| panic!("{package} reflection answers: {s:?}"))
        .into_inner();
    let mut out = Vec::new();
    while out.len() < n {
        let next = tokio::time::timeout(Duration::from_secs(10), answers.next())
            .await
            .expect("an answer in time")
            .expect("an answer per request");
        let failed = next.is_err();
        out.push(next);
        if failed {
            break;
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reflection_lists_and_describes_the_services_in_v1_and_v1alpha() {
    let server = TestServer::start().await;
    for package in ["grpc.reflection.v1", "grpc.reflection.v1alpha"] {
        let answers = reflect(
            server.channel().await,
            package,
            vec![
                ReflectionRequest {
                    list_services: Some(String::new()),
                    ..Default::default()
                },
                ReflectionRequest {
                    file_containing_symbol: Some("maumau.v1.PlayService".into()),
                    ..Default::default()
                },
                ReflectionRequest {
                    file_containing_symbol: Some("maumau.v1.MatchService".into()),
                    ..Default::default()
                },
            ],
        )
        .await
        .into_iter()
        .map(|a| a.expect("an answer, not an error"))
        .collect::<Vec<_>>();
        let names: Vec<&str> = answers[0]
            .list_services_response
            .as_ref()
            .expect("a service list")
            .service
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        for want in [
            "maumau.v1.PlayService",
            "maumau.v1.MatchService",
            "grpc.health.v1.Health",
        ] {
            assert!(names.contains(&want), "{package}: {want} in {names:?}");
        }
        // Only the services that answer: a plain server has no ladder, so it does not list it.
        assert!(
            !names.contains(&"maumau.v1.LadderService"),
            "{package}: a server without the ladder lists LadderService: {names:?}"
        );
        for (answer, (file, service, method)) in answers[1..3].iter().zip([
            ("maumau/v1/play.proto", "PlayService", "Play"),
            ("maumau/v1/match.proto", "MatchService", "ListMatches"),
        ]) {
            let files: Vec<FileDescriptorProto> = answer
                .file_descriptor_response
                .as_ref()
                .expect("descriptors")
                .file_descriptor_proto
                .iter()
                .map(|b| FileDescriptorProto::decode(b.as_slice()).expect("a file descriptor"))
                .collect();
            let f = files
                .iter()
                .find(|f| f.name.as_deref() == Some(file))
                .unwrap_or_else(|| panic!("{package}: {file} is served"));
            assert_eq!(f.package.as_deref(), Some("maumau.v1"));
            let s = f
                .service
                .iter()
                .find(|s| s.name.as_deref() == Some(service))
                .expect("the service is in its file");
            assert!(
                s.method.iter().any(|m| m.name.as_deref() == Some(method)),
                "{package}: {service}.{method}"
            );
        }
        // An unknown symbol is NOT_FOUND: in-band (as the reflection protocol has it) or, as
        // tonic-reflection answers, as the stream's status.
        let missing = reflect(
            server.channel().await,
            package,
            vec![ReflectionRequest {
                file_containing_symbol: Some("maumau.v1.NoSuchThing".into()),
                ..Default::default()
            }],
        )
        .await;
        let code = match &missing[0] {
            Ok(answer) => answer.error_response.as_ref().map(|e| e.error_code),
            Err(status) => Some(status.code() as i32),
        };
        assert_eq!(code, Some(tonic::Code::NotFound as i32), "{missing:?}");
    }
}

// ----- grpc-web ------------------------------------------------------------------------------

/// What a grpc-web call got back.
struct WebResponse {
    /// The HTTP status line.
    status: String,
    /// The response headers, names lower-cased.
    headers: Vec<(String, String)>,
    /// The message frames.
    frames: Vec<Vec<u8>>,
    /// The trailer frame's text.
    trailers: String,
}

/// One HTTP/1.1 grpc-web call over a plain TCP connection.
fn grpc_web_call(addr: std::net::SocketAddr, path: &str, message: &[u8]) -> WebResponse {
    let mut body = vec![0u8];
    body.extend_from_slice(&(message.len() as u32).to_be_bytes());
    body.extend_from_slice(message);
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\ncontent-type: application/grpc-web+proto\r\n\
         accept: application/grpc-web+proto\r\nx-grpc-web: 1\r\nx-user-agent: grpc-web-test\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    let mut stream = std::net::TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    stream.write_all(&request).expect("send");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("read to the end");
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a header block");
    let head = String::from_utf8(response[..split].to_vec()).expect("ascii headers");
    let mut lines = head.split("\r\n");
    let status_line = lines.next().expect("a status line").to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = response[split + 4..].to_vec();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    let mut frames = Vec::new();
    let mut trailers = String::new();
    let mut at = 0;
    while at + 5 <= body.len() {
        let flag = body[at];
        let len = u32::from_be_bytes(body[at + 1..at + 5].try_into().expect("4 bytes")) as usize;
        let payload = body[at + 5..at + 5 + len].to_vec();
        at += 5 + len;
        if flag & 0x80 != 0 {
            trailers = String::from_utf8(payload).expect("ascii trailers");
        } else {
            frames.push(payload);
        }
    }
    assert_eq!(at, body.len(), "the body is whole frames");
    WebResponse {
        status: status_line,
        headers,
        frames,
        trailers,
    }
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("a chunk size line");
        let size = usize::from_str_radix(
            std::str::from_utf8(&body[..line_end])
                .expect("ascii")
                .split(';')
                .next()
                .expect("a size")
                .trim(),
            16,
        )
        .expect("a hex size");
        body = &body[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
}

/// The value of `name` in the grpc-web trailer text or, for a trailers-only answer, the headers.
fn grpc_field(headers: &[(String, String)], trailers: &str, name: &str) -> Option<String> {
    trailers
        .split("\r\n")
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .chain(headers.iter().cloned())
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grpc_web_unary_calls_over_http1() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            label: "web".into(),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    let native = matches
        .list_matches(pb::ListMatchesRequest::default())
        .await
        .expect("list")
        .into_inner();

    let addr = server.addr;
    let request = pb::ListMatchesRequest::default().encode_to_vec();
    let WebResponse {
        status,
        headers,
        frames,
        trailers,
    } = tokio::task::spawn_blocking(move || {
        grpc_web_call(addr, "/maumau.v1.MatchService/ListMatches", &request)
    })
    .await
    .expect("the call");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let content_type = grpc_field(&headers, "", "content-type").expect("a content type");
    assert!(
        content_type.starts_with("application/grpc-web"),
        "{content_type}"
    );
    assert_eq!(
        grpc_field(&headers, &trailers, "grpc-status").as_deref(),
        Some("0"),
        "{headers:?} {trailers:?}"
    );
    assert_eq!(frames.len(), 1, "one message");
    let listed = pb::ListMatchesResponse::decode(frames[0].as_slice()).expect("a response");
    assert_eq!(listed, native, "grpc-web and gRPC give the same answer");
    assert_eq!(listed.matches[0].match_id, created.match_id);

    // A refusal arrives as a grpc-web status with the reason trailer.
    let request = pb::GetMatchRequest {
        match_id: "no-such-match".into(),
    }
    .encode_to_vec();
    let WebResponse {
        status,
        headers,
        frames,
        trailers,
    } = tokio::task::spawn_blocking(move || {
        grpc_web_call(addr, "/maumau.v1.MatchService/GetMatch", &request)
    })
    .await
    .expect("the call");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    assert!(frames.is_empty());
    assert_eq!(
        grpc_field(&headers, &trailers, "grpc-status").as_deref(),
        Some("5"),
        "NOT_FOUND: {headers:?} {trailers:?}"
    );
    assert_eq!(
        grpc_field(&headers, &trailers, "maumau-reason").as_deref(),
        Some("ERROR_REASON_MATCH_NOT_FOUND")
    );
}

// ----- ListMatches ---------------------------------------------------------------------------

fn bots(seats: impl IntoIterator<Item = u32>) -> Vec<pb::SeatBot> {
    seats
        .into_iter()
        .map(|seat| pb::SeatBot {
            seat,
            kind: pb::BotKind::Random as i32,
        })
        .collect()
}

/// Walks every page; checks each page's size.
async fn pages(
    matches: &mut MatchServiceClient<Channel>,
    status: pb::MatchStatus,
    page_size: u32,
) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut token = String::new();
    loop {
        let page = matches
            .list_matches(pb::ListMatchesRequest {
                status: status as i32,
                page_size,
                page_token: token,
            })
            .await
            .expect("list")
            .into_inner();
        assert!(page.matches.len() <= page_size as usize);
        assert!(
            page.matches
                .iter()
                .all(|m| status == pb::MatchStatus::Unspecified || m.status() == status),
            "only {status:?} matches"
        );
        out.push(page.matches.into_iter().map(|m| m.match_id).collect());
        if page.next_page_token.is_empty() {
            return out;
        }
        token = page.next_page_token;
        assert!(out.len() < 100, "paging ends");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_matches_pages_newest_first_and_filters_by_status() {
    use pb::MatchStatus as S;
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let mut created = Vec::new(); // (id, status), in creation order
    let mut keep = Vec::new(); // streams that must stay open

    let creator = matches.clone();
    let create = move |req: pb::CreateMatchRequest| {
        let mut m = creator.clone();
        async move { m.create_match(req).await.expect("create").into_inner() }
    };
    for i in 0..9u32 {
        match i % 4 {
            // Bots only: plays itself to the end.
            0 | 3 => {
                let c = create(pb::CreateMatchRequest {
                    config: Some(config(pb::Profile::Classic, 2)),
                    bots: bots(0..2),
                    ..Default::default()
                })
                .await;
                feed::watch_to_end(&server, &c.spectator_token).await;
                created.push((c.match_id, S::Finished));
            }
            // A remote seat that never joins: waiting.
            1 => {
                let c = create(pb::CreateMatchRequest {
                    config: Some(config(pb::Profile::Classic, 2)),
                    bots: bots([1]),
                    ..Default::default()
                })
                .await;
                created.push((c.match_id, S::Waiting));
            }
            // A remote seat that joins and is asked to act: running (or aborted, every other).
            _ => {
                let c = create(pb::CreateMatchRequest {
                    config: Some(config(pb::Profile::Classic, 2)),
                    bots: bots([1]),
                    ..Default::default()
                })
                .await;
                let mut client = server.play_client().await;
                let mut seat = Seat::join(&mut client, &c.seat_tokens[0].token, None).await;
                seat.required_prompt().await;
                if i == 2 {
                    let r = matches
                        .abort_match(pb::AbortMatchRequest {
                            match_id: c.match_id.clone(),
                            reason: "test".into(),
                        })
                        .await
                        .expect("abort")
                        .into_inner();
                    assert_eq!(r.status(), S::Aborted);
                    created.push((c.match_id, S::Aborted));
                } else {
                    created.push((c.match_id, S::Running));
                }
                keep.push((client, seat));
            }
        }
    }
    let newest_first: Vec<String> = created.iter().rev().map(|(id, _)| id.clone()).collect();

    // Every page size gives every match once, newest first.
    for size in [1, 2, 4, 9, 50] {
        let walked = pages(&mut matches, S::Unspecified, size).await;
        let all: Vec<String> = walked.concat();
        assert_eq!(all, newest_first, "page size {size}");
        assert_eq!(
            walked.len(),
            created.len().div_ceil(size as usize),
            "page size {size}: full pages, and no empty page after the last"
        );
    }
    // The default page size holds them all.
    let default = matches
        .list_matches(pb::ListMatchesRequest::default())
        .await
        .expect("list")
        .into_inner();
    assert_eq!(default.matches.len(), created.len());
    assert!(default.next_page_token.is_empty());

    // Filtering by status.
    for status in [S::Waiting, S::Running, S::Finished, S::Aborted] {
        let want: Vec<String> = created
            .iter()
            .rev()
            .filter(|(_, s)| *s == status)
            .map(|(id, _)| id.clone())
            .collect();
        for size in [1, 2, 50] {
            let walked = pages(&mut matches, status, size).await;
            assert_eq!(walked.concat(), want, "{status:?}, page size {size}");
            assert_eq!(
                walked.len(),
                want.len().div_ceil(size as usize),
                "{status:?}, page size {size}: no empty page after the last"
            );
        }
    }

    // A page token the server never gave is refused.
    let bad = matches
        .list_matches(pb::ListMatchesRequest {
            page_token: "not-a-token".into(),
            ..Default::default()
        })
        .await
        .expect_err("a bad token");
    assert_eq!(bad.code(), tonic::Code::InvalidArgument, "{bad:?}");
    assert_eq!(
        maumau::wire::reason_of(&bad),
        pb::ErrorReason::InvalidArgument
    );
    drop(keep);
}
