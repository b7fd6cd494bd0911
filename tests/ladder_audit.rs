//! End to end over loopback: what the ladder refuses and shows to keep it hard to abuse. Every
//! call that creates something (owner, bot, version, key) spends the client address's
//! registration budget; a bot has at most `max_versions` versions; names that only look alike
//! (another script, fullwidth letters, another case) are one name, and the house's names are
//! reserved; the match page shows the seed's salt and commitment, and its headers allow the
//! embedded match viewer and nothing more.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/ladder.rs"]
mod ladder;

use std::time::Duration;

use bytes::Bytes;
use common::{TestServer, with_bearer};
use http_body_util::{BodyExt, Empty};
use hyper::HeaderMap;
use hyper_util::rt::TokioIo;
use ladder::{Lobby, classic_pairs, hello, ladder_reason, play, register};
use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau_ladder_service::LadderSettings;
use tonic::transport::Channel;

async fn client(server: &TestServer) -> LadderServiceClient<Channel> {
    LadderServiceClient::new(server.channel().await)
}

fn add_version(bot_id: i64, label: &str, owner_key: &str) -> tonic::Request<pb::AddVersionRequest> {
    with_bearer(
        pb::AddVersionRequest {
            bot_id,
            label: label.into(),
        },
        owner_key,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_version_and_rotate_key_spend_the_registration_budget() {
    let server = TestServer::start_with(|c| {
        c.ladder = Some(LadderSettings {
            registrations_per_minute: 5,
            ..classic_pairs(Duration::from_secs(10))
        })
    })
    .await;
    let mut c = client(&server).await;
    // Owner, bot and version: three of five.
    let e = register(&mut c, "flooder", "flood", "v1").await;
    c.add_version(add_version(e.bot_id, "v2", &e.owner_key))
        .await
        .expect("the fourth registration");
    c.rotate_key(with_bearer(
        pb::RotateKeyRequest { version_id: 0 },
        &e.owner_key,
    ))
    .await
    .expect("the fifth registration");
    // The owner key changed; either way the budget is spent.
    for status in [
        c.add_version(add_version(e.bot_id, "v3", &e.owner_key))
            .await
            .expect_err("a sixth version in a minute"),
        c.rotate_key(with_bearer(
            pb::RotateKeyRequest { version_id: 0 },
            &e.owner_key,
        ))
        .await
        .expect_err("a sixth key in a minute"),
    ] {
        assert_eq!(status.code(), tonic::Code::ResourceExhausted, "{status:?}");
        assert_eq!(ladder_reason(&status), pb::LadderErrorReason::RateLimited);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_has_at_most_max_versions() {
    let server = TestServer::start_with(|c| {
        c.ladder = Some(LadderSettings {
            max_versions: 2,
            ..classic_pairs(Duration::from_secs(10))
        })
    })
    .await;
    let mut c = client(&server).await;
    let e = register(&mut c, "prolific", "many", "v1").await;
    c.add_version(add_version(e.bot_id, "v2", &e.owner_key))
        .await
        .expect("the second version");
    let status = c
        .add_version(add_version(e.bot_id, "v3", &e.owner_key))
        .await
        .expect_err("a third version");
    assert_eq!(ladder_reason(&status), pb::LadderErrorReason::State);
    assert!(status.message().contains("2 versions"), "{status:?}");
    assert_eq!(LadderSettings::default().max_versions, 100);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn look_alike_and_reserved_names_are_refused() {
    let server =
        TestServer::start_with(|c| c.ladder = Some(classic_pairs(Duration::from_secs(10)))).await;
    let mut c = client(&server).await;
    let e = register(&mut c, "mansion", "house-cat", "v1").await;
    let owner = |name: &str| pb::RegisterOwnerRequest {
        name: name.into(),
        invitation_code: String::new(),
    };
    // A Cyrillic о and fullwidth letters.
    for name in ["mansiоn", "ｍａｎｓｉｏｎ", "Mansion"] {
        let status = c.register_owner(owner(name)).await.expect_err(name);
        assert_eq!(
            ladder_reason(&status),
            pb::LadderErrorReason::Duplicate,
            "{name}"
        );
    }
    let status = c
        .register_bot(with_bearer(
            pb::RegisterBotRequest {
                name: "hоuse-cat".into(),
            },
            &e.owner_key,
        ))
        .await
        .expect_err("a look-alike bot");
    assert_eq!(ladder_reason(&status), pb::LadderErrorReason::Duplicate);
    for name in ["hоuse", "ＨＯＵＳＥ"] {
        let status = c.register_owner(owner(name)).await.expect_err(name);
        assert_eq!(
            ladder_reason(&status),
            pb::LadderErrorReason::Invalid,
            "{name}"
        );
    }
    let status = c
        .register_bot(with_bearer(
            pb::RegisterBotRequest {
                name: "heuristic (hоuse)".into(),
            },
            &e.owner_key,
        ))
        .await
        .expect_err("a bot posing as the house's");
    assert_eq!(ladder_reason(&status), pb::LadderErrorReason::Invalid);
    assert!(status.message().contains("(house)"), "{status:?}");
}

/// GETs `path` over HTTP/1.1: the status, the headers and the body.
async fn get(server: &TestServer, path: &str) -> (hyper::StatusCode, HeaderMap, String) {
    let tcp = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .expect("HTTP/1.1 handshake");
    tokio::spawn(conn);
    let request = hyper::Request::get(path)
        .header(hyper::header::HOST, server.addr.to_string())
        .body(Empty::<Bytes>::new())
        .expect("a request");
    let response = send.send_request(request).await.expect("a response");
    let status = response.status();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    (
        status,
        headers,
        String::from_utf8(body.to_vec()).expect("a UTF-8 page"),
    )
}

/// The text inside the first `<dd class="{class}">…</dd>`, tags removed.
fn dd(page: &str, class: &str) -> String {
    let start = format!("<dd class=\"{class}\">");
    let rest = &page[page
        .find(&start)
        .unwrap_or_else(|| panic!("no {class}: {page}"))
        + start.len()..];
    let inner = &rest[..rest.find("</dd>").expect("the end of the dd")];
    let mut text = String::new();
    let mut in_tag = false;
    for ch in inner.chars() {
        match ch {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_match_page_shows_salt_and_commitment_and_frames_only_its_viewer() {
    let server =
        TestServer::start_with(|c| c.ladder = Some(classic_pairs(Duration::from_secs(10)))).await;
    let mut c = client(&server).await;
    let a = register(&mut c, "salty", "salt-a", "v1").await;
    let b = register(&mut c, "peppery", "salt-b", "v1").await;
    let mut lobbies = Vec::new();
    for key in [&a.version_key, &b.version_key] {
        lobbies.push(Lobby::open(&mut c, hello(key, 1, 2)).await.expect("lobby"));
    }
    let url = server.url();
    let mut tasks = Vec::new();
    for mut lobby in lobbies {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            loop {
                match lobby.next().await.expect("the lobby stays open") {
                    pb::lobby_response::Kind::Invitation(inv) => {
                        play(&url, &inv, 1);
                    }
                    pb::lobby_response::Kind::MatchEnded(e) => {
                        assert!(e.finished, "{e:?}");
                        return e.ladder_match_id;
                    }
                    _ => {}
                }
            }
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        ids.push(
            tokio::time::timeout(Duration::from_secs(120), t)
                .await
                .expect("the match ends")
                .expect("the lobby task"),
        );
    }
    assert_eq!(ids[0], ids[1]);

    let (status, headers, page) = get(&server, &format!("/ladder/matches/{}", ids[0])).await;
    assert_eq!(status, hyper::StatusCode::OK);
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string()
    };
    assert_eq!(
        header("content-security-policy"),
        "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'"
    );
    assert_eq!(header("referrer-policy"), "no-referrer");
    assert_eq!(header("x-content-type-options"), "nosniff");
    assert!(
        page.contains("<iframe class=\"viewer\" src=\"/matches/"),
        "{page}"
    );

    // Anyone can check the commitment from the page alone.
    let seed: u64 = dd(&page, "seed").trim().parse().expect("a seed");
    let salt = unhex(dd(&page, "salt").trim());
    let commitment = unhex(dd(&page, "commitment").trim());
    assert_eq!(salt.len(), 16);
    assert_eq!(
        commitment,
        maumau::wire::seed_commitment(&salt, seed).to_vec()
    );

    // The other pages allow no frame at all.
    let (status, headers, _) = get(&server, "/ladder").await;
    assert_eq!(status, hyper::StatusCode::OK);
    let csp = headers
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert_eq!(csp, "default-src 'none'; style-src 'unsafe-inline'");
    assert_eq!(
        headers.get("referrer-policy").and_then(|v| v.to_str().ok()),
        Some("no-referrer")
    );
}
