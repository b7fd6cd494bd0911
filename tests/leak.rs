//! The wire-level leak test: everything a seat's Play stream carried, checked against a local
//! re-simulation of the match.
//!
//! For seeded matches of every profile (some seats remote, some the server's random bots; the
//! remote seats miss calls, challenge whenever they may, and now and then accuse or announce
//! falsely), every message of every remote seat's stream is recorded. After the match the replay
//! is downloaded and re-simulated with the engine, and each seat's feed must be exactly what the
//! engine's per-seat view gives: its numbered events are `event_for(event, seat)` for every
//! number without a gap, and every Snapshot and DecisionPrompt holds `observation(seat)` of the
//! state it names. Every card in every message must be one the seat could see by then.
//!
//! Half the remote seats join with EVENT_DELIVERY_WITH_PROMPT: their events come in batches with
//! their prompts, and the same checks hold for what the batches carry.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/feed.rs"]
mod feed;

use std::sync::Arc;
use std::time::Instant;

use common::{Seat, TestServer, config};
use feed::{Style, check_batched, check_feed, resimulate};
use maumau::pb;
use maumau_engine::{ChallengeOutcome, DrawCause, Event};

/// One match of the test: profile, seats, calls mode and which seats are remote.
struct Case {
    profile: pb::Profile,
    seats: u32,
    calls: pb::CallsMode,
    remote: Vec<u32>,
    seed: u64,
}

fn cases() -> Vec<Case> {
    use pb::CallsMode::{Challenge, Enforce};
    use pb::Profile::{Brazilian, Classic, PenaltyPoints, Romanian32};
    type Remotes = &'static [&'static [u32]];
    let mut cases = Vec::new();
    // (profile, seats, calls, the remote seats of each seeded match)
    let table: [(pb::Profile, u32, pb::CallsMode, Remotes); 9] = [
        (Classic, 2, Challenge, &[&[0, 1], &[1], &[0, 1]]),
        (Classic, 4, Challenge, &[&[0, 1, 2, 3], &[1, 3], &[0, 2, 3]]),
        (PenaltyPoints, 3, Challenge, &[&[0, 1, 2], &[0, 2], &[1]]),
        (Brazilian, 4, Challenge, &[&[0, 1, 2, 3], &[1, 2], &[0, 3]]),
        (Brazilian, 8, Challenge, &[&[0, 3, 5], &[1, 2, 6, 7]]),
        (Romanian32, 2, Challenge, &[&[0, 1], &[0], &[0, 1]]),
        (Romanian32, 3, Challenge, &[&[0, 1, 2], &[1, 2], &[0, 2]]),
        // Missed calls penalised at once: no window, CHALLENGE always refused.
        (Classic, 2, Enforce, &[&[0, 1]]),
        (Classic, 4, Enforce, &[&[0, 2]]),
    ];
    for (i, (profile, seats, calls, remotes)) in table.into_iter().enumerate() {
        for (j, remote) in remotes.iter().enumerate() {
            cases.push(Case {
                profile,
                seats,
                calls,
                remote: remote.to_vec(),
                seed: 1000 * i as u64 + 17 * j as u64 + 3,
            });
        }
    }
    cases
}

/// What one match exercised, summed over all matches.
#[derive(Default, Debug)]
struct Coverage {
    matches: usize,
    actions: usize,
    events_checked: usize,
    observations_checked: usize,
    cards_checked: usize,
    offences: usize,
    caught: usize,
    caught_out_of_turn: usize,
    false_accusations: usize,
    false_calls: usize,
    cures: usize,
    penalised: usize,
    stock_rebuilt: usize,
    rejected: usize,
    /// Seats that joined with EVENT_DELIVERY_WITH_PROMPT.
    batched_seats: usize,
    /// Their batches with a prompt, of those the ones with an optional prompt, and the events
    /// the batches carried.
    batches: usize,
    optional_in_batches: usize,
    events_in_batches: usize,
}

async fn run_case(server: &TestServer, case: &Case) -> Coverage {
    let mut matches = server.matches().await;
    let mut cfg = config(case.profile, case.seats);
    cfg.calls = case.calls as i32;
    // At most two rounds: long enough for stock rebuilds and a second deal, short enough to run
    // many matches.
    cfg.max_rounds = 2;
    let bots = (0..case.seats)
        .filter(|s| !case.remote.contains(s))
        .map(|s| pb::SeatBot {
            seat: s,
            kind: pb::BotKind::Random as i32,
        })
        .collect();
    let created = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(cfg),
            seed: Some(case.seed),
            bots,
            label: "leak".into(),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    assert_eq!(
        created
            .seat_tokens
            .iter()
            .map(|t| t.seat)
            .collect::<Vec<_>>(),
        case.remote,
        "one token per remote seat, in seat order"
    );
    let mut players = Vec::new();
    for (i, t) in created.seat_tokens.iter().enumerate() {
        let mut client = server.play_client().await;
        // Every other seat asks for every event from the start instead of a snapshot.
        let resume = (i % 2 == 1).then_some(pb::Resume {
            last_event_number: 0,
            snapshot: false,
        });
        // The deliveries rotate with the seed, so over the cases every combination of resume
        // and delivery is played.
        let delivery = [
            pb::EventDelivery::WithPrompt,
            pb::EventDelivery::AsTheyHappen,
            pb::EventDelivery::PerStep,
        ][(i + case.seed as usize) % 3];
        let seat = Seat::join_with(&mut client, &t.token, resume, delivery).await;
        let style = Style {
            seed: case.seed * 31 + t.seat as u64,
            sloppy: true,
            reckless: true,
        };
        let seat_no = t.seat;
        players.push(tokio::spawn(async move {
            let _client = client;
            (seat_no, delivery, feed::play_recording(seat, style).await)
        }));
    }
    let mut feeds = Vec::new();
    for p in players {
        feeds.push(p.await.expect("player task"));
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
    assert_eq!(replay.seed, case.seed);
    assert!(
        replay.actions.iter().all(|a| !a.timeout),
        "no seat ever waited for a prompt until its clock ran out"
    );
    let r = resimulate(&replay);
    assert_eq!(
        r.states.last().map(|g| g.phase()),
        Some(maumau_engine::Phase::Over),
        "the replay plays the match to its end"
    );
    let mut cov = Coverage {
        matches: 1,
        actions: replay.actions.len(),
        ..Coverage::default()
    };
    for (seat, delivery, messages) in &feeds {
        let seat = u8::try_from(*seat).expect("a seat");
        if *delivery == pb::EventDelivery::WithPrompt {
            let b = check_batched(&format!("seat {seat}"), messages);
            cov.batched_seats += 1;
            cov.batches += b.with_prompt;
            cov.events_in_batches += b.events;
            cov.optional_in_batches += messages
                .iter()
                .filter(|m| {
                    matches!(&m.kind, Some(pb::server_message::Kind::Batch(b))
                        if b.prompt.as_ref().is_some_and(|p| !p.required))
                })
                .count();
        }
        let stats = check_feed(&r, &replay, Some(seat), messages);
        cov.events_checked += stats.events;
        cov.observations_checked +=
            stats.snapshots + stats.required_prompts + stats.optional_prompts;
        cov.cards_checked += stats.cards;
        cov.rejected += stats.rejected;
        // Every decision of this seat in the replay was prompted, with that very state.
        for (k, a) in replay.actions.iter().enumerate() {
            if a.seat == u32::from(seat) && r.states[k].to_act() == Some(seat) {
                let prompted = feed::flatten_all(messages).iter().any(|m| {
                    matches!(&m.kind, Some(pb::server_message::Kind::Prompt(p))
                        if p.required && p.state_id == k as u64 + 1)
                });
                assert!(
                    prompted,
                    "seat {seat} acted at state {} without a required prompt for it",
                    k + 1
                );
            }
        }
    }
    // Challenges accepted from a seat that was not to move.
    for (k, a) in replay.actions.iter().enumerate() {
        let before = r.log_len[k];
        let after = r.log_len[k + 1];
        for e in &r.events[before..after] {
            if let Event::Challenged {
                by,
                outcome: ChallengeOutcome::Caught { .. },
            } = e
                && r.states[k].to_act() != Some(*by)
            {
                assert_eq!(a.seat, u32::from(*by));
                cov.caught_out_of_turn += 1;
            }
        }
    }
    for e in &r.events {
        match e {
            Event::OffenceOpened { .. } => cov.offences += 1,
            Event::Challenged {
                outcome: ChallengeOutcome::Caught { .. },
                ..
            } => cov.caught += 1,
            Event::Challenged {
                outcome: ChallengeOutcome::False,
                ..
            } => cov.false_accusations += 1,
            Event::Drew {
                cause: DrawCause::FalseCall,
                ..
            } => cov.false_calls += 1,
            Event::OffenceCured { .. } => cov.cures += 1,
            Event::OffencePenalised { .. } => cov.penalised += 1,
            Event::StockRebuilt { .. } => cov.stock_rebuilt += 1,
            _ => {}
        }
    }
    cov
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_message_a_seat_receives_is_its_engine_view_and_leaks_nothing() {
    let started = Instant::now();
    let server = Arc::new(TestServer::start().await);
    let cases = cases();
    let n = cases.len();
    let mut total = Coverage::default();
    let mut tasks = Vec::new();
    for case in cases {
        let server = server.clone();
        tasks.push(tokio::spawn(async move { run_case(&server, &case).await }));
    }
    for t in tasks {
        let cov = t.await.expect("a match task");
        total.matches += cov.matches;
        total.actions += cov.actions;
        total.events_checked += cov.events_checked;
        total.observations_checked += cov.observations_checked;
        total.cards_checked += cov.cards_checked;
        total.offences += cov.offences;
        total.caught += cov.caught;
        total.caught_out_of_turn += cov.caught_out_of_turn;
        total.false_accusations += cov.false_accusations;
        total.false_calls += cov.false_calls;
        total.cures += cov.cures;
        total.penalised += cov.penalised;
        total.stock_rebuilt += cov.stock_rebuilt;
        total.rejected += cov.rejected;
        total.batched_seats += cov.batched_seats;
        total.batches += cov.batches;
        total.optional_in_batches += cov.optional_in_batches;
        total.events_in_batches += cov.events_in_batches;
    }
    eprintln!("{total:#?} in {:?}", started.elapsed());
    assert_eq!(total.matches, n);
    // The matches exercised what the leak check is about.
    assert!(total.offences > 0, "missed calls opened windows");
    assert!(total.caught > 0, "challenges caught offenders");
    assert!(
        total.caught_out_of_turn > 0,
        "out-of-turn challenges were accepted"
    );
    assert!(
        total.false_accusations > 0,
        "brazilian false accusations happened"
    );
    assert!(total.false_calls > 0, "brazilian false calls happened");
    assert!(total.cures > 0, "romanian-32 late cures happened");
    assert!(total.penalised > 0, "enforce mode penalised missed calls");
    assert!(total.stock_rebuilt > 0, "the stock was rebuilt");
    assert!(total.rejected > 0, "some actions were refused");
    assert!(
        total.batched_seats > 0,
        "seats took events with their prompts"
    );
    assert!(
        total.batches > 0 && total.events_in_batches > total.batches,
        "batches carried several events each"
    );
    assert!(
        total.optional_in_batches > 0,
        "optional prompts (open challenges, late cures) came in batches"
    );
}
