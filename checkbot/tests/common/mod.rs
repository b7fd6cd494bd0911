//! Helpers shared by check-bot's test programs (`mod common;`): the gauntlet run with every check
//! heard as it ends, the options of the short gauntlet most tests use, and a check found by name.
#![allow(dead_code, unreachable_pub)]

use std::path::Path;

use maumau_checkbot::{BotUnderTest, Case, CheckResult, Options, Progress, Report, run};

/// Runs the kit; every check must be reported (as progress) as it ends, as in the report.
pub async fn gauntlet(options: Options) -> Report {
    let mut seen = Vec::new();
    let report = run(options, |p| {
        if let Progress::Check(c) = p {
            seen.push(c.clone());
        }
    })
    .await
    .expect("the kit runs");
    assert_eq!(seen, report.checks, "every check is reported as it ends");
    report
}

/// The gauntlet on classic with two seats only, the bot's output kept in `logs`.
pub fn classic_pair(bot: BotUnderTest, logs: &Path) -> Options {
    let mut options = Options::new(bot);
    options.cases = Case::parse("classic:2").expect("a case");
    options.log_dir = Some(logs.to_path_buf());
    options
}

/// The check called `name`.
pub fn check<'a>(report: &'a Report, name: &str) -> &'a CheckResult {
    report
        .checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no check `{name}` in\n{report}"))
}
