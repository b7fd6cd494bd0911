//! `maumau replay FILE` verifies a replay file the server wrote and refuses a tampered or
//! foreign one.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

use std::process::Command;
use std::time::Duration;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use prost::Message as _;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

/// A finished match between two built-in bots on an in-process server, as a replay.
fn a_replay() -> pb::Replay {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let data = tempfile::tempdir().unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let config = maumau_server::ServerConfig {
            data_dir: data.path().to_path_buf(),
            ..maumau_server::ServerConfig::default()
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(maumau_server::run(listener, config, async {
            let _ = stopped.await;
        }));
        let mut client = MatchServiceClient::connect(format!("http://{addr}"))
            .await
            .unwrap();
        let created = client
            .create_match(pb::CreateMatchRequest {
                config: Some(pb::MatchConfig {
                    profile: pb::Profile::Classic as i32,
                    seats: 2,
                    ..Default::default()
                }),
                bots: [0, 1]
                    .map(|seat| pb::SeatBot {
                        seat,
                        kind: pb::BotKind::Heuristic as i32,
                    })
                    .to_vec(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let mut replay = None;
        for _ in 0..600 {
            match client
                .get_replay(pb::GetReplayRequest {
                    match_id: created.match_id.clone(),
                })
                .await
            {
                Ok(r) => {
                    replay = r.into_inner().replay;
                    break;
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
        let _ = stop.send(());
        server.await.unwrap().unwrap();
        replay.expect("the match ends within 30 s")
    })
}

fn verify(bytes: &[u8]) -> (bool, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.replay");
    std::fs::write(&file, bytes).unwrap();
    let out = Command::new(BIN).arg("replay").arg(&file).output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn a_replay_file_verifies_and_a_tampered_one_does_not() {
    let replay = a_replay();
    let (ok, text) = verify(&replay.encode_to_vec());
    assert!(ok, "{text}");
    assert!(text.contains("valid"), "{text}");
    assert!(text.contains("seat 1: placing"), "{text}");

    // Another seed deals other cards: the recorded actions stop fitting, or the result differs.
    let mut tampered = replay.clone();
    tampered.seed ^= 1;
    let (ok, text) = verify(&tampered.encode_to_vec());
    assert!(!ok, "{text}");
    assert!(text.contains("does not verify"), "{text}");

    let (ok, text) = verify(b"\xff\xff not a replay");
    assert!(!ok, "{text}");
    assert!(text.contains("is not a replay"), "{text}");
}

fn run(args: &[&str], replay: &pb::Replay) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.replay");
    std::fs::write(&file, replay.encode_to_vec()).unwrap();
    let out = Command::new(BIN)
        .arg("replay")
        .arg(&file)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn show_prints_the_moves_as_the_chosen_perspective_saw_them() {
    use maumau::viewer::{Perspective, frames};
    let replay = a_replay();

    // Every hand: each move of the library's frames, numbered, in order, and every seat's deal.
    let (ok, text, err) = run(&["--show"], &replay);
    assert!(ok, "{err}");
    let all = frames(&replay, Perspective::Omniscient).unwrap();
    let mut at = 0;
    for f in &all.frames[1..] {
        let line = format!("{:>5}. {}", f.index, f.line);
        let found = text[at..]
            .find(&line)
            .unwrap_or_else(|| panic!("`{line}` in\n{text}"));
        at += found + line.len();
    }
    assert!(
        text.contains("S0 holds ") && text.contains("S1 holds "),
        "{text}"
    );
    assert!(text.contains(" plays "), "{text}");
    assert!(
        ["♣", "♦", "♥", "♠"].iter().all(|s| text.contains(s)),
        "suit symbols: {text}"
    );
    assert!(
        !text.contains("\x1b["),
        "no colours when stdout is not a terminal"
    );
    assert!(!text.contains("Played {"), "no debug values");
    assert!(text.contains("valid: the re-simulation reaches the recorded result"));

    // As seat 1 saw it: its own hand at each deal, never seat 0's (until laid down).
    let (ok, text, err) = run(&["--show", "--seat", "1"], &replay);
    assert!(ok, "{err}");
    assert!(text.contains("as seat 1 saw it"), "{text}");
    assert!(text.contains("S1 holds "), "{text}");
    assert!(!text.contains("S0 holds "), "{text}");
    let seat1 = frames(&replay, Perspective::Seat(1)).unwrap();
    for f in &seat1.frames[1..] {
        assert!(
            text.contains(&format!("{:>5}. {}\n", f.index, f.line)),
            "{}",
            f.line
        );
        if f.actor == Some(0) && f.line.contains("draws") {
            assert!(
                !f.line.contains(':'),
                "seat 0's drawn card shown to seat 1: {}",
                f.line
            );
        }
    }

    // A seat that is not at the table is refused by name.
    let (ok, _, err) = run(&["--show", "--seat", "5"], &replay);
    assert!(!ok);
    assert!(
        err.contains("seat 5 is not at this table of 2 seats"),
        "{err}"
    );
}

/// The refusals a replay records are shown under the event they came at: a seat's own in its
/// view (with what it was offered there), every seat's with every hand; the replay verifies.
#[test]
fn show_prints_a_seats_refused_actions_at_their_event() {
    let mut replay = a_replay();
    let tried = replay.actions[3].action;
    replay.rejections = vec![
        pb::ReplayRejection {
            seat: replay.actions[3].seat,
            step: 3,
            reason: pb::ErrorReason::StaleState as i32,
            message: "state 3 is stale; the current state is 4".into(),
            action: tried,
        },
        pb::ReplayRejection {
            seat: 1 - replay.actions[3].seat,
            step: 5,
            reason: pb::ErrorReason::RateLimited as i32,
            message: "too many Pings; slow down".into(),
            action: None,
        },
    ];
    let seat = replay.actions[3].seat;
    let (ok, text, err) = run(&["--show", "--seat", &seat.to_string()], &replay);
    assert!(ok, "{err}");
    assert!(text.contains("valid: the re-simulation reaches the recorded result"));
    let refused = text
        .find(&format!("✗ S{seat} tried “"))
        .unwrap_or_else(|| panic!("no refusal in\n{text}"));
    let third = text.find("    3. ").unwrap();
    let fourth = text.find("    4. ").unwrap();
    assert!(third < refused && refused < fourth, "at event 3:\n{text}");
    assert!(text[refused..].contains("— refused (stale state): state 3 is stale"));
    assert!(
        !text.contains("too many Pings"),
        "another seat's refusal:\n{text}"
    );
    assert!(text.contains(&format!("S{seat} may: ")), "{text}");
    let (ok, text, err) = run(&["--show"], &replay);
    assert!(ok, "{err}");
    assert!(
        text.contains("refused (rate limited): too many Pings"),
        "{text}"
    );
    let (ok, text, err) = run(&["--show", "--seat", &(1 - seat).to_string()], &replay);
    assert!(ok, "{err}");
    assert!(!text.contains("stale state"), "{text}");
}

#[test]
fn play_prints_readable_moves() {
    let out = Command::new(BIN)
        .args(["play", "--seats", "3", "--seed", "4"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("── Round 1: S"), "{text}");
    assert!(text.contains("    1. S"), "{text}");
    assert!(text.contains(" plays "), "{text}");
    assert!(text.contains("Round 1 over: "), "{text}");
    assert!(
        !text.contains("Played {") && !text.contains("Some("),
        "debug values: {text}"
    );
    assert!(
        !text.contains("\x1b["),
        "no colours when stdout is not a terminal"
    );
}

#[test]
fn a_tournament_game_from_replays_jsonl_is_shown_and_verified() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let ran = Command::new(BIN)
        .args([
            "tournament",
            "--seats",
            "3",
            "--deals",
            "1",
            "--threads",
            "2",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    let jsonl = out.join("replays.jsonl");
    let first: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&jsonl)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let id = first["id"].as_str().unwrap();
    let moves = first["actions"].as_array().unwrap().len();

    let html = dir.path().join("g.html");
    let shown = Command::new(BIN)
        .arg("replay")
        .arg(&jsonl)
        .args(["--game", id, "--show", "--html"])
        .arg(&html)
        .output()
        .unwrap();
    let text = String::from_utf8(shown.stdout).unwrap();
    assert!(shown.status.success(), "{text}");
    assert!(
        text.contains(&format!("match {id}: classic with 3 seats")),
        "{text}"
    );
    assert!(
        text.contains(&format!("{moves:>5}. S")),
        "every move: {text}"
    );
    // The entrants are named beside their seats, in the hands and in the moves.
    let entrants: Vec<&str> = first["entrants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(entrants.len(), 3);
    for (s, name) in entrants.iter().enumerate() {
        assert!(text.contains(&format!("S{s} {name} holds ")), "{text}");
    }
    let first_move = text.lines().find(|l| l.starts_with("    1. ")).unwrap();
    assert!(
        entrants
            .iter()
            .enumerate()
            .any(|(s, name)| first_move.starts_with(&format!("    1. S{s} {name} "))),
        "{first_move}"
    );
    assert!(text.contains("valid: the re-simulation reaches the recorded result"));
    // Every perspective is in the file, every hand first: the viewer's switch works offline.
    let page = std::fs::read_to_string(&html).unwrap();
    let views: Vec<&str> = page
        .split("class=\"frames\" type=\"application/json\" data-view=\"")
        .skip(1)
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    assert_eq!(views, ["omniscient", "public", "0", "1", "2"]);
    assert!(page.contains("id=\"perspective\""), "the switch");
    // With --seat, that seat's view alone, and no switch.
    let seat = dir.path().join("seat.html");
    let shown = Command::new(BIN)
        .arg("replay")
        .arg(&jsonl)
        .args(["--game", id, "--seat", "1", "--html"])
        .arg(&seat)
        .output()
        .unwrap();
    assert!(shown.status.success(), "{shown:?}");
    let page = std::fs::read_to_string(&seat).unwrap();
    assert_eq!(page.matches("class=\"frames\"").count(), 1);
    assert!(page.contains("data-view=\"1\""));
    assert!(!page.contains("id=\"perspective\""));

    // More than one game and no --game, or an unknown one: refused by name.
    let out = Command::new(BIN)
        .arg("replay")
        .arg(&jsonl)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pick one with --game ID"), "{err}");
    let out = Command::new(BIN)
        .arg("replay")
        .arg(&jsonl)
        .args(["--game", "nope"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("no game `nope` in this file"));
}
