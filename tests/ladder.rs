//! End to end: the ladder over loopback gRPC. Owners register, add versions, open lobbies and play
//! their invitations with the Rust SDK's runner; rated results reach the leaderboard. Also: bad
//! and revoked keys are refused with typed reasons, drain closes a lobby after its matches, and a
//! seat that never joins aborts the match unrated.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/ladder.rs"]
mod ladder;
#[path = "common/web.rs"]
mod web;

use std::time::Duration;

use common::{Setup, TestServer, with_bearer};
use ladder::{Entrant, Lobby, board, classic_pairs, get_bot, hello, ladder_reason, play};
use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau_ladder_service::LadderSettings;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

/// A ladder server making 2-seat classic matches, with a short join deadline.
async fn ladder_server(join_deadline: Duration, codes: Vec<String>) -> TestServer {
    TestServer::start_with(|c| {
        c.ladder = Some(LadderSettings {
            invitation_codes: codes,
            ..classic_pairs(join_deadline)
        });
    })
    .await
}

async fn client(server: &TestServer) -> LadderServiceClient<Channel> {
    LadderServiceClient::new(server.channel().await)
}

/// Registers `name` with a bot `name-bot` and its version `v1`.
async fn enter(c: &mut LadderServiceClient<Channel>, name: &str) -> Entrant {
    ladder::register(c, name, &format!("{name}-bot"), "v1").await
}

/// Registers two bots and opens a welcomed lobby for each, one match at a time.
async fn two_in_lobbies(
    c: &mut LadderServiceClient<Channel>,
    name_a: &str,
    name_b: &str,
) -> (Entrant, Lobby, Entrant, Lobby) {
    let a = enter(c, name_a).await;
    let b = enter(c, name_b).await;
    let mut la = Lobby::open(c, hello(&a.version_key, 1, 2))
        .await
        .expect("a");
    la.welcome().await;
    let mut lb = Lobby::open(c, hello(&b.version_key, 1, 2))
        .await
        .expect("b");
    lb.welcome().await;
    (a, la, b, lb)
}

/// Plays every invitation until `rated` rated matches ended; returns the placings seen.
async fn play_rated(url: String, mut lobby: Lobby, rated: usize, seed: u64) -> Vec<u32> {
    let mut placings = Vec::new();
    let mut n = 0;
    while placings.len() < rated {
        match lobby.next().await {
            Some(pb::lobby_response::Kind::Invitation(inv)) => {
                assert!(inv.rated);
                assert_eq!((inv.profile.as_str(), inv.seats), ("classic", 2));
                n += 1;
                play(&url, &inv, seed + n);
            }
            // An opponent that has played its share closes its lobby, and may do so just after
            // the matchmaker invited it again: that match aborts unrated as its no-show.
            Some(pb::lobby_response::Kind::MatchEnded(e))
                if !e.finished && e.reason.contains("did not join") =>
            {
                assert!(!e.rated, "{e:?}");
            }
            Some(pb::lobby_response::Kind::MatchEnded(e)) => {
                assert!(e.finished, "{e:?}");
                assert!(e.rated, "{e:?}");
                assert!(e.rating.is_some());
                placings.push(e.placing);
            }
            Some(_) => {}
            None => panic!("the lobby closed"),
        }
    }
    placings
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rated_matches_reach_the_leaderboard() {
    let server = ladder_server(Duration::from_secs(10), Vec::new()).await;
    let mut c = client(&server).await;
    let mut entrants = Vec::new();
    for name in ["ada", "bo", "cy", "di"] {
        entrants.push(enter(&mut c, name).await);
    }
    let mut tasks = Vec::new();
    for (i, e) in entrants.iter().enumerate() {
        let mut lobby = Lobby::open(&mut c, hello(&e.version_key, 1, 2))
            .await
            .expect("lobby opens");
        let w = lobby.welcome().await;
        assert_eq!(w.version_id, e.version_id);
        assert_eq!(w.bot_id, e.bot_id);
        assert_eq!(w.status(), pb::VersionStatus::Active);
        assert_eq!(w.season, "season-1");
        tasks.push(play_rated(server.url(), lobby, 2, 100 * i as u64));
    }
    let placings = futures_join(tasks).await;
    for p in &placings {
        assert!(p.iter().all(|&x| x == 1 || x == 2), "{p:?}");
    }

    let board = board(&mut c, "").await;
    assert_eq!(board.season, "season-1");
    assert_eq!(board.standings.len(), 4, "{board:?}");
    let total: u32 = board.standings.iter().map(|s| s.matches).sum();
    assert!(
        total >= 8,
        "each bot played at least two rated matches: {board:?}"
    );
    // Few matches each: all provisional, ranked by score among themselves.
    assert!(board.standings.iter().all(|s| s.provisional));
    let scores: Vec<f64> = board
        .standings
        .iter()
        .map(|s| s.rating.expect("a rating").score)
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    assert!(
        board
            .standings
            .iter()
            .any(|s| (s.rating.expect("rating").mu - 25.0).abs() > 0.01),
        "ratings moved from the start"
    );

    // Paging: one line per page, then the token runs out.
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let page = c
            .get_leaderboard(pb::GetLeaderboardRequest {
                profile: "classic".into(),
                page_size: 1,
                page_token: token.clone(),
                ..Default::default()
            })
            .await
            .expect("page")
            .into_inner();
        seen.extend(page.standings.iter().map(|s| s.bot_id));
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(
        seen,
        board.standings.iter().map(|s| s.bot_id).collect::<Vec<_>>()
    );

    // A bot page: its version with a rating and a finished, placed history.
    let bot = get_bot(&mut c, entrants[0].bot_id).await;
    assert_eq!(bot.name, "ada-bot");
    assert_eq!(bot.owner_name, "ada");
    let v = &bot.versions[0];
    assert_eq!(v.version_id, entrants[0].version_id);
    assert_eq!(v.ratings.len(), 1);
    assert_eq!(v.ratings[0].profile, "classic");
    let finished: Vec<_> = v
        .history
        .iter()
        .filter(|h| h.state() == pb::LadderMatchState::Finished)
        .collect();
    assert!(finished.len() >= 2, "{v:?}");
    assert!(finished.iter().all(|h| h.placing >= 1 && h.joined));
    assert!(finished.iter().all(|h| h.match_id.starts_with('m')));
    assert_eq!(v.ratings[0].matches as usize, finished.len());

    // Owner keys and bad input are checked.
    let err = c
        .get_leaderboard(pb::GetLeaderboardRequest {
            profile: "whist".into(),
            ..Default::default()
        })
        .await
        .expect_err("unknown profile");
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::Invalid);
    for token in ["x", "-1", "99", "18446744073709551615"] {
        let err = c
            .get_leaderboard(pb::GetLeaderboardRequest {
                profile: "classic".into(),
                page_token: token.into(),
                ..Default::default()
            })
            .await
            .expect_err("a bad page token");
        assert_eq!(
            ladder_reason(&err),
            pb::LadderErrorReason::Invalid,
            "{token}"
        );
    }
}

/// Waits for every future (plain tokio, no extra crate).
async fn futures_join<F: std::future::Future<Output = T> + Send + 'static, T: Send + 'static>(
    fs: Vec<F>,
) -> Vec<T> {
    let handles: Vec<_> = fs.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("task"));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_and_revoked_keys_are_refused() {
    let server = ladder_server(Duration::from_secs(10), Vec::new()).await;
    let mut c = client(&server).await;
    let e = enter(&mut c, "eve").await;

    // A key of the right form that does not exist.
    let fake = format!("mmv_{}", "a".repeat(52));
    let err = Lobby::open(&mut c, hello(&fake, 1, 2))
        .await
        .err()
        .expect("refused");
    assert_eq!(err.code(), tonic::Code::Unauthenticated);
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::BadKey);
    assert_eq!(maumau::wire::reason_of(&err), pb::ErrorReason::BadToken);

    // Garbage, and no key at all.
    for key in ["not-a-key", ""] {
        let err = Lobby::open(&mut c, hello(key, 1, 2))
            .await
            .err()
            .expect("refused");
        assert_eq!(ladder_reason(&err), pb::LadderErrorReason::BadKey, "{key}");
    }

    // The owner key cannot open a lobby, and a version key cannot register bots.
    let err = Lobby::open(&mut c, hello(&e.owner_key, 1, 2))
        .await
        .err()
        .expect("refused");
    assert_eq!(err.code(), tonic::Code::PermissionDenied);
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::Forbidden);
    let err = c
        .register_bot(with_bearer(
            pb::RegisterBotRequest { name: "x".into() },
            &e.version_key,
        ))
        .await
        .expect_err("refused");
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::Forbidden);

    // A lobby whose first message is not a hello.
    let err = Lobby::open(
        &mut c,
        pb::LobbyRequest {
            kind: Some(pb::lobby_request::Kind::Drain(pb::LobbyDrain {})),
        },
    )
    .await
    .err()
    .expect("refused");
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::NoHello);

    // Bad declarations.
    let mut bad = hello(&e.version_key, 0, 2);
    let err = Lobby::open(&mut c, bad.clone())
        .await
        .err()
        .expect("refused");
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::Invalid);
    if let Some(pb::lobby_request::Kind::Hello(h)) = &mut bad.kind {
        h.max_matches = 1;
        h.profiles = vec!["whist".into()];
    }
    let err = Lobby::open(&mut c, bad).await.err().expect("refused");
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::Invalid);

    // The real key works, in the metadata too.
    let mut lobby = Lobby::open(&mut c, hello(&e.version_key, 1, 2))
        .await
        .expect("opens");
    assert_eq!(lobby.welcome().await.version_id, e.version_id);
    drop(lobby);
    let (tx, rx) = mpsc::channel(4);
    tx.send(hello("", 1, 2)).await.expect("send");
    let mut lobby = Lobby {
        rx: c
            .lobby(with_bearer(ReceiverStream::new(rx), &e.version_key))
            .await
            .expect("opens with the key in the metadata")
            .into_inner(),
        tx,
    };
    assert_eq!(lobby.welcome().await.version_id, e.version_id);
    drop(lobby);

    // Revoked: refused. Rotated: the new key works, the old one stays dead.
    let revoked = c
        .revoke_key(with_bearer(
            pb::RevokeKeyRequest {
                version_id: e.version_id,
            },
            &e.owner_key,
        ))
        .await
        .expect("revoke")
        .into_inner();
    assert_eq!(revoked.revoked, 1);
    let err = Lobby::open(&mut c, hello(&e.version_key, 1, 2))
        .await
        .err()
        .expect("refused");
    assert_eq!(err.code(), tonic::Code::Unauthenticated);
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::BadKey);
    let rotated = c
        .rotate_key(with_bearer(
            pb::RotateKeyRequest {
                version_id: e.version_id,
            },
            &e.owner_key,
        ))
        .await
        .expect("rotate")
        .into_inner();
    let mut lobby = Lobby::open(&mut c, hello(&rotated.key, 1, 2))
        .await
        .expect("the rotated key opens the lobby");
    assert_eq!(lobby.welcome().await.version_id, e.version_id);
    let err = Lobby::open(&mut c, hello(&e.version_key, 1, 2))
        .await
        .err()
        .expect("still refused");
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::BadKey);
    drop(lobby);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registration_may_need_an_invitation_code() {
    let server = ladder_server(Duration::from_secs(10), vec!["sesame".into()]).await;
    let mut c = client(&server).await;
    for code in ["", "wrong"] {
        let err = c
            .register_owner(pb::RegisterOwnerRequest {
                name: "mallory".into(),
                invitation_code: code.into(),
            })
            .await
            .expect_err("refused");
        assert_eq!(err.code(), tonic::Code::PermissionDenied);
        assert_eq!(
            ladder_reason(&err),
            pb::LadderErrorReason::InvitationRequired
        );
    }
    let ok = c
        .register_owner(pb::RegisterOwnerRequest {
            name: "alice".into(),
            invitation_code: "sesame".into(),
        })
        .await
        .expect("the code admits")
        .into_inner();
    assert!(ok.owner_key.starts_with("mmo_"));
    let err = c
        .register_owner(pb::RegisterOwnerRequest {
            name: "alice".into(),
            invitation_code: "sesame".into(),
        })
        .await
        .expect_err("a taken name");
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::Duplicate);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_closes_the_lobby_after_its_matches() {
    let server = ladder_server(Duration::from_secs(10), Vec::new()).await;
    let mut c = client(&server).await;
    let (_, mut la, _, mut lb) = two_in_lobbies(&mut c, "ann", "ben").await;
    // B plays whatever comes, in the background.
    let b_task = {
        let url = server.url();
        tokio::spawn(async move {
            let mut n = 0;
            while let Some(Ok(m)) = lb.rx.message().await.transpose() {
                if let Some(pb::lobby_response::Kind::Invitation(inv)) = m.kind {
                    n += 1;
                    play(&url, &inv, n);
                }
            }
        })
    };
    // A takes its first invitation, asks to drain at once, and plays the match.
    let inv = match la.next().await {
        Some(pb::lobby_response::Kind::Invitation(inv)) => inv,
        other => panic!("expected an invitation, got {other:?}"),
    };
    la.drain().await;
    play(&server.url(), &inv, 5);
    let mut ended = false;
    loop {
        match la.next().await {
            Some(pb::lobby_response::Kind::MatchEnded(e)) => {
                assert_eq!(e.ladder_match_id, inv.ladder_match_id);
                assert!(e.finished && e.rated, "{e:?}");
                ended = true;
            }
            Some(pb::lobby_response::Kind::Drained(_)) => {
                assert!(ended, "drained only after the match ended");
                break;
            }
            Some(pb::lobby_response::Kind::Invitation(i)) => {
                panic!("an invitation after drain: {i:?}")
            }
            Some(_) => {}
            None => panic!("the stream ended before LobbyDrained"),
        }
    }
    assert!(
        la.next().await.is_none(),
        "the stream ends after LobbyDrained"
    );
    b_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_no_show_aborts_the_match_unrated() {
    let server = ladder_server(Duration::from_millis(400), Vec::new()).await;
    let mut c = client(&server).await;
    let (_, mut la, b, mut lb) = two_in_lobbies(&mut c, "amy", "bob").await;
    // A joins its invitation; B never does.
    let inv = match la.next().await {
        Some(pb::lobby_response::Kind::Invitation(inv)) => inv,
        other => panic!("expected an invitation, got {other:?}"),
    };
    let b_inv = match lb.next().await {
        Some(pb::lobby_response::Kind::Invitation(inv)) => inv,
        other => panic!("expected an invitation, got {other:?}"),
    };
    assert_eq!(b_inv.ladder_match_id, inv.ladder_match_id);
    assert_ne!(b_inv.seat, inv.seat);
    assert!(inv.join_deadline_unix_ms > 0);
    let a_play = play(&server.url(), &inv, 9);
    let ended = loop {
        match la.next().await {
            Some(pb::lobby_response::Kind::MatchEnded(e)) => break e,
            Some(_) => {}
            None => panic!("the lobby closed"),
        }
    };
    assert_eq!(ended.ladder_match_id, inv.ladder_match_id);
    assert!(!ended.finished && !ended.rated, "{ended:?}");
    assert!(ended.reason.contains("did not join"), "{}", ended.reason);
    a_play.await.expect("A's runner gets the aborted report");

    // The server's match is aborted; the ladder counts B's no-show, and nobody is rated.
    let summary = common::summary(&mut server.matches().await, &inv.match_id).await;
    assert_eq!(summary.status(), pb::MatchStatus::Aborted);
    let bot = get_bot(&mut c, b.bot_id).await;
    let h = bot.versions[0]
        .history
        .iter()
        .find(|h| h.ladder_match_id == inv.ladder_match_id)
        .expect("the aborted match is in B's history");
    assert_eq!(h.state(), pb::LadderMatchState::Aborted);
    assert!(!h.joined);
    assert!(bot.versions[0].ratings.is_empty());
    let board = board(&mut c, "").await;
    assert!(board.standings.is_empty(), "{board:?}");
}

/// Takes the lobby's first invitation, drains, plays it, and returns how it ended once the lobby
/// has closed.
async fn play_one_and_drain(url: String, mut lobby: Lobby, seed: u64) -> pb::LadderMatchEnded {
    let inv = loop {
        match lobby.next().await {
            Some(pb::lobby_response::Kind::Invitation(inv)) => break inv,
            Some(_) => {}
            None => panic!("the lobby closed"),
        }
    };
    lobby.drain().await;
    play(&url, &inv, seed);
    let mut ended = None;
    loop {
        match lobby.next().await {
            Some(pb::lobby_response::Kind::MatchEnded(e)) => ended = Some(e),
            Some(pb::lobby_response::Kind::Drained(_)) => break,
            Some(_) => {}
            None => panic!("the stream ended before LobbyDrained"),
        }
    }
    ended.expect("the match ended before the drain completed")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn operators_ban_void_and_change_seasons() {
    const TOKEN: &str = "op-secret";
    let server = TestServer::start_with(|c| {
        c.operator_token = Some(TOKEN.into());
        c.ladder = Some(classic_pairs(LadderSettings::default().join_deadline));
    })
    .await;
    let mut c = client(&server).await;
    let (a, la, b, lb) = two_in_lobbies(&mut c, "ava", "bea").await;
    let (ea, eb) = tokio::join!(
        play_one_and_drain(server.url(), la, 1),
        play_one_and_drain(server.url(), lb, 2)
    );
    assert_eq!(ea.ladder_match_id, eb.ladder_match_id);
    assert!(ea.rated && eb.rated);
    let id = ea.ladder_match_id;
    assert_eq!(board(&mut c, "").await.standings.len(), 2);

    let target = pb::SanctionTarget {
        kind: pb::SanctionTargetKind::Version as i32,
        id: b.version_id,
    };
    // Without the operator token: refused.
    let err = c
        .ban(pb::BanRequest {
            target: Some(target),
            reason: "x".into(),
        })
        .await
        .expect_err("refused");
    assert_eq!(err.code(), tonic::Code::PermissionDenied);
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::OperatorOnly);
    // A target that does not exist.
    let err = c
        .ban(with_bearer(
            pb::BanRequest {
                target: Some(pb::SanctionTarget {
                    kind: pb::SanctionTargetKind::Bot as i32,
                    id: 9999,
                }),
                reason: "x".into(),
            },
            TOKEN,
        ))
        .await
        .expect_err("no such bot");
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::NotFound);

    // Banned: hidden from the leaderboard, shown as banned on its page; unbanned: back.
    c.ban(with_bearer(
        pb::BanRequest {
            target: Some(target),
            reason: "cheating".into(),
        },
        TOKEN,
    ))
    .await
    .expect("ban");
    let shown = board(&mut c, "").await;
    assert_eq!(
        shown.standings.iter().map(|s| s.bot_id).collect::<Vec<_>>(),
        vec![a.bot_id]
    );
    let page = get_bot(&mut c, b.bot_id).await;
    assert_eq!(page.versions[0].status(), pb::VersionStatus::Banned);
    assert_eq!(page.versions[0].reason, "cheating");
    let lifted = c
        .unban(with_bearer(
            pb::UnbanRequest {
                target: Some(target),
                reason: String::new(),
            },
            TOKEN,
        ))
        .await
        .expect("unban")
        .into_inner();
    assert_eq!(lifted.lifted, 1);
    assert_eq!(board(&mut c, "").await.standings.len(), 2);

    // Formats are checked.
    let err = c
        .set_formats(with_bearer(
            pb::SetFormatsRequest {
                formats: vec![pb::LadderFormat {
                    profile: "brazilian".into(),
                    seats: 2,
                    weight: 1.0,
                }],
            },
            TOKEN,
        ))
        .await
        .expect_err("brazilian needs 4 or more seats");
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::Invalid);
    let set = c
        .set_formats(with_bearer(
            pb::SetFormatsRequest {
                formats: vec![pb::LadderFormat {
                    profile: "romanian-32".into(),
                    seats: 3,
                    weight: 2.0,
                }],
            },
            TOKEN,
        ))
        .await
        .expect("set formats")
        .into_inner();
    assert_eq!(set.formats.len(), 1);

    // Void: both ratings are recomputed without the match.
    let void = c
        .void_match(with_bearer(
            pb::VoidMatchRequest {
                ladder_match_id: id,
                reason: "test".into(),
            },
            TOKEN,
        ))
        .await
        .expect("void")
        .into_inner();
    assert_eq!(void.ratings_changed, 2);
    assert!(board(&mut c, "").await.standings.is_empty());
    let page = get_bot(&mut c, a.bot_id).await;
    let h = &page.versions[0].history[0];
    assert_eq!(h.ladder_match_id, id);
    assert_eq!(h.state(), pb::LadderMatchState::Void);

    // Seasons: one open at a time; the leaderboard follows the open one.
    let err = c
        .open_season(with_bearer(
            pb::OpenSeasonRequest {
                name: "season-2".into(),
            },
            TOKEN,
        ))
        .await
        .expect_err("season-1 is still open");
    assert_eq!(ladder_reason(&err), pb::LadderErrorReason::State);
    let closed = c
        .close_season(with_bearer(pb::CloseSeasonRequest {}, TOKEN))
        .await
        .expect("close")
        .into_inner();
    assert_eq!(closed.season, "season-1");
    c.open_season(with_bearer(
        pb::OpenSeasonRequest {
            name: "season-2".into(),
        },
        TOKEN,
    ))
    .await
    .expect("open");
    assert_eq!(board(&mut c, "").await.season, "season-2");
    assert_eq!(board(&mut c, "season-1").await.season, "season-1");
    let err = c
        .get_leaderboard(pb::GetLeaderboardRequest {
            season: "season-9".into(),
            profile: "classic".into(),
            ..Default::default()
        })
        .await
        .expect_err("no such season");
    assert_eq!(err.code(), tonic::Code::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_no_shows_pause_a_version_for_health() {
    let server = ladder_server(Duration::from_millis(200), Vec::new()).await;
    let mut c = client(&server).await;
    let (a, mut la, b, mut lb) = two_in_lobbies(&mut c, "ali", "bao").await;
    // A plays every invitation; B ignores them all until it is told it is paused.
    let url = server.url();
    let a_task = tokio::spawn(async move {
        let mut n = 0;
        while let Some(Ok(m)) = la.rx.message().await.transpose() {
            if let Some(pb::lobby_response::Kind::Invitation(inv)) = m.kind {
                n += 1;
                play(&url, &inv, n);
            }
        }
    });
    let mut no_shows = 0;
    let notice = loop {
        match lb.next().await {
            Some(pb::lobby_response::Kind::MatchEnded(e)) => {
                assert!(!e.finished && !e.rated, "{e:?}");
                no_shows += 1;
            }
            Some(pb::lobby_response::Kind::Notice(n)) => break n,
            Some(_) => {}
            None => panic!("the lobby closed"),
        }
    };
    assert_eq!(notice.status(), pb::VersionStatus::HealthPaused);
    assert!(
        notice.reason.contains("3 matches in a row"),
        "{}",
        notice.reason
    );
    assert_eq!(no_shows, 3);
    let page = get_bot(&mut c, b.bot_id).await;
    assert_eq!(page.versions[0].status(), pb::VersionStatus::HealthPaused);
    assert!(page.versions[0].history.iter().all(|h| !h.joined));
    // A, who joined every time, is not paused.
    let page = get_bot(&mut c, a.bot_id).await;
    assert_eq!(page.versions[0].status(), pb::VersionStatus::Active);
    a_task.abort();
}

/// A version paused for health that misses every probe gets its probes further and further
/// apart: each waits as long as the pause had lasted at the one before (at least the probe
/// interval). With a 150 ms interval and probes that each take the 200 ms join deadline, the gaps
/// have been 208, 315, 538, 1144 ms and 205, 205, 420, 830 ms (206, 209, 218, 217 before the
/// back-off).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_probes_come_further_and_further_apart() {
    let server = TestServer::start_with(|c| {
        c.ladder = Some(LadderSettings {
            probe_interval: Duration::from_millis(150),
            ..classic_pairs(Duration::from_millis(200))
        });
    })
    .await;
    let mut c = client(&server).await;
    let (_, mut la, b, mut lb) = two_in_lobbies(&mut c, "cat", "dan").await;
    let url = server.url();
    let a_task = tokio::spawn(async move {
        let mut n = 0;
        while let Some(Ok(m)) = la.rx.message().await.transpose() {
            if let Some(pb::lobby_response::Kind::Invitation(inv)) = m.kind {
                n += 1;
                play(&url, &inv, n);
            }
        }
    });
    // B never joins: three no-shows pause it, then every probe is a no-show too.
    let b_task = tokio::spawn(async move { while lb.next().await.is_some() {} });
    let ended = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let page = get_bot(&mut c, b.bot_id).await;
            let mut ended: Vec<u64> = page.versions[0]
                .history
                .iter()
                .map(|h| h.ended_unix_ms)
                .collect();
            if ended.len() >= 8 {
                ended.sort_unstable();
                return ended;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("three no-shows and five probes within a minute");
    // The last five are probes (one at a time: each ended before the next was scheduled).
    // Each probe waits at least as long as the pause had lasted at the one before, so the gap
    // after the third is at least the two before it together: at least twice the first between
    // probes (1.5 times here, for the jitter of the times the matches ended at). Without the
    // back-off every gap is the interval or the join deadline, whichever is longer.
    let gaps: Vec<u64> = ended[3..].windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        gaps[3] * 2 >= gaps[1] * 3,
        "the gaps between probes (ms) should grow, the fourth at least 1.5 times the second: \
         {gaps:?}"
    );
    a_task.abort();
    b_task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ladder_survives_a_restart() {
    let settings = || classic_pairs(LadderSettings::default().join_deadline);
    let server = TestServer::start_with(|c| c.ladder = Some(settings())).await;
    let mut c = client(&server).await;
    let (a, la, _, lb) = two_in_lobbies(&mut c, "kim", "lee").await;
    let (ea, _) = tokio::join!(
        play_one_and_drain(server.url(), la, 1),
        play_one_and_drain(server.url(), lb, 2)
    );
    let before = board(&mut c, "").await;
    assert_eq!(before.standings.len(), 2);
    // A lobby still open while the server stops: its stream ends and the server stops anyway.
    let mut idle = Lobby::open(&mut c, hello(&a.version_key, 1, 2))
        .await
        .expect("a again");
    idle.welcome().await;
    let data = tokio::time::timeout(Duration::from_secs(20), server.stop())
        .await
        .expect("the server stops with a lobby open");
    assert!(
        matches!(
            idle.next().await,
            Some(pb::lobby_response::Kind::Drained(_))
        ),
        "a stopping server drains its lobbies"
    );
    let end = tokio::time::timeout(Duration::from_secs(5), idle.rx.message()).await;
    assert!(
        matches!(end, Ok(Ok(None)) | Ok(Err(_))),
        "the lobby stream ended: {end:?}"
    );

    // Same data directory: the store's lock was released, and everything is still there.
    let server = TestServer::start_in(data, |c| c.ladder = Some(settings())).await;
    let mut c = client(&server).await;
    let after = board(&mut c, "").await;
    assert_eq!(after, before);
    let page = get_bot(&mut c, a.bot_id).await;
    let h = &page.versions[0].history[0];
    assert_eq!(h.ladder_match_id, ea.ladder_match_id);
    assert_eq!(
        h.match_id, ea.match_id,
        "the server match id is found again"
    );
    // The old key still opens a lobby.
    let mut again = Lobby::open(&mut c, hello(&a.version_key, 1, 2))
        .await
        .expect("a");
    assert_eq!(again.welcome().await.version_id, a.version_id);
}

/// The status and reason of the lobby's next notice.
async fn notice(lobby: &mut Lobby) -> (pb::VersionStatus, String) {
    match lobby.next().await.expect("the lobby stays open") {
        pb::lobby_response::Kind::Notice(n) => (n.status(), n.reason),
        other => panic!("a notice, not {other:?}"),
    }
}

/// An operator's ban, pause and their lifting reach the version's open lobby as a `LobbyNotice`
/// with its new status and the reason, whichever target (owner, bot, version) they named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sanctions_are_announced_on_the_lobby() {
    const TOKEN: &str = "op-secret";
    let server = TestServer::start_with(|c| {
        c.operator_token = Some(TOKEN.into());
        c.ladder = Some(classic_pairs(LadderSettings::default().join_deadline));
    })
    .await;
    let mut c = client(&server).await;
    let a = enter(&mut c, "ada").await;
    let mut lobby = Lobby::open(&mut c, hello(&a.version_key, 1, 2))
        .await
        .expect("a");
    assert_eq!(lobby.welcome().await.status(), pb::VersionStatus::Active);
    let target = |kind: pb::SanctionTargetKind, id: i64| {
        Some(pb::SanctionTarget {
            kind: kind as i32,
            id,
        })
    };
    let owner = {
        let page = get_bot(&mut c, a.bot_id).await;
        page.owner_id
    };

    c.ban(with_bearer(
        pb::BanRequest {
            target: target(pb::SanctionTargetKind::Bot, a.bot_id),
            reason: "cheating".into(),
        },
        TOKEN,
    ))
    .await
    .expect("ban");
    assert_eq!(
        notice(&mut lobby).await,
        (pb::VersionStatus::Banned, "cheating".to_string())
    );
    c.unban(with_bearer(
        pb::UnbanRequest {
            target: target(pb::SanctionTargetKind::Bot, a.bot_id),
            reason: String::new(),
        },
        TOKEN,
    ))
    .await
    .expect("unban");
    assert_eq!(
        notice(&mut lobby).await,
        (
            pb::VersionStatus::Active,
            "unbanned by the operator".to_string()
        )
    );
    c.pause(with_bearer(
        pb::PauseRequest {
            target: target(pb::SanctionTargetKind::Owner, owner),
            reason: "maintenance".into(),
        },
        TOKEN,
    ))
    .await
    .expect("pause");
    assert_eq!(
        notice(&mut lobby).await,
        (pb::VersionStatus::Paused, "maintenance".to_string())
    );
    c.resume(with_bearer(
        pb::ResumeRequest {
            target: target(pb::SanctionTargetKind::Version, a.version_id),
            reason: "back".into(),
        },
        TOKEN,
    ))
    .await
    .expect("resume");
    // The owner's pause still holds: a resume of the version alone lifts nothing.
    c.resume(with_bearer(
        pb::ResumeRequest {
            target: target(pb::SanctionTargetKind::Owner, owner),
            reason: "back".into(),
        },
        TOKEN,
    ))
    .await
    .expect("resume");
    assert_eq!(
        notice(&mut lobby).await,
        (pb::VersionStatus::Active, "back".to_string())
    );
}

/// The profile of the lobby's first invitation.
async fn invited(lobby: &mut Lobby) -> String {
    loop {
        match lobby.next().await.expect("the lobby stays open") {
            pb::lobby_response::Kind::Welcome(_) => {}
            pb::lobby_response::Kind::Invitation(i) => return i.profile,
            other => panic!("an invitation, not {other:?}"),
        }
    }
}

/// Formats an operator sets are kept in the ladder's database: after a restart with the same
/// configuration (classic pairs only) the matchmaker still makes the operator's format, and the
/// configuration's comes back only when it is set again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn formats_an_operator_sets_survive_a_restart() {
    const TOKEN: &str = "op-secret";
    // A short join deadline: the invitations are never joined, and a server stops once its
    // matches are over.
    let tune = |c: &mut Setup| {
        c.operator_token = Some(TOKEN.into());
        c.ladder = Some(classic_pairs(Duration::from_secs(1)));
    };
    let set_formats = |profile: &str| {
        with_bearer(
            pb::SetFormatsRequest {
                formats: vec![pb::LadderFormat {
                    profile: profile.into(),
                    seats: 2,
                    weight: 1.0,
                }],
            },
            TOKEN,
        )
    };
    // Both versions offer both profiles: the invitation's profile is the matchmaker's choice.
    let both = |key: &str| pb::LobbyRequest {
        kind: Some(pb::lobby_request::Kind::Hello(pb::LobbyHello {
            version_key: key.into(),
            max_matches: 1,
            profiles: vec!["classic".into(), "penalty-points".into()],
            seats: vec![2],
        })),
    };

    let server = TestServer::start_with(tune).await;
    let mut c = client(&server).await;
    let (a, b) = (enter(&mut c, "ana").await, enter(&mut c, "ben").await);
    c.set_formats(set_formats("penalty-points"))
        .await
        .expect("set formats");
    let data = server.stop().await;

    let server = TestServer::start_in(data, tune).await;
    // The leaderboard says so too, and shows that profile first.
    let board = web::get(&server, "/ladder", false).await.text();
    assert!(
        board.contains("Tables made: <strong>penalty-points</strong> at 2 seats."),
        "{board}"
    );
    assert!(
        board.contains("profile <strong>penalty-points</strong>"),
        "{board}"
    );
    let mut c = client(&server).await;
    let mut la = Lobby::open(&mut c, both(&a.version_key)).await.expect("a");
    let mut lb = Lobby::open(&mut c, both(&b.version_key)).await.expect("b");
    assert_eq!(invited(&mut la).await, "penalty-points");
    assert_eq!(invited(&mut lb).await, "penalty-points");
    drop((la, lb));
    c.set_formats(set_formats("classic"))
        .await
        .expect("set formats");
    let data = server.stop().await;

    let server = TestServer::start_in(data, tune).await;
    let mut c = client(&server).await;
    let mut la = Lobby::open(&mut c, both(&a.version_key)).await.expect("a");
    let mut lb = Lobby::open(&mut c, both(&b.version_key)).await.expect("b");
    assert_eq!(invited(&mut la).await, "classic");
    assert_eq!(invited(&mut lb).await, "classic");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_ladder_setup_or_a_second_process_is_refused_at_start() {
    let start = |config: Setup| async move {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        // An immediate shutdown: a server that starts returns Ok at once.
        config.run(listener, async {}).await
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let base = Setup {
        server: maumau_server::ServerConfig {
            data_dir: dir.path().to_path_buf(),
            ..Default::default()
        },
        ladder: None,
    };

    // The join deadline must be shorter than the join timeout.
    let mut config = base.clone();
    config.join_timeout = Duration::from_secs(5);
    config.ladder = Some(LadderSettings {
        join_deadline: Duration::from_secs(5),
        ..LadderSettings::default()
    });
    let err = start(config).await.expect_err("refused");
    assert!(err.to_string().contains("join deadline"), "{err}");

    // A second server on the data directory of a running ladder.
    let server = TestServer::start_in(dir, |c| c.ladder = Some(LadderSettings::default())).await;
    // It answers, so its ladder holds the store.
    board(&mut client(&server).await, "").await;
    let mut config = base.clone();
    config.data_dir = server.data_dir.path().to_path_buf();
    config.ladder = Some(LadderSettings::default());
    let err = start(config).await.expect_err("refused");
    assert!(
        err.to_string().contains("in use by another process"),
        "{err}"
    );
    // Without the ladder the same directory is fine.
    let mut config = base;
    config.data_dir = server.data_dir.path().to_path_buf();
    config.ladder = None;
    start(config).await.expect("no ladder, no lock");
}
