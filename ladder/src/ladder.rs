//! The ladder's rules over a [`Store`]: registration and keys, versions, pauses and bans, match
//! results with health, voiding, rerating, and the matchmaker's view of the lobbies.

use std::collections::{BTreeMap, HashMap, HashSet};

use maumau_rating::{Rating, RatingConfig};

use crate::error::{LadderError, Result};
use crate::health::{HealthPolicy, SeatOutcome};
use crate::ids::{BotId, MatchId, Millis, OwnerId, SanctionId, SeasonId, VersionId};
use crate::keys::{KeyKind, RegistrationPolicy, SecretKey};
use crate::matchmaking::{Candidate, Format, Lobby, Table};
use crate::rerate::{RerateReport, check};
use crate::store::{
    KeySubject, MatchState, RatingCause, RatingChange, Sanction, SanctionKind, SanctionTarget,
    SeatResult, Store, Validation, VersionInfo, check_not_reserved,
};
use crate::validation::{CopyReport, ValidationNeed, ValidationPlan, ValidationPolicy};

/// The reserved owner of the house bots: the server's built-in bots, kept on the ladder by its
/// operator (see [`Ladder::house_version`]). Nobody may register an owner of this name.
pub const HOUSE_OWNER: &str = "house";

/// The label of a house bot's one version.
pub const HOUSE_VERSION: &str = "builtin";

/// The ladder's policies.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderConfig {
    /// Who may register.
    pub registration: RegistrationPolicy,
    /// The rating model.
    pub rating: RatingConfig,
    /// When a version is paused for health.
    pub health: HealthPolicy,
    /// Whether new versions are validated first, and what fails them.
    pub validation: ValidationPolicy,
    /// Newest versions of a bot that stay active (default 2).
    pub active_versions: usize,
    /// Most versions (active and retired) one bot may have (default [`MAX_VERSIONS`]); more are
    /// refused with [`LadderError::State`].
    pub max_versions: usize,
}

/// The default of [`LadderConfig::max_versions`].
pub const MAX_VERSIONS: usize = 100;

impl Default for LadderConfig {
    fn default() -> Self {
        LadderConfig {
            registration: RegistrationPolicy::Open,
            rating: RatingConfig::default(),
            health: HealthPolicy::default(),
            validation: ValidationPolicy::default(),
            active_versions: 2,
            max_versions: MAX_VERSIONS,
        }
    }
}

/// Who a key belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Principal {
    /// An owner.
    Owner(OwnerId),
    /// An active version (with its bot and owner).
    Version(VersionInfo),
}

/// Whether a version may be matched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Eligibility {
    /// Free to play.
    Active,
    /// New: no validation match passed yet, so no rated matches (only when validation is
    /// required).
    Validating,
    /// Failed a validation match; never matched again (its owner adds a fixed version).
    Rejected {
        /// The failed validation's reasons.
        reason: String,
    },
    /// On a health pause: may play one probe match.
    Probe {
        /// Why it was paused.
        reason: String,
        /// When the pause began (the probes' back-off counts from it: see
        /// [`crate::health::probe_wait`]).
        since: Millis,
    },
    /// Paused by hand (the version, its bot or its owner).
    Paused {
        /// Why.
        reason: String,
    },
    /// Banned (the version, its bot or its owner).
    Banned {
        /// Why.
        reason: String,
    },
    /// No longer among the newest versions of its bot.
    Retired,
}

/// A version just added: its key is shown once.
#[derive(Debug)]
pub struct NewVersion {
    /// The version.
    pub version: VersionId,
    /// Its first key.
    pub key: SecretKey,
    /// Versions of the same bot that retired to make room.
    pub retired: Vec<VersionId>,
}

/// What recording a match changed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchReport {
    /// Rating changes (empty for unrated or aborted matches).
    pub ratings: Vec<RatingChange>,
    /// Versions paused for health by this match, with the reason to tell them.
    pub paused: Vec<(VersionId, String)>,
    /// Versions whose health pause this clean probe match lifted.
    pub recovered: Vec<VersionId>,
    /// For a finished validation match: why it failed (empty when it passed).
    pub rejected: Vec<String>,
}

/// One line of a leaderboard: a bot with its best active version.
#[derive(Clone, Debug, PartialEq)]
pub struct Standing {
    /// 1 for the best.
    pub rank: usize,
    /// The bot.
    pub bot: BotId,
    /// The bot's name.
    pub bot_name: String,
    /// Its version shown (the best-scored active one).
    pub version: VersionId,
    /// The version's label.
    pub label: String,
    /// The version's rating.
    pub rating: Rating,
    /// μ − 3σ, what the board is sorted by.
    pub score: f64,
    /// The 95% interval of μ.
    pub interval95: (f64, f64),
    /// Rated matches in this season and profile.
    pub matches: u32,
}

/// A season's leaderboard for one profile.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Leaderboard {
    /// Bots with an established (not provisional) active version, best first.
    pub ranked: Vec<Standing>,
    /// Bots whose active versions are all provisional, best first (rank within this list).
    pub provisional: Vec<Standing>,
}

impl Leaderboard {
    /// The board of each bot's best line, `(provisional, standing)`: ranked and provisional
    /// lines apart, each best score first (ties by bot name), numbered from 1.
    pub fn rank(lines: impl IntoIterator<Item = (bool, Standing)>) -> Leaderboard {
        let mut board = Leaderboard::default();
        for (provisional, s) in lines {
            if provisional {
                board.provisional.push(s);
            } else {
                board.ranked.push(s);
            }
        }
        for list in [&mut board.ranked, &mut board.provisional] {
            list.sort_by(|a, b| {
                b.score
                    .total_cmp(&a.score)
                    .then_with(|| a.bot_name.cmp(&b.bot_name))
            });
            for (i, s) in list.iter_mut().enumerate() {
                s.rank = i + 1;
            }
        }
        board
    }
}

/// The ladder core over one store.
///
/// The store may be chosen at run time: a `Box<Ladder<SqliteStore>>` coerces to
/// `Box<Ladder<dyn Store>>`.
#[derive(Debug)]
pub struct Ladder<S: ?Sized> {
    config: LadderConfig,
    /// The house owner's id, once it is known (it never changes).
    house: std::sync::OnceLock<OwnerId>,
    // Last, so that a boxed ladder can be unsized to `Ladder<dyn Store>`.
    store: S,
}

impl<S: Store> Ladder<S> {
    /// A ladder over `store`.
    pub fn new(store: S, config: LadderConfig) -> Ladder<S> {
        Ladder {
            config,
            house: std::sync::OnceLock::new(),
            store,
        }
    }
}

impl<S: Store + ?Sized> Ladder<S> {
    /// The store.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The policies.
    pub fn config(&self) -> &LadderConfig {
        &self.config
    }

    // ----- registration and keys -----

    /// Registers an owner (checking the invitation code if registration needs one) and returns
    /// its owner key, shown once.
    pub fn register_owner(
        &self,
        name: &str,
        invitation: Option<&str>,
        now: Millis,
    ) -> Result<(OwnerId, SecretKey)> {
        self.config.registration.admits(invitation)?;
        check_not_reserved("owner", name, HOUSE_OWNER)?;
        let key = SecretKey::generate(KeyKind::Owner)?;
        let id = self.store.create_owner(name, &key.hash(), now)?;
        Ok((id, key))
    }

    /// The house owner, if the ladder has house bots (or had them).
    pub fn house_owner(&self) -> Result<Option<OwnerId>> {
        if let Some(id) = self.house.get() {
            return Ok(Some(*id));
        }
        let found = self.store.owner_named(HOUSE_OWNER)?.map(|o| o.id);
        if let Some(id) = found {
            let _ = self.house.set(id);
        }
        Ok(found)
    }

    /// Whether a bot's owner is the house owner: a house bot.
    pub fn is_house(&self, owner: OwnerId) -> Result<bool> {
        Ok(self.house_owner()? == Some(owner))
    }

    /// The version of house bot `name` (registered under the reserved owner [`HOUSE_OWNER`], with
    /// the one version [`HOUSE_VERSION`]), created on first use. A house version is never
    /// validated (it is one of the server's own bots) and has no key that anybody knows: the
    /// server plays its seats itself.
    pub fn house_version(&self, name: &str, now: Millis) -> Result<VersionId> {
        let owner = match self.house_owner()? {
            Some(o) => o,
            None => {
                let key = SecretKey::generate(KeyKind::Owner)?;
                let id = self.store.create_owner(HOUSE_OWNER, &key.hash(), now)?;
                let _ = self.house.set(id);
                id
            }
        };
        let bot = match self
            .store
            .bots_of(owner)?
            .into_iter()
            .find(|b| b.name == name)
        {
            Some(b) => b.id,
            None => self.store.create_bot(owner, name, now)?,
        };
        let versions = self.store.versions_of(bot)?;
        if let Some(v) = versions.iter().find(|v| v.label == HOUSE_VERSION) {
            return Ok(v.id);
        }
        let key = SecretKey::generate(KeyKind::Version)?;
        let (v, _) = self.store.create_version(
            bot,
            HOUSE_VERSION,
            &key.hash(),
            self.config.active_versions,
            now,
        )?;
        Ok(v)
    }

    /// Who holds this key. Unknown, malformed and revoked keys, and keys of retired versions, are
    /// all [`LadderError::Unauthenticated`].
    pub fn authenticate(&self, key: &str) -> Result<Principal> {
        let key = SecretKey::parse(key)?;
        let hash = key.hash();
        let rec = self
            .store
            .key_by_hash(&hash)?
            .ok_or(LadderError::Unauthenticated)?;
        if !rec.hash.matches(&hash) || rec.revoked_ms.is_some() || rec.subject.kind() != key.kind()
        {
            return Err(LadderError::Unauthenticated);
        }
        match rec.subject {
            KeySubject::Owner(o) => Ok(Principal::Owner(o)),
            KeySubject::Version(v) => {
                let version = self.store.version(v)?;
                if !version.is_active() {
                    return Err(LadderError::Unauthenticated);
                }
                let bot = self.store.bot(version.bot)?;
                Ok(Principal::Version(VersionInfo {
                    version: v,
                    bot: bot.id,
                    owner: bot.owner,
                }))
            }
        }
    }

    fn owner_of_key(&self, owner_key: &str) -> Result<OwnerId> {
        match self.authenticate(owner_key)? {
            Principal::Owner(o) => Ok(o),
            Principal::Version(_) => Err(LadderError::Forbidden(
                "this needs the owner key, not a version key".into(),
            )),
        }
    }

    fn check_bot_owner(&self, owner: OwnerId, bot: BotId) -> Result<()> {
        if self.store.bot(bot)?.owner != owner {
            return Err(LadderError::Forbidden(format!("bot {bot} is not yours")));
        }
        Ok(())
    }

    fn check_version_owner(&self, owner: OwnerId, version: VersionId) -> Result<()> {
        let v = self.store.version(version)?;
        self.check_bot_owner(owner, v.bot)
    }

    /// Registers a bot for the owner of `owner_key`.
    pub fn register_bot(&self, owner_key: &str, name: &str, now: Millis) -> Result<BotId> {
        let owner = self.owner_of_key(owner_key)?;
        if self.is_banned(SanctionTarget::Owner(owner))? {
            return Err(LadderError::Forbidden("the owner is banned".into()));
        }
        check_not_reserved("bot", name, HOUSE_OWNER)?;
        self.store.create_bot(owner, name, now)
    }

    /// Adds a version to one of the owner's bots; the older versions beyond
    /// [`LadderConfig::active_versions`] retire.
    pub fn add_version(
        &self,
        owner_key: &str,
        bot: BotId,
        label: &str,
        now: Millis,
    ) -> Result<NewVersion> {
        let owner = self.owner_of_key(owner_key)?;
        self.check_bot_owner(owner, bot)?;
        check_not_reserved("version", label, HOUSE_OWNER)?;
        let max = self.config.max_versions;
        if self.store.versions_of(bot)?.len() >= max {
            return Err(LadderError::State(format!(
                "bot {bot} has {max} versions, the most one bot may have; register a new bot \
                 for more"
            )));
        }
        let key = SecretKey::generate(KeyKind::Version)?;
        let (version, retired) =
            self.store
                .create_version(bot, label, &key.hash(), self.config.active_versions, now)?;
        Ok(NewVersion {
            version,
            key,
            retired,
        })
    }

    fn check_subject(&self, owner: OwnerId, subject: KeySubject) -> Result<()> {
        match subject {
            KeySubject::Owner(o) if o == owner => Ok(()),
            KeySubject::Owner(_) => Err(LadderError::Forbidden("not your owner key".into())),
            KeySubject::Version(v) => self.check_version_owner(owner, v),
        }
    }

    /// Replaces every live key of `subject` (the owner itself or one of its versions) with one new
    /// key, shown once. The old keys stop working at once.
    pub fn rotate_key(
        &self,
        owner_key: &str,
        subject: KeySubject,
        now: Millis,
    ) -> Result<SecretKey> {
        let owner = self.owner_of_key(owner_key)?;
        self.check_subject(owner, subject)?;
        let key = SecretKey::generate(subject.kind())?;
        let live: Vec<_> = self
            .store
            .keys_of(subject)?
            .into_iter()
            .filter(|k| k.revoked_ms.is_none())
            .collect();
        match live.split_first() {
            Some((first, rest)) => {
                self.store.rotate_key(first.id, &key.hash(), now)?;
                for k in rest {
                    self.store.revoke_key(k.id, now)?;
                }
            }
            None => {
                self.store.add_key(subject, &key.hash(), now)?;
            }
        }
        Ok(key)
    }

    /// Revokes every live key of a version of the owner's (the version cannot connect until a key
    /// is rotated in).
    pub fn revoke_version_keys(
        &self,
        owner_key: &str,
        version: VersionId,
        now: Millis,
    ) -> Result<usize> {
        let owner = self.owner_of_key(owner_key)?;
        self.check_version_owner(owner, version)?;
        let mut n = 0;
        for k in self.store.keys_of(KeySubject::Version(version))? {
            if k.revoked_ms.is_none() {
                self.store.revoke_key(k.id, now)?;
                n += 1;
            }
        }
        Ok(n)
    }

    // ----- pauses and bans -----

    fn targets_of(&self, version: VersionId) -> Result<[SanctionTarget; 3]> {
        let v = self.store.version(version)?;
        let bot = self.store.bot(v.bot)?;
        Ok([
            SanctionTarget::Version(version),
            SanctionTarget::Bot(bot.id),
            SanctionTarget::Owner(bot.owner),
        ])
    }

    fn is_banned(&self, target: SanctionTarget) -> Result<bool> {
        Ok(self
            .store
            .active_sanctions()?
            .iter()
            .any(|s| s.target == target && s.kind == SanctionKind::Ban))
    }

    /// Whether a version may be matched, from its retirement and every sanction in force on it,
    /// its bot and its owner (bans before manual pauses before health pauses).
    pub fn eligibility(&self, version: VersionId) -> Result<Eligibility> {
        let active = self.store.active_sanctions()?;
        self.eligibility_with(version, &active)
    }

    fn eligibility_with(&self, version: VersionId, active: &[Sanction]) -> Result<Eligibility> {
        if !self.store.version(version)?.is_active() {
            return Ok(Eligibility::Retired);
        }
        let targets = self.targets_of(version)?;
        let validations = if self.config.validation.required {
            self.store.validations_of(version)?
        } else {
            Vec::new()
        };
        let house = match targets[2] {
            SanctionTarget::Owner(o)
                if self.config.validation.required && validations.is_empty() =>
            {
                self.is_house(o)?
            }
            _ => false,
        };
        Ok(self.judge_eligibility(&targets, active, &validations, house))
    }

    /// The eligibility of an active version from the sanctions in force and its validations
    /// (a `house` version needs none): the one place these rules live.
    fn judge_eligibility(
        &self,
        targets: &[SanctionTarget; 3],
        active: &[Sanction],
        validations: &[Validation],
        house: bool,
    ) -> Eligibility {
        let on: Vec<&Sanction> = active
            .iter()
            .filter(|s| targets.contains(&s.target))
            .collect();
        let first = |k: SanctionKind| on.iter().find(|s| s.kind == k).map(|s| s.reason.clone());
        let health = on.iter().find(|s| s.kind == SanctionKind::Health);
        if let Some(reason) = first(SanctionKind::Ban) {
            Eligibility::Banned { reason }
        } else if let Some(reason) = first(SanctionKind::Pause) {
            Eligibility::Paused { reason }
        } else if let Some(failed) = validations.iter().find(|v| !v.passed) {
            Eligibility::Rejected {
                reason: rejection_reason(failed),
            }
        } else if let Some(h) = health {
            Eligibility::Probe {
                reason: h.reason.clone(),
                since: h.created_ms,
            }
        } else if self.config.validation.required && validations.is_empty() && !house {
            Eligibility::Validating
        } else {
            Eligibility::Active
        }
    }

    /// Pauses by hand (operator or owner). A manual pause is never lifted by a match.
    pub fn pause(&self, target: SanctionTarget, reason: &str, now: Millis) -> Result<SanctionId> {
        self.store
            .add_sanction(target, SanctionKind::Pause, reason, now)
    }

    /// Bans (operator).
    pub fn ban(&self, target: SanctionTarget, reason: &str, now: Millis) -> Result<SanctionId> {
        self.store
            .add_sanction(target, SanctionKind::Ban, reason, now)
    }

    fn lift(
        &self,
        target: SanctionTarget,
        kinds: &[SanctionKind],
        reason: &str,
        now: Millis,
    ) -> Result<Vec<SanctionId>> {
        let mut lifted = Vec::new();
        for s in self.store.active_sanctions()? {
            if s.target == target && kinds.contains(&s.kind) {
                self.store.lift_sanction(s.id, reason, now)?;
                lifted.push(s.id);
            }
        }
        Ok(lifted)
    }

    /// Lifts every pause (manual or health) on the target (operator).
    pub fn resume(
        &self,
        target: SanctionTarget,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<SanctionId>> {
        self.lift(
            target,
            &[SanctionKind::Pause, SanctionKind::Health],
            reason,
            now,
        )
    }

    /// Lifts every ban on the target (operator).
    pub fn unban(
        &self,
        target: SanctionTarget,
        reason: &str,
        now: Millis,
    ) -> Result<Vec<SanctionId>> {
        self.lift(target, &[SanctionKind::Ban], reason, now)
    }

    /// The owner resumes one of its versions after a health pause (having fixed it). Manual pauses
    /// and bans are the operator's: they stay.
    pub fn owner_resume(
        &self,
        owner_key: &str,
        version: VersionId,
        now: Millis,
    ) -> Result<Vec<SanctionId>> {
        let owner = self.owner_of_key(owner_key)?;
        self.check_version_owner(owner, version)?;
        self.lift(
            SanctionTarget::Version(version),
            &[SanctionKind::Health],
            "resumed by its owner",
            now,
        )
    }

    // ----- matches -----

    /// Records a finished match: rates it, then checks the health of every seat (pausing versions
    /// that fail the policy, lifting the health pause of versions whose probe was clean).
    pub fn record_finish(
        &self,
        id: MatchId,
        results: &[SeatResult],
        now: Millis,
    ) -> Result<MatchReport> {
        let ratings = self
            .store
            .finish_match(id, results, &self.config.rating, now)?;
        let mut report = self.after_match(id, now)?;
        report.ratings = ratings;
        Ok(report)
    }

    /// Records an aborted match (a no-show, a lost table): unrated, but seats that missed the join
    /// or timed out count against their health.
    pub fn record_abort(
        &self,
        id: MatchId,
        outcomes: &[SeatOutcome],
        reason: &str,
        now: Millis,
    ) -> Result<MatchReport> {
        self.store.abort_match(id, outcomes, reason, now)?;
        self.after_match(id, now)
    }

    /// Records a match aborted before its invitations were sent (the server was stopping, a lobby
    /// closed, the table could not be created): unrated, no seat joined, nobody at fault.
    pub fn record_unplayed(&self, id: MatchId, reason: &str, now: Millis) -> Result<MatchReport> {
        self.store.abort_uninvited(id, reason, now)?;
        self.after_match(id, now)
    }

    /// Records a finished validation match from how each copy of the version played: judges it
    /// by [`LadderConfig::validation`], stores the verdict, and checks health like any match.
    /// The report's `rejected` holds the reasons when it failed.
    pub fn record_validation(
        &self,
        id: MatchId,
        copies: &[CopyReport],
        now: Millis,
    ) -> Result<MatchReport> {
        if copies.is_empty() {
            return Err(LadderError::Invalid(
                "a validation match has at least one copy".into(),
            ));
        }
        let reasons = self.config.validation.judge(copies);
        let outcome = SeatOutcome {
            joined: true,
            timeouts: copies.iter().map(|c| c.timeouts).sum(),
            rejections: copies.iter().map(|c| c.rejections).sum(),
        };
        self.store.finish_validation(id, outcome, &reasons, now)?;
        let mut report = self.after_match(id, now)?;
        report.rejected = reasons;
        Ok(report)
    }

    /// What validation asks of the open lobbies: the versions that may not be rated yet, and the
    /// validation matches to make now. A version needs one passed validation in every profile it
    /// accepts that the ladder makes at a size it accepts (`formats` with a positive weight); it
    /// plays one validation match at a time, only when none of its matches is in flight, at the
    /// largest such size. Banned, paused, rejected and retired versions are left out.
    pub fn validation_plan(&self, lobbies: &[Lobby], formats: &[Format]) -> Result<ValidationPlan> {
        if !self.config.validation.required {
            return Ok(ValidationPlan::default());
        }
        let reads = self.round_reads(lobbies)?;
        Ok(self.plan_validation(&reads, lobbies, formats))
    }

    /// One matchmaking round's inputs, each read once: the validation plan, and the candidates
    /// among the lobbies it does not hold back (none when fewer than two are left). The same as
    /// [`Ladder::validation_plan`] then [`Ladder::candidates`] on the remaining lobbies, at about
    /// half the reads.
    pub fn round(
        &self,
        season: SeasonId,
        lobbies: &[Lobby],
        formats: &[Format],
    ) -> Result<(ValidationPlan, Vec<Candidate>)> {
        let reads = self.round_reads(lobbies)?;
        let plan = if self.config.validation.required {
            self.plan_validation(&reads, lobbies, formats)
        } else {
            ValidationPlan::default()
        };
        let rest: Vec<Lobby> = lobbies
            .iter()
            .filter(|l| !plan.waiting.contains(&l.version))
            .cloned()
            .collect();
        let candidates = if rest.len() < 2 {
            Vec::new()
        } else {
            self.candidates_from(&reads, season, &rest)?
        };
        Ok((plan, candidates))
    }

    /// The active versions with their bot and owner, by version.
    fn active_versions(&self) -> Result<HashMap<VersionId, VersionInfo>> {
        Ok(self
            .store
            .active_versions()?
            .into_iter()
            .map(|v| (v.version, v))
            .collect())
    }

    /// What a round needs to know of the lobbies' versions.
    fn round_reads(&self, lobbies: &[Lobby]) -> Result<RoundReads> {
        let active = self.active_versions()?;
        let mut in_flight: HashMap<VersionId, u32> = HashMap::new();
        for state in [MatchState::Scheduled, MatchState::Running] {
            for m in self.store.matches_in_state(state)? {
                for s in m.seats {
                    *in_flight.entry(s.version).or_default() += 1;
                }
            }
        }
        let mut validations = HashMap::new();
        if self.config.validation.required {
            for l in lobbies {
                if active.contains_key(&l.version) && !validations.contains_key(&l.version) {
                    validations.insert(l.version, self.store.validations_of(l.version)?);
                }
            }
        }
        Ok(RoundReads {
            house: self.house_owner()?,
            sanctions: self.store.active_sanctions()?,
            active,
            in_flight,
            validations,
        })
    }

    fn plan_validation(
        &self,
        reads: &RoundReads,
        lobbies: &[Lobby],
        formats: &[Format],
    ) -> ValidationPlan {
        let mut plan = ValidationPlan::default();
        let mut seen = HashSet::new();
        for l in lobbies {
            if !seen.insert(l.version) {
                continue;
            }
            if !matches!(
                reads.eligibility(self, l.version),
                Eligibility::Active | Eligibility::Validating | Eligibility::Probe { .. }
            ) {
                continue;
            }
            if reads.is_house(l.version) {
                continue;
            }
            let passed = reads.passed(l.version);
            let mut missing = Vec::new();
            for p in &l.profiles {
                if passed.contains(p.as_str()) || missing.iter().any(|(q, _)| q == p) {
                    continue;
                }
                let size = formats
                    .iter()
                    .filter(|f| f.weight > 0.0 && &f.profile == p && l.seats.contains(&f.seats))
                    .map(|f| f.seats)
                    .max();
                if let Some(size) = size {
                    missing.push((p.clone(), size));
                }
            }
            let Some((profile, seats)) = missing.first().cloned() else {
                continue;
            };
            plan.waiting.push(l.version);
            if reads.in_flight.contains_key(&l.version) {
                continue;
            }
            let half = seats.div_ceil(2);
            let copies = l.max_matches.clamp(1, u32::from(half)) as u8;
            plan.needs.push(ValidationNeed {
                version: l.version,
                profile,
                seats,
                copies,
            });
        }
        plan
    }

    fn after_match(&self, id: MatchId, now: Millis) -> Result<MatchReport> {
        let m = self.store.match_record(id)?;
        let mut report = MatchReport::default();
        for seat in &m.seats {
            let Some(outcome) = seat.outcome else {
                continue;
            };
            let v = seat.version;
            let history = self.store.sanctions_of(SanctionTarget::Version(v))?;
            let health = history
                .iter()
                .find(|s| s.lifted_ms.is_none() && s.kind == SanctionKind::Health);
            let manual = history
                .iter()
                .any(|s| s.lifted_ms.is_none() && s.kind == SanctionKind::Pause);
            if let Some(h) = health {
                // Only a match scheduled since the pause is a probe; one already in flight when
                // the version was paused proves nothing new.
                if m.state == MatchState::Finished
                    && !outcome.is_fault()
                    && m.created_ms >= h.created_ms
                {
                    self.store
                        .lift_sanction(h.id, &format!("clean probe match {id}"), now)?;
                    report.recovered.push(v);
                }
                continue;
            }
            if manual {
                continue;
            }
            // Judge only matches since the version was last resumed.
            let since = history
                .iter()
                .filter(|s| matches!(s.kind, SanctionKind::Health | SanctionKind::Pause))
                .filter_map(|s| s.lifted_ms)
                .max();
            let window = self.config.health.window.max(self.config.health.streak);
            let outcomes: Vec<SeatOutcome> = self
                .store
                .seat_history(v, since, window)?
                .into_iter()
                .filter(|h| h.invited)
                .map(|h| h.outcome)
                .collect();
            if let Some(reason) = self.config.health.assess(&outcomes) {
                self.store.add_sanction(
                    SanctionTarget::Version(v),
                    SanctionKind::Health,
                    &reason,
                    now,
                )?;
                report.paused.push((v, reason));
            }
        }
        Ok(report)
    }

    /// Voids a match (operator); ratings of its season and profile are recomputed without it.
    pub fn void_match(&self, id: MatchId, reason: &str, now: Millis) -> Result<Vec<RatingChange>> {
        self.store.void_match(id, reason, &self.config.rating, now)
    }

    /// Recomputes a season's ratings from its stored results and compares them with the stored
    /// ratings and events. Changes nothing.
    pub fn rerate(&self, season: SeasonId) -> Result<RerateReport> {
        let matches = self.store.rated_matches(season)?;
        let events = self.store.rating_events(season)?;
        let ratings = self.store.ratings(season)?;
        Ok(check(
            &self.config.rating,
            season,
            &matches,
            &events,
            &ratings,
        ))
    }

    /// Rerates and stores the recomputed ratings as `rerate` events where they differ.
    pub fn apply_rerate(&self, season: SeasonId, now: Millis) -> Result<Vec<RatingChange>> {
        let fix = self.rerate(season)?.corrections();
        self.store
            .apply_rating_changes(season, &fix, RatingCause::Rerate, now)?;
        Ok(fix)
    }

    // ----- leaderboard -----

    /// The leaderboard of a season and profile: each bot once, with its best active version by
    /// score, preferring established versions; banned versions, bots and owners are left out.
    pub fn leaderboard(&self, season: SeasonId, profile: &str) -> Result<Leaderboard> {
        let active = self.active_versions()?;
        let sanctions = self.store.active_sanctions()?;
        // Per bot: (provisional, standing) of its best version so far.
        let mut best: BTreeMap<BotId, (bool, Standing)> = BTreeMap::new();
        for row in self.store.ratings(season)? {
            if row.profile != profile || row.state.matches == 0 {
                continue;
            }
            let Some(info) = active.get(&row.version) else {
                continue;
            };
            if matches!(
                self.eligibility_with(row.version, &sanctions)?,
                Eligibility::Banned { .. }
            ) {
                continue;
            }
            let provisional = row.state.is_provisional(&self.config.rating);
            let r = row.state.rating;
            let better = best
                .get(&info.bot)
                .is_none_or(|(p, s)| (provisional, -r.score()) < (*p, -s.score));
            if better {
                let standing = Standing {
                    rank: 0,
                    bot: info.bot,
                    bot_name: self.store.bot(info.bot)?.name,
                    version: row.version,
                    label: self.store.version(row.version)?.label,
                    rating: r,
                    score: r.score(),
                    interval95: r.interval95(),
                    matches: row.state.matches,
                };
                best.insert(info.bot, (provisional, standing));
            }
        }
        Ok(Leaderboard::rank(best.into_values()))
    }

    // ----- matchmaking input -----

    /// The matchmaker's candidates from the open lobbies: unknown, retired, paused, banned,
    /// rejected and still validating versions are left out; a version on a health pause comes as
    /// a probe unless a match of it is already in flight; free capacity is the declared maximum
    /// minus matches in flight. When validation is required a version is offered only in the
    /// profiles it passed validation in (the matchmaker also holds back the versions of
    /// [`Ladder::validation_plan`]'s `waiting` list until every profile they accept passed).
    pub fn candidates(&self, season: SeasonId, lobbies: &[Lobby]) -> Result<Vec<Candidate>> {
        let reads = self.round_reads(lobbies)?;
        self.candidates_from(&reads, season, lobbies)
    }

    fn candidates_from(
        &self,
        reads: &RoundReads,
        season: SeasonId,
        lobbies: &[Lobby],
    ) -> Result<Vec<Candidate>> {
        let mut mu: HashMap<VersionId, BTreeMap<String, f64>> = HashMap::new();
        let mut rated: HashMap<VersionId, u32> = HashMap::new();
        for r in self.store.ratings(season)? {
            mu.entry(r.version)
                .or_default()
                .insert(r.profile, r.state.rating.mu);
            *rated.entry(r.version).or_default() += r.state.matches;
        }
        let last: HashMap<VersionId, Millis> = self.store.last_scheduled()?.into_iter().collect();
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        for l in lobbies {
            let Some(info) = reads.active.get(&l.version) else {
                continue;
            };
            if !seen.insert(l.version) {
                continue;
            }
            let busy = reads.in_flight.get(&l.version).copied().unwrap_or(0);
            let probe = match reads.eligibility(self, l.version) {
                Eligibility::Active => None,
                Eligibility::Probe { since, .. } if busy == 0 => Some(since),
                _ => continue,
            };
            // Rated only in profiles it passed validation in.
            let profiles: Vec<String> =
                if self.config.validation.required && !reads.is_house(l.version) {
                    let passed = reads.passed(l.version);
                    l.profiles
                        .iter()
                        .filter(|p| passed.contains(p.as_str()))
                        .cloned()
                        .collect()
                } else {
                    l.profiles.clone()
                };
            if profiles.is_empty() {
                continue;
            }
            out.push(Candidate {
                version: l.version,
                owner: info.owner,
                free: l.max_matches.saturating_sub(busy),
                profiles,
                seats: l.seats.clone(),
                mu: mu.remove(&l.version).unwrap_or_default(),
                rated_matches: rated.get(&l.version).copied().unwrap_or(0),
                last_scheduled: last.get(&l.version).copied(),
                probe,
            });
        }
        Ok(out)
    }

    /// Recent tables for the matchmaker to avoid repeating: the newest `limit` matches.
    pub fn recent_tables(&self, limit: usize) -> Result<Vec<Table>> {
        Ok(self
            .store
            .recent_matches(limit)?
            .into_iter()
            .map(|m| Table {
                profile: m.profile,
                seats: m.seats.iter().map(|s| s.version).collect(),
                seed: m.seed,
            })
            .collect())
    }
}

/// What one matchmaking round reads of the store, once (see [`Ladder::round`]).
struct RoundReads {
    /// Sanctions in force.
    sanctions: Vec<Sanction>,
    /// Active versions with their bot and owner.
    active: HashMap<VersionId, VersionInfo>,
    /// Matches scheduled or running, per version.
    in_flight: HashMap<VersionId, u32>,
    /// Validations of the lobbies' active versions (empty when validation is not required).
    validations: HashMap<VersionId, Vec<Validation>>,
    /// The house owner, whose versions need no validation.
    house: Option<OwnerId>,
}

impl RoundReads {
    fn eligibility<S: Store + ?Sized>(
        &self,
        ladder: &Ladder<S>,
        version: VersionId,
    ) -> Eligibility {
        let Some(info) = self.active.get(&version) else {
            return Eligibility::Retired;
        };
        let targets = [
            SanctionTarget::Version(version),
            SanctionTarget::Bot(info.bot),
            SanctionTarget::Owner(info.owner),
        ];
        let validations = self
            .validations
            .get(&version)
            .map_or(&[][..], Vec::as_slice);
        ladder.judge_eligibility(
            &targets,
            &self.sanctions,
            validations,
            self.is_house(version),
        )
    }

    /// Whether the version is a house bot's.
    fn is_house(&self, version: VersionId) -> bool {
        self.house.is_some() && self.active.get(&version).map(|i| i.owner) == self.house
    }

    /// The profiles the version passed validation in.
    fn passed(&self, version: VersionId) -> HashSet<&str> {
        self.validations
            .get(&version)
            .into_iter()
            .flatten()
            .filter(|v| v.passed)
            .map(|v| v.profile.as_str())
            .collect()
    }
}

/// The owner-facing reason of a failed validation.
fn rejection_reason(v: &Validation) -> String {
    format!(
        "failed validation in {} (ladder match {}): {}",
        v.profile,
        v.match_id,
        v.reasons.join("; ")
    )
}
