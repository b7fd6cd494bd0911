//! The game state and its one transition function.
//!
//! [`Game`] holds everything RULES.md §1.3 lists, and nothing derivable but two caches kept for
//! speed (each hand's length, and the matching mask of [`Rules::matching`]): the pending-out seat
//! is the offender of the open offence while its hand is empty. Every action from a player (or a
//! bot) goes through [`Game::apply_with`], which checks the action completely before it changes
//! anything, so a rejected action leaves the state exactly as it was. Playouts and searches, whose
//! actions come from [`Game::legal_actions_into`] on the same state, may use
//! [`Game::apply_unchecked`], which runs the same effects without checking again. Each check is one
//! function (`check_play`, `check_draw`, `check_pass`), each effect one (`play`, `draw`, `pass`);
//! a card's effect (a 7 adding 2 to the debt, …) is `Game::resolve_effect`.

use rand::RngExt;
use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

use crate::action::{Action, ActionList, Call};
use crate::card::{Card, Hand, Pile, Rank, Suit, cards_of};
use crate::error::Rejection;
use crate::event::{ChallengeOutcome, DrawCause, Event, EventSink, OffenceKind, Seat};
use crate::outcome::{MAX_SEATS, MatchResult, RoundEnd, RoundResult, rank, round_points};
use crate::profile::{
    CallRule, CallsMode, ConfigError, Effect, MatchConfig, PlayAfterDraw, Rules, UpCardMode,
};

/// Where the game stands.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Phase {
    /// A turn has started; the seat to move has not drawn.
    Start,
    /// The seat to move has made its 1-card draw.
    AfterDraw,
    /// brazilian: the seat to move has announced MAU-MAU and must play.
    Announced,
    /// Before the first turn: the up-card player must name a suit for an up-card J.
    AwaitSuit,
    /// The match is over.
    Over,
}

impl Phase {
    /// The phase's name in the position notation (`phase=`) and the Python package's dicts.
    pub const fn name(self) -> &'static str {
        match self {
            Phase::Start => "start",
            Phase::AfterDraw => "drawn",
            Phase::Announced => "announced",
            Phase::AwaitSuit => "await_suit",
            Phase::Over => "over",
        }
    }
}

/// An open announcement offence: a missed call that other seats may still challenge.
///
/// Its window opens when the offending turn ends, so in every state a caller can see, the turn
/// being played is the closing turn: the window closes when it ends (RULES.md §1.9(a)), unless a
/// challenge, a late cure or the end of the round closes it first. The penalty is the profile's
/// [`Rules::omission_penalty`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Offence {
    /// The seat that broke the call rule.
    pub offender: Seat,
    /// What it broke.
    pub kind: OffenceKind,
}

/// A match in progress: state, rules and seeded generator. Cheap to copy (for search).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Game {
    pub(crate) config: MatchConfig,
    pub(crate) rules: Rules,
    pub(crate) hands: [Hand; MAX_SEATS],
    pub(crate) stock: Pile,
    pub(crate) discard: Pile,
    pub(crate) clockwise: bool,
    pub(crate) current: Seat,
    pub(crate) phase: Phase,
    pub(crate) named: Option<Suit>,
    pub(crate) debt: u8,
    pub(crate) drawn: Option<Card>,
    pub(crate) penalty_cards: Hand,
    pub(crate) offence: Option<Offence>,
    pub(crate) last_call: [Call; MAX_SEATS],
    pub(crate) accused: bool,
    pub(crate) turns: u16,
    pub(crate) dealer: Seat,
    pub(crate) round: u16,
    pub(crate) totals: [i32; MAX_SEATS],
    pub(crate) rounds_won: [u16; MAX_SEATS],
    pub(crate) seed: u64,
    pub(crate) shuffles: u32,
    /// [`Rules::matching`] for the current top, named suit and debt (0 before the up-card is
    /// turned): worked out again by [`Game::refresh_matching`] wherever one of the three changes,
    /// so that listing and checking plays read it instead of recomputing it on every decision.
    pub(crate) matching: u64,
}

/// Why a game could not be set up from a deck order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupError {
    /// The configuration is refused.
    Config(ConfigError),
    /// The deck is not exactly this profile's deck.
    WrongDeck(String),
    /// The dealer is not a seat.
    NoSuchDealer(Seat),
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::Config(e) => e.fmt(f),
            SetupError::WrongDeck(why) => {
                write!(f, "the deck order is not this profile's deck: {why}")
            }
            SetupError::NoSuchDealer(s) => write!(f, "dealer {s} is not a seat at this table"),
        }
    }
}

impl std::error::Error for SetupError {}

impl From<ConfigError> for SetupError {
    fn from(e: ConfigError) -> SetupError {
        SetupError::Config(e)
    }
}

impl Game {
    /// Starts a match: the seeded generator picks the first dealer (brazilian: F) and shuffles.
    pub fn new(config: MatchConfig, seed: u64) -> Result<Game, ConfigError> {
        Game::new_with(config, seed, &mut ())
    }

    /// As [`Game::new`], reporting the deal to `sink`.
    pub fn new_with(
        config: MatchConfig,
        seed: u64,
        sink: &mut impl EventSink,
    ) -> Result<Game, ConfigError> {
        let mut g = Game::blank(config, seed)?;
        g.dealer = g.rng().random_range(0..g.rules.seats);
        g.round = 1;
        g.start_round(None, sink);
        Ok(g)
    }

    /// Starts a match whose first round is dealt from `deck`, in dealing order (the first card
    /// goes to the seat after the dealer, brazilian: to F; the card after the hands is the
    /// up-card; the rest is the stock, top first). Later rounds are shuffled from `seed`.
    pub fn from_deck(
        config: MatchConfig,
        seed: u64,
        dealer: Seat,
        deck: &[Card],
        sink: &mut impl EventSink,
    ) -> Result<Game, SetupError> {
        let mut g = Game::blank(config, seed)?;
        if dealer >= g.rules.seats {
            return Err(SetupError::NoSuchDealer(dealer));
        }
        let mut want = full_deck(&g.rules);
        want.sort();
        let mut got = deck.to_vec();
        got.sort();
        if got != want {
            return Err(SetupError::WrongDeck(format!(
                "expected the {} cards of {}, got {} cards",
                want.len(),
                g.rules.profile,
                deck.len()
            )));
        }
        g.dealer = dealer;
        g.round = 1;
        g.start_round(Some(deck), sink);
        Ok(g)
    }

    pub(crate) fn blank(config: MatchConfig, seed: u64) -> Result<Game, ConfigError> {
        let rules = config.rules()?;
        Ok(Game {
            config,
            rules,
            hands: [Hand::EMPTY; MAX_SEATS],
            stock: Pile::EMPTY,
            discard: Pile::EMPTY,
            clockwise: true,
            current: 0,
            phase: Phase::Start,
            named: None,
            debt: 0,
            drawn: None,
            penalty_cards: Hand::EMPTY,
            offence: None,
            last_call: [Call::None; MAX_SEATS],
            accused: false,
            turns: 0,
            dealer: 0,
            round: 0,
            totals: [0; MAX_SEATS],
            rounds_won: [0; MAX_SEATS],
            seed,
            shuffles: 0,
            matching: 0,
        })
    }

    // ----- reading the state -------------------------------------------------------------

    /// The configuration the match was created with.
    pub fn config(&self) -> &MatchConfig {
        &self.config
    }

    /// The expanded rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Number of seats.
    pub fn seats(&self) -> u8 {
        self.rules.seats
    }

    /// The phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The seat that must act now: the seat to move, the up-card player during
    /// [`Phase::AwaitSuit`], or `None` once the match is over. Other seats may still challenge.
    pub fn to_act(&self) -> Option<Seat> {
        match self.phase {
            Phase::Over => None,
            Phase::AwaitSuit => Some(self.dealer),
            _ => Some(self.current),
        }
    }

    /// A seat's hand.
    pub fn hand(&self, seat: Seat) -> &Hand {
        &self.hands[seat as usize]
    }

    /// The stock; its top (the next card drawn) is the last card.
    pub fn stock(&self) -> &Pile {
        &self.stock
    }

    /// The discard pile, bottom to top.
    pub fn discard(&self) -> &Pile {
        &self.discard
    }

    /// The top card of the discard pile.
    #[inline]
    #[allow(
        clippy::expect_used,
        reason = "every deal turns an up-card, and rebuilding the stock keeps the top card: the pile is never empty"
    )]
    pub fn top(&self) -> Card {
        self.discard
            .top()
            .expect("the discard pile always holds the up-card")
    }

    /// The suit named by a J on top, if any.
    pub fn named_suit(&self) -> Option<Suit> {
        self.named
    }

    /// Cards owed by the seat to move because of 7s.
    pub fn debt(&self) -> u8 {
        self.debt
    }

    /// True while play goes clockwise.
    pub fn clockwise(&self) -> bool {
        self.clockwise
    }

    /// The dealer of this round (brazilian: the first player F).
    pub fn dealer(&self) -> Seat {
        self.dealer
    }

    /// Round number, from 1.
    pub fn round(&self) -> u16 {
        self.round
    }

    /// Turns taken this round.
    pub fn turns(&self) -> u16 {
        self.turns
    }

    /// The open offence, if a window is open.
    pub fn offence(&self) -> Option<Offence> {
        self.offence
    }

    /// The seat that emptied its hand without the right call and waits for its window to close.
    #[inline]
    pub fn pending_out(&self) -> Option<Seat> {
        self.offence
            .map(|o| o.offender)
            .filter(|&s| self.hands[s as usize].is_empty())
    }

    /// The card of this turn's 1-card draw, if made.
    pub fn drawn_card(&self) -> Option<Card> {
        self.drawn
    }

    /// Cards the seat to move received by a penalty draw this turn.
    pub fn penalty_cards(&self) -> &Hand {
        &self.penalty_cards
    }

    /// romanian-32: the word each seat said on its last play that left it one card.
    pub fn last_call(&self, seat: Seat) -> Call {
        self.last_call[seat as usize]
    }

    /// True right after a successful accusation, until an action other than a challenge.
    pub fn just_accused(&self) -> bool {
        self.accused
    }

    /// Match totals.
    pub fn totals(&self) -> &[i32] {
        &self.totals[..self.rules.seats as usize]
    }

    /// Rounds won by each seat.
    pub fn rounds_won(&self) -> &[u16] {
        &self.rounds_won[..self.rules.seats as usize]
    }

    /// The final ranking, once the match is over.
    pub fn match_result(&self) -> Option<MatchResult> {
        let rounds = self.round;
        (self.phase == Phase::Over)
            .then(|| rank(&self.rules, &self.totals, &self.rounds_won, rounds))
    }

    /// The seed of the match's generator and how many shuffles it has made.
    pub fn rng_state(&self) -> (u64, u32) {
        (self.seed, self.shuffles)
    }

    // ----- legal actions -----------------------------------------------------------------

    /// The distinct cards the seat to move may play now.
    #[inline]
    pub fn playable(&self) -> u64 {
        if !matches!(
            self.phase,
            Phase::Start | Phase::AfterDraw | Phase::Announced
        ) {
            return 0;
        }
        self.playable_in_turn()
    }

    /// [`Game::playable`] in a phase in which the seat to move may play.
    #[inline]
    fn playable_in_turn(&self) -> u64 {
        let hand = &self.hands[self.current as usize];
        // Penalty cards are rare: most turns have none to take away.
        let mut avail = if self.rules.penalty_cards_playable || self.penalty_cards.is_empty() {
            hand.distinct()
        } else {
            hand.distinct_minus(&self.penalty_cards)
        };
        if let (Some(d), PlayAfterDraw::DrawnOnly) = (self.drawn, self.rules.play_after_draw) {
            avail &= d.bit();
        }
        avail & self.matching()
    }

    /// The distinct cards that match the top now, whoever holds them ([`Rules::matching`]).
    #[inline]
    fn matching(&self) -> u64 {
        debug_assert_eq!(
            self.matching,
            self.rules.matching(self.top(), self.named, self.debt),
            "the matching mask is stale"
        );
        self.matching
    }

    /// Works out [`Game::matching`] again after the top, the named suit or the debt changed.
    pub(crate) fn refresh_matching(&mut self) {
        self.matching = match self.discard.top() {
            Some(top) => self.rules.matching(top, self.named, self.debt),
            None => 0,
        };
    }

    /// [`Game::refresh_matching`] when the top is known to be `top` (a play just put it there).
    #[inline]
    fn refresh_matching_on(&mut self, top: Card) {
        debug_assert_eq!(self.discard.top(), Some(top));
        self.matching = self.rules.matching(top, self.named, self.debt);
    }

    /// Cards that could still be drawn: the stock plus the discard pile below its top.
    fn drawable(&self) -> usize {
        self.stock.len() + self.discard.len().saturating_sub(1)
    }

    /// Whether the seat to move may DRAW now.
    fn check_draw(&self) -> Result<(), Rejection> {
        self.check_draw_with(self.playable())
    }

    /// [`Game::check_draw`], given [`Game::playable`].
    fn check_draw_with(&self, playable: u64) -> Result<(), Rejection> {
        match self.phase {
            Phase::Start => {}
            Phase::AfterDraw => return Err(Rejection::AlreadyDrew),
            _ => return Err(Rejection::MustPlayAfterAnnounce),
        }
        let has_play = playable != 0;
        if self.debt > 0 {
            if has_play && self.drawable() < self.debt as usize {
                return Err(Rejection::NothingToDraw);
            }
        } else if has_play {
            if !self.rules.voluntary_draw {
                return Err(Rejection::HoldsLegalPlay);
            }
            if self.drawable() == 0 {
                return Err(Rejection::NothingToDraw);
            }
        }
        Ok(())
    }

    /// The calls that carry no penalty for a play that leaves `left` cards.
    #[inline]
    fn calls_for(&self, left: usize) -> &'static [Call] {
        // No call rule asks for a word while two or more cards are left: most plays.
        if left >= 2 {
            return &[Call::None];
        }
        match self.rules.call_rule {
            CallRule::LastCards if left == 1 => &[Call::Mau],
            CallRule::LastCards if left == 0 => &[Call::MauMau],
            CallRule::Romanian if left == 1 => &[Call::Mau, Call::MauMau],
            CallRule::Announce if left == 1 && self.phase != Phase::Announced => &[Call::MauMau],
            _ => &[Call::None],
        }
    }

    /// The calls that carry no penalty for a play by the seat to move now: the call words its
    /// listed plays carry (two where romanian-32 lets the seat choose, MAU first). For bots
    /// that build plays from [`Game::playable`] without listing the legal actions.
    pub fn calls_for_play(&self) -> &'static [Call] {
        self.calls_for(self.hands[self.current as usize].len().saturating_sub(1))
    }

    /// True when a brazilian ANNOUNCE by the seat to move would be valid.
    fn announce_valid(&self) -> bool {
        self.hands[self.current as usize].len() == 2 && self.playable() != 0
    }

    fn challenge_open_to(&self, seat: Seat) -> bool {
        self.rules.windows_open()
            && !self.accused
            && self.offence.is_some_and(|o| o.offender != seat)
    }

    fn may_cure(&self, seat: Seat) -> bool {
        self.rules.late_cure
            && self.rules.windows_open()
            && self
                .offence
                .is_some_and(|o| o.offender == seat && o.kind == OffenceKind::Omission)
    }

    /// Every action `seat` may take now without a penalty (see [`crate::action`]), with one
    /// exception: a romanian-32 finish with a J after a last call other than MAU_MAU is listed
    /// (it is legal, and wins if no one challenges) although it opens a jack-finish offence
    /// whatever its call; [`crate::Observation::offence_of`] marks it.
    pub fn legal_actions(&self, seat: Seat) -> ActionList {
        let mut list = ActionList::default();
        self.legal_actions_into(seat, &mut list);
        list
    }

    /// As [`Game::legal_actions`], into a list the caller keeps (cleared first).
    #[inline]
    pub fn legal_actions_into(&self, seat: Seat, list: &mut ActionList) {
        list.clear();
        match self.phase {
            Phase::Over => return,
            Phase::AwaitSuit => {
                if seat == self.dealer {
                    for s in Suit::ALL {
                        list.push(Action::DeclareSuit(s));
                    }
                }
                return;
            }
            _ => {}
        }
        if seat == self.current {
            // An empty hand (a caught pending-out seat with no card left to draw) plays nothing.
            let left = self.hands[seat as usize].len().saturating_sub(1);
            let playable = self.playable_in_turn();
            list.push_plays(playable, self.calls_for(left));
            match self.phase {
                Phase::Start => {
                    if self.check_draw_with(playable).is_ok() {
                        list.push(Action::Draw);
                    }
                    if self.rules.call_rule == CallRule::Announce && self.announce_valid() {
                        list.push(Action::Announce(Call::MauMau));
                    }
                }
                Phase::AfterDraw => {
                    list.push(Action::Pass);
                    if self.rules.call_rule == CallRule::Announce && self.announce_valid() {
                        list.push(Action::Announce(Call::MauMau));
                    }
                }
                _ => {}
            }
        }
        // Both need an open offence, which most states (all of them under `enforce`) lack.
        if self.offence.is_some() {
            if self.may_cure(seat) {
                list.push(Action::Announce(Call::Mau));
                list.push(Action::Announce(Call::MauMau));
            }
            if self.challenge_open_to(seat) {
                list.push(Action::Challenge);
            }
        }
    }

    // ----- applying actions --------------------------------------------------------------

    /// Applies `action` by `seat` and returns the events, or the reason it was refused (and
    /// nothing changed). Allocates the event list; see [`Game::apply_with`] for the hot path.
    pub fn apply(&mut self, seat: Seat, action: Action) -> Result<Vec<Event>, Rejection> {
        let mut events = Vec::new();
        self.apply_with(seat, action, &mut events)?;
        Ok(events)
    }

    /// Applies `action` by `seat`, reporting each event to `sink`. Never allocates. A rejected
    /// action changes nothing and reports no event.
    pub fn apply_with(
        &mut self,
        seat: Seat,
        action: Action,
        sink: &mut impl EventSink,
    ) -> Result<(), Rejection> {
        if seat >= self.rules.seats {
            return Err(Rejection::NoSuchSeat);
        }
        match self.phase {
            Phase::Over => return Err(Rejection::MatchOver),
            Phase::AwaitSuit => {
                return match action {
                    Action::DeclareSuit(suit) if seat == self.dealer => {
                        self.declare_suit(suit, sink);
                        Ok(())
                    }
                    Action::DeclareSuit(_) => Err(Rejection::NotYourTurn),
                    _ => Err(Rejection::AwaitingSuit),
                };
            }
            _ => {}
        }
        match action {
            Action::Challenge => return self.challenge(seat, sink),
            Action::Announce(call) if seat != self.current || self.may_cure(seat) => {
                return self.late_cure(seat, call, sink);
            }
            Action::DeclareSuit(_) => return Err(Rejection::NotAwaitingSuit),
            _ if seat != self.current => return Err(Rejection::NotYourTurn),
            _ => {}
        }
        match action {
            Action::Play { card, suit, call } => {
                self.check_play(card, suit)?;
                self.play(card, suit, call, sink);
                Ok(())
            }
            Action::Draw => {
                self.check_draw()?;
                self.draw(sink);
                Ok(())
            }
            Action::Pass => {
                self.check_pass()?;
                self.pass(seat, sink);
                Ok(())
            }
            Action::Announce(call) => self.announce(call, sink),
            Action::Challenge | Action::DeclareSuit(_) => unreachable!("handled above"),
        }
    }

    /// Applies an action that [`Game::apply_with`] would accept, without checking it again: the
    /// fast path for a caller that took `action` from [`Game::legal_actions_into`] for `seat` on
    /// this very state (a playout, a search). The checks are the same functions `apply_with`
    /// runs, asserted in debug builds only; the effects are the same code.
    ///
    /// An action `apply_with` would refuse leaves the game in an unspecified (but memory-safe)
    /// state: use `apply_with` for anything that comes from outside the program. Plays, draws and
    /// passes skip the checks; the rarer actions (suits, announcements, challenges) go through
    /// `apply_with`. A play, a draw or a pass is taken to be by the seat to move in its turn, as
    /// every listed one is: the seat is not looked at again.
    #[inline]
    pub fn apply_unchecked(&mut self, seat: Seat, action: Action, sink: &mut impl EventSink) {
        debug_assert!(
            !matches!(action, Action::Play { .. } | Action::Draw | Action::Pass)
                || (seat == self.current
                    && matches!(
                        self.phase,
                        Phase::Start | Phase::AfterDraw | Phase::Announced
                    )),
            "{action} by {seat}, not the seat to move in its turn"
        );
        match action {
            Action::Play { card, suit, call } => {
                debug_assert_eq!(self.check_play(card, suit), Ok(()), "{action} by {seat}");
                self.play(card, suit, call, sink);
            }
            Action::Draw => {
                debug_assert_eq!(self.check_draw(), Ok(()), "{action} by {seat}");
                self.draw(sink);
            }
            Action::Pass => {
                debug_assert_eq!(self.check_pass(), Ok(()), "{action} by {seat}");
                self.pass(seat, sink);
            }
            _ => {
                let applied = self.apply_with(seat, action, sink);
                debug_assert_eq!(applied, Ok(()), "{action} by {seat}");
            }
        }
    }

    /// Whether the seat to move may PASS now.
    fn check_pass(&self) -> Result<(), Rejection> {
        match self.phase {
            Phase::AfterDraw => Ok(()),
            Phase::Announced => Err(Rejection::MustPlayAfterAnnounce),
            _ => Err(Rejection::PassBeforeDraw),
        }
    }

    /// PASS by the seat to move, checked by [`Game::check_pass`].
    fn pass(&mut self, seat: Seat, sink: &mut impl EventSink) {
        self.accused = false;
        sink.event(&Event::Passed {
            seat,
            automatic: false,
        });
        self.end_turn(self.step(seat, 1), None, sink);
    }

    /// Whether the seat to move may play `card` naming `suit` now (the call is never refused).
    fn check_play(&self, card: Card, suit: Option<Suit>) -> Result<(), Rejection> {
        let hand = self.hands[self.current as usize];
        if !hand.contains(card) {
            return Err(Rejection::CardNotInHand);
        }
        match (card.rank() == Rank::Jack, suit) {
            (true, None) => return Err(Rejection::SuitRequired),
            (false, Some(_)) => return Err(Rejection::SuitNotAllowed),
            _ => {}
        }
        if self.playable() & card.bit() == 0 {
            return Err(if self.matching() & card.bit() == 0 {
                Rejection::IllegalCard
            } else if self.drawn.is_some()
                && self.rules.play_after_draw == PlayAfterDraw::DrawnOnly
                && self.drawn != Some(card)
            {
                Rejection::OnlyDrawnCard
            } else {
                Rejection::PenaltyCardThisTurn
            });
        }
        Ok(())
    }

    /// A play by the seat to move, checked by [`Game::check_play`].
    #[inline]
    fn play(&mut self, card: Card, suit: Option<Suit>, call: Call, sink: &mut impl EventSink) {
        let seat = self.current;
        // Checked: from here on the play happens.
        self.accused = false;
        let mut announced = self.phase == Phase::Announced;
        if self.rules.call_rule == CallRule::Announce && call == Call::MauMau && !announced {
            // PLAY(call=MAU_MAU) is ANNOUNCE then PLAY; a false call is penalised first.
            announced = self.announce_valid();
            sink.event(&Event::Announced {
                seat,
                call,
                valid: announced,
            });
            if !announced {
                self.penalty_draw(
                    seat,
                    self.rules.false_call_penalty,
                    DrawCause::FalseCall,
                    sink,
                );
            }
        }
        let before = self.hands[seat as usize].len();
        self.hands[seat as usize].remove(card);
        self.discard.push(card);
        self.named = None;
        sink.event(&Event::Played {
            seat,
            card,
            suit,
            call,
        });
        let left = before - 1;
        let offence = call_offence(
            &self.rules,
            before,
            card,
            call,
            self.last_call[seat as usize],
            announced,
        );
        if self.rules.call_rule == CallRule::Romanian && left == 1 {
            self.last_call[seat as usize] = call;
        }
        if left == 0 && offence.is_none() {
            self.refresh_matching_on(card);
            self.end_round(RoundEnd::Out(seat), sink);
            return;
        }
        let next = self.resolve_effect(seat, card, suit, sink);
        self.refresh_matching_on(card);
        let opened = match offence {
            Some(kind) if self.rules.calls == CallsMode::Enforce => {
                self.penalty_draw(seat, self.rules.omission_penalty, DrawCause::Omission, sink);
                sink.event(&Event::OffencePenalised { seat, kind });
                None
            }
            Some(kind) => Some(Offence {
                offender: seat,
                kind,
            }),
            None => None,
        };
        self.end_turn(next, opened, sink);
    }

    /// DRAW by the seat to move, checked by [`Game::check_draw`].
    #[inline]
    fn draw(&mut self, sink: &mut impl EventSink) {
        self.accused = false;
        let seat = self.current;
        if self.debt > 0 {
            for _ in 0..self.debt {
                if self.draw_card(seat, DrawCause::Debt, sink).is_none() {
                    self.end_round(RoundEnd::Blocked, sink);
                    return;
                }
            }
            self.debt = 0;
            self.refresh_matching();
            self.end_turn(self.step(seat, 1), None, sink);
            return;
        }
        match self.draw_card(seat, DrawCause::Turn, sink) {
            None => self.end_round(RoundEnd::Blocked, sink),
            Some(card) => {
                self.drawn = Some(card);
                self.phase = Phase::AfterDraw;
                if self.playable() == 0 {
                    sink.event(&Event::Passed {
                        seat,
                        automatic: true,
                    });
                    self.end_turn(self.step(seat, 1), None, sink);
                }
            }
        }
    }

    fn announce(&mut self, call: Call, sink: &mut impl EventSink) -> Result<(), Rejection> {
        if self.rules.call_rule != CallRule::Announce {
            return Err(Rejection::AnnounceNotAllowed);
        }
        if call != Call::MauMau {
            return Err(Rejection::WrongWord);
        }
        if self.phase == Phase::Announced {
            return Err(Rejection::AlreadyAnnounced);
        }
        self.accused = false;
        let seat = self.current;
        let valid = self.announce_valid();
        sink.event(&Event::Announced { seat, call, valid });
        if valid {
            self.phase = Phase::Announced;
        } else {
            self.penalty_draw(
                seat,
                self.rules.false_call_penalty,
                DrawCause::FalseCall,
                sink,
            );
        }
        Ok(())
    }

    fn late_cure(
        &mut self,
        seat: Seat,
        call: Call,
        sink: &mut impl EventSink,
    ) -> Result<(), Rejection> {
        if !self.may_cure(seat) {
            return Err(if self.rules.call_rule == CallRule::Announce {
                Rejection::NotYourTurn
            } else {
                Rejection::AnnounceNotAllowed
            });
        }
        if call == Call::None {
            return Err(Rejection::WrongWord);
        }
        self.accused = false;
        self.last_call[seat as usize] = call;
        self.offence = None;
        sink.event(&Event::Announced {
            seat,
            call,
            valid: true,
        });
        sink.event(&Event::OffenceCured { seat });
        Ok(())
    }

    fn challenge(&mut self, seat: Seat, sink: &mut impl EventSink) -> Result<(), Rejection> {
        if !self.rules.windows_open() {
            return Err(Rejection::ChallengesDisabled);
        }
        if self.accused {
            return Err(Rejection::AlreadyChallenged);
        }
        match self.offence {
            Some(o) if o.offender == seat => Err(Rejection::OwnOffence),
            Some(o) => {
                self.offence = None;
                self.accused = true;
                let outcome = ChallengeOutcome::Caught {
                    offender: o.offender,
                };
                sink.event(&Event::Challenged { by: seat, outcome });
                let n = self.rules.omission_penalty;
                self.penalty_draw(o.offender, n, DrawCause::Omission, sink);
                if self.rules.penalty_draw_ends_own_turn && o.offender == self.current {
                    self.end_turn(self.step(self.current, 1), None, sink);
                }
                Ok(())
            }
            None if self.rules.false_accusation_penalty > 0 => {
                sink.event(&Event::Challenged {
                    by: seat,
                    outcome: ChallengeOutcome::False,
                });
                let n = self.rules.false_accusation_penalty;
                self.penalty_draw(seat, n, DrawCause::FalseAccusation, sink);
                Ok(())
            }
            None => Err(Rejection::NoOpenOffence),
        }
    }

    fn declare_suit(&mut self, suit: Suit, sink: &mut impl EventSink) {
        self.accused = false;
        self.named = Some(suit);
        self.refresh_matching();
        sink.event(&Event::SuitDeclared {
            seat: self.dealer,
            suit,
        });
        self.begin_turn(self.step(self.dealer, 1), sink);
    }

    // ----- mechanics ---------------------------------------------------------------------

    /// `step(s, k)` of RULES.md: `k` seats on in the current direction, for `k` of 1, 2 or -1,
    /// read from the table of neighbours the rules keep ([`Rules::next_seat`]).
    #[inline]
    pub(crate) fn step(&self, seat: Seat, k: i8) -> Seat {
        debug_assert!(matches!(k, 1 | 2 | -1), "step by {k}");
        let ahead = &self.rules.next_seat[self.clockwise as usize];
        let s = seat as usize % MAX_SEATS;
        match k {
            1 => ahead[s],
            2 => ahead[ahead[s] as usize % MAX_SEATS],
            _ => self.rules.next_seat[!self.clockwise as usize][s],
        }
    }

    /// Applies a played card's effect (§1.7) and returns the seat that plays next.
    #[inline]
    fn resolve_effect(
        &mut self,
        seat: Seat,
        card: Card,
        suit: Option<Suit>,
        sink: &mut impl EventSink,
    ) -> Seat {
        match self.rules.effect(card.rank()) {
            Effect::None => self.step(seat, 1),
            Effect::DrawTwo => {
                self.debt += 2;
                self.step(seat, 1)
            }
            Effect::Skip => {
                sink.event(&Event::Skipped {
                    seat: self.step(seat, 1),
                });
                self.step(seat, 2)
            }
            Effect::Reverse => {
                self.clockwise = !self.clockwise;
                sink.event(&Event::DirectionChanged {
                    clockwise: self.clockwise,
                });
                self.step(seat, 1)
            }
            Effect::Wild => {
                self.named = suit;
                self.step(seat, 1)
            }
            Effect::PrevDrawOne => {
                let prev = self.step(seat, -1);
                self.penalty_draw(prev, 1, DrawCause::PrevDrawOne, sink);
                self.step(seat, 1)
            }
        }
    }

    /// Ends the turn of the seat to move. Closes the open window, whose closing turn this was
    /// (a pending-out offender then wins), opens the window of this turn's offence, applies the turn
    /// limit, and starts the next turn, passing over a pending-out seat.
    ///
    /// The seat taking the closing turn may be the earlier offender itself (its own skip gave it
    /// the turn). It was not pending-out (pending-out seats take no turn), so if its hand is empty
    /// now, this turn's play emptied it with an uncalled last card: that play is the next offence
    /// (RULES.md §1.9: "the next offence can only be created by the play that closes the previous
    /// window"), and the seat becomes pending-out instead of winning.
    ///
    /// Order at the turn limit (RULES.md is silent; our ruling, docs/RULES.md): the turn's play is
    /// resolved first, so its window opens (with `PendingOut` for an emptied hand), and only then
    /// does the limit end the round as BLOCKED, which closes that window under §1.9(d): the
    /// pending seat does not win and its empty hand scores as it stands.
    #[inline]
    fn end_turn(&mut self, next: Seat, opened: Option<Offence>, sink: &mut impl EventSink) {
        self.turns += 1;
        if let Some(o) = self.offence.take() {
            sink.event(&Event::OffenceExpired { seat: o.offender });
            let was_pending_out = o.offender != self.current;
            if was_pending_out && self.hands[o.offender as usize].is_empty() {
                self.end_round(RoundEnd::Out(o.offender), sink);
                return;
            }
        }
        if let Some(o) = opened {
            self.offence = Some(o);
            sink.event(&Event::OffenceOpened {
                seat: o.offender,
                kind: o.kind,
            });
            if self.hands[o.offender as usize].is_empty() {
                sink.event(&Event::PendingOut { seat: o.offender });
            }
        }
        if self.turns >= self.rules.max_turns_per_round {
            self.end_round(RoundEnd::Blocked, sink);
            return;
        }
        let mut next = next;
        if Some(next) == self.pending_out() {
            next = self.step(next, 1);
        }
        self.begin_turn(next, sink);
    }

    fn begin_turn(&mut self, seat: Seat, sink: &mut impl EventSink) {
        self.current = seat;
        self.phase = Phase::Start;
        self.drawn = None;
        self.penalty_cards = Hand::EMPTY;
        sink.event(&Event::TurnStarted { seat });
    }

    /// Draws one card for `seat`, rebuilding the stock if needed; `None` if no card is left.
    #[inline]
    fn draw_card(
        &mut self,
        seat: Seat,
        cause: DrawCause,
        sink: &mut impl EventSink,
    ) -> Option<Card> {
        if self.stock.is_empty() && !self.rebuild_stock(sink) {
            return None;
        }
        let card = self.stock.pop()?;
        self.hands[seat as usize].insert(card);
        sink.event(&Event::Drew {
            seat,
            card: Some(card),
            cause,
        });
        Some(card)
    }

    /// Shuffles the discard pile below its top into a new stock; false if there is none. Kept
    /// out of line: a stock runs out about once a round.
    #[inline(never)]
    fn rebuild_stock(&mut self, sink: &mut impl EventSink) -> bool {
        if self.discard.len() <= 1 {
            return false;
        }
        let Some(top) = self.discard.pop() else {
            return false;
        };
        self.stock = self.discard;
        self.discard.clear();
        self.discard.push(top);
        let mut rng = self.rng();
        self.stock.shuffle(&mut rng);
        sink.event(&Event::StockRebuilt {
            size: self.stock.len() as u8,
        });
        true
    }

    /// A penalty draw: never blocks, stops when the cards run out, never changes the turn.
    fn penalty_draw(&mut self, seat: Seat, n: u8, cause: DrawCause, sink: &mut impl EventSink) {
        for _ in 0..n {
            match self.draw_card(seat, cause, sink) {
                Some(card) if seat == self.current && !self.rules.penalty_cards_playable => {
                    self.penalty_cards.insert(card);
                }
                Some(_) => {}
                None => break,
            }
        }
    }

    fn end_round(&mut self, end: RoundEnd, sink: &mut impl EventSink) {
        self.offence = None;
        self.drawn = None;
        self.penalty_cards = Hand::EMPTY;
        let n = self.rules.seats as usize;
        let points = round_points(&self.rules, &self.hands[..n], end);
        for (total, p) in self.totals.iter_mut().zip(points) {
            *total += p;
        }
        if let RoundEnd::Out(w) = end {
            self.rounds_won[w as usize] += 1;
        }
        let result = RoundResult {
            round: self.round,
            end,
            points,
            totals: self.totals,
            hands: self.hands,
        };
        sink.event(&Event::RoundEnded(result));
        let over = match self.rules.target {
            None => true,
            Some(t) => self.totals[..n].iter().any(|&x| x >= t as i32),
        };
        if over || self.round >= self.rules.max_rounds {
            self.phase = Phase::Over;
            sink.event(&Event::MatchEnded);
            return;
        }
        self.round += 1;
        self.dealer = (self.dealer + 1) % self.rules.seats;
        self.start_round(None, sink);
    }

    /// The generator for the next shuffle or draw of lots: a fresh PCG seeded from the match
    /// seed and the shuffle count, so the whole generator state is two numbers.
    fn rng(&mut self) -> Pcg64Mcg {
        let k = (self.shuffles as u64 + 1).wrapping_mul(crate::seed::GAMMA);
        self.shuffles += 1;
        Pcg64Mcg::seed_from_u64(self.seed ^ k)
    }

    /// Deals a round (§1.2) from `deck` (dealing order) or a fresh shuffle, then resolves the
    /// up-card.
    fn start_round(&mut self, deck: Option<&[Card]>, sink: &mut impl EventSink) {
        let n = self.rules.seats;
        self.hands = [Hand::EMPTY; MAX_SEATS];
        self.discard.clear();
        self.stock.clear();
        match deck {
            Some(d) => d.iter().rev().for_each(|&c| self.stock.push(c)),
            None => {
                self.stock = Pile::sorted_deck(self.rules.deck_mask(), self.rules.copies);
                let mut rng = self.rng();
                self.stock.shuffle(&mut rng);
            }
        }
        self.clockwise = true;
        self.named = None;
        self.debt = 0;
        self.drawn = None;
        self.penalty_cards = Hand::EMPTY;
        self.offence = None;
        self.last_call = [Call::None; MAX_SEATS];
        self.accused = false;
        self.turns = 0;
        sink.event(&Event::RoundStarted {
            round: self.round,
            dealer: self.dealer,
        });
        let first_dealt = match self.rules.up_card {
            UpCardMode::AsPlayByFirst => self.dealer,
            _ => (self.dealer + 1) % n,
        };
        // The hands are the top of the stock, dealt from the top down.
        let dealt = self.rules.hand_size as usize * n as usize;
        let rest = self.stock.len() - dealt;
        let mut seat = first_dealt;
        for &card in self.stock.as_slice()[rest..].iter().rev() {
            self.hands[seat as usize % MAX_SEATS].insert(card);
            sink.event(&Event::Drew {
                seat,
                card: Some(card),
                cause: DrawCause::Deal,
            });
            seat = if seat + 1 == n { 0 } else { seat + 1 };
        }
        self.stock.truncate(rest);
        #[allow(
            clippy::expect_used,
            reason = "every deck holds more cards than a full table is dealt"
        )]
        let up = self.stock.pop().expect("a deck holds the up-card");
        self.discard.push(up);
        self.refresh_matching();
        sink.event(&Event::UpCard { card: up });
        let d = self.dealer;
        if self.rules.up_card == UpCardMode::NoEffect {
            self.begin_turn(self.step(d, 1), sink);
        } else if self.rules.effect(up.rank()) == Effect::Wild {
            self.phase = Phase::AwaitSuit;
        } else {
            self.current = d;
            let next = self.resolve_effect(d, up, None, sink);
            self.refresh_matching();
            self.begin_turn(next, sink);
        }
    }
}

/// The offence a play opens under the profile's call rule (RULES.md §1.9), or `None`: the seat held
/// `before` cards and played `card` with `call`; `last_call` is its last romanian call, and
/// `announced` says whether it made a valid brazilian announcement for this play. The one place
/// the call rule is written: [`Game::apply`] uses it, and so does [`Observation::offence_of`],
/// which marks the listed plays that open one.
///
/// [`Observation::offence_of`]: crate::Observation::offence_of
pub(crate) fn call_offence(
    rules: &Rules,
    before: usize,
    card: Card,
    call: Call,
    last_call: Call,
    announced: bool,
) -> Option<OffenceKind> {
    let left = before.saturating_sub(1);
    // No call rule asks for a word while two or more cards are left: most plays.
    if left >= 2 {
        return None;
    }
    match rules.call_rule {
        CallRule::None => None,
        CallRule::LastCards => match left {
            1 if call != Call::Mau => Some(OffenceKind::Omission),
            0 if call != Call::MauMau => Some(OffenceKind::Omission),
            _ => None,
        },
        CallRule::Romanian => match left {
            1 => (call == Call::None).then_some(OffenceKind::Omission),
            // The call of the final J is ignored: the MAU_MAU was due on the card before (§2.4).
            0 if card.rank() == Rank::Jack && last_call != Call::MauMau => {
                Some(OffenceKind::JackFinish)
            }
            _ => None,
        },
        CallRule::Announce => {
            (left == 1 && before == 2 && !announced).then_some(OffenceKind::NoAnnounce)
        }
    }
}

/// Every card of the profile's deck, in canonical order (suit, then rank; copies together).
pub(crate) fn full_deck(rules: &Rules) -> Vec<Card> {
    cards_of(rules.deck_mask())
        .flat_map(|c| std::iter::repeat_n(c, rules.copies as usize))
        .collect()
}
