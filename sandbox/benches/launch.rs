//! The cost of the sandbox per launched program: `true` launched N times as the arena launches a
//! program without the sandbox (a plain child process) and in a jail of its own (cgroups made,
//! forwarder socket bound, prlimit, bwrap), in alternating blocks of the same run.
//!
//! Then the forwarder's cost per message: 100-byte round trips to a TCP echo server, directly
//! and through a jail's socket (its forwarder copying both ways), in alternating blocks.
//!
//! `cargo bench -p maumau-sandbox --bench launch` (LAUNCHES=N per block, default 100; 4 blocks of
//! each; PROGRAM="path args" launches that instead of `true`; 4 blocks of 5,000 round trips each
//! way). Prints the milliseconds per launch of each and
//! their ratio, and the microseconds per round trip of each.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

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
    // PROGRAM="path args" launches that instead of `true` (its folders are bound as a launch's).
    let argv: Vec<String> = match std::env::var("PROGRAM") {
        Ok(p) => p.split_whitespace().map(String::from).collect(),
        Err(_) => vec!["true".to_string()],
    };
    let env = [("MAUMAU_TOKEN", "t")];
    let (mut plain, mut jailed) = (Duration::ZERO, Duration::ZERO);
    runtime.block_on(async {
        for _ in 0..4 {
            let start = Instant::now();
            for _ in 0..n {
                let status = tokio::process::Command::new(&argv[0])
                    .args(&argv[1..])
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
    let (direct, forwarded) = runtime.block_on(round_trips(&sandbox))?;
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
    let us = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(4 * TRIPS);
    println!(
        "{} round trips each: direct {:.1} µs, through the forwarder {:.1} µs, {:.1} µs more",
        4 * TRIPS,
        us(direct),
        us(forwarded),
        us(forwarded) - us(direct)
    );
    Ok(())
}

/// Round trips per block.
const TRIPS: u32 = 5_000;

/// The time of 4 × [`TRIPS`] round trips to a TCP echo server directly and through a jail's
/// forwarder.
async fn round_trips(sandbox: &Sandbox) -> std::io::Result<(Duration, Duration)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let echo = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = echo.local_addr()?.to_string();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = echo.accept().await {
            let _ = s.set_nodelay(true);
            tokio::spawn(async move {
                let mut buf = [0u8; 100];
                while s.read_exact(&mut buf).await.is_ok() {
                    if s.write_all(&buf).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    let jail = sandbox.jail(&[Route::new("echo.sock", &addr)], &[])?;
    let socket = jail.socket_path("echo.sock");
    let mut tcp = tokio::net::TcpStream::connect(&addr).await?;
    tcp.set_nodelay(true)?;
    let mut unix = tokio::net::UnixStream::connect(&socket).await?;
    let (mut direct, mut forwarded) = (Duration::ZERO, Duration::ZERO);
    let mut buf = [7u8; 100];
    for _ in 0..4 {
        let start = Instant::now();
        for _ in 0..TRIPS {
            tcp.write_all(&buf).await?;
            tcp.read_exact(&mut buf).await?;
        }
        direct += start.elapsed();
        let start = Instant::now();
        for _ in 0..TRIPS {
            unix.write_all(&buf).await?;
            unix.read_exact(&mut buf).await?;
        }
        forwarded += start.elapsed();
    }
    Ok((direct, forwarded))
}
