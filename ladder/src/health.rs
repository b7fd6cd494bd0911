//! When a version is paused for health.
//!
//! A match is a fault for a version when its seat missed the join or timed out at least once.
//! A version is paused for health after [`HealthPolicy::streak`] faulty matches in a row, or when
//! more than [`HealthPolicy::max_fault_rate`] of its last [`HealthPolicy::window`] matches were
//! faulty (judged only once it has that many matches since it was last resumed). A health pause
//! is lifted by one clean probe match or by its owner; a manual pause is never lifted by a match.

use crate::ids::Millis;

/// The longest a version on a health pause waits between probes, in probe intervals.
pub const MAX_PROBE_WAIT: Millis = 32;

/// How long a version on a health pause since `paused` waits, after its match scheduled at
/// `last`, before its next probe: as long as the pause had lasted then, at least `interval`
/// (`ladder_probe_interval_ms`) and at most [`MAX_PROBE_WAIT`] intervals. Each failed probe thus
/// about doubles the wait (with 30 s: 30 s, 30 s, 1 min, 2 min, ... up to 16 min), so a bot that
/// keeps failing costs its opponents fewer and fewer aborted matches.
pub fn probe_wait(interval: Millis, paused: Millis, last: Millis) -> Millis {
    (last - paused).clamp(interval, interval.saturating_mul(MAX_PROBE_WAIT))
}

/// What one seat did in one match, as far as health is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatOutcome {
    /// The seat joined before the deadline.
    pub joined: bool,
    /// Decisions the seat did not make in time.
    pub timeouts: u32,
    /// Actions from the seat the server refused, for any reason (shown, never a fault).
    pub rejections: u32,
}

impl SeatOutcome {
    /// A missed join or any timeout.
    pub fn is_fault(&self) -> bool {
        !self.joined || self.timeouts > 0
    }
}

/// The thresholds for a health pause.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HealthPolicy {
    /// Faulty matches in a row that pause a version (default 3).
    pub streak: usize,
    /// Matches looked at for the fault rate (default 20).
    pub window: usize,
    /// Fault share over the window above which a version is paused (default 0.25).
    pub max_fault_rate: f64,
}

impl Default for HealthPolicy {
    fn default() -> Self {
        HealthPolicy {
            streak: 3,
            window: 20,
            max_fault_rate: 0.25,
        }
    }
}

impl HealthPolicy {
    /// The reason to pause a version whose matches since its last resume are `newest_first`, or
    /// `None` when it is healthy.
    pub fn assess(&self, newest_first: &[SeatOutcome]) -> Option<String> {
        if self.streak > 0
            && newest_first.len() >= self.streak
            && newest_first[..self.streak]
                .iter()
                .all(SeatOutcome::is_fault)
        {
            return Some(format!(
                "timed out or missed the join in {} matches in a row",
                self.streak
            ));
        }
        if self.window > 0 && newest_first.len() >= self.window {
            let faults = newest_first[..self.window]
                .iter()
                .filter(|o| o.is_fault())
                .count();
            let rate = faults as f64 / self.window as f64;
            if rate > self.max_fault_rate {
                return Some(format!(
                    "timed out or missed the join in {faults} of its last {} matches ({:.0}% > {:.0}%)",
                    self.window,
                    rate * 100.0,
                    self.max_fault_rate * 100.0
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probes of a version that fails every one of them, each scheduled the moment it may
    /// be: the waits are the interval twice, then about double, and stop growing at the cap.
    #[test]
    fn failed_probes_wait_about_twice_as_long_each_time_up_to_the_cap() {
        let (interval, paused) = (30_000, 1_000_000);
        // The match that paused it was scheduled before the pause.
        let mut last = paused - 5_000;
        let mut waits = Vec::new();
        for _ in 0..9 {
            let wait = probe_wait(interval, paused, last);
            waits.push(wait / 1_000);
            last += wait;
        }
        // In seconds: the wait is the pause's age at the last probe, from 30 s up to 16 min.
        assert_eq!(waits, [30, 30, 55, 110, 220, 440, 880, 960, 960]);
        assert_eq!(probe_wait(interval, paused, paused), interval);
    }

    const CLEAN: SeatOutcome = SeatOutcome {
        joined: true,
        timeouts: 0,
        rejections: 0,
    };
    const TIMEOUT: SeatOutcome = SeatOutcome {
        joined: true,
        timeouts: 2,
        rejections: 0,
    };
    const NO_SHOW: SeatOutcome = SeatOutcome {
        joined: false,
        timeouts: 0,
        rejections: 0,
    };

    #[test]
    fn three_faults_in_a_row_pause() {
        let p = HealthPolicy::default();
        assert!(p.assess(&[]).is_none());
        assert!(p.assess(&[TIMEOUT, NO_SHOW]).is_none());
        let why = p.assess(&[TIMEOUT, NO_SHOW, TIMEOUT]).unwrap();
        assert!(why.contains("3 matches in a row"), "{why}");
        // The streak must be the newest matches.
        assert!(p.assess(&[CLEAN, TIMEOUT, NO_SHOW, TIMEOUT]).is_none());
    }

    #[test]
    fn fault_rate_over_the_window() {
        let p = HealthPolicy::default();
        // 5 faults of 20 is 25%: not above the rate.
        let mut h = vec![CLEAN; 20];
        for i in [1, 5, 9, 13, 17] {
            h[i] = TIMEOUT;
        }
        assert!(p.assess(&h).is_none());
        h[3] = NO_SHOW;
        let why = p.assess(&h).unwrap();
        assert!(why.contains("6 of its last 20"), "{why}");
        // Older matches beyond the window do not count.
        let mut long = vec![CLEAN; 20];
        long.extend([TIMEOUT, CLEAN].repeat(10));
        assert!(p.assess(&long).is_none());
        // The rate is judged only on a full window.
        assert!(p.assess(&h[..19]).is_none());
    }

    #[test]
    fn thresholds_are_configurable() {
        let p = HealthPolicy {
            streak: 1,
            window: 0,
            max_fault_rate: 1.0,
        };
        assert!(p.assess(&[NO_SHOW]).is_some());
        let off = HealthPolicy {
            streak: 0,
            window: 0,
            max_fault_rate: 0.0,
        };
        assert!(off.assess(&[NO_SHOW; 30]).is_none());
    }
}
