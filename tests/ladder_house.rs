//! End to end: the ladder's house bots, the reason a lobby waits, the match aborted before
//! its invitations, and the refused actions on the pages. A real ladder server on loopback (`maumau_ladder_service::run`, what `maumau
//! serve --ladder` runs), real lobbies over gRPC, the SDK's heuristic bot playing invitations, the
//! pages over HTTP and, for the bot page's rating plot, Debian's headless Chromium.
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

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use common::TestServer;
use hyper::StatusCode;
use ladder::{Lobby, board, classic_pairs, get_bot, hello, play, register};
use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::HeuristicBot;
use maumau_bot_sdk::engine::{Action, Event, Observation};
use maumau_bot_sdk::runner::{RunOptions, run};
use maumau_ladder_service::LadderValidation;
use web::{chromium_or_explain, dump_dom, get};

/// Every value of `attr="..."` in `page`, in order.
fn attr_values(page: &str, attr: &str) -> Vec<String> {
    let needle = format!(" {attr}=\"");
    page.match_indices(&needle)
        .filter_map(|(i, _)| {
            let rest = &page[i + needle.len()..];
            rest.find('"').map(|end| rest[..end].to_string())
        })
        .collect()
}

/// The elements of `page` (opening tags) that have class `class`.
fn tags_with_class<'a>(page: &'a str, tag: &str, class: &str) -> Vec<&'a str> {
    let open = format!("<{tag} ");
    page.match_indices(&open)
        .filter_map(|(i, _)| {
            let end = page[i..].find('>')? + i;
            let t = &page[i..end];
            t.contains(&format!("class=\"{class}\"")).then_some(t)
        })
        .collect()
}

/// The value of `attr` in one opening tag.
fn attr(tag: &str, name: &str) -> Option<String> {
    attr_values(tag, name).into_iter().next()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_house_bots_give_a_new_bot_rated_matches_and_its_page_plots_them() {
    let server = TestServer::start_with(|c| {
        c.ladder = Some(maumau_ladder_service::LadderSettings {
            house_bots: vec![pb::BotKind::Heuristic, pb::BotKind::Random],
            // A new version validates first, as on a real ladder.
            validation: LadderValidation::default(),
            ..classic_pairs(Duration::from_secs(20))
        })
    })
    .await;
    let url = server.url();
    let mut c = LadderServiceClient::new(server.channel().await);
    let me = register(&mut c, "newcomer", "first-bot", "1.0").await;
    let mut lobby = Lobby::open(&mut c, hello(&me.version_key, 1, 2))
        .await
        .expect("lobby");

    // Validation, then rated matches against the house: no other owner is on this ladder.
    let wanted = 3;
    let mut rated: BTreeMap<i64, pb::Rating> = BTreeMap::new();
    let mut validated = false;
    let mut seed = 0;
    let mut drained = false;
    let started = Instant::now();
    while let Some(kind) = lobby.next_any().await {
        match kind {
            pb::lobby_response::Kind::Invitation(inv) => {
                seed += 1;
                play(&url, &inv, seed);
            }
            pb::lobby_response::Kind::MatchEnded(e) if e.validation => {
                assert!(e.finished, "the validation match was played: {e:?}");
                validated = true;
            }
            pb::lobby_response::Kind::MatchEnded(e) => {
                assert!(e.finished && e.rated, "{e:?}");
                rated.insert(e.ladder_match_id, e.rating.expect("a rated match's rating"));
                if rated.len() >= wanted && !drained {
                    // No more invitations; the stream ends once the last match ended.
                    drained = true;
                    lobby.drain().await;
                }
            }
            pb::lobby_response::Kind::Drained(_) => break,
            _ => {}
        }
    }
    assert!(validated, "the version validated before its rated matches");
    assert!(rated.len() >= wanted, "{rated:?}");

    // The server's match list (and so its viewer) names the ladder's players, not the names
    // their programs join with ("ladder-test"), and marks the house bots.
    let mut matches = server.matches().await;
    let listed = matches
        .list_matches(pb::ListMatchesRequest {
            page_size: 100,
            ..Default::default()
        })
        .await
        .expect("the server's match list")
        .into_inner();
    let tables: Vec<&pb::MatchSummary> = listed.matches.iter().filter(|m| m.rated).collect();
    assert!(tables.len() >= wanted, "{listed:?}");
    for m in tables {
        let names: Vec<&str> = m.players.iter().map(|p| p.name.as_str()).collect();
        assert!(names.contains(&"first-bot"), "{names:?}");
        assert!(names.iter().any(|n| n.ends_with(" (house)")), "{names:?}");
        assert!(!names.contains(&"ladder-test"), "{names:?}");
    }
    eprintln!(
        "{} rated matches against the house in {:.1} s",
        rated.len(),
        started.elapsed().as_secs_f64()
    );

    // GetLeaderboard and GetBot mark the house bots, and only them.
    let board = board(&mut c, "").await;
    let house: Vec<&pb::Standing> = board.standings.iter().filter(|s| s.house).collect();
    assert!(!house.is_empty(), "{board:?}");
    for s in &board.standings {
        assert_eq!(s.house, s.bot_name.ends_with("(house)"), "{s:?}");
        assert_eq!(s.house, s.bot_id != me.bot_id, "{s:?}");
    }
    let mine = get_bot(&mut c, me.bot_id).await;
    assert!(!mine.house);
    let my_matches: HashSet<i64> = mine.versions[0]
        .history
        .iter()
        .map(|h| h.ladder_match_id)
        .collect();
    for s in &house {
        let bot = get_bot(&mut c, s.bot_id).await;
        assert!(bot.house, "{bot:?}");
        assert_eq!(bot.owner_name, "house");
        // A house bot played only tables with the real bot: never among the house.
        for h in &bot.versions[0].history {
            assert!(my_matches.contains(&h.ladder_match_id), "{h:?}");
        }
    }
    // The reserved owner cannot be registered.
    let refused = c
        .register_owner(pb::RegisterOwnerRequest {
            name: "house".into(),
            invitation_code: String::new(),
        })
        .await
        .expect_err("the house owner is reserved");
    assert_eq!(
        ladder::ladder_reason(&refused),
        pb::LadderErrorReason::Invalid
    );

    // Every page marks the house bots.
    let board_page = get(&server, "/ladder?profile=classic", false).await.text();
    assert!(board_page.contains("data-house=\"true\""), "{board_page}");
    assert!(
        board_page.contains("μ − 3σ"),
        "the score column is explained"
    );
    assert!(board_page.contains("95% interval"), "{board_page}");
    let house_page = get(&server, &format!("/ladder/bots/{}", house[0].bot_id), false)
        .await
        .text();
    assert!(house_page.contains("class=\"house\""), "{house_page}");
    assert!(house_page.contains("A house bot"), "{house_page}");
    let first = *rated.keys().next().expect("a rated match");
    let match_page = get(&server, &format!("/ladder/matches/{first}"), false).await;
    assert_eq!(match_page.status, StatusCode::OK);
    let match_page = match_page.text();
    assert!(match_page.contains("class=\"house\""), "{match_page}");
    // Rounds, scores and totals from the server's record.
    assert!(match_page.contains("class=\"rounds\""), "{match_page}");
    assert!(match_page.contains("class=\"totals\""), "{match_page}");
    // The viewer embedded, and what it embeds is the match's viewer page.
    let src = match_page
        .split("<iframe class=\"viewer\" src=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no embedded viewer: {match_page}"))
        .to_string();
    assert!(
        src.starts_with("/matches/") && src.ends_with("/view"),
        "{src}"
    );
    let viewer = get(&server, &src, false).await;
    assert_eq!(viewer.status, StatusCode::OK);
    assert!(
        viewer.text().contains("id=\"seats\""),
        "not the viewer: {src}"
    );

    // My page: recent matches with results, opponents (marked) and the viewer link.
    let my_page = get(&server, &format!("/ladder/bots/{}", me.bot_id), false)
        .await
        .text();
    assert!(
        attr_values(&my_page, "href")
            .iter()
            .any(|h| h.starts_with("/matches/") && h.ends_with("/view")),
        "{my_page}"
    );
    assert!(my_page.contains("class=\"house\""), "{my_page}");

    // The rating plot in a browser: an SVG whose points are the stored rating events (the
    // ratings each match's end reported), in match order, higher μ drawn higher.
    if let Some(chromium) = chromium_or_explain() {
        let page_url = format!("{url}/ladder/bots/{}", me.bot_id);
        let dom = tokio::task::spawn_blocking(move || dump_dom(&chromium, &page_url))
            .await
            .expect("Chromium ran");
        assert!(dom.contains("<svg"), "{dom}");
        assert_eq!(
            tags_with_class(&dom, "figure", "rating-plot").len(),
            1,
            "{dom}"
        );
        let points = tags_with_class(&dom, "circle", "rating-point");
        assert_eq!(
            points.len(),
            rated.len(),
            "one point per rated match: {dom}"
        );
        let mut drawn = Vec::new();
        for p in &points {
            let number = |name: &str| -> f64 {
                attr(p, name)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| panic!("{name} in {p}"))
            };
            let id = number("data-match") as i64;
            let stored = rated.get(&id).unwrap_or_else(|| panic!("match {id}: {p}"));
            assert_eq!(number("data-mu"), stored.mu, "{p}");
            assert_eq!(number("data-sigma"), stored.sigma, "{p}");
            drawn.push((id, number("cx"), number("cy"), stored.mu));
        }
        // In match order, left to right.
        let ids: Vec<i64> = drawn.iter().map(|d| d.0).collect();
        assert_eq!(ids, rated.keys().copied().collect::<Vec<_>>());
        assert!(drawn.windows(2).all(|w| w[0].1 < w[1].1), "{drawn:?}");
        for a in &drawn {
            for b in &drawn {
                if a.3 > b.3 {
                    assert!(a.2 < b.2, "higher μ is drawn higher: {a:?} {b:?}");
                }
            }
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_bot_hears_why_and_only_when_it_changes() {
    let server =
        TestServer::start_with(|c| c.ladder = Some(classic_pairs(Duration::from_secs(10)))).await;
    let mut c = LadderServiceClient::new(server.channel().await);
    let alone = register(&mut c, "alone", "alone-bot", "1").await;
    let mut lobby = Lobby::open(&mut c, hello(&alone.version_key, 1, 2))
        .await
        .expect("lobby");

    // Alone on a ladder without house bots: no opponents, one bot online (itself).
    let pb::lobby_response::Kind::Waiting(w) = lobby.next_after_welcome().await else {
        panic!("a waiting reason first");
    };
    assert_eq!(w.reason(), pb::WaitingReason::NoOpponents, "{w:?}");
    assert_eq!(w.bots_online, 1, "{w:?}");
    assert!(!w.detail.is_empty());

    // GetBot and the bot page show the same state.
    let got = get_bot(&mut c, alone.bot_id).await;
    assert_eq!(got.versions[0].waiting.as_ref(), Some(&w));
    let page = get(&server, &format!("/ladder/bots/{}", alone.bot_id), false)
        .await
        .text();
    assert!(page.contains("data-reason=\"no opponents\""), "{page}");

    // A second bot that only plays tables of 3 (this ladder makes pairs): still no opponent,
    // but two bots online. The very next message says so: nothing was repeated meanwhile,
    // however many matchmaking rounds passed.
    let other = register(&mut c, "other", "threes", "1").await;
    let mut threes = Lobby::open(&mut c, hello(&other.version_key, 1, 3))
        .await
        .expect("lobby");
    let pb::lobby_response::Kind::Waiting(w) = lobby.next_any().await.expect("open") else {
        panic!("the changed count");
    };
    assert_eq!(w.reason(), pb::WaitingReason::NoOpponents, "{w:?}");
    assert_eq!(w.bots_online, 2, "{w:?}");
    let pb::lobby_response::Kind::Waiting(t) = threes.next_after_welcome().await else {
        panic!("a waiting reason");
    };
    assert_eq!(t.reason(), pb::WaitingReason::NoOpponents, "{t:?}");

    // The season closes: no season.
    c.close_season(pb::CloseSeasonRequest {})
        .await
        .expect("close the season");
    let pb::lobby_response::Kind::Waiting(w) = lobby.next_any().await.expect("open") else {
        panic!("no season");
    };
    assert_eq!(w.reason(), pb::WaitingReason::NoSeason, "{w:?}");
    assert_eq!(w.bots_online, 2);

    // An operator pause: paused.
    c.open_season(pb::OpenSeasonRequest {
        name: "season-2".into(),
    })
    .await
    .expect("open a season");
    c.pause(pb::PauseRequest {
        target: Some(pb::SanctionTarget {
            kind: pb::SanctionTargetKind::Version as i32,
            id: alone.version_id,
        }),
        reason: "tea break".into(),
    })
    .await
    .expect("pause");
    loop {
        match lobby.next_any().await.expect("open") {
            pb::lobby_response::Kind::Waiting(w) if w.reason() == pb::WaitingReason::Paused => {
                assert!(w.detail.contains("tea break"), "{w:?}");
                break;
            }
            pb::lobby_response::Kind::Waiting(w) => {
                assert_eq!(w.reason(), pb::WaitingReason::NoOpponents, "{w:?}");
            }
            pb::lobby_response::Kind::Notice(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    drop(threes);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_aborted_before_its_invitations_reads_not_joined_everywhere() {
    // No table can be created: every planned match is aborted before its invitations go out.
    let server = TestServer::start_with(|c| {
        c.max_open_matches = 0;
        c.ladder = Some(classic_pairs(Duration::from_secs(10)));
    })
    .await;
    let mut c = LadderServiceClient::new(server.channel().await);
    let a = register(&mut c, "ann", "ann-bot", "1").await;
    let b = register(&mut c, "ben", "ben-bot", "1").await;
    let _la = Lobby::open(&mut c, hello(&a.version_key, 1, 2))
        .await
        .expect("lobby");
    let _lb = Lobby::open(&mut c, hello(&b.version_key, 1, 2))
        .await
        .expect("lobby");

    // Poll until several matches were aborted (more than the health streak of 3).
    let deadline = Instant::now() + Duration::from_secs(120);
    let history = loop {
        let got = get_bot(&mut c, a.bot_id).await;
        let aborted: Vec<pb::HistoryEntry> = got.versions[0]
            .history
            .iter()
            .filter(|h| h.state() == pb::LadderMatchState::Aborted)
            .cloned()
            .collect();
        if aborted.len() >= 4 {
            // Not the bot's fault: no health pause.
            assert_eq!(
                got.versions[0].status(),
                pb::VersionStatus::Active,
                "{got:?}"
            );
            break aborted;
        }
        assert!(Instant::now() < deadline, "no aborted match: {got:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    for h in &history {
        assert!(!h.joined, "never invited, so not joined: {h:?}");
        assert_eq!(h.timeouts, 0);
        assert!(h.reason.contains("could not create the table"), "{h:?}");
    }
    let id = history[0].ladder_match_id;
    let page = get(&server, &format!("/ladder/matches/{id}"), false)
        .await
        .text();
    let seats = attr_values(&page, "data-joined");
    assert_eq!(seats, vec!["false", "false"], "{page}");
    assert!(!page.contains("<td>yes</td>"), "{page}");
    let bot_page = get(&server, &format!("/ladder/bots/{}", a.bot_id), false)
        .await
        .text();
    assert!(bot_page.contains("no invitation was sent"), "{bot_page}");
    assert!(!bot_page.contains("data-joined=\"true\""), "{bot_page}");
    server.stop().await;
}

/// The heuristic bot, except that its first decision plays a card it does not hold, which the
/// rules refuse (the SDK's runner then sends a legal action).
struct RefusesOnce {
    bot: HeuristicBot,
    refused: bool,
}

impl Bot for RefusesOnce {
    fn name(&self) -> &str {
        "refuses-once"
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        if !self.refused {
            self.refused = true;
            if let Some(a) = ladder::unheld_play(obs) {
                return a;
            }
        }
        self.bot.decide(obs)
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        self.bot.react(obs)
    }

    fn on_event(&mut self, event: &Event) {
        self.bot.on_event(event);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_action_in_a_rated_match_shows_on_the_pages_and_in_get_bot() {
    let server = TestServer::start_with(|c| {
        c.ladder = Some(maumau_ladder_service::LadderSettings {
            house_bots: vec![pb::BotKind::Heuristic],
            ..classic_pairs(Duration::from_secs(20))
        })
    })
    .await;
    let url = server.url();
    let mut c = LadderServiceClient::new(server.channel().await);
    let me = register(&mut c, "refuser", "refuser-bot", "1").await;
    let mut lobby = Lobby::open(&mut c, hello(&me.version_key, 1, 2))
        .await
        .expect("lobby");

    // One rated match against the house, then drain.
    let mut ended = None;
    while let Some(kind) = lobby.next_any().await {
        match kind {
            pb::lobby_response::Kind::Invitation(inv) if ended.is_none() => {
                let options = RunOptions::new(&url, inv.seat_token.clone());
                tokio::spawn(async move {
                    let mut bot = RefusesOnce {
                        bot: HeuristicBot::new(7),
                        refused: false,
                    };
                    let _ = run(&mut bot, &options).await;
                });
                lobby.drain().await;
            }
            pb::lobby_response::Kind::MatchEnded(e) => {
                assert!(e.finished && e.rated, "{e:?}");
                ended = Some(e.ladder_match_id);
            }
            pb::lobby_response::Kind::Drained(_) => break,
            _ => {}
        }
    }
    let id = ended.expect("a rated match ended");

    let mine = get_bot(&mut c, me.bot_id).await;
    let entry = mine.versions[0]
        .history
        .iter()
        .find(|h| h.ladder_match_id == id)
        .unwrap_or_else(|| panic!("match {id} in {mine:?}"));
    assert_eq!((entry.rejections, entry.timeouts), (1, 0), "{entry:?}");

    let bot_page = get(&server, &format!("/ladder/bots/{}", me.bot_id), false)
        .await
        .text();
    assert!(bot_page.contains("<th>Rejections</th>"), "{bot_page}");
    assert!(
        bot_page.contains("<td class=\"rejections\">1</td>"),
        "{bot_page}"
    );
    let match_page = get(&server, &format!("/ladder/matches/{id}"), false)
        .await
        .text();
    assert_eq!(
        tags_with_class(&match_page, "td", "rejections").len(),
        2,
        "{match_page}"
    );
    assert_eq!(
        match_page
            .matches("<td class=\"rejections\">1</td>")
            .count(),
        1,
        "only the refusing seat: {match_page}"
    );
    server.stop().await;
}
