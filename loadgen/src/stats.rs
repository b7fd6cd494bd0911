//! The measurement window and latency percentiles.

use std::time::Duration;

use tokio::time::Instant;

/// The part of a run that counts: after the warm-up, for the run's duration.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    /// Counting starts here.
    pub(crate) start: Instant,
    /// Counting, and the run, stop here.
    pub(crate) end: Instant,
}

impl Window {
    /// A window that opens after `warmup` and lasts `duration`.
    pub(crate) fn after(warmup: Duration, duration: Duration) -> Window {
        let start = Instant::now() + warmup;
        Window {
            start,
            end: start + duration,
        }
    }

    /// Whether `t` is inside.
    pub(crate) fn contains(&self, t: Instant) -> bool {
        t >= self.start && t < self.end
    }

    /// Whether the window has closed.
    pub(crate) fn over(&self) -> bool {
        Instant::now() >= self.end
    }

    /// Its length in seconds.
    pub(crate) fn seconds(&self) -> f64 {
        (self.end - self.start).as_secs_f64()
    }
}

/// How long a stream may go without a message before it counts as stalled.
pub(crate) const STALL: Duration = Duration::from_secs(10);

/// A stream's stall detector that costs no timer operation per message: its one timer is armed
/// at the window's end or [`STALL`] after the last progress, whichever is first, and re-armed
/// only when it fires early.
pub(crate) struct Watchdog {
    timer: std::pin::Pin<Box<tokio::time::Sleep>>,
    last: Instant,
    end: Instant,
}

impl Watchdog {
    /// A watchdog for a stream that runs until `window` ends.
    pub(crate) fn new(window: Window) -> Watchdog {
        let last = Instant::now();
        Watchdog {
            timer: Box::pin(tokio::time::sleep_until((last + STALL).min(window.end))),
            last,
            end: window.end,
        }
    }

    /// Awaits `f`; `None` when the stream stalled or the window ended first.
    pub(crate) async fn guard<F: std::future::Future>(&mut self, f: F) -> Option<F::Output> {
        let mut f = std::pin::pin!(f);
        loop {
            tokio::select! {
                biased;
                out = &mut f => return Some(out),
                () = self.timer.as_mut() => {
                    let due = (self.last + STALL).min(self.end);
                    if Instant::now() >= due {
                        return None;
                    }
                    self.timer.as_mut().reset(due);
                }
            }
        }
    }

    /// Records progress now and returns the time.
    pub(crate) fn progress(&mut self) -> Instant {
        self.last = Instant::now();
        self.last
    }
}

/// Latency samples in microseconds.
#[derive(Default, Debug)]
pub(crate) struct Latencies(Vec<u32>);

impl Latencies {
    /// Adds one sample.
    pub(crate) fn push(&mut self, d: Duration) {
        self.0.push(d.as_micros().min(u32::MAX as u128) as u32);
    }

    /// Adds every sample of `other`.
    pub(crate) fn merge(&mut self, mut other: Latencies) {
        self.0.append(&mut other.0);
    }

    /// Sorts the samples and reads the percentiles.
    pub(crate) fn summary(mut self) -> Summary {
        self.0.sort_unstable();
        let v = &self.0;
        let pct = |q: f64| -> f64 {
            if v.is_empty() {
                return f64::NAN;
            }
            let rank = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len());
            f64::from(v[rank - 1])
        };
        Summary {
            p50_us: pct(0.50),
            p99_us: pct(0.99),
            max_us: v.last().map_or(f64::NAN, |&m| f64::from(m)),
        }
    }
}

/// Percentiles of a latency distribution.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Summary {
    /// Median, µs.
    pub(crate) p50_us: f64,
    /// 99th percentile, µs.
    pub(crate) p99_us: f64,
    /// Largest, µs.
    pub(crate) max_us: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_by_nearest_rank() {
        let mut l = Latencies::default();
        for us in 1..=100u64 {
            l.push(Duration::from_micros(us));
        }
        let s = l.summary();
        assert_eq!(s.p50_us, 50.0);
        assert_eq!(s.p99_us, 99.0);
        assert_eq!(s.max_us, 100.0);
        assert!(Latencies::default().summary().p50_us.is_nan());
    }
}
