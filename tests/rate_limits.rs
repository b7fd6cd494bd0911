//! End to end: every call a seat can repeat is rate limited, per token and per connection, with
//! the typed reason RATE_LIMITED (unary SubmitAction, a Play stream's actions, Pings and
//! Resumes, a Join with `resume`); refused calls change nothing in the match; an honest seat at
//! a normal pace is never limited; open ladder registration is throttled per client address with
//! LADDER_ERROR_REASON_RATE_LIMITED.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/ladder.rs"]
mod ladder;

use std::time::Duration;

use common::{Seat, TestServer, config, create_match, join_request, open_play, relaxed_clock};
use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use maumau_ladder_service::LadderSettings;
use pb::server_message::Kind;
use tonic::transport::Channel;

/// The server's typed reason of a failed call.
fn reason(status: &tonic::Status) -> Option<pb::ErrorReason> {
    status
        .metadata()
        .get("maumau-reason")
        .and_then(|v| v.to_str().ok())
        .and_then(pb::ErrorReason::from_str_name)
}

/// A server whose seats may make 10 calls per second (20 at once), each Play stream 10 messages
/// per second, and each seat 5 resumes a minute.
async fn strict_server() -> TestServer {
    TestServer::start_with(|c| {
        c.actions_per_second = 10;
        c.calls_per_second = 10;
        c.resumes_per_minute = 5;
    })
    .await
}

/// A 2-seat classic match of one round with a generous clock.
async fn new_match(matches: &mut MatchServiceClient<Channel>) -> pb::CreateMatchResponse {
    create_match(
        matches,
        pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                options: Some(pb::ProfileOptions {
                    single_round: true,
                    ..Default::default()
                }),
                ..config(pb::Profile::Classic, 2)
            }),
            seed: Some(11),
            time_control: Some(relaxed_clock()),
            ..Default::default()
        },
    )
    .await
}

/// The match as a client sees it: its summary and the events a spectator is sent from the start.
async fn state_of(
    server: &TestServer,
    created: &pb::CreateMatchResponse,
) -> (pb::MatchSummary, Vec<pb::ServerMessage>) {
    let mut matches = server.matches().await;
    let summary = common::summary(&mut matches, &created.match_id).await;
    let mut feed = PlayServiceClient::new(server.channel().await)
        .watch(pb::WatchRequest {
            token: created.spectator_token.clone(),
            resume: Some(pb::Resume {
                last_event_number: 0,
                snapshot: false,
            }),
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner();
    let mut events = Vec::new();
    // Everything up to now comes at once; the first Pong-free pause ends the read.
    while let Ok(Some(Ok(item))) = tokio::time::timeout(
        Duration::from_millis(300),
        tokio_stream::StreamExt::next(&mut feed),
    )
    .await
    {
        let m = item.message.expect("a message");
        if matches!(m.kind, Some(Kind::Event(_))) {
            events.push(m);
        }
    }
    (summary, events)
}

/// Both seats joined; seat 0's stream read up to its first required prompt (or none, when seat 1
/// moves first).
async fn started(server: &TestServer, created: &pb::CreateMatchResponse) -> (Seat, Seat) {
    let mut client = server.play_client().await;
    let a = Seat::join(&mut client, &created.seat_tokens[0].token, None).await;
    let mut b = Seat::join(&mut client, &created.seat_tokens[1].token, None).await;
    b.next().await.expect("welcome");
    (a, b)
}

fn submission(state_id: u64, request_id: u64) -> pb::ActionSubmission {
    pb::ActionSubmission {
        state_id,
        choice: Some(pb::action_submission::Choice::ActionIndex(0)),
        request_id,
    }
}

/// How many answers of a SubmitAction flood said RATE_LIMITED.
fn limited(answers: &[pb::SubmitActionResponse]) -> usize {
    answers
        .iter()
        .filter(|r| {
            matches!(&r.result, Some(pb::submit_action_response::Result::Rejected(x))
                if x.reason == pb::ErrorReason::RateLimited as i32)
        })
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submit_action_flood_on_one_connection_is_rate_limited_then_closed() {
    let server = strict_server().await;
    let created = new_match(&mut server.matches().await).await;
    let (_a, _b) = started(&server, &created).await;
    let before = state_of(&server, &created).await;
    let mut client = server.play_client().await;
    let mut answers = Vec::new();
    let mut closed = None;
    // Until the connection is closed: how many calls that takes depends on how fast they are
    // answered (refused calls must outrun the strikes' refill of 5 a second), not on a timer.
    for i in 0..5_000 {
        // A stale state id: never a legal action, so only the limit can change the answer.
        match client
            .submit_action(pb::SubmitActionRequest {
                token: created.seat_tokens[0].token.clone(),
                action: Some(submission(1_000_000, i)),
            })
            .await
        {
            Ok(r) => answers.push(r.into_inner()),
            Err(status) => {
                closed = Some(status);
                break;
            }
        }
    }
    let n = limited(&answers);
    assert!(n > 0, "no RATE_LIMITED in the flood");
    assert!(n < answers.len(), "even the first calls were limited");
    // Calling on after RATE_LIMITED spends the connection's strikes (10 here): it is closed.
    let closed = closed.expect("the flooding connection is closed");
    assert!(
        n >= 10,
        "closed after its strikes: {} answers, {n} limited, then {closed:?}",
        answers.len()
    );
    assert_eq!(state_of(&server, &created).await, before);
    // The seat itself is not shut out: a new connection is answered in-band (RATE_LIMITED
    // while the seat's own budget refills is an answer too).
    let r = server
        .play_client()
        .await
        .submit_action(pb::SubmitActionRequest {
            token: created.seat_tokens[0].token.clone(),
            action: Some(submission(1_000_000, 1000)),
        })
        .await;
    assert!(r.is_ok(), "a new connection is served: {r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_keeps_sending_unknown_tokens_is_closed() {
    let server = TestServer::start().await;
    let mut client = server.play_client().await;
    let mut refused = 0;
    let closed = loop {
        let status = client
            .submit_action(pb::SubmitActionRequest {
                token: "a-made-up-token".into(),
                action: Some(submission(1, refused)),
            })
            .await
            .expect_err("an unknown token is refused");
        if reason(&status) != Some(pb::ErrorReason::BadToken) {
            break status;
        }
        refused += 1;
        assert!(
            refused < 1_000,
            "still answering after {refused} unknown tokens"
        );
    };
    // 20 at once, 10 a second: closed after about 20 (more if the calls were slow).
    assert!(refused >= 20, "closed after only {refused}: {closed:?}");
    // Another connection is served.
    let other = server
        .play_client()
        .await
        .submit_action(pb::SubmitActionRequest {
            token: "a-made-up-token".into(),
            action: Some(submission(1, 0)),
        })
        .await
        .expect_err("refused");
    assert_eq!(reason(&other), Some(pb::ErrorReason::BadToken));
}

/// A token that is not an open match's costs the server a look in its store of finished
/// matches (on the blocking pool): the connection pays for that look before it is made, so
/// calls sent all at once cannot run up more looks than its budget (20 at once, 10 a second).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tokens_sent_all_at_once_get_no_more_store_looks_than_the_budget() {
    let server = TestServer::start().await;
    let client = server.play_client().await;
    let started = std::time::Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for i in 0..200 {
        let mut client = client.clone();
        calls.spawn(async move {
            client
                .submit_action(pb::SubmitActionRequest {
                    token: format!("a-made-up-token-{i}"),
                    action: Some(submission(1, i)),
                })
                .await
        });
    }
    let answers = calls.join_all().await;
    let looked_up = answers
        .iter()
        .filter(|r| matches!(r, Err(s) if reason(s) == Some(pb::ErrorReason::BadToken)))
        .count();
    assert!(
        looked_up >= 1,
        "the first unknown tokens are answered: {answers:?}"
    );
    // The budget: 20 at once, then 10 a second (on main, 171 of the 200 were looked up).
    let budget = 20 + (10.0 * started.elapsed().as_secs_f64()).ceil() as usize;
    assert!(
        looked_up <= budget,
        "{looked_up} of 200 unknown tokens sent at once were looked up in the store (budget {budget})"
    );
}

/// A connection closed for flooding is held unread first (a tarpit): a flooder that waits for
/// its answers waits there, instead of reconnecting at once with a fresh budget. Its next call is
/// still unanswered after another connection has been answered: the server stays responsive to
/// everyone else.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_connection_is_held_unanswered_before_it_is_closed() {
    // Held far longer than anything below takes, however busy the machine: the order of the
    // answers decides, not a timer.
    let server = TestServer::start_with(|c| c.flood_hold = Duration::from_secs(120)).await;
    let mut client = server.play_client().await;
    let unknown = |i: u64| pb::SubmitActionRequest {
        token: "a-made-up-token".into(),
        action: Some(submission(1, i)),
    };
    let mut i = 0;
    loop {
        let status = client.submit_action(unknown(i)).await.expect_err("refused");
        if reason(&status) == Some(pb::ErrorReason::RateLimited) {
            break;
        }
        assert_eq!(
            reason(&status),
            Some(pb::ErrorReason::BadToken),
            "{status:?}"
        );
        i += 1;
        assert!(i < 1_000, "never limited");
    }
    let mut held = client.clone();
    let next = tokio::spawn(async move { held.submit_action(unknown(0)).await });
    // Another connection is answered meanwhile, in-band.
    let other = server
        .play_client()
        .await
        .submit_action(unknown(1))
        .await
        .expect_err("refused");
    assert_eq!(reason(&other), Some(pb::ErrorReason::BadToken));
    assert!(
        !next.is_finished(),
        "the flooding connection answered (or was closed) at once"
    );
    // Nothing more comes on it until it is closed (in 120 s here; 5 s by default).
    next.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_submit_action_flood_over_many_connections_is_limited_per_token() {
    let server = strict_server().await;
    let created = new_match(&mut server.matches().await).await;
    let (_a, _b) = started(&server, &created).await;
    let before = state_of(&server, &created).await;
    let mut answers = Vec::new();
    for i in 0..60 {
        // A connection of its own for every call: only the token's budget is shared.
        let mut client = server.play_client().await;
        let r = client
            .submit_action(pb::SubmitActionRequest {
                token: created.seat_tokens[0].token.clone(),
                action: Some(submission(1_000_000, i)),
            })
            .await
            .expect("answered in-band")
            .into_inner();
        answers.push(r);
    }
    assert!(limited(&answers) > 0, "no RATE_LIMITED over 60 connections");
    assert_eq!(state_of(&server, &created).await, before);
}

/// Sends `n` copies of `m` on a seat's stream and counts what came back: RATE_LIMITED
/// rejections and Welcomes (one per Resume answered), until `n` answers arrived.
async fn flood_stream(
    seat: &mut Seat,
    m: pb::PlayRequest,
    n: usize,
    answer: fn(&Kind) -> bool,
) -> (usize, usize) {
    for _ in 0..n {
        seat.tx.send(m.clone()).await.expect("send");
    }
    let (mut limited, mut answered) = (0, 0);
    while limited + answered < n {
        let msg = seat.next().await.expect("the stream stays open");
        match msg.kind {
            Some(Kind::Rejected(r)) if r.reason == pb::ErrorReason::RateLimited as i32 => {
                limited += 1
            }
            Some(ref k) if answer(k) => answered += 1,
            _ => {}
        }
    }
    (limited, answered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ping_floods_are_rate_limited() {
    let server = strict_server().await;
    let created = new_match(&mut server.matches().await).await;
    let (_a, mut b) = started(&server, &created).await;
    let before = state_of(&server, &created).await;
    let ping = pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Ping(pb::Ping { nonce: 1 })),
    };
    let (limited, answered) = flood_stream(&mut b, ping, 100, |k| matches!(k, Kind::Pong(_))).await;
    assert!(limited > 0, "no RATE_LIMITED in a flood of 100 Pings");
    assert!(answered > 0, "no Ping answered");
    assert_eq!(state_of(&server, &created).await, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_action_floods_are_rate_limited() {
    let server = strict_server().await;
    let created = new_match(&mut server.matches().await).await;
    let (_a, mut b) = started(&server, &created).await;
    let before = state_of(&server, &created).await;
    let stale = common::index_request(1_000_000, 0, 1);
    let (limited, refused) = flood_stream(
        &mut b,
        stale,
        100,
        |k| matches!(k, Kind::Rejected(r) if r.reason == pb::ErrorReason::StaleState as i32),
    )
    .await;
    assert!(limited > 0, "no RATE_LIMITED in a flood of 100 actions");
    assert!(refused > 0);
    assert_eq!(state_of(&server, &created).await, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_floods_are_rate_limited() {
    let server = strict_server().await;
    let created = new_match(&mut server.matches().await).await;
    let (_a, mut b) = started(&server, &created).await;
    let before = state_of(&server, &created).await;
    let resume = pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Resume(pb::Resume {
            last_event_number: 0,
            snapshot: false,
        })),
    };
    let (limited, welcomes) =
        flood_stream(&mut b, resume, 30, |k| matches!(k, Kind::Welcome(_))).await;
    assert!(limited > 0, "no RATE_LIMITED in a flood of 30 Resumes");
    // 5 a minute, 5 at once: the log was sent again at most a handful of times.
    assert!(
        welcomes <= 6,
        "{welcomes} resumes answered with a budget of 5"
    );

    // A flood of new streams that Join with `resume` is limited by the same budget.
    let mut client = server.play_client().await;
    let mut refused = 0;
    for _ in 0..10 {
        let mut s = open_play(
            &mut client,
            None,
            Some(join_request(
                &created.seat_tokens[1].token,
                Some(pb::Resume {
                    last_event_number: 0,
                    snapshot: false,
                }),
            )),
        )
        .await;
        match tokio::time::timeout(Duration::from_secs(10), s.next_item()).await {
            Ok(Some(Err(status))) => {
                assert_eq!(
                    reason(&status),
                    Some(pb::ErrorReason::RateLimited),
                    "{status:?}"
                );
                refused += 1;
            }
            Ok(Some(Ok(_))) => {}
            other => panic!("no answer to a Join: {other:?}"),
        }
    }
    assert!(refused > 0, "no Join with resume was limited");
    assert_eq!(state_of(&server, &created).await, before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_honest_seat_at_a_normal_pace_is_never_limited() {
    let server = TestServer::start_with(|c| {
        c.actions_per_second = 20;
        c.calls_per_second = 20;
        c.resumes_per_minute = 5;
    })
    .await;
    let created = new_match(&mut server.matches().await).await;
    let mut client = server.play_client().await;
    let mut handles = Vec::new();
    for t in &created.seat_tokens {
        let mut seat = Seat::join(&mut client, &t.token, None).await;
        handles.push(tokio::spawn(async move {
            let (mut request, mut answered) = (0, 0);
            // One Resume, as after a reconnect.
            seat.tx
                .send(pb::PlayRequest {
                    kind: Some(pb::play_request::Kind::Resume(pb::Resume {
                        last_event_number: 0,
                        snapshot: false,
                    })),
                })
                .await
                .expect("resume");
            loop {
                let m = seat
                    .next()
                    .await
                    .expect("the stream ends with MatchFinished");
                match m.kind {
                    // A prompt comes again after the Resume: it is answered once.
                    Some(Kind::Prompt(p)) if p.required && p.state_id > answered => {
                        answered = p.state_id;
                        // A bot that thinks a little and checks the line with a Ping.
                        tokio::time::sleep(Duration::from_millis(60)).await;
                        request += 1;
                        seat.tx
                            .send(pb::PlayRequest {
                                kind: Some(pb::play_request::Kind::Ping(pb::Ping {
                                    nonce: request,
                                })),
                            })
                            .await
                            .expect("ping");
                        seat.send_action(p.state_id, common::default_index(&p), request)
                            .await;
                    }
                    Some(Kind::Rejected(r)) => panic!("an honest seat was refused: {r:?}"),
                    Some(Kind::Finished(_)) => return,
                    _ => {}
                }
            }
        }));
    }
    for h in handles {
        tokio::time::timeout(Duration::from_secs(120), h)
            .await
            .expect("the match ends")
            .expect("the seat played");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ladder_registration_is_throttled_per_client_address() {
    let server = TestServer::start_with(|c| {
        c.ladder = Some(LadderSettings {
            registrations_per_minute: 3,
            ..ladder::classic_pairs(Duration::from_secs(10))
        });
    })
    .await;
    let mut c = LadderServiceClient::new(server.channel().await);
    let mut refused = Vec::new();
    let mut admitted = 0;
    for i in 0..10 {
        // A new connection each time: the budget is the address's, not the connection's.
        let mut fresh = LadderServiceClient::new(server.channel().await);
        match fresh
            .register_owner(pb::RegisterOwnerRequest {
                name: format!("flood-{i}"),
                invitation_code: String::new(),
            })
            .await
        {
            Ok(_) => admitted += 1,
            Err(status) => refused.push(status),
        }
    }
    assert!(admitted >= 3, "the first registrations are admitted");
    assert!(!refused.is_empty(), "no registration of 10 was throttled");
    for status in &refused {
        assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        assert_eq!(
            ladder::ladder_reason(status),
            pb::LadderErrorReason::RateLimited
        );
        assert_eq!(reason(status), Some(pb::ErrorReason::RateLimited));
    }
    // A refused registration registered nothing.
    let err = c
        .register_owner(pb::RegisterOwnerRequest {
            name: format!("flood-{}", 9),
            invitation_code: String::new(),
        })
        .await
        .expect_err("still throttled");
    assert_eq!(
        ladder::ladder_reason(&err),
        pb::LadderErrorReason::RateLimited
    );
}
