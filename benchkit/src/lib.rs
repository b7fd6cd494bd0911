//! What the workspace's benchmarks share: CPU time read from `/proc`, the share of the cores a
//! run got, and verdicts on timed goals that say what they measured.
//!
//! A wall-clock figure taken on a shared machine measures the machine as much as the code: on
//! the project's 2-core machines another build can take half of a core from a run and halve its
//! rate. A verdict on a timed goal is therefore given only when the run had at least
//! [`MIN_SHARE`] of the cores it used (its process's CPU time ÷ its wall time ÷ those cores), or
//! is based on CPU time to begin with; otherwise it says it was not judged and why.
//!
//! ```
//! use maumau_benchkit::{Stopwatch, verdict};
//!
//! let watch = Stopwatch::start();
//! let mut x = 0u64;
//! for i in 0..1_000_000u64 {
//!     x = x.wrapping_mul(31).wrapping_add(i);
//! }
//! std::hint::black_box(x);
//! let lap = watch.lap();
//! // "met", "NOT met" or "not judged: the bench had 0.43 of a core".
//! println!("goal: {}", verdict(true, lap.share(1)));
//! ```
//!
//! Linux only: elsewhere the CPU times are `None` and every verdict declines.

use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

/// The least CPU share (CPU time ÷ wall time ÷ cores used) at which a wall-clock verdict is
/// given.
pub const MIN_SHARE: f64 = 0.8;

/// User plus system CPU seconds of a process so far, every thread included (finished ones
/// too), from `/proc/PID/stat`: `"self"` for this process, a pid for another.
pub fn cpu_seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3 (state); utime and stime are fields 14 and 15.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / clock_ticks())
}

/// Clock ticks per second of `/proc/PID/stat` times (`getconf CLK_TCK`, 100 when unknown).
fn clock_ticks() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|t| *t > 0.0)
            .unwrap_or(100.0)
    })
}

/// CPU seconds the whole machine has spent busy so far, over every core (user, nice, system,
/// interrupts and stolen time), from `/proc/stat`. Over a run, the measured processes' CPU time
/// divided by this is their share of what the machine did: near 1 when nothing else ran.
pub fn machine_busy_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    // user nice system idle iowait irq softirq steal …: all but idle and iowait.
    let ticks: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .map(|t| t.parse().ok())
        .collect::<Option<_>>()?;
    let busy = [0, 1, 2, 5, 6, 7]
        .iter()
        .filter_map(|&i| ticks.get(i))
        .sum::<f64>();
    Some(busy / clock_ticks())
}

/// Wall time and this process's CPU time since a start.
#[derive(Clone, Copy, Debug)]
pub struct Stopwatch {
    wall: Instant,
    cpu: Option<f64>,
}

/// What a [`Stopwatch`] read: seconds of wall time and of this process's CPU time (NaN where
/// `/proc` is not there).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Lap {
    /// Wall seconds.
    pub wall: f64,
    /// CPU seconds of the process, every thread.
    pub cpu: f64,
}

impl Stopwatch {
    /// Starts now.
    pub fn start() -> Stopwatch {
        Stopwatch {
            wall: Instant::now(),
            cpu: cpu_seconds("self"),
        }
    }

    /// The wall and CPU time since the start.
    pub fn lap(&self) -> Lap {
        let wall = self.wall.elapsed().as_secs_f64();
        let cpu = match (self.cpu, cpu_seconds("self")) {
            (Some(a), Some(b)) => b - a,
            _ => f64::NAN,
        };
        Lap { wall, cpu }
    }
}

impl Lap {
    /// The share of `cores` cores the process had: CPU time ÷ wall time ÷ cores (NaN when
    /// unknown). A single-threaded run on a quiet machine has about 1 of one core.
    pub fn share(&self, cores: usize) -> f64 {
        self.cpu / (self.wall * cores.max(1) as f64)
    }

    /// The sum of two laps (of runs measured apart).
    pub fn plus(self, other: Lap) -> Lap {
        Lap {
            wall: self.wall + other.wall,
            cpu: self.cpu + other.cpu,
        }
    }
}

/// The verdict on a goal measured by wall clock: `"met"` or `"NOT met"` when the run had at
/// least [`MIN_SHARE`] of the cores it used (`share`, from [`Lap::share`]), else `"not judged:
/// the bench had 0.43 of a core"` (NaN, an unknown share, is not judged either).
pub fn verdict(met: bool, share: f64) -> String {
    if share >= MIN_SHARE {
        if met { "met" } else { "NOT met" }.to_string()
    } else if share.is_nan() {
        "not judged: the bench's CPU share is unknown".to_string()
    } else {
        format!("not judged: the bench had {share:.2} of a core")
    }
}

/// The verdict on a goal measured by wall clock across processes (a server and its load): `"met"`
/// or `"MISSED"` when the measured processes had at least [`MIN_SHARE`] of the CPU time the
/// whole machine spent over the run (`share`: their CPU time ÷ [`machine_busy_seconds`] over
/// it), else `"not judged: the run had 0.43 of the machine's busy CPU"` (other work took the
/// rest). A run that waits on the network is not penalised for it, as it would be by its CPU
/// time ÷ wall time.
pub fn machine_verdict(met: bool, share: f64) -> String {
    if share >= MIN_SHARE {
        if met { "met" } else { "MISSED" }.to_string()
    } else if share.is_nan() {
        "not judged: the machine's CPU time is unknown".to_string()
    } else {
        format!("not judged: the run had {share:.2} of the machine's busy CPU")
    }
}

/// [`machine_verdict`] in a table's narrow column: `"met"`, `"MISSED"`, or `"unjudged"` (then
/// say why under the table, with the share).
pub fn machine_mark(met: bool, share: f64) -> &'static str {
    if share >= MIN_SHARE {
        if met { "met" } else { "MISSED" }
    } else {
        // NaN too: an unknown share is not enough.
        "unjudged"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_cpu_time_that_grows() {
        let before = cpu_seconds("self").expect("Linux has /proc/self/stat");
        let watch = Stopwatch::start();
        let mut x = 1u64;
        while cpu_seconds("self").expect("still there") < before + 0.05 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
        let lap = watch.lap();
        assert!(lap.cpu >= 0.04 && lap.wall > 0.0, "{lap:?}");
        assert!(cpu_seconds("no-such-process").is_none());
    }

    #[test]
    fn verdicts_are_given_only_with_enough_of_the_cores() {
        assert_eq!(verdict(true, 0.97), "met");
        assert_eq!(verdict(false, 0.8), "NOT met");
        assert_eq!(
            verdict(true, 0.43),
            "not judged: the bench had 0.43 of a core"
        );
        assert!(verdict(true, f64::NAN).starts_with("not judged"));
        assert_eq!(machine_verdict(false, 0.9), "MISSED");
        assert_eq!(
            machine_verdict(true, 0.5),
            "not judged: the run had 0.50 of the machine's busy CPU"
        );
        assert!(machine_busy_seconds().is_some_and(|s| s > 0.0));
        assert_eq!(
            [
                machine_mark(true, 0.9),
                machine_mark(false, 0.9),
                machine_mark(true, 0.3),
                machine_mark(true, f64::NAN)
            ],
            ["met", "MISSED", "unjudged", "unjudged"]
        );
        let lap = Lap {
            wall: 2.0,
            cpu: 3.0,
        };
        assert_eq!(lap.share(2), 0.75);
        assert_eq!(lap.plus(lap).cpu, 6.0);
    }
}
