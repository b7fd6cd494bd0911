//! The Python bindings' pure-Rust half: the observation vector, the rewards, and N games stepped
//! together. Nothing here touches Python, so it is tested by `cargo test` and runs without the
//! GIL.
//!
//! # The observation vector
//!
//! [`encode`] writes one seat's [`Observation`] as [`OBS_LEN`] `f32`s, the same layout in every
//! profile (two-deck brazilian counts go up to 2). Cards are indexed `suit * 13 + rank` (♣ ♦ ♥ ♠;
//! 2 … 10, J, Q, K, A), as in the action index. Seats are relative to the viewer: block `k`
//! describes seat `(viewer + k) % seats`, so block 0 is always the viewer itself, block 1 the next
//! seat clockwise; blocks `k >= seats` are all zero. Numbers are raw (counts, points), not scaled.
//!
//! | range | name | meaning |
//! |---|---|---|
//! | `0..52` | `hand` | copies of each card in the viewer's hand |
//! | `52..104` | `top` | one-hot: the top card of the discard pile |
//! | `104..156` | `discard` | copies of each card in the discard pile (top included) |
//! | `156..208` | `drawn` | one-hot: the viewer's 1-card draw this turn (only while it moves) |
//! | `208..260` | `penalty` | copies of each card the viewer got by penalty draws this turn |
//! | `260..264` | `named_suit` | one-hot: the suit named by a J on top |
//! | `264..269` | `phase` | one-hot: start, drawn, announced, await_suit, over |
//! | `269..275` | `scalars` | debt, stock size, round, turns this round, clockwise (0/1), just accused (0/1) |
//! | `275..279` | `profile` | one-hot: classic, penalty-points, brazilian, romanian-32 |
//! | `279..282` | `calls` | one-hot: challenge, enforce, off |
//! | `282..370` | `seats` | 8 blocks of 11, by relative seat: present, hand size, total, rounds won, to act, dealer, offender, pending out, last call one-hot (none, mau, maumau) |
//! | `370..373` | `offence_kind` | one-hot: omission, jack_finish, no_announce |
//!
//! The vector is a function of the observation alone, so it cannot carry a card the seat may
//! not see ([`maumau_engine::view`] decides that).
//!
//! # Rewards
//!
//! A step's rewards, per seat ([`RewardMode`]): at each round end, `Win` gives the round winner
//! +1 and every other seat −1/(seats−1) (a blocked round gives 0), `Score` gives each seat its
//! round points divided by 100, negated where points are penalties (classic, penalty-points,
//! brazilian) and as they are where they are won (romanian-32). At the match end both add the
//! placing reward `1 − 2·(placing − 1)/(seats − 1)`: +1 for first, −1 for last, shared placings
//! shared. Every other step gives 0.

use maumau_engine::profile::Scoring;
use maumau_engine::seed::SplitMix64;
use maumau_engine::{
    ACTION_COUNT, Action, ActionList, CallsMode, Event, Game, MatchConfig, Observation,
    OffenceKind, Phase, ProfileId, Rejection,
};

/// Most seats any profile allows (the seat blocks of the vector).
pub const MAX_SEATS: usize = 8;
/// Numbers per seat block.
pub const SEAT_WIDTH: usize = 11;

/// The named ranges of the observation vector: name, start, end.
pub const LAYOUT: [(&str, usize, usize); 12] = [
    ("hand", 0, 52),
    ("top", 52, 104),
    ("discard", 104, 156),
    ("drawn", 156, 208),
    ("penalty", 208, 260),
    ("named_suit", 260, 264),
    ("phase", 264, 269),
    ("scalars", 269, 275),
    ("profile", 275, 279),
    ("calls", 279, 282),
    ("seats", 282, 282 + MAX_SEATS * SEAT_WIDTH),
    ("offence_kind", 370, 373),
];

/// Length of the observation vector.
pub const OBS_LEN: usize = 373;

const HAND: usize = 0;
const TOP: usize = 52;
const DISCARD: usize = 104;
const DRAWN: usize = 156;
const PENALTY: usize = 208;
const NAMED_SUIT: usize = 260;
const PHASE: usize = 264;
const SCALARS: usize = 269;
const PROFILE: usize = 275;
const CALLS: usize = 279;
const SEATS: usize = 282;
const OFFENCE_KIND: usize = 370;

/// Adds one to `out[base + card]` for every copy of every card of `hand`.
fn add_hand(out: &mut [f32], base: usize, hand: &maumau_engine::Hand) {
    for c in hand.iter() {
        out[base + c.index() as usize] += 1.0;
    }
}

fn phase_index(p: Phase) -> usize {
    match p {
        Phase::Start => 0,
        Phase::AfterDraw => 1,
        Phase::Announced => 2,
        Phase::AwaitSuit => 3,
        Phase::Over => 4,
    }
}

fn profile_index(p: ProfileId) -> usize {
    match p {
        ProfileId::Classic => 0,
        ProfileId::PenaltyPoints => 1,
        ProfileId::Brazilian => 2,
        ProfileId::Romanian32 => 3,
    }
}

fn calls_index(c: CallsMode) -> usize {
    match c {
        CallsMode::Challenge => 0,
        CallsMode::Enforce => 1,
        CallsMode::Off => 2,
    }
}

fn offence_index(k: OffenceKind) -> usize {
    match k {
        OffenceKind::Omission => 0,
        OffenceKind::JackFinish => 1,
        OffenceKind::NoAnnounce => 2,
    }
}

/// Writes `obs` (a seat's observation, not a spectator's) into `out` (exactly [`OBS_LEN`] long)
/// in the layout of the module docs.
pub fn encode(obs: &Observation, out: &mut [f32]) {
    debug_assert_eq!(out.len(), OBS_LEN);
    out.fill(0.0);
    let viewer = obs.viewer.unwrap_or(0) as usize;
    let n = obs.config.seats as usize;
    add_hand(out, HAND, &obs.hand);
    if let Some(top) = obs.discard.top() {
        out[TOP + top.index() as usize] = 1.0;
    }
    for c in obs.discard.as_slice() {
        out[DISCARD + c.index() as usize] += 1.0;
    }
    if let Some(c) = obs.drawn_card {
        out[DRAWN + c.index() as usize] = 1.0;
    }
    add_hand(out, PENALTY, &obs.penalty_cards);
    if let Some(s) = obs.named_suit {
        out[NAMED_SUIT + s.index() as usize] = 1.0;
    }
    out[PHASE + phase_index(obs.phase)] = 1.0;
    out[SCALARS] = obs.debt as f32;
    out[SCALARS + 1] = obs.stock_size as f32;
    out[SCALARS + 2] = obs.round as f32;
    out[SCALARS + 3] = obs.turns as f32;
    out[SCALARS + 4] = obs.clockwise as u8 as f32;
    out[SCALARS + 5] = obs.just_accused as u8 as f32;
    out[PROFILE + profile_index(obs.config.profile)] = 1.0;
    out[CALLS + calls_index(obs.config.calls)] = 1.0;
    let offender = obs.offence.map(|o| o.offender as usize);
    for k in 0..n {
        let s = (viewer + k) % n;
        let b = SEATS + k * SEAT_WIDTH;
        out[b] = 1.0;
        out[b + 1] = obs.hand_sizes[s] as f32;
        out[b + 2] = obs.totals[s] as f32;
        out[b + 3] = obs.rounds_won[s] as f32;
        out[b + 4] = (obs.to_act == Some(s as u8)) as u8 as f32;
        out[b + 5] = (obs.dealer as usize == s) as u8 as f32;
        out[b + 6] = (offender == Some(s)) as u8 as f32;
        out[b + 7] = (obs.pending_out == Some(s as u8)) as u8 as f32;
        out[b + 8 + obs.last_calls[s] as usize] = 1.0;
    }
    if let Some(o) = obs.offence {
        out[OFFENCE_KIND + offence_index(o.kind)] = 1.0;
    }
}

/// Writes what `seat` sees of `game` into `obs` ([`OBS_LEN`] long, as [`encode`]) and its legal
/// actions into `mask` ([`ACTION_COUNT`] long, 1 for legal), all zero unless `seat` is to act: the
/// environments' observation of one seat.
pub fn encode_seat(game: &Game, seat: u8, obs: &mut [f32], mask: &mut [i8]) {
    let o = game.observation(seat);
    encode(&o, obs);
    mask.fill(0);
    if game.to_act() == Some(seat) {
        for a in o.legal.iter() {
            mask[a.index()] = 1;
        }
    }
}

/// Writes the legal actions as a mask over the [`ACTION_COUNT`] dense indices.
pub fn encode_mask(legal: &ActionList, out: &mut [bool]) {
    out.fill(false);
    for a in legal.iter() {
        out[a.index()] = true;
    }
}

/// How rewards are given (see the module docs).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum RewardMode {
    /// +1 to a round's winner, −1/(seats−1) to the others; the placing reward at the match end.
    Win,
    /// Round points / 100 (negated for penalty points); the placing reward at the match end.
    Score,
}

impl RewardMode {
    /// Parses `win` or `score`.
    pub fn parse(s: &str) -> Option<RewardMode> {
        match s {
            "win" => Some(RewardMode::Win),
            "score" => Some(RewardMode::Score),
            _ => None,
        }
    }

    /// The name: `win` or `score`.
    pub fn name(self) -> &'static str {
        match self {
            RewardMode::Win => "win",
            RewardMode::Score => "score",
        }
    }
}

/// Adds to `rewards` what `event` is worth to each seat; `game` is the game after the step (for
/// the placings at the match end).
pub fn add_event_rewards(mode: RewardMode, game: &Game, event: &Event, rewards: &mut [f32]) {
    let n = game.seats() as usize;
    let others = if n > 1 { 1.0 / (n - 1) as f32 } else { 0.0 };
    match event {
        Event::RoundEnded(r) => match mode {
            RewardMode::Win => {
                if let Some(w) = r.winner() {
                    for (s, x) in rewards.iter_mut().enumerate().take(n) {
                        *x += if s == w as usize { 1.0 } else { -others };
                    }
                }
            }
            RewardMode::Score => {
                let sign = match game.rules().scoring {
                    Scoring::Penalty => -1.0,
                    Scoring::Positive => 1.0,
                };
                for (x, p) in rewards.iter_mut().zip(&r.points).take(n) {
                    *x += sign * *p as f32 / 100.0;
                }
            }
        },
        Event::MatchEnded => {
            if let Some(result) = game.match_result() {
                for (x, p) in rewards.iter_mut().zip(&result.placings).take(n) {
                    *x += 1.0 - 2.0 * (*p as f32 - 1.0) * others;
                }
            }
        }
        _ => {}
    }
}

/// Applies `action` by `seat` to `game` and adds the step's rewards to `rewards` (one per seat).
/// A rejected action changes nothing.
pub fn apply_rewarded(
    game: &mut Game,
    seat: u8,
    action: Action,
    mode: RewardMode,
    rewards: &mut [f32],
) -> Result<(), Rejection> {
    // Round ends are collected during the step; the placings exist only once it is done.
    let mut round_ends = [None; 4];
    let mut ended = 0;
    let mut match_ended = false;
    game.apply_with(seat, action, &mut |e: &Event| match e {
        Event::RoundEnded(_) if ended < round_ends.len() => {
            round_ends[ended] = Some(*e);
            ended += 1;
        }
        Event::MatchEnded => match_ended = true,
        _ => {}
    })?;
    for e in round_ends.iter().flatten() {
        add_event_rewards(mode, game, e, rewards);
    }
    if match_ended {
        add_event_rewards(mode, game, &Event::MatchEnded, rewards);
    }
    Ok(())
}

/// Why a vector step was refused: which game, and why. Nothing changed in any game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StepError {
    /// `actions[game]` is not in `0..ACTION_COUNT`.
    NotAnAction {
        /// The game's index.
        game: usize,
        /// The number sent.
        action: i64,
    },
    /// The engine refused `actions[game]`.
    Rejected {
        /// The game's index.
        game: usize,
        /// The refused action.
        action: Action,
        /// Why.
        rejection: Rejection,
    },
    /// The arrays do not have the sizes of this environment.
    Shape(String),
}

/// The output arrays of a step, each with one row per game.
pub struct StepOut<'a> {
    /// `N × OBS_LEN` observations of the seat to act.
    pub obs: &'a mut [f32],
    /// `N × ACTION_COUNT` legal-action masks of the seat to act.
    pub mask: &'a mut [bool],
    /// `N` seats to act.
    pub to_act: &'a mut [i64],
    /// `N × seats` rewards of this step.
    pub rewards: &'a mut [f32],
    /// `N` flags: the match ended in this step (and a new one was dealt in its place).
    pub dones: &'a mut [bool],
}

/// N matches of one configuration, stepped together; a finished match is replaced by a new one
/// at once (its seed drawn from the environment's seed stream).
pub struct VecGames {
    config: MatchConfig,
    mode: RewardMode,
    games: Vec<Game>,
    scratch: Vec<Game>,
    seeds: SplitMix64,
    chooser: SplitMix64,
    legal: ActionList,
    matches_finished: u64,
}

impl VecGames {
    /// `n` matches of `config`; match seeds come from a SplitMix64 stream seeded with `seed`.
    pub fn new(
        config: MatchConfig,
        n: usize,
        seed: u64,
        mode: RewardMode,
    ) -> Result<VecGames, maumau_engine::ConfigError> {
        config.rules()?;
        let mut v = VecGames {
            config,
            mode,
            games: Vec::with_capacity(n),
            scratch: Vec::with_capacity(n),
            seeds: SplitMix64::new(seed),
            chooser: SplitMix64::new(seed ^ 0xC0FF_EE00_D15E_A5E5),
            legal: ActionList::default(),
            matches_finished: 0,
        };
        v.reset(seed, n)?;
        Ok(v)
    }

    /// Deals `n` new matches from a fresh seed stream.
    fn reset(&mut self, seed: u64, n: usize) -> Result<(), maumau_engine::ConfigError> {
        self.seeds = SplitMix64::new(seed);
        self.chooser = SplitMix64::new(seed ^ 0xC0FF_EE00_D15E_A5E5);
        self.games.clear();
        for _ in 0..n {
            let s = self.seeds.next_u64();
            self.games.push(Game::new(self.config, s)?);
        }
        self.scratch = self.games.clone();
        Ok(())
    }

    /// Deals new matches for every game, the seed stream restarted from `seed`.
    pub fn reset_all(&mut self, seed: u64) {
        let n = self.games.len();
        // The configuration was checked when the environment was made.
        if self.reset(seed, n).is_err() {
            self.games.clear();
        }
    }

    /// Number of games.
    pub fn len(&self) -> usize {
        self.games.len()
    }

    /// True when there are no games.
    pub fn is_empty(&self) -> bool {
        self.games.is_empty()
    }

    /// Seats per game.
    pub fn seats(&self) -> usize {
        self.config.seats as usize
    }

    /// The games.
    pub fn games(&self) -> &[Game] {
        &self.games
    }

    /// Matches finished (and replaced) since the environment was made.
    pub fn matches_finished(&self) -> u64 {
        self.matches_finished
    }

    /// The reward mode.
    pub fn mode(&self) -> RewardMode {
        self.mode
    }

    fn check_shapes(&self, out: &StepOut<'_>) -> Result<(), StepError> {
        let n = self.games.len();
        let want = [
            ("obs", out.obs.len(), n * OBS_LEN),
            ("mask", out.mask.len(), n * ACTION_COUNT),
            ("to_act", out.to_act.len(), n),
            ("rewards", out.rewards.len(), n * self.seats()),
            ("dones", out.dones.len(), n),
        ];
        for (name, got, want) in want {
            if got != want {
                return Err(StepError::Shape(format!(
                    "{name} holds {got} numbers, expected {want}"
                )));
            }
        }
        Ok(())
    }

    /// Writes every game's observation, mask and seat to act (rewards 0, dones false).
    pub fn observe(&mut self, out: StepOut<'_>) -> Result<(), StepError> {
        self.check_shapes(&out)?;
        out.rewards.fill(0.0);
        out.dones.fill(false);
        for (i, g) in self.games.iter().enumerate() {
            write_row(g, i, out.obs, out.mask, out.to_act);
        }
        Ok(())
    }

    /// Applies `actions[i]` (a dense index) for the seat to act in game `i`, for every game, then
    /// writes the outputs. All or nothing: if any action is refused, no game changes and the
    /// error names the first refused one.
    pub fn step(&mut self, actions: &[i64], out: StepOut<'_>) -> Result<(), StepError> {
        let n = self.games.len();
        self.check_shapes(&out)?;
        if actions.len() != n {
            return Err(StepError::Shape(format!(
                "actions holds {} numbers, expected {n}",
                actions.len()
            )));
        }
        let seats = self.seats();
        out.rewards.fill(0.0);
        out.dones.fill(false);
        self.scratch.copy_from_slice(&self.games);
        for (i, g) in self.scratch.iter_mut().enumerate() {
            let a = actions[i];
            let action = usize::try_from(a)
                .ok()
                .and_then(Action::from_index)
                .ok_or(StepError::NotAnAction { game: i, action: a })?;
            let Some(seat) = g.to_act() else {
                return Err(StepError::Rejected {
                    game: i,
                    action,
                    rejection: Rejection::MatchOver,
                });
            };
            let rewards = &mut out.rewards[i * seats..(i + 1) * seats];
            apply_rewarded(g, seat, action, self.mode, rewards).map_err(|rejection| {
                StepError::Rejected {
                    game: i,
                    action,
                    rejection,
                }
            })?;
        }
        std::mem::swap(&mut self.games, &mut self.scratch);
        for (i, g) in self.games.iter_mut().enumerate() {
            if g.to_act().is_none() {
                out.dones[i] = true;
                self.matches_finished += 1;
                let seed = self.seeds.next_u64();
                // The configuration was checked when the environment was made.
                if let Ok(fresh) = Game::new(self.config, seed) {
                    *g = fresh;
                }
            }
            write_row(g, i, out.obs, out.mask, out.to_act);
        }
        Ok(())
    }

    /// Writes a uniformly random legal action of each game's seat to act into `out`.
    pub fn random_actions(&mut self, out: &mut [i64]) {
        for (g, a) in self.games.iter().zip(out.iter_mut()) {
            *a = match g.to_act() {
                Some(seat) => {
                    g.legal_actions_into(seat, &mut self.legal);
                    let k = (self.chooser.next_u64() % self.legal.len().max(1) as u64) as usize;
                    self.legal.get(k).map_or(-1, |x| x.index() as i64)
                }
                None => -1,
            };
        }
    }
}

fn write_row(g: &Game, i: usize, obs: &mut [f32], mask: &mut [bool], to_act: &mut [i64]) {
    let seat = g.to_act().unwrap_or(0);
    let o = g.observation(seat);
    encode(&o, &mut obs[i * OBS_LEN..(i + 1) * OBS_LEN]);
    encode_mask(
        &o.legal,
        &mut mask[i * ACTION_COUNT..(i + 1) * ACTION_COUNT],
    );
    to_act[i] = g.to_act().map_or(-1, i64::from);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(profile: ProfileId, seats: u8) -> MatchConfig {
        MatchConfig::new(profile, seats)
    }

    #[test]
    fn the_layout_covers_the_vector_once() {
        let mut next = 0;
        for (name, start, end) in LAYOUT {
            assert_eq!(start, next, "{name} starts where the one before ends");
            assert!(end > start, "{name}");
            next = end;
        }
        assert_eq!(next, OBS_LEN);
    }

    #[test]
    fn the_vector_counts_the_hand_and_the_seats() {
        let g = Game::from_position(
            "mm1 classic seats=3 turn=1 hands=9S/KC,7D,2S/AH,10C discard=3S stock=*",
        )
        .expect("a valid position");
        let mut v = [0.0f32; OBS_LEN];
        encode(&g.observation(1), &mut v);
        assert_eq!(v[..52].iter().sum::<f32>(), 3.0);
        assert_eq!(
            v[TOP + "3S".parse::<maumau_engine::Card>().unwrap().index() as usize],
            1.0
        );
        // Block 0 is seat 1 (the viewer, to act, 3 cards); block 2 is seat 0 (1 card).
        assert_eq!(v[SEATS + 1], 3.0);
        assert_eq!(v[SEATS + 4], 1.0);
        assert_eq!(v[SEATS + 2 * SEAT_WIDTH + 1], 1.0);
        assert_eq!(v[SEATS + 3 * SEAT_WIDTH], 0.0, "no fourth seat");
    }

    /// Plays `games` matches the slow way, one `Game` at a time with the same seeds and the same
    /// chooser, and checks that the vector environment gives the same positions and rewards.
    #[test]
    fn the_vector_steps_as_single_games_do() {
        for profile in ProfileId::ALL {
            let seats = if profile == ProfileId::Brazilian {
                4
            } else {
                3
            };
            let cfg = config(profile, seats);
            let n = 5;
            let mut v = VecGames::new(cfg, n, 7, RewardMode::Score).expect("valid");
            let mut seeds = SplitMix64::new(7);
            let mut singles: Vec<Game> = (0..n)
                .map(|_| Game::new(cfg, seeds.next_u64()).expect("valid"))
                .collect();
            let (mut obs, mut mask) = (vec![0.0; n * OBS_LEN], vec![false; n * ACTION_COUNT]);
            let (mut to_act, mut rewards, mut dones) =
                (vec![0; n], vec![0.0; n * seats as usize], vec![false; n]);
            let mut actions = vec![0i64; n];
            let mut finished = 0;
            for _ in 0..3000 {
                v.random_actions(&mut actions);
                let out = StepOut {
                    obs: &mut obs,
                    mask: &mut mask,
                    to_act: &mut to_act,
                    rewards: &mut rewards,
                    dones: &mut dones,
                };
                v.step(&actions, out).expect("legal actions are accepted");
                for (i, g) in singles.iter_mut().enumerate() {
                    let mut r = vec![0.0; seats as usize];
                    let seat = g.to_act().expect("a match in play");
                    let a = Action::from_index(actions[i] as usize).expect("an index");
                    apply_rewarded(g, seat, a, RewardMode::Score, &mut r).expect("legal");
                    assert_eq!(r[..], rewards[i * seats as usize..(i + 1) * seats as usize]);
                    if g.to_act().is_none() {
                        assert!(dones[i]);
                        finished += 1;
                        *g = Game::new(cfg, seeds.next_u64()).expect("valid");
                    }
                    assert_eq!(v.games()[i].position(), g.position());
                    let mut row = [0.0; OBS_LEN];
                    encode(&g.observation(g.to_act().unwrap_or(0)), &mut row);
                    assert_eq!(row[..], obs[i * OBS_LEN..(i + 1) * OBS_LEN]);
                }
            }
            assert_eq!(finished, v.matches_finished());
        }
    }

    #[test]
    fn a_refused_action_changes_no_game() {
        let cfg = config(ProfileId::Classic, 4);
        let n = 3;
        let mut v = VecGames::new(cfg, n, 1, RewardMode::Win).expect("valid");
        let before: Vec<String> = v.games().iter().map(Game::position).collect();
        let mut actions = vec![0i64; n];
        v.random_actions(&mut actions);
        actions[2] = 201; // a challenge with nothing to challenge
        let (mut obs, mut mask) = (vec![0.0; n * OBS_LEN], vec![false; n * ACTION_COUNT]);
        let (mut to_act, mut rewards, mut dones) = (vec![0; n], vec![0.0; n * 4], vec![false; n]);
        let out = StepOut {
            obs: &mut obs,
            mask: &mut mask,
            to_act: &mut to_act,
            rewards: &mut rewards,
            dones: &mut dones,
        };
        let err = v.step(&actions, out).expect_err("refused");
        assert!(
            matches!(err, StepError::Rejected { game: 2, .. }),
            "{err:?}"
        );
        let after: Vec<String> = v.games().iter().map(Game::position).collect();
        assert_eq!(before, after);
    }

    #[test]
    fn win_rewards_sum_to_zero_and_place_the_winner_first() {
        let mut g = Game::new(config(ProfileId::Classic, 3), 5).expect("valid");
        let mut total = [0.0f32; 3];
        while let Some(seat) = g.to_act() {
            let a = g.legal_actions(seat)[0];
            let mut r = [0.0f32; 3];
            apply_rewarded(&mut g, seat, a, RewardMode::Win, &mut r).expect("legal");
            assert!(r.iter().sum::<f32>().abs() < 1e-4, "{r:?}");
            for s in 0..3 {
                total[s] += r[s];
            }
        }
        let result = g.match_result().expect("over");
        let first = result.winners().next().expect("a winner") as usize;
        assert!(total.iter().all(|&t| t <= total[first]), "{total:?}");
    }
}
