//! Launching the bot under test: once per match, with the address and token in the environment
//! (`MAUMAU_ADDR`, `MAUMAU_TOKEN`) and, for programs that only take flags, in place of `{addr}`
//! and `{token}` in its arguments; or once for the whole gauntlet with its lobby
//! ([`Launched::start_lobby`]: `MAUMAU_LOBBY_ADDR`, `MAUMAU_LOBBY_KEY`). Its whole output (stdout
//! and stderr together) goes to a log file, one per launch; a failure's reason quotes an excerpt
//! of it (`Excerpt`).
//!
//! With a [`Sandbox`] (`--sandbox`) the program runs in a jail of its own (see
//! [`maumau_sandbox`]): its addresses are then Unix sockets forwarded to the real ones
//! (`MAUMAU_ADDR` is `unix:/run/maumau/maumau.sock`, `MAUMAU_LOBBY_ADDR`
//! `unix:/run/maumau/lobby.sock`), its environment holds only its own variables, and the limits
//! it hit are named in how it ended ([`Exit::describe`]).

use std::fmt;
use std::fs::File;
use std::future::Future;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use maumau_sandbox::{Jail, LOBBY_SOCKET, Route, SERVER_SOCKET, Sandbox};
use tokio::process::{Child, Command};

/// Lines quoted from the start of a crash (or of the output, when no crash is recognised).
const HEAD: usize = 6;
/// Lines quoted from the end of the output.
const TAIL: usize = 8;
/// Output this short is quoted whole.
const WHOLE: usize = HEAD + TAIL + 2;
/// Characters quoted of one line.
const LINE: usize = 300;

/// Which process group a launched program runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessGroup {
    /// The launcher's: a Ctrl-C at the terminal reaches the program too.
    Launcher,
    /// One of its own, so that a Ctrl-C at the terminal reaches only the launcher, which may let
    /// the match finish (`maumau bot --ladder` drains).
    Own,
}

/// A running bot process.
pub struct Launched {
    child: Child,
    log: PathBuf,
    /// What it must exit after: "its match ended".
    after: &'static str,
    /// Its sandbox, when it runs in one.
    jail: Option<Jail>,
}

/// How a bot process ended.
#[derive(Clone, Debug)]
pub struct Exit {
    /// Its exit status; `None` when the kit had to stop it.
    pub status: Option<ExitStatus>,
    /// The file with its whole output.
    pub log: PathBuf,
    /// What it had to exit after: "its match ended", "its lobby was closed".
    after: &'static str,
    /// The sandbox's limits it hit ("it went over its memory limit (512 MiB) and was killed").
    pub limits: Vec<String>,
}

impl Exit {
    /// True for a clean exit (status 0).
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// "exited with status 1", "was stopped by a signal (...)", "did not exit ...", with the
    /// sandbox's limits it hit after it ("[sandbox: it reached its process limit ...]").
    pub fn describe(&self, grace: Duration) -> String {
        let how = self.how(grace);
        if self.limits.is_empty() {
            how
        } else {
            format!("{how} [sandbox: {}]", self.limits.join("; "))
        }
    }

    fn how(&self, grace: Duration) -> String {
        match self.status {
            None => format!(
                "did not exit within {} s after {}, so it was stopped (its output is in {})",
                grace.as_secs(),
                self.after,
                self.log.display()
            ),
            Some(s) => match s.code() {
                Some(c) => format!("exited with status {c}"),
                None => format!("was stopped by a signal ({s})"),
            },
        }
    }

    /// What it wrote, for a failure's reason: an excerpt and where the whole output is.
    pub fn output(&self) -> String {
        match Excerpt::read(&self.log) {
            Ok(e) => e.to_string(),
            Err(e) => format!(
                "\n      its output could not be read from {}: {e}",
                self.log.display()
            ),
        }
    }
}

impl Launched {
    /// Starts `command` (program and arguments) for one match, in the process group `group`; its
    /// output goes to `log`. With a `sandbox`, in a jail of its own where `addr` is a socket (on
    /// the current Tokio runtime).
    pub fn start(
        command: &[String],
        addr: &str,
        token: &str,
        log: &Path,
        sandbox: Option<&Sandbox>,
        group: ProcessGroup,
    ) -> std::io::Result<Launched> {
        let mut routes = Vec::new();
        let addr = inside(sandbox, SERVER_SOCKET, addr, &mut routes);
        let vars = seat_vars(&addr, token);
        Launched::spawn(command, &vars, log, group, MATCH_ENDED, sandbox, &routes)
    }

    /// Starts `command` once for many matches: it holds a lobby at `addr`
    /// (`http://127.0.0.1:PORT`, in `MAUMAU_LOBBY_ADDR` and for `{addr}`) with `key` (in
    /// `MAUMAU_LOBBY_KEY` and for `{key}`), as a tournament's `lobby:` entrant does, and is
    /// invited there to each match. Its output goes to `log`. With a `sandbox`, in a jail of its
    /// own where the lobby is a socket, and so is `server` (`host:port`), which its invitations
    /// must then name as [`Launched::server_inside`].
    pub fn start_lobby(
        command: &[String],
        addr: &str,
        key: &str,
        log: &Path,
        sandbox: Option<(&Sandbox, &str)>,
    ) -> std::io::Result<Launched> {
        let mut routes = Vec::new();
        if let Some((_, server)) = sandbox {
            routes.push(Route::new(SERVER_SOCKET, server));
        }
        let sandbox = sandbox.map(|(s, _)| s);
        let addr = inside(sandbox, LOBBY_SOCKET, addr, &mut routes);
        let vars = [
            ("MAUMAU_LOBBY_ADDR", "{addr}", addr.as_str()),
            ("MAUMAU_LOBBY_KEY", "{key}", key),
        ];
        Launched::spawn(
            command,
            &vars,
            log,
            ProcessGroup::Launcher,
            "its lobby was closed",
            sandbox,
            &routes,
        )
    }

    /// The game server's address as a sandboxed lobby program reaches it, for its invitations'
    /// `node_address`: `unix:/run/maumau/maumau.sock`.
    pub fn server_inside() -> String {
        Jail::addr(SERVER_SOCKET)
    }

    /// Starts `command` with each `(variable, placeholder, value)` of `vars` in its environment
    /// and in place of the placeholder in its arguments; with a `sandbox`, in a jail with
    /// `routes` and only `vars` in its environment.
    fn spawn(
        command: &[String],
        vars: &[(&str, &str, &str)],
        log: &Path,
        group: ProcessGroup,
        after: &'static str,
        sandbox: Option<&Sandbox>,
        routes: &[Route],
    ) -> std::io::Result<Launched> {
        let fill = |s: &String| {
            vars.iter().fold(s.clone(), |s, (_, placeholder, value)| {
                s.replace(placeholder, value)
            })
        };
        let (program, args) = command.split_first().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "no bot command given")
        })?;
        let out = File::create(log).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot write {}: {e}", log.display()))
        })?;
        let argv: Vec<String> = std::iter::once(program).chain(args).map(fill).collect();
        let env: Vec<(&str, &str)> = vars.iter().map(|(var, _, value)| (*var, *value)).collect();
        let (mut cmd, jail) = match sandbox {
            Some(sandbox) => {
                let jail = sandbox.jail(routes, &argv)?;
                (jail.command(&argv, &env), Some(jail))
            }
            None => {
                let mut cmd = Command::new(&argv[0]);
                cmd.args(&argv[1..]).envs(env);
                (cmd, None)
            }
        };
        cmd.stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .kill_on_drop(true);
        #[cfg(unix)]
        if group == ProcessGroup::Own {
            cmd.process_group(0);
        }
        let child = cmd.spawn()?;
        Ok(Launched {
            child,
            log: log.to_path_buf(),
            after,
            jail,
        })
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
            status = self.child.wait() => self.exit(status.ok()),
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
        self.exit(status)
    }

    fn exit(&self, status: Option<ExitStatus>) -> Exit {
        Exit {
            status,
            log: self.log.clone(),
            after: self.after,
            limits: self
                .jail
                .as_ref()
                .map(|j| j.verdict(status))
                .unwrap_or_default(),
        }
    }
}

/// The address a program reaches `addr` at: `addr` itself, or in a sandbox the socket `socket`,
/// forwarded to `addr` (added to `routes`).
fn inside(sandbox: Option<&Sandbox>, socket: &str, addr: &str, routes: &mut Vec<Route>) -> String {
    match sandbox {
        Some(_) => {
            routes.push(Route::new(socket, addr));
            Jail::addr(socket)
        }
        None => addr.to_string(),
    }
}

/// What a bot launched for one match must exit after.
const MATCH_ENDED: &str = "its match ended";

/// A match's address and seat token, in `MAUMAU_ADDR` and `MAUMAU_TOKEN` and for `{addr}` and
/// `{token}`.
fn seat_vars<'a>(addr: &'a str, token: &'a str) -> [(&'static str, &'static str, &'a str); 2] {
    [
        ("MAUMAU_ADDR", "{addr}", addr),
        ("MAUMAU_TOKEN", "{token}", token),
    ]
}

/// True for the first line of a crash report: a Python traceback, a Go panic or fatal error, a
/// Rust panic, an uncaught Java exception. (A JavaScript or Java stack trace is recognised by
/// its first `    at ` line instead: the line before it is the message.)
fn starts_crash(line: &str) -> bool {
    line.starts_with("Traceback (most recent call last)")
        || line.starts_with("panic: ")
        || line.starts_with("fatal error: ")
        || line.starts_with("Exception in thread ")
        || line.contains(" panicked at ")
}

/// The part of a bot's output a failure quotes: the first lines of its last crash report (or of
/// the output, when none is recognised), where a crash's message usually is (a Go panic, a
/// Rust panic, a JavaScript error), and the last lines, where the rest is (a Python
/// traceback's message, the last thing it said). Output of up to [`WHOLE`] lines is quoted
/// whole.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Excerpt {
    /// The log file.
    path: PathBuf,
    /// Lines in the output.
    total: usize,
    /// The quoted lines with their 0-based numbers, in order.
    lines: Vec<(usize, String)>,
}

impl Excerpt {
    /// Reads the excerpt of a log file (in one pass, keeping only the lines it quotes).
    pub(crate) fn read(path: &Path) -> std::io::Result<Excerpt> {
        let mut reader = BufReader::new(File::open(path)?);
        let mut first: Vec<String> = Vec::new();
        let mut crash: Option<(usize, Vec<String>)> = None;
        let mut tail = std::collections::VecDeque::new();
        let mut previous: Option<String> = None;
        let mut total = 0;
        let mut buf = Vec::new();
        loop {
            buf.clear();
            if reader.read_until(b'\n', &mut buf)? == 0 {
                break;
            }
            let text = String::from_utf8_lossy(&buf);
            let text = text.trim_end_matches(['\n', '\r']);
            let line: String = text.chars().take(LINE).collect();
            let n = total;
            total += 1;
            let at = line.starts_with("    at ")
                && previous
                    .as_deref()
                    .is_some_and(|p| !p.is_empty() && !p.starts_with(char::is_whitespace));
            if at {
                // A new JavaScript or Java stack: it starts at its message, the line before.
                crash = Some((n - 1, previous.clone().into_iter().collect()));
            } else if starts_crash(&line) {
                crash = Some((n, Vec::new()));
            }
            if let Some((_, head)) = &mut crash
                && head.len() < HEAD
            {
                head.push(line.clone());
            }
            if first.len() < WHOLE {
                first.push(line.clone());
            }
            tail.push_back(line.clone());
            if tail.len() > TAIL {
                tail.pop_front();
            }
            previous = Some(line);
        }
        let lines = if total <= WHOLE {
            first.into_iter().enumerate().collect()
        } else {
            let (start, head) = crash.unwrap_or_else(|| (0, first[..HEAD].to_vec()));
            let from_tail = total - tail.len();
            let head = head
                .into_iter()
                .enumerate()
                .map(|(i, l)| (start + i, l))
                .filter(|(n, _)| *n < from_tail);
            head.chain((from_tail..).zip(tail)).collect()
        };
        Ok(Excerpt {
            path: path.to_path_buf(),
            total,
            lines,
        })
    }
}

impl fmt::Display for Excerpt {
    /// The quoted lines, indented, with the gaps and the log file named.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.total == 0 {
            return write!(f, "; it wrote nothing to stdout or stderr");
        }
        let what = if self.lines.len() == self.total {
            "its output"
        } else {
            "the start of its crash and the end of its output"
        };
        write!(
            f,
            "\n      {what} ({} lines in all, the whole of it in {}):",
            self.total,
            self.path.display()
        )?;
        let mut next = 0;
        for (n, line) in &self.lines {
            if *n > next {
                write!(f, "\n      | … {} lines left out …", n - next)?;
            }
            write!(f, "\n      | {line}")?;
            next = n + 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn excerpt(text: &str) -> String {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("bot.log");
        std::fs::write(&path, text).expect("written");
        Excerpt::read(&path).expect("read").to_string()
    }

    #[test]
    fn short_output_is_quoted_whole() {
        let text = excerpt("one\ntwo\n");
        assert!(text.contains("its output (2 lines in all"), "{text}");
        assert!(text.contains("| one\n      | two"), "{text}");
        assert!(!text.contains("left out"), "{text}");
        assert_eq!(excerpt(""), "; it wrote nothing to stdout or stderr");
    }

    #[test]
    fn a_go_panic_keeps_its_message_and_its_last_lines() {
        let mut text = "INFO joined\n".repeat(30);
        text.push_str("panic: runtime error: index out of range [3] with length 3\n\n");
        text.push_str("goroutine 1 [running]:\n");
        for i in 0..20 {
            text.push_str(&format!("main.frame{i}(...)\n\t/src/bot.go:{i} +0x1d\n"));
        }
        text.push_str("exit status 2\n");
        let quoted = excerpt(&text);
        assert!(
            quoted.contains("| … 30 lines left out …\n      | panic: runtime error: index out"),
            "{quoted}"
        );
        assert!(quoted.contains("| goroutine 1 [running]:"), "{quoted}");
        assert!(quoted.contains("| exit status 2"), "{quoted}");
        assert!(quoted.contains("74 lines in all"), "{quoted}");
    }

    #[test]
    fn a_javascript_error_is_found_by_its_stack() {
        let mut text = String::from("/bot.js:10\n    throw new Error('no card');\n    ^\n\n");
        text.push_str("Error: no card\n");
        for i in 0..15 {
            text.push_str(&format!("    at frame{i} (/bot.js:{i}:1)\n"));
        }
        text.push_str("\nNode.js v20.19.2\n");
        let quoted = excerpt(&text);
        assert!(
            quoted
                .contains("| … 4 lines left out …\n      | Error: no card\n      |     at frame0"),
            "{quoted}"
        );
        assert!(quoted.contains("| Node.js v20.19.2"), "{quoted}");
    }

    #[test]
    fn without_a_crash_the_first_and_last_lines_are_quoted() {
        let text: String = (0..40).map(|i| format!("line {i}\n")).collect();
        let quoted = excerpt(&text);
        assert!(quoted.contains("| line 0\n"), "{quoted}");
        assert!(quoted.contains("| line 5\n      | … 26 lines left out …\n      | line 32"));
        assert!(quoted.ends_with("| line 39"), "{quoted}");
    }
}
