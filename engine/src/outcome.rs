//! Outcomes of rounds and matches: scoring per profile and the final ranking.

use crate::card::{Hand, cards_of};
use crate::event::Seat;
use crate::profile::{Rules, Scoring, TieBreak};

/// Most seats any profile allows.
pub const MAX_SEATS: usize = 8;

/// How a round ended.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum RoundEnd {
    /// A seat emptied its hand with a correct call (or none needed), or its window closed.
    Out(Seat),
    /// A forced draw was impossible, or the turn limit was reached: no winner.
    Blocked,
}

/// The result of one round.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RoundResult {
    /// Round number, from 1.
    pub round: u16,
    /// How it ended.
    pub end: RoundEnd,
    /// Points each seat scored this round (penalty points, or positive points in romanian-32).
    pub points: [i32; MAX_SEATS],
    /// Each seat's total after this round.
    pub totals: [i32; MAX_SEATS],
    /// Each seat's hand when the round ended, laid down and counted as at a real table: the cards
    /// that scored `points` (empty for the seat that went out). Public from this moment on, so
    /// every viewer sees them (a bot or a viewer can check the scoring).
    pub hands: [Hand; MAX_SEATS],
}

impl RoundResult {
    /// The round winner, if any.
    pub fn winner(&self) -> Option<Seat> {
        match self.end {
            RoundEnd::Out(s) => Some(s),
            RoundEnd::Blocked => None,
        }
    }
}

/// Value of a hand under these rules.
pub fn hand_value(rules: &Rules, hand: &Hand) -> i32 {
    // Each distinct card once, then the second copies: no per-card copy count.
    let value = |set: u64| -> i32 {
        cards_of(set)
            .map(|c| i32::from(rules.value(c.rank())))
            .sum()
    };
    value(hand.distinct()) + value(hand.twice())
}

/// Points of a round: who scores what, given the hands as they stand.
pub(crate) fn round_points(rules: &Rules, hands: &[Hand], end: RoundEnd) -> [i32; MAX_SEATS] {
    let mut points = [0; MAX_SEATS];
    match (rules.scoring, end) {
        (Scoring::Penalty, _) => {
            for (s, h) in hands.iter().enumerate() {
                if end != RoundEnd::Out(s as Seat) {
                    points[s] = hand_value(rules, h);
                }
            }
        }
        (Scoring::Positive, RoundEnd::Out(w)) => {
            points[w as usize] = hands.iter().map(|h| hand_value(rules, h)).sum();
        }
        (Scoring::Positive, RoundEnd::Blocked) => {}
    }
    points
}

/// The final result of a match.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct MatchResult {
    /// Number of seats.
    pub seats: u8,
    /// Each seat's placing: 1 is best; tied seats share a placing (the next one is skipped).
    pub placings: [u8; MAX_SEATS],
    /// Final totals.
    pub totals: [i32; MAX_SEATS],
    /// Rounds each seat won.
    pub rounds_won: [u16; MAX_SEATS],
    /// Rounds played.
    pub rounds: u16,
}

impl MatchResult {
    /// The seats placed first (co-winners share).
    pub fn winners(&self) -> impl Iterator<Item = Seat> + '_ {
        (0..self.seats).filter(|&s| self.placings[s as usize] == 1)
    }
}

/// Ranks the seats by the profile's match score and tie rule.
pub(crate) fn rank(
    rules: &Rules,
    totals: &[i32; MAX_SEATS],
    rounds_won: &[u16; MAX_SEATS],
    rounds: u16,
) -> MatchResult {
    let n = rules.seats as usize;
    // Larger key = better placing.
    let key = |s: usize| -> (i64, i64) {
        let score = match rules.scoring {
            Scoring::Penalty => -(totals[s] as i64),
            Scoring::Positive => totals[s] as i64,
        };
        let tie = match rules.tie_break {
            TieBreak::Share => 0,
            TieBreak::RoundsWonThenShare => rounds_won[s] as i64,
        };
        (score, tie)
    };
    let mut placings = [0; MAX_SEATS];
    for (s, placing) in placings.iter_mut().enumerate().take(n) {
        *placing = 1 + (0..n).filter(|&o| key(o) > key(s)).count() as u8;
    }
    MatchResult {
        seats: rules.seats,
        placings,
        totals: *totals,
        rounds_won: *rounds_won,
        rounds,
    }
}
