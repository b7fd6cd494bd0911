//! The store's work written once for both databases: the statements, and the order in which a
//! method reads, asks `rules.rs` and writes, over a transaction handle ([`Tx`], see
//! `backend.rs`).
//!
//! Statements use SQLite's `?1` placeholders, rewritten for PostgreSQL by its handle; the few
//! that differ between the dialects stand here side by side (`Dialect::pick`), and PostgreSQL's
//! row locks are appended where SQLite has none (`Dialect::for_update`, `Dialect::for_share`).
//! Column `placing` is quoted (`"placing"`) because it is a reserved word in PostgreSQL; SQLite
//! reads a quoted name as the same column.

use std::collections::HashMap;

use maumau_rating::{Rating, RatingConfig, RatingState};

use super::backend::{Backend, Dialect, Row, Taken, Tx, Value, bad};
use super::rules::{self, Ending, not_found, require};
use super::{
    Bot, KeyRecord, KeySubject, MatchRecord, MatchState, NewMatch, Owner, PlacingStats, RatedMatch,
    RatingCause, RatingChange, RatingEvent, RatingRow, Sanction, SanctionKind, SanctionTarget,
    Season, SeatHistory, SeatRecord, SeatResult, Store, Validation, Version, VersionInfo,
};
use crate::error::{LadderError, Result};
use crate::health::SeatOutcome;
use crate::ids::{BotId, KeyId, MatchId, Millis, OwnerId, SanctionId, SeasonId, VersionId};
use crate::keys::KeyHash;
use crate::matchmaking::Format;

/// A taken unique value as [`crate::error::LadderError::Duplicate`].
fn unique<T>(inserted: std::result::Result<T, Taken>, what: &'static str, name: &str) -> Result<T> {
    inserted.map_err(|_| rules::taken(what, name))
}

/// A new row's id, where no UNIQUE constraint can refuse it (only ids are unique).
fn new_row(inserted: std::result::Result<i64, Taken>) -> Result<i64> {
    inserted.map_err(|taken| {
        let on = taken.0.unwrap_or_default();
        LadderError::Database(format!("a unique constraint {on} refused a new row").into())
    })
}

/// Where names of one kind are kept: the table, its name and name-key columns, and the column
/// and id that scope uniqueness (a version's label is unique within its bot).
struct NameColumns {
    what: &'static str,
    table: &'static str,
    name: &'static str,
    key: &'static str,
    scope: Option<(&'static str, i64)>,
}

/// Refuses `name` when a stored name of its kind looks like it ([`rules::check_distinct`] on the
/// rows with the same [`rules::name_key`], found through the key's index); returns the key to
/// store with the new row. Rows stored before keys were kept get theirs on the way.
fn distinct_name(t: &mut (dyn Tx + '_), c: &NameColumns, name: &str) -> Result<String> {
    let key = rules::name_key(name);
    let (scope, scope_id) = match c.scope {
        Some((column, id)) => (format!(" AND {column} = ?2"), Some(id)),
        None => (String::new(), None),
    };
    let mut params: Vec<Value<'_>> = vec![key.as_str().into()];
    params.extend(scope_id.map(Value::from));
    let sql = format!(
        "SELECT id, {name}, {key} FROM {table} WHERE ({key} = ?1 OR {key} IS NULL){scope}",
        name = c.name,
        key = c.key,
        table = c.table,
    );
    let rows = t.rows(&sql, &params, |r| {
        Ok((r.i64(0)?, r.string(1)?, r.opt_string(2)?))
    })?;
    let update = format!("UPDATE {} SET {} = ?1 WHERE id = ?2", c.table, c.key);
    for (id, old, _) in rows.iter().filter(|r| r.2.is_none()) {
        t.execute(
            &update,
            &[rules::name_key(old).as_str().into(), (*id).into()],
        )?;
    }
    rules::check_distinct(c.what, name, rows.iter().map(|r| r.1.as_str()))?;
    Ok(key)
}

const KEY_COLUMNS: &str = "id, kind, owner_id, version_id, hash, created_ms, revoked_ms";

fn key_from_row(r: &dyn Row) -> Result<KeyRecord> {
    let kind = r.string(1)?;
    let subject = rules::key_subject(&kind, r.opt_i64(2)?, r.opt_i64(3)?)
        .ok_or_else(|| bad("key kind", &kind))?;
    let hash = r.blob(4)?;
    let hash: [u8; 32] = hash
        .as_slice()
        .try_into()
        .map_err(|_| bad("key hash length", &hash.len().to_string()))?;
    Ok(KeyRecord {
        id: KeyId(r.i64(0)?),
        subject,
        hash: KeyHash(hash),
        created_ms: r.i64(5)?,
        revoked_ms: r.opt_i64(6)?,
    })
}

const VERSION_COLUMNS: &str = "id, bot_id, label, created_ms, retired_ms";

fn version_from_row(r: &dyn Row) -> Result<Version> {
    Ok(Version {
        id: VersionId(r.i64(0)?),
        bot: BotId(r.i64(1)?),
        label: r.string(2)?,
        created_ms: r.i64(3)?,
        retired_ms: r.opt_i64(4)?,
    })
}

const BOT_COLUMNS: &str = "id, owner_id, name, created_ms";

fn bot_from_row(r: &dyn Row) -> Result<Bot> {
    Ok(Bot {
        id: BotId(r.i64(0)?),
        owner: OwnerId(r.i64(1)?),
        name: r.string(2)?,
        created_ms: r.i64(3)?,
    })
}

const SEASON_COLUMNS: &str = "id, name, opened_ms, closed_ms";

fn season_from_row(r: &dyn Row) -> Result<Season> {
    Ok(Season {
        id: SeasonId(r.i64(0)?),
        name: r.string(1)?,
        opened_ms: r.i64(2)?,
        closed_ms: r.opt_i64(3)?,
    })
}

const SANCTION_COLUMNS: &str =
    "id, target, target_id, kind, reason, created_ms, lifted_ms, lifted_reason";

fn sanction_from_row(r: &dyn Row) -> Result<Sanction> {
    let target = r.string(1)?;
    let target = rules::sanction_target(&target, r.i64(2)?)
        .ok_or_else(|| bad("sanction target", &target))?;
    let kind = r.string(3)?;
    Ok(Sanction {
        id: SanctionId(r.i64(0)?),
        target,
        kind: SanctionKind::from_str_opt(&kind).ok_or_else(|| bad("sanction kind", &kind))?,
        reason: r.string(4)?,
        created_ms: r.i64(5)?,
        lifted_ms: r.opt_i64(6)?,
        lifted_reason: r.opt_string(7)?,
    })
}

const MATCH_COLUMNS: &str = "id, season_id, profile, seed, rated, state, rated_seq, \
                                        created_ms, started_ms, ended_ms, reason, server_match_id";

fn match_from_row(r: &dyn Row) -> Result<MatchRecord> {
    let state = r.string(5)?;
    Ok(MatchRecord {
        id: MatchId(r.i64(0)?),
        season: SeasonId(r.i64(1)?),
        profile: r.string(2)?,
        seed: r.i64(3)? as u64,
        rated: r.bool(4)?,
        state: MatchState::from_str_opt(&state).ok_or_else(|| bad("match state", &state))?,
        rated_seq: r.opt_i64(6)?,
        created_ms: r.i64(7)?,
        started_ms: r.opt_i64(8)?,
        ended_ms: r.opt_i64(9)?,
        reason: r.opt_string(10)?,
        server_match_id: r.opt_string(11)?,
        seats: Vec::new(),
    })
}

/// A match state read from column `i`.
fn state_at(r: &dyn Row, i: usize) -> Result<MatchState> {
    let state = r.string(i)?;
    MatchState::from_str_opt(&state).ok_or_else(|| bad("match state", &state))
}

/// A seat from the columns `version_id, "placing", joined, timeouts` starting at `first`.
fn seat_from(r: &dyn Row, first: usize) -> Result<SeatRecord> {
    Ok(rules::seat_record(
        VersionId(r.i64(first)?),
        r.opt_u8(first + 1)?,
        r.opt_bool(first + 2)?,
        r.u32(first + 3)?,
        r.u32(first + 4)?,
    ))
}

/// A rating from the columns `mu, sigma, matches` starting at `first`.
fn rating_from(r: &dyn Row, first: usize) -> Result<RatingState> {
    Ok(RatingState {
        rating: Rating {
            mu: r.f64(first)?,
            sigma: r.f64(first + 1)?,
        },
        matches: r.u32(first + 2)?,
    })
}

/// Loads a match; with `lock`, locks its row until the transaction ends (PostgreSQL).
pub(super) fn load_match(t: &mut dyn Tx, id: MatchId, lock: bool) -> Result<MatchRecord> {
    let lock = if lock { t.dialect().for_update() } else { "" };
    let sql = format!("SELECT {MATCH_COLUMNS} FROM matches WHERE id = ?1{lock}");
    let mut m = t
        .opt(&sql, &[id.0.into()], match_from_row)?
        .ok_or_else(|| not_found("match", id))?;
    m.seats = t.rows(
        "SELECT version_id, \"placing\", joined, timeouts, rejections FROM match_seats
         WHERE match_id = ?1 ORDER BY seat",
        &[m.id.0.into()],
        |r| seat_from(r, 0),
    )?;
    Ok(m)
}

/// The matches a query over [`MATCH_COLUMNS`] returns, with their seats.
fn load_matches(t: &mut dyn Tx, sql: &str, params: &[Value<'_>]) -> Result<Vec<MatchRecord>> {
    let mut ms = t.rows(sql, params, match_from_row)?;
    if ms.is_empty() {
        return Ok(ms);
    }
    // The seats of all of them in one query, not one per match (the matchmaker reads dozens
    // of matches every round).
    let ids: Vec<i64> = ms.iter().map(|m| m.id.0).collect();
    let at: HashMap<i64, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let sql = t.dialect().pick(
        "SELECT match_id, version_id, \"placing\", joined, timeouts, rejections FROM match_seats
         WHERE match_id IN (SELECT value FROM json_each(?1)) ORDER BY match_id, seat",
        "SELECT match_id, version_id, \"placing\", joined, timeouts, rejections FROM match_seats
         WHERE match_id = ANY(?1) ORDER BY match_id, seat",
    );
    t.query_each(sql, &[ids.as_slice().into()], &mut |r| {
        if let Some(&i) = at.get(&r.i64(0)?) {
            ms[i].seats.push(seat_from(r, 1)?);
        }
        Ok(())
    })?;
    Ok(ms)
}

/// One version's current rating in a season and profile.
fn read_rating(
    t: &mut dyn Tx,
    season: SeasonId,
    profile: &str,
    version: VersionId,
) -> Result<Option<RatingState>> {
    t.opt(
        "SELECT mu, sigma, matches FROM ratings
         WHERE season_id = ?1 AND profile = ?2 AND version_id = ?3",
        &[season.0.into(), profile.into(), version.0.into()],
        |r| rating_from(r, 0),
    )
}

/// Writes rating changes as events of `cause` and as the current ratings.
fn write_changes(
    t: &mut dyn Tx,
    season: SeasonId,
    match_id: Option<MatchId>,
    cause: RatingCause,
    changes: &[RatingChange],
    now: Millis,
) -> Result<()> {
    for ch in changes {
        t.execute(
            "INSERT INTO rating_events (season_id, profile, version_id, match_id, cause,
                 mu_before, sigma_before, matches_before, mu_after, sigma_after, matches_after,
                 created_ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            &[
                season.0.into(),
                (&ch.profile).into(),
                ch.version.0.into(),
                match_id.map(|m| m.0).into(),
                cause.as_str().into(),
                ch.before.rating.mu.into(),
                ch.before.rating.sigma.into(),
                ch.before.matches.into(),
                ch.after.rating.mu.into(),
                ch.after.rating.sigma.into(),
                ch.after.matches.into(),
                now.into(),
            ],
        )?;
        t.execute(
            "INSERT INTO ratings (season_id, profile, version_id, mu, sigma, matches)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (season_id, profile, version_id)
             DO UPDATE SET mu = excluded.mu, sigma = excluded.sigma, matches = excluded.matches",
            &[
                season.0.into(),
                (&ch.profile).into(),
                ch.version.0.into(),
                ch.after.rating.mu.into(),
                ch.after.rating.sigma.into(),
                ch.after.matches.into(),
            ],
        )?;
    }
    Ok(())
}

/// The season's finished rated matches, in the order they were rated.
fn rated_matches_of(t: &mut dyn Tx, season: SeasonId) -> Result<Vec<RatedMatch>> {
    let rows = t.rows(
        "SELECT m.id, m.profile, s.version_id, s.\"placing\"
         FROM matches m JOIN match_seats s ON s.match_id = m.id
         WHERE m.season_id = ?1 AND m.state = 'finished' AND m.rated = TRUE
           AND m.rated_seq IS NOT NULL
         ORDER BY m.rated_seq, s.seat",
        &[season.0.into()],
        |r| {
            Ok((
                MatchId(r.i64(0)?),
                r.string(1)?,
                VersionId(r.i64(2)?),
                r.opt_u8(3)?,
            ))
        },
    )?;
    rules::group_rated_matches(rows)
}

/// Current ratings in a season, by profile then version.
fn ratings_of(t: &mut dyn Tx, season: SeasonId) -> Result<Vec<RatingRow>> {
    t.rows(
        "SELECT profile, version_id, mu, sigma, matches FROM ratings
         WHERE season_id = ?1 ORDER BY profile, version_id",
        &[season.0.into()],
        |r| {
            Ok(RatingRow {
                season,
                profile: r.string(0)?,
                version: VersionId(r.i64(1)?),
                state: rating_from(r, 2)?,
            })
        },
    )
}

/// Issues a key for a subject that must exist.
fn insert_key(t: &mut dyn Tx, subject: KeySubject, hash: &KeyHash, now: Millis) -> Result<KeyId> {
    let (table, col, id) = rules::key_columns(subject);
    rules::require_subject(t.exists(table, id)?, subject)?;
    let sql = format!("INSERT INTO keys (kind, {col}, hash, created_ms) VALUES (?1, ?2, ?3, ?4)");
    let params = [
        subject.kind().as_str().into(),
        id.into(),
        hash.0.as_slice().into(),
        now.into(),
    ];
    unique(t.insert(&sql, &params)?, "key", "(hash)").map(KeyId)
}

/// Schedules a match (see [`super::Store::schedule_match`]; the caller checked its seats). On
/// PostgreSQL the season and the versions are locked against closing and retiring meanwhile.
pub(super) fn schedule_in(t: &mut dyn Tx, m: &NewMatch, now: Millis) -> Result<MatchId> {
    let share = t.dialect().for_share();
    let sql = format!("SELECT closed_ms FROM seasons WHERE id = ?1{share}");
    let closed = t.opt(&sql, &[m.season.0.into()], |r| r.opt_i64(0))?;
    rules::check_season_takes_matches(m.season, closed)?;
    let sql = format!("SELECT retired_ms FROM versions WHERE id = ?1{share}");
    for v in &m.seats {
        let retired = t.opt(&sql, &[v.0.into()], |r| r.opt_i64(0))?;
        rules::check_version_takes_seat(*v, retired)?;
    }
    let id = t.insert(
        "INSERT INTO matches (season_id, profile, seed, rated, state, created_ms)
         VALUES (?1, ?2, ?3, ?4, 'scheduled', ?5)",
        &[
            m.season.0.into(),
            (&m.profile).into(),
            (m.seed as i64).into(),
            m.rated.into(),
            now.into(),
        ],
    )?;
    let id = new_row(id)?;
    for (i, v) in m.seats.iter().enumerate() {
        t.execute(
            "INSERT INTO match_seats (match_id, seat, version_id) VALUES (?1, ?2, ?3)",
            &[id.into(), i.into(), v.0.into()],
        )?;
    }
    Ok(MatchId(id))
}

/// Finishes a match (see [`super::Store::finish_match`]).
fn finish_in(
    t: &mut dyn Tx,
    id: MatchId,
    results: &[SeatResult],
    config: &RatingConfig,
    now: Millis,
) -> Result<Vec<RatingChange>> {
    t.lock_ratings()?;
    let m = load_match(t, id, true)?;
    let placings = rules::check_finish(&m, results)?;
    let season_open = t.one(
        "SELECT closed_ms IS NULL FROM seasons WHERE id = ?1",
        &[m.season.0.into()],
        |r| r.bool(0),
    )?;
    let rated = rules::finish_is_rated(&m, season_open);
    for (i, r) in results.iter().enumerate() {
        t.execute(
            "UPDATE match_seats SET \"placing\" = ?1, joined = TRUE, timeouts = ?2,
                 rejections = ?3
             WHERE match_id = ?4 AND seat = ?5",
            &[
                r.placing.into(),
                r.timeouts.into(),
                r.rejections.into(),
                id.0.into(),
                i.into(),
            ],
        )?;
    }
    let mut changes = Vec::new();
    let mut seq = None;
    if rated {
        let mut before = Vec::with_capacity(m.seats.len());
        for s in &m.seats {
            before.push(read_rating(t, m.season, &m.profile, s.version)?.unwrap_or_default());
        }
        changes = rules::rate_finish(config, &m, &placings, &before)?;
        write_changes(t, m.season, Some(id), RatingCause::Match, &changes, now)?;
        seq = Some(t.one(
            "SELECT COALESCE(MAX(rated_seq), 0) + 1 FROM matches",
            &[],
            |r| r.i64(0),
        )?);
    }
    t.execute(
        "UPDATE matches SET state = 'finished', rated = ?1, rated_seq = ?2,
             started_ms = COALESCE(started_ms, ?3), ended_ms = ?3
         WHERE id = ?4",
        &[rated.into(), seq.into(), now.into(), id.0.into()],
    )?;
    Ok(changes)
}

/// Aborts a match (see [`super::Store::abort_match`]).
pub(super) fn abort_in(
    t: &mut dyn Tx,
    id: MatchId,
    outcomes: &[SeatOutcome],
    reason: &str,
    now: Millis,
) -> Result<()> {
    rules::check_abort(&load_match(t, id, true)?, outcomes)?;
    for (i, o) in outcomes.iter().enumerate() {
        t.execute(
            "UPDATE match_seats SET joined = ?1, timeouts = ?2, rejections = ?3
             WHERE match_id = ?4 AND seat = ?5",
            &[
                o.joined.into(),
                o.timeouts.into(),
                o.rejections.into(),
                id.0.into(),
                i.into(),
            ],
        )?;
    }
    t.execute(
        "UPDATE matches SET state = 'aborted', ended_ms = ?1, reason = ?2 WHERE id = ?3",
        &[now.into(), reason.into(), id.0.into()],
    )?;
    Ok(())
}

/// Every method of [`Store`], once, for any `Backend`: SQLite and PostgreSQL differ only in
/// their handles (`sqlite.rs`, `postgres.rs`).
impl<B: Backend> Store for B {
    fn create_owner(&self, name: &str, key: &KeyHash, now: Millis) -> Result<OwnerId> {
        rules::check_name("owner", name)?;
        self.write(|t| {
            let columns = NameColumns {
                what: "owner",
                table: "owners",
                name: "name",
                key: "name_key",
                scope: None,
            };
            let name_key = distinct_name(t, &columns, name)?;
            let id = t.insert(
                "INSERT INTO owners (name, name_key, created_ms) VALUES (?1, ?2, ?3)",
                &[name.into(), name_key.as_str().into(), now.into()],
            )?;
            let id = unique(id, "owner", name)?;
            let key = t.insert(
                "INSERT INTO keys (kind, owner_id, hash, created_ms) VALUES ('owner', ?1, ?2, ?3)",
                &[id.into(), key.0.as_slice().into(), now.into()],
            )?;
            unique(key, "key", "(hash)")?;
            Ok(OwnerId(id))
        })
    }

    fn owner_named(&self, name: &str) -> Result<Option<Owner>> {
        self.read(|t| {
            t.opt(
                "SELECT id, created_ms FROM owners WHERE name = ?1",
                &[name.into()],
                |r| {
                    Ok(Owner {
                        id: OwnerId(r.i64(0)?),
                        name: name.to_string(),
                        created_ms: r.i64(1)?,
                    })
                },
            )
        })
    }

    fn owner(&self, id: OwnerId) -> Result<Owner> {
        self.read(|t| {
            t.opt(
                "SELECT name, created_ms FROM owners WHERE id = ?1",
                &[id.0.into()],
                |r| {
                    Ok(Owner {
                        id,
                        name: r.string(0)?,
                        created_ms: r.i64(1)?,
                    })
                },
            )?
            .ok_or_else(|| not_found("owner", id))
        })
    }

    fn create_bot(&self, owner: OwnerId, name: &str, now: Millis) -> Result<BotId> {
        rules::check_name("bot", name)?;
        self.write(|t| {
            require(t.exists("owners", owner.0)?, "owner", owner)?;
            let columns = NameColumns {
                what: "bot",
                table: "bots",
                name: "name",
                key: "name_key",
                scope: None,
            };
            let name_key = distinct_name(t, &columns, name)?;
            let id = t.insert(
                "INSERT INTO bots (owner_id, name, name_key, created_ms) VALUES (?1, ?2, ?3, ?4)",
                &[
                    owner.0.into(),
                    name.into(),
                    name_key.as_str().into(),
                    now.into(),
                ],
            )?;
            unique(id, "bot", name).map(BotId)
        })
    }

    fn bot(&self, id: BotId) -> Result<Bot> {
        self.read(|t| {
            let sql = format!("SELECT {BOT_COLUMNS} FROM bots WHERE id = ?1");
            t.opt(&sql, &[id.0.into()], bot_from_row)?
                .ok_or_else(|| not_found("bot", id))
        })
    }

    fn bots_of(&self, owner: OwnerId) -> Result<Vec<Bot>> {
        self.read(|t| {
            let sql = format!("SELECT {BOT_COLUMNS} FROM bots WHERE owner_id = ?1 ORDER BY id");
            t.rows(&sql, &[owner.0.into()], bot_from_row)
        })
    }

    fn create_version(
        &self,
        bot: BotId,
        label: &str,
        key: &KeyHash,
        keep_active: usize,
        now: Millis,
    ) -> Result<(VersionId, Vec<VersionId>)> {
        rules::check_name("version", label)?;
        rules::check_keep_active(keep_active)?;
        self.write(|t| {
            // On PostgreSQL this locks the bot, so that two new versions of one bot retire in
            // turn.
            let sql = format!(
                "SELECT 1 FROM bots WHERE id = ?1{}",
                t.dialect().for_update()
            );
            let found = t.opt(&sql, &[bot.0.into()], |_| Ok(()))?.is_some();
            require(found, "bot", bot)?;
            let columns = NameColumns {
                what: "version",
                table: "versions",
                name: "label",
                key: "label_key",
                scope: Some(("bot_id", bot.0)),
            };
            let label_key = distinct_name(t, &columns, label)?;
            let id = t.insert(
                "INSERT INTO versions (bot_id, label, label_key, created_ms)
                 VALUES (?1, ?2, ?3, ?4)",
                &[
                    bot.0.into(),
                    label.into(),
                    label_key.as_str().into(),
                    now.into(),
                ],
            )?;
            let id = VersionId(unique(id, "version", label)?);
            let inserted = t.insert(
                "INSERT INTO keys (kind, version_id, hash, created_ms)
                 VALUES ('version', ?1, ?2, ?3)",
                &[id.0.into(), key.0.as_slice().into(), now.into()],
            )?;
            unique(inserted, "key", "(hash)")?;
            let active = t.rows(
                "SELECT id FROM versions WHERE bot_id = ?1 AND retired_ms IS NULL
                 ORDER BY created_ms DESC, id DESC",
                &[bot.0.into()],
                |r| Ok(VersionId(r.i64(0)?)),
            )?;
            let retired = rules::versions_to_retire(&active, keep_active);
            for old in &retired {
                t.execute(
                    "UPDATE versions SET retired_ms = ?1 WHERE id = ?2",
                    &[now.into(), old.0.into()],
                )?;
            }
            Ok((id, retired))
        })
    }

    fn version(&self, id: VersionId) -> Result<Version> {
        self.read(|t| {
            let sql = format!("SELECT {VERSION_COLUMNS} FROM versions WHERE id = ?1");
            t.opt(&sql, &[id.0.into()], version_from_row)?
                .ok_or_else(|| not_found("version", id))
        })
    }

    fn versions_of(&self, bot: BotId) -> Result<Vec<Version>> {
        self.read(|t| {
            let sql = format!(
                "SELECT {VERSION_COLUMNS} FROM versions WHERE bot_id = ?1
                 ORDER BY created_ms DESC, id DESC"
            );
            t.rows(&sql, &[bot.0.into()], version_from_row)
        })
    }

    fn active_versions(&self) -> Result<Vec<VersionInfo>> {
        self.read(|t| {
            t.rows(
                "SELECT v.id, v.bot_id, b.owner_id FROM versions v JOIN bots b ON b.id = v.bot_id
                 WHERE v.retired_ms IS NULL ORDER BY v.id",
                &[],
                |r| {
                    Ok(VersionInfo {
                        version: VersionId(r.i64(0)?),
                        bot: BotId(r.i64(1)?),
                        owner: OwnerId(r.i64(2)?),
                    })
                },
            )
        })
    }

    fn key_by_hash(&self, hash: &KeyHash) -> Result<Option<KeyRecord>> {
        self.read(|t| {
            let sql = format!("SELECT {KEY_COLUMNS} FROM keys WHERE hash = ?1");
            t.opt(&sql, &[hash.0.as_slice().into()], key_from_row)
        })
    }

    fn add_key(&self, subject: KeySubject, hash: &KeyHash, now: Millis) -> Result<KeyId> {
        self.write(|t| insert_key(t, subject, hash, now))
    }

    fn keys_of(&self, subject: KeySubject) -> Result<Vec<KeyRecord>> {
        self.read(|t| {
            let (_, col, id) = rules::key_columns(subject);
            let sql = format!("SELECT {KEY_COLUMNS} FROM keys WHERE {col} = ?1 ORDER BY id");
            t.rows(&sql, &[id.into()], key_from_row)
        })
    }

    fn revoke_key(&self, id: KeyId, now: Millis) -> Result<()> {
        self.write(|t| {
            require(t.exists("keys", id.0)?, "key", id)?;
            t.execute(
                "UPDATE keys SET revoked_ms = ?1 WHERE id = ?2 AND revoked_ms IS NULL",
                &[now.into(), id.0.into()],
            )?;
            Ok(())
        })
    }

    fn rotate_key(&self, old: KeyId, new: &KeyHash, now: Millis) -> Result<KeyId> {
        self.write(|t| {
            let lock = t.dialect().for_update();
            let sql = format!("SELECT {KEY_COLUMNS} FROM keys WHERE id = ?1{lock}");
            let rec = t
                .opt(&sql, &[old.0.into()], key_from_row)?
                .ok_or_else(|| not_found("key", old))?;
            rules::check_rotatable(&rec)?;
            t.execute(
                "UPDATE keys SET revoked_ms = ?1 WHERE id = ?2",
                &[now.into(), old.0.into()],
            )?;
            insert_key(t, rec.subject, new, now)
        })
    }

    fn open_season(&self, name: &str, now: Millis) -> Result<SeasonId> {
        rules::check_name("season", name)?;
        self.write(|t| {
            let open = t.opt(
                "SELECT name FROM seasons WHERE closed_ms IS NULL",
                &[],
                |r| r.string(0),
            )?;
            rules::check_no_open_season(open.as_deref())?;
            let id = t.insert(
                "INSERT INTO seasons (name, opened_ms) VALUES (?1, ?2)",
                &[name.into(), now.into()],
            )?;
            match id {
                Ok(id) => Ok(SeasonId(id)),
                // Two nodes opening a season at once (PostgreSQL): the one-open index refuses
                // the second.
                Err(Taken(Some(index))) if index == "seasons_one_open" => {
                    Err(rules::season_opened_meanwhile())
                }
                Err(_) => Err(rules::taken("season", name)),
            }
        })
    }

    fn close_season(&self, id: SeasonId, now: Millis) -> Result<()> {
        self.write(|t| {
            require(t.exists("seasons", id.0)?, "season", id)?;
            let n = t.execute(
                "UPDATE seasons SET closed_ms = ?1 WHERE id = ?2 AND closed_ms IS NULL",
                &[now.into(), id.0.into()],
            )?;
            rules::check_season_closed_now(id, n > 0)
        })
    }

    fn current_season(&self) -> Result<Option<Season>> {
        self.read(|t| {
            let sql = format!("SELECT {SEASON_COLUMNS} FROM seasons WHERE closed_ms IS NULL");
            t.opt(&sql, &[], season_from_row)
        })
    }

    fn seasons(&self) -> Result<Vec<Season>> {
        self.read(|t| {
            let sql = format!("SELECT {SEASON_COLUMNS} FROM seasons ORDER BY id");
            t.rows(&sql, &[], season_from_row)
        })
    }

    fn set_formats(&self, formats: &[Format], now: Millis) -> Result<()> {
        self.write(|t| {
            // Two nodes setting formats at once (PostgreSQL): the second waits for the first,
            // then replaces its rows whole. SQLite has one writer.
            if t.dialect() == Dialect::Postgres {
                t.execute("LOCK TABLE formats IN SHARE ROW EXCLUSIVE MODE", &[])?;
            }
            t.execute("DELETE FROM formats", &[])?;
            for (position, f) in formats.iter().enumerate() {
                t.execute(
                    "INSERT INTO formats (position, profile, seats, weight, set_ms) \
                     VALUES (?1, ?2, ?3, ?4, ?5)",
                    &[
                        position.into(),
                        (&f.profile).into(),
                        f.seats.into(),
                        f.weight.into(),
                        now.into(),
                    ],
                )?;
            }
            Ok(())
        })
    }

    fn formats(&self) -> Result<Option<(Vec<Format>, Millis)>> {
        self.read(|t| {
            let rows = t.rows(
                "SELECT profile, seats, weight, set_ms FROM formats ORDER BY position",
                &[],
                |r| {
                    let seats = r.u32(1)?;
                    let seats =
                        u8::try_from(seats).map_err(|_| bad("table size", &seats.to_string()))?;
                    let format = Format {
                        profile: r.string(0)?,
                        seats,
                        weight: r.f64(2)?,
                    };
                    Ok((format, r.i64(3)?))
                },
            )?;
            let set = rows.first().map(|(_, ms)| *ms);
            Ok(set.map(|ms| (rows.into_iter().map(|(f, _)| f).collect(), ms)))
        })
    }

    fn schedule_match(&self, m: &NewMatch, now: Millis) -> Result<MatchId> {
        rules::check_new_match(m)?;
        self.write(|t| schedule_in(t, m, now))
    }

    fn set_server_match_id(&self, id: MatchId, server_match_id: &str) -> Result<()> {
        self.write(|t| {
            rules::check_server_match_id(&load_match(t, id, true)?, server_match_id)?;
            t.execute(
                "UPDATE matches SET server_match_id = ?1 WHERE id = ?2",
                &[server_match_id.into(), id.0.into()],
            )?;
            Ok(())
        })
    }

    fn server_match_ids(&self) -> Result<Vec<String>> {
        self.read(|t| {
            t.rows(
                "SELECT server_match_id FROM matches WHERE server_match_id IS NOT NULL
                 ORDER BY id",
                &[],
                |r| r.string(0),
            )
        })
    }

    fn start_match(&self, id: MatchId, now: Millis) -> Result<()> {
        self.write(|t| {
            rules::check_start(&load_match(t, id, true)?)?;
            t.execute(
                "UPDATE matches SET state = 'running', started_ms = ?1 WHERE id = ?2",
                &[now.into(), id.0.into()],
            )?;
            Ok(())
        })
    }

    fn finish_match(
        &self,
        id: MatchId,
        results: &[SeatResult],
        config: &RatingConfig,
        now: Millis,
    ) -> Result<Vec<RatingChange>> {
        self.write(|t| {
            t.lock_ratings()?;
            load_match(t, id, true)?;
            self.check_lease(t, id)?;
            finish_in(t, id, results, config, now)
        })
    }

    fn abort_match(
        &self,
        id: MatchId,
        outcomes: &[SeatOutcome],
        reason: &str,
        now: Millis,
    ) -> Result<()> {
        self.write(|t| {
            load_match(t, id, true)?;
            self.check_lease(t, id)?;
            abort_in(t, id, outcomes, reason, now)
        })
    }

    fn abort_uninvited(&self, id: MatchId, reason: &str, now: Millis) -> Result<()> {
        self.write(|t| {
            let m = load_match(t, id, true)?;
            rules::check_can_end(&m, Ending::Abort)?;
            if m.state != MatchState::Scheduled {
                return Err(LadderError::State(format!(
                    "match {id} is {}: its invitations went out",
                    m.state.as_str()
                )));
            }
            self.check_lease(t, id)?;
            t.execute(
                "UPDATE matches SET state = 'aborted', ended_ms = ?1, reason = ?2 WHERE id = ?3",
                &[now.into(), reason.into(), id.0.into()],
            )?;
            Ok(())
        })
    }

    fn finish_validation(
        &self,
        id: MatchId,
        outcome: SeatOutcome,
        reasons: &[String],
        now: Millis,
    ) -> Result<()> {
        self.write(|t| {
            let m = load_match(t, id, true)?;
            rules::check_can_end(&m, Ending::Finish)?;
            self.check_lease(t, id)?;
            let version = rules::validation_version(&m)?;
            let (passed, reasons) = rules::verdict_to_text(reasons);
            t.execute(
                "UPDATE match_seats SET joined = ?1, timeouts = ?2, rejections = ?3
                 WHERE match_id = ?4",
                &[
                    outcome.joined.into(),
                    outcome.timeouts.into(),
                    outcome.rejections.into(),
                    id.0.into(),
                ],
            )?;
            t.execute(
                "UPDATE matches SET state = 'finished', started_ms = COALESCE(started_ms, ?1),
                     ended_ms = ?1 WHERE id = ?2",
                &[now.into(), id.0.into()],
            )?;
            t.execute(
                "INSERT INTO validations (match_id, version_id, passed, reasons)
                 VALUES (?1, ?2, ?3, ?4)",
                &[
                    id.0.into(),
                    version.0.into(),
                    passed.into(),
                    (&reasons).into(),
                ],
            )?;
            Ok(())
        })
    }

    fn validations_of(&self, version: VersionId) -> Result<Vec<Validation>> {
        self.read(|t| {
            t.rows(
                "SELECT v.match_id, m.profile, v.passed, v.reasons, m.ended_ms, m.server_match_id
                 FROM validations v JOIN matches m ON m.id = v.match_id
                 WHERE v.version_id = ?1 AND m.state = 'finished' ORDER BY v.match_id",
                &[version.0.into()],
                |r| {
                    Ok(Validation {
                        match_id: MatchId(r.i64(0)?),
                        version,
                        profile: r.string(1)?,
                        passed: r.bool(2)?,
                        reasons: rules::reasons_from_text(&r.string(3)?),
                        ended_ms: r.opt_i64(4)?.unwrap_or(0),
                        server_match_id: r.opt_string(5)?,
                    })
                },
            )
        })
    }

    fn void_match(
        &self,
        id: MatchId,
        reason: &str,
        config: &RatingConfig,
        now: Millis,
    ) -> Result<Vec<RatingChange>> {
        rules::check_void_reason(reason)?;
        self.write(|t| {
            t.lock_ratings()?;
            let m = load_match(t, id, true)?;
            let was_rated = rules::check_voidable(&m)?;
            t.execute(
                "UPDATE matches SET state = 'void', reason = ?1, ended_ms = COALESCE(ended_ms, ?2)
                 WHERE id = ?3",
                &[reason.into(), now.into(), id.0.into()],
            )?;
            if !was_rated {
                return Ok(Vec::new());
            }
            let matches = rated_matches_of(t, m.season)?;
            let ratings = ratings_of(t, m.season)?;
            let changes = rules::void_changes(config, &m, matches, ratings);
            write_changes(t, m.season, Some(id), RatingCause::Void, &changes, now)?;
            Ok(changes)
        })
    }

    fn match_record(&self, id: MatchId) -> Result<MatchRecord> {
        self.read(|t| load_match(t, id, false))
    }

    fn matches_in_state(&self, state: MatchState) -> Result<Vec<MatchRecord>> {
        self.read(|t| {
            let sql = format!("SELECT {MATCH_COLUMNS} FROM matches WHERE state = ?1 ORDER BY id");
            load_matches(t, &sql, &[state.as_str().into()])
        })
    }

    fn recent_matches(&self, limit: usize) -> Result<Vec<MatchRecord>> {
        self.read(|t| {
            // The limit is written into the SQL, not bound: SQLite re-prepares a statement
            // whenever a new LIMIT value is bound, which undoes its statement cache.
            let sql = format!("SELECT {MATCH_COLUMNS} FROM matches ORDER BY id DESC LIMIT {limit}");
            load_matches(t, &sql, &[])
        })
    }

    fn seat_history(
        &self,
        version: VersionId,
        since: Option<Millis>,
        limit: usize,
    ) -> Result<Vec<SeatHistory>> {
        self.read(|t| {
            // The limit is in the SQL, not bound (see `recent_matches`).
            let sql = format!(
                "SELECT m.id, m.state, m.ended_ms, s.joined, s.timeouts, s.rejections
                 FROM match_seats s JOIN matches m ON m.id = s.match_id
                 WHERE s.version_id = ?1 AND (s.joined IS NOT NULL OR m.state = 'aborted')
                   AND m.ended_ms IS NOT NULL AND m.ended_ms > ?2
                 ORDER BY s.match_id DESC LIMIT {limit}"
            );
            let since = since.unwrap_or(Millis::MIN);
            t.rows(&sql, &[version.0.into(), since.into()], |r| {
                Ok(SeatHistory {
                    match_id: MatchId(r.i64(0)?),
                    state: state_at(r, 1)?,
                    ended_ms: r.i64(2)?,
                    outcome: SeatOutcome {
                        joined: r.opt_bool(3)?.unwrap_or(false),
                        timeouts: r.u32(4)?,
                        rejections: r.u32(5)?,
                    },
                    invited: r.opt_bool(3)?.is_some(),
                })
            })
        })
    }

    fn last_scheduled(&self) -> Result<Vec<(VersionId, Millis)>> {
        self.read(|t| {
            let rows = t.rows(
                // One indexed lookup per version (match_seats_version) instead of a scan of every
                // seat ever played: the matchmaker asks every round. Ids grow with creation.
                "SELECT v.id, (SELECT m.created_ms FROM match_seats s
                               JOIN matches m ON m.id = s.match_id
                               WHERE s.version_id = v.id ORDER BY s.match_id DESC LIMIT 1) AS last
                 FROM versions v ORDER BY v.id",
                &[],
                |r| Ok((VersionId(r.i64(0)?), r.opt_i64(1)?)),
            )?;
            Ok(rows
                .into_iter()
                .filter_map(|(v, last)| Some((v, last?)))
                .collect())
        })
    }

    fn placing_stats(&self, season: SeasonId, profile: &str) -> Result<Vec<PlacingStats>> {
        self.read(|t| {
            let sql = t.dialect().pick(
                "SELECT s.version_id, COUNT(*), SUM(s.\"placing\" = 1), SUM(s.\"placing\"),
                        SUM(s.timeouts)
                 FROM matches m JOIN match_seats s ON s.match_id = m.id
                 WHERE m.season_id = ?1 AND m.profile = ?2 AND m.state = 'finished'
                   AND m.rated_seq IS NOT NULL
                 GROUP BY s.version_id ORDER BY s.version_id",
                "SELECT s.version_id, COUNT(*), COUNT(*) FILTER (WHERE s.\"placing\" = 1),
                        COALESCE(SUM(s.\"placing\"), 0)::BIGINT,
                        COALESCE(SUM(s.timeouts), 0)::BIGINT
                 FROM matches m JOIN match_seats s ON s.match_id = m.id
                 WHERE m.season_id = ?1 AND m.profile = ?2 AND m.state = 'finished'
                   AND m.rated_seq IS NOT NULL
                 GROUP BY s.version_id ORDER BY s.version_id",
            );
            t.rows(sql, &[season.0.into(), profile.into()], |r| {
                Ok(PlacingStats {
                    version: VersionId(r.i64(0)?),
                    matches: r.u32(1)?,
                    wins: r.u32(2)?,
                    placing_sum: r.i64(3)?.max(0) as u64,
                    timeouts: r.i64(4)?.max(0) as u64,
                })
            })
        })
    }

    fn ratings(&self, season: SeasonId) -> Result<Vec<RatingRow>> {
        self.read(|t| ratings_of(t, season))
    }

    fn rating(
        &self,
        season: SeasonId,
        profile: &str,
        version: VersionId,
    ) -> Result<Option<RatingRow>> {
        let state = self.read(|t| read_rating(t, season, profile, version))?;
        Ok(rules::rating_row(season, profile, version, state))
    }

    fn rating_events(&self, season: SeasonId) -> Result<Vec<RatingEvent>> {
        self.read(|t| {
            t.rows(
                "SELECT id, profile, version_id, match_id, cause, mu_before, sigma_before,
                        matches_before, mu_after, sigma_after, matches_after, created_ms
                 FROM rating_events WHERE season_id = ?1 ORDER BY id",
                &[season.0.into()],
                |r| {
                    let cause = r.string(4)?;
                    Ok(RatingEvent {
                        id: r.i64(0)?,
                        season,
                        match_id: r.opt_i64(3)?.map(MatchId),
                        cause: RatingCause::from_str_opt(&cause)
                            .ok_or_else(|| bad("rating cause", &cause))?,
                        change: RatingChange {
                            profile: r.string(1)?,
                            version: VersionId(r.i64(2)?),
                            before: rating_from(r, 5)?,
                            after: rating_from(r, 8)?,
                        },
                        created_ms: r.i64(11)?,
                    })
                },
            )
        })
    }

    fn rated_matches(&self, season: SeasonId) -> Result<Vec<RatedMatch>> {
        self.read(|t| rated_matches_of(t, season))
    }

    fn apply_rating_changes(
        &self,
        season: SeasonId,
        changes: &[RatingChange],
        cause: RatingCause,
        now: Millis,
    ) -> Result<()> {
        self.write(|t| {
            t.lock_ratings()?;
            require(t.exists("seasons", season.0)?, "season", season)?;
            let stored = changes
                .iter()
                .map(|ch| read_rating(t, season, &ch.profile, ch.version))
                .collect::<Result<Vec<_>>>()?;
            rules::check_ratings_unchanged(changes, &stored)?;
            write_changes(t, season, None, cause, changes, now)
        })
    }

    fn add_sanction(
        &self,
        target: SanctionTarget,
        kind: SanctionKind,
        reason: &str,
        now: Millis,
    ) -> Result<SanctionId> {
        rules::check_sanction_reason(reason)?;
        let (what, tid) = target.parts();
        self.write(|t| {
            rules::require_target(t.exists(target.table(), tid)?, target)?;
            let id = t.insert(
                "INSERT INTO sanctions (target, target_id, kind, reason, created_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                &[
                    what.into(),
                    tid.into(),
                    kind.as_str().into(),
                    reason.into(),
                    now.into(),
                ],
            )?;
            new_row(id).map(SanctionId)
        })
    }

    fn lift_sanction(&self, id: SanctionId, reason: &str, now: Millis) -> Result<()> {
        self.write(|t| {
            require(t.exists("sanctions", id.0)?, "sanction", id)?;
            let n = t.execute(
                "UPDATE sanctions SET lifted_ms = ?1, lifted_reason = ?2
                 WHERE id = ?3 AND lifted_ms IS NULL",
                &[now.into(), reason.into(), id.0.into()],
            )?;
            rules::check_sanction_lifted_now(id, n > 0)
        })
    }

    fn active_sanctions(&self) -> Result<Vec<Sanction>> {
        self.read(|t| {
            let sql = format!(
                "SELECT {SANCTION_COLUMNS} FROM sanctions WHERE lifted_ms IS NULL ORDER BY id"
            );
            t.rows(&sql, &[], sanction_from_row)
        })
    }

    fn sanctions_of(&self, target: SanctionTarget) -> Result<Vec<Sanction>> {
        let (what, tid) = target.parts();
        self.read(|t| {
            let sql = format!(
                "SELECT {SANCTION_COLUMNS} FROM sanctions WHERE target = ?1 AND target_id = ?2
                 ORDER BY id"
            );
            t.rows(&sql, &[what.into(), tid.into()], sanction_from_row)
        })
    }
}
