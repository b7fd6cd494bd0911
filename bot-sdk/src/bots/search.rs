//! The `search` bot ([`SearchBot`]): information-set Monte Carlo search with the heuristic as
//! playout policy, and what it infers about hidden hands from the events it sees.

use std::time::{Duration, Instant};

use maumau_engine::outcome::{MAX_SEATS, hand_value};
use maumau_engine::profile::{Effect, PlayAfterDraw, Rules, Scoring};
use maumau_engine::{
    Action, Call, Card, DrawCause, Event, Game, Hand, Observation, Phase, Rank, Seat, Suit,
};

use super::{CardScores, HeuristicBot, Scorer, SplitMix, reactions};
use crate::Bot;

/// At most this many groups of cards are tracked per seat (older groups merge beyond it).
const MAX_GROUPS: usize = 6;

/// Some of a seat's hidden cards, and the cards none of them can be.
#[derive(Clone, Copy, Debug, Default)]
struct Group {
    cards: u8,
    avoid: u64,
    /// Received by a penalty draw during the seat's own turn: not playable in that turn in
    /// some profiles, so a failure to follow in that turn says nothing about them.
    shielded: bool,
}

/// What the bot has inferred about one other seat's hand.
#[derive(Clone, Copy, Debug, Default)]
struct SeatCards {
    groups: [Group; MAX_GROUPS],
    len: usize,
    /// The suit the seat named with its last card, while it has received and played nothing
    /// since: a seat names the suit it holds most.
    declared: Option<Suit>,
}

impl SeatCards {
    fn groups(&self) -> &[Group] {
        &self.groups[..self.len]
    }

    fn total(&self) -> usize {
        self.groups().iter().map(|g| g.cards as usize).sum()
    }

    /// A card arrived unseen (dealt or drawn): a new group of its own, so that what the seat
    /// does right after the draw can be said of that card alone.
    fn add(&mut self, shielded: bool) {
        self.declared = None;
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
            cards: 1,
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

    /// The seat played `card`: it came from the most constrained group that may hold it. If
    /// none may, an assumption was wrong: forget what was inferred about this seat.
    fn remove(&mut self, card: Card) {
        self.declared = None;
        let pick = (0..self.len)
            .filter(|&i| self.groups[i].cards > 0 && self.groups[i].avoid & card.bit() == 0)
            .max_by_key(|&i| self.groups[i].avoid.count_ones());
        match pick {
            Some(i) => self.groups[i].cards -= 1,
            None => self.reset(self.total().saturating_sub(1)),
        }
    }

    /// Forgets everything: `cards` unknown cards.
    fn reset(&mut self, cards: usize) {
        self.len = 0;
        self.declared = None;
        if cards > 0 {
            self.groups[0] = Group {
                cards: cards as u8,
                avoid: 0,
                shielded: false,
            };
            self.len = 1;
        }
    }
}

/// What the bot infers about hidden hands from the events it sees (see [`SearchBot`]).
#[derive(Clone, Debug, Default)]
struct Inference {
    seats: [SeatCards; MAX_SEATS],
    /// The top card of the discard pile and the named suit, as the events told them.
    top: Option<Card>,
    named: Option<Suit>,
    /// The seat whose turn it is.
    turn: Option<Seat>,
    /// The seat paying a debt now (its first debt card has been seen).
    paying: Option<Seat>,
    /// The seat that made its 1-card draw in this turn.
    drew: Option<Seat>,
    /// The rules, once a decision has shown them (events alone do not).
    rules: Option<Rules>,
    /// The bot's own seat.
    me: Option<Seat>,
    /// The events of this round seen before the rules were known, to be read once they are.
    early: Vec<Event>,
}

impl Inference {
    /// The cards that would have matched the top now, with no debt owed (the engine's rule,
    /// [`Rules::matching`]).
    fn matching(&self, rules: &Rules) -> u64 {
        self.top.map_or(0, |top| rules.matching(top, self.named, 0))
    }

    /// The cards a seat that played `card` in its turn would rather have shed, had it held
    /// them: the cards of the same suit worth more (the heuristic's choice), when the suit was
    /// the one to follow and nothing else bent the choice.
    fn higher(&self, rules: &Rules, seat: Seat, card: Card) -> u64 {
        let Some(top) = self.top else { return 0 };
        let follow = self.named.unwrap_or(top.suit());
        let pressing = |r: Rank| matches!(rules.effect(r), Effect::DrawTwo | Effect::Skip);
        let only_drawn =
            self.drew == Some(seat) && rules.play_after_draw == PlayAfterDraw::DrawnOnly;
        if self.turn != Some(seat)
            || card.suit() != follow
            || pressing(card.rank())
            || only_drawn
            || self.seats[seat as usize].total() <= 2
        {
            return 0;
        }
        let v = rules.value(card.rank());
        let mut out = 0;
        for rank in Rank::ALL {
            if rank != Rank::Jack && rules.value(rank) > v {
                out |= Card::new(rank, card.suit()).bit();
            }
        }
        out & rules.deck_mask()
    }

    fn observe(&mut self, event: &Event) {
        let Some(rules) = self.rules else {
            // What an event says depends on the rules: keep it until the first decision.
            if matches!(event, Event::RoundStarted { .. }) {
                self.early.clear();
            }
            self.early.push(*event);
            return;
        };
        match *event {
            Event::RoundStarted { .. } => {
                let (rules, me) = (self.rules, self.me);
                *self = Inference {
                    rules,
                    me,
                    ..Inference::default()
                };
            }
            Event::UpCard { card } => {
                self.top = Some(card);
                self.named = None;
            }
            Event::SuitDeclared { seat, suit } => {
                self.named = Some(suit);
                if Some(seat) != self.me {
                    self.seats[seat as usize].declared = Some(suit);
                }
            }
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
                seat, card, suit, ..
            } => {
                if Some(seat) != self.me {
                    // A J is kept for when nothing else follows: none of the seat's other
                    // cards matched the top.
                    let others = if card.rank() == Rank::Jack {
                        self.matching(&rules) & !Rank::Jack.mask()
                    } else {
                        self.higher(&rules, seat, card)
                    };
                    let cards = &mut self.seats[seat as usize];
                    cards.remove(card);
                    if others != 0 {
                        cards.avoid_all(others);
                    }
                    cards.declared = suit;
                }
                self.top = Some(card);
                self.named = suit;
            }
            Event::Drew { seat, cause, .. } if Some(seat) != self.me => {
                let shield = self.turn == Some(seat) && !rules.penalty_cards_playable;
                let matching = self.matching(&rules);
                if matches!(cause, DrawCause::Turn) {
                    self.drew = Some(seat);
                }
                let cards = &mut self.seats[seat as usize];
                match cause {
                    DrawCause::Deal => cards.add(false),
                    DrawCause::Turn => {
                        cards.avoid_all(matching);
                        cards.add(false);
                    }
                    DrawCause::Debt => {
                        if self.paying != Some(seat) {
                            self.paying = Some(seat);
                            cards.avoid_all(rules.debt_cards());
                        }
                        cards.add(false);
                    }
                    _ => cards.add(shield),
                }
            }
            Event::Passed {
                seat,
                automatic: true,
            } if Some(seat) != self.me => {
                // No play was permitted after the draw: the drawn card (the newest group) does
                // not match; where any card may follow a draw, no card in the hand does.
                let m = self.matching(&rules);
                let any = rules.play_after_draw == PlayAfterDraw::AnyLegal;
                let cards = &mut self.seats[seat as usize];
                if any {
                    cards.avoid_all(m);
                } else if let Some(g) = cards.groups[..cards.len].last_mut() {
                    g.avoid |= m;
                }
            }
            _ => {}
        }
    }

    /// Brings the inference in line with an observation: learns the rules and the bot's seat,
    /// takes the public state as it is, and forgets what it inferred about a seat whose card
    /// count disagrees (events were missed).
    fn sync(&mut self, obs: &Observation, rules: &Rules) {
        self.me = obs.viewer;
        if self.rules.is_none() {
            self.rules = Some(*rules);
            for e in std::mem::take(&mut self.early) {
                self.observe(&e);
            }
        }
        self.rules = Some(*rules);
        self.top = obs.discard.top();
        self.named = obs.named_suit;
        for (cards, &size) in self.seats.iter_mut().zip(&obs.hand_sizes) {
            if cards.total() != size as usize {
                cards.reset(size as usize);
            }
        }
    }
}

/// Deals the cards a seat cannot see, for one decision's samples: each other seat gets a hand
/// of its size that honours what was inferred about it, and the stock the rest, in random order.
struct Sampler {
    /// The other seats and their card counts.
    seats: Vec<(Seat, u8)>,
    /// The groups of cards inferred to avoid some cards, with their seats, most restrictive
    /// first: the same for every sample of the decision.
    constrained: Vec<(Seat, Group)>,
    /// Every card the viewer cannot see (copies repeated).
    unseen: Vec<Card>,
    /// The cards not dealt yet: what is left once the hands are dealt is the stock.
    pool: Vec<Card>,
    /// Per seat, the suit it named last (see [`SeatCards::declared`]).
    declared: [Option<Suit>; MAX_SEATS],
    /// The cards the last [`Sampler::take`] dealt.
    taken: Vec<Card>,
}

/// How many times a seat's free cards are dealt again to make the suit it named its longest.
const DECLARED_TRIES: usize = 8;

/// Random picks that [`Sampler::take`] tries before it lists the cards a group may take.
const PICK_TRIES: usize = 4;

impl Sampler {
    fn new(obs: &Observation, rules: &Rules, inference: &Inference) -> Sampler {
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
        let seats: Vec<(Seat, u8)> = (0..rules.seats)
            .filter(|&s| Some(s) != obs.viewer)
            .map(|s| (s, obs.hand_sizes[s as usize]))
            .collect();
        let mut constrained: Vec<(Seat, Group)> = seats
            .iter()
            .flat_map(|&(seat, _)| {
                inference.seats[seat as usize]
                    .groups()
                    .iter()
                    .filter(|g| g.avoid != 0 && g.cards > 0)
                    .map(move |g| (seat, *g))
            })
            .collect();
        constrained.sort_by_key(|(_, g)| std::cmp::Reverse(g.avoid.count_ones()));
        let mut declared = [None; MAX_SEATS];
        for (d, s) in declared.iter_mut().zip(&inference.seats) {
            *d = s.declared;
        }
        Sampler {
            seats,
            constrained,
            pool: Vec::with_capacity(unseen.len()),
            declared,
            taken: Vec::with_capacity(unseen.len()),
            unseen,
        }
    }

    /// Moves up to `n` cards outside `avoid` from the pool into `hand`, each drawn uniformly
    /// from the pool's cards outside `avoid`: a few random picks first, then (if they all
    /// missed) one among those listed.
    fn take(&mut self, hand: &mut Hand, n: u8, avoid: u64, rng: &mut SplitMix) {
        self.taken.clear();
        for _ in 0..n {
            let len = self.pool.len();
            if len == 0 {
                return;
            }
            let fits = |c: &Card| c.bit() & avoid == 0;
            let mut pick = (0..PICK_TRIES)
                .map(|_| rng.below(len))
                .find(|&i| fits(&self.pool[i]));
            if pick.is_none() {
                let count = self.pool.iter().filter(|c| fits(c)).count();
                if count == 0 {
                    return;
                }
                let k = rng.below(count);
                pick = self
                    .pool
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| fits(c))
                    .nth(k)
                    .map(|(i, _)| i);
            }
            if let Some(i) = pick {
                let card = self.pool.swap_remove(i);
                hand.insert(card);
                self.taken.push(card);
            }
        }
    }

    /// One sample: a full game consistent with `view` and the inferences. Every seat's
    /// constrained groups are dealt first, most restrictive first, so that free cards cannot
    /// use up what they need; then every hand is filled up to its size, and what is left is
    /// shuffled into the stock. Each card dealt is drawn uniformly from the cards left that
    /// its group allows.
    fn sample(&mut self, view: &Observation, rng: &mut SplitMix) -> Game {
        self.pool.clone_from(&self.unseen);
        let mut hands = [Hand::EMPTY; MAX_SEATS];
        for k in 0..self.constrained.len() {
            let (seat, g) = self.constrained[k];
            let mut hand = hands[seat as usize];
            self.take(&mut hand, g.cards, g.avoid, rng);
            hands[seat as usize] = hand;
        }
        for k in 0..self.seats.len() {
            let (seat, size) = self.seats[k];
            let mut hand = hands[seat as usize];
            let missing = (size as usize).saturating_sub(hand.len()) as u8;
            self.take(&mut hand, missing, 0, rng);
            if let Some(suit) = self.declared[seat as usize].filter(|_| missing > 0) {
                // A seat names the suit it holds most: deal its free cards again until it
                // does, a few times at most.
                for _ in 0..DECLARED_TRIES {
                    let counts = super::suit_counts(&hand);
                    if counts.iter().all(|&c| c <= counts[suit.index() as usize]) {
                        break;
                    }
                    for &c in &self.taken {
                        hand.remove(c);
                    }
                    self.pool.extend_from_slice(&self.taken);
                    self.take(&mut hand, missing, 0, rng);
                }
            }
            hands[seat as usize] = hand;
        }
        for i in (1..self.pool.len()).rev() {
            self.pool.swap(i, rng.below(i + 1));
        }
        let seed = rng.next_u64();
        // The deal is always complete (the unseen cards are the other hands and the stock); a
        // view whose counts disagree with its cards is sampled without the inferences.
        view.determinize_dealt(seed, &hands, &self.pool)
            .unwrap_or_else(|| view.determinize(seed))
    }
}

/// Information-set Monte Carlo search with the heuristic as playout policy.
///
/// For each decision the bot deals the cards it cannot see many times over (determinizations),
/// each time consistently with what its seat has seen; in every such deal it tries each
/// candidate action, plays the round out with every seat following the heuristic, and scores
/// the end of the round by the chance it leaves of winning the match (exact when the match ends
/// with the round; otherwise from the gaps between the totals, against how far they can still
/// move before the target).
///
/// # What it knows about hidden hands
///
/// The cards it cannot see are the deck less its hand and the discard pile; each other seat
/// holds as many of them as its card count says, and the stock the rest. From the events it
/// also learns, per seat, groups of cards and the cards each group cannot contain:
///
/// - a seat that makes its 1-card draw held no card that matched the top then (it failed to
///   follow; where drawing with a legal play is allowed, a sensible player still does not);
/// - a drawn card followed by an automatic pass does not match (where any card may be played
///   after the draw: no card in the hand matches);
/// - a seat that pays a debt of 7s is taken to hold no 7 (drawing instead of passing the debt
///   on is allowed, but a sensible player never does it);
/// - a seat that plays a J keeps its jacks for when they are needed: it held no other card
///   that matched the top;
/// - a seat that follows suit with a card other than a J, a 7 or a skip sheds its high cards
///   first: it held no card of that suit worth more, jacks aside (unless it held only two
///   cards, or had to play the card it had just drawn);
/// - cards a seat receives afterwards are unconstrained until it fails to follow again.
///
/// A played card leaves the most constrained group that may hold it. When a play contradicts
/// the groups (the assumption about 7s was wrong, say), the bot forgets what it inferred about
/// that seat. Samples deal the constrained groups first, most restrictive first, then fill
/// every hand up to its size. A seat that has named a suit with a J, and has received and
/// played nothing since, is taken to hold most of that suit: its unconstrained cards are dealt
/// again (a few times at most) until no other suit outnumbers the one it named.
/// [`SearchBot::determinize`] shows one such sample.
///
/// # Choosing
///
/// For each decision with a real choice it deals `iterations / k` samples per candidate
/// action (`k` candidates), on average: every candidate meets the same samples and the same
/// playout generators (common random numbers), so candidates are compared on equal terms, and
/// successive halving drops the worse half of the candidates in rounds and gives their share of
/// the budget to the rest. Racing drops a candidate sooner, unplayed for the rest of the
/// decision, once it is clearly no better than the heuristic's choice on the samples so far (a
/// mean paired difference three standard errors below zero, from 32 samples on); when only the
/// heuristic's choice is left the decision ends there, with part of its budget unspent. The
/// choice of a [`HeuristicBot`] with the same seed is never dropped,
/// and the bot keeps it unless the best candidate beats it on the same samples by a clear margin
/// (a mean paired difference of one standard error): the search only ever overrules its
/// playout policy where the evidence says so. Deterministic for a fixed seed and budget, as
/// long as no time limit stops a decision early (a decision stopped before its second sample
/// is the heuristic's).
#[derive(Clone, Debug)]
pub struct SearchBot {
    /// The playout policy's player: its choice stands unless the search finds better.
    heuristic: HeuristicBot,
    rng: SplitMix,
    /// Playouts per decision (a candidate played out in one sample is one playout).
    pub iterations: u32,
    /// A wall-clock limit per decision, on top of the budget, shared out between the rounds of
    /// successive halving as the budget is (with a budget of `u32::MAX`, the time alone
    /// decides). A decision it cuts short depends on the machine's speed, so it is no longer
    /// reproducible.
    pub time_limit: Option<Duration>,
    /// Playouts apply their moves with the checked [`Game::apply_with`] instead of the trusted
    /// [`Game::apply_unchecked`] (see [`SearchBot::with_checked_playouts`]).
    checked_playouts: bool,
    inference: Inference,
}

impl SearchBot {
    /// Default playouts per decision: a few milliseconds per decision on one core, far inside
    /// the server's default 2 s per decision.
    pub const DEFAULT_ITERATIONS: u32 = 2000;

    /// A search bot with the default budget and no time limit.
    pub fn new(seed: u64) -> SearchBot {
        SearchBot::with_iterations(seed, SearchBot::DEFAULT_ITERATIONS)
    }

    /// A search bot with `iterations` playouts per decision (at least 1) and no time limit.
    pub fn with_iterations(seed: u64, iterations: u32) -> SearchBot {
        SearchBot {
            heuristic: HeuristicBot::new(seed),
            rng: SplitMix::new(seed ^ 0x5EA7_C4B0_7000_0001),
            iterations: iterations.max(1),
            time_limit: None,
            checked_playouts: false,
            inference: Inference::default(),
        }
    }

    /// The same bot, stopping each decision after `limit` at the latest.
    pub fn with_time_limit(mut self, limit: Duration) -> SearchBot {
        self.time_limit = Some(limit);
        self
    }

    /// The same bot, its playouts applying each move with the checked [`Game::apply_with`] (as
    /// before the trusted [`Game::apply_unchecked`] was used): the same moves and the same
    /// decisions for a given budget, only slower. For benchmarks that measure what the trusted
    /// path gains (`bot-sdk/benches/strength.rs`).
    pub fn with_checked_playouts(mut self) -> SearchBot {
        self.checked_playouts = true;
        self
    }

    /// One deal of the hidden cards as this bot's search would sample it for `obs`: consistent
    /// with the observation and with what the bot inferred from the events it was shown. For
    /// tests and for bot authors who build on the search. `obs` must be the observation of the
    /// bot's own seat (a spectator's observation gets a plain [`Observation::determinize`]).
    pub fn determinize(&mut self, obs: &Observation, seed: u64) -> Game {
        let (Some(_), Ok(rules)) = (obs.viewer, obs.config.rules()) else {
            return obs.determinize(seed);
        };
        self.inference.sync(obs, &rules);
        Sampler::new(obs, &rules, &self.inference).sample(obs, &mut SplitMix::new(seed))
    }
}

/// How many standard errors the best candidate's mean paired gain over the heuristic's choice
/// must reach for the search to overrule the heuristic.
const CLEAR_MARGIN: f64 = 1.0;

/// Racing starts after this many samples (fewer give no usable standard error)...
const RACE_FROM: u64 = 32;
/// ... and looks again every this many samples ...
const RACE_EVERY: u64 = 16;
/// ... for candidates whose mean paired gain over the heuristic's choice lies this many standard
/// errors below zero (or that played exactly like it in every sample so far): such a candidate
/// could hardly end one standard error above it, as overruling the heuristic needs.
const RACE_MARGIN: f64 = 3.0;

/// The mean and the standard error of a candidate's paired gain over the heuristic's choice, from
/// the sums of the gains and of their squares over `n` samples (at least 2).
fn paired_gain((sum, squares): (f64, f64), n: u64) -> (f64, f64) {
    let n = n as f64;
    let mean = sum / n;
    let var = (squares / n - mean * mean).max(0.0);
    (mean, (var / (n - 1.0)).sqrt())
}

impl Bot for SearchBot {
    fn name(&self) -> &str {
        "search"
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        let started = Instant::now();
        let heuristic = self.heuristic.decide(obs);
        let legal = &obs.legal;
        let (Some(me), Ok(rules)) = (obs.viewer, obs.config.rules()) else {
            return heuristic;
        };
        self.inference.sync(obs, &rules);
        let cands = candidates(legal);
        let Some(h) = canonical(heuristic, &cands) else {
            return heuristic;
        };
        if cands.len() == 1 {
            return heuristic;
        }
        // Samples end the match with this round: no new round is dealt after a playout.
        let mut view = *obs;
        view.config.max_rounds = obs.round;
        let mut sampler = Sampler::new(obs, &rules, &self.inference);
        let cards = CardScores::new(&rules);
        let k = cands.len();
        // Successive halving: ceil(log2 k) rounds, each with an equal share of the budget.
        let rounds = (usize::BITS - (k - 1).leading_zeros()) as usize;
        let budget = self.iterations as usize;
        // A time limit is shared out like the budget: halving round `r` of `R` ends at the latest
        // at `(r + 1) / R` of it, so that a limit far below the budget still leaves time for
        // the later rounds, among the better candidates.
        let round_end = |round: usize| {
            self.time_limit
                .map(|t| started + t.mul_f64((round + 1) as f64 / rounds as f64))
        };
        let base = self.rng.next_u64();
        let mut alive: Vec<usize> = (0..k).collect();
        let mut sum = vec![0f64; k];
        // Per candidate: the sums of its paired differences with the heuristic's choice and of
        // their squares.
        let mut gain = vec![(0f64, 0f64); k];
        let mut values = vec![0f64; k];
        let mut samples = 0u64;
        // How many candidates successive halving alone would keep alive this round: the round's
        // budget is shared out as if racing had dropped none, so what racing drops is saved.
        let mut scheduled = k;
        'rounds: for round in 0..rounds {
            let per = (budget / (rounds * scheduled)).max(1) as u64;
            let first = samples;
            let end = round_end(round);
            for j in first..first + per {
                if end.is_some_and(|d| Instant::now() >= d) && samples > 0 {
                    break;
                }
                let mut seeds = SplitMix::new(base ^ j.wrapping_mul(0xD1B5_4A32_D192_ED03));
                let sample = sampler.sample(&view, &mut seeds);
                let playout_seed = seeds.next_u64();
                for &a in &alive {
                    let mut game = sample;
                    values[a] = if game.apply_with(me, cands[a], &mut ()).is_ok() {
                        let rng = &mut SplitMix::new(playout_seed);
                        playout(&mut game, &cards, rng, self.checked_playouts);
                        match_value(&rules, me, obs.round, &obs.totals, &game)
                    } else {
                        0.0
                    };
                }
                for &a in &alive {
                    sum[a] += values[a];
                    let d = values[a] - values[h];
                    gain[a].0 += d;
                    gain[a].1 += d * d;
                }
                samples = j + 1;
                if samples >= RACE_FROM && samples.is_multiple_of(RACE_EVERY) {
                    // Racing: drop the candidates clearly no better than the heuristic's choice.
                    alive.retain(|&a| {
                        let (mean, error) = paired_gain(gain[a], samples);
                        a == h || mean + RACE_MARGIN * error > 0.0
                    });
                    if alive.len() == 1 {
                        break 'rounds;
                    }
                }
            }
            // Every live candidate has met the same samples: compare sums, keep the better
            // half and the heuristic's choice.
            alive.sort_by(|&a, &b| sum[b].total_cmp(&sum[a]).then(a.cmp(&b)));
            if round + 1 < rounds {
                alive.truncate(alive.len().div_ceil(2));
                if !alive.contains(&h) {
                    alive.push(h);
                }
                scheduled = alive.len().max(scheduled.div_ceil(2));
            }
        }
        let top = alive[0];
        if top == h || samples < 2 {
            return heuristic;
        }
        let (mean, error) = paired_gain(gain[top], samples);
        if mean > CLEAR_MARGIN * error {
            cands[top]
        } else {
            heuristic
        }
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        reactions(obs)
    }

    fn on_event(&mut self, event: &Event) {
        self.inference.observe(event);
    }
}

/// Playouts stop after this many actions (a round this long is scored as it stands).
const MAX_PLAYOUT_STEPS: u32 = 500;

/// The heuristic's move for the seat to act, found without listing the legal actions: the
/// heuristic never draws while it can play and never passes after a draw that left it a play,
/// so it plays its best-scored playable card, with the call the rules want, or draws. The same
/// choice as [`Scorer::choose`] over the legal actions, ties broken alike. `None` when the
/// match is over.
fn heuristic_move(
    game: &Game,
    seat: Seat,
    cards: &CardScores,
    rng: &mut SplitMix,
) -> Option<Action> {
    let phase = game.phase();
    if phase == Phase::Over {
        return None;
    }
    let mut best = None;
    let mut best_score = i32::MIN;
    let mut consider = |a: Action, score: i32| {
        let score = score * 4 + rng.below(4) as i32;
        if score > best_score {
            best = Some(a);
            best_score = score;
        }
    };
    if phase == Phase::AwaitSuit {
        let scorer = Scorer::from_game(game, seat, cards, 0);
        for suit in Suit::ALL {
            consider(Action::DeclareSuit(suit), scorer.declare(suit));
        }
        return best;
    }
    let playable = game.playable();
    if playable == 0 {
        // Nothing to score: the reading of the position is not even built.
        return Some(if phase == Phase::AfterDraw {
            Action::Pass
        } else {
            Action::Draw
        });
    }
    let scorer = Scorer::from_game(game, seat, cards, playable);
    let calls = game.calls_for_play();
    let mut set = playable;
    while set != 0 {
        let bit = set.trailing_zeros() as u8;
        set &= set - 1;
        let card = Card::new(Rank::from_index(bit & 15), Suit::from_index(bit >> 4));
        for &call in calls {
            if card.rank() == Rank::Jack {
                for suit in Suit::ALL {
                    let suit = Some(suit);
                    consider(
                        Action::Play { card, suit, call },
                        scorer.play(card, suit, call),
                    );
                }
            } else {
                consider(
                    Action::Play {
                        card,
                        suit: None,
                        call,
                    },
                    scorer.play(card, None, call),
                );
            }
        }
    }
    best
}

/// Plays the round of `game` out, every seat following the heuristic; stops at the end of the
/// round (the caller's game ends the match there, so no new round is dealt). The heuristic's move
/// is always legal (`the_playout_shortcut_makes_the_heuristics_choice` checks it), so it is
/// applied with the engine's trusted [`Game::apply_unchecked`]; with `checked`, with
/// [`Game::apply_with`], which checks it again (the same games, slower; see
/// [`SearchBot::with_checked_playouts`]).
fn playout(game: &mut Game, cards: &CardScores, rng: &mut SplitMix, checked: bool) {
    let round = game.round();
    for _ in 0..MAX_PLAYOUT_STEPS {
        if game.round() != round {
            return;
        }
        let Some(seat) = game.to_act() else { return };
        let Some(action) = heuristic_move(game, seat, cards, rng) else {
            return;
        };
        if checked {
            if game.apply_with(seat, action, &mut ()).is_err() {
                return;
            }
        } else {
            game.apply_unchecked(seat, action, &mut ());
        }
    }
}

/// How good the end of the round played in `game` is for `me`, from 0 to 1: the chance of
/// winning the match, exact when the match is over, estimated otherwise. `before` holds the
/// totals before the round (`round`).
fn match_value(rules: &Rules, me: Seat, round: u16, before: &[i32; MAX_SEATS], game: &Game) -> f64 {
    let n = rules.seats as usize;
    let me = me as usize;
    let mut totals = *before;
    let finished = game.round() != round || game.phase() == Phase::Over;
    if finished {
        totals[..n].copy_from_slice(&game.totals()[..n]);
    } else if rules.scoring == Scoring::Penalty {
        // Unfinished: score the hands as they stand, as a blocked round would.
        for (s, t) in totals.iter_mut().enumerate().take(n) {
            *t += hand_value(rules, game.hand(s as Seat));
        }
    }
    // Higher is better.
    let sign = match rules.scoring {
        Scoring::Penalty => -1.0,
        Scoring::Positive => 1.0,
    };
    let key = |s: usize| sign * f64::from(totals[s]);
    // The samples stop at this round whatever the rules say (see `decide`): was it the last?
    let over = finished
        && (round >= rules.max_rounds
            || rules
                .target
                .is_none_or(|t| totals[..n].iter().any(|&x| x >= i32::from(t))));
    if over {
        let best = (0..n).map(key).fold(f64::MIN, f64::max);
        return if key(me) < best {
            0.0
        } else {
            1.0 / (0..n).filter(|&s| key(s) == best).count() as f64
        };
    }
    // The totals can still move by about `unit` points a round, for the rounds left before
    // the leader reaches the target: the chance to beat each other seat is a normal
    // distribution (its logistic approximation) of the gap over that spread.
    let unit = match rules.scoring {
        Scoring::Penalty => 20.0,
        Scoring::Positive => 60.0,
    };
    let target = rules.target.map_or(100.0, f64::from);
    let lead = totals[..n].iter().copied().max().unwrap_or(0) as f64;
    let spread = ((target - lead).max(unit) * unit).sqrt();
    (0..n)
        .filter(|&s| s != me)
        .map(|s| 1.0 / (1.0 + (-1.7 * (key(me) - key(s)) / spread).exp()))
        .product()
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
        (Action::Announce(_), Action::Announce(_)) => true,
        (a, b) => a == b,
    };
    candidates.iter().position(same).or_else(|| match action {
        // The brazilian ANNOUNCE stands for the PLAY with the MAU-MAU call.
        Action::Announce(Call::MauMau) => candidates.iter().position(|a| {
            matches!(
                a,
                Action::Play {
                    call: Call::MauMau,
                    ..
                }
            )
        }),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bots::HeuristicBot;
    use maumau_engine::{CallsMode, MatchConfig, ProfileId};

    /// Heuristic self-play games, each profile at two seat counts, under both call settings:
    /// `f` sees every position, the seat to act, the events so far.
    fn heuristic_games(mut f: impl FnMut(&Game, Seat, &[Event])) {
        for profile in ProfileId::ALL {
            for (seats, calls) in [(2, CallsMode::Enforce), (4, CallsMode::Challenge)] {
                let seats = if profile == ProfileId::Brazilian {
                    seats + 2
                } else {
                    seats
                };
                let config = MatchConfig {
                    calls,
                    ..MatchConfig::new(profile, seats)
                };
                let mut events = Vec::new();
                let mut game = Game::new_with(config, 7, &mut events).expect("valid");
                let mut bots: Vec<HeuristicBot> =
                    (0..seats).map(|s| HeuristicBot::new(s as u64)).collect();
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
            let cards = CardScores::new(game.rules());
            let fast = heuristic_move(game, seat, &cards, &mut rng).expect("a move");
            assert!(legal.contains(&fast), "{fast} is not legal");
            let scorer = Scorer::from_game(game, seat, &cards, game.hand(seat).distinct());
            let top = legal.iter().map(|a| scorer.score(a)).max();
            assert_eq!(Some(scorer.score(&fast)), top, "{fast} is not a best move");
            let obs = game.observation(seat);
            let from_obs = Scorer::from_observation(&obs, &cards).expect("a seat");
            for a in legal.iter() {
                assert_eq!(from_obs.score(a), scorer.score(a));
            }
        });
    }

    /// Whether every group of `cards` can be matched to distinct cards of `hand` that it
    /// allows (searched exhaustively, most constrained group first).
    fn honours(cards: &SeatCards, hand: &Hand) -> bool {
        fn fit(groups: &[(u64, u8)], left: &mut Vec<Card>) -> bool {
            let Some((&(avoid, n), rest)) = groups.split_first() else {
                return true;
            };
            if n == 0 {
                return fit(rest, left);
            }
            let mut tried = 0u64;
            for i in 0..left.len() {
                let c = left[i];
                if c.bit() & (avoid | tried) != 0 {
                    continue;
                }
                tried |= c.bit();
                left.swap_remove(i);
                let mut next = groups.to_vec();
                next[0].1 -= 1;
                let ok = fit(&next, left);
                left.push(c);
                let last = left.len() - 1;
                left.swap(i, last);
                if ok {
                    return true;
                }
            }
            false
        }
        let mut groups: Vec<(u64, u8)> =
            cards.groups().iter().map(|g| (g.avoid, g.cards)).collect();
        groups.sort_by_key(|&(avoid, _)| std::cmp::Reverse(avoid.count_ones()));
        hand.len() == cards.total() && fit(&groups, &mut hand.iter().collect())
    }

    /// What seat 0 infers from the events of a heuristic game so far.
    fn inferred(game: &Game, events: &[Event]) -> Inference {
        let me = 0;
        let mut inference = Inference {
            rules: Some(*game.rules()),
            me: Some(me),
            ..Inference::default()
        };
        for e in events {
            inference.observe(&maumau_engine::event_for(e, Some(me)));
        }
        inference
    }

    #[test]
    fn inferences_hold_for_the_real_hands() {
        // The heuristic always answers a 7 when it can, so every inference must be true.
        let mut constrained = 0;
        heuristic_games(|game, _, events| {
            let inference = inferred(game, events);
            for s in 1..game.seats() {
                let cards = &inference.seats[s as usize];
                let hand = game.hand(s);
                assert!(
                    honours(cards, hand),
                    "seat {s}: holds {hand:?} in {}\n{cards:?}",
                    game.position()
                );
                constrained += cards.groups().iter().filter(|g| g.avoid != 0).count();
            }
        });
        assert!(constrained > 100, "only {constrained} constrained groups");
    }

    #[test]
    fn samples_respect_every_inference_in_real_games() {
        let mut rng = SplitMix::new(9);
        let (mut samples, mut missed) = (0, 0);
        heuristic_games(|game, seat, events| {
            if seat != 0 {
                return;
            }
            let mut inference = inferred(game, events);
            let obs = game.observation(0);
            inference.sync(&obs, game.rules());
            let mut sampler = Sampler::new(&obs, game.rules(), &inference);
            for _ in 0..3 {
                let sample = sampler.sample(&obs, &mut rng);
                // The sample shows seat 0 exactly what it sees, and its hidden cards are the
                // deck's less what seat 0 sees (the engine checks the deal).
                assert_eq!(sample.observation(0), obs);
                samples += 1;
                for s in 1..game.seats() {
                    missed += usize::from(!honours(&inference.seats[s as usize], sample.hand(s)));
                }
            }
        });
        // Dealing groups one after another can in principle paint itself into a corner; it
        // must be rare.
        assert!(samples > 300, "only {samples} samples");
        assert!(
            missed * 200 <= samples,
            "{missed} of {samples} samples miss an inference"
        );
    }

    #[test]
    fn samples_honour_what_was_inferred() {
        let game = Game::new(MatchConfig::new(ProfileId::Classic, 3), 5).expect("valid");
        let obs = game.observation(0);
        let rules = *game.rules();
        let hearts = Suit::Hearts.mask() | Rank::Jack.mask();
        let mut inference = Inference::default();
        inference.sync(&obs, &rules);
        inference.seats[1].avoid_all(hearts);
        let mut sampler = Sampler::new(&obs, &rules, &inference);
        let mut rng = SplitMix::new(3);
        for _ in 0..50 {
            let sample = sampler.sample(&obs, &mut rng);
            assert_eq!(sample.observation(0), obs);
            assert!(sample.hand(1).iter().all(|c| c.bit() & hearts == 0));
        }
    }

    #[test]
    fn a_contradicted_seat_is_forgotten() {
        let mut cards = SeatCards::default();
        for _ in 0..5 {
            cards.add(false);
        }
        cards.avoid_all(Rank::Seven.mask());
        cards.add(false);
        assert_eq!(cards.total(), 6);
        // The 7 came from the new card; then a second 7 contradicts the groups.
        let seven = Card::new(Rank::Seven, Suit::Clubs);
        cards.remove(seven);
        let avoiding = |cards: &SeatCards| -> u8 {
            cards
                .groups()
                .iter()
                .filter(|g| g.avoid != 0)
                .map(|g| g.cards)
                .sum()
        };
        assert_eq!((cards.total(), avoiding(&cards)), (5, 5));
        cards.remove(Card::new(Rank::Seven, Suit::Hearts));
        assert_eq!(cards.total(), 4);
        assert!(cards.groups().iter().all(|g| g.avoid == 0));
    }

    #[test]
    fn paired_gains_give_mean_and_standard_error() {
        // Gains 1, 0, 1, 0: mean 0.5, variance 0.25, standard error sqrt(0.25 / 3).
        let (mean, error) = paired_gain((2.0, 2.0), 4);
        assert!((mean - 0.5).abs() < 1e-12);
        assert!((error - (0.25f64 / 3.0).sqrt()).abs() < 1e-12);
        // A candidate that played exactly like the heuristic's choice: no gain, no error, and
        // racing drops it.
        let (mean, error) = paired_gain((0.0, 0.0), RACE_FROM);
        assert!(mean + RACE_MARGIN * error <= 0.0);
    }

    #[test]
    fn candidates_drop_the_same_move_said_differently() {
        let card = Card::new(Rank::Nine, Suit::Clubs);
        let play = |call| Action::Play {
            card,
            suit: None,
            call,
        };
        let legal = [play(Call::Mau), play(Call::MauMau), Action::Draw];
        assert_eq!(candidates(&legal), vec![play(Call::MauMau), Action::Draw]);
        assert_eq!(canonical(play(Call::Mau), &candidates(&legal)), Some(0));
        let legal = [play(Call::MauMau), Action::Announce(Call::MauMau)];
        assert_eq!(candidates(&legal), vec![play(Call::MauMau)]);
        assert_eq!(
            canonical(Action::Announce(Call::MauMau), &candidates(&legal)),
            Some(0)
        );
    }
}
