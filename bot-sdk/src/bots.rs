//! The reference bots: `random`, `heuristic` and `search`. Each is deterministic for its seed
//! (the search bot for its seed and iteration budget).

use std::fmt;
use std::str::FromStr;

use maumau_engine::profile::{Effect, Rules};
use maumau_engine::seed::SplitMix64;
use maumau_engine::{Action, Call, Card, Game, Hand, Observation, ProfileId, Rank, Seat, Suit};

use crate::Bot;

mod search;
pub use search::SearchBot;

/// The engine's SplitMix64 ([`maumau_engine::seed`]) with a bounded draw: a tiny, fast, seeded
/// generator, so bots need no dependency and replay exactly.
#[derive(Clone, Debug)]
pub struct SplitMix(SplitMix64);

impl SplitMix {
    /// A generator from a seed.
    pub fn new(seed: u64) -> SplitMix {
        SplitMix(SplitMix64::new(seed))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }
}

/// The seed of the built-in bot at `seat` in a game dealt from `game_seed`: the first 8 bytes
/// (big-endian) of SHA-256("maumau bot seed" ‖ game seed ‖ seat, both as 8 big-endian bytes).
///
/// The one derivation for every place that seats built-in bots (the server's tables, the
/// tournament in process and over gRPC), so the same match seed plays the same game whoever seats
/// the bots. One-way on purpose: an external program may receive such a seed (`MAUMAU_SEED`)
/// before its game ends, and an invertible mix would hand it the game's seed and with it every
/// deal.
pub fn bot_seed(game_seed: u64, seat: usize) -> u64 {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(b"maumau bot seed");
    h.update(game_seed.to_be_bytes());
    h.update((seat as u64).to_be_bytes());
    let digest = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
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
///
/// It scores each legal action and plays the best, the seed breaking ties only:
///
/// - a play is worth 100, plus twice the card's value under the profile's scoring (every profile
///   scores the cards left in hand: the loser's penalty, or what the romanian-32 winner
///   collects, so shedding high cards always pays), less 70 for a J, plus a bonus for a 7 or a
///   skip when the next seat holds the fewest cards of the others (more the fewer it holds),
///   plus a little for each card kept of the suit it leads to (the named suit for a J);
/// - romanian-32: MAU_MAU exactly when the card kept is a J, MAU otherwise;
/// - a suit declaration is worth the cards held of that suit; a DRAW 0 (so it never draws while
///   it can play), a PASS -5 (so it plays a drawn card it can), a brazilian ANNOUNCE -1 (the PLAY
///   with the MAU-MAU call says the same);
/// - out of turn it challenges every omission and cures its own at once.
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

/// The part of the heuristic's score of a play that depends on the rules and the card alone,
/// for every card, worked out once per set of rules: the heuristic bot builds it per decision,
/// the search bot once per decision for all its playouts.
#[derive(Clone, Debug)]
struct CardScores {
    /// By a card's bit position (suit × 16 + rank): 100 plus twice the card's value, less 70
    /// for a J.
    base: [i32; 64],
    /// The cards that press the next seat: 7s and skips (their bonus is [`Scorer`]'s pressure).
    pressing: u64,
    /// The profile is romanian-32, whose call depends on the card kept.
    romanian: bool,
}

impl CardScores {
    fn new(rules: &Rules) -> CardScores {
        let mut base = [0; 64];
        let mut pressing = 0;
        for suit in Suit::ALL {
            for rank in Rank::ALL {
                let card = Card::new(rank, suit);
                let jack = rank == Rank::Jack;
                // Keep jacks for when they are needed.
                base[card.bit().trailing_zeros() as usize] =
                    100 + 2 * i32::from(rules.value(rank)) - if jack { 70 } else { 0 };
                if matches!(rules.effect(rank), Effect::DrawTwo | Effect::Skip) {
                    pressing |= card.bit();
                }
            }
        }
        CardScores {
            base,
            pressing,
            romanian: rules.profile == ProfileId::Romanian32,
        }
    }
}

/// The non-jack cards of `hand` per suit (copies counted), by [`Suit::index`]: the per-suit
/// population counts of its two card sets, added lane by lane (no `popcnt` needed).
#[inline]
fn suit_counts(hand: &Hand) -> [i32; 4] {
    const M1: u64 = 0x5555_5555_5555_5555;
    const M2: u64 = 0x3333_3333_3333_3333;
    const M4: u64 = 0x0F0F_0F0F_0F0F_0F0F;
    const M8: u64 = 0x00FF_00FF_00FF_00FF;
    // Each byte of the result: how many of that byte's bits are set (at most 8).
    let bytes = |x: u64| {
        let x = x - ((x >> 1) & M1);
        let x = (x & M2) + ((x >> 2) & M2);
        (x + (x >> 4)) & M4
    };
    let not_jack = !Rank::Jack.mask();
    let mut b = bytes(hand.distinct() & not_jack);
    if hand.twice() != 0 {
        b += bytes(hand.twice() & not_jack);
    }
    // Each suit's 16 bits: its count (at most 2 × 13).
    let lanes = (b + (b >> 8)) & M8;
    [0, 1, 2, 3].map(|s| ((lanes >> (16 * s)) & 0xFF) as i32)
}

/// The bonus for a 7 or a skip played by `me` when the next seat holds the fewest cards of the
/// others (more the fewer it holds); `size(s)` is seat `s`'s card count.
fn pressure(seats: u8, me: Seat, clockwise: bool, size: impl Fn(usize) -> u8) -> Option<i32> {
    let n = seats as usize;
    let me = me as usize;
    let next = match (clockwise, me) {
        (true, _) if me + 1 >= n => 0,
        (true, _) => me + 1,
        (false, 0) => n - 1,
        (false, _) => me - 1,
    };
    let fewest = (0..n)
        .filter(|&s| s != me)
        .map(&size)
        .min()
        .unwrap_or(u8::MAX);
    (size(next) == fewest).then(|| 40 + 10 * (5 - fewest.min(5) as i32))
}

/// The heuristic's reading of one seat's position, computed once so that scoring each legal
/// action is cheap. It is built from an observation (the heuristic bot) or straight from a game
/// (the search bot's playouts, which need no observation); both give the same scores.
struct Scorer<'c> {
    cards: &'c CardScores,
    /// True when the advised seat is the seat to act (otherwise it is offered out-of-turn
    /// actions only).
    on_turn: bool,
    hand: Hand,
    /// Non-jack cards held, per suit.
    suits: [i32; 4],
    /// The bonus for a 7 or a skip (see [`pressure`]); worked out only when one of the cards
    /// that may be scored is one.
    pressure: Option<i32>,
}

impl<'c> Scorer<'c> {
    /// The reading for seat `me`, given the seat to act and `me`'s hand, for scoring plays of
    /// the cards in `scored` (the hand, or what of it is playable now); `pressure` gives the
    /// bonus for a 7 or a skip, asked only when `scored` holds one.
    #[inline]
    fn new(
        cards: &'c CardScores,
        me: Seat,
        to_act: Option<Seat>,
        hand: Hand,
        scored: u64,
        pressure: impl FnOnce() -> Option<i32>,
    ) -> Scorer<'c> {
        Scorer {
            cards,
            on_turn: to_act == Some(me),
            hand,
            suits: suit_counts(&hand),
            pressure: if scored & cards.pressing != 0 {
                pressure()
            } else {
                None
            },
        }
    }

    /// The reading for the observing seat.
    fn from_observation(obs: &Observation, cards: &'c CardScores) -> Option<Scorer<'c>> {
        let me = obs.viewer?;
        let hand = obs.hand;
        Some(Scorer::new(
            cards,
            me,
            obs.to_act,
            hand,
            hand.distinct(),
            || pressure(obs.config.seats, me, obs.clockwise, |s| obs.hand_sizes[s]),
        ))
    }

    /// The reading for `seat` in a full game (a playout), as its observation would give it,
    /// for scoring plays of the cards in `scored`.
    #[inline]
    fn from_game(game: &Game, seat: Seat, cards: &'c CardScores, scored: u64) -> Scorer<'c> {
        Scorer::new(cards, seat, game.to_act(), *game.hand(seat), scored, || {
            pressure(game.seats(), seat, game.clockwise(), |s| {
                game.hand(s as Seat).len() as u8
            })
        })
    }

    /// How much the heuristic likes playing `card` (naming `suit` for a J) with `call`.
    fn play(&self, card: Card, suit: Option<Suit>, call: Call) -> i32 {
        let bit = card.bit();
        let jack = card.rank() == Rank::Jack;
        let mut s = self.cards.base[bit.trailing_zeros() as usize];
        // Against the seat closest to going out: 7s and skips.
        if self.cards.pressing & bit != 0 {
            s += self.pressure.unwrap_or(0);
        }
        // Keep a hand that follows: prefer leaving cards of the suit we hold most.
        let kept =
            |su: Suit| self.suits[su.index() as usize] - i32::from(!jack && card.suit() == su);
        s += match suit {
            Some(named) => 5 * kept(named),
            None => 2 * kept(card.suit()),
        };
        // romanian-32: MAU_MAU exactly when the card kept is a J.
        if self.hand.len() == 2 && self.cards.romanian {
            let kept_jack = self.hand.distinct() & !bit & !Rank::Jack.mask() == 0;
            s += match (call, kept_jack) {
                (Call::MauMau, true) | (Call::Mau, false) => 5,
                _ => -5,
            };
        }
        s
    }

    /// How much the heuristic likes declaring `suit` after a J.
    fn declare(&self, suit: Suit) -> i32 {
        self.suits[suit.index() as usize]
    }

    /// How much the heuristic likes an action (higher is better).
    fn score(&self, action: &Action) -> i32 {
        match *action {
            Action::Challenge | Action::Announce(_) if !self.on_turn => 1000,
            Action::Play { card, suit, call } => self.play(card, suit, call),
            Action::DeclareSuit(su) => self.declare(su),
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
    let cards = CardScores::new(&rules);
    match Scorer::from_observation(obs, &cards) {
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
        reactions(obs)
    }
}

/// The heuristic's out-of-turn answer: challenge every omission it sees, cure its own at once.
fn reactions(obs: &Observation) -> Option<Action> {
    obs.legal
        .iter()
        .copied()
        .find(|a| matches!(a, Action::Challenge | Action::Announce(_)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play_match;
    use maumau_engine::MatchConfig;

    fn play(kinds: &[BotKind], profile: ProfileId, seed: u64) -> maumau_engine::MatchResult {
        let config = MatchConfig::new(profile, kinds.len() as u8);
        let mut game = Game::new(config, seed).expect("valid");
        let mut bots: Vec<Box<dyn Bot>> = kinds
            .iter()
            .enumerate()
            .map(|(i, &k)| -> Box<dyn Bot> {
                let seed = seed + i as u64;
                match k {
                    // A small budget: tests run unoptimised.
                    BotKind::Search => Box::new(SearchBot::with_iterations(seed, 100)),
                    k => k.build(seed),
                }
            })
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
            let (kinds, h) = if seed % 2 == 0 {
                ([BotKind::Heuristic, BotKind::Random], 0)
            } else {
                ([BotKind::Random, BotKind::Heuristic], 1)
            };
            let r = play(&kinds, ProfileId::Classic, seed);
            if r.placings[h] == 1 && r.placings[1 - h] != 1 {
                heuristic_first += 1;
            }
        }
        assert!(
            heuristic_first > games / 2,
            "heuristic won {heuristic_first} of {games}"
        );
    }

    proptest::proptest! {
        #[test]
        fn suit_counts_count_the_non_jacks_of_each_suit(cards in proptest::collection::vec(0u8..52, 0..40)) {
            let mut hand = Hand::EMPTY;
            for &i in &cards {
                hand.insert(Card::from_index(i));
            }
            let mut want = [0; 4];
            for c in hand.iter().filter(|c| c.rank() != Rank::Jack) {
                want[c.suit().index() as usize] += 1;
            }
            proptest::prop_assert_eq!(suit_counts(&hand), want);
        }
    }

    #[test]
    fn bot_kinds_parse_their_names() {
        for kind in BotKind::ALL {
            assert_eq!(kind.name().parse::<BotKind>(), Ok(kind));
            assert_eq!(kind.build(1).name(), kind.name());
        }
        assert!("minimax".parse::<BotKind>().is_err());
    }
}
