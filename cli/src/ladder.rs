//! `maumau ladder ...`: joining a ladder (`register`: an owner, a bot and a version, whose key
//! `maumau bot --ladder` uses), the operator's calls on a running server over gRPC (ban, pause, void,
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
    /// Register on a running ladder: an owner (or use your owner key), a bot (or add to one of
    /// yours) and a version; prints the version key once (or writes it to --key-file).
    Register(RegisterArgs),
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
struct RegisterArgs {
    /// The ladder's server: `host:port` or a URL.
    #[arg(long, env = "MAUMAU_ADDR", default_value = "127.0.0.1:50051")]
    server: String,
    /// A new owner's display name (you get an owner key, shown once).
    #[arg(long, required_unless_present = "owner_key")]
    owner: Option<String>,
    /// Your owner key instead of registering a new owner.
    #[arg(
        long,
        env = "MAUMAU_OWNER_KEY",
        hide_env_values = true,
        conflicts_with = "owner"
    )]
    owner_key: Option<String>,
    /// The operator's invitation code, when registration needs one.
    #[arg(long, default_value = "")]
    invitation_code: String,
    /// A new bot's name.
    #[arg(long, required_unless_present = "bot_id")]
    bot: Option<String>,
    /// One of your bots (its id), to add a version to, instead of a new bot.
    #[arg(long, conflicts_with = "bot")]
    bot_id: Option<i64>,
    /// The version's label, unique within the bot (e.g. 1.0.0 or a commit id).
    #[arg(long = "version", value_name = "LABEL", default_value = "1")]
    label: String,
    /// Write the version key to this file (created with mode 0600) instead of printing it.
    #[arg(long, value_name = "PATH")]
    key_file: Option<PathBuf>,
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
        LadderCommand::Register(a) => register(a),
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

/// `maumau ladder register`: the three registration calls, with the keys shown once.
fn register(args: &RegisterArgs) -> Result<(), Box<dyn Error>> {
    use maumau::pb;
    use maumau::pb::ladder_service_client::LadderServiceClient;
    use maumau_bot_sdk::lobby::with_key;
    let url = crate::bot_ladder::url(&args.server);
    // Created before anything is registered, so a key file that cannot be written costs nothing.
    let mut key_file = args.key_file.as_deref().map(create_secret).transpose()?;
    let mut key_written = false;
    let runtime = tokio::runtime::Runtime::new()?;
    let done = runtime.block_on(async {
        use std::io::Write as _;
        // Every line is checked: a failed write (a closed pipe) stops before more is registered.
        let mut out = std::io::stdout().lock();
        let explain = |what: &str, s: tonic::Status| -> Box<dyn Error> {
            let reason = s
                .metadata()
                .get(maumau_ladder_service::LADDER_REASON_TRAILER)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("");
            let hint = match s.code() {
                tonic::Code::Unimplemented => {
                    " (the server does not run the ladder: `maumau serve --ladder`)"
                }
                _ if reason == "LADDER_ERROR_REASON_DUPLICATE" => " (choose another name)",
                _ if reason == "LADDER_ERROR_REASON_INVITATION_REQUIRED" => {
                    " (pass --invitation-code)"
                }
                _ => "",
            };
            format!("{what}: {}{hint}", s.message()).into()
        };
        let channel = tonic::transport::Endpoint::from_shared(url.clone())
            .map_err(|_| format!("`{}` is not a server address", args.server))?
            .connect_timeout(std::time::Duration::from_secs(5))
            .connect()
            .await
            .map_err(|e| format!("cannot reach the server at {url}: {e}"))?;
        let mut ladder = LadderServiceClient::new(channel);
        let owner_key = match (&args.owner_key, &args.owner) {
            (Some(key), _) => key.trim().to_string(),
            (None, Some(name)) => {
                let owner = ladder
                    .register_owner(pb::RegisterOwnerRequest {
                        name: name.clone(),
                        invitation_code: args.invitation_code.clone(),
                    })
                    .await
                    .map_err(|s| explain("cannot register the owner", s))?
                    .into_inner();
                writeln!(
                    out,
                    "owner {name:?} registered (id {}). Your owner key, shown once: keep it to add \
                     bots and versions (--owner-key or MAUMAU_OWNER_KEY):\n  {}",
                    owner.owner_id, owner.owner_key
                )?;
                owner.owner_key
            }
            (None, None) => return Err("give --owner NAME or --owner-key KEY".into()),
        };
        let bot_id = match (args.bot_id, &args.bot) {
            (Some(id), _) => id,
            (None, Some(name)) => {
                let bot = ladder
                    .register_bot(with_key(pb::RegisterBotRequest { name: name.clone() }, &owner_key))
                    .await
                    .map_err(|s| explain("cannot register the bot", s))?
                    .into_inner();
                writeln!(out, "bot {name:?} registered (id {})", bot.bot_id)?;
                bot.bot_id
            }
            (None, None) => return Err("give --bot NAME or --bot-id ID".into()),
        };
        let version = ladder
            .add_version(with_key(
                pb::AddVersionRequest {
                    bot_id,
                    label: args.label.clone(),
                },
                &owner_key,
            ))
            .await
            .map_err(|s| explain("cannot add the version", s))?
            .into_inner();
        // The key file first: the key is shown only once.
        if let (Some(path), Some(file)) = (&args.key_file, &mut key_file) {
            writeln!(file, "{}", version.version_key)
                .and_then(|()| file.sync_all())
                .map_err(|e| {
                    format!(
                        "cannot write the key file {} ({e}); the version key is {}",
                        path.display(),
                        version.version_key
                    )
                })?;
            key_written = true;
        }
        writeln!(out, "version {:?} added (id {})", args.label, version.version_id)?;
        if !version.retired_version_ids.is_empty() {
            writeln!(out, "retired versions: {:?}", version.retired_version_ids)?;
        }
        match &args.key_file {
            Some(path) => {
                writeln!(
                    out,
                    "version key written to {} (mode 0600). Play with:\n  maumau bot --ladder {url} \
                     --key-file {} -- YOUR-PROGRAM ARGS...",
                    path.display(),
                    path.display()
                )?;
            }
            _ => writeln!(
                out,
                "Your version key, shown once: your bot's lobby uses it. Keep it secret: in a file \
                 only you can read (umask 077; cat > ~/.maumau-key) or in the environment \
                 (MAUMAU_LADDER_KEY), not in your code.\n  {}\nPlay with:\n  maumau bot --ladder \
                 {url} --key-file ~/.maumau-key -- YOUR-PROGRAM ARGS...",
                version.version_key
            )?,
        }
        Ok::<(), Box<dyn Error>>(())
    });
    if done.is_err()
        && !key_written
        && let Some(path) = &args.key_file
    {
        // Nothing was written to it: leave no empty key file behind.
        let _ = std::fs::remove_file(path);
    }
    done
}

/// A new file, for a secret, that only its owner may read (mode 0600); refuses to replace an
/// existing file.
fn create_secret(path: &Path) -> Result<std::fs::File, Box<dyn Error>> {
    use std::os::unix::fs::OpenOptionsExt as _;
    Ok(std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot create the key file {}: {e}", path.display()))?)
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
                rejections: 0,
            });
            ladder.record_finish(id, &results, 2).expect("finish");
        }
        let out = rerate(dir.path(), None, false).expect("consistent");
        assert!(out.contains("1 rated matches"), "{out}");
        assert!(out.contains("no difference"), "{out}");
        assert!(rerate(dir.path(), Some("s9"), false).is_err());
    }
}
