//! End to end: the server's built-in bots are the bot SDK's reference bots. Matches with
//! heuristic and search seats finish over loopback, and the same seed gives the same match.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use std::time::Duration;

use common::{Seat, TestServer, create_match, play_to_end};
use maumau::pb;

fn bots(kinds: &[(u32, pb::BotKind)]) -> Vec<pb::SeatBot> {
    kinds
        .iter()
        .map(|&(seat, kind)| pb::SeatBot {
            seat,
            kind: kind as i32,
        })
        .collect()
}

fn classic(seats: u32, max_rounds: u32) -> pb::MatchConfig {
    pb::MatchConfig {
        profile: pb::Profile::Classic as i32,
        seats,
        calls: pb::CallsMode::Challenge as i32,
        max_rounds,
        ..Default::default()
    }
}

/// The report of a finished match, polled (a match of built-in bots only starts at once).
async fn finished(server: &TestServer, id: &str) -> pb::MatchReport {
    let mut matches = server.matches().await;
    for _ in 0..1200 {
        if let Ok(r) = matches
            .get_result(pb::GetResultRequest {
                match_id: id.into(),
            })
            .await
        {
            return r.into_inner().report.expect("a report");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("match {id} did not finish within a minute");
}

async fn replay(server: &TestServer, id: &str) -> pb::Replay {
    server
        .matches()
        .await
        .get_replay(pb::GetReplayRequest {
            match_id: id.into(),
        })
        .await
        .expect("replay")
        .into_inner()
        .replay
        .expect("a replay")
}

/// What must be equal between two matches from the same seed: every action and the result.
fn moves(replay: &pb::Replay) -> Vec<(u32, u32)> {
    replay.actions.iter().map(|a| (a.seat, a.index)).collect()
}

/// One remote seat (seeded random choices) with a heuristic and a search seat.
async fn mixed_match(server: &TestServer, seed: u64) -> (pb::MatchReport, pb::Replay) {
    let mut matches = server.matches().await;
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(classic(3, 2)),
            seed: Some(seed),
            bots: bots(&[(1, pb::BotKind::Heuristic), (2, pb::BotKind::Search)]),
            ..Default::default()
        },
    )
    .await;
    assert_eq!(created.seat_tokens.len(), 1, "one remote seat");
    let mut client = server.play_client().await;
    let seat = Seat::join(&mut client, &created.seat_tokens[0].token, None).await;
    let report = play_to_end(seat, seed).await;
    (report, replay(server, &created.match_id).await)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heuristic_and_search_seats_finish_and_the_same_seed_replays_the_same_match() {
    let server = TestServer::start().await;
    let (first, first_replay) = mixed_match(&server, 41).await;
    assert_eq!(first.status(), pb::MatchStatus::Finished);
    assert!(first.result.is_some());
    let kinds: Vec<pb::BotKind> = first.players.iter().map(|p| p.bot()).collect();
    assert_eq!(
        kinds,
        [
            pb::BotKind::Unspecified,
            pb::BotKind::Heuristic,
            pb::BotKind::Search
        ]
    );
    assert!(
        first.seats[1].decisions > 0 && first.seats[2].decisions > 0,
        "{:?}",
        first.seats
    );
    assert!(first.seats.iter().all(|s| s.timeouts == 0 && !s.gave_up));

    let (second, second_replay) = mixed_match(&server, 41).await;
    assert_eq!(moves(&first_replay), moves(&second_replay));
    assert_eq!(first.result, second.result);

    // The server's replay of a match of built-in bots re-simulates to the same result.
    let verdict = server
        .matches()
        .await
        .verify_replay(pb::VerifyReplayRequest {
            replay: Some(first_replay),
        })
        .await
        .expect("verify")
        .into_inner();
    assert!(verdict.valid, "{verdict:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_of_built_in_bots_plays_by_itself_and_deterministically() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let mut runs = Vec::new();
    for _ in 0..2 {
        let created = create_match(
            &mut matches,
            pb::CreateMatchRequest {
                config: Some(classic(4, 1)),
                seed: Some(9),
                bots: bots(&[
                    (0, pb::BotKind::Search),
                    (1, pb::BotKind::Heuristic),
                    (2, pb::BotKind::Random),
                    (3, pb::BotKind::Heuristic),
                ]),
                ..Default::default()
            },
        )
        .await;
        assert!(created.seat_tokens.is_empty());
        let report = finished(&server, &created.match_id).await;
        assert_eq!(report.status(), pb::MatchStatus::Finished);
        runs.push((
            moves(&replay(&server, &created.match_id).await),
            report.result,
        ));
    }
    assert!(!runs[0].0.is_empty());
    assert_eq!(runs[0], runs[1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_built_in_bots_are_refused_with_a_reason() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let cases = [
        (
            vec![(0, 9)],
            pb::ErrorReason::InvalidArgument,
            "unknown bot kind",
        ),
        (
            vec![(0, 0)],
            pb::ErrorReason::InvalidArgument,
            "is required",
        ),
        (
            vec![
                (1, pb::BotKind::Search as i32),
                (1, pb::BotKind::Random as i32),
            ],
            pb::ErrorReason::InvalidSetup,
            "two built-in bots",
        ),
    ];
    for (seats, reason, words) in cases {
        let status = matches
            .create_match(pb::CreateMatchRequest {
                config: Some(classic(2, 1)),
                bots: seats
                    .iter()
                    .map(|&(seat, kind)| pb::SeatBot { seat, kind })
                    .collect(),
                ..Default::default()
            })
            .await
            .expect_err("refused");
        assert_eq!(maumau::wire::reason_of(&status), reason, "{status:?}");
        assert!(status.message().contains(words), "{status:?}");
    }
}

/// The seed commitment is SHA-256(salt ‖ seed as 8 bytes, big-endian) with a fresh 16-byte salt
/// per match, so two matches from one (small, guessable) seed publish different commitments and
/// neither is SHA-256 of the seed alone; the report and the replay reveal the salt, and
/// VerifyReplay refuses a replay whose seed or salt does not match its commitment.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_seed_commitment_is_salted_per_match_and_verify_replay_checks_it() {
    use sha2::Digest;
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let seed: u64 = 4242;
    let mut commitments = Vec::new();
    for _ in 0..2 {
        let created = create_match(
            &mut matches,
            pb::CreateMatchRequest {
                config: Some(classic(2, 1)),
                seed: Some(seed),
                bots: bots(&[(0, pb::BotKind::Random), (1, pb::BotKind::Random)]),
                ..Default::default()
            },
        )
        .await;
        assert_ne!(
            created.seed_commitment,
            sha2::Sha256::digest(seed.to_be_bytes()).to_vec(),
            "the commitment is not SHA-256 of the seed alone"
        );
        let report = finished(&server, &created.match_id).await;
        assert_eq!(report.seed, seed);
        assert_eq!(report.seed_salt.len(), 16, "a 16-byte salt is revealed");
        let mut committed = report.seed_salt.clone();
        committed.extend_from_slice(&seed.to_be_bytes());
        assert_eq!(
            created.seed_commitment,
            sha2::Sha256::digest(&committed).to_vec(),
            "commitment = SHA-256(salt ‖ seed as 8 big-endian bytes)"
        );
        assert_eq!(report.seed_commitment, created.seed_commitment);

        let replay = replay(&server, &created.match_id).await;
        assert_eq!(replay.seed_salt, report.seed_salt);
        assert_eq!(replay.seed_commitment, created.seed_commitment);
        let verify = |replay: pb::Replay| {
            let server = &server;
            async move {
                server
                    .matches()
                    .await
                    .verify_replay(pb::VerifyReplayRequest {
                        replay: Some(replay),
                    })
                    .await
                    .expect("verify")
                    .into_inner()
            }
        };
        assert!(verify(replay.clone()).await.valid);
        let mut salted = replay.clone();
        salted.seed_salt[0] ^= 1;
        let mut reseeded = replay.clone();
        reseeded.seed ^= 1;
        for tampered in [salted, reseeded] {
            let verdict = verify(tampered).await;
            assert!(!verdict.valid, "{verdict:?}");
            assert_eq!(
                verdict.error.map(|e| e.reason()),
                Some(pb::ErrorReason::ReplayMismatch)
            );
        }
        commitments.push(created.seed_commitment);
    }
    assert_ne!(
        commitments[0], commitments[1],
        "one seed, two matches, two salts: two commitments"
    );
}
