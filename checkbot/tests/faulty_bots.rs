//! check-bot's report card on deliberately faulty bots, each a real process: a bot that crashes
//! mid-match with a long Go-like panic, one that crashes with a long Python traceback before it
//! connects, one whose program does not exist, one slower than the deadline, one that never
//! exits. The tests assert on the report's text, as its author reads it.
//!
//! The Rust bots are this test program itself, launched again by the kit with `CHECKBOT_FIXTURE`
//! set (see [`faulty_bot`]); the Python one is `tests/bots/deep_traceback.py`.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use std::path::Path;
use std::time::Duration;

use common::check;
use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::HeuristicBot;
use maumau_bot_sdk::engine::{Action, Observation};
use maumau_bot_sdk::runner::{RunOptions, run as run_bot};
use maumau_checkbot::{BotUnderTest, Report};

/// The lines of a Go panic as a Go bot prints it: the message first, then a long trace.
fn go_panic() -> String {
    let mut text = String::from(
        "panic: runtime error: index out of range [7] with length 7 (deliberate fault)\n\n\
         goroutine 1 [running]:\n",
    );
    for i in 0..15 {
        text.push_str(&format!(
            "main.decide{i}(...)\n\t/home/author/bot/main.go:{} +0x1d\n",
            40 + i
        ));
    }
    text.push_str("exit status 2\n");
    text
}

/// What a faulty Rust bot does wrong.
enum Fault {
    /// Prints a Go-like panic and exits with status 2 at its third decision.
    Crash,
    /// Takes this long over its second decision of every match.
    Slow(Duration),
    /// Plays its match, then never exits.
    Linger,
}

/// The heuristic reference bot with one fault.
struct Faulty {
    fault: Fault,
    inner: HeuristicBot,
    decisions: u32,
}

impl Bot for Faulty {
    fn name(&self) -> &str {
        "faulty"
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        self.decisions += 1;
        match self.fault {
            Fault::Crash if self.decisions == 3 => {
                eprint!("{}", go_panic());
                std::process::exit(2);
            }
            // The fault under test is the slowness itself.
            Fault::Slow(d) if self.decisions == 2 => std::thread::sleep(d),
            _ => {}
        }
        self.inner.decide(obs)
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        self.inner.react(obs)
    }
}

/// Not a test: the faulty bot, when the kit launches this program with `CHECKBOT_FIXTURE` set
/// (`crash`, `slow:MS` or `linger`) and the seat in `MAUMAU_ADDR` and `MAUMAU_TOKEN`. Under the
/// test harness it returns at once.
#[test]
fn faulty_bot() {
    let Ok(fault) = std::env::var("CHECKBOT_FIXTURE") else {
        return;
    };
    let fault = match fault.split_once(':') {
        Some(("slow", ms)) => Fault::Slow(Duration::from_millis(ms.parse().unwrap())),
        _ if fault == "crash" => Fault::Crash,
        _ if fault == "linger" => Fault::Linger,
        _ => panic!("unknown fault {fault}"),
    };
    let addr = std::env::var("MAUMAU_ADDR").unwrap();
    let token = std::env::var("MAUMAU_TOKEN").unwrap();
    let linger = matches!(fault, Fault::Linger);
    let mut bot = Faulty {
        fault,
        inner: HeuristicBot::new(1),
        decisions: 0,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let report = runtime.block_on(run_bot(
        &mut bot,
        &RunOptions::new(format!("http://{addr}"), token),
    ));
    println!("faulty bot: match over: {:?}", report.map(|r| r.status()));
    if linger {
        // The fault under test: the process never ends by itself (check-bot stops it).
        loop {
            std::thread::sleep(Duration::from_secs(60));
        }
    }
}

/// This program, launched as the faulty bot `fault`.
fn fixture(fault: &str) -> BotUnderTest {
    let exe = std::env::current_exe().unwrap();
    BotUnderTest::Command(vec![
        "env".into(),
        format!("CHECKBOT_FIXTURE={fault}"),
        exe.display().to_string(),
        "faulty_bot".into(),
        "--exact".into(),
        "--nocapture".into(),
        "--quiet".into(),
    ])
}

/// The gauntlet on classic with two seats, the bot's output kept in `logs`.
async fn gauntlet(bot: BotUnderTest, logs: &Path) -> Report {
    gauntlet_with(bot, logs, Duration::from_millis(250)).await
}

/// The gauntlet on classic with two seats, with this deadline.
async fn gauntlet_with(bot: BotUnderTest, logs: &Path, deadline: Duration) -> Report {
    let mut options = common::classic_pair(bot, logs);
    options.deadline = deadline;
    common::gauntlet(options).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_shows_the_start_of_the_panic_and_its_end_and_names_the_log() {
    let logs = tempfile::tempdir().unwrap();
    let report = gauntlet(fixture("crash"), logs.path()).await;
    let text = report.to_string();
    let first = check(&report, "classic, 2 seats");
    assert!(!first.passed, "{text}");
    assert!(first.detail.contains("exited with status 2"), "{text}");
    // The panic's message comes first in its output, before a long trace: it is quoted...
    assert!(
        first
            .detail
            .contains("| panic: runtime error: index out of range [7] with length 7"),
        "{text}"
    );
    assert!(first.detail.contains("| goroutine 1 [running]:"), "{text}");
    // ...and so is the end, with what was left out in between said.
    assert!(first.detail.contains("| exit status 2"), "{text}");
    assert!(first.detail.contains("lines left out"), "{text}");
    // The whole output is in the file the report names.
    let log = logs.path().join("01-classic-2-seats.log");
    assert!(first.detail.contains(&log.display().to_string()), "{text}");
    let whole = std::fs::read_to_string(&log).unwrap();
    assert!(whole.contains(&go_panic()), "{whole}");
    assert!(
        text.contains(&format!(
            "the bot's output of each match (stdout and stderr): {}",
            logs.path().display()
        )),
        "{text}"
    );
    // It crashed after joining: every check ran.
    assert_eq!(report.checks.len(), 7, "{text}");
    assert!(report.not_run.is_empty(), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_crashes_before_joining_stops_the_gauntlet_with_its_traceback() {
    let logs = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bots/deep_traceback.py");
    let bot = BotUnderTest::Command(vec!["python3".into(), script.into()]);
    let report = gauntlet(bot, logs.path()).await;
    let text = report.to_string();
    // Stopped after the first failure to start, and says so.
    assert_eq!(report.checks.len(), 1, "{text}");
    assert_eq!(report.not_run.len(), 6, "{text}");
    assert!(!report.passed(), "{text}");
    assert!(
        text.contains(
            "check-bot stopped after this check: the bot did not start (it never joined its \
             match), so the other 6 checks (rejected action; stale state id; dropped \
             connection; deadline; challenge window; best move) were not run"
        ),
        "{text}"
    );
    assert!(text.contains("0 of 7 checks passed (6 not run)"), "{text}");
    let first = &report.checks[0];
    assert!(
        first
            .detail
            .starts_with("the bot exited with status 1 before joining its match"),
        "{text}"
    );
    // The traceback is longer than what is quoted: its first line and its message are both
    // there.
    assert!(
        first
            .detail
            .contains("| Traceback (most recent call last):"),
        "{text}"
    );
    assert!(
        first
            .detail
            .contains("| ValueError: no value for seat.token in bot.toml (deliberate fault)"),
        "{text}"
    );
    let log = logs.path().join("01-classic-2-seats.log");
    assert!(first.detail.contains(&log.display().to_string()), "{text}");
    let whole = std::fs::read_to_string(&log).unwrap();
    for frame in [
        "read_config",
        "parse_section",
        "parse_key",
        "lookup",
        "resolve",
        "expand",
    ] {
        assert!(whole.contains(&format!("in {frame}")), "{whole}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_cannot_be_launched_stops_the_gauntlet() {
    let logs = tempfile::tempdir().unwrap();
    let bot = BotUnderTest::Command(vec!["./no-such-bot".into(), "--fast".into()]);
    let report = gauntlet(bot, logs.path()).await;
    let text = report.to_string();
    assert_eq!(report.checks.len(), 1, "{text}");
    assert!(
        report.checks[0]
            .detail
            .starts_with("cannot launch `./no-such-bot --fast`:"),
        "{text}"
    );
    assert!(
        text.contains("check-bot stopped after this check: the bot did not start"),
        "{text}"
    );
    assert!(text.contains("0 of 7 checks passed (6 not run)"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_slower_than_the_deadline_is_told_how_slow_and_what_was_needed() {
    let logs = tempfile::tempdir().unwrap();
    // 800 ms over its second decision of every match: fine under the usual 2 s clock, twice the
    // 400 ms of the stale-state and deadline checks (and less than the three timeouts, 1.2 s,
    // after which the server gives the seat up).
    let report = gauntlet_with(fixture("slow:800"), logs.path(), Duration::from_millis(400)).await;
    let text = report.to_string();
    assert!(check(&report, "classic, 2 seats").passed, "{text}");
    let stale = check(&report, "stale state id");
    assert!(!stale.passed, "{text}");
    assert!(
        stale
            .detail
            .starts_with("its answer to decision 2 came after "),
        "{text}"
    );
    assert!(
        stale
            .detail
            .contains("; this check needs an answer within 400 ms (no time bank)"),
        "{text}"
    );
    assert!(!stale.detail.contains("verdict"), "{text}");
    // How many later decisions the slow one made late too depends on the pace of the match;
    // the reason names the slowest and what the check needed.
    let deadline = check(&report, "deadline");
    assert!(!deadline.passed, "{text}");
    assert!(
        deadline.detail.contains("too late") || deadline.detail.contains("gave the seat up"),
        "{text}"
    );
    assert!(
        deadline
            .detail
            .contains(": its answer to decision 2 came after "),
        "{text}"
    );
    assert!(
        deadline
            .detail
            .ends_with("; this check needs an answer within 400 ms (no time bank)"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_never_exits_fails_and_is_told_why() {
    let logs = tempfile::tempdir().unwrap();
    let report = gauntlet(fixture("linger"), logs.path()).await;
    let text = report.to_string();
    assert_eq!(report.checks.len(), 7, "{text}");
    for c in &report.checks {
        assert!(!c.passed, "{text}");
        assert!(
            c.detail.starts_with(
                "the bot did not exit within 5 s after its match ended, so it was stopped"
            ),
            "{text}"
        );
    }
    // It played: the log shows its match ended.
    let log = std::fs::read_to_string(logs.path().join("01-classic-2-seats.log")).unwrap();
    assert!(
        log.contains("faulty bot: match over: Ok(Finished)"),
        "{log}"
    );
}
