//! End to end: `PlayService.Resign` gives a seat up at once, so a match need not wait for the
//! clock of a seat whose program failed (a tournament resigns the seat of a program that exited).
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use std::time::Duration;

use common::{Seat, TestServer, config, create_match, summary, with_bearer};
use maumau::{pb, wire};
use tonic::transport::Channel;

/// Waits up to 60 s for the match to end. Every clock of the matches below is ten minutes or
/// more, so a match that ends in time ended because its seats resigned.
async fn ended(matches: &mut pb::match_service_client::MatchServiceClient<Channel>, id: &str) {
    let waited = tokio::time::timeout(Duration::from_secs(60), async {
        while summary(matches, id).await.status() != pb::MatchStatus::Finished {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "match {id} did not end");
}

async fn resign(
    play: &mut pb::play_service_client::PlayServiceClient<Channel>,
    token: &str,
) -> Result<bool, tonic::Status> {
    Ok(play
        .resign(with_bearer(pb::ResignRequest::default(), token))
        .await?
        .into_inner()
        .resigned)
}

fn expect_reason(result: Result<bool, tonic::Status>, reason: pb::ErrorReason) {
    let status = result.expect_err("refused");
    assert_eq!(wire::reason_of(&status), reason, "{status:?}");
    assert_eq!(status.code(), wire::status_code(reason), "{status:?}");
}

/// A clock that never runs out during a test: ten minutes of grace, a day to join.
fn patient() -> pb::TimeControl {
    pb::TimeControl {
        decision_ms: 600_000,
        bank_ms: 600_000,
        max_timeouts: 3,
        disconnect_grace_ms: 600_000,
        // Resigning forfeits whatever the policy says a seat that gives up does.
        give_up: pb::GiveUpPolicy::Bot as i32,
        ..Default::default()
    }
}

/// Two seats that never join resign before the start: the match starts without waiting for
/// them (a day's join timeout), the server plays their default actions, and both are placed
/// behind the built-in bot. Resigning again is no error; the spectator token, an unknown token
/// and a finished match's token are refused with their reasons.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seats_that_resign_before_joining_forfeit_and_the_match_goes_on_without_them() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 3)),
            seed: Some(7),
            time_control: Some(patient()),
            join_timeout_ms: 86_400_000,
            bots: vec![pb::SeatBot {
                seat: 0,
                kind: pb::BotKind::Random as i32,
            }],
            ..Default::default()
        },
    )
    .await;
    let token = |s: usize| created.seat_tokens[s - 1].token.clone();
    let mut play = server.play_client().await;

    assert!(resign(&mut play, &token(1)).await.expect("resign"));
    assert!(
        !resign(&mut play, &token(1)).await.expect("resign again"),
        "a seat resigns once"
    );
    let waiting = summary(&mut matches, &created.match_id).await;
    assert_eq!(
        waiting.status(),
        pb::MatchStatus::Waiting,
        "seat 2 may still join"
    );
    expect_reason(
        resign(&mut play, &created.spectator_token).await,
        pb::ErrorReason::NotSeated,
    );
    expect_reason(
        resign(&mut play, "0123456789abcdef0123456789abcdef").await,
        pb::ErrorReason::BadToken,
    );

    assert!(resign(&mut play, &token(2)).await.expect("resign"));
    ended(&mut matches, &created.match_id).await;
    expect_reason(
        resign(&mut play, &token(1)).await,
        pb::ErrorReason::MatchOver,
    );

    let report = matches
        .get_result(pb::GetResultRequest {
            match_id: created.match_id.clone(),
        })
        .await
        .expect("result")
        .into_inner()
        .report
        .expect("a report");
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    let forfeited: Vec<(bool, bool)> = report
        .seats
        .iter()
        .map(|s| (s.forfeited, s.resigned))
        .collect();
    assert_eq!(forfeited, [(false, false), (true, true), (true, true)]);
    assert!(report.seats.iter().all(|s| s.timeouts == 0), "{report:?}");
    let standings = &report.result.as_ref().expect("a result").standings;
    let first = standings.iter().find(|s| s.placing == 1).expect("a winner");
    assert_eq!(first.seat, 0, "{standings:?}");
}

/// A seat that joined and then resigns on its turn: the server plays its default action at
/// once (its ten-minute decision clock is not waited for), its stream goes on to MatchFinished,
/// and it is placed last though its game was not over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_that_resigns_on_its_turn_is_played_for_and_placed_last() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            seed: Some(3),
            time_control: Some(patient()),
            bots: vec![pb::SeatBot {
                seat: 1,
                kind: pb::BotKind::Random as i32,
            }],
            ..Default::default()
        },
    )
    .await;
    let token = &created.seat_tokens[0].token;
    let mut play = server.play_client().await;
    let mut seat = Seat::join(&mut play, token, None).await;
    seat.required_prompt().await;
    assert!(resign(&mut play, token).await.expect("resign"));
    let finished = seat
        .until(|m| match &m.kind {
            Some(pb::server_message::Kind::Finished(f)) => Some(f.clone()),
            _ => None,
        })
        .await;
    let report = finished.report.expect("a report");
    assert!(report.seats[0].forfeited && report.seats[0].gave_up && report.seats[0].resigned);
    assert_eq!(report.seats[0].timeouts, 0);
    let standings = &report.result.as_ref().expect("a result").standings;
    let mine = standings.iter().find(|s| s.seat == 0).expect("seat 0");
    assert_eq!(mine.placing, 2, "{standings:?}");
}
