//! Matchmaking: from free capacity to tables. Pure and seeded: the same input and seed always give
//! the same tables.
//!
//! Every call fills as much declared capacity as it can. Anchors are taken in priority order:
//! versions that are new (fewer than [`MatchmakingConfig::new_matches`] rated matches, or never
//! scheduled) or idle for at least [`MatchmakingConfig::idle_after_ms`] come first, the longest
//! waiting first. For an anchor a format (profile and table size) is drawn by the operator's
//! weights among those it accepts and that enough others accept. Each other seat is drawn at
//! random from all eligible versions with probability [`MatchmakingConfig::random_share`];
//! otherwise from the [`MatchmakingConfig::window`] versions nearest the anchor's μ in that
//! profile, or now and then ([`MatchmakingConfig::wide_chance`]) from a wide window.
//!
//! Hard rules: a version sits at most once per table and only within its free capacity; never two
//! versions of the same owner at one table; only formats every seat accepts; paused and banned
//! versions are not candidates at all (the caller leaves them out), and a version on a health pause
//! comes as a probe: at most one probe per table, one table per probe. Soft rule: a table that
//! repeats a recent one (same profile and the same versions) is drawn again, up to
//! [`MatchmakingConfig::repeat_attempts`] times, and kept only if no other table came out.

use std::collections::{BTreeMap, HashSet};

use maumau_rating::Rating;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

use crate::ids::{Millis, OwnerId, VersionId};

/// What a version's lobby declares: the matchmaker's input, from which `Ladder::candidates`
/// makes [`Candidate`]s (on a shared ladder, what each node publishes of its open lobbies).
#[derive(Clone, Debug, PartialEq)]
pub struct Lobby {
    /// The version.
    pub version: VersionId,
    /// Matches it will play at once.
    pub max_matches: u32,
    /// Profiles it accepts.
    pub profiles: Vec<String>,
    /// Table sizes it accepts.
    pub seats: Vec<u8>,
}

/// A version that can be matched now.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The version.
    pub version: VersionId,
    /// Its owner (two versions of one owner never meet).
    pub owner: OwnerId,
    /// Matches it can still take now (declared maximum minus matches in flight).
    pub free: u32,
    /// Profiles it accepts.
    pub profiles: Vec<String>,
    /// Table sizes it accepts.
    pub seats: Vec<u8>,
    /// Its μ per profile (missing: the default 25).
    pub mu: BTreeMap<String, f64>,
    /// Rated matches in the current season, over all profiles.
    pub rated_matches: u32,
    /// When it was last scheduled; `None` if never.
    pub last_scheduled: Option<Millis>,
    /// On a health pause (since this time): may play one probe match.
    pub probe: Option<Millis>,
}

impl Candidate {
    fn accepts(&self, f: &Format) -> bool {
        self.seats.contains(&f.seats) && self.profiles.contains(&f.profile)
    }

    fn mu_in(&self, profile: &str) -> f64 {
        self.mu
            .get(profile)
            .copied()
            .unwrap_or_else(|| Rating::default().mu)
    }
}

/// A profile and table size with the operator's weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Format {
    /// Rule profile name.
    pub profile: String,
    /// Seats at the table.
    pub seats: u8,
    /// Relative weight (0 turns the format off).
    pub weight: f64,
}

/// The matchmaker's knobs.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchmakingConfig {
    /// Formats to create, with weights.
    pub formats: Vec<Format>,
    /// Nearest-rated versions an opponent is usually drawn from (default 4).
    pub window: usize,
    /// The occasional wide window (default 16).
    pub wide_window: usize,
    /// Chance of the wide window for a seat (default 0.1).
    pub wide_chance: f64,
    /// Share of seats drawn at random from all eligible versions (default 0.15).
    pub random_share: f64,
    /// Rated matches below which a version counts as new (default 10).
    pub new_matches: u32,
    /// Time since its last match after which a version counts as idle (default 10 minutes).
    pub idle_after_ms: Millis,
    /// Draws of a table that repeats a recent one before it is accepted anyway (default 8).
    pub repeat_attempts: usize,
    /// Most tables per call (default unlimited).
    pub max_tables: usize,
}

impl MatchmakingConfig {
    /// The defaults with these formats.
    pub fn new(formats: Vec<Format>) -> MatchmakingConfig {
        MatchmakingConfig {
            formats,
            window: 4,
            wide_window: 16,
            wide_chance: 0.1,
            random_share: 0.15,
            new_matches: 10,
            idle_after_ms: 10 * 60 * 1000,
            repeat_attempts: 8,
            max_tables: usize::MAX,
        }
    }
}

/// A table to schedule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    /// Rule profile name.
    pub profile: String,
    /// Versions in seat order.
    pub seats: Vec<VersionId>,
    /// The deal seed.
    pub seed: u64,
}

impl Table {
    /// The profile and the versions as a set: two tables with the same key repeat each other.
    pub fn key(&self) -> (String, Vec<VersionId>) {
        let mut v = self.seats.clone();
        v.sort();
        (self.profile.clone(), v)
    }
}

struct Planner<'a> {
    config: &'a MatchmakingConfig,
    cands: &'a [Candidate],
    free: Vec<u32>,
    recent: HashSet<(String, Vec<VersionId>)>,
    rng: Pcg64,
}

impl Planner<'_> {
    /// Indices of versions that could take a seat of format `f` next to `seated`.
    fn eligible(&self, f: &Format, seated: &[usize]) -> Vec<usize> {
        let probe_seated = seated.iter().any(|&i| self.cands[i].probe.is_some());
        (0..self.cands.len())
            .filter(|&i| {
                let c = &self.cands[i];
                self.free[i] > 0
                    && c.accepts(f)
                    && !seated.contains(&i)
                    && !seated.iter().any(|&s| self.cands[s].owner == c.owner)
                    && !(probe_seated && c.probe.is_some())
            })
            .collect()
    }

    /// Whether enough distinct owners could fill the rest of a table for `anchor`.
    fn feasible(&self, f: &Format, anchor: usize) -> bool {
        let owners: HashSet<OwnerId> = self
            .eligible(f, &[anchor])
            .into_iter()
            .map(|i| self.cands[i].owner)
            .collect();
        owners.len() + 1 >= usize::from(f.seats)
    }

    fn pick_format(&mut self, anchor: usize) -> Option<&'_ Format> {
        let config = self.config;
        let options: Vec<&Format> = config
            .formats
            .iter()
            .filter(|f| {
                f.weight > 0.0
                    && f.seats >= 2
                    && self.cands[anchor].accepts(f)
                    && self.feasible(f, anchor)
            })
            .collect();
        let total: f64 = options.iter().map(|f| f.weight).sum();
        if options.is_empty() || total <= 0.0 {
            return None;
        }
        let mut x = self.rng.random::<f64>() * total;
        for f in &options {
            if x < f.weight {
                return Some(f);
            }
            x -= f.weight;
        }
        options.last().copied()
    }

    fn draw_seats(&mut self, f: &Format, anchor: usize) -> Option<Vec<usize>> {
        let mut seated = vec![anchor];
        let anchor_mu = self.cands[anchor].mu_in(&f.profile);
        let distance: Vec<f64> = self
            .cands
            .iter()
            .map(|c| (c.mu_in(&f.profile) - anchor_mu).abs())
            .collect();
        while seated.len() < usize::from(f.seats) {
            let mut pool = self.eligible(f, &seated);
            if pool.is_empty() {
                return None;
            }
            let pick = if self.rng.random::<f64>() < self.config.random_share {
                pool[self.rng.random_range(0..pool.len())]
            } else {
                let window = if self.rng.random::<f64>() < self.config.wide_chance {
                    self.config.wide_window
                } else {
                    self.config.window
                }
                .max(1);
                pool.sort_by(|&a, &b| distance[a].total_cmp(&distance[b]).then(a.cmp(&b)));
                pool[self.rng.random_range(0..window.min(pool.len()))]
            };
            seated.push(pick);
        }
        Some(seated)
    }

    fn build(&mut self, anchor: usize) -> Option<Table> {
        let f = self.pick_format(anchor)?.clone();
        let mut fallback = None;
        for _ in 0..self.config.repeat_attempts.max(1) {
            let Some(mut seats) = self.draw_seats(&f, anchor) else {
                continue;
            };
            // Seat order decides who starts: shuffle it.
            for i in (1..seats.len()).rev() {
                let j = self.rng.random_range(0..=i);
                seats.swap(i, j);
            }
            let table = Table {
                profile: f.profile.clone(),
                seats: seats.iter().map(|&i| self.cands[i].version).collect(),
                seed: self.rng.random(),
            };
            if !self.recent.contains(&table.key()) {
                return Some(table);
            }
            fallback.get_or_insert(table);
        }
        fallback
    }
}

/// Plans tables for the free capacity of `candidates`. `recent` are tables played or scheduled
/// lately (their repeats are avoided); `now` judges idleness; `seed` makes the plan reproducible.
pub fn plan_tables(
    config: &MatchmakingConfig,
    candidates: &[Candidate],
    recent: &[Table],
    now: Millis,
    seed: u64,
) -> Vec<Table> {
    let mut p = Planner {
        config,
        cands: candidates,
        free: candidates
            .iter()
            .map(|c| {
                if c.probe.is_some() {
                    c.free.min(1)
                } else {
                    c.free
                }
            })
            .collect(),
        recent: recent.iter().map(Table::key).collect(),
        rng: Pcg64::seed_from_u64(seed),
    };
    // Priority: new or idle first, then the longest since last scheduled; random among equals.
    let mut order: Vec<(bool, Millis, u64, usize)> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let waiting = c.rated_matches < config.new_matches
                || c.last_scheduled
                    .is_none_or(|t| now.saturating_sub(t) >= config.idle_after_ms);
            (
                !waiting,
                c.last_scheduled.unwrap_or(Millis::MIN),
                p.rng.random(),
                i,
            )
        })
        .collect();
    order.sort();
    let mut order: Vec<usize> = order.into_iter().map(|o| o.3).collect();
    let mut failed = vec![false; candidates.len()];
    let mut tables = Vec::new();
    while tables.len() < config.max_tables {
        let Some(pos) = order.iter().position(|&i| p.free[i] > 0 && !failed[i]) else {
            break;
        };
        let anchor = order[pos];
        match p.build(anchor) {
            Some(t) => {
                for v in &t.seats {
                    if let Some(i) = candidates.iter().position(|c| c.version == *v) {
                        p.free[i] -= 1;
                    }
                }
                p.recent.insert(t.key());
                tables.push(t);
                // The anchor has had its turn: it goes to the back of the queue.
                order.remove(pos);
                order.push(anchor);
            }
            // Capacity only shrinks within a call, so an anchor that fails stays failed.
            None => failed[anchor] = true,
        }
    }
    tables
}

/// Plans tables for the real bots first (`real`, as [`plan_tables`]), then lets the house bots
/// (`house`: the server's built-in bots kept on the ladder) fill only the capacity the real bots
/// left: a second plan over the real bots with free capacity left and the house bots, keeping
/// only tables with at least one real bot. So a house bot never takes a seat a real bot could
/// have, and house bots never play only among themselves (they share one owner, so they never
/// even sit together).
pub fn plan_with_house(
    config: &MatchmakingConfig,
    real: &[Candidate],
    house: &[Candidate],
    recent: &[Table],
    now: Millis,
    seed: u64,
) -> Vec<Table> {
    let mut tables = if real.len() < 2 {
        Vec::new()
    } else {
        plan_tables(config, real, recent, now, seed)
    };
    if house.is_empty() || tables.len() >= config.max_tables {
        return tables;
    }
    let mut left = real.to_vec();
    for v in tables.iter().flat_map(|t| &t.seats) {
        if let Some(c) = left.iter_mut().find(|c| c.version == *v) {
            c.free = c.free.saturating_sub(1);
        }
    }
    left.retain(|c| c.free > 0);
    if left.is_empty() {
        return tables;
    }
    let is_house = |v: &VersionId| house.iter().any(|h| h.version == *v);
    left.extend(house.iter().cloned());
    let filled = plan_tables(config, &left, recent, now, seed.rotate_left(17));
    tables.extend(
        filled
            .into_iter()
            .filter(|t| t.seats.iter().any(|v| !is_house(v)))
            .take(config.max_tables - tables.len()),
    );
    tables
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(v: i64, owner: i64, free: u32, mu: f64) -> Candidate {
        Candidate {
            version: VersionId(v),
            owner: OwnerId(owner),
            free,
            profiles: vec!["classic".into()],
            seats: vec![2, 3, 4],
            mu: BTreeMap::from([("classic".to_string(), mu)]),
            rated_matches: 50,
            last_scheduled: Some(0),
            probe: None,
        }
    }

    fn four_seats() -> MatchmakingConfig {
        MatchmakingConfig::new(vec![Format {
            profile: "classic".into(),
            seats: 4,
            weight: 1.0,
        }])
    }

    fn pool(n: i64) -> Vec<Candidate> {
        (0..n).map(|i| cand(i, i, 1, 10.0 + i as f64)).collect()
    }

    fn owner_of(cands: &[Candidate], v: VersionId) -> OwnerId {
        cands.iter().find(|c| c.version == v).unwrap().owner
    }

    #[test]
    fn same_seed_same_plan_and_capacity_is_respected() {
        let mut cands = pool(20);
        cands[3].free = 3;
        let c = four_seats();
        let a = plan_tables(&c, &cands, &[], 1_000, 42);
        assert_eq!(a, plan_tables(&c, &cands, &[], 1_000, 42));
        assert_ne!(a, plan_tables(&c, &cands, &[], 1_000, 43));
        let mut used: BTreeMap<VersionId, u32> = BTreeMap::new();
        for t in &a {
            assert_eq!(t.seats.len(), 4);
            for v in &t.seats {
                *used.entry(*v).or_default() += 1;
            }
        }
        for c in &cands {
            assert!(used.get(&c.version).copied().unwrap_or(0) <= c.free);
        }
        // 22 seats of capacity: 5 tables of 4 fit.
        assert_eq!(a.len(), 5);
    }

    #[test]
    fn never_two_versions_of_one_owner_at_a_table() {
        // 12 versions of 4 owners, plenty of capacity.
        let cands: Vec<Candidate> = (0..12).map(|i| cand(i, i % 4, 5, 25.0)).collect();
        for seed in 0..50 {
            let tables = plan_tables(&four_seats(), &cands, &[], 0, seed);
            assert!(!tables.is_empty());
            for t in &tables {
                let owners: HashSet<OwnerId> =
                    t.seats.iter().map(|v| owner_of(&cands, *v)).collect();
                assert_eq!(owners.len(), t.seats.len(), "{t:?}");
            }
        }
        // 3 owners cannot fill a 4-seat table.
        let three: Vec<Candidate> = (0..9).map(|i| cand(i, i % 3, 5, 25.0)).collect();
        assert!(plan_tables(&four_seats(), &three, &[], 0, 1).is_empty());
    }

    #[test]
    fn formats_follow_acceptance_and_weights() {
        let mut cands = pool(40);
        for c in &mut cands {
            c.free = 100;
            c.profiles = vec!["classic".into(), "brazilian".into()];
        }
        // Version 0 only plays two-seat brazilian.
        cands[0].profiles = vec!["brazilian".into()];
        cands[0].seats = vec![2];
        let mut c = MatchmakingConfig::new(vec![
            Format {
                profile: "classic".into(),
                seats: 4,
                weight: 3.0,
            },
            Format {
                profile: "brazilian".into(),
                seats: 2,
                weight: 1.0,
            },
            Format {
                profile: "classic".into(),
                seats: 3,
                weight: 0.0,
            },
        ]);
        c.max_tables = 400;
        let tables = plan_tables(&c, &cands, &[], 0, 7);
        assert_eq!(tables.len(), 400);
        let classic = tables.iter().filter(|t| t.profile == "classic").count();
        for t in &tables {
            assert!(t.seats.len() != 3, "a zero-weight format was used");
            assert_eq!(t.seats.len(), if t.profile == "classic" { 4 } else { 2 });
            if t.seats.contains(&VersionId(0)) {
                assert_eq!(t.profile, "brazilian");
            }
        }
        // Weight 3:1 -> about 75% classic tables.
        let share = classic as f64 / tables.len() as f64;
        assert!((0.65..0.85).contains(&share), "{share}");
    }

    #[test]
    fn new_and_idle_versions_come_first() {
        // 9 versions with one free seat each; only 2 tables of 4 fit, so one is left out.
        let mut cands = pool(9);
        for c in &mut cands {
            c.last_scheduled = Some(9_000);
        }
        cands[8].rated_matches = 0; // new
        cands[5].last_scheduled = Some(1_000); // idle for 9 s
        let mut c = four_seats();
        c.idle_after_ms = 5_000;
        for seed in 0..30 {
            let tables = plan_tables(&c, &cands, &[], 10_000, seed);
            assert_eq!(tables.len(), 2);
            assert!(
                tables[0].seats.contains(&VersionId(8)) || tables[0].seats.contains(&VersionId(5))
            );
            let seated: Vec<VersionId> = tables.iter().flat_map(|t| t.seats.clone()).collect();
            assert!(seated.contains(&VersionId(8)) && seated.contains(&VersionId(5)));
        }
        // With an idle threshold of 10 s version 5 is not idle, but new version 8 still leads.
        c.idle_after_ms = 10_000;
        let tables = plan_tables(&c, &cands, &[], 10_000, 3);
        assert!(tables[0].seats.contains(&VersionId(8)));
    }

    #[test]
    fn opponents_are_mostly_near_in_rating() {
        // 60 versions at μ = 0, 1, ..., 59. Anchor 30 (new) gets one table per call.
        let mut cands = pool(60);
        for c in &mut cands {
            c.mu.insert("classic".into(), c.version.0 as f64);
            c.free = 1;
        }
        cands[30].rated_matches = 0;
        let mut c = four_seats();
        c.max_tables = 1;
        let mut near = 0;
        let mut far = 0;
        let runs = 400;
        for seed in 0..runs {
            let t = &plan_tables(&c, &cands, &[], 0, seed)[0];
            assert!(t.seats.contains(&VersionId(30)));
            for v in t.seats.iter().filter(|v| **v != VersionId(30)) {
                // The window of 4 nearest (plus the fact that earlier picks leave it) stays
                // within 5 points of the anchor.
                if (v.0 - 30).abs() <= 5 {
                    near += 1;
                } else {
                    far += 1;
                }
            }
        }
        let seats = (3 * runs) as f64;
        let far_share = far as f64 / seats;
        // Random share 15% and wide window 10% of the rest put some seats far away, but most
        // are near.
        assert!(near as f64 / seats > 0.7, "near {near} far {far}");
        assert!((0.05..0.3).contains(&far_share), "far share {far_share}");
        // With no random share and no wide window every opponent is near.
        c.random_share = 0.0;
        c.wide_chance = 0.0;
        for seed in 0..50 {
            let t = &plan_tables(&c, &cands, &[], 0, seed)[0];
            assert!(t.seats.iter().all(|v| (v.0 - 30).abs() <= 5), "{t:?}");
        }
        // With a random share of 1 opponents come from everywhere.
        c.random_share = 1.0;
        let mut spread = 0;
        for seed in 0..50 {
            let t = &plan_tables(&c, &cands, &[], 0, seed)[0];
            spread += t.seats.iter().filter(|v| (v.0 - 30).abs() > 5).count();
        }
        assert!(spread > 75, "{spread}");
    }

    #[test]
    fn recent_tables_are_avoided_when_possible() {
        // 5 versions, one 4-seat table per call: 5 possible tables.
        let cands = pool(5);
        let mut c = four_seats();
        c.max_tables = 1;
        let mut recent: Vec<Table> = Vec::new();
        let mut seen = HashSet::new();
        for seed in 0..5 {
            let t = plan_tables(&c, &cands, &recent, 0, seed).remove(0);
            assert!(
                seen.insert(t.key()),
                "table repeated while another was possible"
            );
            recent.push(t);
        }
        // All 5 tables are recent now: a repeat is better than no table.
        assert_eq!(plan_tables(&c, &cands, &recent, 0, 99).len(), 1);
    }

    #[test]
    fn probes_sit_alone_and_play_once() {
        let mut cands: Vec<Candidate> = (0..12).map(|i| cand(i, i, 3, 25.0)).collect();
        for c in cands.iter_mut().take(4) {
            c.probe = Some(0);
        }
        for seed in 0..30 {
            let tables = plan_tables(&four_seats(), &cands, &[], 0, seed);
            let mut probe_tables: BTreeMap<VersionId, usize> = BTreeMap::new();
            for t in &tables {
                let probes: Vec<&VersionId> = t.seats.iter().filter(|v| v.0 < 4).collect();
                assert!(probes.len() <= 1, "{t:?}");
                for p in probes {
                    *probe_tables.entry(*p).or_default() += 1;
                }
            }
            assert!(probe_tables.values().all(|&n| n == 1));
        }
    }

    #[test]
    fn a_version_that_accepts_nothing_offered_is_skipped() {
        let mut cands = pool(8);
        cands[0].profiles = vec!["romanian-32".into()];
        let tables = plan_tables(&four_seats(), &cands, &[], 0, 5);
        assert_eq!(tables.len(), 1);
        assert!(!tables[0].seats.contains(&VersionId(0)));
        assert!(plan_tables(&four_seats(), &[], &[], 0, 5).is_empty());
    }
    #[test]
    fn house_bots_fill_only_what_real_bots_leave() {
        let config = MatchmakingConfig::new(vec![Format {
            profile: "classic".into(),
            seats: 2,
            weight: 1.0,
        }]);
        // Two house bots of one owner, with room for many matches.
        let house = [cand(100, 99, 8, 25.0), cand(101, 99, 8, 25.0)];
        for seed in 0..50 {
            // Two real bots with one free match each meet each other, not the house.
            let real = [cand(1, 1, 1, 25.0), cand(2, 2, 1, 25.0)];
            let t = plan_with_house(&config, &real, &house, &[], 0, seed);
            assert_eq!(t.len(), 1, "{t:?}");
            assert_eq!(t[0].key().1, vec![VersionId(1), VersionId(2)]);
            // A lone real bot plays the house, up to its capacity; the house never plays alone.
            let lone = [cand(1, 1, 3, 25.0)];
            let t = plan_with_house(&config, &lone, &house, &[], 0, seed);
            assert_eq!(t.len(), 3, "{t:?}");
            for table in &t {
                assert!(table.seats.contains(&VersionId(1)), "{table:?}");
                assert!(table.seats.iter().any(|v| v.0 >= 100), "{table:?}");
            }
            // Three real bots: two meet, the third gets a house bot.
            let three = [
                cand(1, 1, 1, 25.0),
                cand(2, 2, 1, 25.0),
                cand(3, 3, 1, 25.0),
            ];
            let t = plan_with_house(&config, &three, &house, &[], 0, seed);
            assert_eq!(t.len(), 2, "{t:?}");
            let real_only = t
                .iter()
                .filter(|t| t.seats.iter().all(|v| v.0 < 100))
                .count();
            assert_eq!(real_only, 1, "{t:?}");
        }
        // No real bot: no table, however much room the house has.
        assert!(plan_with_house(&config, &[], &house, &[], 0, 1).is_empty());
    }
}
