//! What a seat may see: the observation, and events as that seat receives them.
//!
//! This module is the one place that decides visibility. Everything that leaves a server for a
//! seat or a spectator must pass through [`Game::observation`] or [`event_for`].
//!
//! # The observation
//!
//! An [`Observation`] for seat `s` holds:
//!
//! - public table state: profile and seat count, round, dealer (brazilian: F), phase, the seat to
//!   act, direction, the whole discard pile (every card in it was played face up; its top is the
//!   card to match), the named suit, the debt, the stock size, every seat's card count, the open
//!   offence and pending-out seat, each seat's last romanian call, whether an accusation has just
//!   succeeded, turns taken this round, totals and rounds won;
//! - private to `s`: its own hand, and while `s` is the seat to move, the card of its 1-card draw
//!   and the cards it received by penalty draws this turn;
//! - `s`'s legal actions ([`Game::legal_actions`]).
//!
//! A spectator's observation ([`Game::spectator_observation`]) is the public part alone.
//!
//! It never contains another seat's cards or the order of the stock. After a stock rebuild the
//! cards below the top are no longer in the discard pile, so the observation does not say which
//! cards are in the stock (a seat that kept count still knows).

use crate::action::{Action, ActionList, Call};
use crate::card::{Card, Hand, Pile, Suit};
use crate::event::{Event, OffenceKind, Seat};
use crate::game::{Game, Offence, Phase, call_offence};
use crate::outcome::MAX_SEATS;
use crate::profile::{CallRule, MatchConfig, Rules};

/// Everything one seat may know about the game now. Building one never allocates.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Observation {
    /// The observing seat; `None` for a spectator, who sees only public information.
    pub viewer: Option<Seat>,
    /// The match configuration (rules are public).
    pub config: MatchConfig,
    /// Round number, from 1.
    pub round: u16,
    /// The dealer (brazilian: the first player F).
    pub dealer: Seat,
    /// The phase.
    pub phase: Phase,
    /// The seat that must act, if any.
    pub to_act: Option<Seat>,
    /// True while play goes clockwise.
    pub clockwise: bool,
    /// This seat's hand.
    pub hand: Hand,
    /// Cards held by each seat.
    pub hand_sizes: [u8; MAX_SEATS],
    /// The discard pile, bottom to top.
    pub discard: Pile,
    /// The suit named by a J on top.
    pub named_suit: Option<Suit>,
    /// Cards owed by the seat to move because of 7s.
    pub debt: u8,
    /// Cards in the stock.
    pub stock_size: u8,
    /// The open offence.
    pub offence: Option<Offence>,
    /// The pending-out seat.
    pub pending_out: Option<Seat>,
    /// Each seat's last romanian call.
    pub last_calls: [Call; MAX_SEATS],
    /// True right after a successful accusation.
    pub just_accused: bool,
    /// This seat's 1-card draw this turn (only while it is the seat to move).
    pub drawn_card: Option<Card>,
    /// Cards this seat received by penalty draws this turn (only while it is the seat to move).
    pub penalty_cards: Hand,
    /// Turns taken this round.
    pub turns: u16,
    /// Match totals.
    pub totals: [i32; MAX_SEATS],
    /// Rounds won.
    pub rounds_won: [u16; MAX_SEATS],
    /// This seat's legal actions now (empty for a spectator).
    pub legal: ActionList,
}

impl Observation {
    /// The top card of the discard pile.
    #[allow(
        clippy::expect_used,
        reason = "every deal turns an up-card, and rebuilding the stock keeps the top card: the pile is never empty"
    )]
    pub fn top(&self) -> Card {
        self.discard
            .top()
            .expect("the discard pile always holds the up-card")
    }

    /// The offence `action` would open if this seat took it now, or `None` (always `None` for an
    /// action other than this seat's play). `rules` are this match's ([`MatchConfig::rules`]).
    ///
    /// The listed plays carry the call that opens none wherever a call can avoid one, so among
    /// the listed actions this marks one case only: a romanian-32 finish with a J when the seat's
    /// last call was not MAU_MAU, an offence whatever the call (the call was due on the card
    /// before). The play is still listed: it is legal, and if no one challenges in its window
    /// the seat wins.
    pub fn offence_of(&self, rules: &Rules, action: Action) -> Option<OffenceKind> {
        let (Some(seat), Action::Play { card, call, .. }) = (self.viewer, action) else {
            return None;
        };
        if self.to_act != Some(seat) {
            return None;
        }
        let before = self.hand.len();
        let announced = self.phase == Phase::Announced
            || (rules.call_rule == CallRule::Announce && call == Call::MauMau && before == 2);
        call_offence(
            rules,
            before,
            card,
            call,
            self.last_calls[seat as usize],
            announced,
        )
    }
}

impl Game {
    /// What `seat` may see now. See the module docs for the list.
    pub fn observation(&self, seat: Seat) -> Observation {
        self.observation_for(Some(seat))
    }

    /// What a spectator may see during play: the public part of every seat's observation.
    pub fn spectator_observation(&self) -> Observation {
        self.observation_for(None)
    }

    fn observation_for(&self, viewer: Option<Seat>) -> Observation {
        let n = self.rules.seats as usize;
        let mut hand_sizes = [0; MAX_SEATS];
        for (size, hand) in hand_sizes.iter_mut().zip(&self.hands[..n]) {
            *size = hand.len() as u8;
        }
        let moving = viewer.is_some() && self.phase != Phase::AwaitSuit && self.to_act() == viewer;
        Observation {
            viewer,
            config: self.config,
            round: self.round,
            dealer: self.dealer,
            phase: self.phase,
            to_act: self.to_act(),
            clockwise: self.clockwise,
            hand: viewer.map_or(Hand::EMPTY, |s| self.hands[s as usize]),
            hand_sizes,
            discard: self.discard,
            named_suit: self.named,
            debt: self.debt,
            stock_size: self.stock.len() as u8,
            offence: self.offence,
            pending_out: self.pending_out(),
            last_calls: self.last_call,
            just_accused: self.accused,
            drawn_card: if moving { self.drawn } else { None },
            penalty_cards: if moving {
                self.penalty_cards
            } else {
                Hand::EMPTY
            },
            turns: self.turns,
            totals: self.totals,
            rounds_won: self.rounds_won,
            legal: viewer.map_or_else(ActionList::default, |s| self.legal_actions(s)),
        }
    }
}

/// The event as `viewer` may see it: a card drawn by another seat is hidden. `None` is a
/// spectator during play, who sees no drawn card.
pub fn event_for(event: &Event, viewer: Option<Seat>) -> Event {
    match *event {
        Event::Drew {
            seat,
            card: Some(_),
            cause,
        } if viewer != Some(seat) => Event::Drew {
            seat,
            card: None,
            cause,
        },
        e => e,
    }
}

impl Observation {
    /// A full game consistent with this observation: the cards the viewer cannot see (every card
    /// of the deck not in its hand or the discard pile) are shuffled with `seed` and dealt to the
    /// other seats, to their known hand sizes, and to the stock. What the viewer cannot know is
    /// guessed: another seat's drawn card (one of its sampled cards), its penalty cards this turn
    /// (none), the generator state (`seed`). For search bots that sample hidden information.
    ///
    /// A spectator's observation samples every hand. Never allocates.
    pub fn determinize(&self, seed: u64) -> Game {
        self.determinize_with_hands(seed, &[])
    }

    /// As [`Observation::determinize`], but the listed seats hold the listed cards: for search
    /// bots that sample the hidden hands themselves (from what they inferred about them) and
    /// leave the stock to this function. Each listed card is taken out of the unseen cards
    /// before they are shuffled (a card that is not among them is skipped), a listed seat's hand
    /// is then filled up to its size like any other seat's, and the viewer's own seat keeps its
    /// hand whatever the list says. With an empty list this is exactly
    /// [`Observation::determinize`]. Never allocates.
    pub fn determinize_with_hands(&self, seed: u64, hands: &[(Seat, Hand)]) -> Game {
        use rand::SeedableRng;

        let mut g = self.public_game(seed);
        let rules = g.rules;
        let n = rules.seats as usize;
        // The unseen multiset: the deck minus what the viewer sees.
        let mut seen = self.hand;
        for &c in self.discard.as_slice() {
            seen.insert(c);
        }
        let mut unseen = Pile::EMPTY;
        for c in crate::card::cards_of(rules.deck_mask()) {
            for _ in seen.count(c)..rules.copies {
                unseen.push(c);
            }
        }
        for &(seat, hand) in hands {
            let s = seat as usize;
            if s >= n || Some(seat) == self.viewer {
                continue;
            }
            for c in hand.iter() {
                if g.hands[s].len() >= self.hand_sizes[s] as usize {
                    break;
                }
                if let Some(i) = unseen.as_slice().iter().position(|&u| u == c) {
                    let last = unseen.len() - 1;
                    unseen.as_mut_slice().swap(i, last);
                    unseen.pop();
                    g.hands[s].insert(c);
                }
            }
        }
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(seed);
        unseen.shuffle(&mut rng);
        for s in 0..n {
            if Some(s as Seat) == self.viewer {
                g.hands[s] = self.hand;
                continue;
            }
            for _ in g.hands[s].len()..self.hand_sizes[s] as usize {
                if let Some(c) = unseen.pop() {
                    g.hands[s].insert(c);
                }
            }
        }
        for _ in 0..self.stock_size {
            if let Some(c) = unseen.pop() {
                g.stock.push(c);
            }
        }
        self.finish_deal(&mut g);
        g
    }

    /// As [`Observation::determinize`], for a search bot that deals every hidden card itself:
    /// `hands` holds every other seat's whole hand (the viewer's entry is ignored: it keeps its
    /// own hand) and `stock` the stock, its top last; `seed` seeds the game's generator (its
    /// later stock rebuilds). `None` unless they are exactly the cards the viewer cannot see,
    /// each hand of its seat's size and the stock of its size. Costs a fraction of
    /// [`Observation::determinize_with_hands`] (no list of unseen cards is built, searched or
    /// shuffled). Never allocates.
    pub fn determinize_dealt(
        &self,
        seed: u64,
        hands: &[Hand; MAX_SEATS],
        stock: &[Card],
    ) -> Option<Game> {
        let mut g = self.public_game(seed);
        let rules = g.rules;
        if stock.len() != self.stock_size as usize {
            return None;
        }
        // Every card of the deck must be dealt as many times as the deck holds it: count what
        // the viewer sees, every other hand and the stock together.
        let mut dealt = self.hand;
        for &c in self.discard.as_slice() {
            if !dealt.insert(c) {
                return None;
            }
        }
        let n = rules.seats as usize;
        for (s, (hand, size)) in hands.iter().zip(self.hand_sizes).enumerate().take(n) {
            if Some(s as Seat) == self.viewer {
                g.hands[s] = self.hand;
                continue;
            }
            if hand.len() != size as usize || !dealt.add_all(hand) {
                return None;
            }
            g.hands[s] = *hand;
        }
        for &c in stock {
            if !dealt.insert(c) {
                return None;
            }
            g.stock.push(c);
        }
        let deck = rules.deck_mask();
        let twice = if rules.copies == 2 { deck } else { 0 };
        if dealt.distinct() != deck || dealt.twice() != twice {
            return None;
        }
        self.finish_deal(&mut g);
        Some(g)
    }

    /// A game with this observation's public state and no card in any hand or the stock, its
    /// generator seeded with `seed`: what every determinization starts from.
    fn public_game(&self, seed: u64) -> Game {
        #[allow(
            clippy::expect_used,
            reason = "an observation comes from a game, whose config was checked"
        )]
        let mut g = Game::blank(self.config, seed).expect("an observation has a valid config");
        g.discard = self.discard;
        g.clockwise = self.clockwise;
        g.current = self.to_act.unwrap_or(0);
        g.phase = self.phase;
        g.named = self.named_suit;
        g.debt = self.debt;
        g.offence = self.offence;
        g.last_call = self.last_calls;
        g.accused = self.just_accused;
        g.turns = self.turns;
        g.dealer = self.dealer;
        g.round = self.round;
        g.totals = self.totals;
        g.rounds_won = self.rounds_won;
        g
    }

    /// Completes a determinization once the hands are dealt: what the viewer knows of the
    /// mover's turn, or a guess at it (another seat's drawn card: one of its cards; its penalty
    /// cards: none), and the matching mask.
    fn finish_deal(&self, g: &mut Game) {
        let mover = g.current as usize;
        if Some(g.current) == self.viewer {
            g.drawn = self.drawn_card;
            g.penalty_cards = self.penalty_cards;
        } else if self.phase == Phase::AfterDraw {
            g.drawn = g.hands[mover].iter().next();
        }
        g.refresh_matching();
    }
}

#[cfg(test)]
mod tests {
    use crate::card::{Card, Hand};
    use crate::game::Game;

    fn cards(text: &str) -> Hand {
        text.split(',')
            .map(|c| c.parse::<Card>().expect("a card"))
            .collect()
    }

    #[test]
    fn listed_hands_are_dealt_as_listed() {
        let game = Game::from_position(
            "mm1 classic seats=3 turn=0 hands=2C,3C,4C/2D,3D,4D/2H,3H,4H discard=5S stock=*",
        )
        .expect("valid");
        let obs = game.observation(0);
        assert_eq!(obs.determinize_with_hands(9, &[]), obs.determinize(9));
        // S1 gets the listed cards; S2's list is too short and is filled up; the viewer's own
        // list, a card the viewer holds and a card on the discard pile are ignored.
        let listed = [
            (1, cards("KS,QS,JS")),
            (2, cards("AS,2C,5S")),
            (0, cards("KH,QH,JH")),
        ];
        for seed in 0..20 {
            let sample = obs.determinize_with_hands(seed, &listed);
            assert_eq!(sample.observation(0), obs);
            assert_eq!(*sample.hand(1), cards("KS,QS,JS"));
            assert!(sample.hand(2).contains("AS".parse().expect("a card")));
            assert_eq!(sample.hand(2).len(), 3);
            assert!(!sample.hand(2).contains("5S".parse().expect("a card")));
            let dealt = sample.hand(1).len() + sample.hand(2).len() + sample.stock().len();
            assert_eq!(dealt + 3 + 1, 52);
        }
    }

    #[test]
    fn a_dealt_game_is_the_game_of_its_deal() {
        use crate::profile::{MatchConfig, ProfileId};
        for (profile, seats) in [(ProfileId::Classic, 4), (ProfileId::Brazilian, 6)] {
            let mut game = Game::new(MatchConfig::new(profile, seats), 11).expect("valid");
            for step in 0..60 {
                let Some(seat) = game.to_act() else { break };
                let obs = game.observation(seat);
                let sample = obs.determinize(step);
                let mut hands = [Hand::EMPTY; crate::outcome::MAX_SEATS];
                for (s, hand) in hands.iter_mut().enumerate().take(seats as usize) {
                    *hand = *sample.hand(s as u8);
                }
                let stock = sample.stock().as_slice();
                assert_eq!(obs.determinize_dealt(step, &hands, stock), Some(sample));
                // The viewer's entry is ignored.
                let mut other = hands;
                other[seat as usize] = Hand::EMPTY;
                assert_eq!(obs.determinize_dealt(step, &other, stock), Some(sample));
                // A stock one card short, a hand of the wrong size, a card dealt twice: refused.
                if let Some((_, short)) = stock.split_last() {
                    assert_eq!(obs.determinize_dealt(step, &hands, short), None);
                }
                let next = (seat as usize + 1) % seats as usize;
                let mut wrong = hands;
                let first = wrong[next].iter().next();
                if let Some(c) = first {
                    wrong[next].remove(c);
                    assert_eq!(obs.determinize_dealt(step, &wrong, stock), None);
                    if let Some(&top) = stock.last() {
                        // The hand's size is right again, but `top` is dealt twice.
                        wrong[next].insert(top);
                        if wrong[next].len() == hands[next].len() {
                            assert_eq!(obs.determinize_dealt(step, &wrong, stock), None);
                        }
                    }
                }
                let action = game.legal_actions(seat)[0];
                game.apply(seat, action).expect("legal");
            }
        }
    }
}
