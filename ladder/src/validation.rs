//! Validation: before a new version is rated it plays one unrated validation match per profile it
//! accepts, seated as one or more copies of itself beside the server's built-in bots.
//!
//! A validation match that finishes is judged from each copy's seat: any protocol error (a
//! message the server could not read, or a turn action for the current state that the rules
//! refuse), a seat that gave up (it timed out too often or stayed away), or more than
//! [`ValidationPolicy::max_timeouts`] timeouts over all copies rejects the version for good; its
//! owner reads the reasons and downloads the replay, then adds a fixed version. A validation
//! match that is aborted (a copy did not join, the server stopped) decides nothing: it is played
//! again, and a missed join counts against the version's health like any other.

use crate::ids::VersionId;

/// When validation is required and what fails it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValidationPolicy {
    /// New versions must pass validation before rated matches (default true). When false every
    /// version is rated from its first match.
    pub required: bool,
    /// Timeouts over all copies of one validation match above which it fails (default 2).
    pub max_timeouts: u32,
}

impl Default for ValidationPolicy {
    fn default() -> Self {
        ValidationPolicy {
            required: true,
            max_timeouts: 2,
        }
    }
}

/// How one copy of the version played its seat in a finished validation match.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CopyReport {
    /// The seat at the table.
    pub seat: u32,
    /// Decisions the server took for the seat because its time ran out.
    pub timeouts: u32,
    /// Actions the server refused, for any reason (shown on the pages, judged through
    /// `protocol_errors`).
    pub rejections: u32,
    /// Protocol errors: unreadable messages and refused turn actions for the current state.
    pub protocol_errors: u32,
    /// The seat gave up (too many timeouts, or away too long).
    pub gave_up: bool,
}

impl ValidationPolicy {
    /// Why a finished validation match fails, one reason each; empty when it passed.
    pub fn judge(&self, copies: &[CopyReport]) -> Vec<String> {
        let mut reasons = Vec::new();
        for c in copies {
            if c.protocol_errors > 0 {
                reasons.push(format!(
                    "seat {}: {} protocol error(s) (a message the server could not read, or an \
                     action the rules refuse)",
                    c.seat, c.protocol_errors
                ));
            }
            if c.gave_up {
                reasons.push(format!(
                    "seat {}: gave up (timed out too often or stayed away)",
                    c.seat
                ));
            }
        }
        let timeouts: u32 = copies.iter().map(|c| c.timeouts).sum();
        if timeouts > self.max_timeouts {
            reasons.push(format!(
                "{timeouts} timeout(s) over the version's seats (at most {} allowed)",
                self.max_timeouts
            ));
        }
        reasons
    }
}

/// A validation match the matchmaker should make now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidationNeed {
    /// The version under test.
    pub version: VersionId,
    /// The profile.
    pub profile: String,
    /// Seats at the table: the largest size of the profile among the formats the version accepts.
    pub seats: u8,
    /// Seats the version plays itself (at most its declared matches at once, at most half the
    /// table rounded up, at least one); the built-in bots take the others.
    pub copies: u8,
}

/// What validation means for the open lobbies this round.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ValidationPlan {
    /// Validation matches to make now (one per version at a time).
    pub needs: Vec<ValidationNeed>,
    /// Versions that still lack a passed validation in a profile they accept: no rated matches
    /// for them yet.
    pub waiting: Vec<VersionId>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocol_errors_give_ups_and_timeouts_fail() {
        let p = ValidationPolicy::default();
        let clean = CopyReport {
            seat: 0,
            timeouts: 1,
            ..CopyReport::default()
        };
        assert!(
            p.judge(&[clean, CopyReport { seat: 2, ..clean }])
                .is_empty()
        );
        let bad = CopyReport {
            seat: 1,
            protocol_errors: 2,
            ..CopyReport::default()
        };
        let why = p.judge(&[clean, bad]);
        assert_eq!(why.len(), 1);
        assert!(why[0].starts_with("seat 1: 2 protocol error"), "{why:?}");
        let slow = CopyReport {
            seat: 3,
            timeouts: 2,
            gave_up: true,
            ..CopyReport::default()
        };
        let why = p.judge(&[clean, slow]);
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(why[1].contains("3 timeout(s)"), "{why:?}");
        let lenient = ValidationPolicy {
            max_timeouts: 3,
            ..p
        };
        assert_eq!(lenient.judge(&[clean, slow]).len(), 1);
    }
}
