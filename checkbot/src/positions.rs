//! The set positions of the gauntlet, written in the engine's position notation and checked with
//! the engine before use.
//!
//! - **Best move**: the bot's seat is to act holding J♣ and K♠ on a 10♥: its only legal actions
//!   plays are the jack, naming one of the four suits (brazilian also lists DRAW and the
//!   ANNOUNCE that comes before going down to one card). Naming ♠, the suit of the card it keeps, is the
//!   known best move: it can go out with K♠ next turn unless someone changes the suit, where
//!   any other suit leaves it to draw. The engine lists the legal actions; the kit checks that
//!   the only plays among them are the four jack plays.
//! - **Challenge window**: S0 has just gone down to one card without the call (an open
//!   omission, or in brazilian a missing ANNOUNCE). With three seats or more, S1 is to act (the
//!   kit plays it and waits before acting, so the window stays open) and the bot sits at S2, where
//!   it receives an optional prompt listing CHALLENGE. With two seats the bot is S1 and to act,
//!   and CHALLENGE is among its required prompt's legal actions.

use maumau_engine::{Action, Game, ProfileId, Rank, Seat, Suit};

/// Cards to fill the other hands: 7 to A without jacks, never one the positions name (K♠, 10♥,
/// Q♣). In brazilian, with its two decks, they repeat when there are many seats.
fn filler() -> impl Iterator<Item = String> {
    const RANKS: [&str; 7] = ["A", "Q", "9", "8", "7", "10", "K"];
    const SUITS: [&str; 4] = ["S", "D", "C", "H"];
    RANKS
        .iter()
        .flat_map(|r| SUITS.iter().map(move |s| format!("{r}{s}")))
        .filter(|c| !matches!(c.as_str(), "KS" | "10H" | "QC"))
        .cycle()
}

/// `count` hands of five filler cards, in notation.
fn other_hands(count: usize) -> Vec<String> {
    let mut cards = filler();
    (0..count)
        .map(|_| {
            (0..5)
                .filter_map(|_| cards.next())
                .collect::<Vec<_>>()
                .join(",")
        })
        .collect()
}

/// The best-move position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Puzzle {
    /// The position, in the engine's notation.
    pub(crate) position: String,
    /// The bot's seat (to act).
    pub(crate) seat: Seat,
    /// Every legal action of the bot's seat: the jack naming each suit (and, in brazilian, DRAW
    /// and ANNOUNCE).
    pub(crate) legal: Vec<Action>,
}

impl Puzzle {
    /// The suit the best move names.
    pub(crate) const BEST_SUIT: Suit = Suit::Spades;

    /// True for the best move: the jack naming ♠, whatever call comes with it.
    pub(crate) fn is_best(action: Action) -> bool {
        matches!(action, Action::Play { card, suit: Some(s), .. }
            if card.rank() == Rank::Jack && s == Puzzle::BEST_SUIT)
    }
}

/// The best-move position for a profile and seat count, or why there is none.
pub(crate) fn puzzle(profile: ProfileId, seats: u8) -> Result<Puzzle, String> {
    let mut hands = vec!["JC,KS".to_string()];
    hands.extend(other_hands(seats as usize - 1));
    let position = format!(
        "mm1 {profile} seats={seats} calls=challenge max_rounds=1 turn=0 hands={} discard=10H stock=*",
        hands.join("/")
    );
    let game = Game::from_position(&position).map_err(|e| format!("{position}: {e}"))?;
    if game.to_act() != Some(0) {
        return Err(format!("{position}: S0 is not to act"));
    }
    let legal: Vec<Action> = game.legal_actions(0).iter().copied().collect();
    let named: Vec<Suit> = legal
        .iter()
        .filter_map(|a| match a {
            Action::Play { card, suit, .. } if card.rank() == Rank::Jack => *suit,
            _ => None,
        })
        .collect();
    let other_plays = legal
        .iter()
        .any(|a| matches!(a, Action::Play { card, .. } if card.rank() != Rank::Jack));
    if other_plays || Suit::ALL.iter().any(|s| !named.contains(s)) {
        return Err(format!(
            "{position}: the legal actions {legal:?} are not the jack naming each suit"
        ));
    }
    Ok(Puzzle {
        position,
        seat: 0,
        legal,
    })
}

/// The challenge-window position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    /// The position, in the engine's notation.
    pub(crate) position: String,
    /// The seat whose call was missing.
    pub(crate) offender: Seat,
    /// The seat to act: the kit's own seat, or the bot's with two seats.
    pub(crate) mover: Seat,
    /// The bot's seat.
    pub(crate) seat: Seat,
}

/// The challenge-window position for a profile and seat count, or why there is none.
pub(crate) fn window(profile: ProfileId, seats: u8) -> Result<Window, String> {
    let offence = if profile == ProfileId::Brazilian {
        "no_announce"
    } else {
        "omission"
    };
    let mut hands = vec!["QC".to_string()];
    hands.extend(other_hands(seats as usize - 1));
    let position = format!(
        "mm1 {profile} seats={seats} calls=challenge max_rounds=1 turn=1 hands={} discard=10H \
         offence=0:{offence} stock=*",
        hands.join("/")
    );
    let game = Game::from_position(&position).map_err(|e| format!("{position}: {e}"))?;
    let seat = if seats == 2 { 1 } else { 2 };
    if game.to_act() != Some(1) {
        return Err(format!("{position}: S1 is not to act"));
    }
    if !game.legal_actions(seat).contains(&Action::Challenge) {
        return Err(format!("{position}: S{seat} may not challenge"));
    }
    Ok(Window {
        position,
        offender: 0,
        mover: 1,
        seat,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use maumau_engine::MatchConfig;

    fn every_case() -> Vec<(ProfileId, u8)> {
        ProfileId::ALL
            .into_iter()
            .flat_map(|p| {
                let rules = MatchConfig::new(p, 4).rules().expect("valid");
                (rules.min_seats..=rules.max_seats).map(move |n| (p, n))
            })
            .collect()
    }

    #[test]
    fn every_profile_and_seat_count_has_a_best_move_position() {
        for (p, n) in every_case() {
            let puzzle = puzzle(p, n).unwrap_or_else(|e| panic!("{p}/{n}: {e}"));
            // Some legal plays are best, others are not (romanian-32 lists each with both calls).
            let (best, worse): (Vec<Action>, Vec<Action>) = puzzle
                .legal
                .iter()
                .filter(|a| matches!(a, Action::Play { .. }))
                .partition(|&&a| Puzzle::is_best(a));
            assert!(!best.is_empty(), "{p}/{n}: {puzzle:?}");
            assert_eq!(worse.len(), 3 * best.len(), "{p}/{n}: {puzzle:?}");
        }
    }

    #[test]
    fn every_profile_and_seat_count_has_a_challenge_window() {
        for (p, n) in every_case() {
            let w = window(p, n).unwrap_or_else(|e| panic!("{p}/{n}: {e}"));
            assert_eq!(w.seat, if n == 2 { 1 } else { 2 });
            // The window is real: a challenge by the bot's seat is accepted and makes the
            // offender draw.
            let mut game = Game::from_position(&w.position).expect("valid");
            let before = game.observation(0).hand_sizes[0];
            game.apply(w.seat, Action::Challenge).expect("accepted");
            assert!(game.observation(0).hand_sizes[0] > before, "{p}/{n}");
        }
    }
}
