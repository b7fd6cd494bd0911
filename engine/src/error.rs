//! Typed rejections: why an action was refused. A rejected action changes nothing.

use std::fmt;

/// Why the engine refused an action. [`Rejection::code`] is a stable machine-readable name.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Rejection {
    /// The match is over.
    MatchOver,
    /// The seat number is not at this table.
    NoSuchSeat,
    /// Only the up-card player's DECLARE_SUIT is accepted before the first turn.
    AwaitingSuit,
    /// DECLARE_SUIT when no suit is awaited.
    NotAwaitingSuit,
    /// A turn action from a seat that is not to move (or DECLARE_SUIT from another seat).
    NotYourTurn,
    /// The card is not in the seat's hand.
    CardNotInHand,
    /// A J was played without naming a suit.
    SuitRequired,
    /// A suit was named with a card that is not a J.
    SuitNotAllowed,
    /// The card does not match the top card, the named suit or the debt.
    IllegalCard,
    /// A penalty card drawn this turn cannot be played this turn (classic, penalty-points).
    PenaltyCardThisTurn,
    /// After the 1-card draw only the drawn card may be played.
    OnlyDrawnCard,
    /// After a valid ANNOUNCE the seat must play.
    MustPlayAfterAnnounce,
    /// A 1-card draw while holding a legal play, in a profile without voluntary draws.
    HoldsLegalPlay,
    /// A second 1-card draw in the same turn.
    AlreadyDrew,
    /// No card is left to draw, and the draw is voluntary (or the seat holds a 7 for its debt).
    NothingToDraw,
    /// PASS before the 1-card draw.
    PassBeforeDraw,
    /// Challenges are not part of these rules (`calls` is `enforce` or `off`, or no Mau penalty).
    ChallengesDisabled,
    /// No call was missed, so there is nobody to challenge.
    NoOpenOffence,
    /// The offender cannot challenge itself.
    OwnOffence,
    /// The offence was already caught.
    AlreadyChallenged,
    /// ANNOUNCE is not possible here (wrong profile, not the seat's turn, or nothing to cure).
    AnnounceNotAllowed,
    /// ANNOUNCE with a word the rules do not use here.
    WrongWord,
    /// The seat has already announced this turn.
    AlreadyAnnounced,
}

impl Rejection {
    /// Every rejection, in declaration order.
    pub const ALL: [Rejection; 23] = [
        Rejection::MatchOver,
        Rejection::NoSuchSeat,
        Rejection::AwaitingSuit,
        Rejection::NotAwaitingSuit,
        Rejection::NotYourTurn,
        Rejection::CardNotInHand,
        Rejection::SuitRequired,
        Rejection::SuitNotAllowed,
        Rejection::IllegalCard,
        Rejection::PenaltyCardThisTurn,
        Rejection::OnlyDrawnCard,
        Rejection::MustPlayAfterAnnounce,
        Rejection::HoldsLegalPlay,
        Rejection::AlreadyDrew,
        Rejection::NothingToDraw,
        Rejection::PassBeforeDraw,
        Rejection::ChallengesDisabled,
        Rejection::NoOpenOffence,
        Rejection::OwnOffence,
        Rejection::AlreadyChallenged,
        Rejection::AnnounceNotAllowed,
        Rejection::WrongWord,
        Rejection::AlreadyAnnounced,
    ];

    /// A stable snake-case name for programs.
    pub const fn code(self) -> &'static str {
        match self {
            Rejection::MatchOver => "match_over",
            Rejection::NoSuchSeat => "no_such_seat",
            Rejection::AwaitingSuit => "awaiting_suit",
            Rejection::NotAwaitingSuit => "not_awaiting_suit",
            Rejection::NotYourTurn => "not_your_turn",
            Rejection::CardNotInHand => "card_not_in_hand",
            Rejection::SuitRequired => "suit_required",
            Rejection::SuitNotAllowed => "suit_not_allowed",
            Rejection::IllegalCard => "illegal_card",
            Rejection::PenaltyCardThisTurn => "penalty_card_this_turn",
            Rejection::OnlyDrawnCard => "only_drawn_card",
            Rejection::MustPlayAfterAnnounce => "must_play_after_announce",
            Rejection::HoldsLegalPlay => "holds_legal_play",
            Rejection::AlreadyDrew => "already_drew",
            Rejection::NothingToDraw => "nothing_to_draw",
            Rejection::PassBeforeDraw => "pass_before_draw",
            Rejection::ChallengesDisabled => "challenges_disabled",
            Rejection::NoOpenOffence => "no_open_offence",
            Rejection::OwnOffence => "own_offence",
            Rejection::AlreadyChallenged => "already_challenged",
            Rejection::AnnounceNotAllowed => "announce_not_allowed",
            Rejection::WrongWord => "wrong_word",
            Rejection::AlreadyAnnounced => "already_announced",
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rejection::MatchOver => "the match is over",
            Rejection::NoSuchSeat => "there is no such seat at this table",
            Rejection::AwaitingSuit => {
                "the up-card is a jack: only its player's DECLARE_SUIT is accepted now"
            }
            Rejection::NotAwaitingSuit => "no suit is awaited",
            Rejection::NotYourTurn => "it is not this seat's turn",
            Rejection::CardNotInHand => "the card is not in the seat's hand",
            Rejection::SuitRequired => "a jack must name a suit",
            Rejection::SuitNotAllowed => "only a jack names a suit",
            Rejection::IllegalCard => {
                "the card matches neither the top card's rank nor the suit to follow \
                 (while a debt is owed only a 7 may be played)"
            }
            Rejection::PenaltyCardThisTurn => {
                "a card received as a penalty cannot be played in the same turn"
            }
            Rejection::OnlyDrawnCard => "after drawing, only the drawn card may be played",
            Rejection::MustPlayAfterAnnounce => "after ANNOUNCE the seat must play a card",
            Rejection::HoldsLegalPlay => "drawing is allowed only without a legal play",
            Rejection::AlreadyDrew => "only one card may be drawn per turn",
            Rejection::NothingToDraw => "no card is left to draw; play a card instead",
            Rejection::PassBeforeDraw => "a seat may pass only after its 1-card draw",
            Rejection::ChallengesDisabled => "challenges are not part of these rules",
            Rejection::NoOpenOffence => "no missed call is open to challenge",
            Rejection::OwnOffence => "a seat cannot challenge its own missed call",
            Rejection::AlreadyChallenged => "that missed call was already challenged",
            Rejection::AnnounceNotAllowed => "ANNOUNCE is not possible now",
            Rejection::WrongWord => "that word cannot be announced here",
            Rejection::AlreadyAnnounced => "the seat has already announced this turn",
        })
    }
}

impl std::error::Error for Rejection {}
