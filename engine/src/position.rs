//! The position notation: every state as one line of text, like FEN in chess.
//!
//! A position is `mm1`, the profile id, then `key=value` fields separated by spaces, in this
//! order when printed:
//!
//! | key | value | default when parsing |
//! |---|---|---|
//! | `options` | option words, comma-separated (`deck32,nine_reverses,no_mau_penalty,limit150,ace_skips,single_round,jack_wild_on_paid_seven`), or `-` | `-` |
//! | `seats` | seat count | required |
//! | `calls` | `challenge`, `enforce` or `off` | `challenge` |
//! | `max_turns` | Appendix B turn limit per round | `1000` |
//! | `max_rounds` | round limit per match | `1000` |
//! | `rng` | the generator: match seed in hex, `:`, shuffles made so far | `0:0` |
//! | `round` | round number, from 1 | `1` |
//! | `dealer` | the dealer (brazilian: the first player F) | `0` |
//! | `totals` | match totals, one per seat, comma-separated | all `0` |
//! | `won` | rounds won, one per seat | all `0` |
//! | `phase` | `start`, `drawn` (after the 1-card draw), `announced`, `await_suit`, `over` | `start` |
//! | `turn` | the seat to move | `0` |
//! | `dir` | `cw` or `ccw` | `cw` |
//! | `hands` | each seat's cards, seats separated by `/`, cards by `,`; `-` for an empty hand | required |
//! | `stock` | the stock, **top first**; `-` when empty; a final `*` means "then every card not listed anywhere, in canonical order" | `-` |
//! | `discard` | the discard pile, **bottom to top** (the last card is the top) | required |
//! | `suit` | the suit named by a J on top, or `-` | `-` |
//! | `debt` | cards owed because of 7s | `0` |
//! | `drawn` | the card of this turn's 1-card draw, or `-` | `-` |
//! | `penalty` | cards the seat to move received by penalty draws this turn, or `-` | `-` |
//! | `offence` | the open offence as `seat:kind` (`omission`, `jack_finish`, `no_announce`), or `-`; its window closes at the end of the current turn | `-` |
//! | `last` | romanian-32: each seat's last call (`-`, `mau`, `maumau`), comma-separated | all `-` |
//! | `accused` | `1` right after a successful accusation | `0` |
//! | `turns` | turns taken this round | `0` |
//!
//! Cards are written rank then suit: `2`…`10`, `J`, `Q`, `K`, `A` and `C`, `D`, `H`, `S` (`TH`
//! and `♥` are accepted too). Cards listed nowhere are out of play until the next deal, which
//! always uses the whole deck: that lets a test set up a small position such as RULES.md
//! CL-13. A pending-out seat is not written: it is the offender of the open offence while its
//! hand is empty.
//!
//! ```
//! use maumau_engine::Game;
//! let text = "mm1 classic seats=3 turn=1 hands=9S/KC,7D,2S/AH,10C discard=3S";
//! let game = Game::from_position(text).unwrap();
//! assert_eq!(Game::from_position(&game.position()).unwrap(), game);
//! ```

use std::collections::HashMap;
use std::fmt::{self, Write};

use crate::action::Call;
use crate::card::{Card, Hand, Pile, Rank, Suit, cards_of};
use crate::event::{OffenceKind, Seat};
use crate::game::{Game, Offence, Phase};
use crate::outcome::MAX_SEATS;
use crate::profile::{CallsMode, ConfigError, MatchConfig, Options, ProfileId};

/// Why a position could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionError(pub String);

impl fmt::Display for PositionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad position: {}", self.0)
    }
}

impl std::error::Error for PositionError {}

impl From<ConfigError> for PositionError {
    fn from(e: ConfigError) -> PositionError {
        PositionError(e.to_string())
    }
}

fn write_cards(out: &mut String, cards: impl Iterator<Item = Card>) {
    let start = out.len();
    for (i, c) in cards.enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "{c}");
    }
    if out.len() == start {
        out.push('-');
    }
}

fn join<T: fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

impl Game {
    /// The position notation of this state (see [`crate::position`]).
    pub fn position(&self) -> String {
        let n = self.rules.seats as usize;
        let c = &self.config;
        let mut s = format!(
            "mm1 {} options={} seats={} calls={} max_turns={} max_rounds={} rng={:x}:{} \
             round={} dealer={} totals={} won={} phase={} turn={} dir={} hands=",
            c.profile,
            c.options.to_words(),
            c.seats,
            c.calls.name(),
            c.max_turns_per_round,
            c.max_rounds,
            self.seed,
            self.shuffles,
            self.round,
            self.dealer,
            join(&self.totals[..n]),
            join(&self.rounds_won[..n]),
            self.phase.name(),
            self.current,
            if self.clockwise { "cw" } else { "ccw" },
        );
        for (i, h) in self.hands[..n].iter().enumerate() {
            if i > 0 {
                s.push('/');
            }
            write_cards(&mut s, h.iter());
        }
        s.push_str(" stock=");
        write_cards(&mut s, self.stock.as_slice().iter().rev().copied());
        s.push_str(" discard=");
        write_cards(&mut s, self.discard.as_slice().iter().copied());
        let _ = write!(
            s,
            " suit={} debt={} drawn=",
            self.named.map_or("-".to_string(), |x| x.to_string()),
            self.debt
        );
        write_cards(&mut s, self.drawn.into_iter());
        s.push_str(" penalty=");
        write_cards(&mut s, self.penalty_cards.iter());
        match self.offence {
            Some(o) => {
                let _ = write!(s, " offence={}:{}", o.offender, o.kind.name());
            }
            None => s.push_str(" offence=-"),
        }
        let calls: Vec<&str> = self.last_call[..n].iter().map(|c| c.text()).collect();
        let _ = write!(
            s,
            " last={} accused={} turns={}",
            calls.join(","),
            self.accused as u8,
            self.turns
        );
        s
    }

    /// Reads a position written in the notation of [`crate::position`]. Checks that no card
    /// appears more often than the deck holds it and that the state is one the rules can reach
    /// in its essentials (a debt lies on a 7, a named suit on a J, and so on).
    pub fn from_position(text: &str) -> Result<Game, PositionError> {
        let err = |m: String| PositionError(m);
        let mut words = text.split_whitespace();
        if words.next() != Some("mm1") {
            return Err(err("a position starts with `mm1`".into()));
        }
        let profile: ProfileId = words
            .next()
            .ok_or_else(|| err("no profile".into()))?
            .parse()?;
        let mut fields: HashMap<&str, &str> = HashMap::new();
        for w in words {
            let (k, v) = w
                .split_once('=')
                .ok_or_else(|| err(format!("`{w}` is not key=value")))?;
            if fields.insert(k, v).is_some() {
                return Err(err(format!("`{k}` given twice")));
            }
        }
        let mut take = |k: &str| fields.remove(k);
        let num = |k: &str, v: Option<&str>, default: u64| -> Result<u64, PositionError> {
            v.map_or(Ok(default), |v| {
                v.parse()
                    .map_err(|_| PositionError(format!("`{k}={v}` is not a number")))
            })
        };
        let seats = num("seats", take("seats"), 0)?;
        let seats: u8 = seats
            .try_into()
            .ok()
            .filter(|&s| (1..=MAX_SEATS as u8).contains(&s))
            .ok_or_else(|| err("`seats` must be given, from 2 to 8".into()))?;
        let n = seats as usize;
        let config = MatchConfig {
            profile,
            options: Options::from_words(take("options").unwrap_or("-"))?,
            seats,
            calls: take("calls").map_or(Ok(CallsMode::Challenge), str::parse)?,
            max_turns_per_round: num("max_turns", take("max_turns"), 1000)? as u16,
            max_rounds: num("max_rounds", take("max_rounds"), 1000)? as u16,
        };
        let mut g = Game::blank(config, 0)?;
        let rules = g.rules;
        if let Some(v) = take("rng") {
            let (seed, shuffles) = v
                .split_once(':')
                .and_then(|(a, b)| Some((u64::from_str_radix(a, 16).ok()?, b.parse().ok()?)))
                .ok_or_else(|| err(format!("`rng={v}` is not SEEDHEX:SHUFFLES")))?;
            g.seed = seed;
            g.shuffles = shuffles;
        }
        g.round = num("round", take("round"), 1)? as u16;
        g.dealer = num("dealer", take("dealer"), 0)? as Seat;
        g.current = num("turn", take("turn"), 0)? as Seat;
        if g.round == 0 || g.dealer >= seats || g.current >= seats {
            return Err(err(
                "`round` starts at 1; `dealer` and `turn` must be seats".into(),
            ));
        }
        let per_seat = |k: &str, v: Option<&str>| -> Result<Vec<i64>, PositionError> {
            let Some(v) = v else { return Ok(vec![0; n]) };
            let xs: Vec<i64> = v
                .split(',')
                .map(|x| {
                    x.parse()
                        .map_err(|_| PositionError(format!("`{k}={v}`: bad number")))
                })
                .collect::<Result<_, _>>()?;
            if xs.len() != n {
                return Err(PositionError(format!("`{k}` needs {n} values")));
            }
            Ok(xs)
        };
        for (s, x) in per_seat("totals", take("totals"))?.into_iter().enumerate() {
            g.totals[s] = x as i32;
        }
        for (s, x) in per_seat("won", take("won"))?.into_iter().enumerate() {
            g.rounds_won[s] = x as u16;
        }
        g.phase = match take("phase").unwrap_or("start") {
            "start" => Phase::Start,
            "drawn" => Phase::AfterDraw,
            "announced" => Phase::Announced,
            "await_suit" => Phase::AwaitSuit,
            "over" => Phase::Over,
            p => return Err(err(format!("unknown phase `{p}`"))),
        };
        g.clockwise = match take("dir").unwrap_or("cw") {
            "cw" => true,
            "ccw" => false,
            d => return Err(err(format!("`dir={d}`: expected cw or ccw"))),
        };
        // Cards: count every listed card against the deck.
        let mut used = [0u8; 64];
        let mut count = |c: Card| -> Result<(), PositionError> {
            used[c.bit().trailing_zeros() as usize] += 1;
            if rules.deck_mask() & c.bit() == 0 {
                return Err(PositionError(format!("{c} is not in the {profile} deck")));
            }
            if used[c.bit().trailing_zeros() as usize] > rules.copies {
                return Err(PositionError(format!(
                    "{c} appears more often than the deck holds it"
                )));
            }
            Ok(())
        };
        let list = |v: &str| -> Result<Vec<Card>, PositionError> {
            if v == "-" {
                return Ok(Vec::new());
            }
            v.split(',')
                .map(|c| c.parse::<Card>().map_err(|e| PositionError(e.to_string())))
                .collect()
        };
        let hands_text = take("hands").ok_or_else(|| err("`hands` is required".into()))?;
        let hands: Vec<&str> = hands_text.split('/').collect();
        if hands.len() != n {
            return Err(err(format!("`hands` lists {} seats, not {n}", hands.len())));
        }
        for (s, h) in hands.iter().enumerate() {
            for c in list(h)? {
                count(c)?;
                g.hands[s].insert(c);
            }
        }
        let discard = list(take("discard").ok_or_else(|| err("`discard` is required".into()))?)?;
        if discard.is_empty() {
            return Err(err("the discard pile holds at least its top card".into()));
        }
        for &c in &discard {
            count(c)?;
        }
        g.discard = discard.into_iter().collect();
        let stock_text = take("stock").unwrap_or("-");
        let (stock_text, rest) = match stock_text.strip_suffix('*') {
            Some(s) => (s.trim_end_matches(','), true),
            None => (stock_text, false),
        };
        let mut stock = list(if stock_text.is_empty() {
            "-"
        } else {
            stock_text
        })?;
        for &c in &stock {
            count(c)?;
        }
        if rest {
            for c in cards_of(rules.deck_mask()) {
                for _ in used[c.bit().trailing_zeros() as usize]..rules.copies {
                    stock.push(c);
                }
            }
        }
        g.stock = stock.into_iter().rev().collect::<Pile>();
        g.named = match take("suit").unwrap_or("-") {
            "-" => None,
            v => Some(
                v.chars()
                    .next()
                    .and_then(Suit::from_char)
                    .filter(|_| v.chars().count() == 1)
                    .ok_or_else(|| err(format!("`suit={v}`: expected C, D, H, S or -")))?,
            ),
        };
        g.debt = num("debt", take("debt"), 0)? as u8;
        g.drawn = list(take("drawn").unwrap_or("-"))?.first().copied();
        g.penalty_cards = list(take("penalty").unwrap_or("-"))?
            .into_iter()
            .collect::<Hand>();
        g.offence = match take("offence").unwrap_or("-") {
            "-" => None,
            v => {
                let (seat, kind) = v
                    .split_once(':')
                    .ok_or_else(|| err(format!("`offence={v}`: seat:kind")))?;
                let offender: Seat = seat.parse().map_err(|_| err(format!("`offence={v}`")))?;
                let kind = match kind {
                    "omission" => OffenceKind::Omission,
                    "jack_finish" => OffenceKind::JackFinish,
                    "no_announce" => OffenceKind::NoAnnounce,
                    k => return Err(err(format!("unknown offence kind `{k}`"))),
                };
                if offender >= seats {
                    return Err(err(format!("offender {offender} is not a seat")));
                }
                Some(Offence { offender, kind })
            }
        };
        if let Some(v) = take("last") {
            let calls: Vec<&str> = v.split(',').collect();
            if calls.len() != n {
                return Err(err(format!("`last` needs {n} values")));
            }
            for (s, c) in calls.into_iter().enumerate() {
                g.last_call[s] =
                    Call::parse(c).ok_or_else(|| err(format!("`last`: unknown call `{c}`")))?;
            }
        }
        g.accused = match take("accused").unwrap_or("0") {
            "0" => false,
            "1" => true,
            v => return Err(err(format!("`accused={v}`: expected 0 or 1"))),
        };
        g.turns = num("turns", take("turns"), 0)? as u16;
        if let Some(k) = fields.keys().next() {
            return Err(err(format!("unknown field `{k}`")));
        }
        g.check_consistent().map_err(err)?;
        g.refresh_matching();
        Ok(g)
    }

    fn check_consistent(&self) -> Result<(), String> {
        let top = self.top();
        let hand = &self.hands[self.current as usize];
        if self.debt > 0 && self.rules.debt_cards() & top.bit() == 0 {
            return Err("a debt is owed only while a 7 is on top".into());
        }
        if self.debt % 2 == 1 {
            return Err("a debt grows 2 at a time".into());
        }
        if self.named.is_some() && top.rank() != Rank::Jack {
            return Err("a suit is named only while a J is on top".into());
        }
        if self.phase == Phase::AwaitSuit && (top.rank() != Rank::Jack || self.named.is_some()) {
            return Err("phase await_suit needs an up-card J with no named suit".into());
        }
        match (self.phase, self.drawn) {
            (Phase::AfterDraw, None) => return Err("phase drawn needs `drawn`".into()),
            (Phase::Start | Phase::AwaitSuit | Phase::Over, Some(_)) => {
                return Err("`drawn` is set only after the 1-card draw".into());
            }
            (_, Some(c)) if !hand.contains(c) => {
                return Err(format!(
                    "drawn card {c} is not in the hand of seat {}",
                    self.current
                ));
            }
            _ => {}
        }
        if self
            .penalty_cards
            .iter()
            .any(|c| self.penalty_cards.count(c) > hand.count(c))
        {
            return Err("penalty cards must be in the hand of the seat to move".into());
        }
        if self.offence.is_some() && !self.rules.windows_open() {
            return Err("no window can be open under these call rules".into());
        }
        if self.phase == Phase::Announced && self.rules.profile != ProfileId::Brazilian {
            return Err("phase announced exists only in brazilian".into());
        }
        if self.pending_out() == Some(self.current) && self.phase != Phase::Over {
            return Err("a pending-out seat cannot be the seat to move".into());
        }
        Ok(())
    }
}
