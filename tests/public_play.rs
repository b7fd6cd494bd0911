//! End to end: the public mode (`ServerConfig::public_play`, `maumau serve --public-play`) and
//! `MatchService.CreatePublicMatch`, which the server's `/play` page calls.
//!
//! - Off (the default): refused with `ERROR_REASON_PERMISSION_DENIED`, naming `--public-play`.
//! - On: a match for one person against built-in bots, unrated, from a seed the server drew,
//!   with a person's clock and `GIVE_UP_POLICY_BOT_UNTIL_BACK`; the person's token plays it to
//!   the end. What breaks a limit is refused with its typed reason: no bots, bots on every seat,
//!   two free seats, a bot clock, another give-up policy, a bad config.
//! - Each client address has `public_play_per_minute` calls, then `ERROR_REASON_RATE_LIMITED`;
//!   the server holds at most `public_play_max_open` public matches, then `ERROR_REASON_UNAVAILABLE`.
//! - `/play` serves the page; `/matches/{id}/frames` takes the seat's token in the
//!   `authorization` header, as the page sends it.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use common::{Seat, TestServer, config, play_to_end, summary};
use maumau::{pb, wire};

fn bots(seats: &[u32]) -> Vec<pb::SeatBot> {
    seats
        .iter()
        .map(|&seat| pb::SeatBot {
            seat,
            kind: pb::BotKind::Heuristic as i32,
        })
        .collect()
}

fn request(seats: u32, bot_seats: &[u32]) -> pb::CreatePublicMatchRequest {
    pb::CreatePublicMatchRequest {
        config: Some(pb::MatchConfig {
            options: Some(pb::ProfileOptions {
                single_round: true,
                ..Default::default()
            }),
            ..config(pb::Profile::Classic, seats)
        }),
        bots: bots(bot_seats),
        time_control: None,
    }
}

#[tokio::test]
async fn without_public_play_the_call_is_refused_with_a_typed_reason() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let status = matches
        .create_public_match(request(3, &[1, 2]))
        .await
        .expect_err("refused");
    assert_eq!(
        wire::reason_of(&status),
        pb::ErrorReason::PermissionDenied,
        "{status:?}"
    );
    assert_eq!(status.code(), tonic::Code::PermissionDenied);
    assert!(status.message().contains("--public-play"), "{status:?}");
    // Not even with the operator's token: public mode is a switch of the server, not a right.
    let server = TestServer::start_with(|c| c.operator_token = Some("secret".into())).await;
    let mut matches = server.matches().await;
    let status = matches
        .create_public_match(common::with_bearer(request(3, &[1, 2]), "secret"))
        .await
        .expect_err("refused");
    assert_eq!(wire::reason_of(&status), pb::ErrorReason::PermissionDenied);
}

#[tokio::test]
async fn a_public_match_is_one_person_against_bots_unrated_and_on_a_persons_clock() {
    // An operator token too: public play needs none, and the operator's calls keep theirs.
    let server = TestServer::start_with(|c| {
        c.public_play = true;
        c.operator_token = Some("secret".into());
    })
    .await;
    let mut matches = server.matches().await;
    let created = matches
        .create_public_match(request(3, &[1, 2]))
        .await
        .expect("created")
        .into_inner();
    assert_eq!(created.seat_tokens.len(), 1);
    assert_eq!(created.seat_tokens[0].seat, 0);
    let m = summary(&mut matches, &created.match_id).await;
    assert!(!m.rated);
    assert_eq!(m.label, "public play");
    let clock = m.time_control.expect("a clock");
    assert!(clock.untimed, "unset is untimed: {clock:?}");
    assert_eq!(clock.give_up, pb::GiveUpPolicy::BotUntilBack as i32);
    assert_eq!(clock.disconnect_grace_ms, 30_000);
    // The person plays it to the end; the seed was the server's (it verifies).
    let mut play = server.play_client().await;
    let seat = Seat::join(&mut play, &created.seat_tokens[0].token, None).await;
    let report = play_to_end(seat, 7).await;
    assert_eq!(report.status, pb::MatchStatus::Finished as i32);
    assert_eq!(report.seed_commitment, created.seed_commitment);
    // CreateMatch is still the operator's.
    let status = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            ..Default::default()
        })
        .await
        .expect_err("an operator call");
    assert_eq!(wire::reason_of(&status), pb::ErrorReason::PermissionDenied);

    // A long clock for a person is taken as asked, with the bot until the person is back.
    let timed = matches
        .create_public_match(pb::CreatePublicMatchRequest {
            time_control: Some(pb::TimeControl {
                decision_ms: 30_000,
                bank_ms: 300_000,
                ..Default::default()
            }),
            ..request(2, &[1])
        })
        .await
        .expect("a long clock")
        .into_inner();
    let clock = summary(&mut matches, &timed.match_id)
        .await
        .time_control
        .expect("a clock");
    assert!(!clock.untimed);
    assert_eq!((clock.decision_ms, clock.bank_ms), (30_000, 300_000));
    assert_eq!(clock.give_up, pb::GiveUpPolicy::BotUntilBack as i32);
}

#[tokio::test]
async fn what_breaks_the_public_limits_is_refused_with_its_reason() {
    let server = TestServer::start_with(|c| {
        c.public_play = true;
        c.public_play_per_minute = 100;
    })
    .await;
    let mut matches = server.matches().await;
    let clock = |t: pb::TimeControl| pb::CreatePublicMatchRequest {
        time_control: Some(t),
        ..request(3, &[1, 2])
    };
    let cases: Vec<(&str, pb::CreatePublicMatchRequest, pb::ErrorReason)> = vec![
        ("no bots", request(3, &[]), pb::ErrorReason::InvalidSetup),
        (
            "two free seats",
            request(3, &[1]),
            pb::ErrorReason::InvalidSetup,
        ),
        (
            "no person",
            request(3, &[0, 1, 2]),
            pb::ErrorReason::InvalidSetup,
        ),
        (
            "a bot on a seat that does not exist",
            request(3, &[1, 7]),
            pb::ErrorReason::InvalidSetup,
        ),
        (
            "no config",
            pb::CreatePublicMatchRequest {
                config: None,
                ..request(3, &[1, 2])
            },
            pb::ErrorReason::InvalidConfig,
        ),
        (
            "too many seats for the profile",
            request(9, &[1, 2, 3, 4, 5, 6, 7, 8]),
            pb::ErrorReason::InvalidConfig,
        ),
        (
            "a bot's clock",
            clock(pb::TimeControl {
                decision_ms: 2_000,
                ..Default::default()
            }),
            pb::ErrorReason::InvalidArgument,
        ),
        (
            "an endless bank",
            clock(pb::TimeControl {
                decision_ms: 30_000,
                bank_ms: 86_400_000,
                ..Default::default()
            }),
            pb::ErrorReason::InvalidArgument,
        ),
        (
            "a seat that forfeits",
            clock(pb::TimeControl {
                untimed: true,
                give_up: pb::GiveUpPolicy::Forfeit as i32,
                ..Default::default()
            }),
            pb::ErrorReason::InvalidArgument,
        ),
        (
            "a seat the bot keeps",
            clock(pb::TimeControl {
                untimed: true,
                give_up: pb::GiveUpPolicy::Bot as i32,
                ..Default::default()
            }),
            pb::ErrorReason::InvalidArgument,
        ),
    ];
    for (what, req, reason) in cases {
        let status = matches.create_public_match(req).await.expect_err(what);
        assert_eq!(wire::reason_of(&status), reason, "{what}: {status:?}");
        assert!(!status.message().contains("  "), "{what}: {status:?}");
    }
    // A public match is never rated and its seed is never the client's: the request has no
    // such fields, and what it creates says so.
    let created = matches
        .create_public_match(request(4, &[1, 2, 3]))
        .await
        .expect("created")
        .into_inner();
    let m = summary(&mut matches, &created.match_id).await;
    assert!(!m.rated);
}

#[tokio::test]
async fn each_address_has_its_budget_of_public_matches() {
    let server = TestServer::start_with(|c| {
        c.public_play = true;
        c.public_play_per_minute = 3;
    })
    .await;
    let mut matches = server.matches().await;
    for i in 0..3 {
        matches
            .create_public_match(request(2, &[1]))
            .await
            .unwrap_or_else(|e| panic!("call {i}: {e:?}"));
    }
    let status = matches
        .create_public_match(request(2, &[1]))
        .await
        .expect_err("the budget is spent");
    assert_eq!(
        wire::reason_of(&status),
        pb::ErrorReason::RateLimited,
        "{status:?}"
    );
    assert!(status.message().contains("3 a minute"), "{status:?}");
    // Another connection from the same address shares the budget.
    let mut other = server.matches().await;
    let status = other
        .create_public_match(request(2, &[1]))
        .await
        .expect_err("the same address");
    assert_eq!(wire::reason_of(&status), pb::ErrorReason::RateLimited);
}

/// A plain HTTP/1.1 GET: status and body.
async fn get(server: &TestServer, path: &str, bearer: Option<&str>) -> (u16, String) {
    use http_body_util::BodyExt;
    let tcp = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let (mut send, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(tcp))
        .await
        .expect("HTTP/1.1 handshake");
    tokio::spawn(conn);
    let mut req = hyper::Request::builder()
        .uri(path)
        .header(hyper::header::HOST, server.addr.to_string());
    if let Some(token) = bearer {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    let response = send
        .send_request(
            req.body(http_body_util::Empty::<bytes::Bytes>::new())
                .expect("a request"),
        )
        .await
        .expect("a response");
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn the_play_page_and_the_seats_frames_by_header() {
    let server = TestServer::start_with(|c| c.public_play = true).await;
    let (status, page) = get(&server, "/play", None).await;
    assert_eq!(status, 200);
    assert!(page.contains("id=\"setup\""), "{page}");
    assert!(page.contains("data-public=\"true\""));
    assert!(!page.contains("</script>\n</script"));
    let mut matches = server.matches().await;
    let created = matches
        .create_public_match(request(3, &[1, 2]))
        .await
        .expect("created")
        .into_inner();
    let token = &created.seat_tokens[0].token;
    let mut play = server.play_client().await;
    let _seat = Seat::join(&mut play, token, None).await;
    let frames = format!("/matches/{}/frames", created.match_id);
    let (status, json) = get(&server, &frames, Some(token)).await;
    assert_eq!(status, 200, "{json}");
    let viewing: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(
        viewing["perspective"],
        serde_json::json!("seat 0"),
        "{json}"
    );
    let (status, json) = get(&server, &frames, Some("not-a-token")).await;
    assert_eq!(status, 403, "{json}");
    // The page says when the server deals no public matches.
    let off = TestServer::start().await;
    let (_, page) = get(&off, "/play", None).await;
    assert!(page.contains("--public-play"));
    assert!(page.contains("data-public=\"false\""));
}

#[tokio::test]
async fn the_server_holds_at_most_its_cap_of_open_public_matches() {
    let server = TestServer::start_with(|c| {
        c.public_play = true;
        c.public_play_max_open = 1;
    })
    .await;
    let mut matches = server.matches().await;
    let first = matches
        .create_public_match(request(2, &[1]))
        .await
        .expect("the first")
        .into_inner();
    let status = matches
        .create_public_match(request(2, &[1]))
        .await
        .expect_err("over the cap");
    assert_eq!(
        wire::reason_of(&status),
        pb::ErrorReason::Unavailable,
        "{status:?}"
    );
    // Once the first has ended, there is room again.
    let mut play = server.play_client().await;
    let seat = Seat::join(&mut play, &first.seat_tokens[0].token, None).await;
    play_to_end(seat, 3).await;
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match matches.create_public_match(request(2, &[1])).await {
            Ok(_) => break,
            Err(e) if wire::reason_of(&e) == pb::ErrorReason::Unavailable => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "no room after the end"
                );
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Err(e) => panic!("{e:?}"),
        }
    }
}
