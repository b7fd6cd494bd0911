//! End to end: every kind of bad input gets a clear, typed refusal, and changes nothing.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use common::{
    Seat, TestServer, config, create_match, join_request, open_play, play_to_end, summary,
    with_bearer,
};
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use maumau::{pb, wire};
use pb::action_submission::Choice;
use pb::server_message::Kind;
use tonic::transport::Channel;

/// Seat 0 holds 9S KH JD 5C 2S and moves first on 3S: 9S, 2S and the J are legal, KH and 5C are
/// not, AH is not in its hand. Seat 1 holds KC 7D 3H 4H 6C.
const POSITION: &str = "mm1 classic seats=2 turn=0 hands=9S,KH,JD,5C,2S/KC,7D,3H,4H,6C \
                        discard=3S stock=*";

fn card(rank: pb::Rank, suit: pb::Suit) -> Option<pb::Card> {
    Some(pb::Card {
        rank: rank as i32,
        suit: suit as i32,
    })
}

fn play(card: Option<pb::Card>, suit: i32, call: i32) -> Choice {
    Choice::Action(pb::Action {
        kind: Some(pb::action::Kind::Play(pb::PlayAction { card, suit, call })),
    })
}

fn action(kind: pb::action::Kind) -> Choice {
    Choice::Action(pb::Action { kind: Some(kind) })
}

async fn position_match(matches: &mut MatchServiceClient<Channel>) -> pb::CreateMatchResponse {
    create_match(
        matches,
        pb::CreateMatchRequest {
            start: Some(pb::create_match_request::Start::Position(POSITION.into())),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        },
    )
    .await
}

/// Submits on the stream and returns the refusal; panics if it is accepted.
async fn refused(
    seat: &mut Seat,
    state_id: u64,
    choice: Option<Choice>,
    rid: u64,
) -> pb::ActionRejected {
    seat.submit(pb::ActionSubmission {
        state_id,
        choice,
        request_id: rid,
    })
    .await;
    match seat.verdict().await {
        Err(r) => {
            assert_eq!(r.request_id, rid, "{r:?}");
            assert!(!r.message.is_empty(), "a readable message too: {r:?}");
            r
        }
        Ok(a) => panic!("request {rid} was accepted: {a:?}"),
    }
}

/// The status a Play stream fails with when its first message is `first`.
async fn play_refusal(
    client: &mut PlayServiceClient<Channel>,
    meta: Option<&str>,
    first: pb::PlayRequest,
) -> tonic::Status {
    let mut seat = open_play(client, meta, Some(first)).await;
    let status = seat.next_error().await;
    assert!(
        seat.log.is_empty(),
        "nothing before the refusal: {:?}",
        seat.log
    );
    assert!(seat.next_item().await.is_none(), "the stream ends");
    status
}

fn expect_status(status: &tonic::Status, reason: pb::ErrorReason) {
    assert_eq!(wire::reason_of(status), reason, "{status:?}");
    assert_eq!(status.code(), wire::status_code(reason), "{status:?}");
    assert!(!status.message().is_empty());
}

fn ping(nonce: u64) -> pb::PlayRequest {
    pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Ping(pb::Ping { nonce })),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_and_calls_without_a_valid_seat_token_are_refused() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = position_match(&mut matches).await;
    let other = position_match(&mut matches).await;
    let token0 = created.seat_tokens[0].token.clone();
    let token1 = created.seat_tokens[1].token.clone();
    let spectator = created.spectator_token.clone();
    let mut client = server.play_client().await;
    use pb::ErrorReason as R;

    // The first message must be Join (without an authorization header).
    for first in [
        ping(1),
        common::index_request(1, 192, 1),
        pb::PlayRequest { kind: None },
        pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Resume(pb::Resume::default())),
        },
    ] {
        let status = play_refusal(&mut client, None, first).await;
        expect_status(&status, R::NotJoined);
    }
    // Unknown, missing and mismatched tokens.
    let unknown = "0123456789abcdef0123456789abcdef";
    for (meta, body) in [
        (None, unknown),
        (None, ""),
        (Some(unknown), ""),
        (Some(unknown), token0.as_str()),
        (Some(token0.as_str()), token1.as_str()),
        (Some(token0.as_str()), other.seat_tokens[0].token.as_str()),
        (None, &token0[..31]),
        (Some(""), ""),
    ] {
        let status = play_refusal(&mut client, meta, join_request(body, None)).await;
        expect_status(&status, R::BadToken);
    }
    // The spectator token holds no seat.
    for (meta, body) in [(None, spectator.as_str()), (Some(spectator.as_str()), "")] {
        let status = play_refusal(&mut client, meta, join_request(body, None)).await;
        expect_status(&status, R::NotSeated);
    }

    // SubmitAction and Watch refuse the same way.
    let submission = pb::ActionSubmission {
        state_id: 1,
        choice: Some(Choice::ActionIndex(192)),
        request_id: 1,
    };
    let submit = |meta: Option<&str>, token: &str, action: Option<pb::ActionSubmission>| {
        let body = pb::SubmitActionRequest {
            token: token.to_string(),
            action,
        };
        match meta {
            Some(t) => with_bearer(body, t),
            None => tonic::Request::new(body),
        }
    };
    for (meta, body, reason) in [
        (None, unknown, R::BadToken),
        (None, "", R::BadToken),
        (Some(token0.as_str()), token1.as_str(), R::BadToken),
        (None, spectator.as_str(), R::NotSeated),
        (Some(spectator.as_str()), "", R::NotSeated),
    ] {
        let status = client
            .submit_action(submit(meta, body, Some(submission)))
            .await
            .expect_err("refused");
        expect_status(&status, reason);
    }
    let status = client
        .submit_action(submit(None, &token0, None))
        .await
        .expect_err("no action");
    expect_status(&status, R::MalformedMessage);
    for (meta, body) in [(None, unknown), (Some(token0.as_str()), token1.as_str())] {
        let req = pb::WatchRequest {
            token: body.to_string(),
            ..Default::default()
        };
        let req = match meta {
            Some(t) => with_bearer(req, t),
            None => tonic::Request::new(req),
        };
        let status = client.watch(req).await.expect_err("refused");
        expect_status(&status, R::BadToken);
    }
    let status = matches
        .get_match(pb::GetMatchRequest {
            match_id: "m0000000000000000".into(),
        })
        .await
        .expect_err("no such match");
    expect_status(&status, R::MatchNotFound);

    // Nothing joined, nothing started.
    let s = summary(&mut matches, &created.match_id).await;
    assert_eq!(s.status(), pb::MatchStatus::Waiting);
    assert_eq!(s.actions, 0);
    assert!(s.players.iter().all(|p| !p.connected), "{:?}", s.players);

    // One seat joined: acting is refused until every seat has.
    let mut seat0 = Seat::join(&mut client, &token0, None).await;
    let snapshot = seat0
        .until(|m| match &m.kind {
            Some(Kind::Snapshot(s)) => Some(s.clone()),
            _ => None,
        })
        .await;
    let r = refused(
        &mut seat0,
        snapshot.state_id,
        Some(play(card(pb::Rank::Nine, pb::Suit::Spades), 0, 0)),
        5,
    )
    .await;
    assert_eq!(r.reason(), R::MatchNotStarted);
    let early = client
        .submit_action(submit(None, &token1, Some(submission)))
        .await
        .expect("submit")
        .into_inner();
    let Some(pb::submit_action_response::Result::Rejected(r)) = early.result else {
        panic!("refused: {early:?}")
    };
    assert_eq!(r.reason(), R::MatchNotStarted);
    assert_eq!(summary(&mut matches, &created.match_id).await.actions, 0);

    // Then seat 1 joins, and the match plays normally.
    let seat1 = Seat::join(&mut client, &token1, None).await;
    let p = seat0.required_prompt().await;
    assert_eq!(
        p.state_id, snapshot.state_id,
        "nothing moved before the start"
    );
    seat0
        .send_action(p.state_id, p.legal_actions[0].index, 6)
        .await;
    let (a, b) = tokio::join!(play_to_end(seat0, 1), play_to_end(seat1, 2));
    assert_eq!(a, b);
    assert_eq!(a.status(), pb::MatchStatus::Finished);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_actions_change_nothing() {
    use pb::ErrorReason as R;
    use pb::{Rank, Suit};
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = position_match(&mut matches).await;
    let mut client = server.play_client().await;
    let mut seat0 = Seat::join(&mut client, &created.seat_tokens[0].token, None).await;
    let mut seat1 = Seat::join(&mut client, &created.seat_tokens[1].token, None).await;
    let prompt = seat0.required_prompt().await;
    let state = prompt.state_id;
    let obs = prompt.observation.clone().expect("an observation");
    assert_eq!(obs.hand.len(), 5);
    let id = created.match_id.clone();
    let mut rid = 100;
    let mut counted = 0; // refusals made by the table, which the report counts

    // Engine refusals: the engine's own reason, the state untouched.
    let nine_spades = card(Rank::Nine, Suit::Spades);
    let engine_cases: Vec<(Choice, R)> = vec![
        (play(card(Rank::King, Suit::Hearts), 0, 0), R::IllegalCard),
        (play(card(Rank::Five, Suit::Clubs), 0, 0), R::IllegalCard),
        (play(card(Rank::Ace, Suit::Hearts), 0, 0), R::CardNotInHand),
        (play(card(Rank::King, Suit::Clubs), 0, 0), R::CardNotInHand),
        (
            action(pb::action::Kind::PassTurn(pb::PassAction {})),
            R::PassBeforeDraw,
        ),
        (
            action(pb::action::Kind::Draw(pb::DrawAction {})),
            R::HoldsLegalPlay,
        ),
        (Choice::ActionIndex(192), R::HoldsLegalPlay),
        (
            action(pb::action::Kind::DeclareSuit(pb::DeclareSuitAction {
                suit: Suit::Hearts as i32,
            })),
            R::NotAwaitingSuit,
        ),
        (
            action(pb::action::Kind::Challenge(pb::ChallengeAction {})),
            R::NoOpenOffence,
        ),
        (
            action(pb::action::Kind::Announce(pb::AnnounceAction {
                call: pb::Call::Mau as i32,
            })),
            R::AnnounceNotAllowed,
        ),
    ];
    for (choice, want) in engine_cases {
        rid += 1;
        let r = refused(&mut seat0, state, Some(choice), rid).await;
        assert_eq!(r.reason(), want, "{choice:?}: {r:?}");
        assert!(
            wire::rejection_from_reason(want).is_some(),
            "an engine reason"
        );
        assert_eq!(r.state_id, state, "a refusal names the current state");
        counted += 1;
        assert_eq!(summary(&mut matches, &id).await.actions, 0);
    }

    // Stale state ids.
    for stale in [0, state - 1, state + 1, u64::MAX] {
        rid += 1;
        let r = refused(&mut seat0, stale, Some(play(nine_spades, 0, 0)), rid).await;
        assert_eq!(r.reason(), R::StaleState, "{r:?}");
        assert_eq!(r.state_id, state);
        counted += 1;
        assert_eq!(summary(&mut matches, &id).await.actions, 0);
    }

    // Out of turn: seat 1, with the current state id, on its stream and by SubmitAction.
    for choice in [
        play(card(Rank::Three, Suit::Hearts), 0, 0),
        Choice::ActionIndex(192),
        action(pb::action::Kind::PassTurn(pb::PassAction {})),
    ] {
        rid += 1;
        let r = refused(&mut seat1, state, Some(choice), rid).await;
        assert_eq!(r.reason(), R::NotYourTurn, "{r:?}");
        let unary = client
            .submit_action(pb::SubmitActionRequest {
                token: created.seat_tokens[1].token.clone(),
                action: Some(pb::ActionSubmission {
                    state_id: state,
                    choice: Some(choice),
                    request_id: rid,
                }),
            })
            .await
            .expect("submit")
            .into_inner();
        let Some(pb::submit_action_response::Result::Rejected(r)) = unary.result else {
            panic!("refused: {unary:?}")
        };
        assert_eq!((r.reason(), r.request_id), (R::NotYourTurn, rid));
    }

    // Malformed actions: refused before they reach the game.
    let jack = card(Rank::Jack, Suit::Diamonds);
    let malformed: Vec<(Option<Choice>, R)> = vec![
        (Some(Choice::ActionIndex(202)), R::MalformedAction),
        (Some(Choice::ActionIndex(203)), R::MalformedAction),
        (Some(Choice::ActionIndex(u32::MAX)), R::MalformedAction),
        (None, R::MalformedAction),
        (
            Some(Choice::Action(pb::Action { kind: None })),
            R::MalformedAction,
        ),
        (Some(play(jack, 0, 0)), R::SuitRequired),
        (
            Some(play(nine_spades, Suit::Hearts as i32, 0)),
            R::SuitNotAllowed,
        ),
        (Some(play(None, 0, 0)), R::MalformedAction),
        (
            Some(play(card(Rank::Unspecified, Suit::Spades), 0, 0)),
            R::MalformedAction,
        ),
        (
            Some(play(card(Rank::Nine, Suit::Unspecified), 0, 0)),
            R::MalformedAction,
        ),
        (
            Some(play(Some(pb::Card { rank: 1, suit: 4 }), 0, 0)),
            R::MalformedAction,
        ),
        (
            Some(play(Some(pb::Card { rank: 15, suit: 4 }), 0, 0)),
            R::MalformedAction,
        ),
        (
            Some(play(Some(pb::Card { rank: 9, suit: 5 }), 0, 0)),
            R::MalformedAction,
        ),
        (
            Some(play(Some(pb::Card { rank: -9, suit: -1 }), 0, 0)),
            R::MalformedAction,
        ),
        (Some(play(jack, 9, 0)), R::MalformedAction),
        (Some(play(nine_spades, 0, 3)), R::MalformedAction),
        (Some(play(nine_spades, 0, -1)), R::MalformedAction),
        (
            Some(action(pb::action::Kind::DeclareSuit(
                pb::DeclareSuitAction { suit: 0 },
            ))),
            R::MalformedAction,
        ),
        (
            Some(action(pb::action::Kind::DeclareSuit(
                pb::DeclareSuitAction { suit: 77 },
            ))),
            R::MalformedAction,
        ),
        (
            Some(action(pb::action::Kind::Announce(pb::AnnounceAction {
                call: 3,
            }))),
            R::MalformedAction,
        ),
    ];
    for (choice, want) in malformed {
        rid += 1;
        let r = refused(&mut seat0, state, choice, rid).await;
        assert_eq!(r.reason(), want, "{choice:?}: {r:?}");
        assert_eq!(summary(&mut matches, &id).await.actions, 0);
    }

    // Protocol slips on a joined stream: answered in-band, the stream stays up.
    seat0
        .send(join_request(&created.seat_tokens[0].token, None))
        .await;
    let r = seat0.verdict().await.expect_err("a second Join");
    assert_eq!(r.reason(), R::AlreadyJoined);
    seat0.send(pb::PlayRequest { kind: None }).await;
    let r = seat0.verdict().await.expect_err("an empty message");
    assert_eq!(r.reason(), R::MalformedMessage);

    // Nothing changed: no event, no new prompt, no action recorded, and the first prompt still
    // stands.
    for seat in [&mut seat0, &mut seat1] {
        let got = seat.sync(7).await;
        assert!(
            got.iter().all(|m| !matches!(
                m.kind,
                Some(Kind::Event(_) | Kind::Prompt(_) | Kind::Accepted(_))
            )),
            "{got:?}"
        );
    }
    let s = summary(&mut matches, &id).await;
    assert_eq!((s.actions, s.round), (0, 1));
    assert_eq!(s.status(), pb::MatchStatus::Running);
    // A Resume shows the same state as before.
    seat0
        .send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Resume(pb::Resume {
                last_event_number: 0,
                snapshot: true,
            })),
        })
        .await;
    let snapshot = seat0
        .until(|m| match &m.kind {
            Some(Kind::Snapshot(s)) => Some(s.clone()),
            _ => None,
        })
        .await;
    assert_eq!(snapshot.state_id, state);
    assert_eq!(snapshot.observation.as_ref(), Some(&obs));
    let again = seat0.required_prompt().await;
    assert_eq!(again.state_id, state);

    rid += 1;
    seat0
        .submit(pb::ActionSubmission {
            state_id: state,
            choice: Some(play(nine_spades, 0, 0)),
            request_id: rid,
        })
        .await;
    let ok = seat0.verdict().await.expect("the prompt still stands");
    assert_eq!(ok.request_id, rid);
    assert_ne!(ok.state_id, state);
    assert_eq!(summary(&mut matches, &id).await.actions, 1);

    let (a, b) = tokio::join!(play_to_end(seat0, 3), play_to_end(seat1, 4));
    assert_eq!(a, b);
    assert_eq!(a.status(), pb::MatchStatus::Finished);
    // The table's own refusals of seat 0 are counted in its statistics (the ones refused before
    // reaching the table, malformed or protocol slips, are not: see the report).
    assert!(a.seats[0].rejections >= counted, "{:?}", a.seats[0]);
    let replay = matches
        .get_replay(pb::GetReplayRequest { match_id: id })
        .await
        .expect("replay")
        .into_inner()
        .replay
        .expect("a replay");
    assert_eq!(
        replay.actions[0].index,
        (3 * 13 + 7) * 3,
        "9S was the first action"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_actions_is_rate_limited() {
    const RATE: u32 = 50;
    let server = TestServer::start_with(|c| c.actions_per_second = RATE).await;
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
            seed: Some(13),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        },
    )
    .await;
    let mut client = server.play_client().await;
    let token0 = created.seat_tokens[0].token.clone();
    let mut seat0 = open_play(&mut client, None, Some(join_request(&token0, None))).await;
    let seat1 = Seat::join(&mut client, &created.seat_tokens[1].token, None).await;
    let other = tokio::spawn(play_to_end(seat1, 5));
    // Once seat 0 must act, nothing moves until it does.
    seat0.required_prompt().await;
    let s = summary(&mut matches, &created.match_id).await;
    let flood = 400u64;
    let started = std::time::Instant::now();
    for rid in 1..=flood {
        // A stale state id: had any of them got through, it would still change nothing.
        seat0.send(common::index_request(u64::MAX, 192, rid)).await;
    }
    let replies = seat0.sync(99).await;
    let elapsed = started.elapsed();
    let mut answered = vec![false; flood as usize + 1];
    let (mut limited, mut passed) = (0, 0);
    for m in &replies {
        match &m.kind {
            Some(Kind::Rejected(r)) => {
                assert!(!answered[r.request_id as usize], "one answer per action");
                answered[r.request_id as usize] = true;
                match r.reason() {
                    pb::ErrorReason::RateLimited => limited += 1,
                    pb::ErrorReason::StaleState => passed += 1,
                    other => panic!("unexpected {other:?}"),
                }
            }
            Some(Kind::Accepted(a)) => panic!("accepted: {a:?}"),
            _ => {}
        }
    }
    assert!(
        answered[1..].iter().all(|&a| a),
        "every action was answered"
    );
    assert_eq!(limited + passed, flood);
    // A token bucket: a burst of twice the rate, then the rate.
    let allowed = 2 * RATE as u64 + (elapsed.as_secs_f64() * RATE as f64).ceil() as u64;
    assert!(passed <= allowed, "{passed} passed in {elapsed:?}");
    assert!(passed >= 2 * RATE as u64, "the burst passes: {passed}");
    assert!(limited > 0);
    // Pings are never limited, and nothing changed.
    assert_eq!(
        summary(&mut matches, &created.match_id).await.actions,
        s.actions
    );

    // A new connection for the seat starts with a full bucket; the match completes.
    drop(seat0);
    let seat0 = Seat::join(
        &mut client,
        &token0,
        Some(pb::Resume {
            last_event_number: 0,
            snapshot: true,
        }),
    )
    .await;
    let report = play_to_end(seat0, 6).await;
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    assert_eq!(other.await.expect("seat 1"), report);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impossible_configurations_are_refused() {
    use pb::ErrorReason as R;
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let opts = |o: pb::ProfileOptions| Some(o);
    let cfg =
        |profile: pb::Profile, seats: u32, options: Option<pb::ProfileOptions>| pb::MatchConfig {
            options,
            ..config(profile, seats)
        };
    let d = pb::ProfileOptions::default;
    let bad_configs: Vec<Option<pb::MatchConfig>> = vec![
        None,
        Some(cfg(pb::Profile::Classic, 0, None)),
        Some(cfg(pb::Profile::Classic, 1, None)),
        Some(cfg(pb::Profile::Classic, 7, None)),
        Some(cfg(pb::Profile::Classic, 256 + 2, None)),
        Some(cfg(pb::Profile::Classic, u32::MAX, None)),
        Some(cfg(pb::Profile::Brazilian, 3, None)),
        Some(cfg(pb::Profile::Brazilian, 9, None)),
        Some(cfg(pb::Profile::Romanian32, 5, None)),
        Some(cfg(pb::Profile::Unspecified, 2, None)),
        Some(pb::MatchConfig {
            profile: 42,
            ..config(pb::Profile::Classic, 2)
        }),
        Some(pb::MatchConfig {
            calls: 9,
            ..config(pb::Profile::Classic, 2)
        }),
        Some(pb::MatchConfig {
            max_rounds: 70_000,
            ..config(pb::Profile::Classic, 2)
        }),
        // Options of another profile.
        Some(cfg(
            pb::Profile::Classic,
            2,
            opts(pb::ProfileOptions {
                nine_reverses: true,
                ..d()
            }),
        )),
        Some(cfg(
            pb::Profile::Classic,
            2,
            opts(pb::ProfileOptions {
                deck: pb::DeckSize::DeckSize32 as i32,
                ..d()
            }),
        )),
        Some(cfg(
            pb::Profile::Classic,
            2,
            opts(pb::ProfileOptions { limit: 150, ..d() }),
        )),
        Some(cfg(
            pb::Profile::Romanian32,
            2,
            opts(pb::ProfileOptions {
                single_round: true,
                ..d()
            }),
        )),
        Some(cfg(
            pb::Profile::Brazilian,
            4,
            opts(pb::ProfileOptions {
                ace_skips: true,
                ..d()
            }),
        )),
        Some(cfg(
            pb::Profile::PenaltyPoints,
            2,
            opts(pb::ProfileOptions {
                jack_wild_on_paid_seven: true,
                ..d()
            }),
        )),
        Some(cfg(
            pb::Profile::PenaltyPoints,
            2,
            opts(pb::ProfileOptions { limit: 120, ..d() }),
        )),
        Some(cfg(
            pb::Profile::PenaltyPoints,
            2,
            opts(pb::ProfileOptions { deck: 7, ..d() }),
        )),
        // A 32-card penalty-points deck seats at most 4.
        Some(cfg(
            pb::Profile::PenaltyPoints,
            5,
            opts(pb::ProfileOptions {
                deck: pb::DeckSize::DeckSize32 as i32,
                ..d()
            }),
        )),
    ];
    for config in bad_configs {
        let status = matches
            .create_match(pb::CreateMatchRequest {
                config,
                ..Default::default()
            })
            .await
            .expect_err("refused");
        expect_status(&status, R::InvalidConfig);
        assert!(!status.message().is_empty(), "{config:?}");
    }
    // Bad starts.
    let two = || Some(config(pb::Profile::Classic, 2));
    let bad_setups: Vec<(pb::CreateMatchRequest, R)> = vec![
        (
            pb::CreateMatchRequest {
                config: two(),
                start: Some(pb::create_match_request::Start::Position(
                    "mm1 nonsense".into(),
                )),
                ..Default::default()
            },
            R::InvalidSetup,
        ),
        (
            pb::CreateMatchRequest {
                config: two(),
                start: Some(pb::create_match_request::Start::DeckOrder(pb::DeckOrder {
                    dealer: 0,
                    cards: vec![pb::Card { rank: 2, suit: 1 }],
                })),
                ..Default::default()
            },
            R::InvalidSetup,
        ),
        (
            pb::CreateMatchRequest {
                config: two(),
                start: Some(pb::create_match_request::Start::Position(POSITION.into())),
                rated: true,
                ..Default::default()
            },
            R::InvalidSetup,
        ),
        (
            pb::CreateMatchRequest {
                config: Some(config(pb::Profile::Classic, 3)),
                start: Some(pb::create_match_request::Start::Position(POSITION.into())),
                ..Default::default()
            },
            R::InvalidSetup,
        ),
        (
            pb::CreateMatchRequest {
                config: two(),
                seed: Some(5),
                rated: true,
                ..Default::default()
            },
            R::InvalidSetup,
        ),
        (
            pb::CreateMatchRequest {
                config: two(),
                bots: vec![pb::SeatBot {
                    seat: 2,
                    kind: pb::BotKind::Random as i32,
                }],
                ..Default::default()
            },
            R::InvalidSetup,
        ),
    ];
    for (req, want) in bad_setups {
        let status = matches
            .create_match(req.clone())
            .await
            .expect_err("refused");
        expect_status(&status, want);
    }
    // None of them created anything.
    let list = matches
        .list_matches(pb::ListMatchesRequest::default())
        .await
        .expect("list")
        .into_inner();
    assert!(list.matches.is_empty(), "{:?}", list.matches);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operator_calls_need_the_operator_token() {
    use pb::ErrorReason as R;
    const OPERATOR: &str = "operator-secret-0123456789";
    let server = TestServer::start_with(|c| c.operator_token = Some(OPERATOR.into())).await;
    let mut matches = server.matches().await;
    let req = || pb::CreateMatchRequest {
        config: Some(config(pb::Profile::Classic, 2)),
        ..Default::default()
    };
    for token in [
        None,
        Some(""),
        Some("wrong"),
        Some(&OPERATOR[1..]),
        Some("operator-secret-01234567890"),
    ] {
        let request = match token {
            Some(t) => with_bearer(req(), t),
            None => tonic::Request::new(req()),
        };
        let status = matches.create_match(request).await.expect_err("refused");
        expect_status(&status, R::PermissionDenied);
    }
    let list = |matches: &mut MatchServiceClient<Channel>| {
        let mut m = matches.clone();
        async move {
            m.list_matches(pb::ListMatchesRequest::default())
                .await
                .expect("list is open")
                .into_inner()
                .matches
        }
    };
    assert!(list(&mut matches).await.is_empty());
    let created = matches
        .create_match(with_bearer(req(), OPERATOR))
        .await
        .expect("the operator creates")
        .into_inner();
    // A seat token is no operator token either.
    for token in [
        None,
        Some(created.seat_tokens[0].token.as_str()),
        Some(created.spectator_token.as_str()),
    ] {
        let abort = pb::AbortMatchRequest {
            match_id: created.match_id.clone(),
            reason: "test".into(),
        };
        let request = match token {
            Some(t) => with_bearer(abort, t),
            None => tonic::Request::new(abort),
        };
        let status = matches.abort_match(request).await.expect_err("refused");
        expect_status(&status, R::PermissionDenied);
    }
    let listed = list(&mut matches).await;
    assert_eq!(listed.len(), 1);
    assert_ne!(listed[0].status(), pb::MatchStatus::Aborted);
    // The match still plays.
    let mut client = server.play_client().await;
    let s0 = Seat::join(&mut client, &created.seat_tokens[0].token, None).await;
    let s1 = Seat::join(&mut client, &created.seat_tokens[1].token, None).await;
    let (a, b) = tokio::join!(play_to_end(s0, 1), play_to_end(s1, 2));
    assert_eq!(a, b);
    assert_eq!(a.status(), pb::MatchStatus::Finished);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_matches_refuses_an_unknown_status() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            ..Default::default()
        },
    )
    .await;
    for status in [99, -1, i32::MAX] {
        let refused = matches
            .list_matches(pb::ListMatchesRequest {
                status,
                ..Default::default()
            })
            .await
            .expect_err("an unknown status is refused, not ignored");
        expect_status(&refused, pb::ErrorReason::InvalidArgument);
        assert!(refused.message().contains("status"), "{refused:?}");
    }
    // Known statuses still filter.
    let waiting = matches
        .list_matches(pb::ListMatchesRequest {
            status: pb::MatchStatus::Waiting as i32,
            ..Default::default()
        })
        .await
        .expect("list")
        .into_inner();
    assert_eq!(waiting.matches.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_match_id_is_not_found_and_not_echoed_whole() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let id = "m".repeat(60_000);
    let status = matches
        .get_match(pb::GetMatchRequest {
            match_id: id.clone(),
        })
        .await
        .expect_err("no such match");
    expect_status(&status, pb::ErrorReason::MatchNotFound);
    assert!(status.message().len() < 200, "{}", status.message().len());
    assert!(status.message().contains(&format!("{}…", &id[..64])));
    let status = matches
        .get_result(pb::GetResultRequest { match_id: id })
        .await
        .expect_err("no such match");
    expect_status(&status, pb::ErrorReason::MatchNotFound);
    // A short id is named whole.
    let status = matches
        .get_match(pb::GetMatchRequest {
            match_id: "m-nope".into(),
        })
        .await
        .expect_err("no such match");
    assert!(status.message().contains("`m-nope`"), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refuses_to_start_with_an_empty_operator_token() {
    for token in ["", " ", "\t\n"] {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let config = maumau_server::ServerConfig {
            data_dir: dir.path().join("data"),
            operator_token: Some(token.into()),
            ..maumau_server::ServerConfig::default()
        };
        let refused = maumau_server::run(listener, config, std::future::pending::<()>())
            .await
            .expect_err("an empty operator token is refused");
        assert!(
            matches!(refused, maumau_server::ServerError::EmptyOperatorToken),
            "{token:?}: {refused}"
        );
        assert!(refused.to_string().contains("empty"), "{refused}");
        assert!(!dir.path().join("data").exists(), "nothing was opened");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_larger_than_the_limit_are_refused() {
    use pb::ErrorReason as R;
    const LIMIT: usize = 4096;
    let server = TestServer::start_with(|c| c.max_message_bytes = LIMIT).await;
    let mut matches = server.matches().await;
    let big = "x".repeat(2 * LIMIT);

    // Unary: tonic refuses before the service runs; nothing is created.
    let status = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            label: big.clone(),
            ..Default::default()
        })
        .await
        .expect_err("too large");
    assert_eq!(status.code(), tonic::Code::OutOfRange, "{status:?}");
    assert!(
        matches
            .list_matches(pb::ListMatchesRequest::default())
            .await
            .expect("list")
            .into_inner()
            .matches
            .is_empty()
    );

    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            seed: Some(3),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        },
    )
    .await;
    let token0 = created.seat_tokens[0].token.clone();
    let mut client = server.play_client().await;
    let status = client
        .submit_action(pb::SubmitActionRequest {
            token: big.clone(),
            action: None,
        })
        .await
        .expect_err("too large");
    assert_eq!(status.code(), tonic::Code::OutOfRange, "{status:?}");

    // A Play stream whose first message is too large is refused.
    let mut oversized = open_play(
        &mut client,
        None,
        Some(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Join(pb::Join {
                token: token0.clone(),
                client_name: big.clone(),
                resume: None,
                ..Default::default()
            })),
        }),
    )
    .await;
    let status = oversized.next_error().await;
    expect_status(&status, R::MalformedMessage);
    assert!(oversized.log.is_empty());

    // On a joined stream, a message too large ends that stream with the same refusal; the match
    // goes on and the seat comes back.
    let mut seat0 = Seat::join(&mut client, &token0, None).await;
    let seat1 = Seat::join(&mut client, &created.seat_tokens[1].token, None).await;
    let other = tokio::spawn(play_to_end(seat1, 2));
    // Once seat 0 must act, nothing moves until it does.
    seat0.required_prompt().await;
    let before = summary(&mut matches, &created.match_id).await.actions;
    seat0
        .send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Join(pb::Join {
                token: big.clone(),
                ..Default::default()
            })),
        })
        .await;
    let status = seat0.next_error().await;
    expect_status(&status, R::MalformedMessage);
    assert_eq!(
        summary(&mut matches, &created.match_id).await.actions,
        before
    );
    drop(seat0);
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
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    assert_eq!(other.await.expect("seat 1"), report);
    assert!(report.seats.iter().all(|s| s.timeouts == 0));
}
