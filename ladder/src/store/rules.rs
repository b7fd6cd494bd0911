//! The store's business rules, written once for both backends: every check that refuses a change,
//! every refusal message, and the rating steps (rating a finished match, recomputing a profile
//! after a void).
//!
//! Every function here is pure. A backend (`sqlite.rs`, `postgres.rs`) loads the rows a decision
//! needs into plain values inside its transaction, asks a function here, and writes what it is
//! told (or returns the typed refusal) in that same transaction. So the backends hold only their
//! SQL and their transactions, and a rule changes with one edit here.

use std::time::{SystemTime, UNIX_EPOCH};

use maumau_rating::{Rating, RatingConfig, RatingState, check_placings, rate_table, replay};

use super::{
    KeyRecord, KeySubject, MatchRecord, MatchState, NewMatch, RatedMatch, RatingChange, RatingRow,
    SanctionTarget, SeatRecord, SeatResult,
};
use crate::error::{LadderError, Result};
use crate::health::SeatOutcome;
use crate::ids::{BotId, MatchId, Millis, OwnerId, SanctionId, SeasonId, VersionId};

// ----- errors every backend raises alike -----

/// No `what` with this id.
pub(super) fn not_found(what: &'static str, id: impl ToString) -> LadderError {
    LadderError::NotFound {
        what,
        id: id.to_string(),
    }
}

/// A unique value (`what` named `name`) already taken: [`LadderError::Duplicate`].
pub(super) fn taken(what: &'static str, name: &str) -> LadderError {
    LadderError::Duplicate {
        what,
        name: name.to_string(),
    }
}

/// The refusal for a change of a row that does not exist (`exists` says whether it does).
pub(super) fn require(exists: bool, what: &'static str, id: impl ToString) -> Result<()> {
    if !exists {
        return Err(not_found(what, id));
    }
    Ok(())
}

/// A schema step as a backend lists it: (step, file name, SQL). Steps count from 1 without gaps.
pub(super) type Migration = (u32, &'static str, &'static str);

/// The highest schema step of `steps` (0 for none).
pub(super) fn last_step(steps: &[Migration]) -> u32 {
    steps.last().map_or(0, |m| m.0)
}

/// The steps a database at step `current` still lacks, in order. A database beyond the last of
/// `steps` was written by a newer build and is refused.
pub(super) fn pending_steps(steps: &[Migration], current: u32) -> Result<&[Migration]> {
    let known = last_step(steps);
    if current > known {
        return Err(LadderError::SchemaTooNew {
            found: current,
            known,
        });
    }
    Ok(&steps[steps.partition_point(|m| m.0 <= current)..])
}

/// The wall clock in milliseconds since the Unix epoch, for when a schema step was applied.
pub(super) fn wall_clock_ms() -> Millis {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
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

/// The form in which names (of owners and bots) and version labels are compared: Unicode NFKC,
/// then the UTS #39 confusable skeleton, lower-cased and folded again, so that `House`,
/// `house` and `hоuse` (with a Cyrillic `о`) are one name. Stored names keep their spelling;
/// only comparisons use this form.
pub fn name_key(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    use unicode_security::confusable_detection::skeleton;
    let nfkc: String = name.trim().nfkc().collect();
    let folded: String = skeleton(&nfkc).collect::<String>().to_lowercase();
    skeleton(&folded).collect()
}

/// The mark of the house bots' names: no name may contain it (in its [`name_key`] form).
pub const HOUSE_MARK: &str = "(house)";

/// Refuses a name a user chose (`what`: "owner", "bot", "version") that could pose as one of the
/// house's: one that contains [`HOUSE_MARK`], or an owner named like `house_owner`, once both
/// are in their [`name_key`] form.
pub fn check_not_reserved(what: &str, name: &str, house_owner: &str) -> Result<()> {
    let key = name_key(name);
    if key.contains(&name_key(HOUSE_MARK)) {
        return Err(LadderError::Invalid(format!(
            "a {what} name may not contain {HOUSE_MARK:?} (or look like it): it marks the \
             ladder's house bots"
        )));
    }
    if what == "owner" && key == name_key(house_owner) {
        return Err(LadderError::Invalid(format!(
            "the owner name {house_owner:?} (or one that looks like it) is reserved for the \
             ladder's house bots"
        )));
    }
    Ok(())
}

/// Refuses `name` (a `what`) when it looks like one of `existing` (the names of its kind it must
/// differ from), compared in their [`name_key`] form: [`LadderError::Duplicate`] naming the
/// existing one it looks like.
pub(super) fn check_distinct<'a>(
    what: &'static str,
    name: &str,
    existing: impl IntoIterator<Item = &'a str>,
) -> Result<()> {
    let key = name_key(name);
    match existing.into_iter().find(|e| name_key(e) == key) {
        // The name it looks like: "bot \"house\" already exists".
        Some(e) => Err(taken(what, e)),
        None => Ok(()),
    }
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

/// A key is issued only to a subject that exists (`exists` says whether it does).
pub(super) fn require_subject(exists: bool, subject: KeySubject) -> Result<()> {
    require(exists, subject.kind().as_str(), key_columns(subject).2)
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

/// The refusal for a season opened while another store (another server node) opened one too:
/// the database keeps one open season and refused the second.
pub(super) fn season_opened_meanwhile() -> LadderError {
    LadderError::State("another season was opened meanwhile".into())
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
    check_live("season", season, closed_ms, "closed")
}

/// A version takes a seat only while active. `retired_ms` is the version's row: `None` when
/// there is no such version, else its `retired_ms`.
pub(super) fn check_version_takes_seat(
    version: VersionId,
    retired_ms: Option<Option<Millis>>,
) -> Result<()> {
    check_live("version", version, retired_ms, "retired")
}

/// A row that must exist and not have ended: `ended_ms` is `None` for no row, else when it ended
/// (`ended`: closed, retired), if it did.
fn check_live(
    what: &'static str,
    id: impl std::fmt::Display,
    ended_ms: Option<Option<Millis>>,
    ended: &str,
) -> Result<()> {
    match ended_ms {
        None => Err(not_found(what, id)),
        Some(Some(_)) => Err(LadderError::State(format!("{what} {id} is {ended}"))),
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

/// A table id is recorded once: the same id again is accepted (a retried write), another one,
/// or an empty one, is refused.
pub(super) fn check_server_match_id(m: &MatchRecord, server_match_id: &str) -> Result<()> {
    if server_match_id.is_empty() {
        return Err(LadderError::Invalid(format!(
            "match {}: an empty server match id",
            m.id
        )));
    }
    match &m.server_match_id {
        Some(had) if had != server_match_id => Err(LadderError::State(format!(
            "match {} already has the table {had}, not {server_match_id}",
            m.id
        ))),
        _ => Ok(()),
    }
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

/// Several server nodes on one ladder: the end of a match is recorded only by the node that holds
/// its lease. `owner` and `epoch` are the match's stored lease (no owner: never claimed, anyone
/// may record it); `held` is the (node, epoch) this process claimed it with, if it did.
pub(super) fn check_lease_held(
    id: MatchId,
    owner: Option<i64>,
    epoch: i64,
    held: Option<(i64, i64)>,
) -> Result<()> {
    let Some(owner) = owner else {
        return Ok(());
    };
    if held == Some((owner, epoch)) {
        Ok(())
    } else {
        Err(LadderError::State(format!(
            "match {id} is leased to node {owner} (epoch {epoch}), not to this node"
        )))
    }
}

/// Checks that a match can finish with these results (it is scheduled or running, one result per
/// seat, standard competition placings) and returns the placings in seat order.
pub(super) fn check_finish(m: &MatchRecord, results: &[SeatResult]) -> Result<Vec<u8>> {
    check_can_end(m, Ending::Finish)?;
    check_one_per_seat(m, results.len(), "results")?;
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
    check_one_per_seat(m, outcomes.len(), "outcomes")
}

/// One item (`what`: results, outcomes) given per seat of the match.
fn check_one_per_seat(m: &MatchRecord, given: usize, what: &str) -> Result<()> {
    if given != m.seats.len() {
        return Err(LadderError::Invalid(format!(
            "{given} {what} for {} seats",
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

/// A stored seat: its join, timeouts and rejections are known once `joined` is (the match ended).
pub(super) fn seat_record(
    version: VersionId,
    placing: Option<u8>,
    joined: Option<bool>,
    timeouts: u32,
    rejections: u32,
) -> SeatRecord {
    SeatRecord {
        version,
        placing,
        outcome: joined.map(|joined| SeatOutcome {
            joined,
            timeouts,
            rejections,
        }),
    }
}

// ----- ratings -----

/// Rating changes apply only over the ratings they were computed from: `stored[i]` is the
/// current rating of `changes[i]`'s version (`None` before its first match, which is the
/// default rating). The first change whose `before` differs is refused.
pub(super) fn check_ratings_unchanged(
    changes: &[RatingChange],
    stored: &[Option<RatingState>],
) -> Result<()> {
    for (change, stored) in changes.iter().zip(stored) {
        if stored.unwrap_or_default() != change.before {
            return Err(LadderError::State(format!(
                "the rating of version {} in {} changed meanwhile",
                change.version, change.profile
            )));
        }
    }
    Ok(())
}

/// A version's current rating as the store answers it (`state` as read, if any).
pub(super) fn rating_row(
    season: SeasonId,
    profile: &str,
    version: VersionId,
    state: Option<RatingState>,
) -> Option<RatingRow> {
    state.map(|state| RatingRow {
        season,
        profile: profile.to_string(),
        version,
        state,
    })
}

// ----- pauses and bans -----

/// A pause or ban needs a reason.
pub(super) fn check_sanction_reason(reason: &str) -> Result<()> {
    if reason.trim().is_empty() {
        return Err(LadderError::Invalid("a pause or ban needs a reason".into()));
    }
    Ok(())
}

/// A pause or ban applies only to a target that exists (`exists` says whether it does).
pub(super) fn require_target(exists: bool, target: SanctionTarget) -> Result<()> {
    let (what, id) = target.parts();
    require(exists, what, id)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeyHash;

    #[test]
    fn look_alike_names_have_one_key() {
        let house = name_key("house");
        for alike in ["house", "House", "hоuse", "ｈｏｕｓｅ", " house "] {
            assert_eq!(name_key(alike), house, "{alike:?}");
        }
        assert_ne!(name_key("mouse"), house);
        assert!(check_distinct("bot", "hоuse", ["a", "house"]).is_err());
        assert!(check_distinct("bot", "mouse", ["a", "house"]).is_ok());
        assert!(check_not_reserved("bot", "a (hоuse)", "house").is_err());
        assert!(check_not_reserved("bot", "a house", "house").is_ok());
        assert!(check_not_reserved("owner", "Hоuse", "house").is_err());
        assert!(check_not_reserved("bot", "house", "house").is_ok());
    }

    fn record(state: MatchState, rated: bool, seats: &[i64]) -> MatchRecord {
        MatchRecord {
            id: MatchId(7),
            season: SeasonId(1),
            profile: "classic".into(),
            seed: 1,
            rated,
            state,
            rated_seq: None,
            created_ms: 0,
            started_ms: None,
            ended_ms: None,
            reason: None,
            server_match_id: None,
            seats: seats
                .iter()
                .map(|&v| seat_record(VersionId(v), None, None, 0, 0))
                .collect(),
        }
    }

    fn new_match(rated: bool, seats: &[i64]) -> NewMatch {
        NewMatch {
            season: SeasonId(1),
            profile: "classic".into(),
            seed: 1,
            rated,
            seats: seats.iter().map(|&v| VersionId(v)).collect(),
        }
    }

    fn results(placings: &[u8]) -> Vec<SeatResult> {
        placings
            .iter()
            .map(|&placing| SeatResult {
                placing,
                timeouts: 0,
                rejections: 0,
            })
            .collect()
    }

    fn message(r: Result<impl std::fmt::Debug>) -> String {
        r.expect_err("a refusal").to_string()
    }

    fn state(mu: f64, matches: u32) -> RatingState {
        RatingState {
            rating: Rating { mu, sigma: 8.0 },
            matches,
        }
    }

    fn rated(id: i64, profile: &str, seats: &[(i64, u8)]) -> RatedMatch {
        RatedMatch {
            id: MatchId(id),
            profile: profile.into(),
            seats: seats.iter().map(|&(v, p)| (VersionId(v), p)).collect(),
        }
    }

    #[test]
    fn not_found_and_require_name_the_missing_row() {
        assert_eq!(not_found("match", MatchId(3)).to_string(), "no match 3");
        assert!(require(true, "key", 4).is_ok());
        assert!(matches!(
            require(false, "key", 4),
            Err(LadderError::NotFound { what: "key", id }) if id == "4"
        ));
    }

    #[test]
    fn a_taken_value_is_a_duplicate_of_its_name() {
        assert!(matches!(
            taken("bot", "b1"),
            LadderError::Duplicate { what: "bot", name } if name == "b1"
        ));
    }

    #[test]
    fn pending_steps_are_those_above_the_current_and_a_newer_database_is_refused() {
        let steps: &[Migration] = &[(1, "0001_a.sql", "a"), (2, "0002_b.sql", "b")];
        assert_eq!(last_step(steps), 2);
        assert_eq!(last_step(&[]), 0);
        assert_eq!(pending_steps(steps, 0).unwrap(), steps);
        assert_eq!(pending_steps(steps, 1).unwrap(), &steps[1..]);
        assert!(pending_steps(steps, 2).unwrap().is_empty());
        assert!(matches!(
            pending_steps(steps, 3),
            Err(LadderError::SchemaTooNew { found: 3, known: 2 })
        ));
        assert!(wall_clock_ms() > 0);
    }

    #[test]
    fn names_are_one_to_a_hundred_printable_characters() {
        assert!(check_name("bot", "ada-bot").is_ok());
        assert!(check_name("bot", &"x".repeat(100)).is_ok());
        for bad in ["", "   ", "a\nb", &"x".repeat(101)] {
            assert_eq!(
                message(check_name("bot", bad)),
                "invalid input: a bot needs a name of 1 to 100 printable characters"
            );
        }
    }

    #[test]
    fn the_newest_versions_stay_active_and_the_rest_retire() {
        assert!(check_keep_active(1).is_ok());
        assert!(matches!(check_keep_active(0), Err(LadderError::Invalid(_))));
        let active = [VersionId(9), VersionId(5), VersionId(2)];
        assert_eq!(versions_to_retire(&active, 2), vec![VersionId(2)]);
        assert_eq!(
            versions_to_retire(&active, 1),
            vec![VersionId(5), VersionId(2)]
        );
        assert!(versions_to_retire(&active, 3).is_empty());
    }

    #[test]
    fn keys_name_their_subject_by_kind_and_column() {
        assert_eq!(
            key_columns(KeySubject::Owner(OwnerId(3))),
            ("owners", "owner_id", 3)
        );
        assert_eq!(
            key_columns(KeySubject::Version(VersionId(4))),
            ("versions", "version_id", 4)
        );
        assert_eq!(
            key_subject("owner", Some(3), None),
            Some(KeySubject::Owner(OwnerId(3)))
        );
        assert_eq!(
            key_subject("version", None, Some(4)),
            Some(KeySubject::Version(VersionId(4)))
        );
        assert_eq!(key_subject("owner", None, Some(4)), None);
        assert_eq!(key_subject("robot", Some(3), None), None);
        assert!(require_subject(true, KeySubject::Owner(OwnerId(3))).is_ok());
        assert_eq!(
            message(require_subject(false, KeySubject::Version(VersionId(4)))),
            "no version 4"
        );
    }

    #[test]
    fn only_a_live_key_rotates() {
        let mut key = KeyRecord {
            id: crate::ids::KeyId(5),
            subject: KeySubject::Owner(OwnerId(1)),
            hash: KeyHash([0; 32]),
            created_ms: 0,
            revoked_ms: None,
        };
        assert!(check_rotatable(&key).is_ok());
        key.revoked_ms = Some(1);
        assert_eq!(
            message(check_rotatable(&key)),
            "not now: key 5 is already revoked"
        );
    }

    #[test]
    fn one_season_is_open_at_a_time_and_closes_once() {
        assert!(check_no_open_season(None).is_ok());
        assert_eq!(
            message(check_no_open_season(Some("s1"))),
            "not now: season \"s1\" is still open; close it first"
        );
        assert!(check_season_closed_now(SeasonId(2), true).is_ok());
        assert_eq!(
            message(check_season_closed_now(SeasonId(2), false)),
            "not now: season 2 is already closed"
        );
    }

    #[test]
    fn a_new_match_has_enough_distinct_seats_and_a_profile() {
        assert!(check_new_match(&new_match(true, &[1, 2])).is_ok());
        assert!(check_new_match(&new_match(false, &[1])).is_ok());
        assert_eq!(
            message(check_seat_count(&new_match(true, &[1]))),
            "invalid input: a match needs at least 2 seats, not 1"
        );
        assert_eq!(
            message(check_new_match(&new_match(false, &[]))),
            "invalid input: a match needs at least 1 seats, not 0"
        );
        assert_eq!(
            message(check_new_match(&new_match(true, &[1, 2, 1]))),
            "invalid input: a version can hold only one seat of a match"
        );
        let mut m = new_match(true, &[1, 2]);
        m.profile.clear();
        assert_eq!(
            message(check_new_match(&m)),
            "invalid input: a match needs a profile"
        );
        // The seat count alone is what a laid-out match is checked for before its transaction.
        assert!(check_seat_count(&new_match(true, &[1, 1])).is_ok());
    }

    #[test]
    fn matches_go_to_open_seasons_and_active_versions() {
        let s = SeasonId(4);
        assert!(check_season_takes_matches(s, Some(None)).is_ok());
        assert_eq!(
            message(check_season_takes_matches(s, Some(Some(9)))),
            "not now: season 4 is closed"
        );
        assert_eq!(message(check_season_takes_matches(s, None)), "no season 4");
        let v = VersionId(6);
        assert!(check_version_takes_seat(v, Some(None)).is_ok());
        assert_eq!(
            message(check_version_takes_seat(v, Some(Some(9)))),
            "not now: version 6 is retired"
        );
        assert_eq!(message(check_version_takes_seat(v, None)), "no version 6");
    }

    #[test]
    fn a_concurrent_season_open_is_a_state_refusal() {
        assert_eq!(
            season_opened_meanwhile().to_string(),
            "not now: another season was opened meanwhile"
        );
    }

    #[test]
    fn only_the_lease_holder_records_a_leased_match() {
        let id = MatchId(7);
        assert!(check_lease_held(id, None, 0, None).is_ok(), "never claimed");
        assert!(check_lease_held(id, Some(2), 5, Some((2, 5))).is_ok());
        assert_eq!(
            message(check_lease_held(id, Some(2), 5, Some((2, 4)))),
            "not now: match 7 is leased to node 2 (epoch 5), not to this node"
        );
        assert!(check_lease_held(id, Some(2), 5, None).is_err());
        assert!(check_lease_held(id, Some(2), 5, Some((3, 5))).is_err());
    }

    #[test]
    fn only_a_scheduled_match_starts() {
        assert!(check_start(&record(MatchState::Scheduled, true, &[1, 2])).is_ok());
        assert_eq!(
            message(check_start(&record(MatchState::Running, true, &[1, 2]))),
            "not now: match 7 is running, not scheduled"
        );
    }

    #[test]
    fn a_table_id_is_recorded_once() {
        let mut m = record(MatchState::Scheduled, true, &[1, 2]);
        assert!(check_server_match_id(&m, "m1").is_ok());
        assert_eq!(
            message(check_server_match_id(&m, "")),
            "invalid input: match 7: an empty server match id"
        );
        m.server_match_id = Some("m1".into());
        assert!(check_server_match_id(&m, "m1").is_ok(), "the same id again");
        assert_eq!(
            message(check_server_match_id(&m, "m2")),
            "not now: match 7 already has the table m1, not m2"
        );
        // Whatever the state: the table existed.
        m.state = MatchState::Aborted;
        assert!(check_server_match_id(&m, "m1").is_ok());
    }

    #[test]
    fn only_a_scheduled_or_running_match_ends() {
        for state in [MatchState::Scheduled, MatchState::Running] {
            assert!(check_can_end(&record(state, true, &[1, 2]), Ending::Finish).is_ok());
        }
        let done = record(MatchState::Finished, true, &[1, 2]);
        assert_eq!(
            message(check_can_end(&done, Ending::Finish)),
            "not now: match 7 is finished, so it cannot finish"
        );
        let void = record(MatchState::Void, true, &[1, 2]);
        assert_eq!(
            message(check_can_end(&void, Ending::Abort)),
            "not now: match 7 is void, so it cannot abort"
        );
    }

    #[test]
    fn a_finish_needs_one_standard_placing_per_seat() {
        let m = record(MatchState::Running, true, &[1, 2, 3]);
        assert_eq!(
            check_finish(&m, &results(&[2, 1, 2])).unwrap(),
            vec![2, 1, 2]
        );
        assert_eq!(
            message(check_finish(&m, &results(&[1, 2]))),
            "invalid input: 2 results for 3 seats"
        );
        assert!(matches!(
            check_finish(&m, &results(&[1, 1, 2])),
            Err(LadderError::Invalid(_))
        ));
        let aborted = record(MatchState::Aborted, true, &[1, 2, 3]);
        assert!(matches!(
            check_finish(&aborted, &results(&[1, 2, 3])),
            Err(LadderError::State(_))
        ));
    }

    #[test]
    fn a_finish_is_rated_only_for_a_rated_match_of_an_open_season() {
        let m = record(MatchState::Running, true, &[1, 2]);
        assert!(finish_is_rated(&m, true));
        assert!(!finish_is_rated(&m, false));
        let unrated = record(MatchState::Running, false, &[1]);
        assert!(!finish_is_rated(&unrated, true));
    }

    #[test]
    fn the_rating_step_moves_each_seat_by_its_placing_and_counts_a_match() {
        let config = RatingConfig::default();
        let m = record(MatchState::Running, true, &[1, 2]);
        let before = [RatingState::default(), state(30.0, 4)];
        let changes = rate_finish(&config, &m, &[1, 2], &before).unwrap();
        let expected = rate_table(&config, &[before[0].rating, before[1].rating], &[1, 2]).unwrap();
        assert_eq!(changes.len(), 2);
        for (i, ch) in changes.iter().enumerate() {
            assert_eq!(ch.profile, "classic");
            assert_eq!(ch.version, m.seats[i].version);
            assert_eq!(ch.before, before[i]);
            assert_eq!(ch.after.rating, expected[i]);
            assert_eq!(ch.after.matches, before[i].matches + 1);
        }
        assert!(changes[0].after.rating.mu > before[0].rating.mu);
        assert!(changes[1].after.rating.mu < before[1].rating.mu);
    }

    #[test]
    fn an_abort_needs_one_outcome_per_seat() {
        let m = record(MatchState::Scheduled, true, &[1, 2]);
        let out = SeatOutcome {
            joined: false,
            timeouts: 0,
            rejections: 0,
        };
        assert!(check_abort(&m, &[out, out]).is_ok());
        assert_eq!(
            message(check_abort(&m, &[out])),
            "invalid input: 1 outcomes for 2 seats"
        );
        let done = record(MatchState::Aborted, true, &[1, 2]);
        assert_eq!(
            message(check_abort(&done, &[out, out])),
            "not now: match 7 is aborted, so it cannot abort"
        );
    }

    #[test]
    fn a_validation_match_has_one_unrated_seat_and_its_verdict_round_trips() {
        let m = record(MatchState::Running, false, &[8]);
        assert_eq!(validation_version(&m).unwrap(), VersionId(8));
        assert_eq!(
            message(validation_version(&record(
                MatchState::Running,
                false,
                &[8, 9]
            ))),
            "invalid input: match 7 has 2 seats; a validation match has one"
        );
        assert_eq!(
            message(validation_version(&record(MatchState::Running, true, &[8]))),
            "invalid input: match 7 is rated; a validation match is not"
        );
        assert_eq!(verdict_to_text(&[]), (true, String::new()));
        let reasons = vec!["too slow".to_string(), "illegal move".to_string()];
        let (passed, text) = verdict_to_text(&reasons);
        assert!(!passed);
        assert_eq!(reasons_from_text(&text), reasons);
        assert!(reasons_from_text("").is_empty());
    }

    #[test]
    fn voiding_needs_a_reason_and_recomputes_only_a_rated_finish() {
        assert!(check_void_reason("cheating").is_ok());
        assert_eq!(
            message(check_void_reason(" ")),
            "invalid input: voiding a match needs a reason"
        );
        let mut m = record(MatchState::Finished, true, &[1, 2]);
        assert!(!check_voidable(&m).unwrap(), "finished but never rated");
        m.rated_seq = Some(3);
        assert!(check_voidable(&m).unwrap());
        assert!(!check_voidable(&record(MatchState::Aborted, true, &[1, 2])).unwrap());
        assert_eq!(
            message(check_voidable(&record(MatchState::Void, true, &[1, 2]))),
            "not now: match 7 is already void"
        );
    }

    #[test]
    fn a_void_replays_its_profile_without_the_match() {
        let config = RatingConfig::default();
        let voided = record(MatchState::Finished, true, &[1, 2]);
        let kept = rated(3, "classic", &[(1, 1), (3, 2)]);
        let matches = vec![
            kept.clone(),
            rated(7, "classic", &[(1, 1), (2, 2)]),
            rated(8, "other", &[(1, 1), (2, 2)]),
        ];
        let replayed = replay(&config, std::slice::from_ref(&kept));
        let current = |v: i64| RatingRow {
            season: SeasonId(1),
            profile: "classic".into(),
            version: VersionId(v),
            state: state(40.0, 2),
        };
        let unchanged = RatingRow {
            state: replayed[&("classic".to_string(), VersionId(3))],
            ..current(3)
        };
        let other_profile = RatingRow {
            profile: "other".into(),
            ..current(1)
        };
        let changes = void_changes(
            &config,
            &voided,
            matches,
            vec![current(1), current(2), unchanged, other_profile],
        );
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert_eq!(changes[0].version, VersionId(1));
        assert_eq!(changes[0].before, state(40.0, 2));
        assert_eq!(
            changes[0].after,
            replayed[&("classic".to_string(), VersionId(1))]
        );
        assert_eq!(changes[1].version, VersionId(2));
        assert_eq!(changes[1].after, RatingState::default());
    }

    #[test]
    fn rated_rows_group_by_match_and_a_seat_without_placing_is_refused() {
        let row = |m: i64, p: &str, v: i64, placing: Option<u8>| {
            (MatchId(m), p.to_string(), VersionId(v), placing)
        };
        let grouped = group_rated_matches([
            row(4, "classic", 1, Some(1)),
            row(4, "classic", 2, Some(2)),
            row(2, "other", 2, Some(1)),
            row(2, "other", 1, Some(1)),
        ])
        .unwrap();
        assert_eq!(
            grouped,
            vec![
                rated(4, "classic", &[(1, 1), (2, 2)]),
                rated(2, "other", &[(2, 1), (1, 1)]),
            ]
        );
        assert_eq!(
            message(group_rated_matches([row(4, "classic", 1, None)])),
            "not now: finished match 4 has a seat without a placing"
        );
    }

    #[test]
    fn a_seat_has_an_outcome_once_its_join_is_known() {
        let open = seat_record(VersionId(1), None, None, 0, 0);
        assert_eq!(open.outcome, None);
        let ended = seat_record(VersionId(1), Some(2), Some(true), 3, 0);
        assert_eq!(ended.placing, Some(2));
        assert_eq!(
            ended.outcome,
            Some(SeatOutcome {
                joined: true,
                timeouts: 3,
                rejections: 0,
            })
        );
    }

    #[test]
    fn rating_changes_apply_only_over_the_ratings_they_came_from() {
        let change = |v: i64, before: RatingState| RatingChange {
            profile: "classic".into(),
            version: VersionId(v),
            before,
            after: state(30.0, before.matches + 1),
        };
        let changes = [change(1, RatingState::default()), change(2, state(25.0, 3))];
        assert!(check_ratings_unchanged(&changes, &[None, Some(state(25.0, 3))]).is_ok());
        assert_eq!(
            message(check_ratings_unchanged(
                &changes,
                &[None, Some(state(26.0, 3))]
            )),
            "not now: the rating of version 2 in classic changed meanwhile"
        );
        assert!(check_ratings_unchanged(&changes, &[Some(state(1.0, 1)), None]).is_err());
        assert_eq!(rating_row(SeasonId(1), "classic", VersionId(2), None), None);
        assert_eq!(
            rating_row(SeasonId(1), "classic", VersionId(2), Some(state(25.0, 3))),
            Some(RatingRow {
                season: SeasonId(1),
                profile: "classic".into(),
                version: VersionId(2),
                state: state(25.0, 3),
            })
        );
    }

    #[test]
    fn sanctions_need_a_reason_an_existing_target_and_lift_once() {
        assert!(check_sanction_reason("spam").is_ok());
        assert_eq!(
            message(check_sanction_reason("")),
            "invalid input: a pause or ban needs a reason"
        );
        assert!(require_target(true, SanctionTarget::Bot(BotId(2))).is_ok());
        assert_eq!(
            message(require_target(false, SanctionTarget::Bot(BotId(2)))),
            "no bot 2"
        );
        for target in [
            SanctionTarget::Owner(OwnerId(1)),
            SanctionTarget::Bot(BotId(2)),
            SanctionTarget::Version(VersionId(3)),
        ] {
            let (kind, id) = target.parts();
            assert_eq!(sanction_target(kind, id), Some(target));
        }
        assert_eq!(sanction_target("team", 1), None);
        assert!(check_sanction_lifted_now(SanctionId(5), true).is_ok());
        assert_eq!(
            message(check_sanction_lifted_now(SanctionId(5), false)),
            "not now: sanction 5 is already lifted"
        );
    }
}
