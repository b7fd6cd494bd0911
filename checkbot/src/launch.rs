//! Launching the bot under test: once per match, with the address and token in the environment
//! (`MAUMAU_ADDR`, `MAUMAU_TOKEN`) and, for programs that only take flags, in place of `{addr}`
//! and `{token}` in its arguments. Its output is kept (the last lines) for the report.

use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};

/// Lines of the bot's output kept for the report.
const TAIL: usize = 12;

/// A running bot process.
pub(crate) struct Launched {
    child: Child,
    output: Arc<Mutex<VecDeque<String>>>,
}

/// How a bot process ended.
#[derive(Clone, Debug)]
pub(crate) struct Exit {
    /// Its exit status; `None` when the kit had to kill it.
    pub(crate) status: Option<ExitStatus>,
    /// The last lines it wrote (stdout and stderr together).
    pub(crate) tail: Vec<String>,
}

impl Exit {
    /// True for a clean exit (status 0).
    pub(crate) fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// "exited with status 1", "was killed by signal 9", "did not exit: killed by check-bot".
    pub(crate) fn describe(&self) -> String {
        match self.status {
            None => "did not exit by itself after its match, so check-bot stopped it".into(),
            Some(s) => match s.code() {
                Some(c) => format!("exited with status {c}"),
                None => format!("was stopped by a signal ({s})"),
            },
        }
    }

    /// The last lines of output, indented, for a failure's reason.
    pub(crate) fn tail_text(&self) -> String {
        if self.tail.is_empty() {
            return String::new();
        }
        let lines: Vec<String> = self.tail.iter().map(|l| format!("      | {l}")).collect();
        format!("\n      last output:\n{}", lines.join("\n"))
    }
}

impl Launched {
    /// Starts `command` (program and arguments) for one match.
    pub(crate) fn start(command: &[String], addr: &str, token: &str) -> std::io::Result<Launched> {
        let fill = |s: &String| s.replace("{addr}", addr).replace("{token}", token);
        let (program, args) = command.split_first().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "no bot command given")
        })?;
        let mut child = Command::new(fill(program))
            .args(args.iter().map(fill))
            .env("MAUMAU_ADDR", addr)
            .env("MAUMAU_TOKEN", token)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
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
    pub(crate) fn try_exit(&mut self) -> Option<Exit> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(self.exit(Some(status))),
            _ => None,
        }
    }

    /// Waits up to `grace` for the process to end, then stops it.
    pub(crate) async fn finish(mut self, grace: Duration) -> Exit {
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
