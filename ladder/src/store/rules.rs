//! The store's business rules, written once for both backends: every check that refuses a change,
//! every refusal message, and the rating steps (rating a finished match, recomputing a profile
//! after a void).
//!
//! Every function here is pure. A backend (`sqlite.rs`, `postgres.rs`) loads the rows a decision
//! needs into plain values inside its transaction, asks a function here, and writes what it is
//! told (or returns the typed refusal) in that same transaction. So the backends hold only their
//! SQL and their transactions, and a rule changes with one edit here.

use super::{
    KeyRecord, KeySubject, MatchRecord, MatchState, NewMatch, RatingChange, RatingRow,
    SanctionTarget, SeatRecord, SeatResult,
};
use crate::error::{LadderError, Result};
use crate::health::SeatOutcome;
use crate::ids::{BotId, MatchId, Millis, OwnerId, SanctionId, SeasonId, VersionId};
use crate::rating::{
    RatedMatch, Rating, RatingConfig, RatingState, check_placings, rate_table, replay,
};

// ----- errors every backend raises alike -----

/// No `what` with this id.
pub(super) fn not_found(what: &'static str, id: impl ToString) -> LadderError {
    LadderError::NotFound {
        what,
        id: id.to_string(),
    }
}

/// A mapper for a failed insert: [`LadderError::Duplicate`] when `is_unique` says the database
/// refused it for a taken unique value (`what` named `name`), the database error otherwise.
pub(super) fn duplicate<E: Into<LadderError>>(
    is_unique: fn(&E) -> bool,
    what: &'static str,
    name: &str,
) -> impl FnOnce(E) -> LadderError {
    move |e| {
        if is_unique(&e) {
            LadderError::Duplicate {
                what,
                name: name.to_string(),
            }
        } else {
            e.into()
        }
    }
}

/// Refuses a database whose highest schema step (`found`) is beyond the `known` steps of this
/// build.
pub(super) fn check_schema_step(found: u32, known: u32) -> Result<()> {
    if found > known {
        return Err(LadderError::SchemaTooNew { found, known });
    }
    Ok(())
}

// ----- names, versions, keys -----

/// A name (of an owner, bot, season) or a version's label: 1 to 100 bytes, not blank, no control
/// characters.
pub(super) fn check_name(what: &str, name: &str) -> Result<()> {
    if name.trim().is_empty() || name.len() > 100 || name.chars().any(char::is_control) {
        return Err(LadderError::Invalid(format!(
            "a {what} needs a name of 1 to 100 printable characters"
        )));
    }
    Ok(())
}

/// A new version must keep at least itself active.
pub(super) fn check_keep_active(keep_active: usize) -> Result<()> {
    if keep_active == 0 {
        return Err(LadderError::Invalid(
            "at least the newest version must stay active".into(),
        ));
    }
    Ok(())
}

/// The versions to retire when a bot keeps its `keep_active` newest: of its active versions,
/// newest first (the new one included), every one after the first `keep_active`.
pub(super) fn versions_to_retire(
    active_newest_first: &[VersionId],
    keep_active: usize,
) -> Vec<VersionId> {
    active_newest_first
        .iter()
        .skip(keep_active)
        .copied()
        .collect()
}

/// Where a subject's keys are stored: the subject's table, the key's column naming it, its id.
pub(super) fn key_columns(subject: KeySubject) -> (&'static str, &'static str, i64) {
    match subject {
        KeySubject::Owner(o) => ("owners", "owner_id", o.0),
        KeySubject::Version(v) => ("versions", "version_id", v.0),
    }
}

/// The refusal for a key issued to a subject that does not exist.
pub(super) fn subject_not_found(subject: KeySubject) -> LadderError {
    not_found(subject.kind().as_str(), key_columns(subject).2)
}

/// The subject of a stored key, from its `kind` column and its owner and version columns;
/// `None` for an unknown kind or a missing id.
pub(super) fn key_subject(
    kind: &str,
    owner: Option<i64>,
    version: Option<i64>,
) -> Option<KeySubject> {
    match kind {
        "owner" => owner.map(|o| KeySubject::Owner(OwnerId(o))),
        "version" => version.map(|v| KeySubject::Version(VersionId(v))),
        _ => None,
    }
}

/// A key can be rotated only while it is live.
pub(super) fn check_rotatable(key: &KeyRecord) -> Result<()> {
    if key.revoked_ms.is_some() {
        return Err(LadderError::State(format!(
            "key {} is already revoked",
            key.id
        )));
    }
    Ok(())
}

// ----- seasons -----

/// A season opens only while no other is open (`open`: the open season's name, if any).
pub(super) fn check_no_open_season(open: Option<&str>) -> Result<()> {
    if let Some(open) = open {
        return Err(LadderError::State(format!(
            "season {open:?} is still open; close it first"
        )));
    }
    Ok(())
}

/// Closing a season that exists: `closed` tells whether this call closed it (it was open).
pub(super) fn check_season_closed_now(id: SeasonId, closed: bool) -> Result<()> {
    if !closed {
        return Err(LadderError::State(format!("season {id} is already closed")));
    }
    Ok(())
}

// ----- scheduling -----

/// A match has enough seats: at least 2 when rated, at least 1 (the version under test) for an
/// unrated validation match.
pub(super) fn check_seat_count(m: &NewMatch) -> Result<()> {
    let least = if m.rated { 2 } else { 1 };
    if m.seats.len() < least {
        return Err(LadderError::Invalid(format!(
            "a match needs at least {least} seats, not {}",
            m.seats.len()
        )));
    }
    Ok(())
}

/// What a new match must be before the database is asked: enough seats
/// ([`check_seat_count`]), no version twice, a profile.
pub(super) fn check_new_match(m: &NewMatch) -> Result<()> {
    check_seat_count(m)?;
    let mut distinct = m.seats.clone();
    distinct.sort();
    distinct.dedup();
    if distinct.len() != m.seats.len() {
        return Err(LadderError::Invalid(
            "a version can hold only one seat of a match".into(),
        ));
    }
    if m.profile.is_empty() {
        return Err(LadderError::Invalid("a match needs a profile".into()));
    }
    Ok(())
}

/// A match is scheduled only in an open season. `closed_ms` is the season's row: `None` when
/// there is no such season, else its `closed_ms`.
pub(super) fn check_season_takes_matches(
    season: SeasonId,
    closed_ms: Option<Option<Millis>>,
) -> Result<()> {
    match closed_ms {
        None => Err(not_found("season", season)),
        Some(Some(_)) => Err(LadderError::State(format!("season {season} is closed"))),
        Some(None) => Ok(()),
    }
}

/// A version takes a seat only while active. `retired_ms` is the version's row: `None` when
/// there is no such version, else its `retired_ms`.
pub(super) fn check_version_takes_seat(
    version: VersionId,
    retired_ms: Option<Option<Millis>>,
) -> Result<()> {
    match retired_ms {
        None => Err(not_found("version", version)),
        Some(Some(_)) => Err(LadderError::State(format!("version {version} is retired"))),
        Some(None) => Ok(()),
    }
}

// ----- a match's life -----

/// Only a scheduled match starts.
pub(super) fn check_start(m: &MatchRecord) -> Result<()> {
    if m.state != MatchState::Scheduled {
        return Err(LadderError::State(format!(
            "match {} is {}, not scheduled",
            m.id,
            m.state.as_str()
        )));
    }
    Ok(())
}

/// How a match can end: what the refusal for a match that already ended says it cannot do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ending {
    /// Finish (with results, or a validation verdict).
    Finish,
    /// Abort.
    Abort,
}

/// Only a scheduled or running match ends.
pub(super) fn check_can_end(m: &MatchRecord, ending: Ending) -> Result<()> {
    if !matches!(m.state, MatchState::Scheduled | MatchState::Running) {
        let verb = match ending {
            Ending::Finish => "finish",
            Ending::Abort => "abort",
        };
        return Err(LadderError::State(format!(
            "match {} is {}, so it cannot {verb}",
            m.id,
            m.state.as_str()
        )));
    }
    Ok(())
}

/// Checks that a match can finish with these results (it is scheduled or running, one result per
/// seat, standard competition placings) and returns the placings in seat order.
pub(super) fn check_finish(m: &MatchRecord, results: &[SeatResult]) -> Result<Vec<u8>> {
    check_can_end(m, Ending::Finish)?;
    if results.len() != m.seats.len() {
        return Err(LadderError::Invalid(format!(
            "{} results for {} seats",
            results.len(),
            m.seats.len()
        )));
    }
    let placings: Vec<u8> = results.iter().map(|r| r.placing).collect();
    check_placings(m.seats.len(), &placings)?;
    Ok(placings)
}

/// Whether a finishing match is rated: it was scheduled rated and its season is still open (a
/// match whose season closed meanwhile is stored unrated).
pub(super) fn finish_is_rated(m: &MatchRecord, season_open: bool) -> bool {
    m.rated && season_open
}

/// The rating step of a finished match: from each seat's rating `before` (in seat order, the
/// default for a version's first match) and the checked `placings`, one change per seat, each
/// counting one more match.
pub(super) fn rate_finish(
    config: &RatingConfig,
    m: &MatchRecord,
    placings: &[u8],
    before: &[RatingState],
) -> Result<Vec<RatingChange>> {
    let ratings: Vec<Rating> = before.iter().map(|b| b.rating).collect();
    let after = rate_table(config, &ratings, placings)?;
    Ok(m.seats
        .iter()
        .zip(before)
        .zip(after)
        .map(|((s, b), a)| RatingChange {
            profile: m.profile.clone(),
            version: s.version,
            before: *b,
            after: RatingState {
                rating: a,
                matches: b.matches + 1,
            },
        })
        .collect())
}

/// Checks that a match can abort with these outcomes: it is scheduled or running, one outcome per
/// seat.
pub(super) fn check_abort(m: &MatchRecord, outcomes: &[SeatOutcome]) -> Result<()> {
    check_can_end(m, Ending::Abort)?;
    if outcomes.len() != m.seats.len() {
        return Err(LadderError::Invalid(format!(
            "{} outcomes for {} seats",
            outcomes.len(),
            m.seats.len()
        )));
    }
    Ok(())
}

/// The version under test of a validation match (one seat, unrated); a refusal for any other
/// match. Whether it can still end is [`check_can_end`].
pub(super) fn validation_version(m: &MatchRecord) -> Result<VersionId> {
    let [seat] = m.seats.as_slice() else {
        return Err(LadderError::Invalid(format!(
            "match {} has {} seats; a validation match has one",
            m.id,
            m.seats.len()
        )));
    };
    if m.rated {
        return Err(LadderError::Invalid(format!(
            "match {} is rated; a validation match is not",
            m.id
        )));
    }
    Ok(seat.version)
}

/// A validation verdict as stored: whether it passed (no reasons) and the reasons, one a line.
pub(super) fn verdict_to_text(reasons: &[String]) -> (bool, String) {
    (reasons.is_empty(), reasons.join("\n"))
}

/// The reasons of a stored verdict (see [`verdict_to_text`]).
pub(super) fn reasons_from_text(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect()
}

/// Voiding needs a reason.
pub(super) fn check_void_reason(reason: &str) -> Result<()> {
    if reason.trim().is_empty() {
        return Err(LadderError::Invalid(
            "voiding a match needs a reason".into(),
        ));
    }
    Ok(())
}

/// Checks that a match can be voided (any state but void) and tells whether it had been rated,
/// so that voiding it recomputes its profile ([`void_changes`]).
pub(super) fn check_voidable(m: &MatchRecord) -> Result<bool> {
    if m.state == MatchState::Void {
        return Err(LadderError::State(format!(
            "match {} is already void",
            m.id
        )));
    }
    Ok(m.state == MatchState::Finished && m.rated_seq.is_some())
}

/// The recomputation after voiding the rated match `voided`: the season's rated matches of its
/// profile are replayed in order without it, and every current rating of that profile that the
/// replay changes gets a change (to the default for a version left without matches).
/// `season_matches` and `season_ratings` are the whole season's, every profile.
pub(super) fn void_changes(
    config: &RatingConfig,
    voided: &MatchRecord,
    season_matches: Vec<RatedMatch>,
    season_ratings: Vec<RatingRow>,
) -> Vec<RatingChange> {
    let matches: Vec<RatedMatch> = season_matches
        .into_iter()
        .filter(|r| r.profile == voided.profile && r.id != voided.id)
        .collect();
    let replayed = replay(config, &matches);
    season_ratings
        .into_iter()
        .filter(|row| row.profile == voided.profile)
        .filter_map(|row| {
            let after = replayed
                .get(&(row.profile.clone(), row.version))
                .copied()
                .unwrap_or_default();
            (after != row.state).then_some(RatingChange {
                profile: row.profile,
                version: row.version,
                before: row.state,
                after,
            })
        })
        .collect()
}

/// Rated matches from rows of (match, profile, version, placing) in rating order and seat order,
/// one match's seats together; a finished match with a seat without a placing is refused.
pub(super) fn group_rated_matches(
    rows: impl IntoIterator<Item = (MatchId, String, VersionId, Option<u8>)>,
) -> Result<Vec<RatedMatch>> {
    let mut out: Vec<RatedMatch> = Vec::new();
    for (id, profile, version, placing) in rows {
        let placing = placing.ok_or_else(|| {
            LadderError::State(format!("finished match {id} has a seat without a placing"))
        })?;
        match out.last_mut() {
            Some(m) if m.id == id => m.seats.push((version, placing)),
            _ => out.push(RatedMatch {
                id,
                profile,
                seats: vec![(version, placing)],
            }),
        }
    }
    Ok(out)
}

/// A stored seat: its join and timeouts are known once `joined` is (the match ended).
pub(super) fn seat_record(
    version: VersionId,
    placing: Option<u8>,
    joined: Option<bool>,
    timeouts: u32,
) -> SeatRecord {
    SeatRecord {
        version,
        placing,
        outcome: joined.map(|joined| SeatOutcome { joined, timeouts }),
    }
}

// ----- ratings -----

/// A rating change applies only over the rating it was computed from: `stored` is the current
/// rating of its version (the default before its first match).
pub(super) fn check_rating_unchanged(change: &RatingChange, stored: RatingState) -> Result<()> {
    if stored != change.before {
        return Err(LadderError::State(format!(
            "the rating of version {} in {} changed meanwhile",
            change.version, change.profile
        )));
    }
    Ok(())
}

// ----- pauses and bans -----

/// A pause or ban needs a reason.
pub(super) fn check_sanction_reason(reason: &str) -> Result<()> {
    if reason.trim().is_empty() {
        return Err(LadderError::Invalid("a pause or ban needs a reason".into()));
    }
    Ok(())
}

/// The refusal for a sanction of a target that does not exist.
pub(super) fn target_not_found(target: SanctionTarget) -> LadderError {
    let (what, id) = target.parts();
    not_found(what, id)
}

/// The target of a stored sanction, from its `target` and `target_id` columns (see
/// [`SanctionTarget::parts`]); `None` for an unknown kind.
pub(super) fn sanction_target(kind: &str, id: i64) -> Option<SanctionTarget> {
    Some(match kind {
        "owner" => SanctionTarget::Owner(OwnerId(id)),
        "bot" => SanctionTarget::Bot(BotId(id)),
        "version" => SanctionTarget::Version(VersionId(id)),
        _ => return None,
    })
}

/// Lifting a sanction that exists: `lifted` tells whether this call lifted it (it was in force).
pub(super) fn check_sanction_lifted_now(id: SanctionId, lifted: bool) -> Result<()> {
    if !lifted {
        return Err(LadderError::State(format!(
            "sanction {id} is already lifted"
        )));
    }
    Ok(())
}
