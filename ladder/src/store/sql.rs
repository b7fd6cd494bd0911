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

use super::backend::{Row, Tx, Value, bad};
use super::rules::{self, not_found};
use super::{
    KeyRecord, KeySubject, MatchRecord, MatchState, NewMatch, RatingCause, RatingChange, RatingRow,
    Sanction, SanctionKind, SeatRecord, SeatResult,
};
use crate::error::{LadderError, Result};
use crate::health::SeatOutcome;
use crate::ids::{KeyId, MatchId, Millis, SanctionId, SeasonId, VersionId};
use crate::keys::KeyHash;
use crate::rating::{RatedMatch, Rating, RatingConfig, RatingState};

/// A taken unique value as [`crate::error::LadderError::Duplicate`].
pub(super) fn unique<T>(
    inserted: std::result::Result<T, super::backend::Taken>,
    what: &'static str,
    name: &str,
) -> Result<T> {
    inserted.map_err(|_| rules::taken(what, name))
}

/// A new row's id, where no UNIQUE constraint can refuse it (only ids are unique).
fn new_row(inserted: std::result::Result<i64, super::backend::Taken>) -> Result<i64> {
    inserted.map_err(|taken| {
        let on = taken.0.unwrap_or_default();
        LadderError::Database(format!("a unique constraint {on} refused a new row").into())
    })
}

pub(super) const KEY_COLUMNS: &str = "id, kind, owner_id, version_id, hash, created_ms, revoked_ms";

pub(super) fn key_from_row(r: &dyn Row) -> Result<KeyRecord> {
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

pub(super) const SANCTION_COLUMNS: &str =
    "id, target, target_id, kind, reason, created_ms, lifted_ms, lifted_reason";

pub(super) fn sanction_from_row(r: &dyn Row) -> Result<Sanction> {
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

pub(super) const MATCH_COLUMNS: &str = "id, season_id, profile, seed, rated, state, rated_seq, \
                                        created_ms, started_ms, ended_ms, reason";

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
        seats: Vec::new(),
    })
}

/// A seat from the columns `version_id, "placing", joined, timeouts` starting at `first`.
fn seat_from(r: &dyn Row, first: usize) -> Result<SeatRecord> {
    Ok(rules::seat_record(
        VersionId(r.i64(first)?),
        r.opt_u8(first + 1)?,
        r.opt_bool(first + 2)?,
        r.u32(first + 3)?,
    ))
}

/// A rating from the columns `mu, sigma, matches` starting at `first`.
pub(super) fn rating_from(r: &dyn Row, first: usize) -> Result<RatingState> {
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
        "SELECT version_id, \"placing\", joined, timeouts FROM match_seats
         WHERE match_id = ?1 ORDER BY seat",
        &[m.id.0.into()],
        |r| seat_from(r, 0),
    )?;
    Ok(m)
}

/// The matches a query over [`MATCH_COLUMNS`] returns, with their seats.
pub(super) fn load_matches(
    t: &mut dyn Tx,
    sql: &str,
    params: &[Value<'_>],
) -> Result<Vec<MatchRecord>> {
    let mut ms = t.rows(sql, params, match_from_row)?;
    if ms.is_empty() {
        return Ok(ms);
    }
    // The seats of all of them in one query, not one per match (the matchmaker reads dozens
    // of matches every round).
    let ids: Vec<i64> = ms.iter().map(|m| m.id.0).collect();
    let at: HashMap<i64, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
    let sql = t.dialect().pick(
        "SELECT match_id, version_id, \"placing\", joined, timeouts FROM match_seats
         WHERE match_id IN (SELECT value FROM json_each(?1)) ORDER BY match_id, seat",
        "SELECT match_id, version_id, \"placing\", joined, timeouts FROM match_seats
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
pub(super) fn read_rating(
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
pub(super) fn write_changes(
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
pub(super) fn rated_matches_of(t: &mut dyn Tx, season: SeasonId) -> Result<Vec<RatedMatch>> {
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
pub(super) fn ratings_of(t: &mut dyn Tx, season: SeasonId) -> Result<Vec<RatingRow>> {
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
pub(super) fn insert_key(
    t: &mut dyn Tx,
    subject: KeySubject,
    hash: &KeyHash,
    now: Millis,
) -> Result<KeyId> {
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
pub(super) fn finish_in(
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
            "UPDATE match_seats SET \"placing\" = ?1, joined = TRUE, timeouts = ?2
             WHERE match_id = ?3 AND seat = ?4",
            &[r.placing.into(), r.timeouts.into(), id.0.into(), i.into()],
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
            "UPDATE match_seats SET joined = ?1, timeouts = ?2 WHERE match_id = ?3 AND seat = ?4",
            &[o.joined.into(), o.timeouts.into(), id.0.into(), i.into()],
        )?;
    }
    t.execute(
        "UPDATE matches SET state = 'aborted', ended_ms = ?1, reason = ?2 WHERE id = ?3",
        &[now.into(), reason.into(), id.0.into()],
    )?;
    Ok(())
}
