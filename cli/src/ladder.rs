//! `maumau ladder ...`: the operator's calls on a running server over gRPC (ban, pause, void,
//! seasons, formats, replay pruning; see `ladder_operator.rs`), and maintenance of a ladder's store
//! run on a stopped server's data directory (`rerate`: the store's lock refuses it while the
//! server runs).

use std::error::Error;
use std::path::{Path, PathBuf};

use maumau_ladder::store::DATABASE_FILE;
use maumau_ladder::{Ladder, LadderConfig, PgStore, SqliteStore, Store};

use crate::ladder_operator::{
    self as op, CloseSeasonArgs, OpenSeasonArgs, PruneArgs, SanctionArgs, SetFormatsArgs, VoidArgs,
};

/// Ladder maintenance.
#[derive(clap::Args)]
pub(crate) struct LadderArgs {
    #[command(subcommand)]
    command: LadderCommand,
}

#[derive(clap::Subcommand)]
enum LadderCommand {
    /// Recompute every season's ratings (or one's) from the stored results and report any
    /// difference from the stored ratings and events; fails if there is one, unless --apply.
    Rerate(RerateArgs),
    /// Ban an owner, bot or version (running server; operator token).
    Ban(SanctionArgs),
    /// Lift the bans of an owner, bot or version (running server; operator token).
    Unban(SanctionArgs),
    /// Pause an owner, bot or version by hand (running server; operator token).
    Pause(SanctionArgs),
    /// Lift every pause of an owner, bot or version (running server; operator token).
    Resume(SanctionArgs),
    /// Void a ladder match: its season and profile are rated again without it (running server;
    /// operator token).
    Void(VoidArgs),
    /// Close (freeze) the open season (running server; operator token).
    CloseSeason(CloseSeasonArgs),
    /// Open a new season with fresh ratings (running server; operator token).
    OpenSeason(OpenSeasonArgs),
    /// Replace the profiles, table sizes and weights the matchmaker makes (running server;
    /// operator token).
    SetFormats(SetFormatsArgs),
    /// Delete stored replays of ended ladder matches by age or beyond a count, keeping results
    /// and ratings (running server; operator token).
    PruneReplays(PruneArgs),
}

#[derive(clap::Args)]
struct RerateArgs {
    /// The server's data directory (the ladder is in its `ladder` folder).
    #[arg(long, default_value = "maumau-data")]
    data_dir: PathBuf,
    /// The ladder's PostgreSQL store (`postgres://...`) instead of the data directory's SQLite
    /// one; the nodes may keep running (each recomputation reads one consistent state only when
    /// no match ends meanwhile, so run it on a quiet ladder).
    #[arg(long, env = "MAUMAU_LADDER_STORE", hide_env_values = true)]
    store: Option<String>,
    /// Only this season (by name).
    #[arg(long)]
    season: Option<String>,
    /// Store the recomputed ratings as `rerate` events where they differ.
    #[arg(long)]
    apply: bool,
}

pub(crate) fn ladder(args: &LadderArgs) -> Result<(), Box<dyn Error>> {
    match &args.command {
        LadderCommand::Rerate(a) => {
            let out = match &a.store {
                Some(url) => {
                    let ladder = Ladder::new(PgStore::open(url)?, LadderConfig::default());
                    let out = rerate_ladder(&ladder, a.season.as_deref(), a.apply);
                    ladder.store().close();
                    out?
                }
                None => rerate(&a.data_dir, a.season.as_deref(), a.apply)?,
            };
            print!("{out}");
            Ok(())
        }
        LadderCommand::Ban(a) => op::run(op::Call::Ban(a)),
        LadderCommand::Unban(a) => op::run(op::Call::Unban(a)),
        LadderCommand::Pause(a) => op::run(op::Call::Pause(a)),
        LadderCommand::Resume(a) => op::run(op::Call::Resume(a)),
        LadderCommand::Void(a) => op::run(op::Call::Void(a)),
        LadderCommand::CloseSeason(a) => op::run(op::Call::CloseSeason(a)),
        LadderCommand::OpenSeason(a) => op::run(op::Call::OpenSeason(a)),
        LadderCommand::SetFormats(a) => op::run(op::Call::SetFormats(a)),
        LadderCommand::PruneReplays(a) => op::run(op::Call::Prune(a)),
    }
}

/// Rerates; returns the report to print, or an error when differences remain.
fn rerate(data_dir: &Path, season: Option<&str>, apply: bool) -> Result<String, Box<dyn Error>> {
    let dir = data_dir.join("ladder");
    if !dir.join(DATABASE_FILE).exists() {
        return Err(format!("no ladder in {}", dir.display()).into());
    }
    let ladder = Ladder::new(SqliteStore::open(&dir)?, LadderConfig::default());
    rerate_ladder(&ladder, season, apply)
}

/// Rerates a ladder in any store; see [`rerate`].
fn rerate_ladder<S: Store + ?Sized>(
    ladder: &Ladder<S>,
    season: Option<&str>,
    apply: bool,
) -> Result<String, Box<dyn Error>> {
    let seasons: Vec<_> = ladder
        .store()
        .seasons()?
        .into_iter()
        .filter(|s| season.is_none_or(|n| n == s.name))
        .collect();
    if seasons.is_empty() {
        return Err(match season {
            Some(n) => format!("no season {n:?}"),
            None => "the ladder has no season".into(),
        }
        .into());
    }
    let mut out = String::new();
    let mut differ = false;
    for s in seasons {
        let report = ladder.rerate(s.id)?;
        out.push_str(&format!("{} ({}): {report}\n", s.name, s.id));
        if !report.is_clean() {
            if apply {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default()
                    .as_millis() as i64;
                let fixed = ladder.apply_rerate(s.id, now)?;
                out.push_str(&format!("  applied {} corrections\n", fixed.len()));
            } else {
                differ = true;
            }
        }
    }
    if differ {
        return Err(format!(
            "{out}stored ratings differ from their recomputation (run with --apply to correct them)"
        )
        .into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use maumau_ladder::store::NewMatch;
    use maumau_ladder::{SeatResult, Store};

    use super::*;

    #[test]
    fn rerate_reports_a_consistent_ladder_and_refuses_a_missing_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(rerate(dir.path(), None, false).is_err(), "no ladder yet");
        {
            let ladder = Ladder::new(
                SqliteStore::open(&dir.path().join("ladder")).expect("open"),
                LadderConfig::default(),
            );
            let season = ladder.store().open_season("s1", 0).expect("season");
            let mut versions = Vec::new();
            for name in ["a", "b"] {
                let (_, key) = ladder.register_owner(name, None, 0).expect("owner");
                let bot = ladder.register_bot(key.as_str(), name, 0).expect("bot");
                versions.push(
                    ladder
                        .add_version(key.as_str(), bot, "v1", 0)
                        .expect("v")
                        .version,
                );
            }
            let id = ladder
                .store()
                .schedule_match(
                    &NewMatch {
                        season,
                        profile: "classic".into(),
                        seed: 1,
                        rated: true,
                        seats: versions,
                    },
                    1,
                )
                .expect("schedule");
            let results = [1, 2].map(|placing| SeatResult {
                placing,
                timeouts: 0,
            });
            ladder.record_finish(id, &results, 2).expect("finish");
        }
        let out = rerate(dir.path(), None, false).expect("consistent");
        assert!(out.contains("1 rated matches"), "{out}");
        assert!(out.contains("no difference"), "{out}");
        assert!(rerate(dir.path(), Some("s9"), false).is_err());
    }
}
