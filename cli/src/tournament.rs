//! `maumau tournament`: the reference bots (or any built-in entrants) against each other, and
//! external programs over gRPC on a server it starts itself (or a running one).
//!
//! Its steps: [`plan`] the tournament from the arguments, [`choose_seed`], [`use_server`] (the
//! server started here is [`local`]'s), [`announce`], play the games with
//! [`progress`](progress::run_with_progress), [`print_results`]; with `--watch`, the viewer of
//! the server started here stays up until Ctrl-C ([`local::LocalServer::serve_until_signal`]).

pub(crate) mod events;
pub(crate) mod local;
mod progress;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use maumau_engine::{CallsMode, MatchConfig, Options, ProfileId};
use maumau_tournament::{Clock, Entrant, Format, Remote, Report, Tournament};

use local::LocalServer;

/// Deals per table of `maumau tournament` with no arguments: the three reference bots in classic
/// at one table of 3 seats, each deal played 3 times (once per seating), 450 games in all.
///
/// Measured with the release build on the 2-core development machine (load average about 2)
/// after the search bot learnt to stop a decision once only the heuristic's move is left in the
/// race: the 150 deals (450 games, 77,500 decisions) took 6.7 s (12.8 s of CPU); before it, 30
/// deals took 9.7 s at load 4. Nearly all of it is the search bot; change this if its default
/// budget changes.
pub(crate) const DEFAULT_DEALS: u32 = 150;

/// Run a bot-versus-bot tournament and print the standings.
#[derive(clap::Parser)]
pub(crate) struct TournamentArgs {
    /// Built-in entrants, comma-separated: random, heuristic, search, `search:N` (N samples per
    /// decision), `heuristic~P` (a random action with probability P), `random+20ms` (waits 20
    /// ms before each decision), optionally `name=spec`.
    /// Empty ("") for none.
    #[arg(long, default_value = "random,heuristic,search")]
    bots: String,
    /// One more entrant, any spec; repeat for more. An external program is
    /// `name=cmd:COMMAND`: it is run with `sh -c` once per match, with the seat token in
    /// MAUMAU_TOKEN and the server in MAUMAU_ADDR (host:port) and MAUMAU_URL (http://host:port),
    /// e.g. --entrant 'mine=cmd:python3 bot.py --address "$MAUMAU_ADDR" --token "$MAUMAU_TOKEN"'.
    /// `name=lobby:COMMAND` runs it once for the whole tournament, with a lobby in
    /// MAUMAU_LOBBY_ADDR and MAUMAU_LOBBY_KEY where it is invited to each of its matches (the
    /// SDKs' ladder lobby helpers read them), e.g. 'py=lobby:python3 examples/ladder_bot.py'.
    #[arg(long = "entrant", value_name = "SPEC")]
    entrants: Vec<String>,
    /// Rule profile: classic, penalty-points, brazilian or romanian-32.
    #[arg(long, default_value = "classic")]
    profile: String,
    /// Profile options, comma-separated (e.g. deck32,limit150), or -.
    #[arg(long, default_value = "-")]
    options: String,
    /// Seats per table [default: as many as entrants, within the profile's range].
    #[arg(long)]
    seats: Option<u8>,
    /// Call rules: enforce (tournaments' default), challenge or off.
    #[arg(long, default_value = "enforce")]
    calls: String,
    /// round-robin, swiss, elimination (single) or double-elimination.
    #[arg(long, default_value = "round-robin")]
    format: String,
    /// Rounds of a Swiss tournament.
    #[arg(long, default_value_t = 5)]
    rounds: u32,
    /// Deals per table; each deal is played once per seating.
    #[arg(long, default_value_t = DEFAULT_DEALS)]
    deals: u32,
    /// Tournament seed: every game's seed derives from it [default: a secret seed drawn from the
    /// operating system, revealed with the results; resuming an --out directory takes the seed
    /// stored there]. A chosen seed makes the deals reproducible, and therefore predictable to
    /// anyone who knows it: choose one only when no entrant can learn it.
    #[arg(long)]
    seed: Option<u64>,
    /// Give every seating its own deal instead of replaying the same deal (no duplicate deals).
    /// The seatings of a duplicate deal share its seed, which each of them reveals to its seats
    /// when it ends.
    #[arg(long)]
    no_duplicate: bool,
    /// Do not keep the games' actions.
    #[arg(long)]
    no_replays: bool,
    /// Worker threads, and games played at once on the server [default: every core].
    #[arg(long)]
    threads: Option<usize>,
    /// Output directory [default: maumau-tournament/<id>, one per distinct tournament]: the
    /// results, report.html (for a browser, offline) and games/ (each game's viewer); an
    /// interrupted tournament resumes from it.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Play on this running server (host:port or http://host:port) instead of starting one.
    #[arg(long, value_name = "ADDR")]
    server: Option<String>,
    #[command(flatten)]
    operator_token: crate::operator_token::OperatorTokenArgs,
    /// Play every game over gRPC, the built-in entrants' too (through the Rust SDK's runner);
    /// the results are the same as in-process, only slower.
    #[arg(long)]
    over_grpc: bool,
    /// Play every game on a server started here, listening on ADDR [default: 127.0.0.1 on a
    /// free port], and print its viewer's address first: /matches lists the games, each
    /// followed live in the browser. Once the games are over the viewer stays up, with every
    /// game, until Ctrl-C (or SIGTERM). ADDR beyond loopback (0.0.0.0:8080) shows the games to
    /// the network.
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = "127.0.0.1:0",
        conflicts_with = "server"
    )]
    watch: Option<SocketAddr>,
    /// Milliseconds per decision over gRPC (a 30 s bank comes on top; 3 timeouts forfeit).
    #[arg(long, default_value_t = 2000)]
    decision_ms: u64,
    /// Milliseconds an external program may be missing (crashed, never joined) when it must act
    /// before it forfeits; the server this command starts also waits this long for every seat to
    /// join before it starts a match without them.
    #[arg(long, default_value_t = 5000)]
    grace_ms: u64,
    #[command(flatten)]
    sandbox: crate::sandbox::SandboxArgs,
    /// Record the tournament in this PostgreSQL store (`postgres://user[:password]@host[:port]/db`)
    /// and play its games there: here, and on every machine running `maumau worker --store` with
    /// the same URL. External programs (`cmd:`, `lobby:`) run on the machine that plays their
    /// game, with this command's clock and --sandbox: each machine needs them at the same paths.
    #[arg(long, value_name = "URL", conflicts_with_all = ["server", "watch", "over_grpc"])]
    store: Option<String>,
}

/// Runs the tournament the arguments describe, on a server when it has external programs (or
/// with --over-grpc), and prints the standings and where the results are.
pub(crate) fn tournament(args: &TournamentArgs) -> Result<(), Box<dyn std::error::Error>> {
    let mut t = plan(args)?;
    let seed_note = choose_seed(args, &mut t);
    let out = args.out.clone().unwrap_or_else(|| {
        let d = t.description();
        let key = serde_json_key(&d);
        PathBuf::from("maumau-tournament").join(key)
    });
    // No program may see the output folder: results, logs, the stored seed, the server's data.
    t.sandbox = args.sandbox.build(&[&out])?;
    let external = t.entrants.iter().any(Entrant::is_external);
    // External programs (or --over-grpc, --watch) need a server: the given one, or one started
    // here.
    let local = if external || args.over_grpc || args.watch.is_some() {
        use_server(args, &mut t, &out)?
    } else {
        None
    };
    // A watched tournament is stopped with Ctrl-C too (before its end, as after it): say how to
    // resume it.
    if external || args.watch.is_some() {
        stop_programs_on_interrupt(resume_hint(args, &out));
    }
    announce(&t, &seed_note, &out, local.as_ref(), args.watch.is_some());
    // One code path whoever plays: the store's venue (games shared with workers) or this
    // process's threads, both through `Tournament::run_on`, so that the files and results of a
    // tournament cannot depend on where its games were played.
    let result = match &args.store {
        Some(url) => {
            // Every worker runs the programs as this command does: the event records how.
            let programs = external.then(|| events::Programs {
                decision_ms: args.decision_ms,
                grace_ms: args.grace_ms,
                sandbox: args.sandbox.settings(),
            });
            let (venue, resumed) =
                events::StoreVenue::open(events::open_store(url)?, &t, programs)?;
            eprintln!(
                "maumau: event {} in the store{}; other machines play its games with: maumau \
                 worker (the store's URL in MAUMAU_STORE, or --store URL){}",
                venue.event(),
                if resumed {
                    " (taken over from the run that stopped, with the games finished since)"
                } else {
                    ""
                },
                if external {
                    "; each needs the programs at the same paths"
                } else {
                    ""
                }
            );
            let result = progress::run_with_progress(&t, &venue, &out);
            if result.is_ok() {
                venue.finish()?;
                eprintln!("maumau: {} by this command", venue.statements_line());
            }
            result
        }
        None => progress::run_with_progress(&t, &maumau_tournament::Here::default(), &out),
    };
    let printed = result
        .map_err(Box::<dyn std::error::Error>::from)
        .and_then(|report| print_results(args, &t, &report, &out));
    match local {
        // Watched: the finished games stay on view (unless the tournament failed).
        Some(server) if args.watch.is_some() && printed.is_ok() => {
            server.serve_until_signal(&matches_url(&t))
        }
        Some(server) => {
            server.stop();
            printed
        }
        None => printed,
    }
}

/// The match list of the tournament's server, which links every game to its viewer.
fn matches_url(t: &Tournament) -> String {
    t.server
        .as_ref()
        .map(|r| format!("{}/matches", r.url()))
        .unwrap_or_default()
}

/// The tournament the arguments describe: its entrants, rules, seats, format and options (its
/// seed, sandbox and server come after).
fn plan(args: &TournamentArgs) -> Result<Tournament, Box<dyn std::error::Error>> {
    let entrants = Entrant::parse_all(
        args.bots
            .split(',')
            .chain(args.entrants.iter().map(String::as_str)),
    )?;
    let profile: ProfileId = args.profile.parse()?;
    let mut config = MatchConfig {
        options: Options::from_words(&args.options)?,
        calls: args.calls.parse::<CallsMode>()?,
        ..MatchConfig::new(profile, 2)
    };
    let format = parse_format(&args.format, args.rounds)?;
    config.seats = args
        .seats
        .unwrap_or_else(|| default_seats(config, format, entrants.len()));
    let mut t = Tournament::new(entrants, config);
    t.config.calls = config.calls;
    t.format = format;
    t.deals = args.deals;
    t.duplicate = !args.no_duplicate;
    t.record_replays = !args.no_replays;
    if let Some(n) = args.threads {
        t.threads = n.max(1);
    }
    Ok(t)
}

/// `--format` (with `--rounds` for a Swiss tournament).
fn parse_format(name: &str, rounds: u32) -> Result<Format, String> {
    Ok(match name {
        "round-robin" => Format::RoundRobin,
        "swiss" => Format::Swiss { rounds },
        "elimination" | "single-elimination" => Format::SingleElimination,
        "double-elimination" => Format::DoubleElimination,
        other => {
            return Err(format!(
                "unknown format `{other}` (round-robin, swiss, elimination or double-elimination)"
            ));
        }
    })
}

/// Seats per table without `--seats`: 2 in a knockout, else as many as there are entrants within
/// the profile's range.
fn default_seats(config: MatchConfig, format: Format, entrants: usize) -> u8 {
    if matches!(
        format,
        Format::SingleElimination | Format::DoubleElimination
    ) {
        return 2;
    }
    let (min, max) = match (MatchConfig { seats: 2, ..config }).rules() {
        Ok(r) => (r.min_seats, r.max_seats),
        Err(_) => (4, 8), // brazilian: 2 seats is refused, its range is 4..8
    };
    (entrants as u8).clamp(min, max)
}

/// Sets the tournament's seed: a chosen one, else the one of the tournament being resumed, else
/// the secret one that `Tournament::new` drew. Returns what to say of it.
fn choose_seed(args: &TournamentArgs, t: &mut Tournament) -> String {
    let stored = args.out.as_deref().and_then(Tournament::stored_seed);
    match (args.seed, stored) {
        (Some(s), _) => {
            t.seed = s;
            format!(
                "seed {s}, chosen: the deals are reproducible, and therefore predictable to \
                 anyone who knows the seed"
            )
        }
        (None, Some(s)) => {
            t.seed = s;
            "the secret seed stored in the output directory (resuming)".to_string()
        }
        (None, None) => {
            "a secret seed drawn from the operating system (revealed with the results)".to_string()
        }
    }
}

/// Sets the server of the games over gRPC: the one `--server` names, or one started here on
/// 127.0.0.1, which is returned to be stopped when the tournament is over.
fn use_server(
    args: &TournamentArgs,
    t: &mut Tournament,
    out: &Path,
) -> Result<Option<LocalServer>, Box<dyn std::error::Error>> {
    let grace = Duration::from_millis(args.grace_ms.max(1));
    let clock = Clock {
        decision: Duration::from_millis(args.decision_ms.max(1)),
        disconnect_grace: grace,
        ..Clock::default()
    };
    // A server of someone else's needs its operator token; the one started here has one of its
    // own.
    let operator_token = match &args.server {
        Some(server) => args.operator_token.for_server(server)?,
        // The programs reach the server started here: an operator token of its own keeps them
        // from its operator calls (creating matches, aborting anyone's, revealing a sealed deal
        // early, reading its replays: see `maumau_tournament::net`). Drawn from the operating
        // system, never shown.
        None => Some(format!(
            "{:016x}{:016x}",
            maumau_tournament::schedule::random_seed(),
            maumau_tournament::schedule::random_seed()
        )),
    };
    let (addr, local) = match &args.server {
        Some(a) => (a.clone(), None),
        None => {
            let listen = args.watch.unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0)));
            let server =
                LocalServer::start(listen, out.join("server"), grace, operator_token.clone())?;
            (server.addr().to_string(), Some(server))
        }
    };
    t.server = Some(Remote {
        addr,
        operator_token,
        clock,
        // Watched games are all on the server, where the viewer is.
        every_game: args.over_grpc || args.watch.is_some(),
    });
    Ok(local)
}

/// How to resume an interrupted tournament that writes to `out`.
fn resume_hint(args: &TournamentArgs, out: &Path) -> String {
    if args.seed.is_none() && args.out.is_none() {
        format!("run it again with --out {} to resume", out.display())
    } else {
        "run the same command again to resume".to_string()
    }
}

/// On SIGINT, stops the external programs and exits with status 130, saying how to `resume`.
///
/// External programs run in process groups of their own (so they can be stopped with whatever
/// they start) and miss the terminal's Ctrl-C: stop them, then leave. Results stored so far stay;
/// the same command resumes. Once the games are over (`--watch`) the interrupt is the viewer's
/// and this handler lets it be. Returns once the handler is in place.
fn stop_programs_on_interrupt(resume: String) {
    // The handler is in place before anything is printed: a Ctrl-C right after the first lines
    // (or a script's SIGINT on seeing them) used to come before it and go unheard.
    let (listening, ready) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            let _ = listening.send(());
            return;
        };
        let interrupted = rt.block_on(async move {
            let sigint = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt());
            let _ = listening.send(());
            match sigint {
                Ok(mut sigint) => sigint.recv().await.is_some(),
                Err(_) => false,
            }
        });
        if interrupted {
            if local::viewer_only() {
                // The games are over: the interrupt stops the viewer (its own listener hears
                // it), and the command ends as it should.
                return;
            }
            maumau_tournament::stop_programs();
            // Not eprintln!: it panics on a closed stderr, and this thread must reach the exit
            // whatever happens to the message.
            use std::io::Write;
            let _ = writeln!(std::io::stderr(), "\nmaumau: interrupted; {resume}");
            std::process::exit(130);
        }
    });
    let _ = ready.recv();
}

/// Says what is about to be played, where it is written, and (over gRPC) where to watch it:
/// watched (`--watch`), where to watch comes first.
fn announce(
    t: &Tournament,
    seed_note: &str,
    out: &Path,
    local: Option<&LocalServer>,
    watched: bool,
) {
    // The server's match list links every game to its viewer: live games as a spectator sees
    // them, finished ones with every hand (a sealed deal's once all its games are over).
    let watch_line = format!("maumau: watch the games at {}", matches_url(t));
    if watched {
        eprintln!("{watch_line}");
        if let Some(listening) = local.and_then(LocalServer::listening_beyond_loopback) {
            eprintln!(
                "maumau: the viewer listens on {listening}: other machines open it at this \
                 machine's address"
            );
        }
    }
    eprintln!(
        "maumau: {} entrants, {} at {} seats, calls {}, {:?}, {} deals per table{}; {}; writing to {}",
        t.entrants.len(),
        t.config.profile,
        t.config.seats,
        t.config.calls.name(),
        t.format,
        t.deals,
        if t.duplicate { " (duplicate)" } else { "" },
        seed_note,
        out.display()
    );
    if let Some(r) = &t.server {
        eprintln!(
            "maumau: {} over gRPC on {}{}",
            if r.every_game {
                "every game"
            } else {
                "games with external programs"
            },
            r.url(),
            match (local.is_some(), watched) {
                (true, true) => " (started here; it stays up after the last game until Ctrl-C)",
                (true, false) =>
                    " (started here; it stops with the tournament: --watch keeps it up)",
                (false, _) => "",
            }
        );
        if !watched {
            eprintln!("{watch_line}");
        }
    } else {
        eprintln!("maumau: playing in this process; --watch shows the games in a browser");
    }
}

/// Prints the standings, the seed and where the results are, and writes report.html.
fn print_results(
    args: &TournamentArgs,
    t: &Tournament,
    report: &Report,
    out: &Path,
) -> Result<(), Box<dyn std::error::Error>> {
    print_report(report);
    println!(
        "\nseed {} ({}): --seed {} deals the same games again",
        t.seed,
        if args.seed.is_some() {
            "chosen"
        } else {
            "secret until now"
        },
        t.seed
    );
    println!(
        "\nresults: {}/standings.csv, standings.json, pairs.csv, results.jsonl, replays.jsonl",
        out.display()
    );
    let names: Vec<String> = t.entrants.iter().map(|e| e.name.clone()).collect();
    let written = crate::report::write(out, report, &names)?;
    println!(
        "report: {} ({} games' viewers in {})",
        written.path.display(),
        written.games,
        out.join("games").display()
    );
    Ok(())
}

/// A short, stable directory name for a tournament description.
fn serde_json_key(d: &maumau_tournament::Description) -> String {
    let text = format!("{d:?}");
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in text.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01B3);
    }
    format!("{}-{}-{:08x}", d.profile, d.seats, h as u32)
}

fn print_report(r: &Report) {
    let games = r.games.len();
    let decisions: u64 = r.games.iter().map(|g| g.actions as u64).sum();
    println!(
        "\n{games} games ({} played now, {} resumed) in {:.1} s; {} decisions",
        r.played_now,
        games - r.played_now,
        r.seconds,
        decisions
    );
    let score = r.description.score_heading();
    let width = r
        .standings
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(7);
    println!(
        "\n{:<5} {:<8} {:<width$} {:>5}  {:>15}  {:>6}  {:>15}  {:>21}  {:>w$}  decision time: median, longest",
        "rank",
        "forfeits",
        "entrant",
        "games",
        "rating μ ±95%",
        "μ−3σ",
        "win share",
        "placing, 1 is best",
        score,
        w = score.chars().count().max(15)
    );
    for s in &r.standings {
        let rank = if s.tied {
            format!("={}", s.rank)
        } else {
            s.rank.to_string()
        };
        let forfeits = if s.forfeits > 0 {
            format!("{} of {}", s.forfeits, s.games)
        } else {
            "-".to_string()
        };
        println!(
            "{:<5} {:<8} {:<width$} {:>5}  {:>7.2} ± {:<5.2}  {:>6.2}  {:>6.3} ± {:<5.3}  {:>12.2} ± {:<6.2}  {:>w$}  {}",
            rank,
            forfeits,
            s.name,
            s.games,
            s.rating.mean,
            s.rating.ci95,
            s.conservative,
            s.win_share.mean,
            s.win_share.ci95,
            s.placing.mean,
            s.placing.ci95,
            format!("{:.1} ± {:.1}", s.score.mean, s.score.ci95),
            crate::report::decision_words(&s.decision_times),
            w = score.chars().count().max(15)
        );
    }
    if r.standings.iter().any(|s| s.tied) {
        println!(
            "(=: a shared rank; no two entrants sharing one are separable by the strength model below)"
        );
    }
    for s in r.standings.iter().filter(|s| s.forfeits > 0) {
        println!(
            "{} forfeited {} of its {} games (placed last in each)",
            s.name, s.forfeits, s.games
        );
    }
    if let Some(c) = &r.champion {
        println!("\nknockout winner: {c}");
    }
    if !r.notices.is_empty() {
        println!(
            "\n{} notices this run (also printed as they happened):",
            r.notices.len()
        );
        for n in r.notices.iter().take(20) {
            println!("  {n}");
        }
        if r.notices.len() > 20 {
            println!("  … and {} more", r.notices.len() - 20);
        }
    }
    print_pairs(r, width);
}

/// The pairwise comparisons: a matrix of signs in standings order, then every pair with its
/// placing gain and interval.
fn print_pairs(r: &Report, width: usize) {
    if r.pairs.is_empty() {
        return;
    }
    println!(
        "\npairwise, over duplicate blocks (a deal played once per seating): row against column, \
         > places better, < worse, = not separable at 95%"
    );
    // Columns numbered as the rows, in standings order.
    let names: Vec<&str> = r.standings.iter().map(|s| s.name.as_str()).collect();
    print!("{:<w$}", "", w = width + 4);
    for i in 1..=names.len() {
        print!(" {i:>3}");
    }
    println!();
    for (i, row) in names.iter().enumerate() {
        print!("{:>2}. {row:<width$}", i + 1);
        for col in &names {
            let sign = if row == col {
                "·"
            } else {
                match r
                    .pairs
                    .iter()
                    .filter(|p| p.a == *col || p.b == *col)
                    .find_map(|p| p.seen_from(row))
                {
                    Some(p) if p.separable && p.model.mean > 0.0 => ">",
                    Some(p) if p.separable => "<",
                    Some(_) => "=",
                    None => " ",
                }
            };
            print!(" {sign:>3}");
        }
        println!();
    }
    println!(
        "\nplaces per game the first finished above the second (95% interval, paired bootstrap \
         over blocks), the strength model's difference (95% interval, bootstrap over all blocks; \
         it decides =), and the share of their games where it placed above:"
    );
    for p in &r.pairs {
        // Each pair as its better half sees it.
        let p = if p.model.mean < 0.0 {
            p.seen_from(&p.b).unwrap_or_else(|| p.clone())
        } else {
            p.clone()
        };
        println!(
            "  {:<width$} {} {:<width$} {:+.3} [{:+.3}, {:+.3}]  model {:+.3} [{:+.3}, {:+.3}]  \
             {:>5} blocks  ahead in {:.3}",
            p.a,
            if p.separable { ">" } else { "=" },
            p.b,
            p.gain.mean,
            p.gain.low,
            p.gain.high,
            p.model.mean,
            p.model.low,
            p.model.high,
            p.blocks,
            p.a_ahead,
        );
    }
}
