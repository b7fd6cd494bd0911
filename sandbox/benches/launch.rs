//! The cost of the sandbox per launched program: `true` launched N times as the arena launches a
//! program without the sandbox (a plain child process) and in a jail of its own (cgroups made,
//! forwarder socket bound, prlimit, bwrap), in alternating blocks of the same run.
//!
//! `cargo bench -p maumau-sandbox --bench launch` (LAUNCHES=N per block, default 100; 4 blocks of
//! each). Prints the milliseconds per launch of each and their ratio.

use std::time::{Duration, Instant};

use maumau_sandbox::{Options, Route, Sandbox};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u32 = std::env::var("LAUNCHES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let sandbox = Sandbox::new(Options::default())?;
    let argv = vec!["true".to_string()];
    let env = [("MAUMAU_TOKEN", "t")];
    let (mut plain, mut jailed) = (Duration::ZERO, Duration::ZERO);
    runtime.block_on(async {
        for _ in 0..4 {
            let start = Instant::now();
            for _ in 0..n {
                let status = tokio::process::Command::new("true")
                    .env("MAUMAU_TOKEN", "t")
                    .status()
                    .await?;
                assert!(status.success());
            }
            plain += start.elapsed();
            let start = Instant::now();
            for _ in 0..n {
                let jail = sandbox.jail(&[Route::new("maumau.sock", "127.0.0.1:9")], &argv)?;
                let status = jail.command(&argv, &env).status().await?;
                assert!(status.success(), "{status}");
            }
            jailed += start.elapsed();
        }
        Ok::<(), std::io::Error>(())
    })?;
    let per = |d: Duration| d.as_secs_f64() * 1000.0 / f64::from(4 * n);
    println!(
        "{} launches each: plain {:.2} ms per launch, sandboxed {:.2} ms per launch, ratio {:.1}, \
         cost {:.2} ms per launch",
        4 * n,
        per(plain),
        per(jailed),
        per(jailed) / per(plain),
        per(jailed) - per(plain)
    );
    Ok(())
}
