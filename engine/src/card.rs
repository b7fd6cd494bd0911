//! Cards, suits, ranks, and the two containers the engine keeps them in.
//!
//! A [`Card`] is a rank and a suit packed in one byte (`suit * 16 + rank`), so that a set of
//! distinct cards is a `u64` with one 16-bit lane per suit. RULES.md §1.1 gives a card in the
//! two-deck brazilian game the identity (rank, suit, copy); the copy can never be observed and
//! never changes whether a play is legal, so the engine does not store it: a [`Hand`] is a
//! multiset holding each card at most twice, and piles are sequences of plain cards.

use std::fmt;
use std::str::FromStr;

/// One of the four suits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Suit {
    /// ♣, written `C`.
    Clubs = 0,
    /// ♦, written `D`.
    Diamonds = 1,
    /// ♥, written `H`.
    Hearts = 2,
    /// ♠, written `S`.
    Spades = 3,
}

impl Suit {
    /// All suits in index order.
    pub const ALL: [Suit; 4] = [Suit::Clubs, Suit::Diamonds, Suit::Hearts, Suit::Spades];

    /// The suit with this index (0..4).
    pub const fn from_index(i: u8) -> Suit {
        Suit::ALL[(i & 3) as usize]
    }

    /// The suit's index (0..4).
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The ASCII letter used in text forms.
    pub const fn letter(self) -> char {
        match self {
            Suit::Clubs => 'C',
            Suit::Diamonds => 'D',
            Suit::Hearts => 'H',
            Suit::Spades => 'S',
        }
    }

    /// Parses `C`, `D`, `H`, `S` (either case) or the symbols `♣ ♦ ♥ ♠`.
    pub fn from_char(c: char) -> Option<Suit> {
        Some(match c {
            'C' | 'c' | '♣' => Suit::Clubs,
            'D' | 'd' | '♦' => Suit::Diamonds,
            'H' | 'h' | '♥' => Suit::Hearts,
            'S' | 's' | '♠' => Suit::Spades,
            _ => return None,
        })
    }

    /// The mask of every card of this suit in a `u64` card set.
    pub const fn mask(self) -> u64 {
        0x1FFF << (16 * self as u32)
    }
}

impl fmt::Display for Suit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.letter())
    }
}

/// One of the thirteen ranks, from 2 to ace. Ranks have no order in play (§1.1).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
#[allow(missing_docs)]
pub enum Rank {
    Two = 0,
    Three,
    Four,
    Five,
    Six,
    Seven,
    Eight,
    Nine,
    Ten,
    Jack,
    Queen,
    King,
    Ace,
}

impl Rank {
    /// All ranks from 2 to ace.
    pub const ALL: [Rank; 13] = [
        Rank::Two,
        Rank::Three,
        Rank::Four,
        Rank::Five,
        Rank::Six,
        Rank::Seven,
        Rank::Eight,
        Rank::Nine,
        Rank::Ten,
        Rank::Jack,
        Rank::Queen,
        Rank::King,
        Rank::Ace,
    ];

    /// The rank with this index (0 = 2 … 12 = ace).
    pub const fn from_index(i: u8) -> Rank {
        Rank::ALL[i as usize % 13]
    }

    /// The rank's index (0 = 2 … 12 = ace).
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The mask of every card of this rank in a `u64` card set.
    pub const fn mask(self) -> u64 {
        0x0001_0001_0001_0001 << (self as u32)
    }

    /// The text form: `2`…`10`, `J`, `Q`, `K`, `A`.
    pub const fn text(self) -> &'static str {
        [
            "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A",
        ][self as usize]
    }

    /// Parses the text form; `T` is accepted for ten.
    pub fn parse(s: &str) -> Option<Rank> {
        Some(match s {
            "T" | "t" => Rank::Ten,
            "J" | "j" => Rank::Jack,
            "Q" | "q" => Rank::Queen,
            "K" | "k" => Rank::King,
            "A" | "a" => Rank::Ace,
            _ => {
                let n: u8 = s.parse().ok()?;
                if !(2..=10).contains(&n) {
                    return None;
                }
                Rank::from_index(n - 2)
            }
        })
    }
}

/// A playing card: rank and suit in one byte.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card(u8);

impl Card {
    /// The card of this rank and suit.
    pub const fn new(rank: Rank, suit: Suit) -> Card {
        Card(((suit as u8) << 4) | rank as u8)
    }

    /// The card's rank.
    #[inline]
    pub const fn rank(self) -> Rank {
        // A 16-entry table: no `% 13` on the hot path (entries 13..16 are never used).
        const BY_NIBBLE: [Rank; 16] = {
            let mut t = [Rank::Two; 16];
            let mut i = 0;
            while i < 13 {
                t[i] = Rank::ALL[i];
                i += 1;
            }
            t
        };
        BY_NIBBLE[(self.0 & 15) as usize]
    }

    /// The card's suit.
    pub const fn suit(self) -> Suit {
        Suit::from_index(self.0 >> 4)
    }

    /// The card's bit in a `u64` card set.
    pub const fn bit(self) -> u64 {
        1 << self.0
    }

    /// Dense index 0..52 (`suit * 13 + rank`), used by the action index and the wire format.
    pub const fn index(self) -> u8 {
        (self.0 >> 4) * 13 + (self.0 & 15)
    }

    /// The card with this dense index (0..52).
    pub const fn from_index(i: u8) -> Card {
        Card::new(Rank::from_index(i % 13), Suit::from_index(i / 13))
    }

    /// The lowest card of a non-empty `u64` card set.
    pub(crate) const fn lowest(set: u64) -> Card {
        Card(set.trailing_zeros() as u8)
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.rank().text(), self.suit().letter())
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A card that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CardParseError(pub String);

impl fmt::Display for CardParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is not a card (expected rank 2-10/J/Q/K/A then suit C/D/H/S, e.g. 10H)",
            self.0
        )
    }
}

impl std::error::Error for CardParseError {}

impl FromStr for Card {
    type Err = CardParseError;

    fn from_str(s: &str) -> Result<Card, CardParseError> {
        let err = || CardParseError(s.to_string());
        let suit_char = s.chars().last().ok_or_else(err)?;
        let suit = Suit::from_char(suit_char).ok_or_else(err)?;
        let rank = Rank::parse(&s[..s.len() - suit_char.len_utf8()]).ok_or_else(err)?;
        Ok(Card::new(rank, suit))
    }
}

/// Iterates the cards of a `u64` card set, lowest first.
pub(crate) fn cards_of(mut set: u64) -> impl Iterator<Item = Card> {
    std::iter::from_fn(move || {
        if set == 0 {
            return None;
        }
        let c = Card::lowest(set);
        set &= set - 1;
        Some(c)
    })
}

/// A multiset of cards holding each card at most twice (two decks in brazilian).
///
/// `once` has a bit for every card held at least once, `twice` for every card held twice;
/// `twice` is always a subset of `once`. `len` is the number of cards, kept up to date by
/// [`Hand::insert`] and [`Hand::remove`] (a function of the two sets, so equality and hashing
/// are unchanged): the engine asks for it on every decision, and two population counts cost more
/// than a byte read on processors without `popcnt`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Hand {
    once: u64,
    twice: u64,
    len: u8,
}

impl Hand {
    /// The empty hand.
    pub const EMPTY: Hand = Hand {
        once: 0,
        twice: 0,
        len: 0,
    };

    /// Number of cards, copies counted.
    #[inline]
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// True when the hand holds no card.
    pub const fn is_empty(&self) -> bool {
        self.once == 0
    }

    /// How many copies of `card` the hand holds (0, 1 or 2).
    pub const fn count(&self, card: Card) -> u8 {
        ((self.once & card.bit() != 0) as u8) + ((self.twice & card.bit() != 0) as u8)
    }

    /// True when the hand holds `card` at least once.
    pub const fn contains(&self, card: Card) -> bool {
        self.once & card.bit() != 0
    }

    /// The set of distinct cards held.
    pub const fn distinct(&self) -> u64 {
        self.once
    }

    /// The set of cards held twice (a subset of [`Hand::distinct`]).
    pub const fn twice(&self) -> u64 {
        self.twice
    }

    /// Adds one copy of `card`. Returns false (and changes nothing) if two are held already.
    pub fn insert(&mut self, card: Card) -> bool {
        let b = card.bit();
        if self.once & b == 0 {
            self.once |= b;
        } else if self.twice & b == 0 {
            self.twice |= b;
        } else {
            return false;
        }
        self.len += 1;
        true
    }

    /// Removes one copy of `card`. Returns false (and changes nothing) if none is held.
    pub fn remove(&mut self, card: Card) -> bool {
        let b = card.bit();
        if self.twice & b != 0 {
            self.twice &= !b;
        } else if self.once & b != 0 {
            self.once &= !b;
        } else {
            return false;
        }
        self.len -= 1;
        true
    }

    /// The distinct cards of `self` that remain after taking away the multiset `other`.
    pub const fn distinct_minus(&self, other: &Hand) -> u64 {
        (self.once & !other.once) | (self.twice & !other.twice)
    }

    /// Adds every card of `other` (copies counted). Returns false (and changes nothing) if a
    /// card would then be held more than twice.
    pub(crate) fn add_all(&mut self, other: &Hand) -> bool {
        if (self.twice & other.once) | (self.once & other.twice) != 0 {
            return false;
        }
        self.twice |= other.twice | (self.once & other.once);
        self.once |= other.once;
        self.len += other.len;
        true
    }

    /// Every card with its copies, lowest first.
    pub fn iter(&self) -> impl Iterator<Item = Card> + '_ {
        cards_of(self.once).flat_map(move |c| std::iter::repeat_n(c, self.count(c) as usize))
    }
}

impl fmt::Debug for Hand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl FromIterator<Card> for Hand {
    fn from_iter<I: IntoIterator<Item = Card>>(iter: I) -> Hand {
        let mut h = Hand::EMPTY;
        for c in iter {
            h.insert(c);
        }
        h
    }
}

/// Most cards any profile uses: two 52-card decks.
pub const MAX_CARDS: usize = 104;

/// An ordered pile of cards with fixed capacity (stock or discard pile); the top is the last card.
/// Two piles are equal when they hold the same cards in the same order.
#[derive(Clone, Copy)]
pub struct Pile {
    cards: [Card; MAX_CARDS],
    len: u8,
}

impl PartialEq for Pile {
    fn eq(&self, other: &Pile) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Pile {}

impl std::hash::Hash for Pile {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl Default for Pile {
    fn default() -> Pile {
        Pile::EMPTY
    }
}

impl Pile {
    /// The empty pile.
    pub const EMPTY: Pile = Pile {
        cards: [Card(0); MAX_CARDS],
        len: 0,
    };

    /// Number of cards.
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// True when empty.
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The top card, if any.
    #[inline]
    pub fn top(&self) -> Option<Card> {
        match self.len {
            0 => None,
            n => self.cards.get(n as usize - 1).copied(),
        }
    }

    /// Puts a card on top. Panics past capacity, which a valid game never reaches.
    #[inline]
    pub fn push(&mut self, card: Card) {
        // The length read once: a store of a card could alias it for all the compiler knows.
        let n = self.len;
        self.cards[n as usize] = card;
        self.len = n + 1;
    }

    /// Takes the top card.
    pub fn pop(&mut self) -> Option<Card> {
        if self.len == 0 {
            return None;
        }
        self.len -= 1;
        Some(self.cards[self.len as usize])
    }

    /// The cards from bottom to top.
    pub fn as_slice(&self) -> &[Card] {
        &self.cards[..self.len as usize]
    }

    /// The cards from bottom to top, mutable.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [Card] {
        &mut self.cards[..self.len as usize]
    }

    /// Every card of the set `deck`, lowest first, each `copies` times in a row: the order
    /// [`cards_of`] gives. The three decks of the profiles are made at compile time, so a deal
    /// copies one instead of placing each card.
    pub(crate) fn sorted_deck(deck: u64, copies: u8) -> Pile {
        const DECKS: [(u64, u8, Pile); 3] = {
            let lane52 = 0x1FFF * 0x0001_0001_0001_0001;
            let lane32 = 0x1FE0 * 0x0001_0001_0001_0001;
            [
                (lane52, 1, Pile::sorted(lane52, 1)),
                (lane32, 1, Pile::sorted(lane32, 1)),
                (lane52, 2, Pile::sorted(lane52, 2)),
            ]
        };
        for (d, c, pile) in &DECKS {
            if *d == deck && *c == copies {
                return *pile;
            }
        }
        Pile::sorted(deck, copies)
    }

    const fn sorted(deck: u64, copies: u8) -> Pile {
        let mut pile = Pile::EMPTY;
        let mut n = 0;
        let mut set = deck;
        while set != 0 {
            let card = Card::lowest(set);
            set &= set - 1;
            let mut k = 0;
            while k < copies {
                pile.cards[n] = card;
                n += 1;
                k += 1;
            }
        }
        pile.len = n as u8;
        pile
    }

    /// Keeps the bottom `len` cards (at most as many as the pile holds).
    pub(crate) fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len as u8);
    }

    /// Empties the pile.
    pub(crate) fn clear(&mut self) {
        self.len = 0;
    }

    /// Shuffles the pile with `rng`: the permutation `rand` 0.10's `SliceRandom::shuffle` makes
    /// with the same generator (Fisher–Yates from the bottom up, several indices drawn from one
    /// 32-bit number: its `IncreasingUniform`, with `random_range`'s biased widening multiply),
    /// written out here so that a deal depends on the seed alone, not on the version or the
    /// features of `rand`, and costs about half as many instructions. A unit test checks it
    /// against `rand`'s for every pile length.
    pub(crate) fn shuffle(&mut self, rng: &mut impl rand::Rng) {
        let cards = &mut self.cards[..self.len as usize];
        // Card `i` swaps with one of `0..=i`. One number drawn below n * (n + 1) * … (as many
        // factors as fit in 32 bits) gives the indices of cards n - 1, n, …: each but the last
        // is the remainder by its factor, the last is the quotient left. (Card 0 only swaps with
        // itself.)
        let len = cards.len();
        let mut i = 1;
        while i < len {
            let (bound, count) = CHUNKS[i + 1];
            let mut chunk = below(rng, bound);
            let last = i + count as usize - 1;
            while i < last.min(len) {
                let n = i as u32 + 1;
                cards.swap(i, (chunk % n) as usize);
                chunk /= n;
                i += 1;
            }
            if last < len {
                cards.swap(last, chunk as usize);
            }
            i = last + 1;
        }
    }
}

/// For each `n` up to [`MAX_CARDS`]: the product n * (n + 1) * … of as many factors as fit in a
/// `u32`, and how many that is (`rand`'s `calculate_bound_u32`), worked out at compile time.
const CHUNKS: [(u32, u8); MAX_CARDS + 1] = {
    let mut table = [(1, 1); MAX_CARDS + 1];
    let mut n = 1;
    while n <= MAX_CARDS {
        let (mut bound, mut count) = (n as u32, 1u8);
        while let Some(p) = bound.checked_mul(n as u32 + count as u32) {
            bound = p;
            count += 1;
        }
        table[n] = (bound, count);
        n += 1;
    }
    table
};

/// A number in `0..bound` exactly as `rand` 0.10's `random_range(..bound)` draws it for a `u32`:
/// the high half of a widening multiply, corrected once when the low half falls in the biased
/// zone.
#[inline]
fn below(rng: &mut impl rand::Rng, bound: u32) -> u32 {
    let wide = u64::from(rng.next_u32()) * u64::from(bound);
    let (mut result, low) = ((wide >> 32) as u32, wide as u32);
    if low > bound.wrapping_neg() {
        let high = ((u64::from(rng.next_u32()) * u64::from(bound)) >> 32) as u32;
        result += u32::from(low.checked_add(high).is_none());
    }
    result
}

impl fmt::Debug for Pile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.as_slice()).finish()
    }
}

impl FromIterator<Card> for Pile {
    fn from_iter<I: IntoIterator<Item = Card>>(iter: I) -> Pile {
        let mut p = Pile::EMPTY;
        for c in iter {
            p.push(c);
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_text_round_trips_for_every_card() {
        for i in 0..52 {
            let c = Card::from_index(i);
            assert_eq!(c.index(), i);
            assert_eq!(c.to_string().parse::<Card>(), Ok(c));
        }
        assert_eq!("TH".parse::<Card>(), Ok(Card::new(Rank::Ten, Suit::Hearts)));
        assert_eq!(
            "7♦".parse::<Card>(),
            Ok(Card::new(Rank::Seven, Suit::Diamonds))
        );
        assert!("1H".parse::<Card>().is_err());
        assert!("".parse::<Card>().is_err());
        assert!("KX".parse::<Card>().is_err());
    }

    #[test]
    fn hand_counts_copies() {
        let c: Card = "7H".parse().unwrap();
        let mut h = Hand::EMPTY;
        assert!(h.insert(c) && h.insert(c));
        assert!(!h.insert(c));
        assert_eq!((h.len(), h.count(c)), (2, 2));
        assert!(h.remove(c) && h.remove(c));
        assert!(!h.remove(c));
        assert!(h.is_empty());
    }

    #[test]
    fn the_shuffle_is_rands() {
        use rand::SeedableRng;
        use rand::seq::SliceRandom;
        for len in 0..=MAX_CARDS {
            for seed in 0..40 {
                let mut pile: Pile = (0..len).map(|i| Card::from_index((i % 52) as u8)).collect();
                let mut theirs = pile;
                pile.shuffle(&mut rand_pcg::Pcg64Mcg::seed_from_u64(seed));
                theirs
                    .as_mut_slice()
                    .shuffle(&mut rand_pcg::Pcg64Mcg::seed_from_u64(seed));
                assert_eq!(pile, theirs, "{len} cards, seed {seed}");
            }
        }
    }

    #[test]
    fn masks_select_suits_and_ranks() {
        let c: Card = "QS".parse().unwrap();
        assert_ne!(Suit::Spades.mask() & c.bit(), 0);
        assert_ne!(Rank::Queen.mask() & c.bit(), 0);
        assert_eq!(Suit::Hearts.mask() & c.bit(), 0);
        assert_eq!(
            Rank::ALL.iter().map(|r| r.mask().count_ones()).sum::<u32>(),
            52
        );
    }
}
