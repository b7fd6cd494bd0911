//! `maumau-loadgen`: load for the Mau Mau Arena gRPC server, measured against a bare tonic echo.
//!
//! For each stream count (default 16 and 256) and each way of connecting (all streams over one
//! shared HTTP/2 connection, or one connection per stream) it:
//!
//! 1. starts `maumau serve` as a child process on 127.0.0.1 with a temporary data directory and
//!    plays `streams / 4` concurrent 4-seat classic matches (calls enforced, every seat a remote
//!    bot on its own Play stream, answering each prompt at once), starting a new match whenever
//!    one finishes, for `--duration` seconds after a warm-up; once per event delivery
//!    (`--delivery`: the events batched with the next prompt, the SDKs' default; each step's
//!    events in one message, their opt-out; each event as its own message, the old default)
//!    and per server thread count (`--server-threads`);
//! 2. starts this binary as a bare tonic echo server (`echo-server`, hidden) and runs the same
//!    number of bidirectional ping-pong streams (100-byte payload) for as long.
//!
//! Both clients do the same work per message: bots decode only what they act on (`--decode full`
//! decodes every message into the `maumau.v1` types), and every stream, echo or game, watches for
//! stalls with one timer rather than a timeout per message. The game server's data directory is a
//! temporary directory (`--data-parent /dev/shm` keeps a slow disk's file creation, one file per
//! finished match, out of the server's CPU time).
//!
//! It reads each server's CPU time (`/proc/PID/stat`) and resident memory (`/proc/PID/status`)
//! and prints decisions per second, decision latency percentiles, server CPU per decision and per
//! match, server RSS, echo round trips per second, and the ratio decisions/s ÷ echo round trips/s.
//!
//! `soak` plays 20,000 short matches against one server and prints its memory per finished
//! match, then its restart time and memory on that history.
//!
//! `workers` plays one tournament with 1, 2, 3... machines (`maumau tournament --store` and
//! `maumau worker`) and prints games per second and the store's statements per game
//! (`workers.rs`).
//!
//! `--hold N` instead creates N matches that nobody joins and reports the server's memory per
//! open match. `--abuse N` runs honest matches quietly and then beside N connections of which a
//! quarter misbehave, and prints the p99 ratio and the server's memory (`abuse.rs`).
//!
//! ```sh
//! CARGO_TARGET_DIR=/tmp/target-loadgen cargo build --release -p maumau-cli -p maumau-loadgen
//! /tmp/target-loadgen/release/maumau-loadgen                 # 16 and 256 streams, both ways
//! /tmp/target-loadgen/release/maumau-loadgen --hold 10000    # memory per open match
//! /tmp/target-loadgen/release/maumau-loadgen --abuse 1000 --streams 64   # honest p99 under abuse
//! ```

mod abuse;
mod echo;
mod game;
mod hold;
mod ladder;
mod lean;
mod procs;
mod soak;
mod stats;
mod workers;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use tonic::transport::{Channel, Endpoint};

use crate::game::{Decode, Delivery, Policy, SEATS};
use crate::procs::{ChildServer, Counters};
use crate::stats::{Summary, Window};

/// Load generator for the Mau Mau Arena server: concurrent matches against a bare gRPC echo.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Cmd>,
    #[command(flatten)]
    bench: BenchArgs,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve the bare echo baseline (started by the load generator itself).
    #[command(hide = true)]
    EchoServer {
        /// Loopback address to listen on.
        #[arg(long, default_value = "127.0.0.1:0")]
        listen: SocketAddr,
    },
    /// The ladder's rated matches per hour against the same matches created directly.
    Ladder(ladder::LadderArgs),
    /// Many short matches against one server: its memory per finished match, then its restart
    /// time and memory on that history.
    Soak(soak::SoakArgs),
    /// A tournament on several machines (`maumau tournament --store`, `maumau worker`): games
    /// per second with 1, 2, 3... machines, and the store's statements per game.
    Workers(workers::WorkersArgs),
    /// Open the `--abuse` crowd against a server and hold it until killed (started by the load
    /// generator itself, as a process of its own at the lowest priority).
    #[command(hide = true)]
    Crowd {
        /// The server's `http://` loopback URL.
        #[arg(long)]
        url: String,
        /// Connections in the crowd.
        #[arg(long)]
        connections: usize,
        /// Spectator tokens of the matches slow readers watch.
        #[arg(long, value_delimiter = ',')]
        watch: Vec<String>,
        /// The abusive kinds present.
        #[arg(long, value_delimiter = ',')]
        abusers: Vec<abuse::Abuser>,
    },
}

/// Which event deliveries the game load runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Deliveries {
    /// EVENT_DELIVERY_AS_THEY_HAPPEN: one message per event.
    AsTheyHappen,
    /// EVENT_DELIVERY_WITH_PROMPT: the events in one batch with the next prompt.
    WithPrompt,
    /// EVENT_DELIVERY_PER_STEP: each step's answer, events and prompt in one batch.
    PerStep,
    /// The two the SDKs ask for, one after the other: with-prompt (their default) and
    /// per-step (their opt-out).
    Both,
    /// All three, one after the other.
    All,
}

/// How the streams reach the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Connections {
    /// All streams over one HTTP/2 connection.
    Shared,
    /// One connection per stream.
    Separate,
    /// Both, one after the other.
    Both,
}

#[derive(clap::Args)]
struct BenchArgs {
    /// Seconds measured per run (after the warm-up).
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Seconds of load before measuring starts.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Stream counts to run, comma-separated; each a multiple of 4 (4 seats per match).
    #[arg(long, value_delimiter = ',', default_value = "16,256")]
    streams: Vec<usize>,
    /// One shared HTTP/2 connection, one connection per stream, or both.
    #[arg(long, value_enum, default_value_t = Connections::Both)]
    connections: Connections,
    /// How bots choose among the legal actions.
    #[arg(long, value_enum, default_value_t = Policy::Random)]
    policy: Policy,
    /// How much of the server's messages bots decode: what they act on, or everything.
    #[arg(long, value_enum, default_value_t = Decode::Lean)]
    decode: Decode,
    /// How bots ask for their events: batched with the next prompt, one message per step,
    /// each as its own message; both (the first two) or all (one game run each).
    #[arg(long, value_enum, default_value_t = Deliveries::Both)]
    delivery: Deliveries,
    /// The game server's `--worker-threads`, comma-separated for one game run each; 0 = its
    /// default (one per CPU), 1 = a current-thread runtime.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    server_threads: Vec<u16>,
    /// Seed of the deals and of the bots' choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The `maumau` binary [default: `maumau` next to this executable].
    #[arg(long)]
    server_bin: Option<PathBuf>,
    /// Actions per second a Play stream and a seat may send (the server's `actions_per_second`
    /// and `calls_per_second`; their default,
    /// 1000, can throttle a bot that answers at once when few matches run).
    #[arg(long, default_value_t = 1_000_000)]
    actions_per_second: u32,
    /// RUST_LOG for the game server (its default, `info`, logs two lines per match).
    #[arg(long)]
    server_log: Option<String>,
    /// Where the game server's temporary data directory is made [default: the system's
    /// temporary directory]. The server writes one file per finished match; on a slow disk
    /// (creating a file costs about 1 ms of CPU on some ext4 volumes) that is a large share of
    /// its work per decision, so `/dev/shm` isolates the server's own work.
    #[arg(long, value_name = "DIR")]
    data_parent: Option<PathBuf>,
    /// Worker threads of the load generator's runtime [default: one per CPU].
    #[arg(long)]
    client_threads: Option<usize>,
    /// Times the game runs and the echo runs alternate for each stream count and connection
    /// layout. The machine's speed drifts (up to 2× within an hour on a shared machine): each
    /// round's ratio pairs runs a few seconds apart, and the median over rounds is printed.
    #[arg(long, default_value_t = 1)]
    rounds: usize,
    /// Also run the echo with streams/4 streams: as many round trips in flight as the game has
    /// decisions in flight (one per match), and print the game's ratio to it.
    #[arg(long)]
    same_in_flight: bool,
    /// Skip the echo baseline.
    #[arg(long)]
    no_echo: bool,
    /// Instruction counts of the measured window: when each game run's window opens and
    /// closes, ask callgrind (`callgrind_control --dump`) to dump the counts of the server and of
    /// this process, for whichever of them runs under `valgrind --tool=callgrind` (the server
    /// does when `--server-bin` is a script that execs it so). The dump made when the window
    /// closes holds the window's instructions, to divide by the decisions printed.
    #[arg(long)]
    callgrind: bool,
    /// Skip the game load (echo only).
    #[arg(long)]
    no_game: bool,
    /// `/proc/loadavg` when the run started (filled in by the program).
    #[arg(skip)]
    loadavg_before: String,
    /// Instead of the load: create N matches that nobody joins and report the server's memory
    /// per open match.
    #[arg(long, num_args = 0..=1, default_missing_value = "10000", value_name = "N")]
    hold: Option<usize>,
    /// Instead of the load: run honest matches (the first `--streams` count, one connection per
    /// stream) quietly and then beside N more connections of which a quarter misbehave, and print
    /// the honest p99 decision latency of both runs as a ratio and the server's memory. The
    /// server runs with its default limits.
    #[arg(long, num_args = 0..=1, default_missing_value = "1000", value_name = "N")]
    abuse: Option<usize>,
    /// With --abuse: the kinds of abusive connections (the abusive quarter is split evenly among
    /// them), to find which one costs the honest matches.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "silent,slow-reader,flood,pending,reset"
    )]
    abusers: Vec<abuse::Abuser>,
}

/// Opens `n` HTTP/2 connections to `url` (loopback only).
pub(crate) async fn connect(url: &str, n: usize) -> Result<Vec<Channel>, String> {
    let endpoint = Endpoint::from_shared(url.to_string())
        .map_err(|e| format!("bad url {url}: {e}"))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true);
    let loopback = endpoint
        .uri()
        .host()
        .and_then(|h| h.trim_matches(['[', ']']).parse::<std::net::IpAddr>().ok())
        .is_some_and(|ip| ip.is_loopback());
    if !loopback {
        return Err(format!("{url} is not a loopback address"));
    }
    let mut channels = Vec::with_capacity(n);
    for _ in 0..n {
        channels.push(
            endpoint
                .connect()
                .await
                .map_err(|e| format!("cannot connect to {url}: {e}"))?,
        );
    }
    Ok(channels)
}

/// The `maumau` binary: `--server-bin`, or next to this executable.
fn server_bin(given: Option<&PathBuf>) -> Result<PathBuf, String> {
    if let Some(p) = given {
        return Ok(p.clone());
    }
    let me = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let bin = me.with_file_name("maumau");
    if bin.is_file() {
        Ok(bin)
    } else {
        Err(format!(
            "no `maumau` binary at {}: build it (cargo build --release -p maumau-cli -p \
             maumau-loadgen, same target dir) or pass --server-bin",
            bin.display()
        ))
    }
}

/// Starts `maumau serve` on 127.0.0.1 with a temporary data directory and `config` (TOML).
fn start_game_server(
    bin: &PathBuf,
    config: &str,
    log: Option<&str>,
    parent: Option<&PathBuf>,
    threads: u16,
) -> Result<ChildServer, String> {
    let mut builder = tempfile::Builder::new();
    builder.prefix("maumau-loadgen-");
    let dir = match parent {
        Some(p) => builder.tempdir_in(p),
        None => builder.tempdir(),
    }
    .map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let config_path = dir.path().join("maumau.toml");
    std::fs::write(&config_path, config).map_err(|e| format!("cannot write the config: {e}"))?;
    let data = dir.path().join("data");
    let mut cmd = Command::new(bin);
    cmd.arg("serve")
        .arg("--listen")
        .arg("127.0.0.1:0")
        .arg("--data-dir")
        .arg(&data)
        .arg("--config")
        .arg(&config_path);
    if threads > 0 {
        cmd.arg("--worker-threads").arg(threads.to_string());
    }
    if let Some(l) = log {
        cmd.env("RUST_LOG", l);
    }
    let server = ChildServer::spawn(cmd, "game server", Some(dir), false)?;
    eprintln!(
        "loadgen: game server pid {} on {}",
        server.pid(),
        server.addr
    );
    Ok(server)
}

/// Starts this binary as the echo server.
fn start_echo_server() -> Result<ChildServer, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let mut cmd = Command::new(me);
    cmd.args(["echo-server", "--listen", "127.0.0.1:0"]);
    let server = ChildServer::spawn(cmd, "echo server", None, true)?;
    eprintln!(
        "loadgen: echo server pid {} on {}",
        server.pid(),
        server.addr
    );
    Ok(server)
}

/// One measured run.
struct Row {
    kind: &'static str,
    /// Which round of `--rounds` (from 0).
    round: usize,
    /// The game's event delivery (none for the echo).
    delivery: Option<Delivery>,
    /// The game server's worker threads (0: its default).
    threads: u16,
    streams: usize,
    shared: bool,
    ops: u64,
    seconds: f64,
    latency: Summary,
    server: Counters,
    client: Counters,
    rss_start_kb: u64,
    rss_kb: u64,
    peak_kb: u64,
    game: Option<game::GameLoad>,
    errors: u64,
    first_error: Option<String>,
}

impl Row {
    /// What ran: `echo`, or `game` with its delivery (`each` event a message, or `batch`ed with
    /// the prompt) and, when set, the server's threads.
    fn label(&self) -> String {
        let mut l = match self.delivery {
            None => self.kind.to_string(),
            Some(Delivery::AsTheyHappen) => format!("{}/each", self.kind),
            Some(Delivery::WithPrompt) => format!("{}/batch", self.kind),
            Some(Delivery::PerStep) => format!("{}/step", self.kind),
        };
        if self.threads > 0 {
            l.push_str(&format!("/t{}", self.threads));
        }
        l
    }

    fn rate(&self) -> f64 {
        self.ops as f64 / self.seconds
    }

    fn per_op(&self, v: f64) -> f64 {
        v / self.ops as f64
    }

    fn server_us_per_op(&self) -> f64 {
        self.per_op(self.server.cpu * 1e6)
    }

    fn client_us_per_op(&self) -> f64 {
        self.per_op(self.client.cpu * 1e6)
    }

    /// The server's and this process's share of the CPU time the whole machine spent over the
    /// window: near 1 when nothing else ran (see `maumau_benchkit::machine_verdict`).
    fn cpu_share(&self) -> f64 {
        (self.server.cpu + self.client.cpu) / self.client.machine
    }
}

/// The counters of the server and of this process over the window.
/// Also returns the server's RSS when the window opens.
/// With `callgrind`, has callgrind dump the server's and this process's counts as the window
/// opens and closes (see `--callgrind`).
async fn window_counters(
    server: &ChildServer,
    window: Window,
    callgrind: bool,
) -> (Counters, Counters, u64) {
    tokio::time::sleep_until(window.start).await;
    if callgrind {
        callgrind_dump(server.pid(), "window-opens").await;
    }
    let (s0, c0, rss) = (server.counters(), Counters::read("self"), server.rss_kb());
    tokio::time::sleep_until(window.end).await;
    let (s1, c1) = (server.counters(), Counters::read("self"));
    if callgrind {
        callgrind_dump(server.pid(), "window-closes").await;
    }
    (s1.since(&s0), c1.since(&c0), rss)
}

/// `callgrind_control --dump=LABEL` for the server and for this process; a process not under
/// callgrind is left alone (callgrind_control finds nothing to dump).
async fn callgrind_dump(server: &str, label: &'static str) {
    let pids = [server.to_string(), std::process::id().to_string()];
    let done = tokio::task::spawn_blocking(move || {
        for pid in pids {
            let out = Command::new("callgrind_control")
                .arg(format!("--dump={label}"))
                .arg(pid)
                .output();
            if let Err(e) = out {
                eprintln!("loadgen: callgrind_control: {e}");
            }
        }
    });
    let _ = done.await;
}

fn conns(shared: bool) -> &'static str {
    if shared { "shared" } else { "separate" }
}

async fn run_game(
    args: &BenchArgs,
    bin: &PathBuf,
    streams: usize,
    shared: bool,
    delivery: Delivery,
    threads: u16,
) -> Result<Row, String> {
    let config = format!(
        "actions_per_second = {0}\ncalls_per_second = {0}\nmax_open_matches = {1}\n",
        args.actions_per_second,
        streams * 4 + 100
    );
    let server = start_game_server(
        bin,
        &config,
        args.server_log.as_deref(),
        args.data_parent.as_ref(),
        threads,
    )?;
    let window = Window::after(
        Duration::from_secs_f64(args.warmup),
        Duration::from_secs_f64(args.duration),
    );
    let url = server.url();
    let (load, (server_counters, client_counters, rss_start_kb)) = tokio::join!(
        game::load(
            &url,
            streams,
            shared,
            args.policy,
            args.decode,
            delivery,
            args.seed,
            window
        ),
        window_counters(&server, window, args.callgrind)
    );
    let rss_kb = server.rss_kb();
    let peak_kb = server.peak_rss_kb();
    let mut load = match load {
        Ok(l) => l,
        Err(e) => {
            let e = format!("{e}\nserver log:\n{}", server.log_tail());
            server.stop();
            return Err(e);
        }
    };
    if args.callgrind {
        eprintln!(
            "loadgen: {} decisions in the window (server pid {})",
            load.decisions,
            server.pid()
        );
    }
    server.stop();
    let latency = std::mem::take(&mut load.latencies).summary();
    Ok(Row {
        kind: "game",
        round: 0,
        delivery: Some(delivery),
        threads,
        streams,
        shared,
        ops: load.decisions,
        seconds: window.seconds(),
        latency,
        server: server_counters,
        client: client_counters,
        rss_start_kb,
        rss_kb,
        peak_kb,
        errors: load.errors,
        first_error: load.first_error.clone(),
        game: Some(load),
    })
}

async fn run_echo(args: &BenchArgs, streams: usize, shared: bool) -> Result<Row, String> {
    let server = start_echo_server()?;
    let window = Window::after(
        Duration::from_secs_f64(args.warmup),
        Duration::from_secs_f64(args.duration),
    );
    let url = server.url();
    let (load, (server_counters, client_counters, rss_start_kb)) = tokio::join!(
        echo::load(&url, streams, shared, window),
        window_counters(&server, window, args.callgrind)
    );
    let rss_kb = server.rss_kb();
    let peak_kb = server.peak_rss_kb();
    server.stop();
    let load = load?;
    Ok(Row {
        kind: "echo",
        round: 0,
        delivery: None,
        threads: 0,
        streams,
        shared,
        ops: load.round_trips,
        seconds: window.seconds(),
        latency: load.latencies.summary(),
        server: server_counters,
        client: client_counters,
        rss_start_kb,
        rss_kb,
        peak_kb,
        game: None,
        errors: load.errors,
        first_error: load.first_error,
    })
}

fn mb(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

fn print_rows(args: &BenchArgs, rows: &[Row], threads: usize) {
    // The run's name, with its round when there are several.
    let name = |r: &Row| {
        if args.rounds > 1 {
            format!("{} #{}", r.label(), r.round + 1)
        } else {
            r.label()
        }
    };
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!();
    println!(
        "== {:.1} s measured after {:.1} s warm-up; {cpus} CPUs; client runtime {threads} threads; \
         bots: {:?}, decoding {:?}; echo payload {} B ==",
        args.duration,
        args.warmup,
        args.policy,
        args.decode,
        echo::PAYLOAD_BYTES
    );
    println!("load average before: {}", args.loadavg_before.trim());
    println!("load average after:  {}", loadavg().trim());
    println!();
    println!(
        "-- Throughput and latency (game: ops = accepted decisions, latency = prompt received → next prompt or accept, not measured for batch: its accept comes with the seat's next prompt; echo: round trips)"
    );
    println!(
        "{:<13} {:>7} {:<8} {:>10} {:>8} {:>8} {:>9} {:>6}",
        "load", "streams", "conns", "ops/s", "p50 µs", "p99 µs", "max µs", "errors"
    );
    for r in rows {
        println!(
            "{:<13} {:>7} {:<8} {:>10.0} {:>8.0} {:>8.0} {:>9.0} {:>6}",
            name(r),
            r.streams,
            conns(r.shared),
            r.rate(),
            r.latency.p50_us,
            r.latency.p99_us,
            r.latency.max_us,
            r.errors
        );
    }
    println!();
    println!("-- CPU and memory (per op; srv = the server child process, client = this process)");
    println!(
        "{:<13} {:>7} {:<8} {:>10} {:>9} {:>13} {:>12} {:>11} {:>10} {:>8} {:>8}",
        "load",
        "streams",
        "conns",
        "srv µs/op",
        "srv cores",
        "client µs/op",
        "client cores",
        "srv wr/op",
        "srv cs/op",
        "RSS MB",
        "peak MB"
    );
    for r in rows {
        println!(
            "{:<13} {:>7} {:<8} {:>10.1} {:>9.2} {:>13.1} {:>12.2} {:>11.2} {:>10.2} {:>8.1} {:>8.1}",
            name(r),
            r.streams,
            conns(r.shared),
            r.server_us_per_op(),
            r.server.cpu / r.seconds,
            r.client_us_per_op(),
            r.client.cpu / r.seconds,
            r.per_op(r.server.writes as f64),
            r.per_op(r.server.switches as f64),
            mb(r.rss_kb),
            mb(r.peak_kb)
        );
    }
    let games: Vec<&Row> = rows.iter().filter(|r| r.game.is_some()).collect();
    if !games.is_empty() {
        println!();
        println!(
            "-- Matches (4 seats, classic, calls enforced; `RSS KB/m done` = server RSS growth over \
             the window per match finished in it: finished matches live on disk, so this stays small)"
        );
        println!(
            "{:<13} {:>7} {:<8} {:>8} {:>10} {:>12} {:>13} {:>10} {:>11} {:>15} {:>9} {:>8}",
            "load",
            "streams",
            "conns",
            "matches",
            "matches/s",
            "decisions/m",
            "srv CPU ms/m",
            "msgs/dec",
            "events/dec",
            "RSS KB/m done",
            "rejected",
            "stalled"
        );
        for r in games {
            let Some(g) = &r.game else { continue };
            let per_match = if g.finished_total > 0 {
                g.finished_decisions as f64 / g.finished_total as f64
            } else {
                f64::NAN
            };
            println!(
                "{:<13} {:>7} {:<8} {:>8} {:>10.1} {:>12.1} {:>13.2} {:>10.2} {:>11.2} {:>15.1} {:>9} {:>8}",
                name(r),
                r.streams,
                conns(r.shared),
                g.matches_finished,
                g.matches_finished as f64 / r.seconds,
                per_match,
                r.server_us_per_op() * per_match / 1000.0,
                r.per_op(g.messages as f64),
                r.per_op(g.events as f64),
                (r.rss_kb as f64 - r.rss_start_kb as f64) / g.matches_finished as f64,
                g.rejections,
                g.stalls
            );
        }
    }
    // The echo run of `g`'s round and layout with `streams` streams.
    let echo = |g: &Row, streams: usize| {
        rows.iter().find(|e| {
            e.kind == "echo" && e.streams == streams && e.shared == g.shared && e.round == g.round
        })
    };
    let mut ratios = Vec::new();
    for g in rows.iter().filter(|r| r.kind == "game") {
        if let Some(e) = echo(g, g.streams) {
            ratios.push((g, e, echo(g, g.streams / SEATS)));
        }
    }
    if !ratios.is_empty() {
        println!();
        println!(
            "-- Decisions/s ÷ echo round trips/s (target ≥ {THROUGHPUT_GOAL}) and server CPU per \
             decision ÷ the echo server's per round trip (`srv CPU ×echo`, target ≤ {CPU_GOAL}: \
             it holds under load, where the throughput ratio does not); `CPU-bound` = echo CPU/op \
             ÷ game CPU/op, server + client, the ratio expected when both runs saturate the CPUs; \
             `÷ same in flight` = decisions/s ÷ the echo with streams/4 streams (--same-in-flight); \
             `CPU share` = the lower of the two runs' shares of the machine's busy CPU (server + \
             client ÷ every process's): both targets are judged only from {}",
            maumau_benchkit::MIN_SHARE
        );
        println!(
            "{:<13} {:>7} {:<8} {:>11} {:>11} {:>7} {:>8} {:>14} {:>8} {:>9} {:>10} {:>17}",
            "load",
            "streams",
            "conns",
            "decisions/s",
            "echo rt/s",
            "ratio",
            "target",
            "srv CPU ×echo",
            "target",
            "CPU share",
            "CPU-bound",
            "÷ same in flight"
        );
        for &(g, e, same) in &ratios {
            let ratio = g.rate() / e.rate();
            let share = g.cpu_share().min(e.cpu_share());
            let cpu_bound = (e.server_us_per_op() + e.client_us_per_op())
                / (g.server_us_per_op() + g.client_us_per_op());
            let cpu = server_cpu_ratio(g, e);
            println!(
                "{:<13} {:>7} {:<8} {:>11.0} {:>11.0} {:>7.3} {:>8} {:>14.2} {:>8} {:>9.2} {:>10.3} {:>17}",
                name(g),
                g.streams,
                conns(g.shared),
                g.rate(),
                e.rate(),
                ratio,
                maumau_benchkit::machine_mark(ratio >= THROUGHPUT_GOAL, share),
                cpu,
                maumau_benchkit::machine_mark(cpu <= CPU_GOAL, share),
                share,
                cpu_bound,
                same.map_or("-".to_string(), |s| format!("{:.3}", g.rate() / s.rate()))
            );
        }
        if args.rounds > 1 {
            print_medians(&ratios);
        }
        print_verdicts(&ratios);
    }
    for r in rows.iter().filter(|r| r.errors > 0) {
        println!(
            "note: {} {} {}: {} errors, first: {}",
            name(r),
            r.streams,
            conns(r.shared),
            r.errors,
            r.first_error.as_deref().unwrap_or("?")
        );
    }
}

/// The least decisions/s ÷ echo round trips/s aimed at.
const THROUGHPUT_GOAL: f64 = 0.5;
/// The most server CPU per decision ÷ the echo server's CPU per round trip aimed at (under the
/// default delivery at 16 streams on one connection).
const CPU_GOAL: f64 = 2.0;

/// Server CPU per decision of game run `g` ÷ the echo server's CPU per round trip of echo run
/// `e`: what a decision costs the server against what a round trip costs a bare tonic server.
fn server_cpu_ratio(g: &Row, e: &Row) -> f64 {
    g.server_us_per_op() / e.server_us_per_op()
}

/// The rounds of one game run (same label, streams and layout), each paired with its round's
/// echo runs.
struct Rounds {
    label: String,
    streams: usize,
    shared: bool,
    /// Decisions/s ÷ echo round trips/s, per round.
    throughput: Vec<f64>,
    /// [`server_cpu_ratio`], per round.
    cpu: Vec<f64>,
    /// The lower of the game's and the echo's CPU share, per round.
    shares: Vec<f64>,
    /// Decisions/s ÷ the echo with as many round trips in flight, per round that ran it.
    same: Vec<f64>,
}

/// The pairs of `ratios` grouped by game run, in the order they first appear.
fn rounds(ratios: &[(&Row, &Row, Option<&Row>)]) -> Vec<Rounds> {
    let mut out: Vec<Rounds> = Vec::new();
    for &(g, e, same) in ratios {
        let (label, streams, shared) = (g.label(), g.streams, g.shared);
        let i = match out
            .iter()
            .position(|r| r.label == label && r.streams == streams && r.shared == shared)
        {
            Some(i) => i,
            None => {
                out.push(Rounds {
                    label,
                    streams,
                    shared,
                    throughput: Vec::new(),
                    cpu: Vec::new(),
                    shares: Vec::new(),
                    same: Vec::new(),
                });
                out.len() - 1
            }
        };
        let r = &mut out[i];
        r.throughput.push(g.rate() / e.rate());
        r.cpu.push(server_cpu_ratio(g, e));
        r.shares.push(g.cpu_share().min(e.cpu_share()));
        r.same.extend(same.map(|s| g.rate() / s.rate()));
    }
    out
}

/// Each value to three decimals, comma-separated.
fn listed(values: &[f64]) -> String {
    values
        .iter()
        .map(|r| format!("{r:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The median ratios over the rounds of each game run (same label, streams and layout).
fn print_medians(ratios: &[(&Row, &Row, Option<&Row>)]) {
    println!();
    println!(
        "-- Median over the rounds of decisions/s ÷ echo round trips/s (target ≥ {THROUGHPUT_GOAL}), \
         of server CPU per decision ÷ the echo server's per round trip (target ≤ {CPU_GOAL}), and \
         of decisions/s ÷ the echo with as many round trips in flight (--same-in-flight)"
    );
    println!(
        "{:<13} {:>7} {:<8} {:>7} {:>8} {:>14} {:>8} {:>9} {:>17}  rounds (ratio; srv CPU ×echo)",
        "load",
        "streams",
        "conns",
        "median",
        "target",
        "srv CPU ×echo",
        "target",
        "CPU share",
        "÷ same in flight"
    );
    for mut r in rounds(ratios) {
        let each = listed(&r.throughput);
        let cpus = listed(&r.cpu);
        let mid = median(&mut r.throughput);
        let cpu = median(&mut r.cpu);
        // The median over the rounds of each round's lower share, as the ratios'.
        let share = median(&mut r.shares);
        let same = if r.same.is_empty() {
            "-".to_string()
        } else {
            format!("{:.3}", median(&mut r.same))
        };
        println!(
            "{:<13} {:>7} {:<8} {:>7.3} {:>8} {:>14.2} {:>8} {:>9.2} {:>17}  {each}; {cpus}",
            r.label,
            r.streams,
            conns(r.shared),
            mid,
            maumau_benchkit::machine_mark(mid >= THROUGHPUT_GOAL, share),
            cpu,
            maumau_benchkit::machine_mark(cpu <= CPU_GOAL, share),
            share,
            same
        );
    }
}

/// One verdict line per game run: its server CPU per decision against the echo's per round trip
/// (the goal that holds under load), then its throughput ratio, each judged only when the runs
/// had enough of the machine (median over the rounds).
fn print_verdicts(ratios: &[(&Row, &Row, Option<&Row>)]) {
    println!();
    for mut r in rounds(ratios) {
        let n = r.cpu.len();
        let cpu = median(&mut r.cpu);
        let throughput = median(&mut r.throughput);
        let share = median(&mut r.shares);
        println!(
            "verdict {} {} {}: server CPU per decision {cpu:.2}× the echo server's per round trip \
             (goal ≤ {CPU_GOAL}): {}; decisions/s {throughput:.3}× echo round trips/s (goal ≥ \
             {THROUGHPUT_GOAL}): {} (median of {n} round{})",
            r.label,
            r.streams,
            conns(r.shared),
            maumau_benchkit::machine_verdict(cpu <= CPU_GOAL, share),
            maumau_benchkit::machine_verdict(throughput >= THROUGHPUT_GOAL, share),
            if n == 1 { "" } else { "s" }
        );
    }
}

/// The median of `values` (not empty), which it sorts.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

fn print_hold(h: &hold::HoldResult) {
    let [r0, r1, r2] = h.rss_kb;
    let per = |from: u64, to: u64, n: usize| {
        if n == 0 {
            f64::NAN
        } else {
            (to as f64 - from as f64) / n as f64
        }
    };
    let half = h.requested / 2;
    let all = per(r0, r2, h.created);
    println!();
    println!("== Open matches held (WAITING, nobody joined) ==");
    println!(
        "{:>8} {:>8} {:>10} {:>10} {:>10} {:>8} {:>14} {:>18} {:>7} {:>11} {:>14}",
        "asked",
        "created",
        "RSS0 MB",
        "RSS½ MB",
        "RSS MB",
        "peak MB",
        "KB/match all",
        "KB/match 2nd half",
        "target",
        "creates/s",
        "srv µs/create"
    );
    println!(
        "{:>8} {:>8} {:>10.1} {:>10.1} {:>10.1} {:>8.1} {:>14.1} {:>18.1} {:>7} {:>11.0} {:>14.1}",
        h.requested,
        h.created,
        mb(r0),
        mb(r1),
        mb(r2),
        mb(h.peak_kb),
        all,
        per(r1, r2, h.created.saturating_sub(half)),
        if all <= 50.0 { "met" } else { "MISSED" },
        h.created as f64 / h.seconds,
        h.server_cpu * 1e6 / h.created as f64
    );
    println!("last match status: {}", h.last_status);
    if let Some(e) = &h.first_error {
        println!("note: {e}");
    }
}

/// `/proc/loadavg`: other work on the machine skews every figure.
fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg").unwrap_or_default()
}

async fn bench(mut args: BenchArgs, threads: usize) -> Result<(), String> {
    args.loadavg_before = loadavg();
    let bin = server_bin(args.server_bin.as_ref())?;
    if let Some(n) = args.hold {
        let config = format!(
            "join_timeout_ms = 86400000\nmax_open_matches = {}\n",
            n + 1000
        );
        let server = start_game_server(
            &bin,
            &config,
            args.server_log.as_deref(),
            args.data_parent.as_ref(),
            args.server_threads.first().copied().unwrap_or(0),
        )?;
        eprintln!("loadgen: holding {n} open matches on {}", server.addr);
        let result = hold::hold(&server, n).await;
        server.stop();
        print_hold(&result?);
        return Ok(());
    }
    if let Some(n) = args.abuse {
        let streams = args.streams.first().copied().unwrap_or(64);
        if streams == 0 || !streams.is_multiple_of(SEATS) {
            return Err(format!("--streams {streams}: a multiple of {SEATS}"));
        }
        let server = start_game_server(
            &bin,
            "",
            args.server_log.as_deref().or(Some("warn")),
            args.data_parent.as_ref(),
            args.server_threads.first().copied().unwrap_or(0),
        )?;
        let result = abuse::abuse(
            &server,
            n,
            &args.abusers,
            streams,
            args.seed,
            args.warmup,
            args.duration,
        )
        .await;
        server.stop();
        return result;
    }
    if !(args.duration > 0.0 && args.duration <= 3600.0 && (0.0..=600.0).contains(&args.warmup)) {
        return Err("--duration must be in (0, 3600] s and --warmup in [0, 600] s".into());
    }
    if !(1..=100).contains(&args.rounds) {
        return Err("--rounds must be between 1 and 100".into());
    }
    for &s in &args.streams {
        if s == 0 || !s.is_multiple_of(SEATS) || s > 4096 {
            return Err(format!(
                "--streams {s}: each count must be a multiple of {SEATS} between {SEATS} and 4096"
            ));
        }
    }
    let modes: &[bool] = match args.connections {
        Connections::Shared => &[true],
        Connections::Separate => &[false],
        Connections::Both => &[true, false],
    };
    let deliveries: &[Delivery] = match args.delivery {
        Deliveries::AsTheyHappen => &[Delivery::AsTheyHappen],
        Deliveries::WithPrompt => &[Delivery::WithPrompt],
        Deliveries::PerStep => &[Delivery::PerStep],
        Deliveries::Both => &[Delivery::WithPrompt, Delivery::PerStep],
        Deliveries::All => &[
            Delivery::AsTheyHappen,
            Delivery::WithPrompt,
            Delivery::PerStep,
        ],
    };
    let mut rows = Vec::new();
    let rounds = args.rounds;
    for &streams in &args.streams {
        for &shared in modes {
            for round in 0..rounds {
                let of = if rounds > 1 {
                    format!(" (round {} of {rounds})", round + 1)
                } else {
                    String::new()
                };
                for &delivery in deliveries {
                    for &threads in &args.server_threads {
                        if args.no_game {
                            continue;
                        }
                        eprintln!(
                            "loadgen: game ({delivery:?}, server threads {threads}), {} matches \
                             = {streams} streams, {} connection(s){of}",
                            streams / SEATS,
                            conns(shared)
                        );
                        let row = run_game(&args, &bin, streams, shared, delivery, threads).await?;
                        rows.push(Row { round, ..row });
                    }
                }
                if args.no_echo {
                    continue;
                }
                eprintln!(
                    "loadgen: echo, {streams} streams, {} connection(s){of}",
                    conns(shared)
                );
                let row = run_echo(&args, streams, shared).await?;
                rows.push(Row { round, ..row });
                if args.same_in_flight {
                    let in_flight = streams / SEATS;
                    eprintln!(
                        "loadgen: echo, {in_flight} streams (the game's decisions in flight), {} \
                         connection(s){of}",
                        conns(shared)
                    );
                    let row = run_echo(&args, in_flight, shared).await?;
                    rows.push(Row { round, ..row });
                }
            }
        }
    }
    print_rows(&args, &rows, threads);
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM (as sent by `timeout`), so the servers can be killed first.
async fn interrupted() -> &'static str {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "interrupted",
        () = term => "terminated",
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Cmd::EchoServer { listen }) => echo::serve(listen).map_err(|e| e.to_string()),
        Some(Cmd::Ladder(args)) => {
            let threads = args.client_threads;
            interruptible(threads, |_| ladder::bench(args))
        }
        Some(Cmd::Soak(args)) => interruptible(None, |_| soak::soak(args)),
        Some(Cmd::Workers(args)) => interruptible(Some(1), |_| async move {
            tokio::task::spawn_blocking(move || workers::bench(&args))
                .await
                .map_err(|e| format!("the benchmark failed: {e}"))?
        }),
        Some(Cmd::Crowd {
            url,
            connections,
            watch,
            abusers,
        }) => interruptible(None, |_| async move {
            abuse::hold_crowd(&url, connections, &watch, &abusers).await
        }),
        None => interruptible(cli.bench.client_threads, |threads| {
            bench(cli.bench, threads)
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("maumau-loadgen: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs `job` on a runtime of `threads` workers (default: one per core), which it is told; on
/// Ctrl-C or SIGTERM the servers it started are killed first.
fn interruptible<F>(threads: Option<usize>, job: impl FnOnce(usize) -> F) -> Result<(), String>
where
    F: std::future::Future<Output = Result<(), String>>,
{
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, std::num::NonZero::get))
        .max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async {
        tokio::select! {
            r = job(threads) => r,
            why = interrupted() => {
                procs::kill_all();
                Err(format!("{why}: servers killed"))
            }
        }
    })
}
