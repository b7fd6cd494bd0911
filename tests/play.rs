//! End to end: full matches over loopback gRPC, every profile.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use common::{Seat, TestServer, config, play_to_end};
use maumau::pb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_matches_of_every_profile_with_remote_seats_and_bots() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    for (profile, seats, remote) in [
        (pb::Profile::Classic, 4, 4),
        (pb::Profile::PenaltyPoints, 3, 2),
        (pb::Profile::Brazilian, 8, 3),
        (pb::Profile::Romanian32, 2, 2),
    ] {
        let bots = (remote..seats)
            .map(|s| pb::SeatBot {
                seat: s,
                kind: pb::BotKind::Random as i32,
            })
            .collect();
        let created = matches
            .create_match(pb::CreateMatchRequest {
                config: Some(config(profile, seats)),
                seed: Some(7),
                bots,
                ..Default::default()
            })
            .await
            .expect("create")
            .into_inner();
        assert_eq!(created.seat_tokens.len(), remote as usize);
        let mut players = Vec::new();
        for (i, t) in created.seat_tokens.iter().enumerate() {
            let mut client = server.play_client().await;
            let seat = Seat::join(&mut client, &t.token, None).await;
            players.push(tokio::spawn(play_to_end(seat, i as u64 + 1)));
        }
        let mut reports = Vec::new();
        for p in players {
            reports.push(p.await.expect("player task"));
        }
        let report = &reports[0];
        assert_eq!(report.status(), pb::MatchStatus::Finished);
        assert!(
            reports.iter().all(|r| r == report),
            "every seat gets the same report"
        );
        assert_eq!(report.seed, 7);
        assert_eq!(
            report.seed_commitment,
            maumau::wire::seed_commitment(&report.seed_salt, 7).to_vec()
        );
        let result = report.result.as_ref().expect("a result");
        assert_eq!(result.standings.len(), seats as usize);
        assert!(result.standings.iter().any(|s| s.placing == 1));
        // The replay verifies by re-simulation.
        let replay = matches
            .get_replay(pb::GetReplayRequest {
                match_id: created.match_id.clone(),
            })
            .await
            .expect("replay")
            .into_inner()
            .replay
            .expect("a replay");
        assert_eq!(replay.actions.len() as u32, report.actions);
        let verdict = matches
            .verify_replay(pb::VerifyReplayRequest {
                replay: Some(replay),
            })
            .await
            .expect("verify")
            .into_inner();
        assert!(verdict.valid && verdict.finished, "{verdict:?}");
    }
}
