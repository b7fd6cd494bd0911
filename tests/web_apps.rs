//! End to end: what a web app and the person at its table need from the server.
//!
//! - CORS: a page of a listed origin (`ServerConfig::allow_origins`) gets its preflight answered
//!   with the headers grpc-web needs and can read a call's status; any other origin gets no CORS
//!   header at all; an origin that is not one is refused at start.
//! - A silent Play or Watch stream gets a `Heartbeat` every heartbeat interval.
//! - `CreateMatchRequest.join_timeout_ms`: a match waits as long as it says, not the server's 60 s.
//! - `GIVE_UP_POLICY_BOT_UNTIL_BACK`: a bot plays an absent seat, and the seat is its own again
//!   once it joins; under `GIVE_UP_POLICY_BOT` it is not.
//! - `TimeControl.untimed`: a connected seat may think past any allowance.
//! - `snapshot_every_step`: a Snapshot of the viewer's whole view follows every step's events,
//!   for a seat (Play) and a spectator (Watch).
//! - The first Welcome lists every player, bots by name.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use std::time::Duration;

use bytes::Bytes;
use common::{Seat, TestServer, config, create_match, summary, with_bearer};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use maumau::pb;
use maumau::pb::server_message::Kind;
use tokio_stream::StreamExt;

const PAGE: &str = "http://127.0.0.1:9999";

/// An HTTP/1.1 request with `headers` (and `body`): the status and the response headers.
async fn request(
    server: &TestServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, Vec<(String, String)>) {
    let tcp = tokio::net::TcpStream::connect(server.addr)
        .await
        .expect("connect");
    let (mut send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp))
        .await
        .expect("HTTP/1.1 handshake");
    tokio::spawn(conn);
    let mut req = hyper::Request::builder()
        .method(method)
        .uri(path)
        .header(hyper::header::HOST, server.addr.to_string());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let response = send
        .send_request(req.body(Full::new(Bytes::from(body))).expect("a request"))
        .await
        .expect("a response");
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_string()))
        .collect();
    let _ = response.into_body().collect().await;
    (status, headers)
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn cors_headers(headers: &[(String, String)]) -> Vec<&str> {
    headers
        .iter()
        .filter(|(k, _)| k.starts_with("access-control-"))
        .map(|(k, _)| k.as_str())
        .collect()
}

/// A browser's preflight for a grpc-web call from `origin`.
async fn preflight(server: &TestServer, origin: &str) -> (u16, Vec<(String, String)>) {
    request(
        server,
        "OPTIONS",
        "/maumau.v1.MatchService/CreateMatch",
        &[
            ("origin", origin),
            ("access-control-request-method", "POST"),
            (
                "access-control-request-headers",
                "content-type,x-grpc-web,x-user-agent,authorization,grpc-timeout",
            ),
        ],
        Vec::new(),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_origin_may_call_from_a_browser_and_no_other_gets_cors_headers() {
    let server = TestServer::start_with(|c| c.allow_origins = vec![PAGE.into()]).await;

    let (status, headers) = preflight(&server, PAGE).await;
    assert_eq!(status, 200, "{headers:?}");
    assert_eq!(header(&headers, "access-control-allow-origin"), Some(PAGE));
    let allowed = header(&headers, "access-control-allow-headers").unwrap_or_default();
    for h in [
        "content-type",
        "x-grpc-web",
        "authorization",
        "grpc-timeout",
    ] {
        assert!(allowed.contains(h), "{h} allowed: {allowed}");
    }
    assert!(
        header(&headers, "access-control-allow-methods").is_some_and(|m| m.contains("POST")),
        "{headers:?}"
    );
    assert_eq!(
        header(&headers, "access-control-allow-credentials"),
        None,
        "credentials are never allowed"
    );

    // The call itself: its status and typed reason are readable by the page's script.
    // A grpc-web frame of an empty ListMatchesRequest: flag 0, length 0.
    let framed = vec![0u8; 5];
    let (status, headers) = request(
        &server,
        "POST",
        "/maumau.v1.MatchService/ListMatches",
        &[
            ("origin", PAGE),
            ("content-type", "application/grpc-web+proto"),
            ("x-grpc-web", "1"),
        ],
        framed,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(header(&headers, "access-control-allow-origin"), Some(PAGE));
    let exposed = header(&headers, "access-control-expose-headers").unwrap_or_default();
    for h in ["grpc-status", "grpc-message", "maumau-reason"] {
        assert!(exposed.contains(h), "{h} exposed: {exposed}");
    }

    // Another origin: no CORS header at all, and the preflight is refused as without CORS.
    let (status, headers) = preflight(&server, "http://evil.example").await;
    assert_ne!(status, 200);
    assert!(cors_headers(&headers).is_empty(), "{headers:?}");
    server.stop().await;

    // A server with no origins listed answers no preflight.
    let server = TestServer::start().await;
    let (status, headers) = preflight(&server, PAGE).await;
    assert_ne!(status, 200);
    assert!(cors_headers(&headers).is_empty(), "{headers:?}");
    server.stop().await;
}

#[tokio::test]
async fn an_origin_that_is_not_one_is_refused_at_start() {
    for (origins, says) in [
        (vec!["https://cards.example/play".to_string()], "no path"),
        (vec!["cards.example".to_string()], "no scheme"),
        (vec!["*".to_string(), PAGE.to_string()], "alone"),
    ] {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let config = maumau_server::ServerConfig {
            allow_origins: origins.clone(),
            ..Default::default()
        };
        let err = maumau_server::run(listener, config, async {})
            .await
            .expect_err("a bad origin is refused");
        assert!(
            matches!(err, maumau_server::ServerError::Cors(_)) && err.to_string().contains(says),
            "{origins:?}: {err}"
        );
    }
}

/// Seat 0 of `created`, joined on a Play stream of its own.
async fn seat_0(server: &TestServer, created: &pb::CreateMatchResponse) -> Seat {
    let token = &created.seat_tokens[0].token;
    Seat::join(&mut server.play_client().await, token, None).await
}

/// A 2-seat classic match of two remote seats that waits a minute for them to join.
async fn waiting_pair(server: &TestServer) -> pb::CreateMatchResponse {
    create_match(
        &mut server.matches().await,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            seed: Some(7),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_streams_get_a_heartbeat_every_interval() {
    let server =
        TestServer::start_with(|c| c.heartbeat_interval = Some(Duration::from_millis(150))).await;
    let created = waiting_pair(&server).await;
    // A seat that joined: the match waits for the other one, and nothing happens.
    let mut seat = seat_0(&server, &created).await;
    let mut watch = server
        .play_client()
        .await
        .watch(with_bearer(
            pb::WatchRequest::default(),
            &created.spectator_token,
        ))
        .await
        .expect("watch")
        .into_inner();
    let mut beats = (0, 0);
    while beats.0 < 3 || beats.1 < 3 {
        tokio::select! {
            m = seat.next() => match m.and_then(|m| m.kind) {
                Some(Kind::Heartbeat(h)) => {
                    assert!(h.server_time_unix_ms > 1_700_000_000_000, "{h:?}");
                    beats.0 += 1;
                }
                Some(Kind::Welcome(_) | Kind::Snapshot(_)) => {}
                other => panic!("the seat got {other:?}"),
            },
            m = tokio::time::timeout(Duration::from_secs(10), watch.next()) => {
                match m.expect("a message in time").and_then(|r| r.ok()?.message?.kind) {
                    Some(Kind::Heartbeat(_)) => beats.1 += 1,
                    Some(Kind::Welcome(_) | Kind::Snapshot(_)) => {}
                    other => panic!("the spectator got {other:?}"),
                }
            }
        }
    }
    drop((seat, watch));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_heartbeat_interval_a_silent_stream_stays_silent() {
    let server = TestServer::start_with(|c| c.heartbeat_interval = None).await;
    let created = waiting_pair(&server).await;
    let mut seat = seat_0(&server, &created).await;
    for _ in 0..2 {
        seat.next().await.expect("Welcome, then a Snapshot");
    }
    let quiet = tokio::time::timeout(Duration::from_millis(800), seat.rx.next()).await;
    assert!(quiet.is_err(), "nothing on a silent stream: {quiet:?}");
    drop(seat);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_waits_for_its_seats_as_long_as_it_asks() {
    let server = TestServer::start().await; // the server's default: 60 s
    let mut matches = server.matches().await;
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            seed: Some(3),
            bots: vec![pb::SeatBot {
                seat: 1,
                kind: pb::BotKind::Random as i32,
            }],
            join_timeout_ms: 300,
            ..Default::default()
        },
    )
    .await;
    // Nobody joins seat 0: the match starts without it after 300 ms, not a minute.
    let started = async {
        loop {
            let s = summary(&mut matches, &created.match_id).await;
            if s.status != pb::MatchStatus::Waiting as i32 {
                return s.status;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    let status = tokio::time::timeout(Duration::from_secs(20), started)
        .await
        .expect("the match starts long before the server's 60 s join timeout");
    assert_ne!(status, pb::MatchStatus::Waiting as i32);

    let refused = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            join_timeout_ms: 86_400_001,
            ..Default::default()
        })
        .await
        .expect_err("more than a day is refused");
    assert_eq!(
        maumau::wire::reason_of(&refused),
        pb::ErrorReason::InvalidArgument
    );
    assert!(refused.message().contains("join_timeout_ms"), "{refused:?}");
    server.stop().await;
}

/// A 2-seat classic match of two remote seats where an absent seat gives up after 300 ms, as
/// `give_up` says.
async fn absent_seat_match(
    server: &TestServer,
    give_up: pb::GiveUpPolicy,
) -> pb::CreateMatchResponse {
    create_match(
        &mut server.matches().await,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            seed: Some(11),
            time_control: Some(pb::TimeControl {
                decision_ms: 60_000,
                bank_ms: 60_000,
                max_timeouts: 3,
                disconnect_grace_ms: 300,
                give_up: give_up as i32,
                ..Default::default()
            }),
            ..Default::default()
        },
    )
    .await
}

/// Seat 1 plays until the bot has acted for the absent seat 0, then holds its next required
/// prompt; returns it.
async fn until_the_bot_played_seat_0(seat1: &mut Seat) -> pb::DecisionPrompt {
    let mut seat0_acted = false;
    let mut request = 0;
    loop {
        let m = seat1.next().await.expect("the match goes on");
        match m.kind {
            Some(Kind::Event(e)) if e.event.as_ref().and_then(seat_of) == Some(0) => {
                seat0_acted = true;
            }
            Some(Kind::Prompt(p)) if p.required => {
                if seat0_acted {
                    return p;
                }
                request += 1;
                let pick = common::default_index(&p);
                seat1.send_action(p.state_id, pick, request).await;
            }
            Some(Kind::Finished(_)) => panic!("the match ended before the bot played seat 0"),
            _ => {}
        }
    }
}

/// The seat whose action an event reports (a play or a draw), if any.
fn seat_of(e: &pb::Event) -> Option<u32> {
    match e.kind.as_ref()? {
        pb::event::Kind::CardPlayed(p) => Some(p.seat),
        pb::event::Kind::CardDrawn(d) => Some(d.seat),
        _ => None,
    }
}

/// Seat 0 leaves at once, the bot plays for it, it joins again, seat 1 answers its held prompt;
/// then both play to the end. Returns seat 0's required prompts after it came back and its
/// statistics.
async fn leave_and_come_back(give_up: pb::GiveUpPolicy) -> (usize, pb::SeatStats) {
    let server = TestServer::start().await;
    let created = absent_seat_match(&server, give_up).await;
    let mut play = server.play_client().await;
    let mut gone = Seat::join(&mut play, &created.seat_tokens[0].token, None).await;
    gone.next().await.expect("Welcome");
    drop(gone);
    let mut seat1 = Seat::join(&mut play, &created.seat_tokens[1].token, None).await;
    let held = until_the_bot_played_seat_0(&mut seat1).await;

    let mut back = Seat::join(&mut play, &created.seat_tokens[0].token, None).await;
    let Some(Kind::Welcome(w)) = back.next().await.and_then(|m| m.kind) else {
        panic!("Welcome first")
    };
    let me = &w.players[0];
    assert!(me.connected, "{w:?}");
    seat1
        .send_action(held.state_id, common::default_index(&held), 1_000)
        .await;
    let seat1 = tokio::spawn(common::play_to_end(seat1, 5));
    let mut prompts = 0;
    let mut request = 0;
    let report = loop {
        match back.next().await.and_then(|m| m.kind) {
            Some(Kind::Prompt(p)) if p.required => {
                prompts += 1;
                request += 1;
                back.send_action(p.state_id, common::default_index(&p), request)
                    .await;
            }
            Some(Kind::Finished(f)) => break f.report.expect("a report"),
            Some(_) => {}
            None => panic!("the stream ended before MatchFinished"),
        }
    };
    seat1.await.expect("seat 1 plays to the end");
    drop(back);
    server.stop().await;
    (prompts, report.seats[0])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_a_bot_played_while_it_was_away_is_its_own_again_when_it_comes_back() {
    let (prompts, stats) = leave_and_come_back(pb::GiveUpPolicy::BotUntilBack).await;
    assert!(prompts > 0, "the seat acts again after it came back");
    assert!(stats.gave_up, "a bot played for it: {stats:?}");
    assert!(!stats.forfeited, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_the_bot_policy_a_seat_that_gave_up_stays_with_the_bot() {
    let (prompts, stats) = leave_and_come_back(pb::GiveUpPolicy::Bot).await;
    assert_eq!(prompts, 0, "the bot plays the seat to the end");
    assert!(stats.gave_up, "{stats:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untimed_seat_may_think_past_any_allowance() {
    let server = TestServer::start().await;
    let created = create_match(
        &mut server.matches().await,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            seed: Some(5),
            time_control: Some(pb::TimeControl {
                decision_ms: 50,
                bank_ms: 50,
                max_timeouts: 1,
                untimed: true,
                ..Default::default()
            }),
            bots: vec![pb::SeatBot {
                seat: 1,
                kind: pb::BotKind::Random as i32,
            }],
            ..Default::default()
        },
    )
    .await;
    let mut seat = seat_0(&server, &created).await;
    let prompt = seat.required_prompt().await;
    assert_eq!(prompt.deadline_unix_ms, 0, "{prompt:?}");
    assert_eq!(prompt.time_left_ms, 0, "{prompt:?}");
    // Twelve times the allowance and the bank: nothing is played for the seat.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    seat.send_action(prompt.state_id, common::default_index(&prompt), 1)
        .await;
    let verdict = seat.verdict().await;
    assert!(verdict.is_ok(), "the prompt still stands: {verdict:?}");
    drop(seat);
    server.stop().await;
}

/// Checks a feed that asked for `snapshot_every_step`: every Snapshot after the first shows the
/// events received before it, and no event is left without a Snapshot after it by the time the
/// match ends (or a required prompt comes, which the snapshot follows within its step). Returns
/// how many Snapshots came after the first.
fn snapshots_follow_every_step(messages: &[pb::ServerMessage]) -> usize {
    let mut last_event = 0;
    let mut shown = 0;
    let mut snapshots = 0;
    for (i, m) in messages.iter().enumerate() {
        match m.kind.as_ref().expect("a kind") {
            Kind::Event(e) => last_event = e.number,
            Kind::Batch(b) => last_event = b.events.last().map_or(last_event, |e| e.number),
            Kind::Snapshot(s) if i > 1 => {
                assert_eq!(s.last_event_number, last_event, "message {i}");
                assert!(s.observation.is_some(), "message {i}");
                shown = last_event;
                snapshots += 1;
            }
            Kind::Finished(_) => {
                assert_eq!(shown, last_event, "the last events got their Snapshot");
            }
            _ => {}
        }
    }
    snapshots
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_follows_every_step_for_those_who_ask() {
    let server = TestServer::start().await;
    for delivery in [
        pb::EventDelivery::AsTheyHappen,
        pb::EventDelivery::PerStep,
        pb::EventDelivery::WithPrompt,
    ] {
        let created = create_match(
            &mut server.matches().await,
            pb::CreateMatchRequest {
                config: Some(config(pb::Profile::Classic, 3)),
                seed: Some(21),
                time_control: Some(common::relaxed_clock()),
                bots: vec![
                    pb::SeatBot {
                        seat: 1,
                        kind: pb::BotKind::Heuristic as i32,
                    },
                    pb::SeatBot {
                        seat: 2,
                        kind: pb::BotKind::Random as i32,
                    },
                ],
                join_timeout_ms: 2_000,
                ..Default::default()
            },
        )
        .await;
        let mut watch = server
            .play_client()
            .await
            .watch(with_bearer(
                pb::WatchRequest {
                    snapshot_every_step: true,
                    ..Default::default()
                },
                &created.spectator_token,
            ))
            .await
            .expect("watch")
            .into_inner();
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        tx.send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Join(pb::Join {
                token: created.seat_tokens[0].token.clone(),
                event_delivery: delivery as i32,
                snapshot_every_step: true,
                ..Default::default()
            })),
        })
        .await
        .expect("join");
        let rx = server
            .play_client()
            .await
            .play(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .expect("play")
            .into_inner();
        let mut seat = Seat {
            tx,
            rx,
            log: Vec::new(),
        };
        let mut request = 0;
        loop {
            let m = seat.next().await.expect("MatchFinished ends the feed");
            let batch_prompt = match &m.kind {
                Some(Kind::Prompt(p)) if p.required => Some(p.clone()),
                Some(Kind::Batch(b)) => b.prompt.clone().filter(|p| p.required),
                Some(Kind::Finished(_)) => break,
                _ => None,
            };
            if let Some(p) = batch_prompt {
                request += 1;
                seat.send_action(p.state_id, common::default_index(&p), request)
                    .await;
            }
        }
        drop(seat.tx);
        let seen = snapshots_follow_every_step(&seat.log);
        assert!(seen > 5, "{delivery:?}: {seen} snapshots");
        let mut watched = Vec::new();
        while let Some(Ok(r)) = watch.next().await {
            watched.push(r.message.expect("a message"));
        }
        let seen = snapshots_follow_every_step(&watched);
        assert!(seen > 5, "spectator: {seen} snapshots");
        let hidden = watched.iter().filter_map(|m| match &m.kind {
            Some(Kind::Snapshot(s)) => s.observation.as_ref(),
            _ => None,
        });
        for o in hidden {
            assert!(o.hand.is_empty(), "a spectator sees no hand");
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_welcome_lists_every_player_and_names_the_bots() {
    let server = TestServer::start().await;
    let created = create_match(
        &mut server.matches().await,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 4)),
            seed: Some(9),
            time_control: Some(common::relaxed_clock()),
            bots: [
                (1, pb::BotKind::Random),
                (2, pb::BotKind::Heuristic),
                (3, pb::BotKind::Search),
            ]
            .map(|(seat, kind)| pb::SeatBot {
                seat,
                kind: kind as i32,
            })
            .to_vec(),
            ..Default::default()
        },
    )
    .await;
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tx.send(pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Join(pb::Join {
            token: created.seat_tokens[0].token.clone(),
            client_name: "alice".into(),
            ..Default::default()
        })),
    })
    .await
    .expect("join");
    let mut rx = server
        .play_client()
        .await
        .play(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .expect("play")
        .into_inner();
    let first = rx.next().await.expect("a message").expect("no error");
    let Some(Kind::Welcome(w)) = first.message.and_then(|m| m.kind) else {
        panic!("Welcome first")
    };
    let players: Vec<(u32, &str, i32, bool)> = w
        .players
        .iter()
        .map(|p| (p.seat, p.name.as_str(), p.bot, p.connected))
        .collect();
    assert_eq!(
        players,
        [
            (0, "alice", pb::BotKind::Unspecified as i32, true),
            (1, "random", pb::BotKind::Random as i32, true),
            (2, "heuristic", pb::BotKind::Heuristic as i32, true),
            (3, "search", pb::BotKind::Search as i32, true),
        ]
    );
    drop(tx);
    server.stop().await;
}
