//! The sandbox every program Mau Mau Arena launches can run in (`--sandbox` of `maumau
//! tournament`, `maumau check-bot` and `maumau bot --ladder`): the one place that builds the
//! bubblewrap (`bwrap`) argument list, the forwarder that is a program's only way out, and its
//! limits.
//!
//! A sandboxed program runs in Linux namespaces of its own, made by bubblewrap (the sandbox of
//! Flatpak; this crate writes no namespace code):
//!
//! - **processes**: its own PID namespace and session, so it sees and signals no other process;
//!   it dies with its launcher (`--die-with-parent`), with every capability dropped, in a user
//!   namespace of its own. A root launcher runs it as `nobody` (`setpriv`), so that it cannot
//!   read root's files (the namespace would map it to root) and its process count is enforced;
//!   its folders must then be readable by all users, which is checked before it starts;
//! - **network**: none (`--unshare-net`: only a loopback of its own), except one Unix socket per
//!   route in `/run/maumau/` ([`SOCKET_DIR`]), which the launcher forwards to the server's TCP
//!   port ([`Jail::addr`] gives `unix:/run/maumau/maumau.sock` for its `MAUMAU_ADDR`);
//! - **files**: a read-only view of the system (`/usr`, `/etc` and the `/bin`, `/lib`, ...
//!   links), the folders named in its command read-only (its own folder: [`folders_named`]), a
//!   private `/tmp` of limited size, and nothing else: not the tournament's output folder, logs
//!   or seeds, not the other entrants' folders (paths to hide inside a bound folder are covered
//!   with an empty tmpfs, [`Options::hidden`]);
//! - **environment**: exactly the variables the launcher gives it (its own seat token, never
//!   another's). They are passed in the environment of `bwrap`, which is cleared first, and not
//!   with `--setenv`: a process's arguments are readable by every user of the host in
//!   `/proc/PID/cmdline`, its environment is not;
//! - **limits** ([`Limits`]): memory and processes through a cgroup (v1 `memory` and `pids`) per
//!   program, open files and CPU seconds through rlimits (`prlimit` from util-linux). Without
//!   writable cgroups the address space is limited instead (`prlimit --as`), and the process
//!   count is an rlimit, which counts every process of the sandbox's user together.
//!
//! [`Sandbox::new`] checks all of it once (bwrap found, a probe run of the real argument list,
//! the cgroups) and says why the machine cannot sandbox: `--sandbox` never falls back to running
//! a program unsandboxed. [`Jail::verdict`] names the limits a program hit, for its forfeit notice.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use maumau_sandbox::{Jail, Options, Route, SERVER_SOCKET, Sandbox};
//! let sandbox = Sandbox::new(Options::default())?; // or: why this machine cannot
//! let argv = vec!["python3".to_string(), "/srv/bots/mine/bot.py".into()];
//! // Its one way out: a socket in /run/maumau/, forwarded to the server's port.
//! let jail = sandbox.jail(&[Route::new(SERVER_SOCKET, "127.0.0.1:50051")], &argv)?;
//! let env = [("MAUMAU_ADDR", Jail::addr(SERVER_SOCKET)), ("MAUMAU_TOKEN", "SEAT".into())];
//! let status = jail.command(&argv, &env).status().await?;
//! for limit in jail.verdict(Some(status)) {
//!     println!("{limit}"); // "it went over its memory limit (512 MiB) and was killed"
//! }
//! # Ok(())
//! # }
//! ```

use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::net::{TcpStream, UnixListener};
use tokio::task::JoinHandle;

/// Where a program's sockets are inside its sandbox.
pub const SOCKET_DIR: &str = "/run/maumau";
/// The socket of a program's way to its game server (`MAUMAU_ADDR`, an invitation's
/// `node_address`).
pub const SERVER_SOCKET: &str = "maumau.sock";
/// The socket of a lobby program's way to its lobby (`MAUMAU_LOBBY_ADDR`).
pub const LOBBY_SOCKET: &str = "lobby.sock";
/// The environment variable that names the bwrap binary to use instead of `bwrap` on `PATH`.
pub const BWRAP_VAR: &str = "MAUMAU_BWRAP";
/// Where cgroup v1 hierarchies are mounted.
const CGROUP_ROOT: &str = "/sys/fs/cgroup";
/// The user a program runs as inside its user namespace (`nobody`).
const SANDBOX_UID: &str = "65534";
/// System folders bound read-only (or recreated as the same symlink) when the host has them.
const SYSTEM: [&str; 7] = ["/usr", "/etc", "/bin", "/sbin", "/lib", "/lib64", "/lib32"];
/// The kernel's own file systems: never bound from the host.
const KERNEL: [&str; 4] = ["/proc", "/sys", "/dev", "/run"];
/// The `PATH` inside the sandbox.
pub const SANDBOX_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// What one sandboxed program may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Memory in MiB (its processes together, its `/tmp` included).
    pub memory_mb: u64,
    /// Processes and threads at once.
    pub pids: u32,
    /// Open files per process.
    pub open_files: u32,
    /// CPU seconds per process: SIGXCPU then, SIGKILL a second later.
    pub cpu_secs: u64,
    /// Size of its private `/tmp` in MiB.
    pub tmp_mb: u64,
}

impl Default for Limits {
    /// 512 MiB, 64 processes, 256 open files, 600 CPU seconds, a 64 MiB `/tmp`.
    fn default() -> Limits {
        Limits {
            memory_mb: 512,
            pids: 64,
            open_files: 256,
            cpu_secs: 600,
            tmp_mb: 64,
        }
    }
}

/// How to build the sandbox.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The limits of every program.
    pub limits: Limits,
    /// More folders (or files) every program sees read-only, at the same path: an interpreter's
    /// virtual environment, say.
    pub read_only: Vec<PathBuf>,
    /// Paths no program may see even when they lie inside a folder it sees (the tournament's
    /// output folder): covered with an empty tmpfs.
    pub hidden: Vec<PathBuf>,
}

/// Why this machine cannot sandbox programs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable(pub String);

impl fmt::Display for Unavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "--sandbox cannot be used on this machine: {}", self.0)
    }
}

impl std::error::Error for Unavailable {}

/// How memory and processes are limited.
#[derive(Clone, Debug)]
enum Control {
    /// A cgroup per program under these v1 hierarchies (`memory`, `pids`).
    Cgroups { memory: PathBuf, pids: PathBuf },
    /// rlimits only: the address space, and the process count (enforced for non-root users).
    Rlimits,
}

/// The checked sandbox: every program launched through it runs in a [`Jail`] of its own.
#[derive(Clone, Debug)]
pub struct Sandbox {
    bwrap: PathBuf,
    prlimit: PathBuf,
    /// `setpriv`, when the launcher is root: bwrap then runs as [`SANDBOX_UID`].
    setpriv: Option<PathBuf>,
    options: Options,
    control: Control,
}

/// A way out of a sandbox: the socket `name` in [`SOCKET_DIR`], forwarded to the TCP address
/// `to` (`host:port`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    /// The socket's file name: `maumau.sock`.
    pub name: String,
    /// Where its connections go: `host:port`.
    pub to: String,
}

impl Route {
    /// The socket `name` forwarded to `to` (`host:port`, or a URL whose scheme is dropped).
    pub fn new(name: impl Into<String>, to: &str) -> Route {
        let to = to.trim().trim_end_matches('/');
        let to = to.split_once("://").map_or(to, |(_, rest)| rest);
        Route {
            name: name.into(),
            to: to.to_string(),
        }
    }
}

impl Sandbox {
    /// Finds bwrap ([`BWRAP_VAR`] or `PATH`) and prlimit, sets up the limits (cgroups where
    /// writable) and makes one sandbox with the real argument list that runs `true`; says why
    /// when any of it fails.
    pub fn new(options: Options) -> Result<Sandbox, Unavailable> {
        let bwrap = match std::env::var_os(BWRAP_VAR) {
            Some(path) if !path.is_empty() => {
                let path = PathBuf::from(path);
                if !path.is_file() {
                    return Err(Unavailable(format!(
                        "{BWRAP_VAR} names {}, which does not exist",
                        path.display()
                    )));
                }
                path
            }
            _ => on_path("bwrap").ok_or_else(|| {
                Unavailable(
                    "bubblewrap (`bwrap`) is not on PATH; install it (Debian and Ubuntu: \
                     `apt-get install bubblewrap`) or name it in MAUMAU_BWRAP"
                        .into(),
                )
            })?,
        };
        let prlimit = on_path("prlimit").ok_or_else(|| {
            Unavailable("`prlimit` (util-linux) is not on PATH; it sets the rlimits".into())
        })?;
        // Root's programs run as nobody: a user namespace mapped to root would let them read
        // every root-owned file they can see (/etc/shadow), and Linux never enforces
        // RLIMIT_NPROC for root.
        let setpriv = if is_root() {
            Some(on_path("setpriv").ok_or_else(|| {
                Unavailable(
                    "`setpriv` (util-linux) is not on PATH; it runs the sandbox as nobody".into(),
                )
            })?)
        } else {
            None
        };
        let control = match (writable_cgroup("memory"), writable_cgroup("pids")) {
            (Some(memory), Some(pids)) => {
                sweep_stale(&memory);
                sweep_stale(&pids);
                Control::Cgroups { memory, pids }
            }
            _ => Control::Rlimits,
        };
        for path in &options.read_only {
            if setpriv.is_some() {
                readable_by_all(path).map_err(Unavailable)?;
            }
        }
        let sandbox = Sandbox {
            bwrap,
            prlimit,
            setpriv,
            options,
            control,
        };
        sandbox.probe()?;
        Ok(sandbox)
    }

    /// The limits of every program.
    pub fn limits(&self) -> Limits {
        self.options.limits
    }

    /// "cgroups" or "rlimits": how memory and processes are limited.
    pub fn control(&self) -> &'static str {
        match self.control {
            Control::Cgroups { .. } => "cgroups (memory, pids) and rlimits (open files, CPU)",
            Control::Rlimits => "rlimits (address space, processes, open files, CPU)",
        }
    }

    /// Runs `true` in a sandbox built as every program's is.
    fn probe(&self) -> Result<(), Unavailable> {
        let dir = tempfile::Builder::new()
            .prefix("maumau-sandbox-probe-")
            .tempdir()
            .map_err(|e| Unavailable(format!("cannot make a temporary folder: {e}")))?;
        open_to_all(dir.path()).map_err(|e| Unavailable(format!("cannot open {e}")))?;
        let mut args = self.bwrap_args(dir.path(), &[]);
        args.push("true".into());
        let mut cmd = match &self.setpriv {
            Some(setpriv) => {
                let mut c = std::process::Command::new(setpriv);
                c.args(setpriv_args()).arg(&self.bwrap);
                c
            }
            None => std::process::Command::new(&self.bwrap),
        };
        let out = cmd
            .args(&args)
            .env_clear()
            .stdin(Stdio::null())
            .output()
            .map_err(|e| Unavailable(format!("cannot run {}: {e}", self.bwrap.display())))?;
        if out.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stderr);
        Err(Unavailable(format!(
            "{} cannot make a sandbox here ({}): {}",
            self.bwrap.display(),
            out.status,
            said.trim()
        )))
    }

    /// The bwrap arguments up to the program: `dir` is bound at [`SOCKET_DIR`], `folders`
    /// read-only at their own paths.
    fn bwrap_args(&self, dir: &Path, folders: &[PathBuf]) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        let mut push = |words: &[&str]| a.extend(words.iter().map(OsString::from));
        push(&[
            "--unshare-all",
            "--unshare-user",
            "--uid",
            SANDBOX_UID,
            "--gid",
            SANDBOX_UID,
            "--die-with-parent",
            "--new-session",
            "--cap-drop",
            "ALL",
        ]);
        for dir in SYSTEM {
            let path = Path::new(dir);
            if let Ok(target) = std::fs::read_link(path) {
                a.extend(["--symlink".into(), target.into(), dir.into()]);
            } else if path.is_dir() {
                a.extend(["--ro-bind".into(), dir.into(), dir.into()]);
            }
        }
        let tmp = (self.options.limits.tmp_mb.max(1) * 1024 * 1024).to_string();
        for words in [
            &["--proc", "/proc", "--dev", "/dev"][..],
            &["--perms", "1777", "--size", &tmp, "--tmpfs", "/tmp"],
            &["--dir", "/run"],
        ] {
            a.extend(words.iter().map(OsString::from));
        }
        a.extend([
            "--ro-bind".into(),
            dir.as_os_str().to_owned(),
            SOCKET_DIR.into(),
        ]);
        let mut bound: Vec<&PathBuf> = folders.iter().chain(&self.options.read_only).collect();
        bound.sort();
        bound.dedup();
        // The program starts in the launcher's current folder, so that the relative paths of its
        // command work: an empty one when no bound folder holds it.
        let cwd = std::env::current_dir()
            .ok()
            .filter(|c| c.is_absolute() && !SYSTEM.iter().chain(&KERNEL).any(|s| c.starts_with(s)));
        if let Some(c) = &cwd
            && !bound.iter().any(|f| c.starts_with(f))
        {
            a.extend(["--dir".into(), c.as_os_str().to_owned()]);
        }
        for f in &bound {
            a.extend([
                "--ro-bind".into(),
                f.as_os_str().to_owned(),
                f.as_os_str().to_owned(),
            ]);
        }
        for h in &self.options.hidden {
            if h.exists() && bound.iter().any(|f| h.starts_with(f)) {
                a.extend(["--tmpfs".into(), h.as_os_str().to_owned()]);
            }
        }
        let chdir = cwd.map_or_else(|| "/tmp".into(), PathBuf::into_os_string);
        a.extend(["--chdir".into(), chdir]);
        a
    }

    /// Makes the jail of one program: its socket folder with a forwarder per route (on the
    /// current Tokio runtime), its cgroups and limits. `command` is what will run (its words are
    /// searched for the folders it names, [`folders_named`]).
    pub fn jail(&self, routes: &[Route], command: &[String]) -> std::io::Result<Jail> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        // The folders its command names, but never one of the hidden paths or inside one.
        let hidden = &self.options.hidden;
        let folders: Vec<PathBuf> = folders_named(command)
            .into_iter()
            .filter(|f| !hidden.iter().any(|h| f.starts_with(h)))
            .collect();
        if self.setpriv.is_some() {
            for f in &folders {
                readable_by_all(f).map_err(std::io::Error::other)?;
            }
        }
        let dir = tempfile::Builder::new()
            .prefix("maumau-sandbox-")
            .tempdir()?;
        let mut forwarders = Vec::new();
        for route in routes {
            let path = dir.path().join(&route.name);
            let listener = UnixListener::bind(&path)?;
            forwarders.push(tokio::spawn(forward(listener, route.to.clone())));
        }
        open_to_all(dir.path())?;
        let cgroup = match &self.control {
            Control::Cgroups { memory, pids } => {
                let name = format!(
                    "maumau-{}-{}",
                    std::process::id(),
                    NEXT.fetch_add(1, Ordering::Relaxed)
                );
                Some(Cgroup::create(memory, pids, &name, self.options.limits)?)
            }
            Control::Rlimits => None,
        };
        Ok(Jail {
            args: self.bwrap_args(dir.path(), &folders),
            bwrap: self.bwrap.clone(),
            prlimit: self.prlimit.clone(),
            setpriv: self.setpriv.clone(),
            limits: self.options.limits,
            cgroup,
            forwarders,
            dir,
        })
    }
}

/// One program's sandbox: its sockets and forwarders, its cgroups. Dropping it stops the
/// forwarders, stops whatever is left in its cgroups and removes them.
pub struct Jail {
    bwrap: PathBuf,
    prlimit: PathBuf,
    setpriv: Option<PathBuf>,
    args: Vec<OsString>,
    limits: Limits,
    cgroup: Option<Cgroup>,
    forwarders: Vec<JoinHandle<()>>,
    /// Its socket folder, removed with it.
    dir: tempfile::TempDir,
}

impl Jail {
    /// The address of route `name` inside the sandbox: `unix:/run/maumau/NAME`.
    pub fn addr(name: &str) -> String {
        format!("unix:{SOCKET_DIR}/{name}")
    }

    /// Where route `name`'s socket is outside the sandbox (the launcher's side of it).
    pub fn socket_path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The command that runs `argv` in this sandbox with exactly the environment `env` (and
    /// `PATH`, `HOME` and `TMPDIR` when `env` does not set them): a shell prelude that moves
    /// itself into the program's cgroups, then `prlimit` with the rlimits, then (when the
    /// launcher is root) `setpriv` to become nobody, then `bwrap`.
    pub fn command<K: AsRef<str>, V: AsRef<str>>(
        &self,
        argv: &[String],
        env: &[(K, V)],
    ) -> tokio::process::Command {
        let mut prelude = String::new();
        if let Some(c) = &self.cgroup {
            for dir in [&c.memory, &c.pids] {
                prelude.push_str(&format!(
                    "echo $$ > '{}' || exit 125; ",
                    dir.join("cgroup.procs").display()
                ));
            }
        }
        prelude.push_str("exec \"$@\"");
        let l = self.limits;
        let mut cmd = tokio::process::Command::new("/bin/sh");
        cmd.arg("-c").arg(prelude).arg("maumau-sandbox");
        cmd.arg(&self.prlimit)
            .arg(format!("--nofile={0}:{0}", l.open_files))
            .arg(format!("--cpu={}:{}", l.cpu_secs, l.cpu_secs + 1));
        if self.cgroup.is_none() {
            cmd.arg(format!("--as={0}:{0}", l.memory_mb * 1024 * 1024))
                .arg(format!("--nproc={0}:{0}", l.pids));
        }
        cmd.arg("--");
        if let Some(setpriv) = &self.setpriv {
            cmd.arg(setpriv).args(setpriv_args());
        }
        cmd.arg(&self.bwrap).args(&self.args).arg("--");
        cmd.args(argv);
        cmd.env_clear();
        for (k, v) in [("PATH", SANDBOX_PATH), ("HOME", "/tmp"), ("TMPDIR", "/tmp")] {
            if !env.iter().any(|(key, _)| key.as_ref() == k) {
                cmd.env(k, v);
            }
        }
        cmd.envs(env.iter().map(|(k, v)| (k.as_ref(), v.as_ref())));
        cmd
    }

    /// The limits the program hit, each as a phrase for its forfeit notice ("it went over its
    /// memory limit (512 MiB) and was killed"); `status` is how it ended (`None`: stopped by the
    /// launcher).
    pub fn verdict(&self, status: Option<ExitStatus>) -> Vec<String> {
        let l = self.limits;
        let mut hit = Vec::new();
        if let Some(c) = &self.cgroup {
            let oom_kills = read_field(&c.memory.join("memory.oom_control"), "oom_kill");
            let failed = read_number(&c.memory.join("memory.failcnt"));
            // Reaching the limit is no news for a program that ended well: the kernel reclaims
            // its page cache there first.
            let ended_well = status.is_some_and(|s| s.success());
            if oom_kills > 0 {
                hit.push(format!(
                    "it went over its memory limit ({} MiB) and was killed",
                    l.memory_mb
                ));
            } else if failed > 0 && !ended_well {
                hit.push(format!("it reached its memory limit ({} MiB)", l.memory_mb));
            }
            let refused = read_field(&c.pids.join("pids.events"), "max");
            if refused > 0 {
                hit.push(format!(
                    "it reached its process limit ({} processes): {refused} new processes refused",
                    l.pids
                ));
            }
        }
        // bwrap exits with 128 + the signal that ended the program.
        const SIGXCPU: i32 = 24;
        let code = status.and_then(|s| s.code());
        let signal = {
            #[cfg(unix)]
            {
                use std::os::unix::process::ExitStatusExt;
                status.and_then(|s| s.signal())
            }
            #[cfg(not(unix))]
            None::<i32>
        };
        if code == Some(128 + SIGXCPU) || signal == Some(SIGXCPU) {
            hit.push(format!(
                "it used up its CPU time ({} s) and was stopped",
                l.cpu_secs
            ));
        }
        hit
    }
}

impl Drop for Jail {
    fn drop(&mut self) {
        for f in &self.forwarders {
            f.abort();
        }
        if let Some(c) = self.cgroup.take() {
            c.remove();
        }
    }
}

/// A program's cgroups (v1 `memory` and `pids`).
#[derive(Debug)]
struct Cgroup {
    memory: PathBuf,
    pids: PathBuf,
}

impl Cgroup {
    /// Creates both cgroups `name` with the limits.
    fn create(memory: &Path, pids: &Path, name: &str, l: Limits) -> std::io::Result<Cgroup> {
        let c = Cgroup {
            memory: memory.join(name),
            pids: pids.join(name),
        };
        let made = (|| {
            std::fs::create_dir(&c.memory)?;
            std::fs::create_dir(&c.pids)?;
            let bytes = (l.memory_mb * 1024 * 1024).to_string();
            std::fs::write(c.memory.join("memory.limit_in_bytes"), &bytes)?;
            // With swap accounting, swap counts too (absent without it: nothing to limit then).
            let _ = std::fs::write(c.memory.join("memory.memsw.limit_in_bytes"), &bytes);
            std::fs::write(c.pids.join("pids.max"), l.pids.to_string())
        })();
        match made {
            Ok(()) => Ok(c),
            Err(e) => {
                // Nothing is in them yet: removed at once, whichever were made.
                let _ = std::fs::remove_dir(&c.pids);
                let _ = std::fs::remove_dir(&c.memory);
                Err(std::io::Error::new(
                    e.kind(),
                    format!("cannot set up its cgroup {name}: {e}"),
                ))
            }
        }
    }

    /// Stops what is left in it and removes it: at once when it is empty (its program was
    /// awaited, the usual case), else retrying for a while in the background (a cgroup is
    /// removable only once its last process is reaped). One that outlives its launcher is
    /// removed by the next [`Sandbox::new`] ([`sweep_stale`]).
    fn remove(self) {
        if remove_cgroups(&[&self.pids, &self.memory]) {
            return;
        }
        std::thread::spawn(move || {
            for _ in 0..100 {
                std::thread::sleep(Duration::from_millis(50));
                if remove_cgroups(&[&self.pids, &self.memory]) {
                    return;
                }
            }
        });
    }
}

/// Kills what is left in the cgroups `dirs` and removes them; true once none is left.
fn remove_cgroups(dirs: &[&Path]) -> bool {
    let mut gone = true;
    for dir in dirs {
        if !dir.exists() {
            continue;
        }
        if let Ok(procs) = std::fs::read_to_string(dir.join("cgroup.procs")) {
            for pid in procs.split_whitespace() {
                let _ = std::process::Command::new("kill")
                    .args(["-s", "KILL", pid])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status();
            }
        }
        gone &= std::fs::remove_dir(dir).is_ok() || !dir.exists();
    }
    gone
}

/// Removes the program cgroups (`maumau-PID-N`) under `root` whose launcher (PID) has exited.
fn sweep_stale(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("maumau-"))
            .and_then(|rest| rest.split_once('-'))
            .map(|(pid, _)| pid)
        else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            remove_cgroups(&[&entry.path()]);
        }
    }
}

/// Accepts connections on `listener` and copies each both ways to `to` (`host:port`, or a Unix
/// socket as `unix:PATH`, when the launcher is itself in a sandbox).
async fn forward(listener: UnixListener, to: String) {
    while let Ok((mut inside, _)) = listener.accept().await {
        let to = to.clone();
        tokio::spawn(async move {
            if let Some(path) = to.strip_prefix("unix:") {
                if let Ok(mut outside) = tokio::net::UnixStream::connect(path).await {
                    let _ = tokio::io::copy_bidirectional(&mut inside, &mut outside).await;
                }
            } else if let Ok(mut outside) = TcpStream::connect(&to).await {
                let _ = outside.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut inside, &mut outside).await;
            }
        });
    }
}

/// The folders a command names, which its sandbox shows read-only: for every word that is the
/// path of an existing file (after quotes and a leading `--flag=` are stripped; relative to the
/// current folder), its folder; for an existing folder, that folder. The system folders, which
/// every sandbox sees, and the kernel's (`/proc`, `/sys`, `/dev`, `/run`) are left out, and so is every folder less than two levels deep (`/`,
/// `/proc`, `/home`, `/tmp`): a program's folder is one of its own, like `/home/me/bot`.
pub fn folders_named(command: &[String]) -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let mut found = Vec::new();
    for word in command.iter().flat_map(|c| c.split_whitespace()) {
        let word = word.trim_matches(|c| c == '\'' || c == '"' || c == ';');
        let word = word.rsplit_once('=').map_or(word, |(_, v)| v);
        if word.is_empty() || !(word.contains('/') || Path::new(word).exists()) {
            continue;
        }
        let path = cwd.join(word);
        let folder = if path.is_dir() {
            path
        } else if path.is_file() {
            match path.parent() {
                Some(p) => p.to_path_buf(),
                None => continue,
            }
        } else {
            continue;
        };
        let folder = normal(&folder);
        let system = SYSTEM.iter().chain(&KERNEL).any(|s| folder.starts_with(s));
        // `/`, `/proc`, `/home`, `/tmp`...: never a program's own folder.
        let deep = folder.components().count() > 2;
        if deep && !system && !found.contains(&folder) {
            found.push(folder);
        }
    }
    found
}

/// `path` without `.` and `..` components (lexically; symlinks are bound as they are named).
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The arguments of `setpriv` that make the rest of the command run as [`SANDBOX_UID`], with no
/// supplementary groups (and so with no capabilities), up to the program.
fn setpriv_args() -> [String; 4] {
    [
        format!("--reuid={SANDBOX_UID}"),
        format!("--regid={SANDBOX_UID}"),
        "--clear-groups".into(),
        "--".into(),
    ]
}

/// Lets every user through `dir` and to its sockets (the sandbox's user connects to them).
fn open_to_all(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))?;
    for entry in std::fs::read_dir(dir)? {
        std::fs::set_permissions(entry?.path(), std::fs::Permissions::from_mode(0o666))?;
    }
    Ok(())
}

/// Checks that the sandbox's user (nobody, when the launcher is root) can read `path`: every
/// folder above it searchable by all users, itself readable (and a folder searchable) by all.
fn readable_by_all(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    let refuse = |what: &Path, need: &str| {
        format!(
            "{} is not {need} by all users, and sandboxed programs run as nobody: \
             `chmod o+rx` it (or give the entrant a folder that is)",
            what.display()
        )
    };
    let meta =
        std::fs::metadata(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mode = meta.permissions().mode();
    let need = if meta.is_dir() { 0o005 } else { 0o004 };
    if mode & need != need {
        return Err(refuse(path, "readable"));
    }
    for above in path.ancestors().skip(1) {
        let Ok(meta) = std::fs::metadata(above) else {
            continue;
        };
        if meta.permissions().mode() & 0o001 == 0 {
            return Err(refuse(above, "searchable"));
        }
    }
    Ok(())
}

/// `program` found on `PATH`.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The cgroup v1 hierarchy `controller` when this process can make cgroups in it.
fn writable_cgroup(controller: &str) -> Option<PathBuf> {
    let root = Path::new(CGROUP_ROOT).join(controller);
    let probe = root.join(format!("maumau-probe-{}", std::process::id()));
    std::fs::create_dir(&probe).ok()?;
    let ok = std::fs::remove_dir(&probe).is_ok();
    ok.then_some(root)
}

/// True when this process runs as root (its real uid, from `/proc/self/status`).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().next().map(|id| id == "0"))
        })
        .unwrap_or(false)
}

/// A file holding one number (0 when absent).
fn read_number(path: &Path) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// The number after `key` in a file of `key value` lines (0 when absent).
fn read_field(path: &Path, key: &str) -> u64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                let (k, v) = l.split_once(' ')?;
                (k == key).then(|| v.trim().parse().ok()).flatten()
            })
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_names_its_folders_but_not_the_system_ones() {
        let dir = tempfile::tempdir().expect("a folder");
        let bot = dir.path().join("bot.sh");
        std::fs::write(&bot, "true").expect("written");
        let words = vec![format!(
            "sh '{}' --log={} /usr/bin/env",
            bot.display(),
            dir.path().display()
        )];
        assert_eq!(folders_named(&words), vec![dir.path().to_path_buf()]);
        let shallow = ["/", "/proc", "/tmp", "/sys/fs", "/proc/1"].map(String::from);
        assert!(folders_named(&shallow).is_empty());
    }

    #[test]
    fn a_route_drops_the_scheme() {
        assert_eq!(Route::new("m", "http://127.0.0.1:5/").to, "127.0.0.1:5");
        assert_eq!(Jail::addr("m.sock"), "unix:/run/maumau/m.sock");
    }
}
