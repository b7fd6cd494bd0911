//! End to end: the lobby's server-stream form (LobbyFeed plus the unary DrainLobby) plays ladder
//! matches like a Lobby stream, with the same key checks; the operator's PruneReplays deletes
//! ladder replays but keeps results, across a restart.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/ladder.rs"]
mod ladder;

use std::time::Duration;

use common::{TestServer, with_bearer};
use ladder::{Entrant, classic_pairs, ladder_reason, register};
use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau::pb::match_service_client::MatchServiceClient;
use maumau_bot_sdk::bots::HeuristicBot;
use maumau_bot_sdk::runner::{RunOptions, run};
use tonic::transport::Channel;

const OPERATOR: &str = "op-secret";

fn tune(c: &mut common::Setup) {
    c.ladder = Some(classic_pairs(Duration::from_secs(10)));
    c.operator_token = Some(OPERATOR.into());
}

fn feed_request(key: &str) -> pb::LobbyFeedRequest {
    pb::LobbyFeedRequest {
        hello: Some(pb::LobbyHello {
            version_key: key.into(),
            max_matches: 1,
            profiles: vec!["classic".into()],
            seats: vec![2],
        }),
    }
}

/// The next message of a feed within 20 s; `None` when the stream ended.
async fn next(feed: &mut tonic::Streaming<pb::LobbyResponse>) -> Option<pb::lobby_response::Kind> {
    tokio::time::timeout(Duration::from_secs(20), feed.message())
        .await
        .expect("a lobby message within 20 s")
        .expect("the feed does not fail")
        .map(|m| m.kind.expect("a message kind"))
}

/// Plays the feed's invitations until one match ended, then drains with the unary call and
/// reads the feed to its end. Returns how the match ended.
async fn play_one_and_drain(
    url: String,
    mut c: LadderServiceClient<Channel>,
    mut feed: tonic::Streaming<pb::LobbyResponse>,
    key: String,
    seed: u64,
) -> pb::LadderMatchEnded {
    let ended = loop {
        match next(&mut feed).await {
            Some(pb::lobby_response::Kind::Invitation(inv)) => {
                let options = RunOptions::new(url.clone(), inv.seat_token.clone());
                tokio::spawn(async move {
                    let mut bot = HeuristicBot::new(seed);
                    run(&mut bot, &options).await.expect("the match is played");
                });
            }
            Some(pb::lobby_response::Kind::MatchEnded(e)) => break e,
            Some(_) => {}
            None => panic!("the feed ended before a match did"),
        }
    };
    // The key in the metadata this time.
    let drained = c
        .drain_lobby(with_bearer(pb::DrainLobbyRequest::default(), &key))
        .await
        .expect("drain")
        .into_inner();
    assert!(drained.was_open);
    loop {
        match next(&mut feed).await {
            Some(pb::lobby_response::Kind::Drained(_)) => break,
            // A second match may have been invited before the drain: play it out.
            Some(pb::lobby_response::Kind::Invitation(inv)) => {
                let options = RunOptions::new(url.clone(), inv.seat_token.clone());
                tokio::spawn(async move {
                    let mut bot = HeuristicBot::new(seed + 100);
                    run(&mut bot, &options).await.expect("the match is played");
                });
            }
            Some(_) => {}
            None => panic!("the feed ended without LobbyDrained"),
        }
    }
    assert!(
        next(&mut feed).await.is_none(),
        "the feed ends after LobbyDrained"
    );
    ended
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_feed_plays_drains_and_its_replays_can_be_pruned() {
    let server = TestServer::start_with(tune).await;
    let mut c = LadderServiceClient::new(server.channel().await);
    let Entrant {
        owner_key: owner_a,
        bot_id: bot_a,
        version_key: key_a,
        ..
    } = register(&mut c, "feed-a", "feed-a-bot", "v1").await;
    let key_b = register(&mut c, "feed-b", "feed-b-bot", "v1")
        .await
        .version_key;

    // Refusals, typed as on a Lobby stream.
    let e = c
        .lobby_feed(pb::LobbyFeedRequest::default())
        .await
        .expect_err("no hello");
    assert_eq!(ladder_reason(&e), pb::LadderErrorReason::NoHello);
    let e = c
        .lobby_feed(feed_request(&owner_a))
        .await
        .expect_err("an owner key");
    assert_eq!(ladder_reason(&e), pb::LadderErrorReason::Forbidden);
    let e = c
        .lobby_feed(feed_request("mmv_nonsense"))
        .await
        .expect_err("a bad key");
    assert_eq!(ladder_reason(&e), pb::LadderErrorReason::BadKey);
    let e = c
        .drain_lobby(pb::DrainLobbyRequest::default())
        .await
        .expect_err("no key");
    assert_eq!(ladder_reason(&e), pb::LadderErrorReason::BadKey);
    let e = c
        .drain_lobby(with_bearer(
            pb::DrainLobbyRequest {
                version_key: key_b.clone(),
            },
            &key_a,
        ))
        .await
        .expect_err("two different keys");
    assert_eq!(ladder_reason(&e), pb::LadderErrorReason::BadKey);
    let idle = c
        .drain_lobby(pb::DrainLobbyRequest {
            version_key: key_a.clone(),
        })
        .await
        .expect("drain without a lobby")
        .into_inner();
    assert!(!idle.was_open);

    // Both bots on feeds: each gets a welcome, plays one rated match, drains.
    let mut feed_a = c
        .lobby_feed(feed_request(&key_a))
        .await
        .expect("feed a")
        .into_inner();
    let mut feed_b = c
        .lobby_feed(with_bearer(feed_request(""), &key_b))
        .await
        .expect("feed b (key in the metadata)")
        .into_inner();
    for feed in [&mut feed_a, &mut feed_b] {
        match next(feed).await {
            Some(pb::lobby_response::Kind::Welcome(w)) => {
                assert_eq!(w.status(), pb::VersionStatus::Active);
                assert_eq!(w.season, "season-1");
            }
            other => panic!("expected a welcome, got {other:?}"),
        }
    }
    let (ea, eb) = tokio::join!(
        play_one_and_drain(server.url(), c.clone(), feed_a, key_a.clone(), 1),
        play_one_and_drain(server.url(), c.clone(), feed_b, key_b.clone(), 2),
    );
    assert!(ea.finished && ea.rated, "{ea:?}");
    assert_eq!(ea.ladder_match_id, eb.ladder_match_id);
    assert_eq!(
        {
            let mut p = [ea.placing, eb.placing];
            p.sort();
            p
        },
        [1, 2]
    );

    // Pruning: operator only; a dry run changes nothing; then the replay goes, the result stays.
    let prune = |keep: Option<u32>, dry_run: bool| pb::PruneReplaysRequest {
        older_than_seconds: 0,
        keep_newest: keep,
        dry_run,
    };
    let e = c
        .prune_replays(prune(Some(0), false))
        .await
        .expect_err("no operator token");
    assert_eq!(ladder_reason(&e), pb::LadderErrorReason::OperatorOnly);
    let e = c
        .prune_replays(with_bearer(prune(None, false), OPERATOR))
        .await
        .expect_err("no limit");
    assert_eq!(ladder_reason(&e), pb::LadderErrorReason::Invalid);
    // The record is written on the store's thread: wait until a dry run counts it.
    let mut seen = None;
    for _ in 0..200 {
        let dry = c
            .prune_replays(with_bearer(prune(Some(0), true), OPERATOR))
            .await
            .expect("dry run")
            .into_inner();
        if dry.pruned + dry.kept > 0 {
            seen = Some(dry);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let dry = seen.expect("the ended match's record is stored");
    assert!(
        dry.pruned >= 1 && dry.kept == 0 && dry.bytes_freed == 0,
        "{dry:?}"
    );
    let mut matches = MatchServiceClient::new(server.channel().await);
    let replay = matches
        .get_replay(pb::GetReplayRequest {
            match_id: ea.match_id.clone(),
        })
        .await
        .expect("the dry run kept the replay")
        .into_inner()
        .replay
        .expect("a replay");
    assert!(!replay.actions.is_empty());
    let kept = c
        .prune_replays(with_bearer(prune(Some(100), false), OPERATOR))
        .await
        .expect("keep 100")
        .into_inner();
    assert_eq!((kept.pruned, kept.kept), (0, dry.pruned));
    let done = c
        .prune_replays(with_bearer(prune(Some(0), false), OPERATOR))
        .await
        .expect("prune all")
        .into_inner();
    assert_eq!((done.pruned, done.kept), (dry.pruned, 0));
    assert!(done.bytes_freed > 0, "{done:?}");

    let check_pruned = |server_url: String, match_id: String| async move {
        let channel = Channel::from_shared(server_url)
            .expect("url")
            .connect()
            .await
            .expect("connect");
        let mut matches = MatchServiceClient::new(channel.clone());
        let e = matches
            .get_replay(pb::GetReplayRequest {
                match_id: match_id.clone(),
            })
            .await
            .expect_err("the replay is pruned");
        assert_eq!(maumau::wire::reason_of(&e), pb::ErrorReason::ReplayPruned);
        assert_eq!(e.code(), tonic::Code::NotFound);
        assert!(e.message().contains("replay pruned"), "{}", e.message());
        let report = matches
            .get_result(pb::GetResultRequest {
                match_id: match_id.clone(),
            })
            .await
            .expect("the result stays")
            .into_inner()
            .report
            .expect("a report");
        assert_eq!(report.status(), pb::MatchStatus::Finished);
        let match_id_played = match_id.clone();
        let summary = matches
            .get_match(pb::GetMatchRequest { match_id })
            .await
            .expect("the match")
            .into_inner()
            .r#match
            .expect("a summary");
        assert!(summary.replay_pruned);
        let mut c = LadderServiceClient::new(channel);
        let page = c
            .get_bot(pb::GetBotRequest {
                bot_id: bot_a,
                ..Default::default()
            })
            .await
            .expect("bot")
            .into_inner();
        // A second match may have been invited before the drain landed (and aborted when
        // nobody joined): look for the played match by id, not by position.
        let h = page.versions[0]
            .history
            .iter()
            .find(|h| h.match_id == match_id_played)
            .expect("the played match is in the history");
        assert!(h.replay_pruned, "{h:?}");
        assert!(page.versions[0].ratings[0].matches >= 1);
    };
    check_pruned(server.url(), ea.match_id.clone()).await;
    // Nothing left to prune.
    let again = c
        .prune_replays(with_bearer(prune(Some(0), false), OPERATOR))
        .await
        .expect("prune again")
        .into_inner();
    assert_eq!((again.pruned, again.kept), (0, 0));

    // After a restart the replay is still pruned and the result still there.
    drop(c);
    drop(matches);
    let data = server.stop().await;
    let server = TestServer::start_in(data, tune).await;
    check_pruned(server.url(), ea.match_id.clone()).await;
}
