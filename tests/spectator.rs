//! End to end: watching, replays and the one-way seat feed.
//!
//! - A spectator's Watch stream carries public information only (no hand, no drawn card, no
//!   prompt), its events numbered like the seats'. The replay, once the match is over, gives the
//!   configuration, the seed and every accepted action, and re-simulating it reveals every hand.
//! - VerifyReplay accepts a genuine replay and rejects a tampered one: a changed action is
//!   INVALID_REPLAY with `failed_action` set, a changed result is REPLAY_MISMATCH.
//! - A seat can play a whole match the grpc-web way: Watch with its seat token for the feed, and
//!   SubmitAction for each action.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/feed.rs"]
mod feed;

use common::{Seat, TestServer, config};
use feed::{Style, check_feed, resimulate};
use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau_engine::{Action, Event, MatchConfig, Suit};
use pb::server_message::Kind;
use tonic::transport::Channel;

async fn replay_of(matches: &mut MatchServiceClient<Channel>, id: &str) -> pb::Replay {
    matches
        .get_replay(pb::GetReplayRequest {
            match_id: id.to_string(),
        })
        .await
        .expect("replay")
        .into_inner()
        .replay
        .expect("a replay")
}

fn events(log: &[pb::ServerMessage]) -> Vec<&pb::NumberedEvent> {
    log.iter()
        .filter_map(|m| match &m.kind {
            Some(Kind::Event(e)) => Some(e),
            _ => None,
        })
        .collect()
}

fn report_of(log: &[pb::ServerMessage]) -> &pb::MatchReport {
    match log.last().and_then(|m| m.kind.as_ref()) {
        Some(Kind::Finished(f)) => f.report.as_ref().expect("a report"),
        other => panic!("the feed ends with MatchFinished, not {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spectators_see_public_information_only_and_the_replay_reveals_every_hand() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    for (profile, seats, remote, seed) in [
        (pb::Profile::Brazilian, 4, vec![0, 2], 11),
        (pb::Profile::Classic, 3, vec![1, 2], 12),
        (pb::Profile::Romanian32, 2, vec![0], 13),
    ] {
        let mut cfg = config(profile, seats);
        cfg.max_rounds = 2;
        let created = matches
            .create_match(pb::CreateMatchRequest {
                config: Some(cfg),
                seed: Some(seed),
                bots: (0..seats)
                    .filter(|s| !remote.contains(s))
                    .map(|seat| pb::SeatBot {
                        seat,
                        kind: pb::BotKind::Random as i32,
                    })
                    .collect(),
                ..Default::default()
            })
            .await
            .expect("create")
            .into_inner();
        // Two spectators before play starts: one from a snapshot (token in the message), one from
        // event 1 (token in the metadata).
        let mut client = server.play_client().await;
        let fresh = client
            .watch(pb::WatchRequest {
                token: created.spectator_token.clone(),
                client_name: "spectator".into(),
                resume: None,
                ..Default::default()
            })
            .await
            .expect("watch")
            .into_inner();
        let from_start = client
            .watch(common::with_bearer(
                pb::WatchRequest {
                    token: String::new(),
                    client_name: "spectator".into(),
                    resume: Some(pb::Resume {
                        last_event_number: 0,
                        snapshot: false,
                    }),
                    ..Default::default()
                },
                &created.spectator_token,
            ))
            .await
            .expect("watch")
            .into_inner();
        let watchers = [
            tokio::spawn(feed::read_feed(fresh)),
            tokio::spawn(feed::read_feed(from_start)),
        ];
        let mut players = Vec::new();
        for t in &created.seat_tokens {
            let mut c = server.play_client().await;
            let seat = Seat::join(&mut c, &t.token, None).await;
            let style = Style {
                seed: seed * 7 + t.seat as u64,
                sloppy: true,
                reckless: false,
            };
            let s = t.seat;
            players.push(tokio::spawn(async move {
                let _c = c;
                (s, feed::play_recording(seat, style).await)
            }));
        }
        let mut seat_logs = Vec::new();
        for p in players {
            seat_logs.push(p.await.expect("a player"));
        }
        let mut spectator_logs = Vec::new();
        for w in watchers {
            spectator_logs.push(w.await.expect("a spectator"));
        }

        // The replay: configuration, seed, every accepted action.
        let replay = replay_of(&mut matches, &created.match_id).await;
        assert_eq!(replay.match_id, created.match_id);
        assert_eq!(replay.seed, seed);
        assert_eq!(
            MatchConfig::try_from(replay.config.as_ref().expect("config")).expect("valid"),
            MatchConfig::try_from(&cfg).expect("valid"),
            "the replay names the configuration the match was created with"
        );
        let report = report_of(&spectator_logs[0]).clone();
        assert_eq!(replay.actions.len() as u32, report.actions);
        for (s, log) in &seat_logs {
            let accepted: Vec<u32> = log
                .iter()
                .filter_map(|m| match &m.kind {
                    Some(Kind::Accepted(a)) => Some(a.action_index),
                    _ => None,
                })
                .collect();
            let recorded: Vec<u32> = replay
                .actions
                .iter()
                .filter(|a| a.seat == *s)
                .map(|a| a.index)
                .collect();
            assert_eq!(
                accepted, recorded,
                "seat {s}: the replay holds exactly the actions accepted from it, in order"
            );
        }

        let verdict = matches
            .verify_replay(pb::VerifyReplayRequest {
                replay: Some(replay.clone()),
            })
            .await
            .expect("verify")
            .into_inner();
        assert!(verdict.valid && verdict.finished, "{verdict:?}");
        assert_eq!(verdict.result, report.result);

        // Re-simulating reveals every hand; the spectators saw none of it.
        let r = resimulate(&replay);
        let drawn = feed::count(&r, |e| matches!(e, Event::Drew { card: Some(_), .. }));
        assert_eq!(
            drawn,
            feed::count(&r, |e| matches!(e, Event::Drew { .. })),
            "the re-simulation names every drawn card"
        );
        assert!(drawn > 0);
        for log in &spectator_logs {
            check_feed(&r, &replay, None, log);
            assert!(
                !log.iter().any(|m| matches!(m.kind, Some(Kind::Prompt(_)))),
                "no prompt for a spectator"
            );
            let welcome = match &log[0].kind {
                Some(Kind::Welcome(w)) => w,
                other => panic!("Welcome first, not {other:?}"),
            };
            assert_eq!(welcome.seat, None);
            assert_eq!(welcome.seed_commitment, created.seed_commitment);
            assert_eq!(
                welcome.seed_commitment,
                maumau::wire::seed_commitment(&report_of(log).seed_salt, report_of(log).seed)
                    .to_vec(),
                "the revealed seed matches the commitment"
            );
        }
        assert!(
            matches!(spectator_logs[0][1].kind, Some(Kind::Snapshot(_))),
            "a fresh spectator starts from a snapshot"
        );
        assert_eq!(
            events(&spectator_logs[1])[0].number,
            1,
            "a spectator that asks for every event starts at event 1"
        );
        // Events are numbered like the seats': the same number is the same event, redacted.
        for (s, log) in &seat_logs {
            check_feed(&r, &replay, Some(*s as u8), log);
            let by_number: std::collections::HashMap<u64, &pb::Event> = events(log)
                .into_iter()
                .filter_map(|e| Some((e.number, e.event.as_ref()?)))
                .collect();
            let mut compared = 0;
            for e in events(&spectator_logs[1]) {
                let Some(seat_event) = by_number.get(&e.number) else {
                    continue;
                };
                let mut public = (*seat_event).clone();
                if let Some(pb::event::Kind::CardDrawn(d)) = public.kind.as_mut() {
                    d.card = None;
                }
                assert_eq!(e.event.as_ref(), Some(&public), "event {}", e.number);
                compared += 1;
            }
            assert!(compared > 0);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_replay_accepts_the_replay_and_rejects_tampering() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    // Every seat a bot: the match plays itself; a spectator waits for its end.
    let created = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::PenaltyPoints, 3)),
            seed: Some(99),
            bots: (0..3)
                .map(|seat| pb::SeatBot {
                    seat,
                    kind: pb::BotKind::Random as i32,
                })
                .collect(),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    assert!(created.seat_tokens.is_empty());
    let mut client = server.play_client().await;
    let feed = client
        .watch(pb::WatchRequest {
            token: created.spectator_token.clone(),
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner();
    let log = feed::read_feed(feed).await;
    let report = report_of(&log).clone();
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    let replay = replay_of(&mut matches, &created.match_id).await;
    let verify = |replay: pb::Replay| {
        let mut m = matches.clone();
        async move {
            m.verify_replay(pb::VerifyReplayRequest {
                replay: Some(replay),
            })
            .await
            .expect("verify answers in-band")
            .into_inner()
        }
    };

    // The genuine replay.
    let ok = verify(replay.clone()).await;
    assert!(ok.valid && ok.finished, "{ok:?}");
    assert_eq!(ok.actions_applied as usize, replay.actions.len());
    assert_eq!(ok.failed_action, None);
    assert_eq!(ok.error, None);
    assert_eq!(ok.result, report.result);
    assert_eq!(ok.rounds, report.rounds);

    // An action changed to one the engine refuses there.
    let r = resimulate(&replay);
    let i = replay.actions.len() / 2;
    let seat = replay.actions[i].seat as u8;
    let bad = [
        Action::DeclareSuit(Suit::Hearts),
        Action::Pass,
        Action::Challenge,
    ]
    .into_iter()
    .find(|&a| {
        let mut g = r.states[i];
        g.apply_with(seat, a, &mut ()).is_err()
    })
    .expect("some action is refused there");
    let mut tampered = replay.clone();
    tampered.actions[i].action = Some(bad.into());
    tampered.actions[i].index = bad.index() as u32;
    let no = verify(tampered).await;
    assert!(!no.valid && !no.finished, "{no:?}");
    assert_eq!(no.failed_action, Some(i as u32));
    assert_eq!(no.actions_applied, i as u32);
    assert_eq!(
        no.error.as_ref().map(|e| e.reason()),
        Some(pb::ErrorReason::InvalidReplay),
        "{no:?}"
    );

    // An action by the wrong seat.
    let mut tampered = replay.clone();
    let other = (0..3)
        .find(|&s| r.states[i].legal_actions(s).is_empty())
        .expect("a seat with nothing to do");
    tampered.actions[i].seat = other.into();
    let no = verify(tampered).await;
    assert!(!no.valid, "{no:?}");
    assert_eq!(no.failed_action, Some(i as u32));

    // A changed result.
    let mut tampered = replay.clone();
    let result = tampered.result.as_mut().expect("a recorded result");
    result.standings[0].total += 1;
    let no = verify(tampered).await;
    assert!(!no.valid, "{no:?}");
    assert_eq!(no.failed_action, None);
    assert_eq!(no.actions_applied as usize, replay.actions.len());
    assert_eq!(
        no.error.as_ref().map(|e| e.reason()),
        Some(pb::ErrorReason::ReplayMismatch),
        "{no:?}"
    );

    // A truncated replay is valid as far as it goes, but not finished.
    let mut cut = replay.clone();
    cut.actions.truncate(i);
    cut.result = None;
    let partial = verify(cut).await;
    assert!(partial.valid && !partial.finished, "{partial:?}");
    assert_eq!(partial.actions_applied, i as u32);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_plays_a_whole_match_over_watch_and_submit_action() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let mut cfg = config(pb::Profile::Classic, 3);
    cfg.max_rounds = 3;
    let created = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(cfg),
            seed: Some(5),
            bots: vec![pb::SeatBot {
                seat: 2,
                kind: pb::BotKind::Random as i32,
            }],
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    // Seat 0 the grpc-web way, seat 1 on a Play stream, seat 2 a bot.
    let token0 = created.seat_tokens[0].token.clone();
    let mut web = server.play_client().await;
    let web_seat = tokio::spawn(async move {
        let style = Style {
            seed: 77,
            sloppy: true,
            reckless: true,
        };
        feed::watch_recording(&mut web, &token0, style).await
    });
    let mut c1 = server.play_client().await;
    let s1 = Seat::join(&mut c1, &created.seat_tokens[1].token, None).await;
    let streamed = tokio::spawn(feed::play_recording(
        s1,
        Style {
            seed: 78,
            sloppy: true,
            reckless: false,
        },
    ));
    let (log0, accepted0) = web_seat.await.expect("the web seat");
    let log1 = streamed.await.expect("the streamed seat");
    let report = report_of(&log0).clone();
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    assert_eq!(&report, report_of(&log1));

    let replay = replay_of(&mut matches, &created.match_id).await;
    let r = resimulate(&replay);
    let stats = check_feed(&r, &replay, Some(0), &log0);
    check_feed(&r, &replay, Some(1), &log1);
    assert!(stats.required_prompts > 0);
    assert_eq!(
        stats.accepted + stats.rejected,
        0,
        "verdicts go in SubmitAction's answers, not on the feed"
    );
    assert_eq!(
        replay.actions.iter().filter(|a| a.seat == 0).count(),
        accepted0,
        "every action of the web seat came from an accepted SubmitAction"
    );
    assert!(replay.actions.iter().all(|a| !a.timeout));
}
