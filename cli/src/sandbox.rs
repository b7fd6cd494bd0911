//! `--sandbox` and its limits, the same flags for every command that launches programs
//! (`maumau tournament`, `maumau check-bot`, `maumau bot --ladder`): they build the
//! [`maumau_sandbox::Sandbox`] those programs run in, or say why this machine cannot.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use maumau_sandbox::{Limits, Options, Sandbox};

/// The sandbox flags.
#[derive(clap::Args, Clone, Debug, Default)]
pub(crate) struct SandboxArgs {
    /// Run every launched program in a sandbox of its own (bubblewrap): no other process, no
    /// network but its way to the server (MAUMAU_ADDR becomes unix:/run/maumau/maumau.sock), a
    /// read-only view of the system and of the folders its command names, a private /tmp, and
    /// the limits below. Refused, with the reason, where the machine cannot sandbox.
    #[arg(long)]
    pub(crate) sandbox: bool,
    /// Memory of each sandboxed program, MiB.
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().memory_mb)]
    sandbox_memory_mb: u64,
    /// Processes and threads of each sandboxed program at once.
    #[arg(long, value_name = "N", default_value_t = Limits::default().pids)]
    sandbox_pids: u32,
    /// Open files per process of a sandboxed program.
    #[arg(long, value_name = "N", default_value_t = Limits::default().open_files)]
    sandbox_open_files: u32,
    /// CPU seconds per process of a sandboxed program (a lobby program's is for the whole event).
    #[arg(long, value_name = "SECS", default_value_t = Limits::default().cpu_secs)]
    sandbox_cpu_secs: u64,
    /// Size of each sandboxed program's private /tmp, MiB.
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().tmp_mb)]
    sandbox_tmp_mb: u64,
    /// One more folder every sandboxed program sees read-only (an interpreter's virtual
    /// environment, say); repeat for more.
    #[arg(long, value_name = "PATH")]
    sandbox_bind: Vec<PathBuf>,
}

impl SandboxArgs {
    /// The sandbox, when `--sandbox` is given; `hidden` are paths no program may see (the output
    /// folder), even inside a folder it sees. An error says why the machine cannot sandbox.
    pub(crate) fn build(
        &self,
        hidden: &[&Path],
    ) -> Result<Option<Arc<Sandbox>>, Box<dyn std::error::Error>> {
        match self.settings() {
            Some(settings) => Ok(Some(settings.build(hidden)?)),
            None => Ok(None),
        }
    }

    /// What `--sandbox` and its limits ask for, as an event on several machines records it for
    /// its workers; `None` without `--sandbox`.
    pub(crate) fn settings(&self) -> Option<SandboxSettings> {
        self.sandbox.then(|| SandboxSettings {
            memory_mb: self.sandbox_memory_mb.max(1),
            pids: self.sandbox_pids.max(1),
            open_files: self.sandbox_open_files.max(16),
            cpu_secs: self.sandbox_cpu_secs.max(1),
            tmp_mb: self.sandbox_tmp_mb.max(1),
            bind: self.sandbox_bind.clone(),
        })
    }
}

/// The sandbox's limits and extra folders: what `--sandbox` and its flags give, and what a
/// tournament on several machines records in its event so that every worker runs the programs
/// in the same sandbox (`--sandbox-bind` folders as given: relative ones are found from each
/// worker's folder, as the programs' commands are).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct SandboxSettings {
    /// Memory of each program, MiB.
    pub(crate) memory_mb: u64,
    /// Processes and threads of each program at once.
    pub(crate) pids: u32,
    /// Open files per process.
    pub(crate) open_files: u32,
    /// CPU seconds per process.
    pub(crate) cpu_secs: u64,
    /// Size of each program's private /tmp, MiB.
    pub(crate) tmp_mb: u64,
    /// Folders every program sees read-only.
    pub(crate) bind: Vec<PathBuf>,
}

impl SandboxSettings {
    /// The sandbox (see [`SandboxArgs::build`]), or why this machine cannot make it.
    pub(crate) fn build(
        &self,
        hidden: &[&Path],
    ) -> Result<Arc<Sandbox>, Box<dyn std::error::Error>> {
        let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let options = Options {
            limits: Limits {
                memory_mb: self.memory_mb.max(1),
                pids: self.pids.max(1),
                open_files: self.open_files.max(16),
                cpu_secs: self.cpu_secs.max(1),
                tmp_mb: self.tmp_mb.max(1),
            },
            read_only: self.bind.iter().map(|p| absolute(p)).collect(),
            hidden: hidden.iter().map(|p| absolute(p)).collect(),
        };
        let sandbox = Sandbox::new(options)?;
        let l = sandbox.limits();
        eprintln!(
            "maumau: every launched program runs in a sandbox: {} MiB, {} processes, {} open \
             files, {} CPU s, a {} MiB /tmp; limits through {}",
            l.memory_mb,
            l.pids,
            l.open_files,
            l.cpu_secs,
            l.tmp_mb,
            sandbox.control()
        );
        Ok(Arc::new(sandbox))
    }
}
