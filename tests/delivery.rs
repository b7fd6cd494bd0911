//! End to end: EVENT_DELIVERY_WITH_PROMPT. A seat that asks for it receives its events in one
//! EventBatch with each prompt (and before a Pong or MatchFinished) instead of one message per
//! event; what the batches carry is exactly what the default mode sends, numbered the same, with
//! nothing lost or repeated across a reconnect.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/feed.rs"]
mod feed;

use common::{Seat, TestServer, config, create_match, four_seat_challenge_match, play_to_end};
use feed::{Style, check_batched, check_feed, flatten_all, resimulate};
use maumau::{pb, wire};
use pb::server_message::Kind;

async fn replay(server: &TestServer, match_id: &str) -> pb::Replay {
    server
        .matches()
        .await
        .get_replay(pb::GetReplayRequest {
            match_id: match_id.to_string(),
        })
        .await
        .expect("replay")
        .into_inner()
        .replay
        .expect("a replay")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_match_with_events_delivered_with_prompts() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = four_seat_challenge_match(&mut matches).await;
    let mut players = Vec::new();
    for t in &created.seat_tokens {
        let mut client = server.play_client().await;
        let seat =
            Seat::join_with(&mut client, &t.token, None, pb::EventDelivery::WithPrompt).await;
        // Sloppy play misses calls, so challenge windows open and optional prompts are batched too.
        let style = Style {
            seed: 77 + u64::from(t.seat),
            sloppy: true,
            reckless: false,
        };
        let seat_no = t.seat;
        players.push(tokio::spawn(async move {
            let _client = client;
            (seat_no, feed::play_recording(seat, style).await)
        }));
    }
    let mut feeds = Vec::new();
    for p in players {
        feeds.push(p.await.expect("a player"));
    }
    let replay = replay(&server, &created.match_id).await;
    let r = resimulate(&replay);
    let (mut optional, mut events, mut messages) = (0, 0, 0);
    let mut last_answered = false;
    for (seat, log) in &feeds {
        let who = format!("seat {seat}");
        let shape = check_batched(&who, log);
        let seat = u8::try_from(*seat).expect("a seat");
        let stats = check_feed(&r, &replay, Some(seat), log);
        assert_eq!(
            stats.events,
            r.events.len() - snapshot_events(log),
            "{who}: every event after the snapshot, once"
        );
        assert_eq!(
            shape.with_prompt,
            stats.required_prompts + stats.optional_prompts,
            "{who}: every prompt came in a batch"
        );
        // Every accepted action of the seat answered once, in a batch, in order, numbered with
        // the state after it and the index as accepted.
        let mine: Vec<(usize, &pb::ReplayAction)> = replay
            .actions
            .iter()
            .enumerate()
            .filter(|(_, a)| a.seat == u32::from(seat))
            .collect();
        let got = answers(log);
        assert_eq!(shape.accepted, got.len());
        assert_eq!(
            got.len(),
            mine.len(),
            "{who}: one answer per accepted action"
        );
        for ((k, a), answer) in mine.iter().zip(&got) {
            assert_eq!(answer.state_id, *k as u64 + 2, "{who}: {answer:?}");
            assert_eq!(answer.action_index, a.index, "{who}: {answer:?}");
        }
        assert!(
            got.windows(2).all(|w| w[0].request_id < w[1].request_id),
            "{who}: answers in the order of the submissions"
        );
        // The seat that made the last action has its answer held until MatchFinished.
        if replay
            .actions
            .last()
            .is_some_and(|a| a.seat == u32::from(seat))
        {
            let n = log.len();
            assert!(matches!(log[n - 1].kind, Some(Kind::Finished(_))));
            let Some(Kind::Batch(b)) = &log[n - 2].kind else {
                panic!("{who}: the last answer comes in a batch just before MatchFinished")
            };
            assert!(b.prompt.is_none());
            assert_eq!(b.accepted.last(), got.last());
            last_answered = true;
        }
        optional += stats.optional_prompts;
        events += stats.events;
        messages += log.len();
    }
    assert!(
        last_answered,
        "the last mover's answer came before MatchFinished"
    );
    assert!(optional > 0, "open challenges were offered in batches");
    // The point of the mode: far fewer messages than events.
    assert!(
        messages * 2 < events,
        "{messages} messages carried {events} events"
    );
}

/// The events a first join's Snapshot stood for (its last_event_number).
fn snapshot_events(log: &[pb::ServerMessage]) -> usize {
    log.iter()
        .find_map(|m| match &m.kind {
            Some(Kind::Snapshot(s)) => Some(s.last_event_number as usize),
            _ => None,
        })
        .unwrap_or(0)
}

/// The highest event number in a (batched) log.
fn last_number(log: &[pb::ServerMessage]) -> u64 {
    flatten_all(log)
        .iter()
        .filter_map(|m| match &m.kind {
            Some(Kind::Event(e)) => Some(e.number),
            Some(Kind::Snapshot(s)) => Some(s.last_event_number),
            _ => None,
        })
        .max()
        .unwrap_or(0)
}

/// Reads a batched seat's stream until its next required prompt.
async fn batched_prompt(seat: &mut Seat) -> pb::DecisionPrompt {
    seat.until(|m| match &m.kind {
        Some(Kind::Batch(pb::EventBatch {
            prompt: Some(p), ..
        })) if p.required => Some(p.clone()),
        _ => None,
    })
    .await
}

/// The ActionAccepted answers in a batched log, in order.
fn answers(log: &[pb::ServerMessage]) -> Vec<pb::ActionAccepted> {
    log.iter()
        .flat_map(|m| match &m.kind {
            Some(Kind::Batch(b)) => b.accepted.clone(),
            Some(Kind::Accepted(a)) => panic!("an ActionAccepted on its own: {a:?}"),
            _ => Vec::new(),
        })
        .collect()
}

/// Who moves after a batched seat's action.
enum Next {
    /// The batched seat again: its next required prompt.
    Again(pb::DecisionPrompt),
    /// The other seat: its required prompt.
    Other(pb::DecisionPrompt),
}

/// Answers `prompt` (a batched seat) with a listed action and reads both seats' streams until one
/// of them is prompted. The answer is held: it comes with the seat's next prompt, never alone.
async fn act_batched(
    seat: &mut Seat,
    other: &mut Seat,
    prompt: &pb::DecisionPrompt,
    n: u64,
) -> Next {
    let pick = &prompt.legal_actions[(n as usize * 7) % prompt.legal_actions.len()];
    seat.send_action(prompt.state_id, pick.index, n).await;
    let next = tokio::select! {
        p = batched_prompt(seat) => Next::Again(p),
        p = other.required_prompt() => Next::Other(p),
    };
    for m in &seat.log {
        match &m.kind {
            Some(Kind::Rejected(r)) => panic!("a listed action was refused: {r:?}"),
            Some(Kind::Event(_) | Kind::Prompt(_) | Kind::Accepted(_)) => {
                panic!("unbatched: {m:?}")
            }
            _ => {}
        }
    }
    next
}

/// Answers `prompt` (a seat in the default mode) and reads up to the verdict; returns the next
/// required prompt if the seat must act again.
async fn act_plain(
    seat: &mut Seat,
    prompt: &pb::DecisionPrompt,
    n: u64,
) -> Option<pb::DecisionPrompt> {
    let pick = &prompt.legal_actions[(n as usize * 5) % prompt.legal_actions.len()];
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batched_seat_resumes_mid_round_with_nothing_lost_or_repeated() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = common::relaxed_classic_pair(&mut matches, 17).await;
    let token0 = created.seat_tokens[0].token.clone();
    let mut client = server.play_client().await;
    let batched = pb::EventDelivery::WithPrompt;
    let mut seat0 = Seat::join_with(&mut client, &token0, None, batched).await;
    let mut seat1 = Seat::join(&mut client, &created.seat_tokens[1].token, None).await;

    // Seat 0 plays until seat 1 must move; seat 1 holds its move meanwhile. Each of seat 0's
    // answers comes once, in the first batch after its action: with its next prompt.
    let mut n = 0;
    let mut prompt = batched_prompt(&mut seat0).await;
    let p1 = loop {
        n += 1;
        let sent_at = seat0.log.len();
        let next = act_batched(&mut seat0, &mut seat1, &prompt, n).await;
        match next {
            Next::Again(p) => {
                let got = answers(&seat0.log[sent_at..]);
                assert_eq!(got.len(), 1, "one answer with the next prompt: {got:?}");
                assert_eq!(got[0].request_id, n);
                assert_eq!(got[0].state_id, p.state_id, "the state after the action");
                prompt = p;
            }
            Next::Other(p1) if n >= 3 => break p1,
            Next::Other(p1) => {
                assert!(
                    answers(&seat0.log[sent_at..]).is_empty(),
                    "held while seat 1 moves"
                );
                // Seat 1 moves once so that seat 0 plays several turns.
                let mut k = 100 + n;
                let mut p = Some(p1);
                while let Some(q) = p {
                    k += 1;
                    p = act_plain(&mut seat1, &q, k).await;
                }
                prompt = batched_prompt(&mut seat0).await;
                let got = answers(&seat0.log[sent_at..]);
                assert_eq!(got.len(), 1, "the held answer, once: {got:?}");
                assert_eq!(got[0].request_id, n);
                assert!(got[0].state_id < prompt.state_id, "{got:?}");
                let Some(Kind::Batch(b)) = seat0.log.last().and_then(|m| m.kind.clone()) else {
                    unreachable!("batched_prompt ends on a batch")
                };
                assert_eq!(b.accepted, got, "in the batch of the next prompt");
            }
        }
    };
    // Seat 0's last action's answer and events are held: a Ping gets them, in a batch without a
    // prompt, and then the Pong.
    let held_from = last_number(&seat0.log);
    let before_pong = seat0.sync(9).await;
    let Some(Kind::Batch(b)) = before_pong.last().and_then(|m| m.kind.clone()) else {
        panic!("the held events come just before the Pong: {before_pong:?}")
    };
    assert!(
        b.prompt.is_none(),
        "seat 1 is to move: no prompt for seat 0"
    );
    assert!(!b.events.is_empty(), "the action made events");
    assert_eq!(
        b.events[0].number,
        held_from + 1,
        "no gap before the held events"
    );
    assert_eq!(
        b.accepted.iter().map(|a| a.request_id).collect::<Vec<_>>(),
        vec![n],
        "the last action's answer, held until the Ping"
    );
    let answered: Vec<u64> = answers(&seat0.log).iter().map(|a| a.request_id).collect();
    assert_eq!(
        answered,
        (1..=n).collect::<Vec<_>>(),
        "every action answered once, in order"
    );
    let seen = last_number(&seat0.log);
    let before = seat0.log.clone();
    drop(seat0);

    // Seat 1 plays its turn while seat 0 is away, until seat 0 must act again.
    let mut p = Some(p1);
    let mut k = 1_000;
    while let Some(q) = p {
        k += 1;
        p = act_plain(&mut seat1, &q, k).await;
    }
    let last = seat1
        .log
        .iter()
        .filter_map(|m| match &m.kind {
            Some(Kind::Event(e)) => Some(e.number),
            _ => None,
        })
        .max()
        .expect("seat 1 saw events");
    assert!(last > seen, "events happened while seat 0 was away");

    // Back, batched again: Welcome, then one batch with exactly the events seen + 1 ..= last
    // and the pending prompt.
    let resume = pb::Resume {
        last_event_number: seen,
        snapshot: false,
    };
    let mut seat0 = Seat::join_with(&mut client, &token0, Some(resume), batched).await;
    let welcome = seat0.next().await.expect("Welcome");
    assert!(
        matches!(welcome.kind, Some(Kind::Welcome(_))),
        "{welcome:?}"
    );
    let resumed = seat0.next().await.expect("a batch");
    let Some(Kind::Batch(first)) = resumed.kind.clone() else {
        panic!("the missed events and the prompt in one batch, got {resumed:?}")
    };
    let numbers: Vec<u64> = first.events.iter().map(|e| e.number).collect();
    assert_eq!(numbers, (seen + 1..=last).collect::<Vec<_>>());
    let prompt = first.prompt.clone().expect("the pending prompt");
    assert!(prompt.required);
    assert_eq!(prompt.last_event_number, last);

    // A Resume on the live stream from the same number: Welcome and the same batch again.
    resume_on_live_stream(&mut seat0, seen).await;
    let resumed_at = seat0.log.len();
    let again = seat0.next().await.expect("a batch");
    let Some(Kind::Batch(second)) = again.kind else {
        panic!("the same batch again, got {again:?}")
    };
    assert_eq!(
        second.events, first.events,
        "the same events, redacted the same"
    );
    let p2 = second.prompt.expect("the prompt again");
    assert_eq!(
        (p2.state_id, &p2.legal_actions, &p2.observation),
        (prompt.state_id, &prompt.legal_actions, &prompt.observation)
    );

    // Seat 0 answers and both play to the end.
    seat0
        .send_action(prompt.state_id, prompt.legal_actions[0].index, 5_000)
        .await;
    let other = tokio::spawn(play_to_end(seat1, 5));
    let mut k = 5_000;
    let report = loop {
        let m = seat0
            .next()
            .await
            .expect("the stream goes on to MatchFinished");
        match m.kind {
            Some(Kind::Batch(pb::EventBatch {
                prompt: Some(p), ..
            })) if p.required => {
                k += 1;
                let pick = &p.legal_actions[(k as usize * 7) % p.legal_actions.len()];
                seat0.send_action(p.state_id, pick.index, k).await;
            }
            Some(Kind::Rejected(r)) => panic!("rejected: {r:?}"),
            Some(Kind::Finished(f)) => break f.report.expect("a report"),
            _ => {}
        }
    };
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    assert_eq!(other.await.expect("seat 1"), report);
    assert!(report.seats.iter().all(|s| s.timeouts == 0 && !s.gave_up));

    // Seat 0's whole feed, the first stream then the second from the repeated batch on, is the
    // engine's view of the match: every event once, in order, every prompt exact, no leak.
    let mut whole = before;
    whole.extend(seat0.log[resumed_at..].iter().cloned());
    check_batched("seat 0", &whole);
    let replay = replay(&server, &created.match_id).await;
    let r = resimulate(&replay);
    let stats = check_feed(&r, &replay, Some(0), &whole);
    assert_eq!(stats.events, r.events.len() - snapshot_events(&whole));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_event_delivery_is_refused() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            seed: Some(3),
            ..Default::default()
        },
    )
    .await;
    let mut client = server.play_client().await;
    let join = pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Join(pb::Join {
            token: created.seat_tokens[0].token.clone(),
            event_delivery: 99,
            ..Default::default()
        })),
    };
    let mut seat = common::open_play(&mut client, None, Some(join)).await;
    let status = seat.next_error().await;
    assert_eq!(
        wire::reason_of(&status),
        pb::ErrorReason::InvalidArgument,
        "{status:?}"
    );
    assert!(status.message().contains("event_delivery"), "{status:?}");
    // The seat can still join properly: Welcome, then its Snapshot (never batched).
    let mut seat = Seat::join_with(
        &mut client,
        &created.seat_tokens[0].token,
        None,
        pb::EventDelivery::WithPrompt,
    )
    .await;
    let welcome = seat.next().await.expect("Welcome");
    assert!(
        matches!(welcome.kind, Some(Kind::Welcome(_))),
        "{welcome:?}"
    );
    let snapshot = seat.next().await.expect("a Snapshot");
    assert!(
        matches!(snapshot.kind, Some(Kind::Snapshot(_))),
        "{snapshot:?}"
    );
}

/// A batched seat's held answer survives a Resume on the same stream and still comes once; a
/// rejection has everything held sent just before it, so answers keep the order of the actions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_answers_come_once_across_a_resume_and_before_a_rejection() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = common::relaxed_classic_pair(&mut matches, 17).await;
    let mut client = server.play_client().await;
    let batched = pb::EventDelivery::WithPrompt;
    let token0 = &created.seat_tokens[0].token;
    let mut seat0 = Seat::join_with(&mut client, token0, None, batched).await;
    let mut seat1 = Seat::join(&mut client, &created.seat_tokens[1].token, None).await;

    // Seat 0 acts until its answer is held (seat 1 to move), then restarts its feed on the same
    // stream: Welcome, no prompt, and the answer still held.
    let mut n = 0;
    let mut prompt = batched_prompt(&mut seat0).await;
    let p1 = loop {
        n += 1;
        match act_batched(&mut seat0, &mut seat1, &prompt, n).await {
            Next::Again(p) => prompt = p,
            Next::Other(p1) => break p1,
        }
    };
    let stale = prompt.state_id;
    let before = answers(&seat0.log).len();
    let seen = last_number(&seat0.log);
    resume_on_live_stream(&mut seat0, seen).await;
    assert_eq!(
        answers(&seat0.log).len(),
        before,
        "still held after the Resume"
    );

    // Seat 1 moves; seat 0's next prompt brings the held answer, once.
    let mut k = 100;
    let mut p = Some(p1);
    while let Some(q) = p {
        k += 1;
        p = act_plain(&mut seat1, &q, k).await;
    }
    let prompt = batched_prompt(&mut seat0).await;
    let Some(Kind::Batch(b)) = seat0.log.last().and_then(|m| m.kind.clone()) else {
        unreachable!("batched_prompt ends on a batch")
    };
    assert_eq!(
        b.accepted.iter().map(|a| a.request_id).collect::<Vec<_>>(),
        vec![n],
        "the answer held across the Resume, with the next prompt"
    );
    assert!(b.accepted[0].state_id < prompt.state_id);

    // Seat 0 acts (its answer held if seat 1 moves next), then sends a stale action: the held
    // answer comes before the rejection, in a batch without a prompt.
    n += 1;
    let next = act_batched(&mut seat0, &mut seat1, &prompt, n).await;
    let rejected_id = n + 1;
    seat0.send_action(stale, 0, rejected_id).await;
    let verdict = seat0
        .until(|m| match &m.kind {
            Some(Kind::Rejected(r)) => Some(r.clone()),
            _ => None,
        })
        .await;
    assert_eq!(verdict.request_id, rejected_id);
    assert_eq!(verdict.reason(), pb::ErrorReason::StaleState);
    let len = seat0.log.len();
    if matches!(next, Next::Other(_)) {
        let Some(Kind::Batch(b)) = &seat0.log[len - 2].kind else {
            panic!("the held answer comes just before the rejection")
        };
        assert!(b.prompt.is_none());
        assert_eq!(
            b.accepted.iter().map(|a| a.request_id).collect::<Vec<_>>(),
            vec![n]
        );
    }
    let answered: Vec<u64> = answers(&seat0.log).iter().map(|a| a.request_id).collect();
    assert_eq!(
        answered,
        (1..=n).collect::<Vec<_>>(),
        "each answer once, in order"
    );
    check_batched("seat 0", &seat0.log);
}

/// Sends a Resume from event `seen` on a seat's live stream and expects the Welcome first.
async fn resume_on_live_stream(seat: &mut Seat, seen: u64) {
    seat.send(pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Resume(pb::Resume {
            last_event_number: seen,
            snapshot: false,
        })),
    })
    .await;
    let welcome = seat.next().await.expect("Welcome");
    assert!(
        matches!(welcome.kind, Some(Kind::Welcome(_))),
        "{welcome:?}"
    );
}
