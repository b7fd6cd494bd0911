//! `rerate`: recompute a season's ratings from its stored match results and compare them with the
//! stored ratings and with the stored rating events.
//!
//! Three views of every (profile, version) rating must agree: the current rating row, the last of
//! its events (whose chain must be unbroken: each event starts where the previous one ended, except
//! a `rerate` event, which starts from the stored rating it corrected), and a
//! replay of the season's rated matches in their rating order. Every rated match must also have
//! exactly one `match` event per seat. [`check`] is pure; the ladder feeds it from the store.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use maumau_rating::{RatingConfig, RatingState, replay};

use crate::ids::{MatchId, SeasonId, VersionId};
use crate::store::{RatedMatch, RatingCause, RatingChange, RatingEvent, RatingRow};

/// Ratings closer than this are equal (replays are bit-exact; this only absorbs storage rounding).
pub const TOLERANCE: f64 = 1e-9;

/// One disagreement found by [`check`].
#[derive(Clone, Debug, PartialEq)]
pub enum Finding {
    /// The stored rating is not what replaying the matches gives.
    RatingDiffers {
        /// The profile.
        profile: String,
        /// The version.
        version: VersionId,
        /// The stored rating (default if no row).
        stored: RatingState,
        /// The replayed rating (default if the version has no rated match).
        recomputed: RatingState,
    },
    /// The stored rating is not the last event's result.
    EventsDisagree {
        /// The profile.
        profile: String,
        /// The version.
        version: VersionId,
        /// The stored rating.
        stored: RatingState,
        /// Where the events end.
        from_events: RatingState,
    },
    /// An event does not start where the previous event of the same rating ended.
    BrokenChain {
        /// The profile.
        profile: String,
        /// The version.
        version: VersionId,
        /// The event that starts elsewhere.
        event: i64,
    },
    /// A rated match has not exactly one `match` event per seat.
    MatchEvents {
        /// The match.
        match_id: MatchId,
        /// Seats it has.
        seats: usize,
        /// `match` events found for it.
        events: usize,
    },
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::RatingDiffers {
                profile,
                version,
                stored,
                recomputed,
            } => write!(
                f,
                "{profile} version {version}: stored μ {:.6} σ {:.6} ({} matches), recomputed μ {:.6} σ {:.6} ({} matches)",
                stored.rating.mu,
                stored.rating.sigma,
                stored.matches,
                recomputed.rating.mu,
                recomputed.rating.sigma,
                recomputed.matches
            ),
            Finding::EventsDisagree {
                profile,
                version,
                stored,
                from_events,
            } => write!(
                f,
                "{profile} version {version}: stored μ {:.6} σ {:.6}, its events end at μ {:.6} σ {:.6}",
                stored.rating.mu,
                stored.rating.sigma,
                from_events.rating.mu,
                from_events.rating.sigma
            ),
            Finding::BrokenChain {
                profile,
                version,
                event,
            } => write!(
                f,
                "{profile} version {version}: event {event} does not start where the previous one ended"
            ),
            Finding::MatchEvents {
                match_id,
                seats,
                events,
            } => write!(
                f,
                "match {match_id}: {events} rating events for {seats} seats"
            ),
        }
    }
}

/// What [`check`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct RerateReport {
    /// The season checked.
    pub season: SeasonId,
    /// Rated matches replayed.
    pub matches: usize,
    /// Ratings compared.
    pub ratings: usize,
    /// Events read.
    pub events: usize,
    /// Every disagreement; empty when all is consistent.
    pub findings: Vec<Finding>,
}

impl RerateReport {
    /// No disagreement.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
    }

    /// The changes that would make the stored ratings equal the recomputed ones.
    pub fn corrections(&self) -> Vec<RatingChange> {
        self.findings
            .iter()
            .filter_map(|f| match f {
                Finding::RatingDiffers {
                    profile,
                    version,
                    stored,
                    recomputed,
                } => Some(RatingChange {
                    profile: profile.clone(),
                    version: *version,
                    before: *stored,
                    after: *recomputed,
                }),
                _ => None,
            })
            .collect()
    }
}

impl fmt::Display for RerateReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "season {}: {} rated matches, {} ratings, {} events: ",
            self.season, self.matches, self.ratings, self.events
        )?;
        if self.is_clean() {
            return write!(f, "no difference");
        }
        writeln!(f, "{} differences", self.findings.len())?;
        for x in &self.findings {
            writeln!(f, "  {x}")?;
        }
        Ok(())
    }
}

fn same(a: &RatingState, b: &RatingState) -> bool {
    a.matches == b.matches && a.rating.close_to(&b.rating, TOLERANCE)
}

/// Compares stored ratings and events with a replay of the rated matches.
pub fn check(
    config: &RatingConfig,
    season: SeasonId,
    matches: &[RatedMatch],
    events: &[RatingEvent],
    ratings: &[RatingRow],
) -> RerateReport {
    let mut findings = Vec::new();
    let recomputed = replay(config, matches);
    let stored: BTreeMap<(String, VersionId), RatingState> = ratings
        .iter()
        .map(|r| ((r.profile.clone(), r.version), r.state))
        .collect();

    let mut chain: BTreeMap<(String, VersionId), RatingState> = BTreeMap::new();
    let mut per_match: BTreeMap<MatchId, usize> = BTreeMap::new();
    for e in events {
        let key = (e.change.profile.clone(), e.change.version);
        let prev = chain.get(&key).copied().unwrap_or_default();
        // A rerate event corrects whatever was stored, so it may start anywhere.
        if e.cause != RatingCause::Rerate && !same(&prev, &e.change.before) {
            findings.push(Finding::BrokenChain {
                profile: key.0.clone(),
                version: key.1,
                event: e.id,
            });
        }
        chain.insert(key, e.change.after);
        if e.cause == RatingCause::Match
            && let Some(m) = e.match_id
        {
            *per_match.entry(m).or_default() += 1;
        }
    }

    let keys: BTreeSet<(String, VersionId)> = recomputed
        .keys()
        .chain(stored.keys())
        .chain(chain.keys())
        .cloned()
        .collect();
    for key in &keys {
        let s = stored.get(key).copied().unwrap_or_default();
        let r = recomputed.get(key).copied().unwrap_or_default();
        let e = chain.get(key).copied().unwrap_or_default();
        if !same(&s, &r) {
            findings.push(Finding::RatingDiffers {
                profile: key.0.clone(),
                version: key.1,
                stored: s,
                recomputed: r,
            });
        }
        if !same(&s, &e) {
            findings.push(Finding::EventsDisagree {
                profile: key.0.clone(),
                version: key.1,
                stored: s,
                from_events: e,
            });
        }
    }
    for m in matches {
        let n = per_match.get(&m.id).copied().unwrap_or(0);
        if n != m.seats.len() {
            findings.push(Finding::MatchEvents {
                match_id: m.id,
                seats: m.seats.len(),
                events: n,
            });
        }
    }
    RerateReport {
        season,
        matches: matches.len(),
        ratings: keys.len(),
        events: events.len(),
        findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use maumau_rating::Rating;

    fn event(
        id: i64,
        m: Option<i64>,
        v: i64,
        before: RatingState,
        after: RatingState,
    ) -> RatingEvent {
        RatingEvent {
            id,
            season: SeasonId(1),
            match_id: m.map(MatchId),
            cause: RatingCause::Match,
            change: RatingChange {
                profile: "classic".into(),
                version: VersionId(v),
                before,
                after,
            },
            created_ms: 0,
        }
    }

    /// A consistent season of one match, built through the rating model.
    fn one_match() -> (Vec<RatedMatch>, Vec<RatingEvent>, Vec<RatingRow>) {
        let c = RatingConfig::default();
        let m = RatedMatch {
            id: MatchId(7),
            profile: "classic".into(),
            seats: vec![(VersionId(1), 1), (VersionId(2), 2)],
        };
        let r = replay(&c, std::slice::from_ref(&m));
        let mut events = Vec::new();
        let mut rows = Vec::new();
        for (i, v) in [1, 2].into_iter().enumerate() {
            let after = r[&("classic".to_string(), VersionId(v))];
            events.push(event(
                i as i64 + 1,
                Some(7),
                v,
                RatingState::default(),
                after,
            ));
            rows.push(RatingRow {
                season: SeasonId(1),
                profile: "classic".into(),
                version: VersionId(v),
                state: after,
            });
        }
        (vec![m], events, rows)
    }

    #[test]
    fn a_consistent_season_is_clean() {
        let (m, e, r) = one_match();
        let report = check(&RatingConfig::default(), SeasonId(1), &m, &e, &r);
        assert!(report.is_clean(), "{report}");
        assert_eq!((report.matches, report.ratings, report.events), (1, 2, 2));
    }

    #[test]
    fn a_tampered_rating_is_reported_and_corrected() {
        let (m, e, mut r) = one_match();
        r[0].state.rating.mu += 0.5;
        let report = check(&RatingConfig::default(), SeasonId(1), &m, &e, &r);
        assert_eq!(report.findings.len(), 2, "{report}");
        assert!(matches!(report.findings[0], Finding::RatingDiffers { .. }));
        assert!(matches!(report.findings[1], Finding::EventsDisagree { .. }));
        let fix = report.corrections();
        assert_eq!(fix.len(), 1);
        assert_eq!(fix[0].before, r[0].state);
        assert_eq!(fix[0].after, e[0].change.after);
        // Applied as a rerate event, the fix makes every view agree again...
        let mut e = e;
        let mut fixed = event(3, None, 1, fix[0].before, fix[0].after);
        fixed.cause = RatingCause::Rerate;
        e.push(fixed.clone());
        r[0].state = fix[0].after;
        let report = check(&RatingConfig::default(), SeasonId(1), &m, &e, &r);
        assert!(report.is_clean(), "{report}");
        // ...but any other event starting from the tampered value breaks the chain.
        fixed.cause = RatingCause::Void;
        *e.last_mut().unwrap() = fixed;
        let report = check(&RatingConfig::default(), SeasonId(1), &m, &e, &r);
        assert!(matches!(
            report.findings[..],
            [Finding::BrokenChain { event: 3, .. }]
        ));
    }

    #[test]
    fn missing_and_broken_events_are_reported() {
        let (m, mut e, r) = one_match();
        let dropped = e.pop().unwrap();
        let report = check(&RatingConfig::default(), SeasonId(1), &m, &e, &r);
        assert!(report.findings.contains(&Finding::MatchEvents {
            match_id: MatchId(7),
            seats: 2,
            events: 1
        }));
        assert!(report.findings.iter().any(
            |f| matches!(f, Finding::EventsDisagree { version, .. } if *version == VersionId(2))
        ));
        // An event that starts from the wrong place breaks the chain.
        let mut bad = dropped;
        bad.change.before.rating = Rating {
            mu: 30.0,
            sigma: 1.0,
        };
        e.push(bad);
        let report = check(&RatingConfig::default(), SeasonId(1), &m, &e, &r);
        assert!(
            report
                .findings
                .iter()
                .any(|f| matches!(f, Finding::BrokenChain { event: 2, .. })),
            "{report}"
        );
    }

    #[test]
    fn a_rating_without_a_match_differs() {
        let (m, e, mut r) = one_match();
        r.push(RatingRow {
            season: SeasonId(1),
            profile: "classic".into(),
            version: VersionId(9),
            state: RatingState {
                rating: Rating::default(),
                matches: 3,
            },
        });
        let report = check(&RatingConfig::default(), SeasonId(1), &m, &e, &r);
        assert!(report.findings.iter().any(
            |f| matches!(f, Finding::RatingDiffers { version, recomputed, .. } if *version == VersionId(9) && recomputed.matches == 0)
        ));
    }
}
