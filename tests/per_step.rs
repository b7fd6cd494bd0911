//! End to end: EVENT_DELIVERY_PER_STEP, the event-by-event delivery the SDKs ask for when a bot
//! opts out of events batched with its prompts. Counted on real Play streams on loopback: each
//! seat gets at most one message per step of the match (one EventBatch with the step's answer,
//! events and prompt), the events as the steps happen (not held for the seat's prompt), and what
//! the batches carry is exactly what the seat may see, every event once.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/feed.rs"]
mod feed;

use common::{Seat, TestServer, four_seat_challenge_match};
use feed::{Style, check_feed, resimulate};
use maumau::pb;
use pb::server_message::Kind;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn per_step_sends_each_seat_at_most_one_message_per_step() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = four_seat_challenge_match(&mut matches).await;
    let mut players = Vec::new();
    for t in &created.seat_tokens {
        let mut client = server.play_client().await;
        let seat = Seat::join_with(&mut client, &t.token, None, pb::EventDelivery::PerStep).await;
        // Sloppy play misses calls, so challenge windows open: optional prompts and
        // out-of-turn actions are steps too.
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
    let replay = matches
        .get_replay(pb::GetReplayRequest {
            match_id: created.match_id.clone(),
        })
        .await
        .expect("replay")
        .into_inner()
        .replay
        .expect("a replay");
    let r = resimulate(&replay);
    let rejected: usize = feeds
        .iter()
        .flat_map(|(_, log)| log)
        .filter(|m| matches!(m.kind, Some(Kind::Rejected(_))))
        .count();
    // The table's steps: one per action it applied (each remote action and each timeout is
    // in the replay), one per action it refused, one per join.
    let steps = replay.actions.len() + rejected + created.seat_tokens.len();
    let mut all_events = 0;
    for (seat, log) in &feeds {
        let who = format!("seat {seat}");
        let seat = u8::try_from(*seat).expect("a seat");
        // Every event once, numbered, redacted for the seat; every prompt its own view.
        let stats = check_feed(&r, &replay, Some(seat), log);
        let mut batches = 0;
        let mut accepted = 0;
        for (i, m) in log.iter().enumerate() {
            match &m.kind {
                Some(Kind::Batch(b)) => {
                    batches += 1;
                    accepted += b.accepted.len();
                    assert!(
                        !b.events.is_empty() || !b.accepted.is_empty() || b.prompt.is_some(),
                        "{who}: message {i} is an empty batch"
                    );
                }
                Some(
                    Kind::Welcome(_)
                    | Kind::Snapshot(_)
                    | Kind::Rejected(_)
                    | Kind::Pong(_)
                    | Kind::Finished(_),
                ) => {}
                other => panic!("{who}: message {i} came on its own: {other:?}"),
            }
        }
        assert!(
            batches <= steps,
            "{who}: {batches} batches in {steps} steps: more than one message per step"
        );
        assert!(
            batches > stats.required_prompts + stats.optional_prompts,
            "{who}: {batches} batches for {} prompts: events come as the steps happen, not \
             held for the seat's prompts",
            stats.required_prompts + stats.optional_prompts
        );
        assert!(
            stats.events > batches,
            "{who}: {} events in {batches} messages",
            stats.events
        );
        let mine = replay
            .actions
            .iter()
            .filter(|a| a.seat == u32::from(seat) && !a.timeout)
            .count();
        assert_eq!(accepted, mine, "{who}: every accepted action answered once");
        all_events += stats.events;
    }
    assert!(all_events > 0);
}
