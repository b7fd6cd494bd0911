//! Launched programs die with the process that launched them, even when it is killed with
//! SIGKILL (a `maumau worker` stopped hard, its machine's OOM killer): nothing is left running
//! once nobody plays its games.
//!
//! A program runs in a process group of its own (`sh -c` and whatever it starts), which the
//! tournament kills at the end of its match, or on Ctrl-C. A process killed with SIGKILL runs
//! no code, so something else must do it then: a *guard*, a small process forked for each
//! program before it starts (between `fork` and `exec`, so it is a copy of nothing but the
//! launcher's memory at that moment; it runs no program of its own). It keeps nothing of the
//! launcher but the read end of a pipe whose only write end the launcher holds (close-on-exec,
//! so no launched program inherits it), and waits: when the pipe reports its end (every copy of
//! the write end is closed: the launcher is gone), it kills the program's whole process group;
//! when the group is empty (the program ended), it leaves. `PR_SET_PDEATHSIG` alone would not
//! do: it reaches only the direct child, `sh`, whose children (`dash` forks even the last
//! command of `sh -c`) would be left running. A sandboxed program has a second line of defence:
//! bubblewrap's `--die-with-parent` ends its PID namespace, and every process in it.
#![allow(
    unsafe_code,
    reason = "fork, poll and kill between fork and exec, through libc"
)]

use std::sync::OnceLock;

/// How often a guard checks that its program's group still has a process.
const CHECK_MS: i32 = 500;

/// The pipe every guard watches: (read end, write end), both close-on-exec; `None` when it could
/// not be made (programs then run unguarded, as before).
fn pipe() -> Option<(i32, i32)> {
    static PIPE: OnceLock<Option<(i32, i32)>> = OnceLock::new();
    *PIPE.get_or_init(|| {
        let mut fds = [0i32; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        let made = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0;
        made.then_some((fds[0], fds[1]))
    })
}

/// Guards the program `cmd` starts, which must lead a process group of its own
/// (`process_group(0)`): its group is killed when this process dies.
pub(crate) fn guard(cmd: &mut tokio::process::Command) {
    let Some((read, write)) = pipe() else {
        return;
    };
    // SAFETY: the closure runs in the child between fork and exec and makes only
    // async-signal-safe calls (getpid, fork, waitpid, setpgid, close, poll, kill, _exit); it
    // allocates nothing and takes no lock.
    unsafe {
        cmd.pre_exec(move || {
            start_guard(read, write);
            Ok(())
        });
    }
}

/// In the program's process (after `setpgid`, before `exec`): forks the guard of its group,
/// twice so that the guard is nobody's child once it starts (the system reaps it), and waits
/// for the intermediate process only.
///
/// # Safety
///
/// Only between fork and exec of a single-threaded child.
unsafe fn start_guard(read: i32, write: i32) {
    // SAFETY: async-signal-safe calls only (see `guard`).
    unsafe {
        let group = libc::getpgrp();
        let first = libc::fork();
        if first == 0 {
            if libc::fork() == 0 {
                watch(read, write, group);
            }
            libc::_exit(0);
        }
        if first > 0 {
            libc::waitpid(first, std::ptr::null_mut(), 0);
        }
    }
}

/// The guard: leaves the program's group, keeps only the pipe's read end, and waits for the
/// launcher's end (then kills `group`) or the group's (then leaves).
///
/// # Safety
///
/// Only in the guard process forked by [`start_guard`].
unsafe fn watch(read: i32, write: i32, group: i32) -> ! {
    // SAFETY: async-signal-safe calls only (see `guard`); the descriptors closed are this
    // process's copies.
    unsafe {
        libc::setpgid(0, 0);
        let _ = write;
        close_all_but(read);
        loop {
            let mut p = libc::pollfd {
                fd: read,
                events: libc::POLLIN,
                revents: 0,
            };
            // Nobody writes to the pipe: it is readable (end of file) or in error only when
            // every write end is closed, that is, the launcher is gone.
            if libc::poll(&mut p, 1, CHECK_MS) > 0 {
                libc::kill(-group, libc::SIGKILL);
                libc::_exit(0);
            }
            if libc::kill(-group, 0) != 0 {
                // The program and everything it started have ended.
                libc::_exit(0);
            }
        }
    }
}

/// Closes every descriptor but `keep` (the write end of the pipe, the program's output pipes,
/// the launcher's sockets): a guard holds nothing open that someone waits on.
///
/// # Safety
///
/// Only in the guard process.
unsafe fn close_all_but(keep: i32) {
    // SAFETY: close_range and close are async-signal-safe; they close this process's copies.
    unsafe {
        let keep = keep as libc::c_uint;
        let ranged =
            keep == 0 || libc::syscall(libc::SYS_close_range, 0 as libc::c_uint, keep - 1, 0) == 0;
        let ranged =
            ranged && libc::syscall(libc::SYS_close_range, keep + 1, libc::c_uint::MAX, 0) == 0;
        if !ranged {
            for fd in 0..4096 {
                if fd != keep as i32 {
                    libc::close(fd);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    /// A guard leaves once its program's group is empty, and leaves the program's output pipes
    /// alone (the reader sees their end when the program ends, not when the guard does).
    #[tokio::test]
    async fn a_guard_leaves_with_its_program() {
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c")
            .arg("sleep 0.2; echo done")
            .stdout(std::process::Stdio::piped())
            .process_group(0);
        super::guard(&mut cmd);
        let started = Instant::now();
        let out = cmd.output().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "done\n");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    /// The guards' pipe is close-on-exec: a launched program does not hold its write end (which
    /// would keep every guard waiting after the launcher died).
    #[test]
    fn launched_programs_do_not_inherit_the_pipe() {
        let Some((_, write)) = super::pipe() else {
            panic!("no pipe")
        };
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "test -e /proc/self/fd/{write} && echo open || echo closed"
            ))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "closed\n");
    }
}
