//! The reference bots: `random`, `heuristic` and `search`. Each is deterministic for its seed
//! (the search bot for its seed and iteration budget).

use std::fmt;
use std::str::FromStr;

use maumau_engine::outcome::MAX_SEATS;
use maumau_engine::profile::{CallRule, Effect, PlayAfterDraw, Rules, Scoring, UpCardMode};
use maumau_engine::{
    Action, ActionList, Call, Card, DrawCause, Event, Game, Hand, Observation, Phase, ProfileId,
    Rank, RoundEnd, Seat, Suit,
};

use crate::Bot;

/// SplitMix64: a tiny, fast, seeded generator, so bots need no dependency and replay exactly.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator from a seed.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }
}

/// The reference bots by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BotKind {
    /// [`RandomBot`].
    Random,
    /// [`HeuristicBot`].
    Heuristic,
    /// [`SearchBot`].
    Search,
}

impl BotKind {
    /// Every reference bot.
    pub const ALL: [BotKind; 3] = [BotKind::Random, BotKind::Heuristic, BotKind::Search];

    /// The bot's name: `random`, `heuristic`, `search`.
    pub const fn name(self) -> &'static str {
        match self {
            BotKind::Random => "random",
            BotKind::Heuristic => "heuristic",
            BotKind::Search => "search",
        }
    }

    /// A new bot of this kind with default settings.
    pub fn build(self, seed: u64) -> Box<dyn Bot> {
        match self {
            BotKind::Random => Box::new(RandomBot::new(seed)),
            BotKind::Heuristic => Box::new(HeuristicBot::new(seed)),
            BotKind::Search => Box::new(SearchBot::new(seed)),
        }
    }
}

impl fmt::Display for BotKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BotKind {
    type Err = String;
    fn from_str(s: &str) -> Result<BotKind, String> {
        BotKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown bot `{s}` (expected random, heuristic or search)"))
    }
}

/// Plays a uniformly random legal action; never challenges.
#[derive(Clone, Debug)]
pub struct RandomBot {
    rng: SplitMix,
}

impl RandomBot {
    /// A random bot with its seed.
    pub fn new(seed: u64) -> RandomBot {
        RandomBot {
            rng: SplitMix::new(seed),
        }
    }
}

impl Bot for RandomBot {
    fn name(&self) -> &str {
        "random"
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        obs.legal[self.rng.below(obs.legal.len())]
    }

    /// The choice needs only the legal actions, so in-process runners skip the observation.
    fn quick_decide(&mut self, legal: &[Action]) -> Option<Action> {
        Some(legal[self.rng.below(legal.len())])
    }

    /// A random bot ignores events.
    fn listens(&self) -> bool {
        false
    }
}

/// A sensible player. It always makes its calls, challenges every omission it sees, keeps jacks
/// for when it needs them, names the suit it holds most, answers 7s when it can, plays 7s and
/// skips against the seat closest to going out, and sheds high-value cards first.
#[derive(Clone, Debug)]
pub struct HeuristicBot {
    rng: SplitMix,
}

impl HeuristicBot {
    /// A heuristic bot; the seed only breaks ties.
    pub fn new(seed: u64) -> HeuristicBot {
        HeuristicBot {
            rng: SplitMix::new(seed),
        }
    }
}

/// The heuristic's reading of one seat's position, computed once so that scoring each legal
/// action is cheap. It is built from an observation (the heuristic bot) or straight from a game
/// (the search bot's playouts, which need no observation); both give the same scores.
struct Scorer<'r> {
    rules: &'r Rules,
    /// True when the advised seat is the seat to act (otherwise it is offered out-of-turn
    /// actions only).
    on_turn: bool,
    hand: Hand,
    /// Non-jack cards held, per suit.
    suits: [i32; 4],
    /// The bonus for a 7 or a skip, when the next seat holds the fewest cards.
    pressure: Option<i32>,
}

impl<'r> Scorer<'r> {
    /// The reading for seat `me`, given the seat to act, `me`'s hand, the direction of play and
    /// every seat's card count.
    fn new(
        rules: &'r Rules,
        me: Seat,
        to_act: Option<Seat>,
        hand: Hand,
        clockwise: bool,
        sizes: &[u8; MAX_SEATS],
    ) -> Scorer<'r> {
        let mut suits = [0; 4];
        let distinct = hand.distinct();
        if hand.len() == distinct.count_ones() as usize {
            // No card twice: count with masks.
            for (n, suit) in suits.iter_mut().zip(Suit::ALL) {
                *n = (distinct & suit.mask() & !Rank::Jack.mask()).count_ones() as i32;
            }
        } else {
            for c in hand.iter().filter(|c| c.rank() != Rank::Jack) {
                suits[c.suit().index() as usize] += 1;
            }
        }
        let n = rules.seats as usize;
        let me = me as usize;
        let next = if clockwise { me + 1 } else { me + n - 1 } % n;
        let fewest = (0..n)
            .filter(|&s| s != me)
            .map(|s| sizes[s])
            .min()
            .unwrap_or(u8::MAX);
        Scorer {
            rules,
            on_turn: to_act == Some(me as Seat),
            hand,
            suits,
            pressure: (sizes[next] == fewest).then(|| 40 + 10 * (5 - fewest.min(5) as i32)),
        }
    }

    /// The reading for the observing seat.
    fn from_observation(obs: &Observation, rules: &'r Rules) -> Option<Scorer<'r>> {
        let me = obs.viewer?;
        Some(Scorer::new(
            rules,
            me,
            obs.to_act,
            obs.hand,
            obs.clockwise,
            &obs.hand_sizes,
        ))
    }

    /// The reading for `seat` in a full game (a playout), as its observation would give it.
    fn from_game(game: &Game, seat: Seat) -> Scorer<'_> {
        let mut sizes = [0; MAX_SEATS];
        for (s, size) in sizes.iter_mut().enumerate().take(game.seats() as usize) {
            *size = game.hand(s as Seat).len() as u8;
        }
        Scorer::new(
            game.rules(),
            seat,
            game.to_act(),
            *game.hand(seat),
            game.clockwise(),
            &sizes,
        )
    }

    /// How much the heuristic likes an action (higher is better).
    fn score(&self, action: &Action) -> i32 {
        let rules = self.rules;
        match *action {
            Action::Challenge | Action::Announce(_) if !self.on_turn => 1000,
            Action::Play { card, suit, call } => {
                let jack = card.rank() == Rank::Jack;
                let mut s = 100 + 2 * rules.value(card.rank()) as i32;
                if jack {
                    s -= 70; // keep jacks for when they are needed
                }
                // Against the seat closest to going out: 7s and skips.
                if matches!(rules.effect(card.rank()), Effect::DrawTwo | Effect::Skip) {
                    s += self.pressure.unwrap_or(0);
                }
                // Keep a hand that follows: prefer leaving cards of the suit we hold most.
                let kept = |su: Suit| {
                    self.suits[su.index() as usize] - i32::from(!jack && card.suit() == su)
                };
                s += match suit {
                    Some(named) => 5 * kept(named),
                    None => 2 * kept(card.suit()),
                };
                // romanian-32: MAU_MAU exactly when the card kept is a J.
                if self.hand.len() == 2 && rules.profile == ProfileId::Romanian32 {
                    let kept_jack = self.hand.distinct() & !card.bit() & !Rank::Jack.mask() == 0;
                    s += match (call, kept_jack) {
                        (Call::MauMau, true) | (Call::Mau, false) => 5,
                        _ => -5,
                    };
                }
                s
            }
            Action::DeclareSuit(su) => self.suits[su.index() as usize],
            Action::Draw => 0,
            Action::Pass => -5,
            Action::Announce(_) => -1, // PLAY with the MAU-MAU call is listed too
            Action::Challenge => 1000,
        }
    }

    /// The best-scored action of `legal` (not empty); `rng` breaks ties.
    fn choose(&self, legal: &[Action], rng: &mut SplitMix) -> Action {
        let mut best = legal[0];
        let mut best_score = i32::MIN;
        for a in legal {
            let score = self.score(a) * 4 + rng.below(4) as i32;
            if score > best_score {
                best = *a;
                best_score = score;
            }
        }
        best
    }
}

/// The heuristic's choice among the observation's legal actions.
fn best(obs: &Observation, rng: &mut SplitMix) -> Action {
    let Ok(rules) = obs.config.rules() else {
        return obs.legal[0];
    };
    match Scorer::from_observation(obs, &rules) {
        Some(scorer) => scorer.choose(&obs.legal, rng),
        // A spectator has nothing to prefer: every action scores the same, ties broken at random.
        None => {
            let mut best = (obs.legal[0], i32::MIN);
            for a in obs.legal.iter() {
                let score = rng.below(4) as i32;
                if score > best.1 {
                    best = (*a, score);
                }
            }
            best.0
        }
    }
}

impl Bot for HeuristicBot {
    fn name(&self) -> &str {
        "heuristic"
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        best(obs, &mut self.rng)
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        // Challenge every omission; cure its own at once.
        obs.legal
            .iter()
            .copied()
            .find(|a| matches!(a, Action::Challenge | Action::Announce(_)))
    }
}

// ----- the search bot ----------------------------------------------------------------------------

/// Experimental settings (temporary: read from `SEARCH_KNOBS`, e.g. `reward=2,explore=8`).
#[derive(Clone, Copy, Debug)]
struct Knobs {
    reward: u8,
    spread: f64,
    shape: f64,
    explore: usize,
    halving: bool,
    prior: f64,
    infer: u8,
    tries: u32,
}

impl Knobs {
    fn from_env() -> Knobs {
        let mut k = Knobs {
            reward: 2,
            spread: 1.0,
            shape: 0.0,
            explore: 8,
            halving: true,
            prior: 0.0,
            infer: 1,
            tries: 30,
        };
        if let Ok(v) = std::env::var("SEARCH_KNOBS") {
            for kv in v.split(',') {
                let mut it = kv.splitn(2, '=');
                let (Some(key), Some(val)) = (it.next(), it.next()) else {
                    continue;
                };
                let f: f64 = val.parse().unwrap_or(0.0);
                match key {
                    "reward" => k.reward = f as u8,
                    "spread" => k.spread = f,
                    "shape" => k.shape = f,
                    "explore" => k.explore = f as usize,
                    "halving" => k.halving = f != 0.0,
                    "prior" => k.prior = f,
                    "infer" => k.infer = f as u8,
                    "tries" => k.tries = f as u32,
                    _ => {}
                }
            }
        }
        k
    }
}

/// At most this many groups of cards are tracked per seat (older groups merge beyond it).
const MAX_GROUPS: usize = 6;

/// Some of a seat's hidden cards, and the cards none of them can be.
#[derive(Clone, Copy, Debug, Default)]
struct Group {
    cards: u8,
    avoid: u64,
    /// Received by a penalty draw during the seat's own turn: not playable in that turn in
    /// some profiles, so what the seat does this turn says nothing about them.
    shielded: bool,
}

/// What the bot has inferred about one other seat's hand: groups of cards (the cards it held
/// when it showed it had no match, the cards it drew later, …), each with the cards it avoids.
#[derive(Clone, Copy, Debug, Default)]
struct SeatCards {
    groups: [Group; MAX_GROUPS],
    len: usize,
}

impl SeatCards {
    fn total(&self) -> usize {
        self.groups[..self.len]
            .iter()
            .map(|g| g.cards as usize)
            .sum()
    }

    /// Cards that arrived unseen (dealt or drawn): a new group that avoids nothing.
    fn add(&mut self, cards: u8, shielded: bool) {
        if self.len == MAX_GROUPS {
            self.compact();
        }
        if self.len == MAX_GROUPS {
            // Merge the two oldest groups: their cards avoid what both avoided.
            let (a, b) = (self.groups[0], self.groups[1]);
            self.groups[0] = Group {
                cards: a.cards + b.cards,
                avoid: a.avoid & b.avoid,
                shielded: a.shielded || b.shielded,
            };
            self.groups.copy_within(2..self.len, 1);
            self.len -= 1;
        }
        self.groups[self.len] = Group {
            cards,
            avoid: 0,
            shielded,
        };
        self.len += 1;
    }

    /// Drops empty groups and merges groups that avoid the same cards.
    fn compact(&mut self) {
        let mut out = 0;
        for i in 0..self.len {
            let g = self.groups[i];
            if g.cards == 0 {
                continue;
            }
            if let Some(o) = self.groups[..out]
                .iter_mut()
                .find(|o| o.avoid == g.avoid && o.shielded == g.shielded)
            {
                o.cards += g.cards;
            } else {
                self.groups[out] = g;
                out += 1;
            }
        }
        self.len = out;
    }

    /// Every card held now (but the shielded ones) is none of `cards`.
    fn avoid_all(&mut self, cards: u64) {
        for g in self.groups[..self.len].iter_mut().filter(|g| !g.shielded) {
            g.avoid |= cards;
        }
    }

    /// The seat played `card`: it came from a group that may hold it (the most constrained
    /// one, which keeps the rest as free as possible). If none may, an inference was wrong
    /// (a voluntary draw, say): forget what was inferred about this seat.
    fn remove(&mut self, card: Card) {
        let pick = (0..self.len)
            .filter(|&i| self.groups[i].cards > 0 && self.groups[i].avoid & card.bit() == 0)
            .max_by_key(|&i| self.groups[i].avoid.count_ones());
        match pick {
            Some(i) => self.groups[i].cards -= 1,
            None => {
                let left = self.total().saturating_sub(1) as u8;
                self.reset(left);
            }
        }
    }

    /// Forgets everything: `cards` unknown cards.
    fn reset(&mut self, cards: u8) {
        self.len = 0;
        if cards > 0 {
            self.add(cards, false);
        }
    }
}

/// At most this many recent plays are remembered per seat (see [`Inference::plays`]).
const MAX_RECENT: usize = 4;

/// A play (or suit declaration) another seat made, with the public state it was made in: what
/// a sampled hand must explain if that seat plays like the heuristic.
#[derive(Clone, Copy, Debug)]
struct PlayRecord {
    action: Action,
    /// The cards that could be played then.
    matching: u64,
    /// Every seat's card count just before the play.
    sizes: [u8; MAX_SEATS],
    clockwise: bool,
}

impl PlayRecord {
    /// Whether the heuristic, holding `hand` (the hand before this play), would have made this
    /// play: no legal action scores higher (equal scores are a coin toss).
    fn explained_by(&self, rules: &Rules, seat: Seat, hand: Hand) -> bool {
        let scorer = Scorer::new(rules, seat, Some(seat), hand, self.clockwise, &self.sizes);
        let chosen = scorer.score(&self.action);
        match self.action {
            Action::DeclareSuit(_) => Suit::ALL
                .into_iter()
                .all(|su| scorer.score(&Action::DeclareSuit(su)) <= chosen),
            Action::Play { card, call, .. } => {
                let playable = hand.distinct() & self.matching;
                if playable & card.bit() == 0 {
                    return true; // the record does not fit this hand's shape: no evidence
                }
                let calls: &[Call] = if rules.call_rule == CallRule::Romanian && hand.len() == 2 {
                    &[Call::Mau, Call::MauMau]
                } else {
                    std::slice::from_ref(&call)
                };
                let mut set = playable;
                while set != 0 {
                    let bit = set.trailing_zeros() as u8;
                    set &= set - 1;
                    let other = Card::new(Rank::from_index(bit & 15), Suit::from_index(bit >> 4));
                    let suits: &[Option<Suit>] = if other.rank() == Rank::Jack {
                        &[
                            Some(Suit::Clubs),
                            Some(Suit::Diamonds),
                            Some(Suit::Hearts),
                            Some(Suit::Spades),
                        ]
                    } else {
                        &[None]
                    };
                    for &suit in suits {
                        for &call in calls {
                            let a = Action::Play {
                                card: other,
                                suit,
                                call,
                            };
                            if scorer.score(&a) > chosen {
                                return false;
                            }
                        }
                    }
                }
                true
            }
            _ => true,
        }
    }
}

/// What the search bot infers about hidden hands from the events it sees. From the rules: a
/// seat that draws instead of playing holds no card that matched at that time (where drawing
/// with a play in hand is not allowed, or where the bot trusts the others not to), a seat that
/// pays a debt of 7s holds no 7, a drawn card left after an automatic pass does not match. And,
/// modelling the other seats as the heuristic (as the playouts do), the plays each seat made
/// since it last drew, which a sampled hand must explain.
#[derive(Clone, Debug, Default)]
struct Inference {
    seats: [SeatCards; MAX_SEATS],
    /// Each seat's plays since it last received a card, oldest first.
    plays: [[Option<PlayRecord>; MAX_RECENT]; MAX_SEATS],
    /// Every seat's card count.
    sizes: [u8; MAX_SEATS],
    /// The top card of the discard pile, the named suit, the debt and the direction, as the
    /// events told them.
    top: Option<Card>,
    named: Option<Suit>,
    debt: u8,
    clockwise: bool,
    /// The seat whose turn it is.
    turn: Option<Seat>,
    /// The seat that made its 1-card draw in this turn.
    drew: Option<Seat>,
    /// The seat paying a debt now (its first debt card has been seen).
    paying: Option<Seat>,
    /// The rules, once a decision has shown them (events alone do not).
    rules: Option<Rules>,
    /// The bot's own seat.
    me: Option<Seat>,
    /// Whether to infer from draws in profiles where drawing is allowed while holding a play.
    trust_voluntary: bool,
}

impl Inference {
    /// The cards that could be played now.
    fn matching(&self) -> u64 {
        if self.debt > 0 {
            return Rank::Seven.mask();
        }
        let Some(top) = self.top else { return 0 };
        let suit = self.named.unwrap_or(top.suit()).mask();
        let mut m = suit | top.rank().mask();
        // A J is wild on every top but, in some rules, a 7; unknown rules: assume not.
        let jack_wild =
            top.rank() != Rank::Seven || self.rules.is_some_and(|r| r.jack_wild_on_paid_seven);
        if jack_wild {
            m |= Rank::Jack.mask();
        }
        m
    }

    /// Whether a draw says that the seat had no play (true when drawing with a play is not
    /// allowed, or when the bot trusts the other seats not to draw voluntarily).
    fn draws_speak(&self) -> bool {
        self.trust_voluntary || self.rules.is_none_or(|r| !r.voluntary_draw)
    }

    /// Remembers a play or declaration by another seat, made now.
    fn record(&mut self, seat: Seat, action: Action) {
        let Some(rules) = self.rules else { return };
        // After a draw, only the drawn card could follow in some rules: no choice, no evidence.
        if self.drew == Some(seat) && rules.play_after_draw == PlayAfterDraw::DrawnOnly {
            return;
        }
        let rec = PlayRecord {
            action,
            matching: self.matching(),
            sizes: self.sizes,
            clockwise: self.clockwise,
        };
        let plays = &mut self.plays[seat as usize];
        if plays[MAX_RECENT - 1].is_some() {
            plays.rotate_left(1);
            plays[MAX_RECENT - 1] = None;
        }
        if let Some(slot) = plays.iter_mut().find(|p| p.is_none()) {
            *slot = Some(rec);
        }
    }

    fn observe(&mut self, event: &Event) {
        let me = self.me;
        match *event {
            Event::RoundStarted { .. } => {
                self.seats = Default::default();
                self.plays = Default::default();
                self.sizes = [0; MAX_SEATS];
                self.top = None;
                self.named = None;
                self.debt = 0;
                self.clockwise = true;
                self.turn = None;
                self.drew = None;
                self.paying = None;
            }
            Event::UpCard { card } => {
                self.top = Some(card);
                self.named = None;
                let up_plays = self.rules.is_some_and(|r| {
                    r.up_card != UpCardMode::NoEffect && r.effect(card.rank()) == Effect::DrawTwo
                });
                self.debt = if up_plays { 2 } else { 0 };
            }
            Event::SuitDeclared { seat, suit } => {
                if Some(seat) != me {
                    self.record(seat, Action::DeclareSuit(suit));
                }
                self.named = Some(suit);
            }
            Event::DirectionChanged { clockwise } => self.clockwise = clockwise,
            Event::TurnStarted { seat } => {
                self.turn = Some(seat);
                self.drew = None;
                self.paying = None;
                for s in self.seats.iter_mut() {
                    for g in s.groups.iter_mut() {
                        g.shielded = false;
                    }
                }
            }
            Event::Played {
                seat,
                card,
                suit,
                call,
            } => {
                if Some(seat) != me {
                    self.record(seat, Action::Play { card, suit, call });
                    self.seats[seat as usize].remove(card);
                }
                let s = &mut self.sizes[seat as usize];
                *s = s.saturating_sub(1);
                self.top = Some(card);
                self.named = suit;
                let seven = self
                    .rules
                    .map_or(card.rank() == Rank::Seven, |r| r.effect(card.rank()) == Effect::DrawTwo);
                self.debt = if seven { self.debt + 2 } else { 0 };
            }
            Event::Drew { seat, cause, .. } => {
                self.sizes[seat as usize] += 1;
                if cause == DrawCause::Debt {
                    self.debt = 0;
                }
                if Some(seat) == me {
                    return;
                }
                // A new unknown card: earlier plays no longer tell what the hand was.
                self.plays[seat as usize] = Default::default();
                let turn = self.turn == Some(seat);
                let speaks = self.draws_speak();
                let matching = self.matching();
                let new_debt = cause == DrawCause::Debt && self.paying != Some(seat);
                let shield = turn && self.rules.is_none_or(|r| !r.penalty_cards_playable);
                let cards = &mut self.seats[seat as usize];
                match cause {
                    DrawCause::Deal => cards.add(1, false),
                    DrawCause::Turn => {
                        self.drew = Some(seat);
                        if turn && speaks {
                            cards.avoid_all(matching);
                        }
                        cards.add(1, false);
                    }
                    DrawCause::Debt => {
                        if new_debt {
                            self.paying = Some(seat);
                            if speaks {
                                cards.avoid_all(Rank::Seven.mask());
                            }
                        }
                        cards.add(1, false);
                    }
                    _ => cards.add(1, shield),
                }
            }
            Event::Passed {
                seat,
                automatic: true,
            } if Some(seat) != me => {
                // No play was permitted after the draw: the drawn card (the newest group) does
                // not match; where any card may follow a draw, no card in the hand does.
                let m = self.matching();
                let any = self
                    .rules
                    .is_some_and(|r| r.play_after_draw == PlayAfterDraw::AnyLegal);
                let cards = &mut self.seats[seat as usize];
                if any {
                    cards.avoid_all(m);
                } else if cards.len > 0 {
                    let last = cards.len - 1;
                    cards.groups[last].avoid |= m;
                }
            }
            _ => {}
        }
    }

    /// Brings the inference in line with an observation: learns the rules and the bot's seat,
    /// takes the public state as it is, and forgets what it inferred about a seat whose card
    /// count disagrees (events missed).
    fn sync(&mut self, obs: &Observation, rules: &Rules) {
        self.rules = Some(*rules);
        self.me = obs.viewer;
        self.top = obs.discard.top();
        self.named = obs.named_suit;
        self.debt = obs.debt;
        self.clockwise = obs.clockwise;
        for s in 0..rules.seats as usize {
            let size = obs.hand_sizes[s];
            if self.seats[s].total() != size as usize || self.sizes[s] != size {
                self.seats[s].reset(size);
                self.plays[s] = Default::default();
            }
        }
        self.sizes = obs.hand_sizes;
    }

    /// Whether `hand`, a sample of `seat`'s hand now, explains the plays the seat made since it
    /// last received a card: walking back from the newest, each played card goes back in the
    /// hand and the heuristic must have chosen that play.
    fn explains(&self, rules: &Rules, seat: Seat, mut hand: Hand) -> bool {
        for rec in self.plays[seat as usize].iter().rev().flatten() {
            if let Action::Play { card, .. } = rec.action {
                hand.insert(card);
            }
            if !rec.explained_by(rules, seat, hand) {
                return false;
            }
        }
        true
    }
}

/// Deals the cards a seat cannot see, for one decision's samples: each other seat gets a hand
/// that honours what was inferred about it (its constrained groups take cards they may hold,
/// most restrictive first) and, with a few tries per seat, explains its recent plays.
struct Sampler<'a> {
    inference: &'a Inference,
    rules: Rules,
    /// The other seats and their card counts.
    seats: Vec<(Seat, u8)>,
    /// Every card the viewer cannot see (copies repeated).
    unseen: Vec<Card>,
    /// The cards not dealt yet, in random order.
    pool: Vec<Card>,
    /// Hands dealt for the current sample.
    hands: Vec<(Seat, Hand)>,
    /// Deals per seat to find a hand that explains its recent plays (1: plays are ignored).
    tries: u32,
    /// Whether to honour the draw constraints.
    groups: bool,
    /// Seats whose plays are still taken as the heuristic's.
    judged: [bool; MAX_SEATS],
    /// Per seat: samples dealt, and samples whose hand did not explain its plays.
    record: [(u32, u32); MAX_SEATS],
}

/// After this many samples, a seat whose hands mostly failed to explain its plays is no longer
/// taken to play like the heuristic.
const JUDGE_AFTER: u32 = 16;

impl<'a> Sampler<'a> {
    fn new(obs: &Observation, inference: &'a Inference, rules: Rules, knobs: &Knobs) -> Sampler<'a> {
        let mut seen = obs.hand;
        for &c in obs.discard.as_slice() {
            seen.insert(c);
        }
        let mut unseen = Vec::with_capacity(rules.deck_len());
        for suit in Suit::ALL {
            for rank in Rank::ALL {
                let c = Card::new(rank, suit);
                if c.bit() & rules.deck_mask() != 0 {
                    for _ in seen.count(c)..rules.copies {
                        unseen.push(c);
                    }
                }
            }
        }
        let seats = (0..rules.seats)
            .filter(|&s| Some(s) != obs.viewer)
            .map(|s| (s, obs.hand_sizes[s as usize]))
            .collect();
        Sampler {
            inference,
            rules,
            seats,
            pool: Vec::with_capacity(unseen.len()),
            unseen,
            hands: Vec::with_capacity(MAX_SEATS),
            tries: knobs.tries.max(1),
            groups: knobs.infer >= 1,
            judged: std::array::from_fn(|s| {
                knobs.infer >= 3 && inference.plays[s].iter().any(Option::is_some)
            }),
            record: [(0, 0); MAX_SEATS],
        }
    }

    /// Shuffles the pool (Fisher–Yates).
    fn shuffle(&mut self, rng: &mut SplitMix) {
        for i in (1..self.pool.len()).rev() {
            self.pool.swap(i, rng.below(i + 1));
        }
    }

    /// Takes up to `n` cards outside `avoid` from the pool into `hand`.
    fn take(&mut self, hand: &mut Hand, mut n: u8, avoid: u64) {
        let mut i = self.pool.len();
        while n > 0 && i > 0 {
            i -= 1;
            if self.pool[i].bit() & avoid == 0 {
                hand.insert(self.pool.swap_remove(i));
                n -= 1;
                i = i.min(self.pool.len());
            }
        }
    }

    /// Deals `seat`'s constrained groups, most restrictive first.
    fn deal_groups(&mut self, seat: Seat, hand: &mut Hand) {
        if !self.groups {
            return;
        }
        let cards = self.inference.seats[seat as usize];
        let mut groups = cards.groups;
        let groups = &mut groups[..cards.len];
        groups.sort_by_key(|g| std::cmp::Reverse(g.avoid.count_ones()));
        for g in groups.iter().filter(|g| g.avoid != 0) {
            self.take(hand, g.cards, g.avoid);
        }
    }

    /// Fills `hand` up to `size` from the pool.
    fn fill(&mut self, hand: &mut Hand, size: u8) {
        let missing = (size as usize).saturating_sub(hand.len()) as u8;
        self.take(hand, missing, 0);
    }

    /// One sample: a full game consistent with `view` and the inferences.
    fn sample(&mut self, view: &Observation, rng: &mut SplitMix) -> Game {
        self.pool.clone_from(&self.unseen);
        self.shuffle(rng);
        self.hands.clear();
        // Constrained cards first, for every seat, so free cards cannot use up what they need.
        for i in 0..self.seats.len() {
            let mut hand = Hand::EMPTY;
            self.deal_groups(self.seats[i].0, &mut hand);
            self.hands.push((self.seats[i].0, hand));
        }
        for i in 0..self.seats.len() {
            let mut hand = self.hands[i].1;
            self.fill(&mut hand, self.seats[i].1);
            self.hands[i].1 = hand;
        }
        // A seat whose hand does not explain its recent plays is dealt again, a few times. A
        // seat that seldom gets a hand that does within the tries is not playing like the
        // heuristic: its plays are then ignored for the rest of the decision.
        for i in 0..self.seats.len() {
            let (seat, size) = self.seats[i];
            if !self.judged[seat as usize] {
                continue;
            }
            let mut explained = false;
            for t in 0..self.tries {
                if self.inference.explains(&self.rules, seat, self.hands[i].1) {
                    explained = true;
                    break;
                }
                if t + 1 == self.tries {
                    break;
                }
                // Back into the pool, each card at a random place, and deal again.
                for c in self.hands[i].1.iter() {
                    self.pool.push(c);
                    let last = self.pool.len() - 1;
                    self.pool.swap(last, rng.below(last + 1));
                }
                let mut hand = Hand::EMPTY;
                self.deal_groups(seat, &mut hand);
                self.fill(&mut hand, size);
                self.hands[i].1 = hand;
            }
            let record = &mut self.record[seat as usize];
            record.0 += 1;
            record.1 += u32::from(!explained);
            if record.0 >= JUDGE_AFTER && record.1 * 2 > record.0 {
                self.judged[seat as usize] = false;
            }
        }
        view.determinize_with_hands(rng.next_u64(), &self.hands)
    }
}

/// Information-set Monte Carlo search. For each decision it samples the hidden cards
/// consistently with what its seat has seen and inferred ([`Observation::determinize_constrained`]:
/// a seat that drew instead of playing held no matching card), plays every candidate action
/// in each sample and the round out with the heuristic as everyone's playout policy, and scores
/// the round's end by the chance it leaves of winning the match. The same samples and playout
/// generators serve every candidate (common random numbers), so candidates are compared on
/// equal terms; successive halving drops the worse half of the candidates in rounds and gives
/// the budget to the rest. Deterministic for a fixed seed and budget.
#[derive(Clone, Debug)]
pub struct SearchBot {
    rng: SplitMix,
    /// Playouts per decision (the budget is a count, never a time).
    pub iterations: u32,
    inference: Inference,
    knobs: Knobs,
}

impl SearchBot {
    /// Default playouts per decision.
    pub const DEFAULT_ITERATIONS: u32 = 300;

    /// A search bot with the default budget.
    pub fn new(seed: u64) -> SearchBot {
        SearchBot::with_iterations(seed, SearchBot::DEFAULT_ITERATIONS)
    }

    /// A search bot with `iterations` playouts per decision.
    pub fn with_iterations(seed: u64, iterations: u32) -> SearchBot {
        let knobs = Knobs::from_env();
        SearchBot {
            rng: SplitMix::new(seed),
            iterations: iterations.max(1),
            inference: Inference {
                trust_voluntary: knobs.infer >= 2,
                ..Inference::default()
            },
            knobs,
        }
    }
}

/// Playouts stop after this many actions (a round this long is scored as it stands).
const MAX_PLAYOUT_STEPS: u32 = 500;

/// The heuristic's move for the seat to act, found without listing the legal actions: the
/// heuristic never draws while it can play and never passes after a draw that left it a play,
/// so it plays its best-scored playable card, with the call the rules want, or draws. The same
/// choice as [`Scorer::choose`] over the legal actions, ties broken alike. `None` when the
/// match is over.
fn heuristic_move(game: &Game, seat: Seat, rng: &mut SplitMix) -> Option<Action> {
    let phase = game.phase();
    if phase == Phase::Over {
        return None;
    }
    let scorer = Scorer::from_game(game, seat);
    let mut best = None;
    let mut best_score = i32::MIN;
    let mut consider = |a: Action| {
        let score = scorer.score(&a) * 4 + rng.below(4) as i32;
        if score > best_score {
            best = Some(a);
            best_score = score;
        }
    };
    if phase == Phase::AwaitSuit {
        for suit in Suit::ALL {
            consider(Action::DeclareSuit(suit));
        }
        return best;
    }
    let playable = game.playable();
    if playable == 0 {
        return Some(if phase == Phase::AfterDraw {
            Action::Pass
        } else {
            Action::Draw
        });
    }
    let left = game.hand(seat).len().saturating_sub(1);
    let rules = game.rules();
    let (call, alternative) = match rules.call_rule {
        CallRule::LastCards if left == 1 => (Call::Mau, None),
        CallRule::LastCards if left == 0 => (Call::MauMau, None),
        CallRule::Romanian if left == 1 => (Call::Mau, Some(Call::MauMau)),
        CallRule::Announce if left == 1 && phase != Phase::Announced => (Call::MauMau, None),
        _ => (Call::None, None),
    };
    let mut set = playable;
    while set != 0 {
        let bit = set.trailing_zeros() as u8;
        set &= set - 1;
        let card = Card::new(Rank::from_index(bit & 15), Suit::from_index(bit >> 4));
        for call in std::iter::once(call).chain(alternative) {
            if card.rank() == Rank::Jack {
                for suit in Suit::ALL {
                    consider(Action::Play {
                        card,
                        suit: Some(suit),
                        call,
                    });
                }
            } else {
                consider(Action::Play {
                    card,
                    suit: None,
                    call,
                });
            }
        }
    }
    best
}

/// Plays the round of `game` out, every seat following the heuristic; stops at the end of the
/// round (the caller's game ends the match there, so no new round is dealt).
fn playout(game: &mut Game, rng: &mut SplitMix, list: &mut ActionList) {
    let round = game.round();
    for _ in 0..MAX_PLAYOUT_STEPS {
        if game.round() != round {
            return;
        }
        let Some(seat) = game.to_act() else { return };
        let fast = heuristic_move(game, seat, rng);
        if fast.is_some_and(|a| game.apply_with(seat, a, &mut ()).is_ok()) {
            continue;
        }
        // Not a position the shortcut knows: choose among the listed legal actions.
        game.legal_actions_into(seat, list);
        if list.is_empty() {
            return;
        }
        let action = Scorer::from_game(game, seat).choose(list, rng);
        if game.apply_with(seat, action, &mut ()).is_err() {
            return;
        }
    }
}

/// A seat's standing in the match before a sample's round: totals and rounds won.
#[derive(Clone, Copy)]
struct Standing {
    round: u16,
    totals: [i32; MAX_SEATS],
    won: [u16; MAX_SEATS],
}

impl Standing {
    fn of(game: &Game) -> Standing {
        let mut s = Standing {
            round: game.round(),
            totals: [0; MAX_SEATS],
            won: [0; MAX_SEATS],
        };
        s.totals[..game.totals().len()].copy_from_slice(game.totals());
        s.won[..game.rounds_won().len()].copy_from_slice(game.rounds_won());
        s
    }
}

/// How good the end of the round played in `game` is for `me`, from 0 to 1: the estimated
/// chance of winning the match (exact when the match is over).
fn reward(knobs: &Knobs, rules: &Rules, me: Seat, before: &Standing, game: &Game) -> f64 {
    let n = rules.seats as usize;
    let me = me as usize;
    let mut totals = [0i32; MAX_SEATS];
    let mut winner = None;
    let over;
    if game.round() != before.round || game.phase() == Phase::Over {
        totals[..n].copy_from_slice(&game.totals()[..n]);
        winner = (0..n).find(|&s| game.rounds_won()[s] > before.won[s]);
        // The sample's match stops at this round whatever the rules say (see `decide`): was
        // it really the last?
        over = before.round >= rules.max_rounds
            || rules
                .target
                .is_none_or(|t| totals[..n].iter().any(|&x| x >= i32::from(t)));
    } else {
        // Unfinished: score the hands as they stand, as a blocked round would.
        totals = before.totals;
        if rules.scoring == Scoring::Penalty {
            for (s, t) in totals.iter_mut().enumerate().take(n) {
                *t += maumau_engine::outcome::hand_value(rules, game.hand(s as Seat));
            }
        }
        over = false;
    }
    let mut points = [0i32; MAX_SEATS];
    for s in 0..n {
        points[s] = totals[s] - before.totals[s];
    }
    if knobs.reward == 0 {
        let end = winner.map_or(RoundEnd::Blocked, |w| RoundEnd::Out(w as Seat));
        return round_reward(rules, me as Seat, end, &points);
    }
    // Higher is better, in points.
    let sign = if rules.scoring == Scoring::Penalty {
        -1.0
    } else {
        1.0
    };
    let key = |s: usize| sign * totals[s] as f64;
    let others = (n - 1) as f64;
    let shaped = {
        let mine = sign * points[me] as f64;
        let theirs: f64 = (0..n)
            .filter(|&s| s != me)
            .map(|s| sign * points[s] as f64)
            .sum();
        (mine - theirs / others) / 100.0
    };
    if knobs.reward == 1 {
        return 0.5 + shaped + if winner == Some(me) { 0.25 } else { 0.0 };
    }
    let p = if over {
        let best = (0..n).map(key).fold(f64::MIN, f64::max);
        if key(me) < best {
            0.0
        } else {
            1.0 / (0..n).filter(|&s| key(s) == best).count() as f64
        }
    } else {
        // How far the match still has to go, and so how much the totals can still move.
        let unit = if rules.scoring == Scoring::Penalty {
            20.0
        } else {
            60.0
        };
        let target = rules.target.map_or(100.0, f64::from);
        let lead = (0..n).map(|s| totals[s]).max().unwrap_or(0) as f64;
        let spread = knobs.spread * ((target - lead).max(unit) * unit).sqrt();
        (0..n)
            .filter(|&s| s != me)
            .map(|s| 1.0 / (1.0 + (-1.7 * (key(me) - key(s)) / spread).exp()))
            .product()
    };
    p + knobs.shape * shaped
}

/// How good the end of a round is for `me`, about 0 (bad) to 1 (won).
fn round_reward(rules: &Rules, me: u8, end: RoundEnd, points: &[i32]) -> f64 {
    let won = end == RoundEnd::Out(me);
    match rules.scoring {
        Scoring::Penalty => {
            let mine = points[me as usize] as f64;
            (if won { 1.0 } else { 0.0 }) + 0.5 - (mine / 120.0).min(0.5)
        }
        Scoring::Positive => {
            if won {
                1.0 + (points[me as usize] as f64 / 200.0).min(0.5)
            } else {
                let theirs: i32 = points.iter().sum();
                0.5 - (theirs as f64 / 200.0).min(0.5)
            }
        }
    }
}

/// The actions worth comparing: the legal ones, less those that are the same move said
/// differently (romanian-32: MAU_MAU is never worse than MAU; brazilian: ANNOUNCE then PLAY is
/// the PLAY with the MAU-MAU call).
fn candidates(legal: &[Action]) -> Vec<Action> {
    let plays_with_maumau = legal.iter().any(|a| {
        matches!(
            a,
            Action::Play {
                call: Call::MauMau,
                ..
            }
        )
    });
    legal
        .iter()
        .copied()
        .filter(|a| match *a {
            Action::Play {
                card,
                suit,
                call: Call::Mau,
            } => !legal.contains(&Action::Play {
                card,
                suit,
                call: Call::MauMau,
            }),
            Action::Announce(Call::MauMau) => !plays_with_maumau,
            _ => true,
        })
        .collect()
}

/// The candidate that stands for `action` (see [`candidates`]).
fn canonical(action: Action, candidates: &[Action]) -> Option<usize> {
    let same = |a: &Action| match (*a, action) {
        (
            Action::Play {
                card: c1, suit: s1, ..
            },
            Action::Play {
                card: c2, suit: s2, ..
            },
        ) => c1 == c2 && s1 == s2,
        (a, b) => a == b,
    };
    candidates.iter().position(same)
}

impl Bot for SearchBot {
    fn name(&self) -> &str {
        "search"
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        let legal: ActionList = obs.legal;
        if legal.len() == 1 {
            return legal[0];
        }
        let (Some(me), Ok(rules)) = (obs.viewer, obs.config.rules()) else {
            return legal[0];
        };
        self.inference.sync(obs, &rules);
        let heuristic = best(obs, &mut self.rng);
        let cands = candidates(&legal);
        if cands.len() <= 1 {
            return cands.first().copied().unwrap_or(heuristic);
        }
        let prior = canonical(heuristic, &cands);
        // Samples end the match with this round: no new round is dealt after a playout.
        let mut view = *obs;
        view.config.max_rounds = obs.round;
        let mut sampler = Sampler::new(obs, &self.inference, rules, &self.knobs);
        let k = cands.len();
        let budget = self.iterations as usize;
        // Successive halving: ceil(log2 k) rounds, each with an equal share of the budget.
        let rounds = if self.knobs.halving {
            (usize::BITS - (k - 1).leading_zeros()).max(1) as usize
        } else {
            1
        };
        let base = self.rng.next_u64();
        let mut alive: Vec<usize> = (0..k).collect();
        let mut sum = vec![0f64; k];
        let mut samples = 0u64;
        let mut list = ActionList::default();
        for round in 0..rounds {
            let per = (budget / (rounds * alive.len())).max(1) as u64;
            for j in samples..samples + per {
                let mut seeds = SplitMix::new(base ^ j.wrapping_mul(0xD1B5_4A32_D192_ED03));
                let sample = sampler.sample(&view, &mut seeds);
                let before = Standing::of(&sample);
                let playout_seed = seeds.next_u64();
                for &a in &alive {
                    let mut game = sample;
                    if game.apply_with(me, cands[a], &mut ()).is_err() {
                        continue;
                    }
                    playout(&mut game, &mut SplitMix::new(playout_seed), &mut list);
                    sum[a] += reward(&self.knobs, &rules, me, &before, &game);
                }
            }
            samples += per;
            // Every live candidate has met the same samples: compare sums, keep the better half.
            let bonus = self.knobs.prior * samples as f64;
            let value = |i: usize| sum[i] + if Some(i) == prior { bonus } else { 0.0 };
            alive.sort_by(|&a, &b| value(b).total_cmp(&value(a)).then(a.cmp(&b)));
            if round + 1 < rounds {
                alive.truncate(alive.len().div_ceil(2));
            }
        }
        if std::env::var("SEARCH_DEBUG").is_ok() {
            let per: Vec<String> = (0..k)
                .map(|i| format!("{}{}={:.3}", cands[i], if Some(i) == prior { "*" } else { "" }, sum[i] / samples as f64))
                .collect();
            eprintln!("hand {} -> {} | {}", obs.hand.len(), cands[alive[0]], per.join(" "));
        }
        cands[alive[0]]
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        obs.legal
            .iter()
            .copied()
            .find(|a| matches!(a, Action::Challenge | Action::Announce(_)))
    }

    fn on_event(&mut self, event: &Event) {
        self.inference.observe(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play_match;
    use maumau_engine::{CallsMode, MatchConfig};

    fn play(kinds: &[BotKind], profile: ProfileId, seed: u64) -> maumau_engine::MatchResult {
        let config = MatchConfig::new(profile, kinds.len() as u8);
        let mut game = Game::new(config, seed).expect("valid");
        let mut bots: Vec<Box<dyn Bot>> = kinds
            .iter()
            .enumerate()
            .map(|(i, k)| k.build(seed + i as u64))
            .collect();
        play_match(&mut game, &mut bots).expect("a finished match")
    }

    #[test]
    fn every_bot_finishes_matches_of_every_profile() {
        for profile in ProfileId::ALL {
            let kinds = if profile == ProfileId::Brazilian {
                vec![
                    BotKind::Random,
                    BotKind::Heuristic,
                    BotKind::Search,
                    BotKind::Random,
                ]
            } else {
                vec![BotKind::Random, BotKind::Heuristic, BotKind::Search]
            };
            let r = play(&kinds, profile, 3);
            assert!(r.winners().count() >= 1, "{profile}");
        }
    }

    #[test]
    fn bots_are_deterministic_for_a_seed() {
        let kinds = [BotKind::Search, BotKind::Heuristic, BotKind::Random];
        assert_eq!(
            play(&kinds, ProfileId::Classic, 11),
            play(&kinds, ProfileId::Classic, 11)
        );
    }

    #[test]
    fn heuristic_beats_random_over_many_games() {
        let mut heuristic_first = 0;
        let games = 40;
        for seed in 0..games {
            // Seats swap every game so neither kind keeps a position.
            let kinds = if seed % 2 == 0 {
                [BotKind::Heuristic, BotKind::Random]
            } else {
                [BotKind::Random, BotKind::Heuristic]
            };
            let r = play(&kinds, ProfileId::Classic, seed);
            let h = if seed % 2 == 0 { 0 } else { 1 };
            if r.placings[h] == 1 && r.placings[1 - h] != 1 {
                heuristic_first += 1;
            }
        }
        assert!(
            heuristic_first > games / 2,
            "heuristic won {heuristic_first} of {games}"
        );
    }

    /// Seeds of heuristic self-play games, each profile at two seat counts, under both call
    /// settings: `f` sees every position, the seat to act, the events so far.
    fn heuristic_games(mut f: impl FnMut(&Game, Seat, &[Event])) {
        for profile in ProfileId::ALL {
            for (seats, calls) in [(2, CallsMode::Enforce), (4, CallsMode::Challenge)] {
                let seats = if profile == ProfileId::Brazilian { seats + 2 } else { seats };
                let config = MatchConfig {
                    calls,
                    ..MatchConfig::new(profile, seats)
                };
                let mut events = Vec::new();
                let mut game = Game::new_with(config, 7, &mut events).expect("valid");
                let mut bots: Vec<HeuristicBot> = (0..seats).map(|s| HeuristicBot::new(s as u64)).collect();
                for _ in 0..600 {
                    let Some(seat) = game.to_act() else { break };
                    f(&game, seat, &events);
                    let action = bots[seat as usize].decide(&game.observation(seat));
                    game.apply_with(seat, action, &mut events).expect("legal");
                }
            }
        }
    }

    #[test]
    fn the_playout_shortcut_makes_the_heuristics_choice() {
        let mut rng = SplitMix::new(1);
        heuristic_games(|game, seat, _| {
            let legal = game.legal_actions(seat);
            let fast = heuristic_move(game, seat, &mut rng).expect("a move");
            assert!(legal.contains(&fast), "{fast} is not legal");
            let scorer = Scorer::from_game(game, seat);
            let top = legal.iter().map(|a| scorer.score(a)).max();
            assert_eq!(Some(scorer.score(&fast)), top, "{fast} is not a best move");
            let obs = game.observation(seat);
            let rules = game.rules();
            let from_obs = Scorer::from_observation(&obs, rules).expect("a seat");
            for a in legal.iter() {
                assert_eq!(from_obs.score(a), scorer.score(a));
            }
        });
    }

    #[test]
    fn inferences_hold_for_the_real_hands() {
        // The heuristic never draws while it can play, so every inference must be true.
        let mut checked = 0;
        let mut refuted = 0;
        heuristic_games(|game, _, events| {
            let me = 0;
            let mut inference = Inference {
                rules: Some(*game.rules()),
                me: Some(me),
                trust_voluntary: true,
                ..Inference::default()
            };
            for e in events {
                inference.observe(&maumau_engine::event_for(e, Some(me)));
            }
            let rules = game.rules();
            let sample = game.observation(me).determinize(checked as u64);
            for s in 1..game.seats() {
                assert!(inference.explains(rules, s, *game.hand(s)), "seat {s}'s plays");
                refuted += usize::from(!inference.explains(rules, s, *sample.hand(s)));
            }
            for s in 1..game.seats() {
                let cards = &inference.seats[s as usize];
                let hand = game.hand(s);
                assert_eq!(cards.total(), hand.len(), "seat {s}");
                for g in &cards.groups[..cards.len] {
                    let fit = hand.iter().filter(|c| c.bit() & g.avoid == 0).count();
                    assert!(fit >= g.cards as usize, "seat {s}: {g:?} but holds {hand:?}");
                    checked += usize::from(g.avoid != 0);
                }
            }
        });
        assert!(checked > 100, "only {checked} constrained groups");
        // Plays say something: uniform samples often fail to explain them.
        assert!(refuted > 100, "only {refuted} samples refuted");
        eprintln!("refuted {refuted} checked {checked}");
    }

    #[test]
    fn samples_honour_what_was_inferred() {
        let config = MatchConfig::new(ProfileId::Classic, 3);
        let game = Game::new(config, 5).expect("valid");
        let obs = game.observation(0);
        let rules = *game.rules();
        let hearts = Suit::Hearts.mask() | Rank::Jack.mask();
        let mut inference = Inference::default();
        inference.sync(&obs, &rules);
        inference.seats[1].avoid_all(hearts);
        let knobs = Knobs::from_env();
        let mut sampler = Sampler::new(&obs, &inference, rules, &knobs);
        let mut rng = SplitMix::new(3);
        for _ in 0..50 {
            let sample = sampler.sample(&obs, &mut rng);
            assert_eq!(sample.observation(0), obs);
            assert!(sample.hand(1).iter().all(|c| c.bit() & hearts == 0));
        }
        // Listed hands are dealt as listed.
        let sample = obs.determinize(1);
        let pinned = obs.determinize_with_hands(2, &[(1, *sample.hand(1)), (0, Hand::EMPTY)]);
        assert_eq!(pinned.hand(1), sample.hand(1));
        assert_eq!(pinned.observation(0), obs);
        assert_eq!(obs.determinize_with_hands(9, &[]), obs.determinize(9));
    }

    #[test]
    fn search_is_deterministic_and_plays_legal_actions() {
        let config = MatchConfig::new(ProfileId::Romanian32, 3);
        let mut game = Game::new(config, 3).expect("valid");
        let mut a = SearchBot::with_iterations(4, 60);
        let mut b = SearchBot::with_iterations(4, 60);
        for _ in 0..40 {
            let Some(seat) = game.to_act() else { break };
            let obs = game.observation(seat);
            let action = a.decide(&obs);
            assert_eq!(action, b.decide(&obs));
            assert!(obs.legal.contains(&action));
            game.apply(seat, action).expect("legal");
        }
    }
}
