//! `maumau-loadgen workers`: a tournament on several machines (`maumau tournament --store` and
//! `maumau worker`, see docs/TOURNAMENTS.md), its games per second with 1, 2, 3... machines in
//! the same run, and the store's statements per game.
//!
//! Each side plays the same tournament (two `random+Nms` entrants, which wait `--think-ms` before
//! each decision, as a slow program would; `--deals` deals, each played twice) with a new event:
//! the tournament's command plays `--threads` games at once, and each of the other `machines -
//! 1` processes is a `maumau worker --event ID --threads N` started as soon as the command names
//! its event. A side's time runs from that line to the command's last progress line; its
//! statements are those each process reports at its end (`the store: S statements in T
//! transactions`). All processes run on this machine: the waits, not the CPU, are what the
//! machines share out, which is what a tournament of slow entrants spread over machines does.
//!
//! With `--programs` the entrants are external programs instead: `cmd:maumau bot --kind
//! random+Nms`, the same bot launched per match, so every machine (the command and each worker)
//! plays on a game server of its own and launches two programs per game, as a tournament of
//! real programs does.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longest a side may take before the benchmark gives up on it.
const SIDE_TIMEOUT: Duration = Duration::from_secs(600);

/// Arguments of `maumau-loadgen workers`.
#[derive(clap::Args)]
pub(crate) struct WorkersArgs {
    /// The PostgreSQL store (`postgres://user@host:port/db`): `scripts/postgres-temp.sh start`
    /// prints one.
    #[arg(long, env = "MAUMAU_TEST_POSTGRES", hide_env_values = true)]
    store: String,
    /// Most machines (the tournament's command and its workers): measured with 1, 2, ... that
    /// many.
    #[arg(long, default_value_t = 3)]
    machines: usize,
    /// Milliseconds each entrant waits before each decision.
    #[arg(long, env = "MAUMAU_BENCH_THINK_MS", default_value_t = 20)]
    think_ms: u32,
    /// Deals, each played twice (a game per seating).
    #[arg(long, env = "MAUMAU_BENCH_DEALS", default_value_t = 48)]
    deals: u32,
    /// Games at once on each machine.
    #[arg(long, default_value_t = 8)]
    threads: usize,
    /// The `maumau` binary [default: `maumau` next to this executable].
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// Entrants that are external programs (`cmd:maumau bot --kind random+Nms`, launched per
    /// match) rather than built-in bots.
    #[arg(long)]
    programs: bool,
}

/// One side's figures.
struct Side {
    machines: usize,
    games: u64,
    seconds: f64,
    statements: u64,
    transactions: u64,
}

impl Side {
    fn rate(&self) -> f64 {
        self.games as f64 / self.seconds.max(1e-9)
    }
}

/// A child whose standard error comes line by line on a channel; killed when dropped.
struct Piped {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Piped {
    fn spawn(mut cmd: Command, what: &str) -> Result<Piped, String> {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        crate::procs::live().push(child.id());
        let stderr = child
            .stderr
            .take()
            .ok_or_else(|| format!("no stderr pipe for {what}"))?;
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Piped { child, lines })
    }

    /// The next line that `pick` accepts, skipping the others; an error with the lines seen
    /// when the process ends or `deadline` passes first.
    fn wait_for<T>(
        &self,
        what: &str,
        deadline: Instant,
        mut pick: impl FnMut(&str) -> Option<T>,
    ) -> Result<T, String> {
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(found) = pick(&line) {
                        return Ok(found);
                    }
                    seen.push(line);
                }
                Err(_) => {
                    let tail = seen[seen.len().saturating_sub(20)..].join("\n");
                    return Err(format!(
                        "{what}: ended or timed out; its last lines:\n{tail}"
                    ));
                }
            }
        }
    }
}

impl Drop for Piped {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `S statements in T transactions` from a line that says `the store: ...`.
fn statements(line: &str) -> Option<(u64, u64)> {
    let rest = line.split("the store: ").nth(1)?;
    let mut words = rest.split_whitespace();
    let statements = words.next()?.parse().ok()?;
    let transactions = words.nth(2)?.parse().ok()?;
    Some((statements, transactions))
}

/// Plays one side: the command and `machines - 1` workers.
fn side(args: &WorkersArgs, bin: &PathBuf, machines: usize) -> Result<Side, String> {
    let out = tempfile::Builder::new()
        .prefix("maumau-loadgen-workers-")
        .tempdir()
        .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let bot = format!("random+{}ms", args.think_ms);
    let threads = args.threads.to_string();
    let mut command = Command::new(bin);
    command.args(["tournament", "--store", &args.store]);
    if args.programs {
        let program = format!(
            "cmd:'{}' bot --kind {bot} --server \"$MAUMAU_URL\" --seed \"$MAUMAU_SEED\"",
            bin.display()
        );
        command
            .args(["--bots", "", "--entrant"])
            .arg(format!("a={program}"))
            .arg("--entrant")
            .arg(format!("b={program}"));
    } else {
        command.arg("--bots").arg(format!("a={bot},b={bot}"));
    }
    command
        .args(["--seats", "2", "--deals", &args.deals.to_string()])
        .args([
            "--threads",
            &threads,
            "--seed",
            "1",
            "--no-replays",
            "--out",
        ])
        .arg(out.path());
    let coordinator = Piped::spawn(command, "the tournament")?;
    let deadline = Instant::now() + SIDE_TIMEOUT;
    let event: i64 = coordinator.wait_for("the tournament", deadline, |l| {
        l.strip_prefix("maumau: event ")?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })?;
    let started = Instant::now();
    let workers = (1..machines)
        .map(|_| {
            let mut w = Command::new(bin);
            w.args(["worker", "--store", &args.store, "--event"])
                .arg(event.to_string())
                .args(["--threads", &threads]);
            Piped::spawn(w, "a worker")
        })
        .collect::<Result<Vec<_>, String>>()?;
    let games: u64 = coordinator.wait_for("the tournament", deadline, |l| {
        let rest = l.strip_prefix("maumau: games ")?;
        let (done, rest) = rest.split_once('/')?;
        rest.contains("played in").then(|| done.parse().ok())?
    })?;
    let seconds = started.elapsed().as_secs_f64();
    let (mut s, mut t) = coordinator.wait_for("the tournament", deadline, statements)?;
    for w in &workers {
        let (ws, wt) = w.wait_for("a worker", deadline, statements)?;
        s += ws;
        t += wt;
    }
    Ok(Side {
        machines,
        games,
        seconds,
        statements: s,
        transactions: t,
    })
}

/// Runs the benchmark and prints its figures.
pub(crate) fn bench(args: &WorkersArgs) -> Result<(), String> {
    let bin = crate::server_bin(args.server_bin.as_ref())?;
    let machines = args.machines.max(1);
    eprintln!(
        "loadgen: workers: {} games per side (2 {} waiting {} ms per decision), {} at once per \
         machine, 1 to {machines} machines",
        2 * args.deals,
        if args.programs {
            "programs launched per match"
        } else {
            "built-in entrants"
        },
        args.think_ms,
        args.threads
    );
    let mut sides: Vec<Side> = Vec::new();
    for n in 1..=machines {
        let s = side(args, &bin, n)?;
        eprintln!(
            "loadgen: workers: {n} machine{}: {} games in {:.1} s",
            if n == 1 { "" } else { "s" },
            s.games,
            s.seconds
        );
        sides.push(s);
    }
    let one = sides.first().map_or(1.0, Side::rate);
    println!("machines  games/s  of N x one  statements/game  transactions/game");
    for s in &sides {
        println!(
            "{:>8}  {:>7.2}  {:>10.2}  {:>15.1}  {:>17.1}",
            s.machines,
            s.rate(),
            s.rate() / (one * s.machines as f64),
            s.statements as f64 / s.games.max(1) as f64,
            s.transactions as f64 / s.games.max(1) as f64,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_statements_line() {
        assert_eq!(
            statements("maumau: the store: 120 statements in 100 transactions by this command"),
            Some((120, 100))
        );
        assert_eq!(
            statements(
                "maumau worker: event 3 is over; 7 games; the store: 15 statements in 14 transactions"
            ),
            Some((15, 14))
        );
        assert_eq!(statements("maumau: games 3/4"), None);
    }
}
