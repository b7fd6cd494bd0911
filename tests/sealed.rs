//! End to end: a sealed match (`CreateMatchRequest.sealed`) keeps its seed, salt and hidden cards
//! from its seats and spectators after it ends, until the operator reveals it with RevealMatch:
//! MatchFinished and GetResult carry no seed or salt, GetReplay and the viewer's frames that
//! would show hidden cards are refused with ERROR_REASON_SEALED (the operator reads them), the
//! seal survives a restart on the SQLite archive, and once revealed everything is open and the
//! seed verifies against the commitment sent in Welcome. Sealing and revealing are operator
//! calls.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

mod common;
#[path = "common/feed.rs"]
mod feed;
#[path = "common/web.rs"]
mod web;

use common::{Seat, TestServer, play_to_end, with_bearer};
use hyper::StatusCode;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau::{pb, wire};
use tonic::transport::Channel;

const OPERATOR: &str = "operator-secret";
const SEED: u64 = 5;

fn operator_server(c: &mut common::Setup) {
    c.operator_token = Some(OPERATOR.into());
}

/// GetResult's report, asked with `bearer` (a seat's token, the operator's, or none).
async fn result(
    matches: &mut MatchServiceClient<Channel>,
    id: &str,
    bearer: Option<&str>,
) -> pb::MatchReport {
    let message = pb::GetResultRequest {
        match_id: id.into(),
    };
    let req = match bearer {
        Some(t) => with_bearer(message, t),
        None => tonic::Request::new(message),
    };
    matches
        .get_result(req)
        .await
        .unwrap()
        .into_inner()
        .report
        .unwrap()
}

/// GetReplay asked with `bearer`.
async fn replay(
    matches: &mut MatchServiceClient<Channel>,
    id: &str,
    bearer: Option<&str>,
) -> Result<pb::Replay, pb::ErrorReason> {
    let message = pb::GetReplayRequest {
        match_id: id.into(),
    };
    let req = match bearer {
        Some(t) => with_bearer(message, t),
        None => tonic::Request::new(message),
    };
    matches
        .get_replay(req)
        .await
        .map(|r| r.into_inner().replay.unwrap())
        .map_err(|s| wire::reason_of(&s))
}

async fn reveal(
    matches: &mut MatchServiceClient<Channel>,
    id: &str,
    bearer: Option<&str>,
) -> Result<bool, pb::ErrorReason> {
    let message = pb::RevealMatchRequest {
        match_id: id.into(),
    };
    let req = match bearer {
        Some(t) => with_bearer(message, t),
        None => tonic::Request::new(message),
    };
    matches
        .reveal_match(req)
        .await
        .map(|r| r.into_inner().was_sealed)
        .map_err(|s| wire::reason_of(&s))
}

/// The final report a seat's token gets when it joins after the end.
async fn late_report(server: &TestServer, token: &str) -> pb::MatchReport {
    let mut play = server.play_client().await;
    let mut seat = Seat::join(&mut play, token, None).await;
    seat.until(|m| match &m.kind {
        Some(pb::server_message::Kind::Finished(f)) => f.report.clone(),
        _ => None,
    })
    .await
}

/// A report as a sealed match shows it: everything but seed and salt.
fn assert_sealed(report: &pb::MatchReport, commitment: &[u8], who: &str) {
    assert!(report.sealed, "{who}: marked sealed");
    assert_eq!(report.seed, 0, "{who}: no seed");
    assert!(report.seed_salt.is_empty(), "{who}: no salt");
    assert_eq!(
        report.seed_commitment, commitment,
        "{who}: the commitment stands"
    );
    assert!(report.result.is_some(), "{who}: the result is there");
}

/// The viewer's frames: status, reason header and, when served, the perspective shown.
async fn frames(server: &TestServer, id: &str, query: &str) -> (StatusCode, String, String) {
    let got = web::get(server, &format!("/matches/{id}/frames{query}"), false).await;
    let perspective = match got.status {
        StatusCode::OK => {
            let json: serde_json::Value = serde_json::from_slice(&got.body).unwrap();
            json["perspective"].to_string()
        }
        _ => String::new(),
    };
    (got.status, got.reason, perspective)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sealed_match_tells_nothing_of_its_deal_until_the_operator_reveals_it() {
    let server = TestServer::start_with(operator_server).await;
    let mut matches = server.matches().await;
    let request = pb::CreateMatchRequest {
        config: Some(common::config(pb::Profile::Classic, 2)),
        seed: Some(SEED),
        time_control: Some(common::relaxed_clock()),
        bots: vec![pb::SeatBot {
            seat: 1,
            kind: pb::BotKind::Heuristic as i32,
        }],
        sealed: true,
        ..Default::default()
    };
    // Sealing is the operator's: CreateMatch needs its token.
    let refused = matches
        .create_match(request.clone())
        .await
        .expect_err("CreateMatch without the operator token");
    assert_eq!(wire::reason_of(&refused), pb::ErrorReason::PermissionDenied);
    let created = matches
        .create_match(with_bearer(request, OPERATOR))
        .await
        .unwrap()
        .into_inner();
    let id = created.match_id.clone();
    let seat_token = created.seat_tokens[0].token.clone();
    let spectator = created.spectator_token.clone();
    let commitment = created.seed_commitment.clone();

    // Revealing a match still being played is refused (and needs the operator).
    assert_eq!(
        reveal(&mut matches, &id, Some(OPERATOR)).await,
        Err(pb::ErrorReason::MatchNotFinished)
    );

    let mut play = server.play_client().await;
    let seat = Seat::join(&mut play, &seat_token, None).await;
    let finished = play_to_end(seat, 9).await;
    assert_eq!(finished.status(), pb::MatchStatus::Finished);
    assert_sealed(&finished, &commitment, "MatchFinished");
    assert_sealed(
        &late_report(&server, &seat_token).await,
        &commitment,
        "MatchFinished to a seat that comes back",
    );
    assert_sealed(
        &feed::watch_to_end(&server, &spectator).await,
        &commitment,
        "MatchFinished to a spectator that comes back",
    );
    for bearer in [None, Some(seat_token.as_str()), Some(spectator.as_str())] {
        assert_sealed(
            &result(&mut matches, &id, bearer).await,
            &commitment,
            "GetResult",
        );
        assert_eq!(
            replay(&mut matches, &id, bearer).await.err(),
            Some(pb::ErrorReason::Sealed),
            "GetReplay with {bearer:?}"
        );
    }
    // The operator reads everything meanwhile (the tournament keeps its replays).
    let full = result(&mut matches, &id, Some(OPERATOR)).await;
    assert_eq!(
        (full.seed, full.seed_salt.len(), full.sealed),
        (SEED, 16, false)
    );
    let operator_replay = replay(&mut matches, &id, Some(OPERATOR)).await.unwrap();
    assert_eq!(operator_replay.seed, SEED);

    // The viewer: every hand, or a seat's view without its token, is refused; the public view
    // and a token's own view are shown (a token names its own perspective, so it cannot ask
    // for every hand).
    for query in ["?view=omniscient", "?view=0", "?view=1"] {
        let (status, reason, _) = frames(&server, &id, query).await;
        assert_eq!(
            (status, reason.as_str()),
            (StatusCode::FORBIDDEN, "ERROR_REASON_SEALED"),
            "{query}"
        );
    }
    for (query, shown) in [
        (String::new(), "\"public\""),
        ("?view=public".into(), "\"public\""),
        (format!("?token={spectator}"), "\"public\""),
        (format!("?token={seat_token}"), "\"seat 0\""),
    ] {
        let (status, _, perspective) = frames(&server, &id, &query).await;
        assert_eq!(status, StatusCode::OK, "{query}");
        assert_eq!(perspective, shown, "{query}");
    }
    // A token with another view is refused outright (it names its own perspective).
    for query in [
        format!("?token={spectator}&view=omniscient"),
        format!("?token={seat_token}&view=omniscient"),
    ] {
        let (status, reason, _) = frames(&server, &id, &query).await;
        assert_eq!(
            (status, reason.as_str()),
            (StatusCode::BAD_REQUEST, "ERROR_REASON_INVALID_ARGUMENT"),
            "{query}"
        );
    }

    // The seal survives a restart on the same data directory.
    drop(matches);
    drop(play);
    let dir = server.stop().await;
    let server = TestServer::start_in(dir, operator_server).await;
    let mut matches = server.matches().await;
    assert_sealed(
        &result(&mut matches, &id, Some(&seat_token)).await,
        &commitment,
        "GetResult after a restart",
    );
    assert_eq!(
        replay(&mut matches, &id, Some(&seat_token)).await.err(),
        Some(pb::ErrorReason::Sealed)
    );
    let (status, reason, _) = frames(&server, &id, "?view=omniscient").await;
    assert_eq!(
        (status, reason.as_str()),
        (StatusCode::FORBIDDEN, "ERROR_REASON_SEALED")
    );

    // RevealMatch is the operator's.
    for bearer in [None, Some(seat_token.as_str()), Some("wrong")] {
        assert_eq!(
            reveal(&mut matches, &id, bearer).await,
            Err(pb::ErrorReason::PermissionDenied)
        );
    }
    assert_eq!(reveal(&mut matches, &id, Some(OPERATOR)).await, Ok(true));
    assert_eq!(reveal(&mut matches, &id, Some(OPERATOR)).await, Ok(false));
    assert_eq!(
        reveal(&mut matches, "m-none", Some(OPERATOR)).await,
        Err(pb::ErrorReason::MatchNotFound)
    );

    // Revealed: everyone reads seed, salt and replay, and the seed is the committed one.
    let report = result(&mut matches, &id, None).await;
    assert!(!report.sealed);
    assert_eq!(report.seed, SEED);
    assert_eq!(
        wire::seed_commitment(&report.seed_salt, report.seed).to_vec(),
        commitment
    );
    assert_eq!(late_report(&server, &seat_token).await.seed, SEED);
    let open = replay(&mut matches, &id, Some(&seat_token)).await.unwrap();
    assert_eq!(open, operator_replay);
    assert!(maumau::replay::verify(&open).valid);
    let (status, _, perspective) = frames(&server, &id, "").await;
    assert_eq!(
        (status, perspective.as_str()),
        (StatusCode::OK, "\"omniscient\"")
    );
    let (status, _, _) = frames(&server, &id, "?view=1").await;
    assert_eq!(status, StatusCode::OK);
    server.stop().await;
}

/// A match that is not sealed is told as before: seed and salt at its end, replay open.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_that_is_not_sealed_reveals_its_seed_at_the_end() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = common::create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(common::config(pb::Profile::Classic, 2)),
            seed: Some(SEED),
            time_control: Some(common::relaxed_clock()),
            bots: vec![pb::SeatBot {
                seat: 1,
                kind: pb::BotKind::Random as i32,
            }],
            ..Default::default()
        },
    )
    .await;
    let mut play = server.play_client().await;
    let seat = Seat::join(&mut play, &created.seat_tokens[0].token, None).await;
    let report = play_to_end(seat, 1).await;
    assert_eq!((report.seed, report.sealed), (SEED, false));
    assert!(replay(&mut matches, &created.match_id, None).await.is_ok());
    // With no operator token configured, revealing is open, and changes nothing here.
    assert_eq!(
        reveal(&mut matches, &created.match_id, None).await,
        Ok(false)
    );
    server.stop().await;
}
