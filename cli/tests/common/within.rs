//! A command run to its end within a limit: for tests whose clocks are far longer than the limit,
//! so that a run still going when it passes is waiting for a clock it should not wait for (it is
//! killed rather than left to hang the test run).
#![allow(dead_code, unreachable_pub)]

use std::io::Read;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `command` (its output captured) to its end: its output, or `None` when it was still
/// running after `limit` and was killed.
pub fn output_within(mut command: Command, limit: Duration) -> Option<Output> {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the command starts");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return Some(Output {
                status,
                stdout: stdout.join().expect("stdout"),
                stderr: stderr.join().expect("stderr"),
            });
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
