//! The report card.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// The verdict of one check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckResult {
    /// What was checked, e.g. `classic, 4 seats` or `dropped connection`.
    pub name: String,
    /// True when the bot passed.
    pub passed: bool,
    /// What happened: the evidence for a pass, the reason for a failure.
    pub detail: String,
}

impl fmt::Display for CheckResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mark = if self.passed { "PASS" } else { "FAIL" };
        write!(f, "  {mark}  {:<24} {}", self.name, self.detail)
    }
}

/// Decision-time percentiles, in milliseconds, measured at the kit's proxy from forwarding a
/// required prompt to receiving the bot's first answer to it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DecisionTimes {
    /// Decisions measured.
    pub count: usize,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Slowest.
    pub max: f64,
}

impl DecisionTimes {
    /// Percentiles of a set of durations (nearest rank).
    pub fn of(times: &[Duration]) -> DecisionTimes {
        let mut ms: Vec<f64> = times.iter().map(|d| d.as_secs_f64() * 1e3).collect();
        ms.sort_by(f64::total_cmp);
        let pct = |p| maumau_server::nearest_rank(&ms, p);
        DecisionTimes {
            count: ms.len(),
            p50: pct(50),
            p90: pct(90),
            p99: pct(99),
            max: ms.last().copied().unwrap_or(0.0),
        }
    }
}

impl fmt::Display for DecisionTimes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "decision time over {} decisions: p50 {:.1} ms, p90 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            self.count, self.p50, self.p90, self.p99, self.max
        )
    }
}

/// The whole report card.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// The bot, as given (its command, or "a bot that connected").
    pub bot: String,
    /// Every check run, in the order run.
    pub checks: Vec<CheckResult>,
    /// Checks not run because the gauntlet stopped early, in order.
    pub not_run: Vec<String>,
    /// Why the gauntlet stopped early (the bot did not start), if it did.
    pub stopped: Option<String>,
    /// Where the launched bot's output is, one file per match, or `lobby.log` for a lobby bot
    /// (`None` when nothing was launched).
    pub log_dir: Option<PathBuf>,
    /// The bot was launched once and invited to each match through a lobby.
    pub lobby: bool,
    /// The bot's decision times over the whole gauntlet.
    pub decision_times: DecisionTimes,
    /// How long the gauntlet took.
    pub elapsed: Duration,
    /// Matches played to their end.
    pub matches: usize,
    /// Times the bot's program was launched: once per match, or once in all for a lobby bot
    /// (none for a bot in-process or started by hand).
    pub launches: usize,
}

impl Report {
    /// True when every check ran and passed.
    pub fn passed(&self) -> bool {
        self.not_run.is_empty() && self.checks.iter().all(|c| c.passed)
    }

    /// The summary line: `11 of 11 checks passed in 9.4 s`, or `0 of 11 checks passed (10 not
    /// run) in 0.3 s`.
    pub fn summary(&self) -> String {
        let passed = self.checks.iter().filter(|c| c.passed).count();
        let total = self.checks.len() + self.not_run.len();
        let not_run = match self.not_run.len() {
            0 => String::new(),
            n => format!(" ({n} not run)"),
        };
        format!(
            "{passed} of {total} checks passed{not_run} in {:.1} s",
            self.elapsed.as_secs_f64()
        )
    }

    /// The pace: `11 matches in 9.4 s (1.17 a second); the bot was launched 11 times (once per
    /// match)`, or for a lobby bot `...; the bot was launched once (10 launches saved by its
    /// lobby)`.
    pub fn pace(&self) -> String {
        let secs = self.elapsed.as_secs_f64();
        let rate = if secs > 0.0 {
            self.matches as f64 / secs
        } else {
            0.0
        };
        let mut line = format!(
            "{} {} in {secs:.1} s ({rate:.2} a second)",
            self.matches,
            if self.matches == 1 {
                "match"
            } else {
                "matches"
            }
        );
        match self.launches {
            0 => {}
            1 if self.matches > 1 => line.push_str(&format!(
                "; the bot was launched once ({} saved by its lobby)",
                match self.matches - 1 {
                    1 => "1 launch".to_string(),
                    n => format!("{n} launches"),
                }
            )),
            1 => line.push_str("; the bot was launched once"),
            n => line.push_str(&format!(
                "; the bot was launched {n} times (once per match)"
            )),
        }
        line
    }

    /// What follows the checks: why the gauntlet stopped (if it did), where the bot's output
    /// is, the decision times, the pace and the summary, one a line.
    pub fn footer(&self) -> String {
        let mut lines = Vec::new();
        if let Some(why) = &self.stopped {
            lines.push(format!(
                "check-bot stopped after this check: {why}, so the other {} checks ({}) were \
                 not run: they would fail the same way",
                self.not_run.len(),
                self.not_run.join("; ")
            ));
        }
        match &self.log_dir {
            Some(dir) if self.lobby => lines.push(format!(
                "the bot's output (stdout and stderr): {}",
                dir.join("lobby.log").display()
            )),
            Some(dir) => lines.push(format!(
                "the bot's output of each match (stdout and stderr): {}",
                dir.display()
            )),
            None => {}
        }
        lines.push(self.decision_times.to_string());
        lines.push(self.pace());
        lines.push(self.summary());
        lines.join("\n")
    }
}

impl fmt::Display for Report {
    /// The card: a line per check, then the footer.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "check-bot report for {}", self.bot)?;
        for c in &self.checks {
            writeln!(f, "{c}")?;
        }
        write!(f, "{}", self.footer())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let times: Vec<Duration> = (1..=100).map(Duration::from_millis).collect();
        let t = DecisionTimes::of(&times);
        assert_eq!(
            (t.count, t.p50, t.p90, t.p99, t.max),
            (100, 51.0, 91.0, 100.0, 100.0)
        );
        assert_eq!(DecisionTimes::of(&[]).count, 0);
    }

    #[test]
    fn a_report_passes_only_when_every_check_does() {
        let check = |passed| CheckResult {
            name: "x".into(),
            passed,
            detail: String::new(),
        };
        let mut r = Report {
            bot: "b".into(),
            checks: vec![check(true), check(true)],
            not_run: Vec::new(),
            stopped: None,
            log_dir: None,
            lobby: false,
            decision_times: DecisionTimes::default(),
            elapsed: Duration::from_secs(2),
            matches: 2,
            launches: 2,
        };
        assert!(r.passed());
        r.checks.push(check(false));
        assert!(!r.passed());
        assert!(r.to_string().contains("FAIL"));
        assert!(r.summary().starts_with("2 of 3 checks passed"));
        assert_eq!(
            r.pace(),
            "2 matches in 2.0 s (1.00 a second); the bot was launched 2 times (once per match)"
        );
        r.launches = 1;
        assert!(
            r.pace()
                .ends_with("launched once (1 launch saved by its lobby)")
        );
        r.checks.truncate(1);
        r.not_run = vec!["y".into(), "z".into()];
        assert!(!r.passed(), "checks not run do not pass");
        assert!(r.summary().starts_with("1 of 3 checks passed (2 not run)"));
    }
}
