//! check-bot with a bot that stays up between matches (`BotUnderTest::Lobby`, `--lobby`): real
//! programs launched once, holding the lobby the kit hosts (the tournament's lobby host). A good
//! lobby bot (the Rust SDK's lobby helper) passes every check from one launch; one that crashes
//! mid-run, one that drains its lobby mid-run and one that never opens its lobby each fail with
//! the reason, the excerpt of their output and the log named, and the gauntlet stops instead of
//! hanging.
//!
//! The Rust lobby bots are this test program itself, launched again by the kit with
//! `CHECKBOT_LOBBY_FIXTURE` set (see [`lobby_bot`]); the one that never opens its lobby is
//! `tests/bots/never_opens_lobby.py`. (The Python ladder example's passing run is in
//! clients/python/tests/test_check_bot_lobby.py; `maumau check-bot --lobby` on `maumau bot` in
//! cli/tests/check_bot_lobby.rs.)
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::check;
use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::HeuristicBot;
use maumau_bot_sdk::lobby::{LobbyEvent, LobbyOptions, play_ladder};
use maumau_checkbot::{BotUnderTest, Report};
use tokio::sync::Notify;

/// Not a test: a lobby bot, when the kit launches this program with `CHECKBOT_LOBBY_FIXTURE` set
/// (`good`, `crash:N`: a Go-like panic and status 2 at its Nth invitation, or `drain:N`: it
/// drains its lobby at its Nth invitation, plays that match, then exits with status 0) and its
/// lobby in
/// `MAUMAU_LOBBY_ADDR` and `MAUMAU_LOBBY_KEY`. Under the test harness it returns at once.
#[test]
fn lobby_bot() {
    let Ok(fixture) = std::env::var("CHECKBOT_LOBBY_FIXTURE") else {
        return;
    };
    let (crash_at, drain_at) = match fixture.split_once(':') {
        Some(("crash", n)) => (n.parse().unwrap(), usize::MAX),
        Some(("drain", n)) => (usize::MAX, n.parse().unwrap()),
        _ if fixture == "good" => (usize::MAX, usize::MAX),
        _ => panic!("unknown fixture {fixture}"),
    };
    let options = LobbyOptions::from_env().expect("the kit's lobby in the environment");
    let invited = AtomicUsize::new(0);
    let make_bot = |_: &_| {
        let n = invited.fetch_add(1, Ordering::Relaxed) + 1;
        if n == crash_at {
            eprintln!("lobby bot: invitation {n}");
            eprint!("panic: deliberate fault at invitation {n}\n\ngoroutine 1 [running]:\n");
            for i in 0..12 {
                eprintln!(
                    "main.play{i}(...)\n\t/home/author/bot/main.go:{} +0x1d",
                    10 + i
                );
            }
            std::process::exit(2);
        }
        Box::new(HeuristicBot::new(n as u64)) as Box<dyn Bot>
    };
    let enough = Arc::new(Notify::new());
    let (ended, offered) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let on_event = |event: &LobbyEvent| {
        println!("{event}");
        match event {
            LobbyEvent::MatchEnded(_) => {
                ended.fetch_add(1, Ordering::Relaxed);
            }
            LobbyEvent::Invitation(_)
                if offered.fetch_add(1, Ordering::Relaxed) + 1 == drain_at =>
            {
                enough.notify_one();
            }
            _ => {}
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(play_ladder(&options, make_bot, on_event, enough.notified()))
        .unwrap();
    println!(
        "lobby bot: done after {} matches",
        ended.load(Ordering::Relaxed)
    );
}

/// This program, launched as the lobby bot `fixture`.
fn fixture(fixture: &str) -> BotUnderTest {
    let exe = std::env::current_exe().unwrap();
    BotUnderTest::Lobby(vec![
        "env".into(),
        format!("CHECKBOT_LOBBY_FIXTURE={fixture}"),
        exe.display().to_string(),
        "lobby_bot".into(),
        "--exact".into(),
        "--nocapture".into(),
        "--quiet".into(),
    ])
}

/// The gauntlet on classic with two seats (seven matches), the bot's output kept in `logs`.
async fn gauntlet(bot: BotUnderTest, logs: &Path, join_timeout: Duration) -> Report {
    let mut options = common::classic_pair(bot, logs);
    options.join_timeout = join_timeout;
    common::gauntlet(options).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_sdk_lobby_helper_passes_every_check_from_one_launch() {
    let logs = tempfile::tempdir().unwrap();
    let report = gauntlet(fixture("good"), logs.path(), Duration::from_secs(60)).await;
    let text = report.to_string();
    assert!(report.passed(), "{text}");
    assert_eq!(
        report.checks.len(),
        8,
        "seven matches and the lobby's close: {text}"
    );
    assert!(
        check(&report, "lobby closed")
            .detail
            .contains("exited with status 0 when its lobby was closed, after 7 matches"),
        "{text}"
    );
    assert!(
        check(&report, "dropped connection")
            .detail
            .contains("Join.resume"),
        "{text}"
    );
    assert_eq!((report.matches, report.launches), (7, 1), "{text}");
    assert!(
        text.contains("7 matches in ") && text.contains("(6 launches saved by its lobby)"),
        "{text}"
    );
    // One program played all seven: seven invitations and their ends in its one log.
    let log = std::fs::read_to_string(logs.path().join("lobby.log")).unwrap();
    assert_eq!(log.matches("invitation: match").count(), 7, "{log}");
    assert!(log.contains("lobby bot: done after 7 matches"), "{log}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_bot_that_crashes_mid_run_is_quoted_and_stops_the_gauntlet() {
    let logs = tempfile::tempdir().unwrap();
    let report = gauntlet(fixture("crash:3"), logs.path(), Duration::from_secs(60)).await;
    let text = report.to_string();
    assert!(!report.passed(), "{text}");
    // Two matches played, the third one's invitation crashed the program.
    assert!(report.checks[0].passed && report.checks[1].passed, "{text}");
    let third = &report.checks[2];
    assert_eq!(third.name, "stale state id", "{text}");
    assert!(!third.passed, "{text}");
    assert!(
        third
            .detail
            .contains("left its lobby (its program exited with status 2)"),
        "{text}"
    );
    let log = logs.path().join("lobby.log");
    assert!(
        third
            .detail
            .contains("| panic: deliberate fault at invitation 3"),
        "{text}"
    );
    assert!(third.detail.contains(&log.display().to_string()), "{text}");
    assert!(
        text.contains(
            "check-bot stopped after this check: the bot left its lobby (its program exited \
             with status 2), so the other 5 checks (dropped connection; deadline; challenge \
             window; best move; lobby closed) were not run"
        ),
        "{text}"
    );
    assert!(text.contains("2 of 8 checks passed (5 not run)"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lobby_bot_that_drains_mid_run_fails_with_the_reason() {
    let logs = tempfile::tempdir().unwrap();
    let report = gauntlet(fixture("drain:3"), logs.path(), Duration::from_secs(60)).await;
    let text = report.to_string();
    assert!(!report.passed(), "{text}");
    assert!(report.checks[0].passed && report.checks[1].passed, "{text}");
    // It drained on its third invitation, during that match: the check fails with the reason.
    let third = &report.checks[2];
    assert!(!third.passed, "{text}");
    assert!(
        third
            .detail
            .contains("it drained its lobby before check-bot's gauntlet was over"),
        "{text}"
    );
    assert!(
        text.contains("check-bot stopped after this check: the bot "),
        "{text}"
    );
    assert!(text.contains("2 of 8 checks passed (5 not run)"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_never_opens_its_lobby_fails_after_the_join_timeout() {
    let logs = tempfile::tempdir().unwrap();
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/bots/never_opens_lobby.py"
    );
    let bot = BotUnderTest::Lobby(vec!["python3".into(), script.into()]);
    let report = gauntlet(bot, logs.path(), Duration::from_secs(3)).await;
    let text = report.to_string();
    assert_eq!(report.checks.len(), 1, "{text}");
    let first = &report.checks[0];
    assert!(
        first.detail.starts_with(
            "the bot is not in its lobby: its program opened no lobby within 3 s of its launch"
        ),
        "{text}"
    );
    // What it said is quoted, and the file named.
    assert!(
        first
            .detail
            .contains("| never_opens_lobby: looking for MAUMAU_LOBBY_KEY in ./bot.toml"),
        "{text}"
    );
    let log = logs.path().join("lobby.log");
    assert!(first.detail.contains(&log.display().to_string()), "{text}");
    assert!(
        text.contains("check-bot stopped after this check: the bot is not in its lobby"),
        "{text}"
    );
    assert!(text.contains("0 of 8 checks passed (7 not run)"), "{text}");
    assert_eq!(report.matches, 0, "{text}");
}
