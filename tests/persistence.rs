//! End to end: finished matches survive a restart (with their tokens: a seat that comes back
//! after the restart still gets its final report); a graceful shutdown records the matches still
//! open (as aborted, with their report and replay), so none is lost silently; a data directory
//! of the file-per-match store is migrated (every match served as before, a damaged record
//! skipped, not fatal).
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/feed.rs"]
mod feed;

use std::time::Duration;

use common::{Seat, TestServer, config, play_to_end};
use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use pb::server_message::Kind;
use tonic::transport::Channel;

/// How long stopping a server may take; it must never hang on open streams.
const STOP: Duration = Duration::from_secs(10);

/// Everything the match service says about one match.
#[derive(Debug, PartialEq)]
struct Record {
    listed: pb::MatchSummary,
    summary: pb::MatchSummary,
    report: pb::MatchReport,
    replay: pb::Replay,
}

async fn list_all(
    matches: &mut MatchServiceClient<Channel>,
    status: pb::MatchStatus,
) -> Vec<pb::MatchSummary> {
    let mut out = Vec::new();
    let mut token = String::new();
    loop {
        let page = matches
            .list_matches(pb::ListMatchesRequest {
                status: status as i32,
                page_size: 0,
                page_token: token,
            })
            .await
            .expect("list")
            .into_inner();
        out.extend(page.matches);
        if page.next_page_token.is_empty() {
            return out;
        }
        token = page.next_page_token;
    }
}

async fn record(matches: &mut MatchServiceClient<Channel>, id: &str) -> Record {
    let listed = list_all(matches, pb::MatchStatus::Unspecified)
        .await
        .into_iter()
        .find(|m| m.match_id == id)
        .expect("the match is listed");
    let summary = common::summary(matches, id).await;
    let report = matches
        .get_result(pb::GetResultRequest {
            match_id: id.to_string(),
        })
        .await
        .expect("result")
        .into_inner()
        .report
        .expect("a report");
    let replay = matches
        .get_replay(pb::GetReplayRequest {
            match_id: id.to_string(),
        })
        .await
        .expect("replay")
        .into_inner()
        .replay
        .expect("a replay");
    Record {
        listed,
        summary,
        report,
        replay,
    }
}

fn bots(seats: impl IntoIterator<Item = u32>) -> Vec<pb::SeatBot> {
    seats
        .into_iter()
        .map(|seat| pb::SeatBot {
            seat,
            kind: pb::BotKind::Random as i32,
        })
        .collect()
}

async fn stop(server: TestServer) -> tempfile::TempDir {
    tokio::time::timeout(STOP, server.stop())
        .await
        .expect("the server stops without waiting on its clients")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_matches_survive_a_restart() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    // One match with a remote seat, played to the end over its stream...
    let played = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            seed: Some(21),
            bots: bots([1]),
            label: "played".into(),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    let mut client = server.play_client().await;
    let seat = Seat::join(&mut client, &played.seat_tokens[0].token, None).await;
    let report = play_to_end(seat, 3).await;
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    // ...and one of bots only, rated, in another profile.
    let rated = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Romanian32, 3)),
            bots: bots(0..3),
            rated: true,
            label: "bots".into(),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    feed::watch_to_end(&server, &rated.spectator_token).await;
    let ids = [played.match_id.clone(), rated.match_id.clone()];
    let mut before = Vec::new();
    for id in &ids {
        before.push(record(&mut matches, id).await);
    }
    let listed_before = list_all(&mut matches, pb::MatchStatus::Unspecified).await;
    drop(matches);
    drop(client);

    let dir = stop(server).await;
    assert!(
        dir.path().join("matches.sqlite").is_file() && !dir.path().join("matches").exists(),
        "one database, no file per match"
    );

    let server = TestServer::start_in(dir, |_| {}).await;
    let mut matches = server.matches().await;
    for (id, was) in ids.iter().zip(&before) {
        let now = record(&mut matches, id).await;
        assert_eq!(
            &now, was,
            "match {id} reads back identically after a restart"
        );
        assert_eq!(now.summary.status(), pb::MatchStatus::Finished);
    }
    assert_eq!(
        list_all(&mut matches, pb::MatchStatus::Unspecified).await,
        listed_before,
        "the list reads back identically, in the same order"
    );
    // The stored replay still verifies.
    let verdict = matches
        .verify_replay(pb::VerifyReplayRequest {
            replay: Some(before[0].replay.clone()),
        })
        .await
        .expect("verify")
        .into_inner();
    assert!(verdict.valid && verdict.finished, "{verdict:?}");
    // A seat token of a finished match still works after the restart: Join gets the welcome
    // and the final report, an action is answered "the match is over".
    let mut client = server.play_client().await;
    let mut seat = Seat::join(&mut client, &played.seat_tokens[0].token, None).await;
    let finished = seat
        .until(|m| match &m.kind {
            Some(Kind::Finished(f)) => f.report.clone(),
            _ => None,
        })
        .await;
    assert_eq!(
        finished, before[0].report,
        "the late seat gets the final report"
    );
    let answer = client
        .submit_action(pb::SubmitActionRequest {
            token: played.seat_tokens[0].token.clone(),
            action: Some(pb::ActionSubmission {
                state_id: 1,
                choice: Some(pb::action_submission::Choice::ActionIndex(192)),
                request_id: 1,
            }),
        })
        .await
        .expect("the old token is known")
        .into_inner();
    let Some(pb::submit_action_response::Result::Rejected(rejected)) = answer.result else {
        panic!("rejected expected: {answer:?}");
    };
    assert_eq!(
        rejected.reason(),
        pb::ErrorReason::MatchOver,
        "{rejected:?}"
    );
    // A token that never existed is still refused.
    let status = client
        .submit_action(pb::SubmitActionRequest {
            token: "0123456789abcdef0123456789abcdef".into(),
            action: None,
        })
        .await
        .expect_err("an unknown token");
    assert_eq!(
        maumau::wire::reason_of(&status),
        pb::ErrorReason::BadToken,
        "{status:?}"
    );
    drop((seat, client));
    stop(server).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_shutdown_records_every_open_match_as_aborted() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    // Running: seat 0 joined and is asked to act, but never does.
    let running = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 3)),
            seed: Some(8),
            bots: bots([1, 2]),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    let mut client = server.play_client().await;
    let mut seat = Seat::join(&mut client, &running.seat_tokens[0].token, None).await;
    let prompt = seat.required_prompt().await;
    // Waiting: one of its two remote seats never joins.
    let waiting = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Brazilian, 4)),
            seed: Some(9),
            bots: bots([2, 3]),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    let mut client2 = server.play_client().await;
    let lone = Seat::join(&mut client2, &waiting.seat_tokens[0].token, None).await;
    assert_eq!(
        common::summary(&mut matches, &running.match_id)
            .await
            .status(),
        pb::MatchStatus::Running
    );
    assert_eq!(
        common::summary(&mut matches, &waiting.match_id)
            .await
            .status(),
        pb::MatchStatus::Waiting
    );
    let actions_before = common::summary(&mut matches, &running.match_id)
        .await
        .actions;
    assert_eq!(u64::from(actions_before) + 1, prompt.state_id);

    // The connected seats are told, and their streams end, while the server stops.
    let told = [
        tokio::spawn(read_to_end(seat)),
        tokio::spawn(read_to_end(lone)),
    ];
    drop(matches);
    let dir = stop(server).await;
    for t in told {
        let report = t.await.expect("a reader");
        assert_eq!(report.status(), pb::MatchStatus::Aborted);
    }
    drop((client, client2));

    let server = TestServer::start_in(dir, |_| {}).await;
    let mut matches = server.matches().await;
    let aborted = list_all(&mut matches, pb::MatchStatus::Aborted).await;
    for (id, actions) in [(&running.match_id, actions_before), (&waiting.match_id, 0)] {
        assert!(
            aborted.iter().any(|m| &m.match_id == id),
            "{id} is listed as aborted"
        );
        let r = record(&mut matches, id).await;
        assert_eq!(r.summary.status(), pb::MatchStatus::Aborted);
        assert_eq!(r.report.status(), pb::MatchStatus::Aborted);
        assert_eq!(r.report.actions, actions);
        assert_eq!(r.replay.actions.len() as u32, actions);
        assert_eq!(
            maumau::wire::seed_commitment(&r.report.seed_salt, r.report.seed).to_vec(),
            r.report.seed_commitment
        );
        // What was played re-simulates; the match did not reach its end.
        let verdict = matches
            .verify_replay(pb::VerifyReplayRequest {
                replay: Some(r.replay),
            })
            .await
            .expect("verify")
            .into_inner();
        assert!(verdict.valid && !verdict.finished, "{verdict:?}");
    }
    assert!(
        list_all(&mut matches, pb::MatchStatus::Running)
            .await
            .is_empty()
            && list_all(&mut matches, pb::MatchStatus::Waiting)
                .await
                .is_empty(),
        "nothing is left open after a restart"
    );
    stop(server).await;
}

/// Reads a seat's stream until MatchFinished and checks that the stream then ends.
async fn read_to_end(mut seat: Seat) -> pb::MatchReport {
    let report = seat
        .until(|m| match &m.kind {
            Some(Kind::Finished(f)) => f.report.clone(),
            _ => None,
        })
        .await;
    assert!(
        matches!(seat.next_item().await, None | Some(Err(_))),
        "MatchFinished is the last message"
    );
    report
}

/// Copies a directory tree.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read the fixture") {
        let e = e.expect("an entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("a type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).expect("copy");
        }
    }
}

/// A data directory written by the file-per-match server (tests/data/store-v0, with its own
/// answers in `listed.pb`) opens: every match is listed and served as before, a second file of
/// one match is skipped, damaged files are left alone and do not stop the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_per_match_data_directory_is_migrated() {
    use prost::Message;
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/store-v0");
    let old = pb::ListMatchesResponse::decode(
        std::fs::read(fixture.join("listed.pb"))
            .expect("the old server's list")
            .as_slice(),
    )
    .expect("decode");
    assert_eq!(old.matches.len(), 5);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = dir.path().join("matches");
    copy_dir(&fixture.join("matches"), &store);
    let files: Vec<std::path::PathBuf> = std::fs::read_dir(&store)
        .expect("read")
        .map(|e| e.expect("an entry").path())
        .collect();
    let records: Vec<pb::StoredMatch> = files
        .iter()
        .map(|p| {
            pb::StoredMatch::decode(std::fs::read(p).expect("read").as_slice()).expect("a record")
        })
        .collect();
    // A second copy of one record, garbage, a truncated record, an empty file, a leftover
    // temporary file and a directory.
    let original = std::fs::read(&files[0]).expect("record");
    std::fs::write(store.join("zz-copy.pb"), &original).expect("write");
    std::fs::write(store.join("garbage.pb"), [0xFF_u8; 37]).expect("write");
    std::fs::write(
        store.join("truncated.pb"),
        &original[..original.len() * 2 / 3],
    )
    .expect("write");
    std::fs::write(store.join("empty.pb"), b"").expect("write");
    std::fs::write(store.join("half-written.pb.tmp"), &original[..10]).expect("write");
    std::fs::create_dir(store.join("a-directory.pb")).expect("mkdir");

    let server = TestServer::start_in(dir, |_| {}).await;
    let mut matches = server.matches().await;
    assert_eq!(
        list_all(&mut matches, pb::MatchStatus::Unspecified).await,
        old.matches,
        "listed as the old server listed them, in the same order, each once"
    );
    for r in &records {
        let report = r.report.clone().expect("a report");
        let now = record(&mut matches, &report.match_id).await;
        assert_eq!(now.report, report);
        assert_eq!(Some(now.replay), r.replay.clone());
        let was = old.matches.iter().find(|m| m.match_id == report.match_id);
        assert_eq!(Some(&now.summary), was);
    }
    let aborted = list_all(&mut matches, pb::MatchStatus::Aborted).await;
    assert_eq!(aborted.len(), 1, "{aborted:?}");
    // The imported files moved out of the way; the damaged ones stay, for the operator; the
    // partial file is gone.
    let imported = server.data_dir.path().join("matches.imported");
    assert_eq!(
        std::fs::read_dir(&imported).expect("imported").count(),
        files.len() + 1
    );
    for name in ["garbage.pb", "truncated.pb", "empty.pb"] {
        assert!(store.join(name).exists(), "{name} is left in place");
    }
    assert!(!store.join("half-written.pb.tmp").exists());
    // The server still works, and a restart reads the same (nothing is imported twice).
    let again = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, 2)),
            bots: bots(0..2),
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner();
    let report = feed::watch_to_end(&server, &again.spectator_token).await;
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    let listed = list_all(&mut matches, pb::MatchStatus::Unspecified).await;
    assert_eq!(listed.len(), 6);
    assert_eq!(
        listed[0].match_id, again.match_id,
        "the new match is the newest"
    );
    drop(matches);
    let dir = stop(server).await;
    let server = TestServer::start_in(dir, |_| {}).await;
    let mut matches = server.matches().await;
    assert_eq!(
        list_all(&mut matches, pb::MatchStatus::Unspecified).await,
        listed
    );
    stop(server).await;
}
