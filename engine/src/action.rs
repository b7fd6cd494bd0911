//! The action space.
//!
//! A seat acts with one [`Action`]:
//!
//! | action | who may send it | meaning |
//! |---|---|---|
//! | `Play { card, suit, call }` | the seat to move | discard `card`; `suit` names the suit to follow and is required exactly when the card is a J; `call` is the word said with the play (classic, penalty-points, romanian-32), or in brazilian `MauMau` for "ANNOUNCE, then play" |
//! | `Draw` | the seat to move | take one card (or, while a debt is owed, pay the whole debt) |
//! | `Pass` | the seat to move, after its 1-card draw | end the turn |
//! | `DeclareSuit(suit)` | the dealer (brazilian: the first player) before the first turn, when the up-card is a J | name the suit the up-card J asks for |
//! | `Announce(call)` | brazilian: the seat to move, before its 2→1 play; romanian-32: an offender, out of turn, to cure a Mau omission | say the word |
//! | `Challenge` | any seat but the offender | accuse the seat whose call was missing (brazilian: ACCUSE) |
//!
//! # Dense index
//!
//! Every action has a fixed index in `0..ACTION_COUNT` ([`Action::index`], [`Action::from_index`]),
//! the same in every profile, for machine-learning bots:
//!
//! | indices | actions |
//! |---|---|
//! | `0..156` | `Play` of a card that is not a J: `card.index() * 3 + call` (cards are indexed `suit * 13 + rank`, J slots unused) |
//! | `0..156`, J slots | `Play` of a J: the J's slot `card.index() * 3 + call` is used with the suit ♣; the other three suits use `156 + (jack_suit * 3 + named_suit - 1) * 3 + call` |
//! | `192` | `Draw` |
//! | `193` | `Pass` |
//! | `194..198` | `DeclareSuit(♣ ♦ ♥ ♠)` |
//! | `198..201` | `Announce(None, Mau, MauMau)` (`None` is never legal) |
//! | `201` | `Challenge` |
//!
//! Calls are numbered `None = 0`, `Mau = 1`, `MauMau = 2`; suits `♣ = 0`, `♦ = 1`, `♥ = 2`, `♠ = 3`.
//!
//! # Legal actions
//!
//! [`crate::Game::legal_actions`] lists, for one seat, every action it may take now that carries
//! no penalty, each play with the call that the rules want (both words where romanian-32 lets the
//! seat choose). A play sent with another call is still accepted: the call is the seat's to make,
//! and a missing call is an omission that others may challenge. The only other accepted actions are
//! the penalised ones of brazilian: a false ANNOUNCE on one's own turn and a false ACCUSE.

use std::fmt;

use crate::card::{Card, Rank, Suit};

/// The word said with a play, or announced.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, PartialOrd, Ord)]
pub enum Call {
    /// Nothing said.
    #[default]
    None = 0,
    /// "Mau".
    Mau = 1,
    /// "Mau Mau" (brazilian: the MAU-MAU button).
    MauMau = 2,
}

impl Call {
    /// Every call, by index.
    pub const ALL: [Call; 3] = [Call::None, Call::Mau, Call::MauMau];

    /// The text form: `-`, `mau`, `maumau`.
    pub const fn text(self) -> &'static str {
        match self {
            Call::None => "-",
            Call::Mau => "mau",
            Call::MauMau => "maumau",
        }
    }

    /// Parses the text form.
    pub fn parse(s: &str) -> Option<Call> {
        Call::ALL.into_iter().find(|c| c.text() == s)
    }
}

/// Something a seat does. See the module docs for who may send what.
///
/// Four bytes, a tag byte first (`repr(u8)`): a listed action is read with one load and told
/// apart by one compare, where the compiler's packing into three bytes took about ten
/// instructions per decision to copy out of a list and decode.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
#[repr(u8)]
pub enum Action {
    /// Discard a card.
    Play {
        /// The card.
        card: Card,
        /// The suit named by a J; `None` for any other card.
        suit: Option<Suit>,
        /// The word said with the play.
        call: Call,
    },
    /// Draw one card, or pay the debt.
    Draw,
    /// End the turn after the 1-card draw.
    Pass,
    /// Name the suit of an up-card J.
    DeclareSuit(Suit),
    /// Say a word outside a play.
    Announce(Call),
    /// Challenge (accuse) the open omission.
    Challenge,
}

/// Size of the dense action space.
pub const ACTION_COUNT: usize = 202;

const DRAW: usize = 192;
const PASS: usize = 193;
const DECLARE: usize = 194;
const ANNOUNCE: usize = 198;
const CHALLENGE: usize = 201;

impl Action {
    /// A play with no call.
    pub const fn play(card: Card) -> Action {
        Action::Play {
            card,
            suit: None,
            call: Call::None,
        }
    }

    /// The dense index of this action (see the module docs).
    pub fn index(&self) -> usize {
        match *self {
            Action::Play { card, suit, call } => {
                let c = call as usize;
                match suit {
                    Some(s) if card.rank() == Rank::Jack && s != Suit::Clubs => {
                        156 + (card.suit() as usize * 3 + s as usize - 1) * 3 + c
                    }
                    _ => card.index() as usize * 3 + c,
                }
            }
            Action::Draw => DRAW,
            Action::Pass => PASS,
            Action::DeclareSuit(s) => DECLARE + s as usize,
            Action::Announce(call) => ANNOUNCE + call as usize,
            Action::Challenge => CHALLENGE,
        }
    }

    /// The action with this dense index; `None` outside `0..ACTION_COUNT`.
    pub fn from_index(i: usize) -> Option<Action> {
        Some(match i {
            0..156 => {
                let card = Card::from_index((i / 3) as u8);
                let suit = (card.rank() == Rank::Jack).then_some(Suit::Clubs);
                Action::Play {
                    card,
                    suit,
                    call: Call::ALL[i % 3],
                }
            }
            156..DRAW => {
                let k = i - 156;
                let (jack_suit, named) = ((k / 3) / 3, (k / 3) % 3 + 1);
                Action::Play {
                    card: Card::new(Rank::Jack, Suit::from_index(jack_suit as u8)),
                    suit: Some(Suit::from_index(named as u8)),
                    call: Call::ALL[k % 3],
                }
            }
            DRAW => Action::Draw,
            PASS => Action::Pass,
            194..198 => Action::DeclareSuit(Suit::from_index((i - DECLARE) as u8)),
            198..201 => Action::Announce(Call::ALL[i - ANNOUNCE]),
            CHALLENGE => Action::Challenge,
            _ => return None,
        })
    }
}

impl fmt::Display for Action {
    /// The text form used in replays and the position docs: `play 7H mau`, `play JD:S`, `draw`,
    /// `pass`, `suit H`, `announce maumau`, `challenge`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Play { card, suit, call } => {
                write!(f, "play {card}")?;
                if let Some(s) = suit {
                    write!(f, ":{s}")?;
                }
                if *call != Call::None {
                    write!(f, " {}", call.text())?;
                }
                Ok(())
            }
            Action::Draw => f.write_str("draw"),
            Action::Pass => f.write_str("pass"),
            Action::DeclareSuit(s) => write!(f, "suit {s}"),
            Action::Announce(c) => write!(f, "announce {}", c.text()),
            Action::Challenge => f.write_str("challenge"),
        }
    }
}

impl std::str::FromStr for Action {
    type Err = String;

    /// Parses the text form written by `Display`.
    fn from_str(s: &str) -> Result<Action, String> {
        let mut words = s.split_whitespace();
        let bad = || format!("`{s}` is not an action (e.g. `play 7H mau`, `play JD:S`, `draw`)");
        let action = match words.next().ok_or_else(bad)? {
            "play" => {
                let spec = words.next().ok_or_else(bad)?;
                let (card, suit) = match spec.split_once(':') {
                    Some((c, s)) => {
                        let suit = s.chars().next().and_then(Suit::from_char).ok_or_else(bad)?;
                        (c, Some(suit))
                    }
                    None => (spec, None),
                };
                let card = card
                    .parse()
                    .map_err(|e: crate::card::CardParseError| e.to_string())?;
                let call = match words.next() {
                    Some(w) => Call::parse(w).ok_or_else(bad)?,
                    None => Call::None,
                };
                Action::Play { card, suit, call }
            }
            "draw" => Action::Draw,
            "pass" => Action::Pass,
            "suit" => {
                let w = words.next().ok_or_else(bad)?;
                Action::DeclareSuit(w.chars().next().and_then(Suit::from_char).ok_or_else(bad)?)
            }
            "announce" => Action::Announce(words.next().and_then(Call::parse).ok_or_else(bad)?),
            "challenge" | "accuse" => Action::Challenge,
            _ => return Err(bad()),
        };
        match words.next() {
            Some(_) => Err(bad()),
            None => Ok(action),
        }
    }
}

/// Most legal actions one seat can have at once (every card × named suits × calls, plus the rest).
pub const MAX_LEGAL: usize = 192;

/// A fixed-capacity list of actions; building one never allocates.
#[derive(Clone, Copy)]
pub struct ActionList {
    items: [Action; MAX_LEGAL],
    len: u8,
}

impl Default for ActionList {
    fn default() -> ActionList {
        ActionList {
            items: [Action::Draw; MAX_LEGAL],
            len: 0,
        }
    }
}

impl ActionList {
    /// Empties the list.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Appends an action.
    /// Pushes a play of every card of the set `cards`, lowest first, each with every call of
    /// `calls` in turn, and a J once per suit it may name: the plays of
    /// [`crate::Game::legal_actions_into`], written straight into the array.
    #[inline]
    pub(crate) fn push_plays(&mut self, cards: u64, calls: &[Call]) {
        let mut n = self.len as usize;
        let mut set = cards;
        if let ([call], 0) = (calls, cards & Rank::Jack.mask()) {
            // The common case: one call, no J, one action per card.
            while set != 0 {
                self.items[n] = Action::Play {
                    card: Card::lowest(set),
                    suit: None,
                    call: *call,
                };
                n += 1;
                set &= set - 1;
            }
            self.len = n as u8;
            return;
        }
        while set != 0 {
            let card = Card::lowest(set);
            set &= set - 1;
            let suits: &[Option<Suit>] = if card.bit() & Rank::Jack.mask() != 0 {
                &[
                    Some(Suit::Clubs),
                    Some(Suit::Diamonds),
                    Some(Suit::Hearts),
                    Some(Suit::Spades),
                ]
            } else {
                &[None]
            };
            for &call in calls {
                for &suit in suits {
                    self.items[n] = Action::Play { card, suit, call };
                    n += 1;
                }
            }
        }
        self.len = n as u8;
    }

    #[inline]
    pub(crate) fn push(&mut self, a: Action) {
        self.items[self.len as usize] = a;
        self.len += 1;
    }

    /// The actions.
    #[inline]
    pub fn as_slice(&self) -> &[Action] {
        &self.items[..self.len as usize]
    }

    /// Number of actions.
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True when no action is legal.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True when `a` is in the list.
    pub fn contains(&self, a: &Action) -> bool {
        self.as_slice().contains(a)
    }
}

impl FromIterator<Action> for ActionList {
    /// Collects at most [`MAX_LEGAL`] actions; the rest are dropped.
    fn from_iter<I: IntoIterator<Item = Action>>(iter: I) -> ActionList {
        let mut list = ActionList::default();
        for a in iter.into_iter().take(MAX_LEGAL) {
            list.push(a);
        }
        list
    }
}

impl std::ops::Deref for ActionList {
    type Target = [Action];
    #[inline]
    fn deref(&self) -> &[Action] {
        self.as_slice()
    }
}

impl PartialEq for ActionList {
    fn eq(&self, other: &ActionList) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for ActionList {}

impl fmt::Debug for ActionList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.as_slice().iter().map(|a| a.to_string()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_index_is_a_bijection() {
        let mut seen = std::collections::HashSet::new();
        for i in 0..ACTION_COUNT {
            let a = Action::from_index(i).unwrap();
            assert_eq!(a.index(), i, "{a}");
            assert!(seen.insert(a));
        }
        assert!(Action::from_index(ACTION_COUNT).is_none());
    }

    #[test]
    fn text_round_trips() {
        for i in 0..ACTION_COUNT {
            let a = Action::from_index(i).unwrap();
            assert_eq!(a.to_string().parse::<Action>(), Ok(a));
        }
        assert!("play".parse::<Action>().is_err());
        assert!("draw now".parse::<Action>().is_err());
    }
}
