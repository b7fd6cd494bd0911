//! How far a tournament has come: a progress bar on a terminal, plain lines in a log.
//!
//! On a terminal (standard error) a bar redraws itself, with the notices (an entrant forfeited,
//! a program crashed) printed above it. Anywhere else (a CI log, a file, `nohup`) a bar cannot
//! redraw, so a plain line is written every [`EVERY`] or each tenth of the games, whichever
//! comes first, never one per game, and a last line when the games are over:
//!
//! ```text
//! maumau: games 120/400 (30%), 2.1 s elapsed, about 5 s left
//! maumau: games 400/400 played in 7.4 s
//! ```

use std::io::IsTerminal;
use std::path::Path;
use std::time::{Duration, Instant};

use maumau_tournament::{Progress, Report, Tournament, TournamentError, Venue};

/// Longest time between two plain progress lines while games finish.
const EVERY: Duration = Duration::from_secs(5);

/// Runs the tournament, telling how far it has come on standard error: a bar on a terminal,
/// plain lines elsewhere; the notices either way.
pub(super) fn run_with_progress(
    t: &Tournament,
    venue: &dyn Venue,
    out: &Path,
) -> Result<Report, TournamentError> {
    if std::io::stderr().is_terminal() {
        run_with_bar(t, venue, out)
    } else {
        run_with_lines(t, venue, out)
    }
}

/// A progress bar, with the notices above it.
fn run_with_bar(t: &Tournament, venue: &dyn Venue, out: &Path) -> Result<Report, TournamentError> {
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} games  {elapsed} elapsed, {eta} left",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut on_progress = |p: Progress| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        if let Some(n) = p.notice {
            bar.println(format!("maumau: {n}"));
        }
    };
    let result = t.run_on(venue, Some(out), &mut on_progress);
    bar.finish_and_clear();
    result
}

/// Plain progress lines (see [`Lines`]) and the notices, as they come.
fn run_with_lines(
    t: &Tournament,
    venue: &dyn Venue,
    out: &Path,
) -> Result<Report, TournamentError> {
    let mut lines = Lines::new(Instant::now());
    let mut last = (0, 0);
    let mut on_progress = |p: Progress| {
        if let Some(n) = &p.notice {
            eprintln!("maumau: {n}");
        }
        last = (p.done, p.total);
        if let Some(line) = lines.update(p.done, p.total, Instant::now()) {
            eprintln!("maumau: {line}");
        }
    };
    let result = t.run_on(venue, Some(out), &mut on_progress);
    if result.is_ok() {
        eprintln!("maumau: {}", lines.finish(last.0, last.1, Instant::now()));
    }
    result
}

/// When a plain progress line is due, and what it says.
#[derive(Debug)]
struct Lines {
    started: Instant,
    /// Games already done when the run started (resumed ones), which say nothing of its pace.
    resumed: Option<usize>,
    /// When the last line was written.
    written: Instant,
    /// Games done at the last line.
    done: usize,
    /// The tenth of the games the last line was in.
    tenth: usize,
}

impl Lines {
    fn new(now: Instant) -> Lines {
        Lines {
            started: now,
            resumed: None,
            written: now,
            done: 0,
            tenth: 0,
        }
    }

    /// The line for `done` of `total` games at `now`, if one is due: more games are done than
    /// at the last line, and [`EVERY`] has passed since it or a new tenth of the games has been
    /// reached. The last tenth is left to [`Lines::finish`].
    fn update(&mut self, done: usize, total: usize, now: Instant) -> Option<String> {
        let resumed = *self.resumed.get_or_insert(done);
        if resumed == done {
            // Nothing played yet in this run (also: the first count, of the resumed games).
            self.done = done;
            self.tenth = tenth(done, total);
            return None;
        }
        let tenth = tenth(done, total);
        let due = done > self.done
            && done < total
            && (tenth > self.tenth || now.duration_since(self.written) >= EVERY);
        if !due {
            return None;
        }
        self.written = now;
        self.done = done;
        self.tenth = tenth;
        let elapsed = now.duration_since(self.started);
        // The pace of this run's games so far, for the rest.
        let played = (done - resumed) as f64;
        let left = elapsed.as_secs_f64() / played * total.saturating_sub(done) as f64;
        Some(format!(
            "games {done}/{total} ({}%), {} elapsed, about {} left",
            done * 100 / total.max(1),
            duration_words(elapsed),
            duration_words(Duration::from_secs_f64(left))
        ))
    }

    /// The last line: how many games, in how long.
    fn finish(&self, done: usize, total: usize, now: Instant) -> String {
        format!(
            "games {done}/{total} played in {}",
            duration_words(now.duration_since(self.started))
        )
    }
}

/// Which tenth of `total` games `done` is in (10 once all are done).
fn tenth(done: usize, total: usize) -> usize {
    done * 10 / total.max(1)
}

/// A duration as people say it: `2.1 s`, `4 min 05 s`, `1 h 02 min`.
fn duration_words(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{:.1} s", d.as_secs_f64()),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lines come each tenth of the games or every 5 s, never per game, with the pace of this
    /// run's games; the resumed ones count as done but not for the pace.
    #[test]
    fn a_line_each_tenth_or_every_five_seconds() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut lines = Lines::new(t0);
        assert_eq!(lines.update(0, 400, at(0)), None);
        // Games 1..=39 in 3.9 s: still the first tenth, under 5 s.
        for done in 1..40 {
            assert_eq!(lines.update(done, 400, at(done as u64 * 100)), None);
        }
        assert_eq!(
            lines.update(40, 400, at(4000)).as_deref(),
            Some("games 40/400 (10%), 4.0 s elapsed, about 36.0 s left")
        );
        // 5 s without a new tenth: a line; none while nothing more is done.
        assert_eq!(lines.update(41, 400, at(8000)), None);
        assert!(lines.update(42, 400, at(9000)).is_some());
        assert_eq!(lines.update(42, 400, at(20_000)), None);
        // The last tenth is the final line's.
        assert_eq!(lines.update(400, 400, at(30_000)), None);
        assert_eq!(
            lines.finish(400, 400, at(30_000)),
            "games 400/400 played in 30.0 s"
        );
    }

    #[test]
    fn resumed_games_count_as_done_but_not_for_the_pace() {
        let t0 = Instant::now();
        let mut lines = Lines::new(t0);
        assert_eq!(lines.update(300, 400, t0), None);
        assert_eq!(
            lines
                .update(320, 400, t0 + Duration::from_secs(2))
                .as_deref(),
            Some("games 320/400 (80%), 2.0 s elapsed, about 8.0 s left")
        );
    }

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(duration_words(Duration::from_millis(2140)), "2.1 s");
        assert_eq!(duration_words(Duration::from_secs(245)), "4 min 05 s");
        assert_eq!(duration_words(Duration::from_secs(3720)), "1 h 02 min");
    }
}
