//! `maumau serve --ladder`: the ladder's settings, each flag over its key in the configuration
//! file over the ladder's default; the ladder's flags refused without the ladder.

use std::time::Duration;

use maumau_ladder_service::{LadderFormat, LadderSettings};

use super::ServeArgs;
use super::file::FileConfig;

/// The ladder's settings when the flags or the file turn it on (`None` otherwise); its join
/// deadline must be shorter than the server's `join_timeout`.
pub(super) fn settings(
    args: &ServeArgs,
    file: FileConfig,
    join_timeout: Duration,
) -> Result<Option<LadderSettings>, String> {
    let wanted = args.ladder || file.ladder.unwrap_or(false);
    if !args.house_bots.is_empty() && !wanted {
        return Err("--house-bots keeps bots on the ladder: give --ladder too".into());
    }
    if args.store.is_some() && !wanted {
        return Err("--store is the ladder's storage: give --ladder too".into());
    }
    if !wanted {
        return Ok(None);
    }
    let ms = Duration::from_millis;
    let mut l = LadderSettings::default();
    if !args.ladder_invitation_code.is_empty() {
        l.invitation_codes = args.ladder_invitation_code.clone();
    } else if let Some(codes) = file.ladder_invitation_codes {
        l.invitation_codes = codes;
    }
    if let Some(v) = file.ladder_join_deadline_ms {
        l.join_deadline = ms(v);
    }
    if let Some(v) = file.ladder_probe_interval_ms {
        l.probe_interval = ms(v);
    }
    if let Some(v) = file.ladder_node_address {
        l.node_address = v;
    }
    if let Some(url) = args.store.clone().or(file.ladder_store) {
        l.store = Some(postgres_url(url)?);
    }
    if let Some(n) = file.ladder_store_max_connections {
        if n == 0 {
            return Err("ladder_store_max_connections must be greater than 0".into());
        }
        l.store_max_connections = n;
    }
    if let Some(v) = args
        .registrations_per_minute
        .or(file.registrations_per_minute)
    {
        if v == 0 {
            return Err("registrations_per_minute must be greater than 0".into());
        }
        l.registrations_per_minute = v;
    }
    if let Some(v) = file.ladder_drain_timeout_ms {
        l.drain_timeout = ms(v);
    }
    if let Some(v) = file.ladder_validation {
        l.validation.required = v;
    }
    let house = if args.house_bots.is_empty() {
        file.ladder_house_bots.unwrap_or_default()
    } else {
        args.house_bots.clone()
    };
    l.house_bots = house
        .iter()
        .map(|k| house_bot_kind(k))
        .collect::<Result<_, _>>()?;
    if let Some(formats) = file.ladder_formats {
        l.formats = formats
            .into_iter()
            .map(|f| LadderFormat {
                profile: f.profile,
                seats: f.seats,
                weight: f.weight,
            })
            .collect();
    }
    if l.join_deadline >= join_timeout {
        return Err(format!(
            "ladder_join_deadline_ms ({} ms) must be shorter than join_timeout_ms ({} ms)",
            l.join_deadline.as_millis(),
            join_timeout.as_millis()
        ));
    }
    Ok(Some(l))
}

/// `--store`: a PostgreSQL URL, refused otherwise (without the part before `@`, which may hold a
/// password).
fn postgres_url(url: String) -> Result<String, String> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(format!(
            "--store: expected a postgres:// URL (SQLite is the default and needs none), not {:?}",
            url.split('@').next_back().unwrap_or_default()
        ));
    }
    Ok(url)
}

/// A built-in bot's kind by name, for `--house-bots`.
fn house_bot_kind(name: &str) -> Result<maumau::pb::BotKind, String> {
    match name.trim() {
        "random" => Ok(maumau::pb::BotKind::Random),
        "heuristic" => Ok(maumau::pb::BotKind::Heuristic),
        "search" => Ok(maumau::pb::BotKind::Search),
        other => Err(format!(
            "--house-bots: unknown bot {other:?} (random, heuristic or search)"
        )),
    }
}
