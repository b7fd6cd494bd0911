//! Launching the bot under test: once per match, with the address and token in the environment
//! (`MAUMAU_ADDR`, `MAUMAU_TOKEN`) and, for programs that only take flags, in place of `{addr}`
//! and `{token}` in its arguments. Its output is kept (the last lines) for the report.

use std::collections::VecDeque;
use std::future::Future;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

/// Lines of the bot's output kept for the report.
const TAIL: usize = 12;

/// A running bot process.
pub struct Launched {
    child: Child,
    output: Arc<Mutex<VecDeque<String>>>,
}

/// How a bot process ended.
#[derive(Clone, Debug)]
pub struct Exit {
    /// Its exit status; `None` when the kit had to kill it.
    pub status: Option<ExitStatus>,
    /// The last lines it wrote (stdout and stderr together).
    pub tail: Vec<String>,
}

impl Exit {
    /// True for a clean exit (status 0).
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// "exited with status 1", "was killed by signal 9", "did not exit: killed by check-bot".
    pub fn describe(&self) -> String {
        match self.status {
            None => "did not exit by itself after its match, so check-bot stopped it".into(),
            Some(s) => match s.code() {
                Some(c) => format!("exited with status {c}"),
                None => format!("was stopped by a signal ({s})"),
            },
        }
    }

    /// The last lines of output, indented, for a failure's reason.
    pub fn tail_text(&self) -> String {
        if self.tail.is_empty() {
            return String::new();
        }
        let lines: Vec<String> = self.tail.iter().map(|l| format!("      | {l}")).collect();
        format!("\n      last output:\n{}", lines.join("\n"))
    }
}

impl Launched {
    /// Starts `command` (program and arguments) for one match.
    pub fn start(command: &[String], addr: &str, token: &str) -> std::io::Result<Launched> {
        Launched::spawn(command, addr, token, false)
    }

    /// [`Launched::start`] in a process group of its own, so that a Ctrl-C at the terminal
    /// reaches only the launcher, which may let the match finish (`maumau bot --ladder` drains).
    pub fn start_in_own_group(
        command: &[String],
        addr: &str,
        token: &str,
    ) -> std::io::Result<Launched> {
        Launched::spawn(command, addr, token, true)
    }

    fn spawn(
        command: &[String],
        addr: &str,
        token: &str,
        own_group: bool,
    ) -> std::io::Result<Launched> {
        let fill = |s: &String| s.replace("{addr}", addr).replace("{token}", token);
        let (program, args) = command.split_first().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "no bot command given")
        })?;
        let mut cmd = Command::new(fill(program));
        cmd.args(args.iter().map(fill))
            .env("MAUMAU_ADDR", addr)
            .env("MAUMAU_TOKEN", token)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        if own_group {
            cmd.process_group(0);
        }
        let mut child = cmd.spawn()?;
        let output = Arc::new(Mutex::new(VecDeque::new()));
        if let Some(out) = child.stdout.take() {
            tokio::spawn(keep_tail(out, output.clone()));
        }
        if let Some(err) = child.stderr.take() {
            tokio::spawn(keep_tail(err, output.clone()));
        }
        Ok(Launched { child, output })
    }

    /// The exit, if the process has ended.
    pub fn try_exit(&mut self) -> Option<Exit> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(self.exit(Some(status))),
            _ => None,
        }
    }

    /// Waits for the process to end; once `over` completes (its match ended), waits up to
    /// `grace` more, then stops it.
    pub async fn finish_after(mut self, over: impl Future<Output = ()>, grace: Duration) -> Exit {
        tokio::select! {
            status = self.child.wait() => {
                tokio::time::sleep(Duration::from_millis(20)).await;
                self.exit(status.ok())
            }
            () = over => self.finish(grace).await,
        }
    }

    /// Waits up to `grace` for the process to end, then stops it.
    pub async fn finish(mut self, grace: Duration) -> Exit {
        let status = match tokio::time::timeout(grace, self.child.wait()).await {
            Ok(Ok(status)) => Some(status),
            _ => {
                let _ = self.child.kill().await;
                None
            }
        };
        // Let the output readers drain what the process wrote last.
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.exit(status)
    }

    fn exit(&self, status: Option<ExitStatus>) -> Exit {
        let tail = self
            .output
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect();
        Exit { status, tail }
    }
}

async fn keep_tail(stream: impl AsyncRead + Unpin, into: Arc<Mutex<VecDeque<String>>>) {
    let mut lines = BufReader::new(stream).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let mut tail = into.lock().unwrap_or_else(|e| e.into_inner());
        if tail.len() == TAIL {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}
