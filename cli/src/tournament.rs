//! `maumau tournament`: the reference bots (or any built-in entrants) against each other.

use std::path::PathBuf;

use maumau_engine::{CallsMode, MatchConfig, Options, ProfileId};
use maumau_tournament::{Entrant, Format, Progress, Report, Tournament};

/// Run a bot-versus-bot tournament and print the standings.
#[derive(clap::Parser)]
pub(crate) struct TournamentArgs {
    /// Entrants, comma-separated: random, heuristic, search, `search:N` (N samples per
    /// decision), `heuristic~P` (a random action with probability P), optionally `name=spec`.
    #[arg(long, default_value = "random,heuristic,search")]
    bots: String,
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
    /// round-robin, swiss or elimination.
    #[arg(long, default_value = "round-robin")]
    format: String,
    /// Rounds of a Swiss tournament.
    #[arg(long, default_value_t = 5)]
    rounds: u32,
    /// Deals per table; each deal is played once per seating.
    #[arg(long, default_value_t = 6)]
    deals: u32,
    /// Tournament seed: every game's seed derives from it.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Give every seating its own deal instead of replaying the same deal (no duplicate deals).
    #[arg(long)]
    no_duplicate: bool,
    /// Do not keep the games' actions.
    #[arg(long)]
    no_replays: bool,
    /// Worker threads [default: every core].
    #[arg(long)]
    threads: Option<usize>,
    /// Output directory [default: maumau-tournament/<id>, one per distinct tournament]; an
    /// interrupted tournament resumes from it.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub(crate) fn tournament(args: &TournamentArgs) -> Result<(), Box<dyn std::error::Error>> {
    let entrants = Entrant::parse_list(&args.bots)?;
    let profile: ProfileId = args.profile.parse()?;
    let mut config = MatchConfig {
        options: Options::from_words(&args.options)?,
        calls: args.calls.parse::<CallsMode>()?,
        ..MatchConfig::new(profile, 2)
    };
    let probe = MatchConfig { seats: 2, ..config }.rules();
    let (min, max) = match probe {
        Ok(r) => (r.min_seats, r.max_seats),
        Err(_) => (4, 8), // brazilian: 2 seats is refused, its range is 4..8
    };
    config.seats = args
        .seats
        .unwrap_or_else(|| (entrants.len() as u8).clamp(min, max));
    let format = match args.format.as_str() {
        "round-robin" => Format::RoundRobin,
        "swiss" => Format::Swiss {
            rounds: args.rounds,
        },
        "elimination" => Format::SingleElimination,
        other => {
            return Err(
                format!("unknown format `{other}` (round-robin, swiss or elimination)").into(),
            );
        }
    };
    let mut t = Tournament::new(entrants, config);
    t.config.calls = config.calls;
    t.format = format;
    t.deals = args.deals;
    t.seed = args.seed;
    t.duplicate = !args.no_duplicate;
    t.record_replays = !args.no_replays;
    if let Some(n) = args.threads {
        t.threads = n.max(1);
    }
    let out = args.out.clone().unwrap_or_else(|| {
        let d = t.description();
        let key = serde_json_key(&d);
        PathBuf::from("maumau-tournament").join(key)
    });
    eprintln!(
        "maumau: {} entrants, {} at {} seats, calls {}, {:?}, {} deals per table{}; seed {}; writing to {}",
        t.entrants.len(),
        profile,
        t.config.seats,
        t.config.calls.name(),
        t.format,
        t.deals,
        if t.duplicate { " (duplicate)" } else { "" },
        t.seed,
        out.display()
    );
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} games  {elapsed} elapsed, {eta} left",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let mut on_progress = |p: Progress| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
    };
    let report = t.run(Some(&out), &mut on_progress)?;
    bar.finish_and_clear();
    print_report(&report);
    println!(
        "\nresults: {}/standings.csv, standings.json, pairs.csv, results.jsonl, replays.jsonl",
        out.display()
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
    println!(
        "\n{:<5} {:<18} {:>5}  {:>15}  {:>6}  {:>15}  {:>13}  {:>15}",
        "rank", "entrant", "games", "rating μ ±95%", "μ−3σ", "win share", "placing", "score/game"
    );
    for s in &r.standings {
        let rank = if s.tied {
            format!("={}", s.rank)
        } else {
            s.rank.to_string()
        };
        println!(
            "{:<5} {:<18} {:>5}  {:>7.2} ± {:<5.2}  {:>6.2}  {:>6.3} ± {:<5.3}  {:>5.2} ± {:<4.2}  {:>6.1} ± {:<6.1}",
            rank,
            s.name,
            s.games,
            s.rating.mean,
            s.rating.ci95,
            s.conservative,
            s.win_share.mean,
            s.win_share.ci95,
            s.placing.mean,
            s.placing.ci95,
            s.score.mean,
            s.score.ci95
        );
    }
    if r.standings.iter().any(|s| s.tied) {
        println!("(= : not separable from the entrant above at 95% confidence)");
    }
    println!("\nhead to head (share of shared games where the first placed above the second):");
    for p in &r.pairs {
        println!(
            "  {:<18} vs {:<18} {:>5} games  {:.3} ± {:.3}",
            p.a, p.b, p.games, p.a_ahead.mean, p.a_ahead.ci95
        );
    }
}
