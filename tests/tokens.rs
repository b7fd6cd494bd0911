//! End to end: a seat token acts and sees only for its own seat in its own match.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use std::collections::HashSet;

use common::{Seat, TestServer, config, create_match, summary, with_bearer};
use maumau::pb;
use pb::server_message::Kind;
use tokio_stream::StreamExt;

fn is_secret(t: &str) -> bool {
    t.len() == 32 && t.bytes().all(|b| b.is_ascii_hexdigit())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_are_128_bit_hex_and_all_distinct() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let mut seen = HashSet::new();
    let mut count = 0;
    for i in 0..20u32 {
        let created = create_match(
            &mut matches,
            pb::CreateMatchRequest {
                config: Some(config(pb::Profile::Brazilian, 8)),
                // Same seed every time: tokens do not come from the match seed.
                seed: Some(1),
                bots: (0..i % 3)
                    .map(|seat| pb::SeatBot {
                        seat,
                        kind: pb::BotKind::Random as i32,
                    })
                    .collect(),
                ..Default::default()
            },
        )
        .await;
        assert_eq!(created.seat_tokens.len() as u32, 8 - i % 3);
        let seats: Vec<u32> = created.seat_tokens.iter().map(|t| t.seat).collect();
        assert_eq!(seats, (i % 3..8).collect::<Vec<_>>(), "in seat order");
        for t in created
            .seat_tokens
            .iter()
            .map(|t| &t.token)
            .chain([&created.spectator_token])
        {
            assert!(is_secret(t), "32 hex digits: {t:?}");
            assert!(seen.insert(t.clone()), "a repeated token: {t}");
            count += 1;
        }
        assert!(!seen.contains(&created.match_id));
        assert!(!created.match_id.is_empty());
        assert!(
            created
                .seat_tokens
                .iter()
                .all(|t| !t.token.contains(&created.match_id[1..])),
            "a token does not contain the public match id"
        );
    }
    assert_eq!(count, seen.len());
    // Not one bit is fixed across 150 tokens (a weak but cheap check of randomness).
    let values: Vec<u128> = seen
        .iter()
        .map(|t| u128::from_str_radix(t, 16).expect("hex"))
        .collect();
    let ones = values.iter().fold(0u128, |a, v| a | v);
    let zeros = values.iter().fold(0u128, |a, v| a | !v);
    assert_eq!((ones, zeros), (u128::MAX, u128::MAX));
}

/// Two matches at once: match A's seat token resolves to its own seat in A, whatever match the
/// state id and action it sends came from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_acts_only_for_its_own_seat_in_its_own_match() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let mut created = Vec::new();
    for seed in [31, 32] {
        created.push(
            create_match(
                &mut matches,
                pb::CreateMatchRequest {
                    config: Some(config(pb::Profile::Classic, 2)),
                    seed: Some(seed),
                    time_control: Some(common::relaxed_clock()),
                    ..Default::default()
                },
            )
            .await,
        );
    }
    let (a, b) = (&created[0], &created[1]);
    let mut client = server.play_client().await;
    // seats[m][s]: match m, seat s.
    let mut seats: Vec<Vec<Seat>> = Vec::new();
    let mut movers = Vec::new();
    for m in [a, b] {
        let mut joined = Vec::new();
        for t in &m.seat_tokens {
            joined.push(Seat::join(&mut client, &t.token, None).await);
        }
        let mut mover = None;
        for (s, seat) in joined.iter_mut().enumerate() {
            let welcome = seat
                .until(|m| match &m.kind {
                    Some(Kind::Welcome(w)) => Some(w.clone()),
                    _ => None,
                })
                .await;
            assert_eq!(welcome.match_id, m.match_id);
            assert_eq!(welcome.seat, Some(s as u32));
            let snapshot = seat
                .until(|m| match &m.kind {
                    Some(Kind::Snapshot(x)) => Some(x.clone()),
                    _ => None,
                })
                .await;
            let obs = snapshot.observation.expect("an observation");
            assert_eq!(obs.seat, Some(s as u32));
            mover = obs.to_act;
        }
        let mover = mover.expect("someone moves") as usize;
        seats.push(joined);
        movers.push(mover);
    }
    let prompt_b = seats[1][movers[1]].required_prompt().await;
    let prompt_a = seats[0][movers[0]].required_prompt().await;
    let idle_a = 1 - movers[0];
    let token_idle_a = a.seat_tokens[idle_a].token.clone();
    let before_a = summary(&mut matches, &a.match_id).await.actions;
    let before_b = summary(&mut matches, &b.match_id).await.actions;

    // A's idle seat sends B's prompt's state id and every action B's mover may take, unary and
    // on its stream: each is refused as A's idle seat acting in A.
    for (i, legal) in prompt_b.legal_actions.iter().enumerate() {
        let submission = pb::ActionSubmission {
            state_id: prompt_b.state_id,
            choice: Some(pb::action_submission::Choice::ActionIndex(legal.index)),
            request_id: 100 + i as u64,
        };
        let response = client
            .submit_action(with_bearer(
                pb::SubmitActionRequest {
                    token: String::new(),
                    action: Some(submission),
                },
                &token_idle_a,
            ))
            .await
            .expect("submit")
            .into_inner();
        let Some(pb::submit_action_response::Result::Rejected(r)) = response.result else {
            panic!("refused: {response:?}")
        };
        let want = if prompt_b.state_id == prompt_a.state_id {
            pb::ErrorReason::NotYourTurn
        } else {
            pb::ErrorReason::StaleState
        };
        assert_eq!(r.reason(), want, "{r:?}");
        seats[0][idle_a].submit(submission).await;
        let Err(r) = seats[0][idle_a].verdict().await else {
            panic!("refused on the stream too")
        };
        assert_eq!(r.reason(), want);
    }
    // The same with the action itself instead of its index, and with B's mover's full
    // prompt: A's mover's token plays in A, where B's cards are not in its hand or not legal.
    for legal in prompt_b
        .legal_actions
        .iter()
        .filter(|l| !prompt_a.legal_actions.iter().any(|x| x.index == l.index))
    {
        seats[0][movers[0]]
            .submit(pb::ActionSubmission {
                state_id: prompt_b.state_id,
                choice: Some(pb::action_submission::Choice::Action(
                    legal.action.expect("an action"),
                )),
                request_id: 7,
            })
            .await;
        let Err(r) = seats[0][movers[0]].verdict().await else {
            panic!("an action not legal in A is refused in A")
        };
        assert_ne!(r.reason(), pb::ErrorReason::Unspecified);
    }
    assert_eq!(summary(&mut matches, &a.match_id).await.actions, before_a);
    assert_eq!(summary(&mut matches, &b.match_id).await.actions, before_b);
    // Match B heard nothing of it: its seats get no verdict and no event before a Pong.
    for seat in &mut seats[1] {
        let got = seat.sync(1).await;
        assert!(
            got.iter().all(|m| !matches!(
                m.kind,
                Some(Kind::Event(_) | Kind::Accepted(_) | Kind::Rejected(_))
            )),
            "{got:?}"
        );
    }
    // Both prompts still stand: each mover plays its own, in its own match.
    for (m, prompt) in [(1, &prompt_b), (0, &prompt_a)] {
        let mover = &mut seats[m][movers[m]];
        mover
            .send_action(prompt.state_id, prompt.legal_actions[0].index, 9)
            .await;
        let Ok(ok) = mover.verdict().await else {
            panic!("the prompt still stands")
        };
        assert_eq!(ok.request_id, 9);
    }
    assert_eq!(summary(&mut matches, &a.match_id).await.actions, 1);
    assert_eq!(summary(&mut matches, &b.match_id).await.actions, 1);

    // A seat token on Watch shows its own match and seat.
    let mut feed = client
        .watch(pb::WatchRequest {
            token: token_idle_a.clone(),
            client_name: String::new(),
            resume: None,
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner();
    let first = feed
        .next()
        .await
        .expect("a message")
        .expect("ok")
        .message
        .expect("a message");
    let Some(Kind::Welcome(w)) = first.kind else {
        panic!("Welcome first")
    };
    assert_eq!(w.match_id, a.match_id);
    assert_eq!(w.seat, Some(idle_a as u32));
}

/// Follows a seat's own hand from its events: its Snapshot, its draws (which it sees) and its
/// plays. Returns the hand.
fn follow(hand: &mut Vec<(i32, i32)>, me: u32, e: &pb::event::Kind) {
    use pb::event::Kind as E;
    match e {
        E::RoundStarted(_) => hand.clear(),
        E::CardDrawn(d) if d.seat == me => {
            let c = d.card.as_ref().expect("a seat sees its own drawn card");
            hand.push((c.suit, c.rank));
        }
        E::CardDrawn(d) => assert!(d.card.is_none(), "seat {me} saw seat {}'s card", d.seat),
        E::CardPlayed(p) if p.seat == me => {
            let c = p.card.as_ref().expect("a played card is public");
            let at = hand
                .iter()
                .position(|&x| x == (c.suit, c.rank))
                .expect("a played card was in the hand");
            hand.remove(at);
        }
        _ => {}
    }
}

fn sorted(cards: &[pb::Card]) -> Vec<(i32, i32)> {
    let mut v: Vec<(i32, i32)> = cards.iter().map(|c| (c.suit, c.rank)).collect();
    v.sort_unstable();
    v
}

/// Plays a seat to the end, checking on every message that it sees its own cards and no one
/// else's.
async fn play_and_check(mut seat: Seat, me: u32, mut rng: u64) -> pb::MatchReport {
    let mut hand: Vec<(i32, i32)> = Vec::new();
    let mut request = 0;
    loop {
        let m = seat
            .next()
            .await
            .expect("the stream goes on to MatchFinished");
        match m.kind {
            Some(Kind::Snapshot(s)) => {
                let obs = s.observation.expect("an observation");
                assert_eq!(obs.seat, Some(me));
                hand = sorted(&obs.hand);
            }
            Some(Kind::Event(e)) => follow(
                &mut hand,
                me,
                e.event
                    .as_ref()
                    .and_then(|e| e.kind.as_ref())
                    .expect("an event"),
            ),
            Some(Kind::Prompt(p)) => {
                let obs = p.observation.as_ref().expect("an observation");
                assert_eq!(obs.seat, Some(me));
                assert_eq!(obs.hand.len() as u32, obs.hand_sizes[me as usize]);
                let mut mine = hand.clone();
                mine.sort_unstable();
                assert_eq!(
                    mine,
                    sorted(&obs.hand),
                    "seat {me}'s hand from its own events"
                );
                if p.required {
                    rng = rng
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let pick = &p.legal_actions[(rng >> 33) as usize % p.legal_actions.len()];
                    request += 1;
                    seat.send_action(p.state_id, pick.index, request).await;
                }
            }
            Some(Kind::Rejected(r)) => panic!("rejected: {r:?}"),
            Some(Kind::Finished(f)) => return f.report.expect("a report"),
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_sees_its_own_drawn_cards_and_nobody_elses() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    for (profile, seats, seed) in [
        (pb::Profile::Classic, 3, 41),
        (pb::Profile::Brazilian, 4, 42),
    ] {
        let created = create_match(
            &mut matches,
            pb::CreateMatchRequest {
                config: Some(config(profile, seats)),
                seed: Some(seed),
                time_control: Some(common::relaxed_clock()),
                ..Default::default()
            },
        )
        .await;
        let mut client = server.play_client().await;
        let mut feed = client
            .watch(pb::WatchRequest {
                token: created.spectator_token.clone(),
                client_name: String::new(),
                resume: Some(pb::Resume {
                    last_event_number: 0,
                    snapshot: false,
                }),
                ..Default::default()
            })
            .await
            .expect("watch")
            .into_inner();
        let mut players = Vec::new();
        for t in &created.seat_tokens {
            let seat = Seat::join(&mut client, &t.token, None).await;
            players.push(tokio::spawn(play_and_check(
                seat,
                t.seat,
                seed + t.seat as u64,
            )));
        }
        let mut reports = Vec::new();
        for p in players {
            reports.push(p.await.expect("a player"));
        }
        assert!(reports.iter().all(|r| r == &reports[0]));
        // The spectator saw every event from the first, and no drawn card at all.
        let mut next = 1;
        let mut draws = 0;
        loop {
            let m = feed
                .next()
                .await
                .expect("the feed ends with MatchFinished")
                .expect("no error")
                .message
                .expect("a message");
            match m.kind {
                Some(Kind::Event(e)) => {
                    assert_eq!(e.number, next);
                    next += 1;
                    if let Some(pb::event::Kind::CardDrawn(d)) = e.event.and_then(|e| e.kind) {
                        assert!(d.card.is_none(), "a spectator saw a drawn card");
                        draws += 1;
                    }
                }
                Some(Kind::Snapshot(s)) => panic!("resume from 0 sends events: {s:?}"),
                Some(Kind::Prompt(p)) => panic!("a spectator got a prompt: {p:?}"),
                Some(Kind::Finished(_)) => break,
                _ => {}
            }
        }
        assert!(draws > 0);
    }
}
