//! End to end: the match viewer on the server's port. Real matches (one seat played over gRPC,
//! the others by built-in bots) in every profile; the frames the server sends are compared with
//! the engine's own replay of the match, and the page, loaded in headless Chromium at a
//! permalinked event, shows exactly the engine's state there. A live match is followed as it is
//! played, showing only what a spectator may see and whose turn it is with the time it has left
//! (checked in the page Chromium renders). A seat's view shows its prompts: what it was offered
//! and the actions of its the server refused, at the event they came at. The
//! refusals (every hand of a live match, a wrong token, a bad query, an unknown match) carry
//! their typed reasons.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

mod common;
#[path = "common/web.rs"]
mod web;

use common::{Seat, TestServer, play_to_end};
use hyper::StatusCode;
use maumau::pb;
use maumau_engine::{Action, Game, MatchConfig};
use web::{chromium_or_explain, dump_dom, get, screenshot};

/// A match of `profile` at `seats` seats, at most two rounds: seat 0 played over gRPC, the
/// others by the heuristic bot. Returns its creation and, once it has ended, its replay.
async fn finished(
    server: &TestServer,
    profile: pb::Profile,
    seats: u32,
    seed: u64,
) -> (pb::CreateMatchResponse, pb::Replay) {
    let mut matches = server.matches().await;
    let created = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                max_rounds: 2,
                ..common::config(profile, seats)
            }),
            seed: Some(seed),
            bots: (1..seats)
                .map(|seat| pb::SeatBot {
                    seat,
                    kind: pb::BotKind::Heuristic as i32,
                })
                .collect(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let mut play = server.play_client().await;
    let seat = Seat::join(&mut play, &created.seat_tokens[0].token, None).await;
    play_to_end(seat, seed).await;
    let replay = matches
        .get_replay(pb::GetReplayRequest {
            match_id: created.match_id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .replay
        .unwrap();
    (created, replay)
}

/// The engine's state after each step of the replay: index 0 after the first deal.
fn engine_states(replay: &pb::Replay) -> Vec<Game> {
    let config = MatchConfig::try_from(replay.config.as_ref().unwrap()).unwrap();
    let mut game =
        maumau::replay::start_game(config, replay.seed, replay.start.as_ref(), &mut ()).unwrap();
    let mut states = vec![game];
    for a in &replay.actions {
        let action = Action::try_from(a.action.as_ref().unwrap()).unwrap();
        game.apply(a.seat as u8, action).unwrap();
        states.push(game);
    }
    states
}

fn codes(game: &Game, seat: u8) -> Vec<String> {
    game.hand(seat).iter().map(|c| c.to_string()).collect()
}

/// The value of `attr="…"` on the element with `id="…"`.
fn attr_of_id(dom: &str, id: &str, attr: &str) -> String {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id}"));
    let start = dom[..at].rfind('<').unwrap();
    let end = at + dom[at..].find('>').unwrap();
    let tag = &dom[start..end];
    let needle = format!("{attr}=\"");
    let from = tag
        .find(&needle)
        .unwrap_or_else(|| panic!("no {attr} in {tag}"))
        + needle.len();
    tag[from..from + tag[from..].find('"').unwrap()].to_string()
}

/// The text of the element with `id="…"`.
fn text_of_id(dom: &str, id: &str) -> String {
    let at = dom.find(&format!("id=\"{id}\"")).unwrap();
    let from = at + dom[at..].find('>').unwrap() + 1;
    dom[from..from + dom[from..].find('<').unwrap()].to_string()
}

/// Each seat's cards on the table as the page drew them (`data-card` values), by seat.
fn seat_cards(dom: &str, seats: usize) -> Vec<Vec<String>> {
    let table = &dom[dom.find("id=\"seats\"").unwrap()..dom.find("class=\"centre\"").unwrap()];
    let mut out = vec![Vec::new(); seats];
    for chunk in table.split("<div class=\"seat").skip(1) {
        let seat: usize = chunk[chunk.find("data-seat=\"").unwrap() + 11..]
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        out[seat] = chunk
            .split("data-card=\"")
            .skip(1)
            .map(|c| c.split('"').next().unwrap().to_string())
            .collect();
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewer_shows_the_engine_state_at_a_permalinked_event_in_every_profile() {
    let chromium = chromium_or_explain();
    let server = TestServer::start().await;
    let tables = [
        (pb::Profile::Classic, 3),
        (pb::Profile::PenaltyPoints, 3),
        (pb::Profile::Brazilian, 4),
        (pb::Profile::Romanian32, 3),
    ];
    for (i, (profile, seats)) in tables.into_iter().enumerate() {
        let (created, replay) = finished(&server, profile, seats, 40 + i as u64).await;
        let states = engine_states(&replay);
        let id = &created.match_id;

        // The frames the server sends: the engine's state after every step.
        let got = get(&server, &format!("/matches/{id}/frames"), false).await;
        assert_eq!(got.status, StatusCode::OK, "{}", got.text());
        assert_eq!(got.content_type, "application/json");
        let v: serde_json::Value = serde_json::from_slice(&got.body).unwrap();
        assert_eq!(v["perspective"], "omniscient", "the default after the end");
        assert_eq!(v["finished"], true);
        let frames = v["frames"].as_array().unwrap();
        assert_eq!(frames.len(), states.len(), "{profile:?}");
        for (frame, game) in frames.iter().zip(&states) {
            let t = &frame["table"];
            assert_eq!(t["top"], game.top().to_string());
            assert_eq!(t["debt"], game.debt());
            assert_eq!(t["to_act"], serde_json::json!(game.to_act()));
            for s in 0..seats as u8 {
                assert_eq!(
                    t["seats"][s as usize]["hand"],
                    serde_json::json!(codes(game, s))
                );
            }
        }

        // The page at a permalinked event, in a real browser: an event with a debt or a named
        // suit when the match has one, else the middle.
        let Some(chromium) = chromium.clone() else {
            continue;
        };
        let k = (1..states.len())
            .find(|&k| states[k].debt() > 0 && states[k].to_act().is_some())
            .or_else(|| (1..states.len()).find(|&k| states[k].named_suit().is_some()))
            .unwrap_or(states.len() / 2);
        let game = states[k];
        let url = format!("{}/matches/{id}/view#e={k}", server.url());
        let dom = tokio::task::spawn_blocking(move || dump_dom(&chromium, &url))
            .await
            .unwrap();
        assert_eq!(attr_of_id(&dom, "viewer", "data-e"), k.to_string(), "{dom}");
        assert_eq!(attr_of_id(&dom, "top", "data-card"), game.top().to_string());
        assert_eq!(text_of_id(&dom, "debt"), game.debt().to_string());
        assert_eq!(
            attr_of_id(&dom, "named", "data-suit"),
            game.named_suit()
                .map(|s| s.letter().to_string())
                .unwrap_or_default()
        );
        assert_eq!(
            attr_of_id(&dom, "turn", "data-seat"),
            game.to_act().map(|s| s.to_string()).unwrap_or_default()
        );
        let hands = seat_cards(&dom, seats as usize);
        for s in 0..seats as u8 {
            assert_eq!(hands[s as usize], codes(&game, s), "{profile:?} seat {s}");
        }
        // The move list has every step, and the current one is marked.
        assert_eq!(
            dom.matches("<li data-e=").count()
                + dom.matches("<li class=\"current\" data-e=").count(),
            states.len()
        );
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewer_refuses_what_it_may_not_show_with_typed_reasons() {
    let server = TestServer::start().await;
    let (done, _) = finished(&server, pb::Profile::Classic, 2, 7).await;
    let (other, _) = finished(&server, pb::Profile::Classic, 2, 8).await;
    // An open match: seat 0 never joins.
    let mut matches = server.matches().await;
    let open = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(common::config(pb::Profile::Classic, 2)),
            bots: vec![pb::SeatBot {
                seat: 1,
                kind: pb::BotKind::Heuristic as i32,
            }],
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let json = |got: &web::Got| serde_json::from_slice::<serde_json::Value>(&got.body).unwrap();
    let refused = |got: &web::Got, status: StatusCode, reason: pb::ErrorReason| {
        assert_eq!(got.status, status, "{}", got.text());
        assert_eq!(got.reason, reason.as_str_name());
    };

    // A live match: what a spectator sees, or with a seat's token that seat's own view; never
    // every hand, nor a seat's view without its token, while it is played.
    let id = &open.match_id;
    let got = get(&server, &format!("/matches/{id}/frames"), false).await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.text());
    let v = json(&got);
    assert_eq!(
        (v["perspective"].clone(), v["live"].clone()),
        ("public".into(), true.into())
    );
    assert_eq!(v["finished"], false);
    for f in v["frames"].as_array().unwrap() {
        for s in f["table"]["seats"].as_array().unwrap() {
            assert!(s["hand"].is_null(), "a hand in a live public view: {f}");
        }
    }
    let token = &open.seat_tokens[0].token;
    let v = json(
        &get(
            &server,
            &format!("/matches/{id}/frames?token={token}"),
            false,
        )
        .await,
    );
    assert_eq!(v["perspective"], "seat 0");
    for f in v["frames"].as_array().unwrap() {
        assert!(f["table"]["seats"][0]["hand"].is_array());
        assert!(f["table"]["seats"][1]["hand"].is_null());
    }
    for query in ["view=omniscient", "view=1", "view=0"] {
        let got = get(&server, &format!("/matches/{id}/frames?{query}"), false).await;
        refused(
            &got,
            StatusCode::CONFLICT,
            pb::ErrorReason::MatchNotFinished,
        );
        assert_eq!(json(&got)["reason"], "ERROR_REASON_MATCH_NOT_FINISHED");
    }
    let page = get(&server, &format!("/matches/{id}/view"), false).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.text().contains("data-live"), "{}", page.text());
    assert!(!page.text().contains("data-card"));

    // A finished match: a seat's token gives that seat's view; a public view shows no hand.
    let id = &done.match_id;
    let got = get(
        &server,
        &format!("/matches/{id}/frames?token={}", done.seat_tokens[0].token),
        false,
    )
    .await;
    assert_eq!(got.status, StatusCode::OK);
    let v = json(&got);
    assert_eq!(v["perspective"], "seat 0");
    for f in v["frames"].as_array().unwrap() {
        assert!(f["table"]["seats"][0]["hand"].is_array());
        assert!(f["table"]["seats"][1]["hand"].is_null());
    }
    let v = json(&get(&server, &format!("/matches/{id}/frames?view=public"), false).await);
    assert_eq!(v["perspective"], "public");
    for f in v["frames"].as_array().unwrap() {
        for s in f["table"]["seats"].as_array().unwrap() {
            assert!(s["hand"].is_null());
        }
    }
    let v = json(&get(&server, &format!("/matches/{id}/frames?view=1"), false).await);
    assert_eq!(
        v["perspective"], "seat 1",
        "any seat's view once the match has ended"
    );

    // Wrong tokens, bad queries, unknown matches.
    let got = get(&server, &format!("/matches/{id}/frames?token=nope"), false).await;
    refused(&got, StatusCode::FORBIDDEN, pb::ErrorReason::BadToken);
    let foreign = &other.seat_tokens[0].token;
    let got = get(
        &server,
        &format!("/matches/{id}/frames?token={foreign}"),
        false,
    )
    .await;
    refused(&got, StatusCode::FORBIDDEN, pb::ErrorReason::BadToken);
    let got = get(&server, &format!("/matches/{id}/frames?view=7"), false).await;
    refused(&got, StatusCode::BAD_REQUEST, pb::ErrorReason::NoSuchSeat);
    let got = get(&server, &format!("/matches/{id}/frames?colour=red"), false).await;
    refused(
        &got,
        StatusCode::BAD_REQUEST,
        pb::ErrorReason::InvalidArgument,
    );
    let got = get(&server, &format!("/matches/{id}/view?view=nobody"), false).await;
    refused(
        &got,
        StatusCode::BAD_REQUEST,
        pb::ErrorReason::InvalidArgument,
    );
    let got = get(&server, "/matches/m%3Cx%3E/frames", true).await;
    refused(&got, StatusCode::NOT_FOUND, pb::ErrorReason::MatchNotFound);
    assert_eq!(json(&got)["message"], "no match `m<x>`");
    let got = get(&server, "/matches/m%3Cx%3E/view", false).await;
    refused(&got, StatusCode::NOT_FOUND, pb::ErrorReason::MatchNotFound);
    assert!(
        got.text().contains("no match `m&lt;x&gt;`"),
        "escaped: {}",
        got.text()
    );

    // The front page lists every match with a link to its viewer (over HTTP/2 too).
    for (path, http2) in [("/", false), ("/matches", true)] {
        let list = get(&server, path, http2).await;
        assert_eq!(list.status, StatusCode::OK);
        assert_eq!(list.content_type, "text/html; charset=utf-8");
        for m in [&done.match_id, &other.match_id, &open.match_id] {
            assert!(
                list.text().contains(&format!("href=\"/matches/{m}/view\"")),
                "{}",
                list.text()
            );
        }
    }
    server.stop().await;
}

/// A live match followed as it is played: its public frames grow with every action, never hold a
/// hand, and the page Chromium renders of it shows no card face in any seat's hand; once it has
/// ended, every hand is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_match_is_followed_showing_only_what_a_spectator_sees() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                max_rounds: 1,
                ..common::config(pb::Profile::Classic, 2)
            }),
            seed: Some(21),
            bots: vec![pb::SeatBot {
                seat: 1,
                kind: pb::BotKind::Heuristic as i32,
            }],
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let id = &created.match_id;
    let json = |got: &web::Got| serde_json::from_slice::<serde_json::Value>(&got.body).unwrap();
    let mut play = server.play_client().await;
    let mut seat = Seat::join(&mut play, &created.seat_tokens[0].token, None).await;
    let chromium = chromium_or_explain();
    let mut seen = 0;
    for step in 0..3u64 {
        let prompt = seat.required_prompt().await;
        let v = json(&get(&server, &format!("/matches/{id}/frames"), false).await);
        assert_eq!(v["live"], true);
        let frames = v["frames"].as_array().unwrap();
        assert!(
            frames.len() > seen,
            "the frames grow as the match is played"
        );
        seen = frames.len();
        // Whose turn and the time it has left: seat 0, prompted and not answering yet, within
        // its decision time and bank.
        assert_eq!(frames[seen - 1]["table"]["to_act"], 0);
        let left = v["time_left_ms"]
            .as_u64()
            .expect("the time left while seat 0 is to act");
        assert!(left > 0 && left <= 120_000, "{left}");
        for f in frames {
            for s in f["table"]["seats"].as_array().unwrap() {
                assert!(s["hand"].is_null(), "a hand in a live public view: {f}");
            }
        }
        if step == 2
            && let Some(chromium) = &chromium
        {
            // The viewer's own leak test, at the DOM: the live page draws card backs only.
            let dom = dump_dom(chromium, &format!("{}/matches/{id}/view", server.url()));
            assert!(dom.contains("data-live"), "not the live page");
            let where_ = text_of_id(&dom, "where");
            assert!(
                where_.ends_with(&format!("/ {}", seen - 1)),
                "at the newest frame: {where_}"
            );
            assert!(
                seat_cards(&dom, 2).iter().all(Vec::is_empty),
                "a card face in a seat's hand on the live page"
            );
            assert_eq!(attr_of_id(&dom, "turn", "data-seat"), "0");
            let ms: u64 = attr_of_id(&dom, "deadline", "data-ms").parse().unwrap();
            assert!(ms > 0 && ms <= 120_000, "{ms}");
            let shown = text_of_id(&dom, "deadline");
            assert!(
                shown.starts_with("S0") && shown.ends_with(" s left"),
                "{shown}"
            );
            let png = shots().join("live-public.png");
            let url = format!("{}/matches/{id}/view", server.url());
            screenshot(chromium, &url, &png, 1280, 900);
        }
        seat.send_action(prompt.state_id, common::default_index(&prompt), step)
            .await;
    }
    play_to_end(seat, 21).await;
    let v = json(&get(&server, &format!("/matches/{id}/frames"), false).await);
    assert_eq!(
        (v["live"].clone(), v["finished"].clone()),
        (false.into(), true.into())
    );
    assert_eq!(
        v["perspective"], "omniscient",
        "every hand once it has ended"
    );
}

/// The folder for the screenshots people look at (`target/test-output/viewer`).
fn shots() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-output/viewer");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A seat sends an action the rules refuse, then a legal one: the replay records the refusal
/// with its reason and step (and still verifies), and the seat's view (live with its token,
/// and after the end) shows it at that event, in the frames and in the page; nobody else's
/// view does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seats_view_shows_its_refused_action_at_the_event_it_came_at() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                max_rounds: 1,
                ..common::config(pb::Profile::Classic, 2)
            }),
            seed: Some(31),
            bots: vec![pb::SeatBot {
                seat: 1,
                kind: pb::BotKind::Heuristic as i32,
            }],
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let id = &created.match_id;
    let token = &created.seat_tokens[0].token;
    let json = |got: &web::Got| serde_json::from_slice::<serde_json::Value>(&got.body).unwrap();
    let mut play = server.play_client().await;
    let mut seat = Seat::join(&mut play, token, None).await;
    // Seat 0's second decision: it first names a card action it was not offered.
    let mut prompt = seat.required_prompt().await;
    seat.send_action(prompt.state_id, common::default_index(&prompt), 1)
        .await;
    prompt = seat.required_prompt().await;
    let offered: Vec<u32> = prompt.legal_actions.iter().map(|a| a.index).collect();
    let illegal = (0..192).find(|i| !offered.contains(i)).unwrap();
    seat.send_action(prompt.state_id, illegal, 2).await;
    let refused = seat
        .until(|m| match &m.kind {
            Some(pb::server_message::Kind::Rejected(r)) => Some(r.clone()),
            _ => None,
        })
        .await;
    // Live, with the seat's token: the refusal is at the newest event, where the seat stood.
    let live = json(
        &get(
            &server,
            &format!("/matches/{id}/frames?token={token}"),
            false,
        )
        .await,
    );
    assert_eq!(live["live"], true);
    let frames = live["frames"].as_array().unwrap();
    let k = frames.len() - 1;
    let line = frames[k]["rejections"][0]["line"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(line.starts_with("S0 test tried “play "), "{line}");
    assert!(line.ends_with(&refused.message), "{line}");
    let public = json(&get(&server, &format!("/matches/{id}/frames"), false).await);
    assert!(
        public["frames"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["rejections"].as_array().unwrap().is_empty()),
        "a seat's refusals in the public view"
    );
    seat.send_action(prompt.state_id, common::default_index(&prompt), 3)
        .await;
    play_to_end(seat, 31).await;

    // The replay keeps it, and still verifies.
    let replay = matches
        .get_replay(pb::GetReplayRequest {
            match_id: id.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .replay
        .unwrap();
    assert_eq!(replay.rejections.len(), 1, "{:?}", replay.rejections);
    let r = &replay.rejections[0];
    assert_eq!((r.seat, r.step as usize), (0, k));
    assert_eq!(r.reason, refused.reason);
    assert_eq!(r.message, refused.message);
    assert!(r.action.is_some());
    let verified = matches
        .verify_replay(pb::VerifyReplayRequest {
            replay: Some(replay.clone()),
        })
        .await
        .unwrap()
        .into_inner();
    assert!(verified.valid, "{verified:?}");

    // After the end: seat 0's view and the omniscient one show it at event k, and only there.
    for (view, shown) in [
        ("0", true),
        ("omniscient", true),
        ("1", false),
        ("public", false),
    ] {
        let v = json(&get(&server, &format!("/matches/{id}/frames?view={view}"), false).await);
        let at: Vec<u64> = v["frames"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| !f["rejections"].as_array().unwrap().is_empty())
            .map(|f| f["index"].as_u64().unwrap())
            .collect();
        let want = if shown { vec![k as u64] } else { vec![] };
        assert_eq!(at, want, "view {view}");
    }

    // The page, as seat 0 saw it, at that event: the refusal is listed under the step, and
    // seat 0's offered actions beside it.
    let Some(chromium) = chromium_or_explain() else {
        return;
    };
    let url = format!("{}/matches/{id}/view?view=0#e={k}", server.url());
    let dom = {
        let (chromium, url) = (chromium.clone(), url.clone());
        tokio::task::spawn_blocking(move || dump_dom(&chromium, &url))
            .await
            .unwrap()
    };
    assert_eq!(attr_of_id(&dom, "viewer", "data-e"), k.to_string());
    let list = &dom[dom.find("id=\"refused\"").unwrap()..];
    let list = &list[..list.find("</ul>").unwrap()];
    assert!(list.contains("data-seat=\"0\""), "{list}");
    assert!(list.contains("S0 test tried “play "), "{list}");
    assert!(dom.contains("<b>may: </b>"), "seat 0's offered actions");
    // With the seat's token the page shows that seat's view and offers no other (a token sees
    // for its own seat only).
    let with_token = format!("{}/matches/{id}/view?token={token}", server.url());
    let dom = {
        let chromium = chromium.clone();
        tokio::task::spawn_blocking(move || dump_dom(&chromium, &with_token))
            .await
            .unwrap()
    };
    assert_eq!(text_of_id(&dom, "perspective-now"), "seat 0");
    assert!(
        !dom.contains("id=\"perspective\""),
        "no perspective to switch to with a token"
    );
    let png = shots().join("seat-view-refused.png");
    tokio::task::spawn_blocking(move || screenshot(&chromium, &url, &png, 1280, 900))
        .await
        .unwrap();
    server.stop().await;
}

/// The `Content-Security-Policy` of a response as directive name → sources.
fn policy(got: &web::Got) -> std::collections::BTreeMap<String, Vec<String>> {
    let value = got
        .headers
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    value
        .split(';')
        .filter_map(|d| {
            let mut words = d.split_whitespace();
            let name = words.next()?.to_string();
            Some((name, words.map(str::to_string).collect()))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_viewers_pages_may_be_framed_only_by_this_server_and_the_allowed_origins() {
    const CLUB: &str = "https://club.example";
    let server = TestServer::start_with(|setup| {
        setup.server.allow_origins = vec![CLUB.to_string()];
    })
    .await;
    let (done, _) = finished(&server, pb::Profile::Classic, 2, 7).await;
    let id = &done.match_id;
    let pages = [
        ("/matches".to_string(), false),
        (format!("/matches/{id}/view"), true),
        ("/play".to_string(), true),
        (format!("/matches/{id}/frames"), false),
        ("/matches/nope/view".to_string(), false),
        ("/matches/nope/frames".to_string(), false),
        (format!("/matches/{id}/frames?view=9"), false),
    ];
    for (path, scripted) in pages {
        let got = get(&server, &path, false).await;
        let header = |name: &str| {
            got.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default()
                .to_string()
        };
        assert_eq!(header("referrer-policy"), "no-referrer", "{path}");
        assert_eq!(header("x-content-type-options"), "nosniff", "{path}");
        let csp = policy(&got);
        assert_eq!(
            csp.get("frame-ancestors"),
            Some(&vec!["'self'".to_string(), CLUB.to_string()]),
            "{path}: {csp:?}"
        );
        assert_eq!(csp["default-src"], ["'none'"], "{path}");
        if got.content_type.starts_with("text/html") {
            assert_eq!(csp["connect-src"], ["'self'"], "{path}");
            assert_eq!(csp["style-src"], ["'unsafe-inline'"], "{path}");
            let scripts = &csp["script-src"];
            if scripted {
                // The one inlined script, by its hash: no other script may run.
                assert_eq!(scripts.len(), 1, "{path}: {scripts:?}");
                assert!(scripts[0].starts_with("'sha256-"), "{path}: {scripts:?}");
            } else {
                assert_eq!(scripts, &["'none'"], "{path}");
            }
        } else {
            assert_eq!(csp.len(), 2, "{path}: a JSON answer loads nothing: {csp:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_or_conflicting_view_or_token_is_refused() {
    let server = TestServer::start().await;
    let (done, _) = finished(&server, pb::Profile::Classic, 2, 7).await;
    let id = &done.match_id;
    let seat0 = &done.seat_tokens[0].token;
    let seat1 = "not-a-token";
    for query in [
        format!("token={seat0}&token={seat1}"),
        format!("token={seat0}&token={seat0}"),
        "view=1&view=0".to_string(),
        "view=public&view=public".to_string(),
        format!("token={seat0}&view=1"),
        format!("view=omniscient&token={seat0}"),
    ] {
        let got = get(&server, &format!("/matches/{id}/frames?{query}"), false).await;
        assert_eq!(
            got.status,
            StatusCode::BAD_REQUEST,
            "{query}: {}",
            got.text()
        );
        assert_eq!(
            got.reason,
            pb::ErrorReason::InvalidArgument.as_str_name(),
            "{query}"
        );
        let v: serde_json::Value = serde_json::from_slice(&got.body).unwrap();
        assert_eq!(v["reason"], "ERROR_REASON_INVALID_ARGUMENT", "{query}");
        assert!(!v["message"].as_str().unwrap().is_empty(), "{query}");
    }
    // The page refuses a repeated parameter too, before it loads anything.
    let got = get(&server, &format!("/matches/{id}/view?view=1&view=0"), false).await;
    assert_eq!(got.status, StatusCode::BAD_REQUEST);
    assert_eq!(got.reason, pb::ErrorReason::InvalidArgument.as_str_name());
    // A view that is the token's own is no conflict.
    let got = get(
        &server,
        &format!("/matches/{id}/frames?token={seat0}&view=0"),
        false,
    )
    .await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.text());
    let v: serde_json::Value = serde_json::from_slice(&got.body).unwrap();
    assert_eq!(v["perspective"], "seat 0");
}

/// The result's line, as the notation writes it: the winner by name, its total and the others',
/// and which way totals count.
#[test]
fn the_result_line_names_the_winner_and_how_totals_count() {
    use maumau::viewer::Outcome;
    use maumau_engine::outcome::MAX_SEATS;
    use maumau_engine::profile::Scoring;
    let result = |placings: &[u8], totals: &[i32]| {
        let mut r = maumau_engine::MatchResult {
            seats: placings.len() as u8,
            placings: [0; MAX_SEATS],
            totals: [0; MAX_SEATS],
            rounds_won: [0; MAX_SEATS],
            rounds: 3,
        };
        r.placings[..placings.len()].copy_from_slice(placings);
        r.totals[..totals.len()].copy_from_slice(totals);
        r
    };
    let names: Vec<String> = ["", "bob", "alices-bot", ""].map(String::from).to_vec();
    let penalty = Outcome::of(&result(&[3, 2, 1, 4], &[41, 23, 0, 71]), Scoring::Penalty);
    assert_eq!(
        penalty.line_with(&names),
        "S2 alices-bot wins the match (penalty 0; others 41, 23, 71; lowest penalty wins)"
    );
    assert_eq!(
        penalty.line, "S2 wins the match (penalty 0; others 41, 23, 71; lowest penalty wins)",
        "seat labels where no names are known"
    );
    let places: Vec<(u8, u8, i32)> = penalty
        .standings
        .iter()
        .map(|p| (p.place, p.seat, p.total))
        .collect();
    assert_eq!(places, [(1, 2, 0), (2, 1, 23), (3, 0, 41), (4, 3, 71)]);
    let points = Outcome::of(&result(&[1, 1, 3], &[150, 150, 20]), Scoring::Positive);
    assert_eq!(
        points.line_with(&names),
        "S0 and S1 bob share the win (points 150; others 20; most points win)"
    );
}

/// A finished match's page opens at its first event (its end would spoil it), with a button to
/// jump to the result; its last frame names the winner (by the players' names) and shows the
/// standings as a small card. `/favicon.ico` answers 204 (the pages declare an inline icon).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_match_opens_at_its_start_and_ends_with_its_result() {
    let chromium = chromium_or_explain();
    let server = TestServer::start().await;
    let icon = get(&server, "/favicon.ico", false).await;
    assert_eq!(icon.status, StatusCode::NO_CONTENT, "{}", icon.text());

    for (profile, word, how) in [
        (pb::Profile::Classic, "penalty", "lowest penalty wins"),
        (pb::Profile::Romanian32, "points", "most points win"),
    ] {
        let (created, replay) = finished(&server, profile, 3, 70).await;
        let id = &created.match_id;
        let states = engine_states(&replay);
        let r = states.last().unwrap().match_result().unwrap();
        let got = get(&server, &format!("/matches/{id}/frames"), false).await;
        let v: serde_json::Value = serde_json::from_slice(&got.body).unwrap();
        let names: Vec<String> = v["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect();
        let label = |s: u8| match names.get(s as usize).filter(|n| !n.is_empty()) {
            Some(n) => format!("S{s} {n}"),
            None => format!("S{s}"),
        };
        let frames = v["frames"].as_array().unwrap();
        let last = frames.last().unwrap();
        let line = last["result"]["line"].as_str().unwrap().to_string();
        let winners: Vec<u8> = r.winners().collect();
        let who = winners
            .iter()
            .map(|&s| label(s))
            .collect::<Vec<_>>()
            .join(" and ");
        assert!(
            line.starts_with(&format!("{who} ")),
            "{profile:?}: `{line}` names {who}"
        );
        assert!(
            line.contains(&format!("({word} {}", r.totals[winners[0] as usize])),
            "{line}"
        );
        assert!(line.ends_with(&format!("; {how})")), "{line}");
        assert!(
            last["notes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|n| n.as_str() == Some(line.as_str())),
            "the last frame's notes say it: {last}"
        );
        assert!(
            frames[..frames.len() - 1]
                .iter()
                .all(|f| f["result"].is_null())
        );
        let standings = last["result"]["standings"].as_array().unwrap();
        assert_eq!(standings.len(), 3);
        for p in standings {
            let s = p["seat"].as_u64().unwrap() as usize;
            assert_eq!(p["place"], r.placings[s]);
            assert_eq!(p["total"], r.totals[s]);
        }

        let Some(chromium) = chromium.clone() else {
            continue;
        };
        // Without an event in the address: the first one, the result a click away.
        let url = format!("{}/matches/{id}/view", server.url());
        let dom = {
            let (chromium, url) = (chromium.clone(), url.clone());
            tokio::task::spawn_blocking(move || dump_dom(&chromium, &url))
                .await
                .unwrap()
        };
        assert_eq!(attr_of_id(&dom, "viewer", "data-e"), "0", "{dom}");
        let button = &dom[dom.find("id=\"to-result\"").unwrap()..];
        let button = &button[..button.find('>').unwrap()];
        assert!(!button.contains("hidden"), "{button}");
        assert!(dom.contains("jump to result"));
        // At the end: the result and the standings card.
        let end = format!("{url}#e=end");
        let dom = {
            let (chromium, end) = (chromium.clone(), end.clone());
            tokio::task::spawn_blocking(move || dump_dom(&chromium, &end))
                .await
                .unwrap()
        };
        assert_eq!(
            attr_of_id(&dom, "viewer", "data-e"),
            (frames.len() - 1).to_string()
        );
        let card = &dom[dom.find("id=\"result-card\"").unwrap()..];
        let card = &card[..card.find("</section>").unwrap()];
        assert!(
            !card[..card.find('>').unwrap()].contains("hidden"),
            "{card}"
        );
        assert!(card.contains("<th>place</th>"), "{card}");
        assert!(
            card.contains(&format!("<td>{}</td>", label(winners[0]))),
            "{card}"
        );
        let png = shots().join(format!("result-{word}.png"));
        tokio::task::spawn_blocking(move || screenshot(&chromium, &end, &png, 1280, 900))
            .await
            .unwrap();
    }
    server.stop().await;
}
