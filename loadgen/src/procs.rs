//! Servers under test run as child processes, so their CPU time and memory can be read from
//! `/proc/PID/{stat,status}` apart from the load generator's.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use maumau_benchkit::{cpu_seconds, machine_busy_seconds};

/// How long a child may take to print the address it listens on.
const START_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a child may take to stop after SIGINT before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);
/// Lines of a child's stderr kept for error messages.
const TAIL_LINES: usize = 20;

/// Process ids of the servers started and not yet stopped, killed by [`kill_all`].
static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

pub(crate) fn live() -> std::sync::MutexGuard<'static, Vec<u32>> {
    LIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kills every server still running (when the load generator is interrupted).
pub(crate) fn kill_all() {
    for pid in live().drain(..) {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// A `kB` field of `/proc/PID/status` (`VmRSS`, `VmHWM`).
pub(crate) fn status_kb(pid: &str, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
}

/// A counter of `/proc/PID/io` (`syscr`, `syscw`: read and write syscalls of every thread).
pub(crate) fn io_count(pid: &str, field: &str) -> Option<u64> {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().parse().ok())
}

/// Context switches (voluntary and not) of every thread of a process: each one is a thread
/// that went to sleep or was preempted.
pub(crate) fn context_switches(pid: &str) -> Option<u64> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut total = 0;
    for task in tasks.flatten() {
        let tid = task.file_name();
        let tid = tid.to_string_lossy();
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/status")) else {
            continue;
        };
        for line in status.lines() {
            if let Some(v) = line
                .strip_prefix("voluntary_ctxt_switches:")
                .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
            {
                total += v.trim().parse::<u64>().unwrap_or(0);
            }
        }
    }
    Some(total)
}

/// What the counters of one process say at one moment.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counters {
    /// CPU seconds, user + system.
    pub(crate) cpu: f64,
    /// Read syscalls.
    pub(crate) reads: u64,
    /// Write syscalls.
    pub(crate) writes: u64,
    /// Context switches.
    pub(crate) switches: u64,
    /// CPU seconds the whole machine spent busy, every process's (the same in every process's
    /// counters): what the measured processes' CPU time is a share of.
    pub(crate) machine: f64,
}

impl Counters {
    /// Reads the counters of `pid` (`self` for this process).
    pub(crate) fn read(pid: &str) -> Counters {
        Counters {
            cpu: cpu_seconds(pid).unwrap_or(f64::NAN),
            reads: io_count(pid, "syscr").unwrap_or(0),
            writes: io_count(pid, "syscw").unwrap_or(0),
            switches: context_switches(pid).unwrap_or(0),
            machine: machine_busy_seconds().unwrap_or(f64::NAN),
        }
    }

    /// What happened between `earlier` and `self`.
    pub(crate) fn since(&self, earlier: &Counters) -> Counters {
        Counters {
            cpu: self.cpu - earlier.cpu,
            reads: self.reads.saturating_sub(earlier.reads),
            writes: self.writes.saturating_sub(earlier.writes),
            switches: self.switches.saturating_sub(earlier.switches),
            machine: self.machine - earlier.machine,
        }
    }
}

/// Reads `... serving on ADDR ...` from a server's log line.
fn listening_address(line: &str) -> Option<SocketAddr> {
    let after = &line[line.find("serving on ")? + "serving on ".len()..];
    after.split_whitespace().next()?.parse().ok()
}

/// A server under test: a child process listening on loopback, stopped when dropped.
pub(crate) struct ChildServer {
    child: Child,
    pid: String,
    /// Where it listens.
    pub(crate) addr: SocketAddr,
    tail: Arc<Mutex<VecDeque<String>>>,
    /// The write end of the child's stdin, when it watches for our exit there.
    _stdin: Option<ChildStdin>,
    /// Kept until the server is gone (data directory, configuration file).
    _dir: Option<tempfile::TempDir>,
}

impl ChildServer {
    /// Starts `cmd` and waits until its stderr names the loopback address it listens on
    /// (`serving on ADDR`). `dir` is removed after the child has stopped. With `stdin_pipe` the
    /// child's stdin is a pipe that closes when this process exits, however it exits.
    pub(crate) fn spawn(
        mut cmd: Command,
        what: &str,
        dir: Option<tempfile::TempDir>,
        stdin_pipe: bool,
    ) -> Result<ChildServer, String> {
        cmd.stdin(if stdin_pipe {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start the {what}: {e}"))?;
        live().push(child.id());
        let stdin = child.stdin.take();
        let Some(stderr) = child.stderr.take() else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("no stderr pipe for the {what}"));
        };
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let (found, address) = std::sync::mpsc::channel();
        let keep = tail.clone();
        // Drains the child's log (so it never blocks on a full pipe) until the child exits.
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if !sent && let Some(addr) = listening_address(&line) {
                    sent = true;
                    let _ = found.send(addr);
                }
                if let Ok(mut t) = keep.lock() {
                    if t.len() == TAIL_LINES {
                        t.pop_front();
                    }
                    t.push_back(line);
                }
            }
        });
        let pid = child.id().to_string();
        let mut server = ChildServer {
            child,
            pid,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
            tail,
            _stdin: stdin,
            _dir: dir,
        };
        match address.recv_timeout(START_TIMEOUT) {
            Ok(addr) if addr.ip().is_loopback() => {
                server.addr = addr;
                Ok(server)
            }
            Ok(addr) => Err(format!("the {what} listens on {addr}, not on loopback")),
            Err(_) => Err(format!(
                "the {what} did not report its address within {START_TIMEOUT:?}; its log:\n{}",
                server.log_tail()
            )),
        }
    }

    /// The process id.
    pub(crate) fn pid(&self) -> &str {
        &self.pid
    }

    /// The `http://` URL of the server.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// CPU seconds (user + system) the server has used so far.
    pub(crate) fn cpu_seconds(&self) -> f64 {
        cpu_seconds(&self.pid).unwrap_or(f64::NAN)
    }

    /// The server's counters now.
    pub(crate) fn counters(&self) -> Counters {
        Counters::read(&self.pid)
    }

    /// Resident memory now, in kB.
    pub(crate) fn rss_kb(&self) -> u64 {
        status_kb(&self.pid, "VmRSS").unwrap_or(0)
    }

    /// File descriptors open now (listener, connections, store, pipes).
    pub(crate) fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid)).map_or(0, Iterator::count)
    }

    /// Peak resident memory, in kB.
    pub(crate) fn peak_rss_kb(&self) -> u64 {
        status_kb(&self.pid, "VmHWM").unwrap_or(0)
    }

    /// The last lines the server logged.
    pub(crate) fn log_tail(&self) -> String {
        self.tail
            .lock()
            .map(|t| t.iter().cloned().collect::<Vec<_>>().join("\n"))
            .unwrap_or_default()
    }

    /// Asks the server to stop (SIGINT, as Ctrl-C), waits a bounded time, then kills it.
    pub(crate) fn stop(mut self) {
        self.stop_inner();
    }

    fn stop_inner(&mut self) {
        let id = self.child.id();
        live().retain(|&p| p != id);
        if matches!(self.child.try_wait(), Ok(Some(_))) {
            return;
        }
        let _ = Command::new("kill")
            .args(["-INT", &self.pid])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let until = Instant::now() + STOP_TIMEOUT;
        while Instant::now() < until {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        eprintln!(
            "loadgen: server {} did not stop in time; killing it",
            self.pid
        );
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ChildServer {
    fn drop(&mut self) {
        let id = self.child.id();
        live().retain(|&p| p != id);
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_address_from_server_logs() {
        assert_eq!(
            listening_address("maumau: serving on 127.0.0.1:4321 (data in /tmp/x)"),
            Some(SocketAddr::from(([127, 0, 0, 1], 4321)))
        );
        assert_eq!(
            listening_address("echo: serving on 127.0.0.1:99"),
            Some(SocketAddr::from(([127, 0, 0, 1], 99)))
        );
        assert_eq!(listening_address("nothing here"), None);
    }

    #[test]
    fn reads_this_process() {
        assert!(cpu_seconds("self").is_some_and(|c| c >= 0.0));
        assert!(status_kb("self", "VmRSS").is_some_and(|kb| kb > 0));
        assert!(context_switches("self").is_some());
        let c = Counters::read("self");
        assert!(c.since(&c).cpu == 0.0);
    }
}
