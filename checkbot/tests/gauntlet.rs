//! The conformance kit end to end: a real local server, the proxy, and bots that pass or fail.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{check, gauntlet};
use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::HeuristicBot;
use maumau_bot_sdk::engine::{Action, Observation};
use maumau_checkbot::{BotUnderTest, Case, Options, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_heuristic_reference_bot_passes_every_check() {
    let bot = BotUnderTest::InProcess(Arc::new(|seed| Box::new(HeuristicBot::new(seed))));
    let report = gauntlet(Options::new(bot)).await;
    assert!(report.passed(), "{report}");
    let names: Vec<&str> = report.checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "classic, 2 seats",
            "classic, 4 seats",
            "penalty-points, 4 seats",
            "brazilian, 6 seats",
            "romanian-32, 3 seats",
            "rejected action",
            "stale state id",
            "dropped connection",
            "deadline",
            "challenge window",
            "best move",
        ]
    );
    // The evidence names what happened, not only that it passed.
    assert!(
        check(&report, "rejected action")
            .detail
            .contains("CARD_NOT_IN_HAND")
    );
    assert!(
        check(&report, "stale state id")
            .detail
            .contains("STALE_STATE")
    );
    assert!(
        check(&report, "dropped connection")
            .detail
            .contains("Join.resume after event")
    );
    assert!(
        check(&report, "challenge window")
            .detail
            .contains("challenged (accepted)")
    );
    assert!(report.decision_times.count > 50, "{report}");
    assert!(report.decision_times.p50 <= report.decision_times.p99);
}

/// Plays the first legal action, and once per match (its third decision) thinks too long.
struct FirstLegalAndSlowOnce {
    decisions: u32,
}

impl Bot for FirstLegalAndSlowOnce {
    fn name(&self) -> &str {
        "first-legal"
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        self.decisions += 1;
        if self.decisions == 3 {
            std::thread::sleep(Duration::from_millis(700));
        }
        obs.legal[0]
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_careless_slow_bot_fails_the_deadline_and_the_best_move_with_reasons() {
    let bot = BotUnderTest::InProcess(Arc::new(|_| {
        Box::new(FirstLegalAndSlowOnce { decisions: 0 })
    }));
    let mut options = Options::new(bot);
    options.cases = Case::parse("classic:2").expect("valid");
    options.deadline = Duration::from_millis(300);
    let report = gauntlet(options).await;
    assert!(!report.passed());
    // A 700 ms decision is fine under a 2 s clock...
    assert!(check(&report, "classic, 2 seats").passed, "{report}");
    // ...but not under a 300 ms one.
    let deadline = check(&report, "deadline");
    assert!(!deadline.passed, "{report}");
    assert!(deadline.detail.contains("too late"), "{}", deadline.detail);
    // The first legal action names clubs.
    let best = check(&report, "best move");
    assert!(!best.passed, "{report}");
    assert!(best.detail.contains("play JC:C"), "{}", best.detail);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_that_crashes_at_once_fails_with_its_output_and_stops_the_gauntlet() {
    let crash = "echo \"cannot read MAUMAU_TOKEN=$MAUMAU_TOKEN\" >&2; exit 3";
    let bot = BotUnderTest::Command(vec!["sh".into(), "-c".into(), crash.into()]);
    let logs = tempfile::tempdir().expect("a temporary directory");
    let mut options = Options::new(bot);
    options.cases = Case::parse("classic:2").expect("valid");
    options.log_dir = Some(logs.path().to_path_buf());
    let report = gauntlet(options).await;
    // It never started: the other six checks would fail the same way, and are not run.
    assert_eq!(report.checks.len(), 1, "{report}");
    assert_eq!(report.not_run.len(), 6, "{report}");
    let c = &report.checks[0];
    assert!(!c.passed, "{report}");
    assert!(c.detail.contains("exited with status 3"), "{}", c.detail);
    assert!(
        c.detail.contains("cannot read MAUMAU_TOKEN="),
        "{}",
        c.detail
    );
    assert!(
        report
            .to_string()
            .contains("0 of 7 checks passed (6 not run)")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_options_are_refused_before_anything_runs() {
    let mut options = Options::new(BotUnderTest::Command(Vec::new()));
    let err = run(options.clone(), |_| {}).await.expect_err("no command");
    assert!(err.to_string().contains("no bot command"), "{err}");
    options.bot = BotUnderTest::Connect;
    options.cases.clear();
    let err = run(options, |_| {}).await.expect_err("no profile");
    assert!(err.to_string().contains("no profile"), "{err}");
}
