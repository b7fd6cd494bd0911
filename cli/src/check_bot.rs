//! `maumau check-bot`: the conformance kit of `maumau-checkbot`, from the command line.

use std::path::PathBuf;
use std::time::Duration;

use maumau_checkbot::{BotUnderTest, Case, Options, Progress};

/// Put a bot, in any language, through a scripted gauntlet on a local server and print a
/// report card.
///
/// The bot is launched once per match with the address and its seat token in MAUMAU_ADDR
/// (host:port) and MAUMAU_TOKEN ({addr} and {token} in its arguments are replaced too), plays
/// the match and exits (a bot that never exits fails). Its output goes to a log file per match.
/// With --lobby it is launched once and invited to each match through a lobby, as a tournament's
/// `--entrant 'name=lobby:COMMAND'` is. With --connect the kit prints an address and a token
/// instead and waits for the bot to connect, once per match. Exits non-zero when a check fails.
#[derive(clap::Args)]
pub(crate) struct CheckBotArgs {
    /// A profile the bot plays, optionally with seat counts (`classic`, `classic:2,3`);
    /// repeat for more. Default: every profile at its usual seat counts (classic 2 and 4,
    /// penalty-points 4, brazilian 6, romanian-32 3).
    #[arg(long = "profile", value_name = "PROFILE[:SEATS]")]
    profiles: Vec<String>,
    /// The built-in bot on the other seats: random, heuristic or search.
    #[arg(long, default_value = "heuristic")]
    opponent: String,
    /// Time for each decision in the deadline and stale-state checks, in milliseconds (no time
    /// bank there).
    #[arg(long, default_value_t = 500)]
    deadline_ms: u64,
    /// Seed of the deals and the built-in bots: the same seed gives the same gauntlet [default:
    /// drawn from the operating system, so the bot cannot know the deals; printed at the end].
    #[arg(long)]
    seed: Option<u64>,
    /// Do not launch the bot: print an address and a token, and wait for the bot to connect
    /// with them, once per match.
    #[arg(long, conflicts_with = "lobby")]
    connect: bool,
    /// Launch the bot once for the whole gauntlet and invite it to each match through a lobby,
    /// as `maumau tournament --entrant 'name=lobby:COMMAND'` does: the lobby's address and key
    /// are in MAUMAU_LOBBY_ADDR and MAUMAU_LOBBY_KEY (the SDKs' lobby helpers read them). It
    /// must exit within 5 s of the lobby's close at the end; its output goes to lobby.log.
    #[arg(long)]
    lobby: bool,
    /// Seconds the bot has to join each match (default 30, or 300 with --connect).
    #[arg(long, value_name = "SECONDS")]
    join_timeout: Option<u64>,
    /// Where the launched bot's output (stdout and stderr) goes, one file per match [default: a
    /// new directory under the system's temporary directory, printed at the end].
    #[arg(long, value_name = "DIR")]
    log_dir: Option<PathBuf>,
    /// The bot's command and its arguments, after `--`, e.g. `-- ./my-bot --fast`. It is
    /// launched once per match with the server's address (host:port) in MAUMAU_ADDR and its seat
    /// token in MAUMAU_TOKEN ({addr} and {token} in its arguments are replaced too), and must
    /// play the match and exit within 5 s of its end. With --lobby it is launched once instead.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
    #[command(flatten)]
    sandbox: crate::sandbox::SandboxArgs,
}

pub(crate) fn check_bot(args: &CheckBotArgs) -> Result<(), Box<dyn std::error::Error>> {
    let bot = match (args.connect, args.command.is_empty()) {
        (true, true) => BotUnderTest::Connect,
        (false, false) if args.lobby => BotUnderTest::Lobby(args.command.clone()),
        (false, false) => BotUnderTest::Command(args.command.clone()),
        (true, false) => return Err("give either --connect or a bot command, not both".into()),
        (false, true) => {
            return Err(
                "give the bot's command after `--` (e.g. `maumau check-bot -- \
                        python3 my_bot.py`), or --connect to start it by hand"
                    .into(),
            );
        }
    };
    let mut options = Options::new(bot);
    if !args.profiles.is_empty() {
        options.cases = Vec::new();
        for spec in &args.profiles {
            options.cases.extend(Case::parse(spec)?);
        }
    }
    options.opponent = args.opponent.parse()?;
    options.deadline = Duration::from_millis(args.deadline_ms.max(1));
    options.seed = args
        .seed
        .unwrap_or_else(maumau_tournament::schedule::random_seed);
    let seed = options.seed;
    if let Some(s) = args.join_timeout {
        options.join_timeout = Duration::from_secs(s);
    }
    options.log_dir.clone_from(&args.log_dir);
    if args.sandbox.sandbox && args.connect {
        return Err("--sandbox confines a bot check-bot launches, not one started by hand".into());
    }
    let hidden: Vec<&std::path::Path> = args.log_dir.iter().map(PathBuf::as_path).collect();
    options.sandbox = args.sandbox.build(&hidden)?;
    println!("check-bot: {}", options.bot);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let report = runtime.block_on(maumau_checkbot::run(options, |p| match p {
        Progress::Waiting {
            addr,
            token,
            matches,
        } => {
            println!(
                "Start your bot with these, once per match ({matches} matches), for example \
                 in a loop:\n\n  export MAUMAU_ADDR={addr} MAUMAU_TOKEN={token}\n  \
                 while true; do ./my-bot; sleep 0.2; done\n"
            );
        }
        Progress::Check(c) => println!("{c}"),
    }))?;
    println!("{}", report.footer());
    println!(
        "seed {seed} ({}): --seed {seed} deals the same gauntlet again",
        if args.seed.is_some() {
            "chosen"
        } else {
            "drawn for this run"
        }
    );
    if report.passed() {
        Ok(())
    } else {
        Err("the bot failed the gauntlet".into())
    }
}
