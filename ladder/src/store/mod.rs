//! Storage: one [`Store`] trait with two implementations, [`SqliteStore`] (one process, the
//! default) and [`PgStore`] (PostgreSQL, several server processes on one ladder).
//!
//! The trait is synchronous and every method is one transaction: a method either does all of its
//! work or none of it. Rules that must hold under concurrent writers live inside the methods (a
//! match is rated once because finishing checks and changes its state in the same transaction as
//! the rating events; ratings are read and written in that transaction too). An async server calls
//! the store from blocking tasks (`tokio::task::spawn_blocking`); the PostgreSQL implementation
//! keeps the same trait with row and advisory locks where SQLite has one writer.
//!
//! What a method checks and decides (its refusals and their messages, the rating of a finished
//! match, the recomputation after a void) is written once, as pure functions in `rules.rs`. How a
//! method does it (the statements, and the order in which it reads, asks the rule and writes) is
//! written once too, in `sql.rs`: one implementation of [`Store`] for every store that offers the
//! transaction handle of `backend.rs` (typed queries, an insert that returns the new id, the
//! PostgreSQL-only locks, empty on SQLite). `sqlite.rs` and `postgres.rs` hold only their
//! connections, their migrations and that handle; `nodes.rs` adds PostgreSQL's work queue, and
//! `events.rs` the queue of a tournament's games shared by workers on several machines.
//!
//! Schema changes are numbered steps in `migrations/sqlite/` and the same steps in
//! `migrations/postgres/`, applied in order at open and recorded in `schema_migrations`.

/// The database's clock in milliseconds since the Unix epoch, as SQL (spliced with `concat!`):
/// every time that decides liveness (`nodes.rs`, `events.rs`) is the database's.
macro_rules! db_now {
    () => {
        "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
    };
}

mod backend;
mod events;
mod nodes;
mod pg_tls;
mod postgres;
mod rules;
mod sql;
mod sqlite;

pub use events::{DoneGame, EventGame, EventInfo, EventState, NewEventGame};
pub use nodes::{
    Claimed, Host, Layout, MAX_RETRIES, NodeId, NodeInfo, Notice, Posted, Reaped, STALE_MS,
};
pub use postgres::{Availability, PgStore, PoolLimits};
pub use rules::{HOUSE_MARK, check_not_reserved, name_key};
pub use sqlite::{DATABASE_FILE, LOCK_FILE, SqliteStore};

use maumau_rating::{RatingConfig, RatingState};

use crate::error::Result;
use crate::health::SeatOutcome;
use crate::ids::{BotId, KeyId, MatchId, Millis, OwnerId, SanctionId, SeasonId, VersionId};
use crate::keys::{KeyHash, KeyKind};
use crate::matchmaking::Format;

/// An owner of bots.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owner {
    /// Row id.
    pub id: OwnerId,
    /// Unique display name.
    pub name: String,
    /// When it registered.
    pub created_ms: Millis,
}

/// A bot: a unique name under one owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bot {
    /// Row id.
    pub id: BotId,
    /// Its owner.
    pub owner: OwnerId,
    /// Unique name.
    pub name: String,
    /// When it was registered.
    pub created_ms: Millis,
}

/// A version of a bot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    /// Row id.
    pub id: VersionId,
    /// Its bot.
    pub bot: BotId,
    /// Immutable label, unique within the bot.
    pub label: String,
    /// When it was added.
    pub created_ms: Millis,
    /// When it retired (left the newest two of its bot); `None` while active.
    pub retired_ms: Option<Millis>,
}

impl Version {
    /// Not retired.
    pub fn is_active(&self) -> bool {
        self.retired_ms.is_none()
    }
}

/// An active version with its bot and owner, as the matchmaker needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionInfo {
    /// The version.
    pub version: VersionId,
    /// Its bot.
    pub bot: BotId,
    /// The bot's owner.
    pub owner: OwnerId,
}

/// What a key speaks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeySubject {
    /// An owner key.
    Owner(OwnerId),
    /// A version key.
    Version(VersionId),
}

impl KeySubject {
    /// The kind of key this subject holds.
    pub fn kind(self) -> KeyKind {
        match self {
            KeySubject::Owner(_) => KeyKind::Owner,
            KeySubject::Version(_) => KeyKind::Version,
        }
    }
}

/// A stored key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRecord {
    /// Row id.
    pub id: KeyId,
    /// Whom it speaks for.
    pub subject: KeySubject,
    /// SHA-256 of the key.
    pub hash: KeyHash,
    /// When it was issued.
    pub created_ms: Millis,
    /// When it was revoked (or replaced by rotation).
    pub revoked_ms: Option<Millis>,
}

/// A season of ratings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Season {
    /// Row id.
    pub id: SeasonId,
    /// Unique name.
    pub name: String,
    /// When it opened.
    pub opened_ms: Millis,
    /// When it closed (frozen); `None` while open.
    pub closed_ms: Option<Millis>,
}

/// Where a match is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MatchState {
    /// Created by the matchmaker; invitations out.
    Scheduled,
    /// Every seat joined; being played.
    Running,
    /// Played to the end; rated if it was a rated match.
    Finished,
    /// Stopped before the end (a no-show, a lost node); never rated.
    Aborted,
    /// Taken out by an operator; its ratings were recomputed without it.
    Void,
}

impl MatchState {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            MatchState::Scheduled => "scheduled",
            MatchState::Running => "running",
            MatchState::Finished => "finished",
            MatchState::Aborted => "aborted",
            MatchState::Void => "void",
        }
    }

    /// The state named by [`MatchState::as_str`].
    pub fn from_str_opt(s: &str) -> Option<MatchState> {
        Some(match s {
            "scheduled" => MatchState::Scheduled,
            "running" => MatchState::Running,
            "finished" => MatchState::Finished,
            "aborted" => MatchState::Aborted,
            "void" => MatchState::Void,
            _ => return None,
        })
    }
}

/// A match to schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewMatch {
    /// The season it counts for.
    pub season: SeasonId,
    /// Rule profile name.
    pub profile: String,
    /// The deal seed.
    pub seed: u64,
    /// Whether it is rated when it finishes.
    pub rated: bool,
    /// The version at each seat, in seat order.
    pub seats: Vec<VersionId>,
}

/// How one seat ended a finished match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatResult {
    /// Placing (1 is best, equal placings tie).
    pub placing: u8,
    /// Decisions the seat did not make in time.
    pub timeouts: u32,
    /// Actions from the seat the server refused, for any reason.
    pub rejections: u32,
}

/// One seat of a stored match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatRecord {
    /// The version seated.
    pub version: VersionId,
    /// Its placing, for a finished match.
    pub placing: Option<u8>,
    /// Its join, timeouts and rejections, once the match ended.
    pub outcome: Option<SeatOutcome>,
}

/// A stored match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchRecord {
    /// Row id.
    pub id: MatchId,
    /// Its season.
    pub season: SeasonId,
    /// Rule profile name.
    pub profile: String,
    /// The deal seed.
    pub seed: u64,
    /// Whether it counts for ratings when finished.
    pub rated: bool,
    /// Where it is in its life.
    pub state: MatchState,
    /// Its place in the rating order, once rated.
    pub rated_seq: Option<i64>,
    /// When it was scheduled.
    pub created_ms: Millis,
    /// When it started running.
    pub started_ms: Option<Millis>,
    /// When it finished, aborted or was voided.
    pub ended_ms: Option<Millis>,
    /// Why it was aborted or voided.
    pub reason: Option<String>,
    /// The game server's id of its table ([`Store::set_server_match_id`]); `None` before the
    /// table is created, for a match that never got one, and for matches scheduled before the
    /// store kept it.
    pub server_match_id: Option<String>,
    /// Its seats, in seat order.
    pub seats: Vec<SeatRecord>,
}

/// A finished, rated match as the rating model sees it (what [`maumau_rating::replay`] reads):
/// the ladder's match id, its profile, and the version and placing of each seat.
pub type RatedMatch = maumau_rating::RatedMatch<MatchId, VersionId>;

/// A version's current rating in one season and profile.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingRow {
    /// The season.
    pub season: SeasonId,
    /// The profile.
    pub profile: String,
    /// The version.
    pub version: VersionId,
    /// Rating and matches.
    pub state: RatingState,
}

/// Why a rating changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RatingCause {
    /// A rated match finished.
    Match,
    /// A match was voided and ratings recomputed without it.
    Void,
    /// An operator applied a recomputation.
    Rerate,
}

impl RatingCause {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RatingCause::Match => "match",
            RatingCause::Void => "void",
            RatingCause::Rerate => "rerate",
        }
    }

    /// The cause named by [`RatingCause::as_str`].
    pub fn from_str_opt(s: &str) -> Option<RatingCause> {
        Some(match s {
            "match" => RatingCause::Match,
            "void" => RatingCause::Void,
            "rerate" => RatingCause::Rerate,
            _ => return None,
        })
    }
}

/// One change of one version's rating.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingChange {
    /// The profile.
    pub profile: String,
    /// The version.
    pub version: VersionId,
    /// Before.
    pub before: RatingState,
    /// After.
    pub after: RatingState,
}

/// A stored rating event.
#[derive(Clone, Debug, PartialEq)]
pub struct RatingEvent {
    /// Row id; events of one key are applied in id order.
    pub id: i64,
    /// The season.
    pub season: SeasonId,
    /// The match that caused it (for `Match` and `Void`).
    pub match_id: Option<MatchId>,
    /// Why.
    pub cause: RatingCause,
    /// The change.
    pub change: RatingChange,
    /// When.
    pub created_ms: Millis,
}

/// What a pause or ban applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SanctionTarget {
    /// Every bot and version of an owner.
    Owner(OwnerId),
    /// Every version of a bot.
    Bot(BotId),
    /// One version.
    Version(VersionId),
}

impl SanctionTarget {
    /// The target's kind as stored (`owner`, `bot`, `version`) and its id.
    pub(crate) fn parts(self) -> (&'static str, i64) {
        match self {
            SanctionTarget::Owner(id) => ("owner", id.0),
            SanctionTarget::Bot(id) => ("bot", id.0),
            SanctionTarget::Version(id) => ("version", id.0),
        }
    }

    /// The table that holds the target.
    pub(crate) fn table(self) -> &'static str {
        match self {
            SanctionTarget::Owner(_) => "owners",
            SanctionTarget::Bot(_) => "bots",
            SanctionTarget::Version(_) => "versions",
        }
    }
}

/// The kind of a sanction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SanctionKind {
    /// Banned by an operator.
    Ban,
    /// Paused by hand (operator or owner); never lifted by a match.
    Pause,
    /// Paused for health; lifted by one clean probe match or by the owner.
    Health,
}

impl SanctionKind {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            SanctionKind::Ban => "ban",
            SanctionKind::Pause => "pause",
            SanctionKind::Health => "health",
        }
    }

    /// The kind named by [`SanctionKind::as_str`].
    pub fn from_str_opt(s: &str) -> Option<SanctionKind> {
        Some(match s {
            "ban" => SanctionKind::Ban,
            "pause" => SanctionKind::Pause,
            "health" => SanctionKind::Health,
            _ => return None,
        })
    }
}

/// A pause or ban, current or lifted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sanction {
    /// Row id.
    pub id: SanctionId,
    /// What it applies to.
    pub target: SanctionTarget,
    /// Ban, manual pause or health pause.
    pub kind: SanctionKind,
    /// Why, as shown to the owner.
    pub reason: String,
    /// When it began.
    pub created_ms: Millis,
    /// When it was lifted; `None` while in force.
    pub lifted_ms: Option<Millis>,
    /// Why it was lifted.
    pub lifted_reason: Option<String>,
}

/// One of a version's ended matches, for health.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeatHistory {
    /// The match.
    pub match_id: MatchId,
    /// How it ended (finished, aborted or void).
    pub state: MatchState,
    /// When it ended.
    pub ended_ms: Millis,
    /// The version's join and timeouts (not joined, no timeouts, when it was never invited).
    pub outcome: SeatOutcome,
    /// False when the match was aborted before its invitations were sent: the seat could not
    /// join, and the match says nothing about the version's health.
    pub invited: bool,
}

/// The verdict of a finished validation match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validation {
    /// The validation match.
    pub match_id: MatchId,
    /// The version under test.
    pub version: VersionId,
    /// The profile it was validated in.
    pub profile: String,
    /// True when it passed (no reasons).
    pub passed: bool,
    /// Why it failed, one reason each; empty when it passed.
    pub reasons: Vec<String>,
    /// When the match ended.
    pub ended_ms: Millis,
    /// The game server's id of the match's table, as [`MatchRecord::server_match_id`].
    pub server_match_id: Option<String>,
}

/// A version's results in one season and profile, over its finished rated matches (voided ones
/// left out): what the leaderboard shows next to the rating.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlacingStats {
    /// The version.
    pub version: VersionId,
    /// Finished rated matches.
    pub matches: u32,
    /// Of them, matches placed first (ties included).
    pub wins: u32,
    /// The sum of its placings (divide by `matches` for the average).
    pub placing_sum: u64,
    /// Decisions it did not make in time, over those matches.
    pub timeouts: u64,
}

/// Everything the ladder keeps. Every method is atomic.
pub trait Store: Send + Sync {
    // ----- owners, bots, versions -----

    /// Registers an owner together with its first owner key.
    fn create_owner(&self, name: &str, key: &KeyHash, now: Millis) -> Result<OwnerId>;
    /// The owner with this id.
    fn owner(&self, id: OwnerId) -> Result<Owner>;
    /// The owner with this name, if any.
    fn owner_named(&self, name: &str) -> Result<Option<Owner>>;
    /// Registers a bot under an owner.
    fn create_bot(&self, owner: OwnerId, name: &str, now: Millis) -> Result<BotId>;
    /// The bot with this id.
    fn bot(&self, id: BotId) -> Result<Bot>;
    /// An owner's bots, oldest first.
    fn bots_of(&self, owner: OwnerId) -> Result<Vec<Bot>>;
    /// Adds a version with its first version key, and retires every version of the bot but the
    /// `keep_active` newest (the new one counts). Returns the new id and the ids it retired.
    fn create_version(
        &self,
        bot: BotId,
        label: &str,
        key: &KeyHash,
        keep_active: usize,
        now: Millis,
    ) -> Result<(VersionId, Vec<VersionId>)>;
    /// The version with this id.
    fn version(&self, id: VersionId) -> Result<Version>;
    /// A bot's versions, newest first.
    fn versions_of(&self, bot: BotId) -> Result<Vec<Version>>;
    /// Every active version with its bot and owner.
    fn active_versions(&self) -> Result<Vec<VersionInfo>>;

    // ----- keys -----

    /// The key with this hash, revoked or not.
    fn key_by_hash(&self, hash: &KeyHash) -> Result<Option<KeyRecord>>;
    /// Issues another key for a subject.
    fn add_key(&self, subject: KeySubject, hash: &KeyHash, now: Millis) -> Result<KeyId>;
    /// A subject's keys, oldest first.
    fn keys_of(&self, subject: KeySubject) -> Result<Vec<KeyRecord>>;
    /// Revokes a key (an already revoked key stays revoked at its first time).
    fn revoke_key(&self, id: KeyId, now: Millis) -> Result<()>;
    /// Revokes a live key and issues its replacement for the same subject, atomically.
    fn rotate_key(&self, old: KeyId, new: &KeyHash, now: Millis) -> Result<KeyId>;

    // ----- seasons -----

    /// Opens a season; fails while another is open.
    fn open_season(&self, name: &str, now: Millis) -> Result<SeasonId>;
    /// Closes (freezes) an open season.
    fn close_season(&self, id: SeasonId, now: Millis) -> Result<()>;
    /// The open season, if any.
    fn current_season(&self) -> Result<Option<Season>>;
    /// Every season, oldest first.
    fn seasons(&self) -> Result<Vec<Season>>;

    // ----- formats -----

    /// Replaces the formats the matchmaker makes (an operator's SetFormats), in the order given;
    /// they outlive a restart and apply on every node of a shared store. Checking them is the
    /// caller's (the profile exists, the seats are in its range, a positive weight somewhere).
    fn set_formats(&self, formats: &[Format], now: Millis) -> Result<()>;
    /// The formats an operator set and when; `None` until one has (the configuration's apply).
    fn formats(&self) -> Result<Option<(Vec<Format>, Millis)>>;

    // ----- matches -----

    /// Schedules a match in an open season; every seat must hold a distinct active version. A
    /// rated match has at least 2 seats; an unrated one (a validation match, whose one stored
    /// seat is the version under test) at least 1.
    fn schedule_match(&self, m: &NewMatch, now: Millis) -> Result<MatchId>;
    /// Records the game server's id of the match's table, once, when the table is created (the
    /// same id again changes nothing; another is refused). Any state: a match ended by an
    /// operator or a reaper while its table was being created still had that table.
    fn set_server_match_id(&self, id: MatchId, server_match_id: &str) -> Result<()>;
    /// The game server's ids of every match's table the store knows, in match id order.
    fn server_match_ids(&self) -> Result<Vec<String>>;
    /// Scheduled → running.
    fn start_match(&self, id: MatchId, now: Millis) -> Result<()>;
    /// Scheduled or running → finished, with one result per seat. A rated match of a still open
    /// season is rated in the same transaction (one event per seat) and the changes returned; a
    /// match whose season has closed meanwhile is stored unrated.
    fn finish_match(
        &self,
        id: MatchId,
        results: &[SeatResult],
        config: &RatingConfig,
        now: Millis,
    ) -> Result<Vec<RatingChange>>;
    /// Scheduled or running → aborted (unrated), with each seat's join and timeouts.
    fn abort_match(
        &self,
        id: MatchId,
        outcomes: &[SeatOutcome],
        reason: &str,
        now: Millis,
    ) -> Result<()>;
    /// Scheduled → aborted (unrated) before any invitation was sent: no seat could join, so every
    /// seat reads "not joined" and none counts against its health (its join stays unknown).
    fn abort_uninvited(&self, id: MatchId, reason: &str, now: Millis) -> Result<()>;
    /// A validation match (unrated, one seat), scheduled or running → finished, with the version's
    /// join and timeouts and the verdict (`reasons` empty: passed), in one transaction.
    fn finish_validation(
        &self,
        id: MatchId,
        outcome: SeatOutcome,
        reasons: &[String],
        now: Millis,
    ) -> Result<()>;
    /// A version's validation verdicts, oldest first.
    fn validations_of(&self, version: VersionId) -> Result<Vec<Validation>>;
    /// Any state but void → void. If it had been rated, its season and profile are recomputed
    /// without it and every changed rating gets a `Void` event; the changes are returned.
    fn void_match(
        &self,
        id: MatchId,
        reason: &str,
        config: &RatingConfig,
        now: Millis,
    ) -> Result<Vec<RatingChange>>;
    /// The match with this id.
    fn match_record(&self, id: MatchId) -> Result<MatchRecord>;
    /// Matches in a state, oldest first.
    fn matches_in_state(&self, state: MatchState) -> Result<Vec<MatchRecord>>;
    /// The newest `limit` matches, newest first.
    fn recent_matches(&self, limit: usize) -> Result<Vec<MatchRecord>>;
    /// A version's ended matches that ended after `since` (exclusive), newest first (by when they
    /// were scheduled, so the newest index entries are read first), at most `limit`.
    fn seat_history(
        &self,
        version: VersionId,
        since: Option<Millis>,
        limit: usize,
    ) -> Result<Vec<SeatHistory>>;
    /// When each version last had a match scheduled (versions that never played are absent).
    fn last_scheduled(&self) -> Result<Vec<(VersionId, Millis)>>;
    /// Per version, its results in the finished rated matches of a season and profile, by
    /// version id (versions without such a match are absent).
    ///
    /// The default reads every rated match of the season ([`Store::rated_matches`]) and each of
    /// the profile's records ([`Store::match_record`]) for the timeouts: correct, but one query
    /// per match; a store should answer it with one aggregate query.
    fn placing_stats(&self, season: SeasonId, profile: &str) -> Result<Vec<PlacingStats>> {
        let mut stats: std::collections::BTreeMap<VersionId, PlacingStats> =
            std::collections::BTreeMap::new();
        for m in self.rated_matches(season)? {
            if m.profile != profile {
                continue;
            }
            let record = self.match_record(m.id)?;
            for (version, placing) in m.seats {
                let timeouts = record
                    .seats
                    .iter()
                    .find(|s| s.version == version)
                    .and_then(|s| s.outcome)
                    .map_or(0, |o| o.timeouts);
                let s = stats.entry(version).or_insert(PlacingStats {
                    version,
                    matches: 0,
                    wins: 0,
                    placing_sum: 0,
                    timeouts: 0,
                });
                s.matches += 1;
                s.wins += u32::from(placing == 1);
                s.placing_sum += u64::from(placing);
                s.timeouts += u64::from(timeouts);
            }
        }
        Ok(stats.into_values().collect())
    }

    // ----- ratings -----

    /// Current ratings in a season, by profile then version.
    fn ratings(&self, season: SeasonId) -> Result<Vec<RatingRow>>;
    /// One version's current rating in a season and profile (`None` before its first match).
    fn rating(
        &self,
        season: SeasonId,
        profile: &str,
        version: VersionId,
    ) -> Result<Option<RatingRow>>;
    /// Every rating event of a season, in id order.
    fn rating_events(&self, season: SeasonId) -> Result<Vec<RatingEvent>>;
    /// The season's finished rated matches, in the order they were rated.
    fn rated_matches(&self, season: SeasonId) -> Result<Vec<RatedMatch>>;
    /// Writes rating changes as events of `cause` and updates the current ratings, but only if
    /// every `before` still equals the stored rating (otherwise nothing is written).
    fn apply_rating_changes(
        &self,
        season: SeasonId,
        changes: &[RatingChange],
        cause: RatingCause,
        now: Millis,
    ) -> Result<()>;

    // ----- pauses and bans -----

    /// Starts a pause or ban.
    fn add_sanction(
        &self,
        target: SanctionTarget,
        kind: SanctionKind,
        reason: &str,
        now: Millis,
    ) -> Result<SanctionId>;
    /// Lifts a sanction in force.
    fn lift_sanction(&self, id: SanctionId, reason: &str, now: Millis) -> Result<()>;
    /// Every sanction in force.
    fn active_sanctions(&self) -> Result<Vec<Sanction>>;
    /// Every sanction of a target, lifted or not, oldest first.
    fn sanctions_of(&self, target: SanctionTarget) -> Result<Vec<Sanction>>;
}
