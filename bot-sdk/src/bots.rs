//! The reference bots: `random`, `heuristic` and `search`. Each is deterministic for its seed
//! (the search bot for its seed and iteration budget).

use std::fmt;
use std::str::FromStr;

use maumau_engine::profile::{Effect, Rules, Scoring};
use maumau_engine::{Action, ActionList, Call, Event, Observation, Rank, RoundEnd, Suit};

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

/// How much the heuristic likes an action (higher is better).
pub(crate) fn heuristic_score(obs: &Observation, rules: &Rules, action: &Action) -> i32 {
    let Some(me) = obs.viewer else { return 0 };
    let suit_count = |suit: Suit, except: Option<maumau_engine::Card>| -> i32 {
        let mut n = obs
            .hand
            .iter()
            .filter(|c| c.suit() == suit && c.rank() != Rank::Jack)
            .count();
        if except.is_some_and(|e| e.suit() == suit && e.rank() != Rank::Jack) {
            n -= 1;
        }
        n as i32
    };
    match *action {
        Action::Challenge | Action::Announce(_) if obs.to_act != Some(me) => 1000,
        Action::Play { card, suit, call } => {
            let mut s = 100 + 2 * rules.value(card.rank()) as i32;
            if card.rank() == Rank::Jack {
                s -= 70; // keep jacks for when they are needed
            }
            // Against the seat closest to going out: 7s and skips.
            let n = rules.seats as i32;
            let dir = if obs.clockwise { 1 } else { -1 };
            let next = (me as i32 + dir).rem_euclid(n) as usize;
            let fewest = (0..n as usize)
                .filter(|&s| s != me as usize)
                .map(|s| obs.hand_sizes[s])
                .min()
                .unwrap_or(u8::MAX);
            if matches!(rules.effect(card.rank()), Effect::DrawTwo | Effect::Skip)
                && obs.hand_sizes[next] == fewest
            {
                s += 40 + 10 * (5 - fewest.min(5) as i32);
            }
            // Keep a hand that follows: prefer leaving cards of the suit we hold most.
            if let Some(named) = suit {
                s += 5 * suit_count(named, Some(card));
            } else {
                s += 2 * suit_count(card.suit(), Some(card));
            }
            // romanian-32: MAU_MAU exactly when the card kept is a J.
            let left = obs.hand.len() - 1;
            if left == 1 && rules.profile == maumau_engine::ProfileId::Romanian32 {
                let kept_jack = obs
                    .hand
                    .iter()
                    .filter(|c| *c != card)
                    .all(|c| c.rank() == Rank::Jack);
                s += match (call, kept_jack) {
                    (Call::MauMau, true) | (Call::Mau, false) => 5,
                    _ => -5,
                };
            }
            s
        }
        Action::DeclareSuit(su) => suit_count(su, None),
        Action::Draw => 0,
        Action::Pass => -5,
        Action::Announce(_) => -1, // PLAY with the MAU-MAU call is listed too
        Action::Challenge => 1000,
    }
}

fn best(obs: &Observation, rng: &mut SplitMix) -> Action {
    let Ok(rules) = obs.config.rules() else {
        return obs.legal[0];
    };
    let mut best = obs.legal[0];
    let mut best_score = i32::MIN;
    for a in obs.legal.iter() {
        let score = heuristic_score(obs, &rules, a) * 4 + rng.below(4) as i32;
        if score > best_score {
            best = *a;
            best_score = score;
        }
    }
    best
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

/// Information-set Monte Carlo search: for each decision it samples hidden hands consistent
/// with what its seat has seen ([`Observation::determinize`]), tries each legal action in the
/// sample and plays the round out with a fast playout policy, choosing actions at the root by
/// UCB1; it then plays the most visited action. Deterministic for a fixed seed and budget.
#[derive(Clone, Debug)]
pub struct SearchBot {
    rng: SplitMix,
    /// Samples (determinizations, one playout each) per decision.
    pub iterations: u32,
    decisions: u64,
}

impl SearchBot {
    /// Default samples per decision: tens of milliseconds per decision on one core, far inside
    /// the server's default 2 s per decision.
    pub const DEFAULT_ITERATIONS: u32 = 300;

    /// A search bot with the default budget.
    pub fn new(seed: u64) -> SearchBot {
        SearchBot::with_iterations(seed, SearchBot::DEFAULT_ITERATIONS)
    }

    /// A search bot with `iterations` samples per decision.
    pub fn with_iterations(seed: u64, iterations: u32) -> SearchBot {
        SearchBot {
            rng: SplitMix::new(seed),
            iterations: iterations.max(1),
            decisions: 0,
        }
    }
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
        self.decisions += 1;
        let k = legal.len();
        let mut visits = vec![0u32; k];
        let mut total = vec![0f64; k];
        let mut list = ActionList::default();
        for it in 0..self.iterations {
            // UCB1 at the root; every action once first.
            let pick = if (it as usize) < k {
                it as usize
            } else {
                let ln = (it as f64).ln();
                (0..k)
                    .max_by(|&a, &b| {
                        let ucb = |i: usize| {
                            total[i] / visits[i] as f64 + (1.4 * ln / visits[i] as f64).sqrt()
                        };
                        ucb(a).total_cmp(&ucb(b))
                    })
                    .unwrap_or(0)
            };
            let mut game = obs.determinize(self.rng.next_u64());
            let outcome: std::cell::Cell<Option<(RoundEnd, [i32; 8])>> = std::cell::Cell::new(None);
            let mut sink = |e: &Event| {
                if let Event::RoundEnded(r) = e
                    && outcome.get().is_none()
                {
                    outcome.set(Some((r.end, r.points)));
                }
            };
            if game.apply_with(me, legal[pick], &mut sink).is_err() {
                continue;
            }
            // Playout: every seat plays the heuristic, with a random action one time in eight.
            let mut steps = 0;
            while outcome.get().is_none() && steps < 400 {
                let Some(seat) = game.to_act() else { break };
                let r = self.rng.next_u64();
                let action = if r & 7 == 0 {
                    game.legal_actions_into(seat, &mut list);
                    list[(r >> 8) as usize % list.len()]
                } else {
                    best(&game.observation(seat), &mut self.rng)
                };
                let _ = game.apply_with(seat, action, &mut sink);
                steps += 1;
            }
            let reward = match outcome.get() {
                Some((end, points)) => round_reward(&rules, me, end, &points),
                None => 0.5,
            };
            visits[pick] += 1;
            total[pick] += reward;
        }
        let best = (0..k)
            .max_by_key(|&i| (visits[i], std::cmp::Reverse(i)))
            .unwrap_or(0);
        legal[best]
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        obs.legal
            .iter()
            .copied()
            .find(|a| matches!(a, Action::Challenge | Action::Announce(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play_match;
    use maumau_engine::{Game, MatchConfig, ProfileId};

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
}
