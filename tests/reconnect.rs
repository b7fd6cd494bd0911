//! End to end: a seat drops its Play stream in the middle of a round and comes back. It receives
//! exactly the events it missed (no gap, no duplicate), or a Snapshot when it asks for one, and
//! then its pending prompt; the match then completes.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use std::time::Duration;

use common::{Seat, TestServer, config, create_match, play_to_end, summary};
use maumau::pb;
use maumau::pb::play_service_client::PlayServiceClient;
use pb::server_message::Kind;
use tokio_stream::StreamExt;
use tonic::transport::Channel;

fn event_number(m: &pb::ServerMessage) -> Option<u64> {
    match &m.kind {
        Some(Kind::Event(e)) => Some(e.number),
        _ => None,
    }
}

/// The highest event number a seat has received.
fn last_number(seat: &Seat) -> u64 {
    seat.log.iter().filter_map(event_number).max().unwrap_or(0)
}

/// Answers `prompt` with one of its legal actions and reads up to the verdict. Returns the next
/// required prompt if the seat must act again (the server sends it before the verdict).
async fn act(seat: &mut Seat, prompt: &pb::DecisionPrompt, n: u64) -> Option<pb::DecisionPrompt> {
    let pick = &prompt.legal_actions[(n as usize * 7) % prompt.legal_actions.len()];
    seat.send_action(prompt.state_id, pick.index, n).await;
    let mut again = None;
    loop {
        let m = seat.next().await.expect("a message");
        match m.kind {
            Some(Kind::Prompt(p)) if p.required => again = Some(p),
            Some(Kind::Accepted(a)) => {
                assert_eq!(a.request_id, n);
                return again;
            }
            Some(Kind::Rejected(r)) => panic!("a listed action was refused: {r:?}"),
            _ => {}
        }
    }
}

/// Plays seat 0 until it has made `actions` decisions and it is no longer its turn (seat 1 must
/// move). Returns the number of actions made.
async fn play_until_other_turn(seat: &mut Seat, actions: u64, mut n: u64) -> u64 {
    let mut prompt = seat.required_prompt().await;
    loop {
        n += 1;
        match act(seat, &prompt, n).await {
            Some(p) => prompt = p,
            None if n >= actions => return n,
            None => prompt = seat.required_prompt().await,
        }
    }
}

/// A spectator feed.
async fn spectate(
    client: &mut PlayServiceClient<Channel>,
    token: &str,
) -> tonic::Streaming<pb::WatchResponse> {
    client
        .watch(pb::WatchRequest {
            token: token.to_string(),
            client_name: "spectator".into(),
            resume: None,
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner()
}

/// Reads the spectator feed until TurnStarted for `seat` with a number above `after`; returns
/// that event's number.
async fn wait_turn_of(
    feed: &mut tonic::Streaming<pb::WatchResponse>,
    seat: u32,
    after: u64,
) -> u64 {
    loop {
        let m = tokio::time::timeout(Duration::from_secs(10), feed.next())
            .await
            .expect("a spectator message within 10 s")
            .expect("the feed goes on")
            .expect("no error")
            .message
            .expect("a message");
        let Some(Kind::Event(e)) = &m.kind else {
            continue;
        };
        let turn = e.event.as_ref().and_then(|e| e.kind.as_ref());
        if e.number > after
            && let Some(pb::event::Kind::TurnStarted(t)) = turn
            && t.seat == seat
        {
            return e.number;
        }
    }
}

/// Reads a resumed feed: Welcome, then events `from..=to` in order, then the pending prompt.
async fn expect_resumed(seat: &mut Seat, from: u64, to: u64) -> pb::DecisionPrompt {
    let first = seat.next().await.expect("Welcome");
    let Some(Kind::Welcome(w)) = first.kind else {
        panic!("a resumed stream starts with Welcome, got {first:?}")
    };
    assert_eq!(w.seat, Some(0));
    for want in from..=to {
        let m = seat.next().await.expect("an event");
        assert_eq!(event_number(&m), Some(want), "event {want} next, got {m:?}");
    }
    let m = seat.next().await.expect("the pending prompt");
    match m.kind {
        Some(Kind::Prompt(p)) if p.required => {
            assert_eq!(p.last_event_number, to);
            p
        }
        other => panic!("the pending prompt after event {to}, got {other:?}"),
    }
}

/// Plays a seat to the end and checks that its event numbers go on from `next` without a gap.
async fn play_on_checked(mut seat: Seat, mut next: u64, seed: u64) -> pb::MatchReport {
    let mut n = seed * 1_000;
    loop {
        let m = seat
            .next()
            .await
            .expect("the stream goes on to MatchFinished");
        match m.kind {
            Some(Kind::Event(e)) => {
                assert_eq!(e.number, next, "consecutive event numbers");
                next += 1;
            }
            Some(Kind::Prompt(p)) if p.required => {
                n += 1;
                let pick = &p.legal_actions[(n as usize * 7) % p.legal_actions.len()];
                seat.send_action(p.state_id, pick.index, n).await;
            }
            Some(Kind::Rejected(r)) => panic!("rejected: {r:?}"),
            Some(Kind::Finished(f)) => return f.report.expect("a report"),
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_seat_resumes_with_exactly_the_missed_events_then_its_prompt() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = common::relaxed_classic_pair(&mut matches, 17).await;
    let token0 = created.seat_tokens[0].token.clone();
    let mut client = server.play_client().await;
    let mut spectator = spectate(&mut client, &created.spectator_token).await;
    let mut seat0 = Seat::join(&mut client, &token0, None).await;
    let seat1 = Seat::join(&mut client, &created.seat_tokens[1].token, None).await;
    let other = tokio::spawn(play_to_end(seat1, 5));

    // Seat 0 plays a few turns, then drops its stream while seat 1 is to move.
    let n = play_until_other_turn(&mut seat0, 3, 0).await;
    let seen = last_number(&seat0);
    // A first join gets a Snapshot; numbered events go on from the snapshot's last one.
    let from = seat0
        .log
        .iter()
        .find_map(|m| match &m.kind {
            Some(Kind::Snapshot(s)) => Some(s.last_event_number),
            _ => None,
        })
        .expect("a Snapshot");
    let numbers: Vec<u64> = seat0.log.iter().filter_map(event_number).collect();
    assert_eq!(numbers, (from + 1..=seen).collect::<Vec<_>>());
    let before = seat0.log.clone();
    drop(seat0);

    // Seat 1 plays on while seat 0 is away, until seat 0 must act again.
    let last = wait_turn_of(&mut spectator, 0, seen).await;
    assert!(last > seen, "events happened while seat 0 was away");
    let progress = summary(&mut matches, &created.match_id).await;
    assert_eq!(progress.status(), pb::MatchStatus::Running);
    assert_eq!(progress.round, 1, "still the first round");

    // Back: Welcome, exactly the events seen + 1 ..= last, then the pending prompt.
    let resume = pb::Resume {
        last_event_number: seen,
        snapshot: false,
    };
    let mut seat0 = Seat::join(&mut client, &token0, Some(resume)).await;
    let prompt = expect_resumed(&mut seat0, seen + 1, last).await;
    assert_eq!(prompt.observation.as_ref().and_then(|o| o.to_act), Some(0));

    // A Resume on the live stream asks again from further back: the same events come again,
    // redacted the same way, then the prompt again.
    let back = (seen - 5).max(from);
    seat0
        .send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Resume(pb::Resume {
                last_event_number: back,
                snapshot: false,
            })),
        })
        .await;
    let already = seat0.log.len();
    let again = expect_resumed(&mut seat0, back + 1, last).await;
    assert_eq!(again.state_id, prompt.state_id);
    assert_eq!(again.legal_actions, prompt.legal_actions);
    let replayed: Vec<&pb::ServerMessage> = seat0.log[already..]
        .iter()
        .filter(|m| event_number(m).is_some_and(|k| k <= seen))
        .collect();
    let original: Vec<&pb::ServerMessage> = before
        .iter()
        .filter(|m| event_number(m).is_some_and(|k| k > back))
        .collect();
    assert_eq!(replayed, original, "re-sent events are the ones first sent");

    // The seat answers the prompt and the match completes, numbers still consecutive.
    seat0
        .send_action(prompt.state_id, prompt.legal_actions[0].index, n + 1)
        .await;
    let report = play_on_checked(seat0, last + 1, 3).await;
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    assert_eq!(other.await.expect("seat 1"), report);
    assert!(report.seats.iter().all(|s| s.timeouts == 0 && !s.gave_up));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reconnect_may_ask_for_a_snapshot_instead() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::PenaltyPoints, 2)),
            seed: Some(23),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        },
    )
    .await;
    let token0 = created.seat_tokens[0].token.clone();
    let mut client = server.play_client().await;
    let mut spectator = spectate(&mut client, &created.spectator_token).await;
    let mut seat0 = Seat::join(&mut client, &token0, None).await;
    let seat1 = Seat::join(&mut client, &created.seat_tokens[1].token, None).await;
    let other = tokio::spawn(play_to_end(seat1, 8));

    let n = play_until_other_turn(&mut seat0, 4, 0).await;
    let seen = last_number(&seat0);
    drop(seat0);
    let last = wait_turn_of(&mut spectator, 0, seen).await;

    // snapshot: true wins over last_event_number.
    let resume = pb::Resume {
        last_event_number: seen,
        snapshot: true,
    };
    let mut seat0 = Seat::join(&mut client, &token0, Some(resume)).await;
    let first = seat0.next().await.expect("Welcome");
    assert!(matches!(first.kind, Some(Kind::Welcome(_))), "{first:?}");
    let m = seat0.next().await.expect("a Snapshot");
    let Some(Kind::Snapshot(snapshot)) = m.kind else {
        panic!("a Snapshot, got {m:?}")
    };
    assert_eq!(snapshot.last_event_number, last);
    let obs = snapshot.observation.as_ref().expect("an observation");
    assert_eq!(obs.seat, Some(0));
    assert_eq!(obs.to_act, Some(0));
    assert_eq!(obs.hand.len() as u32, obs.hand_sizes[0]);
    let m = seat0.next().await.expect("the pending prompt");
    let Some(Kind::Prompt(prompt)) = m.kind else {
        panic!("the pending prompt, got {m:?}")
    };
    assert!(prompt.required);
    assert_eq!(prompt.state_id, snapshot.state_id);
    assert_eq!(prompt.last_event_number, last);
    assert_eq!(prompt.observation.as_ref(), Some(obs));

    // A number beyond the log also gets a Snapshot.
    seat0
        .send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Resume(pb::Resume {
                last_event_number: 1 << 40,
                snapshot: false,
            })),
        })
        .await;
    let m = seat0
        .until(|m| match &m.kind {
            Some(Kind::Snapshot(s)) => Some(s.clone()),
            Some(Kind::Event(e)) => panic!("no event may follow a bad number: {e:?}"),
            _ => None,
        })
        .await;
    assert_eq!(m.last_event_number, last);
    assert_eq!(m.state_id, snapshot.state_id);
    let again = seat0.required_prompt().await;
    assert_eq!(again.state_id, prompt.state_id);

    seat0
        .send_action(prompt.state_id, prompt.legal_actions[0].index, n + 1)
        .await;
    let report = play_on_checked(seat0, last + 1, 4).await;
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    assert_eq!(other.await.expect("seat 1"), report);
}
