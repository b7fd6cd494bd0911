//! End to end: the ladder's web pages on the gRPC port. Bots (one with a name full of HTML) play
//! real rated matches over loopback; the pages are fetched over HTTP/1.1 and HTTP/2 and checked
//! against the gRPC leaderboard: order, links, escaping, paging, frozen closed seasons, 404 and
//! 400 pages, and a downloaded replay that verifies. One test loads the leaderboard in headless
//! Chromium (Debian's `chromium`; see `web::chromium_or_explain`).
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

use common::TestServer;
use hyper::StatusCode;
use ladder::{Lobby, board, classic_pairs, hello, play};
use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use prost::Message;
use tonic::transport::Channel;
use web::{chromium_or_explain, dump_dom, get};

/// A bot name that breaks a page that does not escape.
const EVIL: &str = "<b>\"evil\" & 'co'</b>";

/// A ladder server making 2-seat classic matches.
async fn ladder_server() -> TestServer {
    TestServer::start_with(|c| c.ladder = Some(classic_pairs(Duration::from_secs(10)))).await
}

/// Registers an owner, a bot and a version labelled `v<1>`; returns the bot id and the version key.
async fn enter(c: &mut LadderServiceClient<Channel>, owner: &str, bot: &str) -> (i64, String) {
    let e = ladder::register(c, owner, bot, "v<1>").await;
    (e.bot_id, e.version_key)
}

/// Opens a lobby and plays invitations with the SDK's heuristic bot until `rated` rated matches
/// have ended; then closes the lobby.
async fn play_rated(url: String, mut c: LadderServiceClient<Channel>, key: String, rated: usize) {
    let mut lobby = Lobby::open(&mut c, hello(&key, 1, 2)).await.expect("lobby");
    let mut ended = 0;
    let mut seed = 0;
    while ended < rated {
        match lobby.next().await.expect("the lobby stays open") {
            pb::lobby_response::Kind::Invitation(inv) => {
                seed += 1;
                play(&url, &inv, seed);
            }
            // A match whose other seat's bot has already played its share (and stopped) is
            // aborted at the join deadline: it does not count, and is not an error.
            pb::lobby_response::Kind::MatchEnded(e) if !e.finished => {}
            pb::lobby_response::Kind::MatchEnded(e) => {
                assert!(e.rated, "{e:?}");
                ended += 1;
            }
            _ => {}
        }
    }
}

/// A ladder where `names` (owner, bot) each played `rated` rated matches; returns the server and
/// the bot ids in `names` order.
async fn arena(names: &[(&str, &str)], rated: usize) -> (TestServer, Vec<i64>) {
    let server = ladder_server().await;
    let mut c = LadderServiceClient::new(server.channel().await);
    let mut ids = Vec::new();
    let mut tasks = Vec::new();
    for (owner, bot) in names {
        let (id, key) = enter(&mut c, owner, bot).await;
        ids.push(id);
        tasks.push(tokio::spawn(play_rated(
            server.url(),
            c.clone(),
            key,
            rated,
        )));
    }
    for t in tasks {
        t.await.expect("a bot played its matches");
    }
    (server, ids)
}

/// The gRPC leaderboard's bot ids, best first (ranked, then provisional).
async fn grpc_order(server: &TestServer, season: &str) -> Vec<i64> {
    let mut c = LadderServiceClient::new(server.channel().await);
    board(&mut c, season)
        .await
        .standings
        .iter()
        .map(|s| s.bot_id)
        .collect()
}

/// Every value of `attr="..."` in the page, in order.
fn attr_values(page: &str, attr: &str) -> Vec<String> {
    let needle = format!("{attr}=\"");
    page.match_indices(&needle)
        .filter_map(|(i, _)| {
            let rest = &page[i + needle.len()..];
            rest.find('"').map(|end| rest[..end].to_string())
        })
        .collect()
}

/// The bot ids of the leaderboard's lines, in page order.
fn page_order(page: &str) -> Vec<i64> {
    attr_values(page, "data-bot")
        .iter()
        .map(|v| v.parse().expect("a bot id"))
        .collect()
}

/// Fetches a replay link and checks that it is the server's replay and that it verifies.
async fn check_replay(server: &TestServer, href: &str) {
    let got = get(server, href, false).await;
    assert_eq!(got.status, StatusCode::OK, "{href}");
    assert_eq!(got.content_type, "application/octet-stream");
    assert!(
        got.disposition
            .starts_with("attachment; filename=\"ladder-match-"),
        "{}",
        got.disposition
    );
    let replay = pb::Replay::decode(got.body.as_slice()).expect("a replay message");
    let verdict = maumau::replay::verify(&replay);
    assert!(verdict.valid, "the downloaded replay verifies: {verdict:?}");
    // A match aborted before anyone acted (a seat that missed its join deadline on a loaded
    // machine) has an empty replay; one that was played has its actions.
    assert!(
        !replay.actions.is_empty() || replay.result.is_none(),
        "a played match's replay has its actions"
    );
    // The same replay as MatchService.GetReplay.
    let from_grpc = server
        .matches()
        .await
        .get_replay(pb::GetReplayRequest {
            match_id: replay.match_id.clone(),
        })
        .await
        .expect("GetReplay")
        .into_inner()
        .replay
        .expect("a replay");
    assert_eq!(from_grpc.encode_to_vec(), got.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pages_show_the_ladder_and_serve_replays() {
    let (server, ids) = arena(&[("ada", "ada-bot"), ("bo", "bo-bot"), ("evil", EVIL)], 2).await;
    let evil = ids[2];

    // The leaderboard, over HTTP/1.1 and HTTP/2: the gRPC order, escaped names, links.
    let order = grpc_order(&server, "").await;
    assert_eq!(order.len(), 3);
    let page = get(&server, "/ladder?profile=classic", false).await;
    assert_eq!(page.status, StatusCode::OK);
    assert_eq!(page.content_type, "text/html; charset=utf-8");
    let html = page.text();
    assert_eq!(page_order(&html), order, "{html}");
    assert!(html.contains("&lt;b&gt;&quot;evil&quot; &amp; &#39;co&#39;&lt;/b&gt;"));
    assert!(html.contains("v&lt;1&gt;"));
    assert!(!html.contains(EVIL) && !html.contains("<b>\"evil"));
    assert!(!html.contains("<script"), "no JavaScript");
    for id in &ids {
        assert!(
            html.contains(&format!("href=\"/ladder/bots/{id}?season=season-1\"")),
            "{html}"
        );
    }
    for column in [
        "Rank",
        "Bot",
        "Version",
        "Score (μ − 3σ)",
        "95% interval of μ",
        "Matches",
        "Win rate",
        "Avg placing",
        "Timeouts",
    ] {
        assert!(html.contains(&format!(">{column}</th>")), "{column}");
    }
    // The score column is explained beside the interval.
    assert!(html.contains("class=\"note score-note\""), "{html}");
    // What the matchmaker makes, for authors choosing what their lobby offers.
    assert!(
        html.contains("Tables made: <strong>classic</strong> at 2 seats."),
        "{html}"
    );
    assert!(html.contains("<h2>Provisional</h2>"));
    let h2 = get(&server, "/ladder?profile=classic", true).await;
    assert_eq!(h2.status, StatusCode::OK);
    assert_eq!(page_order(&h2.text()), order);
    // `/` is the same board.
    assert_eq!(page_order(&get(&server, "/", false).await.text()), order);

    // Paging: one line a page, following the next links.
    let mut seen = Vec::new();
    let mut next = Some("/ladder?season=season-1&profile=classic&per_page=1".to_string());
    while let Some(path) = next.take() {
        let got = get(&server, &path, false).await;
        assert_eq!(got.status, StatusCode::OK, "{path}");
        let html = got.text();
        seen.extend(page_order(&html));
        next = html
            .split("rel=\"next\" href=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .map(|href| href.replace("&amp;", "&"));
    }
    assert_eq!(seen, order);

    // The evil bot's page: its name escaped, its matches linked, with replays.
    let bot = get(&server, &format!("/ladder/bots/{evil}"), false).await;
    assert_eq!(bot.status, StatusCode::OK);
    let html = bot.text();
    assert!(html.contains("&lt;b&gt;&quot;evil&quot; &amp; &#39;co&#39;&lt;/b&gt;"));
    assert!(!html.contains(EVIL));
    let matches: Vec<String> = attr_values(&html, "href")
        .into_iter()
        .filter(|h| h.starts_with("/ladder/matches/"))
        .collect();
    assert!(matches.len() >= 2, "{html}");
    let replays: Vec<String> = attr_values(&html, "href")
        .into_iter()
        .filter(|h| h.starts_with("/ladder/replays/"))
        .collect();
    assert!(replays.len() >= 2, "{html}");

    // A match page: the two seats linked to their bots, the replay linked. (The newest match
    // may be one that aborted unplayed because a lobby closed just before its invitation.)
    let mut finished = None;
    for link in &matches {
        let m = get(&server, link, false).await;
        assert_eq!(m.status, StatusCode::OK);
        let html = m.text();
        if html.contains("<dd class=\"state\">finished</dd>") {
            finished = Some((link.clone(), html));
            break;
        }
        assert!(html.contains("<dd class=\"state\">aborted</dd>"), "{html}");
    }
    let (link, html) = finished.expect("a finished match among the bot's matches");
    assert!(html.contains(&format!("href=\"/ladder/bots/{evil}\"")));
    let seat_links = attr_values(&html, "href")
        .into_iter()
        .filter(|h| h.starts_with("/ladder/bots/"))
        .count();
    assert_eq!(seat_links, 2, "{html}");
    let replay = link.replace("/matches/", "/replays/");
    assert!(html.contains(&format!("href=\"{replay}\"")));
    check_replay(&server, &replay).await;
    check_replay(&server, &replays[1]).await;
    // The match viewer, linked from the match page, on the same port: its frames are the
    // finished match's (the viewer's pages come before the ladder's).
    let watch = attr_values(&html, "href")
        .into_iter()
        .find(|h| h.starts_with("/matches/") && h.ends_with("/view"))
        .unwrap_or_else(|| panic!("a viewer link: {html}"));
    let view = get(&server, &watch, false).await;
    assert_eq!(view.status, StatusCode::OK, "{}", view.text());
    assert!(view.text().contains("id=\"viewer\""), "{}", view.text());
    let frames = get(&server, &watch.replace("/view", "/frames"), false).await;
    assert_eq!(frames.status, StatusCode::OK, "{}", frames.text());
    assert!(
        frames.text().contains("\"finished\":true"),
        "{}",
        frames.text()
    );

    // Unknown ids and paths: 404 pages; bad queries: 400 pages, with the input escaped.
    for path in [
        "/ladder/bots/99999",
        "/ladder/matches/99999",
        "/ladder/replays/99999",
        "/ladder/bots/abc",
        "/nothing/here",
        "/ladder?season=%3Cscript%3E",
        "/ladder?per_page=1&page=99",
    ] {
        let got = get(&server, path, false).await;
        assert_eq!(got.status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(got.content_type, "text/html; charset=utf-8");
        assert!(!got.text().contains("<script>"), "{path}");
    }
    for path in [
        "/ladder?page=x",
        "/ladder?profile=whist",
        "/ladder?per_page=0",
        "/ladder?season=a&season=b",
        "/ladder?colour=%3Cscript%3E",
        "/ladder/matches/1?x=1",
    ] {
        let got = get(&server, path, true).await;
        assert_eq!(got.status, StatusCode::BAD_REQUEST, "{path}");
        assert!(!got.text().contains("<script>"), "{path}");
    }

    // Closing the season freezes its board; the new season's board starts empty.
    let mut c = LadderServiceClient::new(server.channel().await);
    c.close_season(pb::CloseSeasonRequest {})
        .await
        .expect("close");
    c.open_season(pb::OpenSeasonRequest {
        name: "season <2>".into(),
    })
    .await
    .expect("open");
    let closed = get(&server, "/ladder?season=season-1&profile=classic", false).await;
    let html = closed.text();
    assert_eq!(page_order(&html), order);
    assert!(html.contains("frozen"), "{html}");
    let current = get(&server, "/ladder", false).await.text();
    assert!(current.contains("season &lt;2&gt;"), "{current}");
    assert!(current.contains("href=\"/ladder?season=season%20%3C2%3E&amp;profile=classic\""));
    assert!(page_order(&current).is_empty());

    // gRPC still answers on the same port.
    assert_eq!(grpc_order(&server, "season-1").await, order);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leaderboard_loads_in_headless_chromium() {
    let Some(chromium) = chromium_or_explain() else {
        return;
    };
    let (server, ids) = arena(&[("ann", "ann-bot"), ("ben", EVIL)], 2).await;
    let order = grpc_order(&server, "").await;
    assert_eq!(order.len(), 2);

    let url = format!("{}/ladder?profile=classic", server.url());
    let dom = tokio::task::spawn_blocking(move || dump_dom(&chromium, &url))
        .await
        .expect("Chromium ran");
    // The browser built the table in the expected order, with the names as text.
    assert_eq!(page_order(&dom), order, "{dom}");
    assert!(
        dom.contains("&lt;b&gt;\"evil\" &amp; 'co'&lt;/b&gt;"),
        "{dom}"
    );
    let hrefs = attr_values(&dom, "href");
    for id in &ids {
        assert!(
            hrefs.contains(&format!("/ladder/bots/{id}?season=season-1")),
            "{hrefs:?}"
        );
    }

    // From the board to the bot page to a replay link, which downloads a replay that verifies.
    let bot_href = format!("/ladder/bots/{}?season=season-1", ids[1]);
    let bot = get(&server, &bot_href, false).await.text();
    let replay = attr_values(&bot, "href")
        .into_iter()
        .find(|h| h.starts_with("/ladder/replays/"))
        .expect("a replay link on the bot page");
    let url = format!("{}{bot_href}", server.url());
    let chromium = chromium_or_explain().expect("found above");
    let bot_dom = tokio::task::spawn_blocking(move || dump_dom(&chromium, &url))
        .await
        .expect("Chromium ran");
    assert!(
        attr_values(&bot_dom, "href").contains(&replay),
        "the browser sees the replay link: {bot_dom}"
    );
    check_replay(&server, &replay).await;
    server.stop().await;
}
