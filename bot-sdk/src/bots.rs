//! The reference bots: `random`, `heuristic` and `search`. Each is deterministic for its seed
//! (the search bot for its seed and iteration budget).

use std::fmt;
use std::str::FromStr;

use maumau_engine::outcome::MAX_SEATS;
use maumau_engine::profile::{Effect, Rules};
use maumau_engine::seed::SplitMix64;
use maumau_engine::{Action, Call, Game, Hand, Observation, ProfileId, Rank, Seat, Suit};

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

    #[test]
    fn bot_kinds_parse_their_names() {
        for kind in BotKind::ALL {
            assert_eq!(kind.name().parse::<BotKind>(), Ok(kind));
            assert_eq!(kind.build(1).name(), kind.name());
        }
        assert!("minimax".parse::<BotKind>().is_err());
    }
}
