//! Events: what happened, in order, as the engine resolves an action.
//!
//! The engine reports every event with full information. What a seat may see of an event is
//! decided by [`crate::view::event_for`], next to [`crate::Game::observation`].

use crate::action::Call;
use crate::card::{Card, Suit};
use crate::outcome::RoundResult;

/// Seat number, `0..seats`, clockwise.
pub type Seat = u8;

/// Why a card was drawn.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum DrawCause {
    /// Dealt at the start of a round.
    Deal,
    /// The 1-card draw of a turn.
    Turn,
    /// Paying a debt of 7s.
    Debt,
    /// An omission that was challenged, or penalised at once under `enforce`.
    Omission,
    /// A false call (brazilian).
    FalseCall,
    /// A false accusation (brazilian).
    FalseAccusation,
    /// A brazilian 9 made the previous seat draw.
    PrevDrawOne,
}

/// What kind of call rule an offence broke.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum OffenceKind {
    /// A play without the required word (classic, penalty-points; romanian-32's Mau omission).
    Omission,
    /// romanian-32: finishing on a J without an earlier MAU_MAU.
    JackFinish,
    /// brazilian: a play from 2 cards to 1 without a valid ANNOUNCE.
    NoAnnounce,
}

impl OffenceKind {
    /// The kind's name in the position notation (`offence=seat:kind`) and the Python package's
    /// dicts.
    pub const fn name(self) -> &'static str {
        match self {
            OffenceKind::Omission => "omission",
            OffenceKind::JackFinish => "jack_finish",
            OffenceKind::NoAnnounce => "no_announce",
        }
    }
}

/// How an accepted challenge turned out.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ChallengeOutcome {
    /// The offender was caught and draws the penalty.
    Caught {
        /// The seat that broke the call rule.
        offender: Seat,
    },
    /// brazilian: nobody could be accused; the accuser draws the penalty.
    False,
}

/// Something that happened.
// `RoundEnded` carries every hand and is much larger than the other events. It is reported once
// per round, and sinks receive events by reference; boxing it would allocate on the hot path.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Event {
    /// A round begins.
    RoundStarted {
        /// Round number, from 1.
        round: u16,
        /// The dealer (brazilian: the first player F).
        dealer: Seat,
    },
    /// A seat took a card. `card` is `None` where the seat's view hides it.
    Drew {
        /// Who drew.
        seat: Seat,
        /// The card, when visible.
        card: Option<Card>,
        /// Why.
        cause: DrawCause,
    },
    /// The up-card was turned.
    UpCard {
        /// The card.
        card: Card,
    },
    /// The stock ran out and was rebuilt from the discard pile below its top.
    StockRebuilt {
        /// Cards in the new stock.
        size: u8,
    },
    /// A seat's turn began.
    TurnStarted {
        /// The seat to move.
        seat: Seat,
    },
    /// A seat discarded.
    Played {
        /// Who played.
        seat: Seat,
        /// The card.
        card: Card,
        /// The suit named by a J.
        suit: Option<Suit>,
        /// The word said with it.
        call: Call,
    },
    /// The up-card player named a suit for an up-card J.
    SuitDeclared {
        /// Who named it.
        seat: Seat,
        /// The suit.
        suit: Suit,
    },
    /// A seat ended its turn after its 1-card draw (`automatic` when no play was permitted).
    Passed {
        /// Who passed.
        seat: Seat,
        /// True when the engine passed because no play was permitted.
        automatic: bool,
    },
    /// A seat was skipped.
    Skipped {
        /// The skipped seat.
        seat: Seat,
    },
    /// The direction of play changed.
    DirectionChanged {
        /// True for clockwise.
        clockwise: bool,
    },
    /// A seat said a word outside a play.
    Announced {
        /// Who.
        seat: Seat,
        /// The word.
        call: Call,
        /// False for a brazilian false call (penalised).
        valid: bool,
    },
    /// A play broke the call rule and a challenge window opened.
    OffenceOpened {
        /// The offender.
        seat: Seat,
        /// What was broken.
        kind: OffenceKind,
    },
    /// The open window closed without a successful challenge.
    OffenceExpired {
        /// The offender.
        seat: Seat,
    },
    /// A romanian offender cured its Mau omission out of turn.
    OffenceCured {
        /// The offender.
        seat: Seat,
    },
    /// A challenge (accusation) was accepted.
    Challenged {
        /// Who challenged.
        by: Seat,
        /// The result.
        outcome: ChallengeOutcome,
    },
    /// Under `enforce`, an omission was penalised as part of its play.
    OffencePenalised {
        /// The offender.
        seat: Seat,
        /// What was broken.
        kind: OffenceKind,
    },
    /// A seat emptied its hand without the right call: it wins only if its window closes.
    PendingOut {
        /// The seat.
        seat: Seat,
    },
    /// The round is over.
    RoundEnded(RoundResult),
    /// The match is over; [`crate::Game::match_result`] has the ranking.
    MatchEnded,
}

/// Receives events as the engine produces them. Implemented for `()` (ignore them), for
/// `Vec<Event>`, and for any `FnMut(&Event)`.
pub trait EventSink {
    /// Called once per event, in order.
    fn event(&mut self, e: &Event);
}

impl EventSink for () {
    #[inline(always)]
    fn event(&mut self, _: &Event) {}
}

impl EventSink for Vec<Event> {
    fn event(&mut self, e: &Event) {
        self.push(*e);
    }
}

impl<F: FnMut(&Event)> EventSink for F {
    fn event(&mut self, e: &Event) {
        self(e)
    }
}
