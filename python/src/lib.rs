//! The Mau Mau rules engine as the Python module `maumau_engine._core` (PyO3).
//!
//! Python users import `maumau_engine`, which re-exports [`PyGame`] as `Game`, [`PyVecEnv`] as
//! `VecEnv`, the exceptions and the observation layout, and adds the PettingZoo environment (a
//! Python subclass of [`aec`]'s `AecBase`, which holds the PettingZoo protocol), and the built-in
//! bots as `Bot` and `Table` ([`bots`]), on which its Gymnasium environment and `evaluate` run.
//! With the `runner` feature (the default) it also carries [`runner`], the Python client's
//! native transport: a `maumau_client.Bot` played by the Rust SDK's runner.
//! The pure half, the observation vector, the rewards and the stepping of N games, is [`core`],
//! and a match with bots at some seats is [`table`]; this file only converts between Python
//! values and engine values.
//!
//! Errors are typed: every exception derives from `MaumauError` (a `ValueError`); an action the
//! engine refuses raises `RejectedAction`, whose `code` is the engine's
//! [`maumau_engine::Rejection::code`] (`not_your_turn`, `illegal_card`, ...), and leaves the game
//! unchanged.

pub mod aec;
pub mod bots;
pub mod core;
#[cfg(feature = "runner")]
pub mod runner;
pub mod table;

use maumau_engine::{
    ACTION_COUNT, Action, CallsMode, Card, ChallengeOutcome, DrawCause, Event, Game, Hand,
    MatchConfig, Observation, Options, ProfileId, Rejection, event_for,
};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray1};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::core::{OBS_LEN, RewardMode, StepError, StepOut, VecGames};

create_exception!(
    maumau_engine,
    MaumauError,
    PyValueError,
    "Base class of every error of maumau_engine (a ValueError)."
);
create_exception!(
    maumau_engine,
    RejectedAction,
    MaumauError,
    "The engine refused an action; nothing changed. `code` is the engine's rejection code \
     (e.g. `not_your_turn`), `seat` the acting seat, `action` the dense index."
);
create_exception!(
    maumau_engine,
    InvalidAction,
    MaumauError,
    "Not an action: an index outside 0..202 or text that does not parse (`play 7H mau`, `draw`)."
);
create_exception!(
    maumau_engine,
    InvalidConfig,
    MaumauError,
    "The profile, seats, options, calls or reward setting, or a bot's name, are refused."
);
create_exception!(
    maumau_engine,
    InvalidPosition,
    MaumauError,
    "A position string, or a deck order, that cannot be read."
);

fn config_error(e: impl std::fmt::Display) -> PyErr {
    InvalidConfig::new_err(e.to_string())
}

/// A `RejectedAction` carrying the engine's code, the seat and the action's index.
fn rejected(py: Python<'_>, r: Rejection, seat: u8, action: Action) -> PyErr {
    let err = RejectedAction::new_err(format!("S{seat}: `{action}` refused: {r} ({})", r.code()));
    let v = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail.
    let _ = v.setattr("code", r.code());
    let _ = v.setattr("seat", seat);
    let _ = v.setattr("action", action.index());
    err
}

/// The reward mode a Python argument names (`win` or `score`).
fn reward_mode(reward: &str) -> PyResult<RewardMode> {
    RewardMode::parse(reward)
        .ok_or_else(|| InvalidConfig::new_err(format!("reward `{reward}`: use win or score")))
}

/// Builds a configuration from the Python arguments.
fn make_config(
    profile: &str,
    seats: u8,
    options: &str,
    calls: &str,
    max_turns_per_round: u16,
    max_rounds: u16,
) -> PyResult<MatchConfig> {
    let profile: ProfileId = profile.parse().map_err(config_error)?;
    let config = MatchConfig {
        options: Options::from_words(options).map_err(config_error)?,
        calls: calls.parse::<CallsMode>().map_err(config_error)?,
        max_turns_per_round,
        max_rounds,
        ..MatchConfig::new(profile, seats)
    };
    config.rules().map_err(config_error)?;
    Ok(config)
}

/// Reads an action: a dense index (int) or its text (`play 7H mau`, `play JD:S`, `draw`).
fn read_action(action: &Bound<'_, PyAny>) -> PyResult<Action> {
    if let Ok(i) = action.extract::<i64>() {
        return usize::try_from(i)
            .ok()
            .and_then(Action::from_index)
            .ok_or_else(|| {
                InvalidAction::new_err(format!("{i} is not an action index (0..{ACTION_COUNT})"))
            });
    }
    let text: String = action
        .extract()
        .map_err(|_| InvalidAction::new_err("an action is an int (dense index) or a str"))?;
    text.parse::<Action>().map_err(InvalidAction::new_err)
}

fn cards(cards: impl Iterator<Item = Card>) -> Vec<String> {
    cards.map(|c| c.to_string()).collect()
}

/// Small numbers as a list of ints (PyO3 turns a `Vec<u8>` into `bytes`).
fn ints(v: &[u8]) -> Vec<u32> {
    v.iter().map(|&x| u32::from(x)).collect()
}

fn hand_list(h: &Hand) -> Vec<String> {
    cards(h.iter())
}

fn cause_name(c: DrawCause) -> &'static str {
    match c {
        DrawCause::Deal => "deal",
        DrawCause::Turn => "turn",
        DrawCause::Debt => "debt",
        DrawCause::Omission => "omission",
        DrawCause::FalseCall => "false_call",
        DrawCause::FalseAccusation => "false_accusation",
        DrawCause::PrevDrawOne => "prev_draw_one",
    }
}

/// One event as a dict: `kind` plus the event's fields, cards as text.
fn event_dict<'py>(py: Python<'py>, e: &Event, seats: usize) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let kind = match *e {
        Event::RoundStarted { round, dealer } => {
            d.set_item("round", round)?;
            d.set_item("dealer", dealer)?;
            "round_started"
        }
        Event::Drew { seat, card, cause } => {
            d.set_item("seat", seat)?;
            d.set_item("card", card.map(|c| c.to_string()))?;
            d.set_item("cause", cause_name(cause))?;
            "drew"
        }
        Event::UpCard { card } => {
            d.set_item("card", card.to_string())?;
            "up_card"
        }
        Event::StockRebuilt { size } => {
            d.set_item("size", size)?;
            "stock_rebuilt"
        }
        Event::TurnStarted { seat } => {
            d.set_item("seat", seat)?;
            "turn_started"
        }
        Event::Played {
            seat,
            card,
            suit,
            call,
        } => {
            d.set_item("seat", seat)?;
            d.set_item("card", card.to_string())?;
            d.set_item("suit", suit.map(|s| s.to_string()))?;
            d.set_item("call", call.text())?;
            "played"
        }
        Event::SuitDeclared { seat, suit } => {
            d.set_item("seat", seat)?;
            d.set_item("suit", suit.to_string())?;
            "suit_declared"
        }
        Event::Passed { seat, automatic } => {
            d.set_item("seat", seat)?;
            d.set_item("automatic", automatic)?;
            "passed"
        }
        Event::Skipped { seat } => {
            d.set_item("seat", seat)?;
            "skipped"
        }
        Event::DirectionChanged { clockwise } => {
            d.set_item("clockwise", clockwise)?;
            "direction_changed"
        }
        Event::Announced { seat, call, valid } => {
            d.set_item("seat", seat)?;
            d.set_item("call", call.text())?;
            d.set_item("valid", valid)?;
            "announced"
        }
        Event::OffenceOpened { seat, kind } => {
            d.set_item("seat", seat)?;
            d.set_item("offence", kind.name())?;
            "offence_opened"
        }
        Event::OffenceExpired { seat } => {
            d.set_item("seat", seat)?;
            "offence_expired"
        }
        Event::OffenceCured { seat } => {
            d.set_item("seat", seat)?;
            "offence_cured"
        }
        Event::Challenged { by, outcome } => {
            d.set_item("by", by)?;
            match outcome {
                ChallengeOutcome::Caught { offender } => {
                    d.set_item("outcome", "caught")?;
                    d.set_item("offender", offender)?;
                }
                ChallengeOutcome::False => d.set_item("outcome", "false")?,
            }
            "challenged"
        }
        Event::OffencePenalised { seat, kind } => {
            d.set_item("seat", seat)?;
            d.set_item("offence", kind.name())?;
            "offence_penalised"
        }
        Event::PendingOut { seat } => {
            d.set_item("seat", seat)?;
            "pending_out"
        }
        Event::RoundEnded(r) => {
            d.set_item("round", r.round)?;
            d.set_item("winner", r.winner())?;
            d.set_item("points", r.points[..seats].to_vec())?;
            d.set_item("totals", r.totals[..seats].to_vec())?;
            let hands: Vec<Vec<String>> = r.hands[..seats].iter().map(hand_list).collect();
            d.set_item("hands", hands)?;
            "round_ended"
        }
        Event::MatchEnded => "match_ended",
    };
    d.set_item("kind", kind)?;
    Ok(d)
}

/// An observation as a dict (see `Game.observation`).
fn observation_dict<'py>(py: Python<'py>, o: &Observation) -> PyResult<Bound<'py, PyDict>> {
    let n = o.config.seats as usize;
    let d = PyDict::new(py);
    d.set_item("viewer", o.viewer)?;
    d.set_item("profile", o.config.profile.name())?;
    d.set_item("seats", o.config.seats)?;
    d.set_item("options", o.config.options.to_words())?;
    d.set_item("calls", o.config.calls.name())?;
    d.set_item("round", o.round)?;
    d.set_item("dealer", o.dealer)?;
    d.set_item("phase", o.phase.name())?;
    d.set_item("to_act", o.to_act)?;
    d.set_item("clockwise", o.clockwise)?;
    d.set_item("hand", hand_list(&o.hand))?;
    d.set_item("hand_sizes", ints(&o.hand_sizes[..n]))?;
    d.set_item("discard", cards(o.discard.as_slice().iter().copied()))?;
    d.set_item("top", o.discard.top().map(|c| c.to_string()))?;
    d.set_item("named_suit", o.named_suit.map(|s| s.to_string()))?;
    d.set_item("debt", o.debt)?;
    d.set_item("stock_size", o.stock_size)?;
    match o.offence {
        Some(off) => {
            let od = PyDict::new(py);
            od.set_item("offender", off.offender)?;
            od.set_item("kind", off.kind.name())?;
            d.set_item("offence", od)?;
        }
        None => d.set_item("offence", py.None())?,
    }
    d.set_item("pending_out", o.pending_out)?;
    let calls: Vec<&str> = o.last_calls[..n].iter().map(|c| c.text()).collect();
    d.set_item("last_calls", calls)?;
    d.set_item("just_accused", o.just_accused)?;
    d.set_item("drawn_card", o.drawn_card.map(|c| c.to_string()))?;
    d.set_item("penalty_cards", hand_list(&o.penalty_cards))?;
    d.set_item("turns", o.turns)?;
    d.set_item("totals", o.totals[..n].to_vec())?;
    d.set_item("rounds_won", o.rounds_won[..n].to_vec())?;
    let legal: Vec<usize> = o.legal.iter().map(Action::index).collect();
    d.set_item("legal_actions", legal)?;
    Ok(d)
}

/// One match of Mau Mau: the engine's `Game` with the events of its last step.
///
/// `Game(profile="classic", seats=4, options="-", calls="challenge", seed=0,
/// max_turns_per_round=1000, max_rounds=1000)` deals a new match from `seed` (the same seed and
/// actions give the same match as the Rust engine and the server). `options` are the option words
/// of the command line and the position notation (`deck32,limit150`), `-` for none.
#[pyclass(name = "Game", module = "maumau_engine", from_py_object)]
#[derive(Clone)]
pub struct PyGame {
    game: Game,
    events: Vec<Event>,
}

#[pymethods]
impl PyGame {
    #[new]
    #[pyo3(signature = (profile="classic", seats=4, options="-", calls="challenge", seed=0, max_turns_per_round=1000, max_rounds=1000))]
    fn new(
        profile: &str,
        seats: u8,
        options: &str,
        calls: &str,
        seed: u64,
        max_turns_per_round: u16,
        max_rounds: u16,
    ) -> PyResult<PyGame> {
        let config = make_config(
            profile,
            seats,
            options,
            calls,
            max_turns_per_round,
            max_rounds,
        )?;
        let mut events = Vec::new();
        let game = Game::new_with(config, seed, &mut events).map_err(config_error)?;
        Ok(PyGame { game, events })
    }

    /// A game from a position string (the engine's notation, one line; see `position()`).
    #[staticmethod]
    fn from_position(text: &str) -> PyResult<PyGame> {
        let game =
            Game::from_position(text).map_err(|e| InvalidPosition::new_err(e.to_string()))?;
        Ok(PyGame {
            game,
            events: Vec::new(),
        })
    }

    /// A match whose first round is dealt from `deck` (card texts in dealing order: the first
    /// card to the seat after `dealer`, then the up-card, then the stock, top first); later
    /// rounds are shuffled from `seed`.
    #[staticmethod]
    #[pyo3(signature = (deck, dealer=0, profile="classic", seats=4, options="-", calls="challenge", seed=0, max_turns_per_round=1000, max_rounds=1000))]
    #[allow(clippy::too_many_arguments)]
    fn from_deck(
        deck: Vec<String>,
        dealer: u8,
        profile: &str,
        seats: u8,
        options: &str,
        calls: &str,
        seed: u64,
        max_turns_per_round: u16,
        max_rounds: u16,
    ) -> PyResult<PyGame> {
        let config = make_config(
            profile,
            seats,
            options,
            calls,
            max_turns_per_round,
            max_rounds,
        )?;
        let deck: Vec<Card> = deck
            .iter()
            .map(|c| c.parse::<Card>())
            .collect::<Result<_, _>>()
            .map_err(|e| InvalidPosition::new_err(e.to_string()))?;
        let mut events = Vec::new();
        let game = Game::from_deck(config, seed, dealer, &deck, &mut events)
            .map_err(|e| InvalidPosition::new_err(e.to_string()))?;
        Ok(PyGame { game, events })
    }

    /// The seat that must act, or `None` when the match is over.
    #[getter]
    fn to_act(&self) -> Option<u8> {
        self.game.to_act()
    }

    /// Number of seats.
    #[getter]
    fn seats(&self) -> u8 {
        self.game.seats()
    }

    /// True once the match is over.
    #[getter]
    fn is_over(&self) -> bool {
        self.game.to_act().is_none()
    }

    /// The profile's name.
    #[getter]
    fn profile(&self) -> &'static str {
        self.game.config().profile.name()
    }

    /// `seat`'s legal actions (default: the seat to act) as dense indices.
    #[pyo3(signature = (seat=None))]
    fn legal_actions(&self, seat: Option<u8>) -> Vec<usize> {
        match seat.or(self.game.to_act()) {
            Some(s) => self
                .game
                .legal_actions(s)
                .iter()
                .map(Action::index)
                .collect(),
            None => Vec::new(),
        }
    }

    /// `seat`'s legal actions (default: the seat to act) as text (`play 7H mau`, `draw`, ...).
    #[pyo3(signature = (seat=None))]
    fn legal_action_texts(&self, seat: Option<u8>) -> Vec<String> {
        match seat.or(self.game.to_act()) {
            Some(s) => self
                .game
                .legal_actions(s)
                .iter()
                .map(|a| a.to_string())
                .collect(),
            None => Vec::new(),
        }
    }

    /// `seat`'s legal actions (default: the seat to act) as a bool array of 202 entries.
    #[pyo3(signature = (seat=None))]
    fn legal_mask<'py>(&self, py: Python<'py>, seat: Option<u8>) -> Bound<'py, PyArray1<bool>> {
        let mut mask = vec![false; ACTION_COUNT];
        if let Some(s) = seat.or(self.game.to_act()) {
            crate::core::encode_mask(&self.game.legal_actions(s), &mut mask);
        }
        mask.into_pyarray(py)
    }

    /// Applies `action` (a dense index or its text) by `seat` (default: the seat to act) and
    /// returns the step's events as `seat` may see them. Raises `RejectedAction` (with the
    /// engine's `code`) and changes nothing if the engine refuses it.
    #[pyo3(signature = (action, seat=None))]
    fn apply<'py>(
        &mut self,
        py: Python<'py>,
        action: &Bound<'py, PyAny>,
        seat: Option<u8>,
    ) -> PyResult<Bound<'py, PyList>> {
        let action = read_action(action)?;
        let seat = match seat.or(self.game.to_act()) {
            Some(s) => s,
            None => return Err(rejected(py, Rejection::MatchOver, 0, action)),
        };
        let mut events = Vec::new();
        self.game
            .apply_with(seat, action, &mut events)
            .map_err(|r| rejected(py, r, seat, action))?;
        self.events = events;
        self.events_for(py, Some(seat))
    }

    /// The fast path of `apply` for environments: applies `action` (a dense index) for the seat
    /// to act and returns the step's rewards per seat (`reward` is `win` or `score`), or `None`
    /// when the step gives no seat a reward (no round ended), instead of the events (still kept
    /// for `events()`). Refusals as in `apply`.
    #[pyo3(signature = (action, reward="win"))]
    fn step(&mut self, py: Python<'_>, action: i64, reward: &str) -> PyResult<Option<Vec<f32>>> {
        let mode = reward_mode(reward)?;
        self.step_rewarded(py, action, mode)
    }

    /// The events of the last step (the deal, for a new game), as `seat` may see them (a card
    /// another seat drew is `None`); `seat=None` gives them with full information.
    #[pyo3(signature = (seat=None))]
    fn events<'py>(&self, py: Python<'py>, seat: Option<u8>) -> PyResult<Bound<'py, PyList>> {
        match seat {
            Some(s) => self.events_for(py, Some(s)),
            None => {
                let n = self.game.seats() as usize;
                let list = PyList::empty(py);
                for e in &self.events {
                    list.append(event_dict(py, e, n)?)?;
                }
                Ok(list)
            }
        }
    }

    /// Rewards of the last step per seat (`mode` is `win` or `score`; see the package README).
    #[pyo3(signature = (mode="win"))]
    fn step_rewards(&self, mode: &str) -> PyResult<Vec<f32>> {
        let mode = RewardMode::parse(mode)
            .ok_or_else(|| InvalidConfig::new_err(format!("reward `{mode}`: use win or score")))?;
        let mut r = vec![0.0; self.game.seats() as usize];
        for e in &self.events {
            crate::core::add_event_rewards(mode, &self.game, e, &mut r);
        }
        Ok(r)
    }

    /// A copy that evolves on its own.
    fn clone(&self) -> PyGame {
        Clone::clone(self)
    }

    fn __copy__(&self) -> PyGame {
        Clone::clone(self)
    }

    fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> PyGame {
        Clone::clone(self)
    }

    /// What `seat` may see, as a dict: public table state, its own hand, its drawn and penalty
    /// cards while it moves, and its legal actions (`legal_actions`, dense indices).
    fn observation<'py>(&self, py: Python<'py>, seat: u8) -> PyResult<Bound<'py, PyDict>> {
        self.check_seat(seat)?;
        observation_dict(py, &self.game.observation(seat))
    }

    /// What `seat` may see, as a float32 vector of `OBS_LEN` numbers (layout: `OBS_LAYOUT` and
    /// the package README).
    fn observation_vector<'py>(
        &self,
        py: Python<'py>,
        seat: u8,
    ) -> PyResult<Bound<'py, PyArray1<f32>>> {
        self.check_seat(seat)?;
        let mut v = vec![0.0; OBS_LEN];
        crate::core::encode(&self.game.observation(seat), &mut v);
        Ok(v.into_pyarray(py))
    }

    /// The environments' observation of `seat` in one call: `(vector, mask)`, the vector as in
    /// `observation_vector` and the mask as `int8[202]`, all zero unless `seat` is to act.
    fn observe<'py>(&self, py: Python<'py>, seat: u8) -> PyResult<Observed<'py>> {
        self.check_seat(seat)?;
        let mut v = vec![0.0; OBS_LEN];
        let mut mask = vec![0i8; ACTION_COUNT];
        crate::core::encode_seat(&self.game, seat, &mut v, &mut mask);
        Ok((v.into_pyarray(py), mask.into_pyarray(py)))
    }

    /// The position: the whole state as one line of the engine's notation (hidden cards too).
    fn position(&self) -> String {
        self.game.position()
    }

    /// The match result once it is over (`None` before): placings (1 is best), totals, rounds
    /// won, rounds played, winners.
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(r) = self.game.match_result() else {
            return Ok(None);
        };
        let n = r.seats as usize;
        let d = PyDict::new(py);
        d.set_item("placings", ints(&r.placings[..n]))?;
        d.set_item("totals", r.totals[..n].to_vec())?;
        d.set_item("rounds_won", r.rounds_won[..n].to_vec())?;
        d.set_item("rounds", r.rounds)?;
        d.set_item("winners", r.winners().map(u32::from).collect::<Vec<_>>())?;
        Ok(Some(d))
    }

    fn __eq__(&self, other: &PyGame) -> bool {
        self.game == other.game
    }

    fn __repr__(&self) -> String {
        format!("Game.from_position({:?})", self.game.position())
    }

    /// A readable table: round, top card, debt, each seat's cards, who acts.
    fn __str__(&self) -> String {
        let g = &self.game;
        let mut s = format!(
            "{} with {} seats, round {}, dealer S{}, {}\n",
            g.config().profile,
            g.seats(),
            g.round(),
            g.dealer(),
            if g.clockwise() {
                "clockwise"
            } else {
                "counter-clockwise"
            }
        );
        s += &format!("top {}", g.top());
        if let Some(suit) = g.named_suit() {
            s += &format!(" (suit {suit})");
        }
        if g.debt() > 0 {
            s += &format!(", debt {}", g.debt());
        }
        s += &format!(", stock {}\n", g.stock().len());
        for seat in 0..g.seats() {
            let marker = if g.to_act() == Some(seat) { '>' } else { ' ' };
            s += &format!(
                "{marker} S{seat} total {:>4}  {}\n",
                g.totals()[seat as usize],
                hand_list(g.hand(seat)).join(" ")
            );
        }
        match g.match_result() {
            Some(r) => {
                let winners: Vec<String> = r.winners().map(|w| format!("S{w}")).collect();
                s += &format!("match over: {} won", winners.join(", "));
            }
            None => {
                s += &format!("phase {}", g.phase().name());
                if let Some(o) = g.offence() {
                    s += &format!(", open offence S{} {}", o.offender, o.kind.name());
                }
            }
        }
        s
    }
}

impl PyGame {
    /// `step`'s work: applies `action` for the seat to act, keeps the step's events and returns
    /// the rewards, or `None` when no round ended.
    fn step_rewarded(
        &mut self,
        py: Python<'_>,
        action: i64,
        mode: RewardMode,
    ) -> PyResult<Option<Vec<f32>>> {
        let action = usize::try_from(action)
            .ok()
            .and_then(Action::from_index)
            .ok_or_else(|| {
                InvalidAction::new_err(format!(
                    "{action} is not an action index (0..{ACTION_COUNT})"
                ))
            })?;
        let Some(seat) = self.game.to_act() else {
            return Err(rejected(py, Rejection::MatchOver, 0, action));
        };
        // The step's events go after the last step's, which are dropped once it succeeded (a
        // refused action reports none): the list is allocated once, not at every step.
        let before = self.events.len();
        if let Err(r) = self.game.apply_with(seat, action, &mut self.events) {
            return Err(rejected(py, r, seat, action));
        }
        self.events.drain(..before);
        let ends = |e: &Event| matches!(e, Event::RoundEnded(_) | Event::MatchEnded);
        if !self.events.iter().any(ends) {
            return Ok(None);
        }
        let mut r = vec![0.0; self.game.seats() as usize];
        for e in &self.events {
            crate::core::add_event_rewards(mode, &self.game, e, &mut r);
        }
        Ok(Some(r))
    }

    fn check_seat(&self, seat: u8) -> PyResult<()> {
        if seat >= self.game.seats() {
            return Err(InvalidAction::new_err(format!(
                "seat {seat} is not at this table of {}",
                self.game.seats()
            )));
        }
        Ok(())
    }

    fn events_for<'py>(&self, py: Python<'py>, seat: Option<u8>) -> PyResult<Bound<'py, PyList>> {
        let n = self.game.seats() as usize;
        let list = PyList::empty(py);
        for e in &self.events {
            list.append(event_dict(py, &event_for(e, seat), n)?)?;
        }
        Ok(list)
    }
}

/// N matches stepped together from numpy arrays, without the GIL.
///
/// `VecEnv(num_envs, profile="classic", seats=4, options="-", calls="challenge", seed=0,
/// reward="win", max_turns_per_round=1000, max_rounds=1000)`. Every game is played by whoever
/// chooses its actions (self-play): each step takes one action per game for that game's seat to
/// act. `reset()` and `step(actions)` return the same arrays every time, overwritten in place:
/// `obs` (N × OBS_LEN float32, the seat to act's view), `mask` (N × 202 bool), `to_act` (N
/// int64), and from `step` also `rewards` (N × seats float32, every seat's reward of this step)
/// and `dones` (N bool: the match ended; a new one is already dealt and `obs` shows it).
#[pyclass(name = "VecEnv", module = "maumau_engine")]
pub struct PyVecEnv {
    games: VecGames,
    seed: u64,
    obs: Py<PyArray2<f32>>,
    mask: Py<PyArray2<bool>>,
    to_act: Py<PyArray1<i64>>,
    rewards: Py<PyArray2<f32>>,
    dones: Py<PyArray1<bool>>,
    actions: Py<PyArray1<i64>>,
}

/// `Game.observe`'s answer: the observation vector and the int8 action mask.
type Observed<'py> = (Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<i8>>);

type ResetArrays = (Py<PyArray2<f32>>, Py<PyArray2<bool>>, Py<PyArray1<i64>>);

type StepArrays = (
    Py<PyArray2<f32>>,
    Py<PyArray2<bool>>,
    Py<PyArray1<i64>>,
    Py<PyArray2<f32>>,
    Py<PyArray1<bool>>,
);

fn step_error(py: Python<'_>, e: StepError) -> PyErr {
    match e {
        StepError::NotAnAction { game, action } => InvalidAction::new_err(format!(
            "actions[{game}] = {action} is not an action index (0..{ACTION_COUNT})"
        )),
        StepError::Rejected {
            game,
            action,
            rejection,
        } => {
            let err = RejectedAction::new_err(format!(
                "actions[{game}] `{action}` refused: {rejection} ({}); no game changed",
                rejection.code()
            ));
            let v = err.value(py);
            let _ = v.setattr("code", rejection.code());
            let _ = v.setattr("game", game);
            let _ = v.setattr("action", action.index());
            err
        }
        StepError::Shape(why) => PyValueError::new_err(why),
    }
}

#[pymethods]
impl PyVecEnv {
    #[new]
    #[pyo3(signature = (num_envs, profile="classic", seats=4, options="-", calls="challenge", seed=0, reward="win", max_turns_per_round=1000, max_rounds=1000))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        num_envs: usize,
        profile: &str,
        seats: u8,
        options: &str,
        calls: &str,
        seed: u64,
        reward: &str,
        max_turns_per_round: u16,
        max_rounds: u16,
    ) -> PyResult<PyVecEnv> {
        let config = make_config(
            profile,
            seats,
            options,
            calls,
            max_turns_per_round,
            max_rounds,
        )?;
        let mode = reward_mode(reward)?;
        let games = VecGames::new(config, num_envs, seed, mode).map_err(config_error)?;
        let n = num_envs;
        let s = seats as usize;
        Ok(PyVecEnv {
            games,
            seed,
            obs: PyArray2::zeros(py, [n, OBS_LEN], false).unbind(),
            mask: PyArray2::zeros(py, [n, ACTION_COUNT], false).unbind(),
            to_act: PyArray1::zeros(py, n, false).unbind(),
            rewards: PyArray2::zeros(py, [n, s], false).unbind(),
            dones: PyArray1::zeros(py, n, false).unbind(),
            actions: PyArray1::zeros(py, n, false).unbind(),
        })
    }

    /// Number of games.
    #[getter]
    fn num_envs(&self) -> usize {
        self.games.len()
    }

    /// Seats per game.
    #[getter]
    fn seats(&self) -> usize {
        self.games.seats()
    }

    /// Matches finished (and replaced by new ones) so far.
    #[getter]
    fn matches_finished(&self) -> u64 {
        self.games.matches_finished()
    }

    /// Deals new matches (seed stream restarted from `seed`, default the one given at
    /// creation) and returns `(obs, mask, to_act)`.
    #[pyo3(signature = (seed=None))]
    fn reset(&mut self, py: Python<'_>, seed: Option<u64>) -> PyResult<ResetArrays> {
        if let Some(s) = seed {
            self.seed = s;
        }
        self.games.reset_all(self.seed);
        let (mut obs, mut mask) = (
            self.obs.bind(py).readwrite(),
            self.mask.bind(py).readwrite(),
        );
        let mut to_act = self.to_act.bind(py).readwrite();
        let mut rewards = self.rewards.bind(py).readwrite();
        let mut dones = self.dones.bind(py).readwrite();
        let out = StepOut {
            obs: obs.as_slice_mut()?,
            mask: mask.as_slice_mut()?,
            to_act: to_act.as_slice_mut()?,
            rewards: rewards.as_slice_mut()?,
            dones: dones.as_slice_mut()?,
        };
        let games = &mut self.games;
        py.detach(|| games.observe(out))
            .map_err(|e| step_error(py, e))?;
        Ok((
            self.obs.clone_ref(py),
            self.mask.clone_ref(py),
            self.to_act.clone_ref(py),
        ))
    }

    /// Applies `actions[i]` (dense indices, one per game: an int64 array is used as it is, any
    /// other sequence of ints is converted) for each game's seat to act and returns `(obs, mask,
    /// to_act, rewards, dones)`. All or nothing: a refused action raises `RejectedAction` (with
    /// `code` and `game`) and no game changes. Runs without the GIL.
    fn step(&mut self, py: Python<'_>, actions: &Bound<'_, PyAny>) -> PyResult<StepArrays> {
        let actions: PyReadonlyArray1<'_, i64> = match actions.extract() {
            Ok(a) => a,
            Err(_) => py
                .import("numpy")?
                .call_method1("asarray", (actions, "int64"))?
                .extract()?,
        };
        let actions = actions.as_slice()?;
        let (mut obs, mut mask) = (
            self.obs.bind(py).readwrite(),
            self.mask.bind(py).readwrite(),
        );
        let mut to_act = self.to_act.bind(py).readwrite();
        let mut rewards = self.rewards.bind(py).readwrite();
        let mut dones = self.dones.bind(py).readwrite();
        let out = StepOut {
            obs: obs.as_slice_mut()?,
            mask: mask.as_slice_mut()?,
            to_act: to_act.as_slice_mut()?,
            rewards: rewards.as_slice_mut()?,
            dones: dones.as_slice_mut()?,
        };
        let games = &mut self.games;
        py.detach(|| games.step(actions, out))
            .map_err(|e| step_error(py, e))?;
        Ok((
            self.obs.clone_ref(py),
            self.mask.clone_ref(py),
            self.to_act.clone_ref(py),
            self.rewards.clone_ref(py),
            self.dones.clone_ref(py),
        ))
    }

    /// A uniformly random legal action for each game's seat to act (int64 array, reused), from
    /// a generator seeded by the environment's seed: a baseline opponent and the benchmark's
    /// player.
    fn random_actions(&mut self, py: Python<'_>) -> PyResult<Py<PyArray1<i64>>> {
        {
            let mut a = self.actions.bind(py).readwrite();
            let slice = a.as_slice_mut()?;
            let games = &mut self.games;
            py.detach(|| games.random_actions(slice));
        }
        Ok(self.actions.clone_ref(py))
    }

    /// Game `i` as a `Game` (a copy).
    fn game(&self, i: usize) -> PyResult<PyGame> {
        let game = *self
            .games
            .games()
            .get(i)
            .ok_or_else(|| PyValueError::new_err(format!("no game {i}")))?;
        Ok(PyGame {
            game,
            events: Vec::new(),
        })
    }
}

/// The native module `maumau_engine._core`.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add_class::<PyGame>()?;
    m.add_class::<PyVecEnv>()?;
    m.add_class::<aec::PyAecBase>()?;
    m.add_class::<bots::PyBot>()?;
    m.add_class::<bots::PyTable>()?;
    m.add("MaumauError", py.get_type::<MaumauError>())?;
    m.add("RejectedAction", py.get_type::<RejectedAction>())?;
    m.add("InvalidAction", py.get_type::<InvalidAction>())?;
    m.add("InvalidConfig", py.get_type::<InvalidConfig>())?;
    m.add("InvalidPosition", py.get_type::<InvalidPosition>())?;
    m.add("OBS_LEN", OBS_LEN)?;
    m.add("ACTION_COUNT", ACTION_COUNT)?;
    m.add("MAX_SEATS", crate::core::MAX_SEATS)?;
    let bot_names: Vec<&str> = maumau_bot_sdk::bots::BotKind::ALL
        .iter()
        .map(|k| k.name())
        .collect();
    m.add("BOTS", bot_names)?;
    let layout = PyDict::new(py);
    for (name, start, end) in crate::core::LAYOUT {
        layout.set_item(name, (start, end))?;
    }
    m.add("OBS_LAYOUT", layout)?;
    let texts: Vec<String> = (0..ACTION_COUNT)
        .filter_map(Action::from_index)
        .map(|a| a.to_string())
        .collect();
    m.add("ACTION_TEXTS", texts)?;
    #[cfg(feature = "runner")]
    runner::register(m)?;
    Ok(())
}
