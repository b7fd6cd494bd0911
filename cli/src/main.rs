//! `maumau`: the Mau Mau Arena command line.
//!
//! `maumau tournament` (the default) runs the reference bots against each other; `maumau play`
//! plays one seeded match between random players and prints it; `maumau serve` runs the game
//! server; `maumau bot` plays a seat on a server, or with `--ladder` a version on a ladder;
//! `maumau check-bot` puts any bot through the
//! conformance gauntlet; `maumau ladder ...` runs a ladder's operator calls on a running server
//! (ban, pause, void, seasons, formats, replay pruning) and `maumau ladder rerate` checks a
//! stopped ladder's ratings.

mod bot_ladder;
mod check_bot;
mod ladder;
mod ladder_operator;
mod operator_token;
mod replay;
mod report;
mod sandbox;
mod serve;
mod show;
mod tournament;
mod worker;

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use maumau::viewer::{Perspective, Recorder};
use maumau_engine::{CallsMode, Game, MatchConfig, Options, ProfileId};

/// Mau Mau Arena: a rules engine, server and tournament runner for Mau Mau bots.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Play one seeded match between random players and print every move in readable notation.
    Play(PlayArgs),
    /// Run the game server (gRPC, grpc-web, health and reflection on one port).
    ///
    /// Prints "maumau: serving on ADDR (data in DIR)" to stderr once it is about to accept
    /// connections (never when it cannot start); logs go to stderr too (RUST_LOG, default info;
    /// colours only on a terminal).
    ///
    /// SIGINT (Ctrl-C) or SIGTERM stops it gracefully: no new connections, the ladder drained
    /// (in ladder mode), every open match ended and recorded as aborted; then it exits with
    /// status 0.
    Serve(serve::ServeArgs),
    /// Play one seat of a match on a server with a reference bot; with --ladder, hold a ladder
    /// version's lobby and play its invitations with a reference bot or your program.
    ///
    /// With --ladder it prints the invitations, results, ratings and why it waits; it reconnects
    /// after a dropped lobby; SIGINT (Ctrl-C) or SIGTERM drains it (no new invitations, the
    /// running matches finish), then it exits with status 0; a second signal stops it at once.
    Bot(BotArgs),
    /// Run a bot-versus-bot tournament and print the standings.
    Tournament(tournament::TournamentArgs),
    /// Play the games of tournaments started with `maumau tournament --store` on this machine.
    Worker(worker::WorkerArgs),
    /// Put a bot, in any language, through a scripted gauntlet and print a report card.
    CheckBot(check_bot::CheckBotArgs),
    /// Ladder operations: operator calls on a running server, rerate on a stopped one's data.
    Ladder(ladder::LadderArgs),
    /// Verify a replay file (as the ladder's web pages download it) by re-simulating it; with
    /// --show, print its moves in readable notation first.
    Replay(replay::ReplayArgs),
}

#[derive(clap::Args)]
struct BotArgs {
    /// The reference bot: random, heuristic or search; for a single match (not with --ladder)
    /// also any built-in tournament entrant, such as `random+20ms` (waits 20 ms before each
    /// decision, a stand-in for a slow program) or `heuristic~0.2`.
    #[arg(long, default_value = "heuristic")]
    kind: String,
    /// The seat token from CreateMatch (not with --ladder).
    #[arg(
        long,
        env = "MAUMAU_TOKEN",
        hide_env_values = true,
        required_unless_present = "ladder"
    )]
    token: Option<String>,
    /// The server: `host:port`, a URL, or a Unix socket as `unix:PATH` (a sandboxed program's way
    /// to its server).
    #[arg(long, env = "MAUMAU_ADDR", default_value = "127.0.0.1:50051")]
    server: String,
    /// Seed of the bot's own choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Samples per decision for the search bot.
    #[arg(long)]
    iterations: Option<u32>,
    /// The seat's name, as spectators and the match viewer show it (not with --ladder)
    /// [default: maumau-KIND; a tournament's entrant gets its name in MAUMAU_ENTRANT].
    #[arg(long, env = "MAUMAU_ENTRANT")]
    name: Option<String>,
    /// Receive events as they happen, one message per step (EVENT_DELIVERY_PER_STEP), instead
    /// of batched with each prompt (EVENT_DELIVERY_WITH_PROMPT, the default).
    #[arg(long)]
    events_as_they_happen: bool,
    #[command(flatten)]
    join: bot_ladder::LadderBotArgs,
}

#[derive(clap::Args)]
struct PlayArgs {
    /// Rule profile: classic, penalty-points, brazilian or romanian-32.
    #[arg(long, default_value = "classic")]
    profile: String,
    /// Number of seats (default: 4).
    #[arg(long, default_value_t = 4)]
    seats: u8,
    /// Seed of the deal and of the random players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Profile options, comma-separated (e.g. deck32,nine_reverses,limit150), or -.
    #[arg(long, default_value = "-")]
    options: String,
    /// Call rules: challenge, enforce or off.
    #[arg(long, default_value = "enforce")]
    calls: String,
    /// Print only the round results and the final ranking.
    #[arg(long)]
    quiet: bool,
}

/// mimalloc, for the server's many small allocations per decision (messages built, encoded and
/// dropped): fewer instructions per allocation than glibc's malloc, measured with callgrind on
/// `maumau-loadgen`'s load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Called when a server worker thread goes idle: at most once a second per thread, has mimalloc
/// collect that thread's heap (memory other threads freed into it, pages left empty) and return
/// what is free to the system. Without it, memory freed while a thread was busy (a crowd of
/// connections that has left) stays counted against the process until that thread allocates
/// again, which an idle server may not do.
pub(crate) fn return_freed_memory() {
    use std::cell::Cell;
    use std::time::{Duration, Instant};
    thread_local! {
        static LAST: Cell<Option<Instant>> = const { Cell::new(None) };
    }
    let now = Instant::now();
    let due = LAST.with(|last| {
        let due = last
            .get()
            .is_none_or(|t| now.duration_since(t) >= Duration::from_secs(1));
        if due {
            last.set(Some(now));
        }
        due
    });
    if due {
        // SAFETY: `mi_collect` takes no pointers and only touches mimalloc's own state for the
        // calling thread (and pages it may reclaim); it is safe to call at any time on a thread
        // that uses mimalloc, which every thread of this process does (it is the global
        // allocator).
        #[allow(unsafe_code)]
        unsafe {
            libmimalloc_sys::mi_collect(true);
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or_else(|| {
        // With no subcommand: the main job, a tournament of the reference bots.
        Command::Tournament(tournament::TournamentArgs::parse_from(["tournament"]))
    });
    let result = match command {
        Command::Play(args) => play(&args),
        Command::Serve(args) => {
            tracing_subscriber::fmt()
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_default_env()
                        .unwrap_or_else(|_| "info".into()),
                )
                .with_writer(std::io::stderr)
                // Colours only on a terminal: a log file or journal gets plain text.
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .init();
            serve::serve(&args)
        }
        Command::Bot(args) => bot(&args),
        Command::Tournament(args) => tournament::tournament(&args),
        Command::Worker(args) => worker::worker(&args),
        Command::CheckBot(args) => check_bot::check_bot(&args),
        Command::Ladder(args) => ladder::ladder(&args),
        Command::Replay(args) => replay::replay(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // A reader that stopped reading (`maumau play | head`) is not a failure.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("maumau: {e}");
            ExitCode::FAILURE
        }
    }
}

fn bot(args: &BotArgs) -> Result<(), Box<dyn std::error::Error>> {
    use maumau_bot_sdk::bots::{BotKind, SearchBot};
    use maumau_tournament::{Entrant, Player};
    let kind = args.kind.parse::<BotKind>();
    if let Some(server) = &args.join.ladder {
        let player = bot_ladder::Player::BuiltIn(kind?, args.seed, args.iterations);
        return bot_ladder::run(server, &args.join, player);
    }
    let token = args
        .token
        .clone()
        .ok_or("--token (or MAUMAU_TOKEN) is needed")?;
    let mut bot: Box<dyn maumau_bot_sdk::Bot> = match (kind, args.iterations) {
        (Ok(BotKind::Search), Some(n)) => Box::new(SearchBot::with_iterations(args.seed, n)),
        (Ok(kind), _) => kind.build(args.seed),
        // A tournament's built-in entrant (`random+20ms`), which plays the same here.
        (Err(e), _) => match Entrant::parse(&args.kind) {
            Ok(Entrant {
                player: Player::BuiltIn(b),
                ..
            }) => b.bot(args.seed),
            _ => return Err(e.into()),
        },
    };
    let kind = &args.kind;
    let server = bot_ladder::url(&args.server);
    let mut options = maumau_bot_sdk::runner::RunOptions::new(server, token);
    options.name = args
        .name
        .clone()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or_else(|| format!("maumau-{kind}"));
    options.batched = !args.events_as_they_happen;
    let runtime = tokio::runtime::Runtime::new()?;
    let report = runtime.block_on(maumau_bot_sdk::runner::run(bot.as_mut(), &options))?;
    let status = report
        .status()
        .as_str_name()
        .trim_start_matches("MATCH_STATUS_")
        .to_lowercase();
    println!(
        "match {} {status} after {} actions",
        report.match_id, report.actions
    );
    if let Some(result) = &report.result {
        for s in &result.standings {
            println!(
                "  place {}  S{}  total {:>4}  rounds won {}",
                s.placing, s.seat, s.total, s.rounds_won
            );
        }
    }
    if report.sealed {
        println!(
            "seed sealed until the operator reveals the match (commitment {})",
            hex(&report.seed_commitment)
        );
    } else {
        println!(
            "seed {} (salt {}, commitment {} = SHA-256(salt ‖ seed as 8 big-endian bytes))",
            report.seed,
            hex(&report.seed_salt),
            hex(&report.seed_commitment)
        );
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn play(args: &PlayArgs) -> Result<(), Box<dyn std::error::Error>> {
    use std::io::Write as _;
    let profile: ProfileId = args.profile.parse()?;
    let config = MatchConfig {
        options: Options::from_words(&args.options)?,
        calls: args.calls.parse::<CallsMode>()?,
        ..MatchConfig::new(profile, args.seats)
    };
    let quiet = args.quiet;
    let style = show::Style::for_stdout();
    let mut out = std::io::stdout().lock();
    let mut events = Vec::new();
    let mut game = Game::new_with(config, args.seed, &mut events)?;
    writeln!(out, "# {}", game.position())?;
    let mut recorder = Recorder::start(Perspective::Omniscient, &game, &events);
    if !quiet {
        show::write_frame(&mut out, style, &recorder.frames()[0], &[])?;
    }
    let mut players = maumau_bot_sdk::bots::RandomBot::new(args.seed ^ 0x5EED);
    let mut decisions = 0u64;
    while let Some(seat) = game.to_act() {
        let action = maumau_bot_sdk::Bot::decide(&mut players, &game.observation(seat));
        events.clear();
        game.apply_with(seat, action, &mut events)?;
        let frame = recorder.step(seat, action, &events, &game);
        if !quiet {
            show::write_frame(&mut out, style, frame, &[])?;
        } else if let Some(over) = frame.notes.iter().find(|n| n.contains(" over: ")) {
            writeln!(out, "{over}")?;
        }
        decisions += 1;
    }
    let result = game.match_result().ok_or("the match did not finish")?;
    writeln!(
        out,
        "match over after {} rounds and {decisions} decisions",
        result.rounds
    )?;
    for seat in 0..result.seats {
        let s = seat as usize;
        writeln!(
            out,
            "  place {}  S{seat}  total {:>4}  rounds won {}",
            result.placings[s], result.totals[s], result.rounds_won[s]
        )?;
    }
    Ok(())
}
