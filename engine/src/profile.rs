//! Rule profiles as data (RULES.md §2 and §3) and the match configuration that selects one.
//!
//! A [`MatchConfig`] is what a user chooses: a [`ProfileId`], its [`Options`], the seat count and
//! the network settings of RULES.md Appendix B. [`MatchConfig::rules`] validates it and expands it
//! into [`Rules`], a plain struct with one field per row of the §3 comparison table. The engine
//! reads only [`Rules`]; no rule is decided by comparing profile names. Which rank has which
//! effect (a 7 makes a debt of two, an 8 skips, a jack is wild) is set here, in `Rules::build`;
//! what an effect does is `Game::resolve_effect` in `game.rs`.

use std::fmt;
use std::str::FromStr;

use crate::card::{Card, Rank, Suit};
use crate::event::Seat;
use crate::outcome::MAX_SEATS;

/// The four rule profiles of RULES.md.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ProfileId {
    /// Seeds 000/004: 52 cards, 7 stacks, 8 skips, J wild, penalty points to 100.
    Classic,
    /// Seed 001: classic rules with options, penalty points to 100 or 150.
    PenaltyPoints,
    /// Seed 002: 4–8 players, two decks, A skips, Q reverses, 9 makes the previous seat draw.
    Brazilian,
    /// Seed 003: 32 cards, 8 skips, 9 reverses, positive scoring to 150.
    Romanian32,
}

impl ProfileId {
    /// Every profile.
    pub const ALL: [ProfileId; 4] = [
        ProfileId::Classic,
        ProfileId::PenaltyPoints,
        ProfileId::Brazilian,
        ProfileId::Romanian32,
    ];

    /// The profile id as written in RULES.md and the position notation.
    pub const fn name(self) -> &'static str {
        match self {
            ProfileId::Classic => "classic",
            ProfileId::PenaltyPoints => "penalty-points",
            ProfileId::Brazilian => "brazilian",
            ProfileId::Romanian32 => "romanian-32",
        }
    }
}

impl fmt::Display for ProfileId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ProfileId {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<ProfileId, ConfigError> {
        ProfileId::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| ConfigError::UnknownProfile(s.to_string()))
    }
}

/// The Appendix B `calls` setting: how the call rules meet bots on a network.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum CallsMode {
    /// The rules as written: omissions open a window in which other seats may challenge.
    #[default]
    Challenge,
    /// The server applies an omission's penalty as the last step of the offending play.
    Enforce,
    /// No call is needed; challenges and announcements are rejected.
    Off,
}

impl CallsMode {
    /// The setting's name: `challenge`, `enforce` or `off`.
    pub const fn name(self) -> &'static str {
        match self {
            CallsMode::Challenge => "challenge",
            CallsMode::Enforce => "enforce",
            CallsMode::Off => "off",
        }
    }
}

impl FromStr for CallsMode {
    type Err = ConfigError;

    fn from_str(s: &str) -> Result<CallsMode, ConfigError> {
        [CallsMode::Challenge, CallsMode::Enforce, CallsMode::Off]
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| ConfigError::UnknownCallsMode(s.to_string()))
    }
}

/// Deck size for the penalty-points `deck` option.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum DeckSize {
    /// 2 to ace in four suits.
    #[default]
    Full52,
    /// 7 to ace in four suits.
    Short32,
}

/// Profile options. Each applies to the profiles named on it; setting one on another profile is a
/// [`ConfigError::OptionNotInProfile`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Options {
    /// classic: the match is one round, ranked by its points (AMB-33).
    pub single_round: bool,
    /// penalty-points: 52 (default) or 32 cards.
    pub deck: DeckSize,
    /// penalty-points: 9 reverses the direction.
    pub nine_reverses: bool,
    /// penalty-points: an ace skips the next seat.
    pub ace_skips: bool,
    /// penalty-points: calls are required (default true; false is the "no Mau penalty" option).
    pub mau_penalty: bool,
    /// penalty-points: the match limit, 100 (default) or 150.
    pub limit: u16,
    /// brazilian: a J is wild on a 7 whose debt has been paid (default false, AMB-17).
    pub jack_wild_on_paid_seven: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            single_round: false,
            deck: DeckSize::Full52,
            nine_reverses: false,
            ace_skips: false,
            mau_penalty: true,
            limit: 100,
            jack_wild_on_paid_seven: false,
        }
    }
}

impl Options {
    /// The options that differ from the defaults, as the comma-separated words used by the
    /// position notation and the command line (`deck32,nine_reverses,limit150`), or `-`.
    pub fn to_words(&self) -> String {
        let d = Options::default();
        let mut words = Vec::new();
        if self.single_round {
            words.push("single_round".to_string());
        }
        if self.deck == DeckSize::Short32 {
            words.push("deck32".to_string());
        }
        if self.nine_reverses {
            words.push("nine_reverses".to_string());
        }
        if self.ace_skips {
            words.push("ace_skips".to_string());
        }
        if !self.mau_penalty {
            words.push("no_mau_penalty".to_string());
        }
        if self.limit != d.limit {
            words.push(format!("limit{}", self.limit));
        }
        if self.jack_wild_on_paid_seven {
            words.push("jack_wild_on_paid_seven".to_string());
        }
        if words.is_empty() {
            "-".to_string()
        } else {
            words.join(",")
        }
    }

    /// Parses the words written by [`Options::to_words`]; order does not matter.
    pub fn from_words(s: &str) -> Result<Options, ConfigError> {
        let mut o = Options::default();
        if s == "-" || s.is_empty() {
            return Ok(o);
        }
        for w in s.split(',') {
            match w {
                "single_round" => o.single_round = true,
                "deck32" => o.deck = DeckSize::Short32,
                "deck52" => o.deck = DeckSize::Full52,
                "nine_reverses" => o.nine_reverses = true,
                "ace_skips" => o.ace_skips = true,
                "no_mau_penalty" => o.mau_penalty = false,
                "jack_wild_on_paid_seven" => o.jack_wild_on_paid_seven = true,
                _ => match w.strip_prefix("limit").and_then(|n| n.parse().ok()) {
                    Some(n) => o.limit = n,
                    None => return Err(ConfigError::UnknownOption(w.to_string())),
                },
            }
        }
        Ok(o)
    }
}

/// Everything that fixes the rules of one match: profile, options, seats and Appendix B settings.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct MatchConfig {
    /// The rule profile.
    pub profile: ProfileId,
    /// The profile's options.
    pub options: Options,
    /// Number of seats at the table.
    pub seats: u8,
    /// The Appendix B `calls` setting.
    pub calls: CallsMode,
    /// Appendix B `max_turns_per_round`: a round that reaches this many turns ends as BLOCKED.
    pub max_turns_per_round: u16,
    /// A guard of our own (not in RULES.md): the match ends, ranked by totals, after this many
    /// rounds. RULES.md lets romanian-32 repeat BLOCKED rounds, which score nothing, without
    /// bound; this makes every match provably finite. 1000 is far above any real match.
    pub max_rounds: u16,
}

impl MatchConfig {
    /// The default configuration of a profile with `seats` seats: default options, calls
    /// `challenge` (the default for a match created directly), 1000 turns, 1000 rounds.
    pub fn new(profile: ProfileId, seats: u8) -> MatchConfig {
        MatchConfig {
            profile,
            options: Options::default(),
            seats,
            calls: CallsMode::Challenge,
            max_turns_per_round: 1000,
            max_rounds: 1000,
        }
    }

    /// Validates the configuration and expands it into the rules the engine reads.
    pub fn rules(&self) -> Result<Rules, ConfigError> {
        let o = &self.options;
        let d = Options::default();
        let p = self.profile;
        let only = |set: bool, name: &'static str, allowed: ProfileId| {
            if set && p != allowed {
                Err(ConfigError::OptionNotInProfile {
                    option: name,
                    profile: p,
                })
            } else {
                Ok(())
            }
        };
        only(o.single_round, "single_round", ProfileId::Classic)?;
        only(o.deck != d.deck, "deck32", ProfileId::PenaltyPoints)?;
        only(o.nine_reverses, "nine_reverses", ProfileId::PenaltyPoints)?;
        only(o.ace_skips, "ace_skips", ProfileId::PenaltyPoints)?;
        only(!o.mau_penalty, "no_mau_penalty", ProfileId::PenaltyPoints)?;
        only(o.limit != d.limit, "limit", ProfileId::PenaltyPoints)?;
        only(
            o.jack_wild_on_paid_seven,
            "jack_wild_on_paid_seven",
            ProfileId::Brazilian,
        )?;
        if o.limit != 100 && o.limit != 150 {
            return Err(ConfigError::BadLimit(o.limit));
        }
        if self.max_turns_per_round == 0 {
            return Err(ConfigError::ZeroLimit("max_turns_per_round"));
        }
        if self.max_rounds == 0 {
            return Err(ConfigError::ZeroLimit("max_rounds"));
        }
        let rules = Rules::build(self);
        if !(rules.min_seats..=rules.max_seats).contains(&self.seats) {
            return Err(ConfigError::SeatCount {
                profile: p,
                seats: self.seats,
                min: rules.min_seats,
                max: rules.max_seats,
                short_deck: rules.low_rank == Rank::Seven && p == ProfileId::PenaltyPoints,
            });
        }
        Ok(rules)
    }
}

/// Why a configuration is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// The profile id is not one of the four.
    UnknownProfile(String),
    /// The calls setting is not `challenge`, `enforce` or `off`.
    UnknownCallsMode(String),
    /// An option word is not known.
    UnknownOption(String),
    /// An option that the profile does not have.
    OptionNotInProfile {
        /// The option's name.
        option: &'static str,
        /// The profile it was set on.
        profile: ProfileId,
    },
    /// The penalty-points limit is neither 100 nor 150.
    BadLimit(u16),
    /// A limit set to zero.
    ZeroLimit(&'static str),
    /// The seat count is outside the profile's range.
    SeatCount {
        /// The profile.
        profile: ProfileId,
        /// The seats asked for.
        seats: u8,
        /// The fewest seats allowed.
        min: u8,
        /// The most seats allowed.
        max: u8,
        /// True when the range is narrowed by the 32-card deck.
        short_deck: bool,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::UnknownProfile(s) => write!(
                f,
                "unknown profile `{s}` (expected classic, penalty-points, brazilian or romanian-32)"
            ),
            ConfigError::UnknownCallsMode(s) => {
                write!(
                    f,
                    "unknown calls setting `{s}` (expected challenge, enforce or off)"
                )
            }
            ConfigError::UnknownOption(s) => write!(
                f,
                "unknown option `{s}` (expected single_round, deck32, nine_reverses, ace_skips, \
                 no_mau_penalty, limit100, limit150 or jack_wild_on_paid_seven)"
            ),
            ConfigError::OptionNotInProfile { option, profile } => {
                write!(f, "option `{option}` does not exist in profile {profile}")
            }
            ConfigError::BadLimit(n) => write!(f, "limit {n} is not allowed (use 100 or 150)"),
            ConfigError::ZeroLimit(name) => write!(f, "{name} must be at least 1"),
            ConfigError::SeatCount {
                profile,
                seats,
                min,
                max,
                short_deck,
            } => {
                write!(f, "{profile} is played by {min} to {max} seats")?;
                if *short_deck {
                    write!(f, " with the 32-card deck")?;
                }
                write!(f, ", not {seats}")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// How the up-card is treated at the start of a round (§1.2 step 5).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UpCardMode {
    /// Resolved as if the dealer had just played it (classic, penalty-points).
    AsPlayByDealer,
    /// Resolved as the designated first player's discard (brazilian).
    AsPlayByFirst,
    /// Only supplies a suit and a rank (romanian-32).
    NoEffect,
}

/// The effect of a played card (§1.7). One exhaustive `match` in the engine resolves it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Effect {
    /// No effect.
    None,
    /// The next seat owes 2 more cards; answered only by another 7.
    DrawTwo,
    /// The next seat is skipped.
    Skip,
    /// The direction flips.
    Reverse,
    /// The player names the suit to follow.
    Wild,
    /// The previous seat draws one card at once.
    PrevDrawOne,
}

/// What may be played after this turn's 1-card draw.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum PlayAfterDraw {
    /// Only the drawn card, if it is legal.
    DrawnOnly,
    /// Any legal card in the hand.
    AnyLegal,
}

/// The call rule of a profile (§1.9, §2).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CallRule {
    /// No call is ever needed.
    None,
    /// classic and penalty-points: MAU on a play that leaves 1 card, MAU_MAU on the last card.
    LastCards,
    /// brazilian: ANNOUNCE(MAU_MAU) before the play that takes the hand from 2 cards to 1.
    Announce,
    /// romanian-32: a call on the play that leaves 1 card; MAU_MAU needed to finish on a J.
    Romanian,
}

/// How a round's points are counted.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Scoring {
    /// Every seat but the winner adds its hand value; lowest total is best.
    Penalty,
    /// The winner earns the value of every card left in the other hands; highest total is best.
    Positive,
}

/// How seats tied on the match score are ranked.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum TieBreak {
    /// Tied seats share the placing.
    Share,
    /// More rounds won ranks higher; still tied, the placing is shared (a draw).
    RoundsWonThenShare,
}

/// The expanded rules of one match: one field per row of RULES.md §3.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Rules {
    /// The profile these rules came from.
    pub profile: ProfileId,
    /// Seats at the table.
    pub seats: u8,
    /// Fewest seats the profile allows.
    pub min_seats: u8,
    /// Most seats the profile allows.
    pub max_seats: u8,
    /// Lowest rank in the deck (2, or 7 for 32-card decks).
    pub low_rank: Rank,
    /// Copies of each card (2 in brazilian).
    pub copies: u8,
    /// Cards dealt to each seat.
    pub hand_size: u8,
    /// Up-card treatment.
    pub up_card: UpCardMode,
    /// Effect of each rank, indexed by [`Rank::index`].
    pub effects: [Effect; 13],
    /// A J is wild on a 7 top whose debt is paid.
    pub jack_wild_on_paid_seven: bool,
    /// A seat may make the 1-card draw while holding a legal play.
    pub voluntary_draw: bool,
    /// What may follow the 1-card draw.
    pub play_after_draw: PlayAfterDraw,
    /// A penalty draw received during one's own turn ends that turn (romanian-32).
    pub penalty_draw_ends_own_turn: bool,
    /// Cards received by a penalty draw may be played in the same turn (brazilian).
    pub penalty_cards_playable: bool,
    /// The call rule, after the `calls` setting and `mau_penalty` are applied.
    pub call_rule: CallRule,
    /// The `calls` setting.
    pub calls: CallsMode,
    /// Cards drawn for an omission.
    pub omission_penalty: u8,
    /// Cards drawn for a false call (brazilian 5).
    pub false_call_penalty: u8,
    /// Cards drawn for a false accusation (brazilian 5; 0 means it is rejected).
    pub false_accusation_penalty: u8,
    /// The offender may cure a Mau omission out of turn (romanian-32).
    pub late_cure: bool,
    /// Card values for scoring, indexed by [`Rank::index`].
    pub values: [u8; 13],
    /// Scoring direction.
    pub scoring: Scoring,
    /// The match ends after a round in which a total reaches this; `None` for one-round matches.
    pub target: Option<u16>,
    /// Tie rule for the final ranking.
    pub tie_break: TieBreak,
    /// Appendix B turn limit per round.
    pub max_turns_per_round: u16,
    /// Round limit per match (see [`MatchConfig::max_rounds`]).
    pub max_rounds: u16,
    /// [`Rules::debt_cards`], worked out once from `effects` when the rules are built: the
    /// matching rule asks for it on every decision with a debt.
    debt_cards: u64,
    /// The tops on which a J is wild without a debt: all but a paid debt card, unless
    /// [`Rules::jack_wild_on_paid_seven`]; worked out once with `debt_cards`.
    jacks_wild_on: u64,
    /// The next seat from each seat, counter-clockwise (`[0]`) and clockwise (`[1]`), worked out
    /// once when the rules are built: `Game::step` reads it instead of wrapping around the table
    /// on every turn.
    pub(crate) next_seat: [[Seat; MAX_SEATS]; 2],
}

/// [`Rules::next_seat`] for a table of `seats`: seat `s`'s neighbour each way (every entry 0 for
/// a seat count that [`MatchConfig::rules`] refuses anyway).
const fn next_seats(seats: u8) -> [[Seat; MAX_SEATS]; 2] {
    let mut next = [[0; MAX_SEATS]; 2];
    if seats == 0 {
        return next;
    }
    let mut s = 0;
    while s < MAX_SEATS {
        let seat = s as u8 % seats;
        next[0][s] = if seat == 0 { seats - 1 } else { seat - 1 };
        next[1][s] = if seat + 1 >= seats { 0 } else { seat + 1 };
        s += 1;
    }
    next
}

impl Rules {
    fn build(c: &MatchConfig) -> Rules {
        use Effect::*;
        let o = &c.options;
        let mut effects = [None; 13];
        effects[Rank::Seven as usize] = DrawTwo;
        effects[Rank::Jack as usize] = Wild;
        let face = |jqka: [u8; 4]| {
            let mut v = [2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 0, 0, 0];
            v[9..].copy_from_slice(&jqka);
            v
        };
        let mut r = Rules {
            profile: c.profile,
            seats: c.seats,
            min_seats: 2,
            max_seats: 6,
            low_rank: Rank::Two,
            copies: 1,
            hand_size: 5,
            up_card: UpCardMode::AsPlayByDealer,
            effects,
            jack_wild_on_paid_seven: true,
            voluntary_draw: false,
            play_after_draw: PlayAfterDraw::DrawnOnly,
            penalty_draw_ends_own_turn: false,
            penalty_cards_playable: false,
            call_rule: CallRule::LastCards,
            calls: c.calls,
            omission_penalty: 2,
            false_call_penalty: 0,
            false_accusation_penalty: 0,
            late_cure: false,
            values: face([10, 10, 10, 10]),
            scoring: Scoring::Penalty,
            target: Some(100),
            tie_break: TieBreak::Share,
            max_turns_per_round: c.max_turns_per_round,
            max_rounds: c.max_rounds,
            debt_cards: 0,
            jacks_wild_on: 0,
            next_seat: next_seats(c.seats),
        };
        match c.profile {
            ProfileId::Classic => {
                r.effects[Rank::Eight as usize] = Skip;
                if o.single_round {
                    r.target = Option::None;
                }
            }
            ProfileId::PenaltyPoints => {
                r.effects[Rank::Eight as usize] = Skip;
                if o.nine_reverses {
                    r.effects[Rank::Nine as usize] = Reverse;
                }
                if o.ace_skips {
                    r.effects[Rank::Ace as usize] = Skip;
                }
                if o.deck == DeckSize::Short32 {
                    r.low_rank = Rank::Seven;
                    r.max_seats = 4;
                }
                if !o.mau_penalty {
                    r.call_rule = CallRule::None;
                }
                r.values = face([20, 10, 10, 11]);
                r.target = Some(o.limit);
                r.tie_break = TieBreak::RoundsWonThenShare;
            }
            ProfileId::Brazilian => {
                r.min_seats = 4;
                r.max_seats = 8;
                r.copies = 2;
                r.up_card = UpCardMode::AsPlayByFirst;
                r.effects[Rank::Ace as usize] = Skip;
                r.effects[Rank::Queen as usize] = Reverse;
                r.effects[Rank::Nine as usize] = PrevDrawOne;
                r.jack_wild_on_paid_seven = o.jack_wild_on_paid_seven;
                r.voluntary_draw = true;
                r.play_after_draw = PlayAfterDraw::AnyLegal;
                r.penalty_cards_playable = true;
                r.call_rule = CallRule::Announce;
                r.omission_penalty = 5;
                r.false_call_penalty = 5;
                r.false_accusation_penalty = 5;
                r.values = face([30, 10, 10, 1]);
                r.target = Option::None;
            }
            ProfileId::Romanian32 => {
                r.max_seats = 4;
                r.low_rank = Rank::Seven;
                r.up_card = UpCardMode::NoEffect;
                r.effects[Rank::Eight as usize] = Skip;
                r.effects[Rank::Nine as usize] = Reverse;
                r.voluntary_draw = true;
                r.penalty_draw_ends_own_turn = true;
                r.call_rule = CallRule::Romanian;
                r.late_cure = true;
                r.values = face([20, 10, 10, 10]);
                r.scoring = Scoring::Positive;
                r.target = Some(150);
            }
        }
        if c.calls == CallsMode::Off {
            r.call_rule = CallRule::None;
        }
        let mut ranks = 0u64;
        for (i, e) in r.effects.iter().enumerate() {
            if *e == DrawTwo {
                ranks |= 1 << i;
            }
        }
        r.debt_cards = ranks * 0x0001_0001_0001_0001;
        r.jacks_wild_on = if r.jack_wild_on_paid_seven {
            !0
        } else {
            !r.debt_cards
        };
        r
    }

    /// The effect of a card of this rank.
    pub const fn effect(&self, rank: Rank) -> Effect {
        self.effects[rank as usize]
    }

    /// The scoring value of a card of this rank.
    pub const fn value(&self, rank: Rank) -> u8 {
        self.values[rank as usize]
    }

    /// The set of distinct cards in this profile's deck.
    pub const fn deck_mask(&self) -> u64 {
        let lane: u64 = 0x1FFF & !((1u64 << self.low_rank as u32) - 1);
        lane * 0x0001_0001_0001_0001
    }

    /// Number of cards in the full deck.
    pub const fn deck_len(&self) -> usize {
        self.deck_mask().count_ones() as usize * self.copies as usize
    }

    /// The distinct cards that make a debt when played ([`Effect::DrawTwo`]: the 7s in every
    /// profile). They are also the only cards that answer one: a seat that owes cards may play
    /// nothing else.
    pub const fn debt_cards(&self) -> u64 {
        self.debt_cards
    }

    /// The distinct cards that may be played on `top` (with `named` the suit a J named, if any)
    /// while `debt` cards are owed, before the hand is looked at: the one matching rule of the
    /// engine, for [`crate::Game::playable`] and for bots that reason about hands they cannot see.
    ///
    /// With a debt only [`Rules::debt_cards`] answer it. Otherwise a card matches the named suit
    /// (or the top's suit) or the top's rank, and a J is wild, except on a debt card whose debt is
    /// paid where [`Rules::jack_wild_on_paid_seven`] says no.
    #[inline]
    pub fn matching(&self, top: Card, named: Option<Suit>, debt: u8) -> u64 {
        /// For each bit position of a card (suit * 16 + rank): the cards of its suit or rank.
        const SUIT_OR_RANK: [u64; 64] = {
            let mut t = [0; 64];
            let mut at = 0;
            while at < 64 {
                t[at] = (0x1FFF << (at & 0x30)) | (Rank::Two.mask() << (at & 15));
                at += 1;
            }
            t
        };
        if debt > 0 {
            return self.debt_cards();
        }
        // The masks come straight from the top card's bit position (suit * 16 + rank).
        let at = top.bit().trailing_zeros() as usize;
        let mut m = match named {
            Some(s) => s.mask() | (Rank::Two.mask() << (at & 15)),
            None => SUIT_OR_RANK[at & 63],
        };
        if self.jacks_wild_on & top.bit() != 0 {
            m |= Rank::Jack.mask();
        }
        m
    }

    /// True when challenges may open windows (the `challenge` setting and a call rule in force).
    pub const fn windows_open(&self) -> bool {
        !matches!(self.call_rule, CallRule::None) && matches!(self.calls, CallsMode::Challenge)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seat_ranges_follow_the_rules() {
        let ok = |p, n| MatchConfig::new(p, n).rules().is_ok();
        assert!(
            ok(ProfileId::Classic, 2) && ok(ProfileId::Classic, 6) && !ok(ProfileId::Classic, 7)
        );
        assert!(!ok(ProfileId::Brazilian, 3) && ok(ProfileId::Brazilian, 8));
        assert!(!ok(ProfileId::Romanian32, 5) && !ok(ProfileId::Classic, 1));
        let mut c = MatchConfig::new(ProfileId::PenaltyPoints, 6);
        assert!(c.rules().is_ok());
        c.options.deck = DeckSize::Short32;
        let e = c.rules().unwrap_err();
        assert!(
            e.to_string()
                .contains("2 to 4 seats with the 32-card deck, not 6"),
            "{e}"
        );
    }

    #[test]
    fn options_belong_to_their_profile() {
        let mut c = MatchConfig::new(ProfileId::Classic, 4);
        c.options.ace_skips = true;
        assert_eq!(
            c.rules(),
            Err(ConfigError::OptionNotInProfile {
                option: "ace_skips",
                profile: ProfileId::Classic
            })
        );
        let mut c = MatchConfig::new(ProfileId::PenaltyPoints, 4);
        c.options.limit = 120;
        assert_eq!(c.rules(), Err(ConfigError::BadLimit(120)));
    }

    #[test]
    fn option_words_round_trip() {
        let o = Options {
            deck: DeckSize::Short32,
            nine_reverses: true,
            mau_penalty: false,
            limit: 150,
            ..Options::default()
        };
        assert_eq!(Options::from_words(&o.to_words()), Ok(o));
        assert_eq!(Options::from_words("-"), Ok(Options::default()));
        assert!(Options::from_words("bogus").is_err());
    }

    #[test]
    fn only_sevens_make_and_answer_a_debt() {
        use crate::card::{Card, Suit};
        let card = |s: &str| s.parse::<Card>().unwrap();
        for p in ProfileId::ALL {
            let seats = if p == ProfileId::Brazilian { 4 } else { 2 };
            let rules = MatchConfig::new(p, seats).rules().unwrap();
            assert_eq!(rules.debt_cards(), Rank::Seven.mask(), "{p}");
            assert_eq!(rules.matching(card("7H"), None, 2), Rank::Seven.mask());
            let on_paid_seven = rules.matching(card("7H"), None, 0);
            assert_eq!(
                on_paid_seven & card("JS").bit() != 0,
                rules.jack_wild_on_paid_seven,
                "{p}"
            );
            let on_named = rules.matching(card("JH"), Some(Suit::Spades), 0);
            assert_eq!(on_named, Suit::Spades.mask() | Rank::Jack.mask());
        }
    }

    #[test]
    fn deck_sizes() {
        let r = |p, n| MatchConfig::new(p, n).rules().unwrap();
        assert_eq!(r(ProfileId::Classic, 4).deck_len(), 52);
        assert_eq!(r(ProfileId::Brazilian, 4).deck_len(), 104);
        assert_eq!(r(ProfileId::Romanian32, 4).deck_len(), 32);
    }

    #[test]
    fn the_seat_table_steps_around_the_table() {
        for seats in 2..=MAX_SEATS as u8 {
            let next = next_seats(seats);
            for s in 0..seats {
                assert_eq!(
                    next[1][s as usize],
                    (s + 1) % seats,
                    "{s} of {seats}, clockwise"
                );
                assert_eq!(
                    next[0][s as usize],
                    (s + seats - 1) % seats,
                    "{s} of {seats}, back"
                );
            }
        }
    }

    #[test]
    fn the_matching_table_follows_the_rule() {
        for jack_wild_on_paid_seven in [false, true] {
            let mut c = MatchConfig::new(ProfileId::Brazilian, 4);
            c.options.jack_wild_on_paid_seven = jack_wild_on_paid_seven;
            let rules = c.rules().unwrap();
            for top in Suit::ALL
                .iter()
                .flat_map(|&s| Rank::ALL.map(|r| Card::new(r, s)))
            {
                for named in [
                    None,
                    Some(Suit::Clubs),
                    Some(Suit::Hearts),
                    Some(Suit::Spades),
                ] {
                    let mut want = 0;
                    for card in Suit::ALL
                        .iter()
                        .flat_map(|&s| Rank::ALL.map(|r| Card::new(r, s)))
                    {
                        let suit = named.unwrap_or(top.suit());
                        let wild = card.rank() == Rank::Jack
                            && (top.rank() != Rank::Seven || jack_wild_on_paid_seven);
                        if card.suit() == suit || card.rank() == top.rank() || wild {
                            want |= card.bit();
                        }
                    }
                    assert_eq!(rules.matching(top, named, 0), want, "{top:?} {named:?}");
                    assert_eq!(rules.matching(top, named, 2), Rank::Seven.mask());
                }
            }
        }
    }
}
