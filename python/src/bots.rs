//! The built-in bots in Python: `Bot` (one bot that chooses for a seat of a `Game`) and `Table`
//! (a match whose other seats the bots play at engine speed, [`crate::table`]). Names are those
//! of `maumau tournament`: `random`, `heuristic`, `search`, `search:N`.

use maumau_engine::{ACTION_COUNT, Action, Seat, event_for};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use crate::core::{OBS_LEN, encode, encode_mask};
use crate::table::{BotSpec, SeatBot, Table};
use crate::{
    InvalidAction, InvalidConfig, PyGame, config_error, make_config, read_action, rejected,
};

fn parse_spec(name: &str) -> PyResult<BotSpec> {
    name.parse().map_err(InvalidConfig::new_err)
}

/// A built-in bot: `Bot(name, seed=0)`, `name` one of `random`, `heuristic`, `search` or
/// `search:N` (the search bot with N playouts per decision; the default is 2000, a few
/// milliseconds per decision). Deterministic for its seed.
///
/// `act(game, seat=None)` returns the bot's action for `seat` (default: the seat to act) as a
/// dense index. A bot that remembers what it saw (`search` infers hidden cards from the play)
/// plays best when shown every step's events: call `see(game, seat)` after each `game.apply`.
/// `Table` does all of that at engine speed.
#[pyclass(name = "Bot", module = "maumau_engine")]
pub struct PyBot {
    spec: BotSpec,
    seed: u64,
    bot: SeatBot,
}

#[pymethods]
impl PyBot {
    #[new]
    #[pyo3(signature = (name, seed=0))]
    fn new(name: &str, seed: u64) -> PyResult<PyBot> {
        let spec = parse_spec(name)?;
        Ok(PyBot {
            spec,
            seed,
            bot: spec.build(seed),
        })
    }

    /// The bot's name, as given (`search:200`).
    #[getter]
    fn name(&self) -> String {
        self.spec.to_string()
    }

    /// The bot's action for `seat` (default: the seat to act) as a dense index: its turn action
    /// when `seat` is to act (always a legal one); otherwise its out-of-turn action (a challenge,
    /// a romanian-32 late cure), or `None` when it has none or lets the moment pass, and `None`
    /// once the match is over. The search bot thinks without holding the GIL.
    #[pyo3(signature = (game, seat=None))]
    fn act(
        &mut self,
        py: Python<'_>,
        game: PyRef<'_, PyGame>,
        seat: Option<u8>,
    ) -> PyResult<Option<usize>> {
        let g = game.game;
        drop(game);
        let Some(to_act) = g.to_act() else {
            return Ok(None);
        };
        let seat = seat.unwrap_or(to_act);
        check_seat(seat, g.seats())?;
        let legal = g.legal_actions(seat);
        if legal.is_empty() {
            return Ok(None);
        }
        let bot = &mut self.bot;
        let chosen = if seat == to_act {
            let a = match bot.quick_decide(&legal) {
                Some(a) => a,
                None => py.detach(|| bot.decide(&g.observation(seat))),
            };
            Some(if legal.contains(&a) { a } else { legal[0] })
        } else {
            bot.react(&g.observation(seat))
                .filter(|a| legal.contains(a))
        };
        Ok(chosen.map(|a| a.index()))
    }

    /// Shows the bot the events of `game`'s last step as `seat` saw them (what a bot playing
    /// that seat over gRPC is sent). Only bots that remember use them (`search`).
    fn see(&mut self, game: PyRef<'_, PyGame>, seat: u8) -> PyResult<()> {
        check_seat(seat, game.game.seats())?;
        if self.bot.listens() {
            for e in &game.events {
                self.bot.on_event(&event_for(e, Some(seat)));
            }
        }
        Ok(())
    }

    /// Forgets everything seen: a fresh bot of the same name, seeded with `seed` (default: the
    /// seed it was made with). Use it between matches.
    #[pyo3(signature = (seed=None))]
    fn reset(&mut self, seed: Option<u64>) {
        if let Some(s) = seed {
            self.seed = s;
        }
        self.bot = self.spec.build(self.seed);
    }

    fn __repr__(&self) -> String {
        format!("Bot({:?}, seed={})", self.spec.to_string(), self.seed)
    }
}

fn check_seat(seat: Seat, seats: u8) -> PyResult<()> {
    if seat >= seats {
        return Err(InvalidAction::new_err(format!(
            "seat {seat} is not at this table of {seats}"
        )));
    }
    Ok(())
}

/// `Game.observe`'s arrays, with the mask as bools.
type Observed<'py> = (Bound<'py, PyArray1<f32>>, Bound<'py, PyArray1<bool>>);

/// A match whose seats are played by built-in bots or by the caller.
///
/// `Table(bots, profile="classic", options="-", calls="challenge", reward="win",
/// max_turns_per_round=1000, max_rounds=1000)`: `bots` has one entry per seat, a bot's name
/// (`"random"`, `"heuristic"`, `"search"`, `"search:N"`) or `None` for a seat the caller plays.
/// `reset(seed)` deals a match (the bot at seat `s` is seeded from the match seed and `s`, as on
/// the server and in tournaments) and plays the bots until a caller's seat must act; `step(action)`
/// applies that seat's action and does the same. Both return the caller's seat to act, or `None`
/// once the match is over, and leave in `rewards` every seat's rewards of the actions they played.
/// The bots play without the GIL.
#[pyclass(name = "Table", module = "maumau_engine")]
pub struct PyTable {
    table: Table,
}

#[pymethods]
impl PyTable {
    #[new]
    #[pyo3(signature = (bots, profile="classic", options="-", calls="challenge", reward="win", max_turns_per_round=1000, max_rounds=1000))]
    fn new(
        bots: Vec<Option<String>>,
        profile: &str,
        options: &str,
        calls: &str,
        reward: &str,
        max_turns_per_round: u16,
        max_rounds: u16,
    ) -> PyResult<PyTable> {
        let seats = u8::try_from(bots.len())
            .map_err(|_| InvalidConfig::new_err(format!("{} seats are too many", bots.len())))?;
        let config = make_config(
            profile,
            seats,
            options,
            calls,
            max_turns_per_round,
            max_rounds,
        )?;
        let mode = crate::reward_mode(reward)?;
        let specs = bots
            .iter()
            .map(|b| b.as_deref().map(parse_spec).transpose())
            .collect::<PyResult<Vec<_>>>()?;
        let table = Table::new(config, specs, mode).map_err(config_error)?;
        Ok(PyTable { table })
    }

    /// Deals a new match from `seed` with fresh bots and plays until a seat the caller plays must
    /// act: returns that seat, or `None` when the match is over (a table of bots only plays the
    /// whole match here).
    #[pyo3(signature = (seed=0))]
    fn reset(&mut self, py: Python<'_>, seed: u64) -> Option<u8> {
        let table = &mut self.table;
        py.detach(|| table.reset(seed))
    }

    /// Applies `action` (a dense index or its text) for the seat to act, then plays the bots
    /// until a seat the caller plays must act: returns it, or `None` once the match is over. A
    /// refused action raises `RejectedAction` (with the engine's `code`) and changes nothing.
    fn step(&mut self, py: Python<'_>, action: &Bound<'_, PyAny>) -> PyResult<Option<u8>> {
        let action = read_action(action)?;
        let seat = self.table.to_act().unwrap_or(0);
        let table = &mut self.table;
        py.detach(|| table.step(action))
            .map_err(|r| rejected(py, r, seat, action))
    }

    /// What `seat` may see, as `(float32[OBS_LEN], bool[202])`: the observation vector and the
    /// legal-action mask (all false unless `seat` is to act). New arrays at every call.
    fn observe<'py>(&self, py: Python<'py>, seat: u8) -> PyResult<Observed<'py>> {
        let game = self.table.game();
        check_seat(seat, game.seats())?;
        let o = game.observation(seat);
        let mut v = vec![0.0; OBS_LEN];
        encode(&o, &mut v);
        let mut mask = vec![false; ACTION_COUNT];
        if game.to_act() == Some(seat) {
            encode_mask(&o.legal, &mut mask);
        }
        Ok((v.into_pyarray(py), mask.into_pyarray(py)))
    }

    /// The seat to act (always one the caller plays), or `None` once the match is over.
    #[getter]
    fn to_act(&self) -> Option<u8> {
        self.table.to_act()
    }

    /// True once the match is over.
    #[getter]
    fn is_over(&self) -> bool {
        self.table.to_act().is_none()
    }

    /// Number of seats.
    #[getter]
    fn seats(&self) -> u8 {
        self.table.game().seats()
    }

    /// Every seat's rewards (by the table's reward mode) of the actions played by the last
    /// `reset` or `step`: the caller's action and the bots' after it.
    #[getter]
    fn rewards(&self) -> Vec<f32> {
        self.table.rewards().to_vec()
    }

    /// Per seat, the name of the bot that plays it, or `None` for the caller.
    #[getter]
    fn bots(&self) -> Vec<Option<String>> {
        self.table
            .specs()
            .iter()
            .map(|s| s.map(|s| s.to_string()))
            .collect()
    }

    /// The match as a `Game` (a copy): `result()`, `position()`, `str()`, ...
    fn game(&self) -> PyGame {
        PyGame {
            game: *self.table.game(),
            events: Vec::new(),
        }
    }

    /// The legal actions of the seat to act, as dense indices (empty once the match is over).
    fn legal_actions(&self) -> Vec<usize> {
        let game = self.table.game();
        game.to_act()
            .map(|s| game.legal_actions(s).iter().map(Action::index).collect())
            .unwrap_or_default()
    }

    fn __repr__(&self) -> String {
        let g = self.table.game();
        let bots: Vec<String> = self
            .table
            .specs()
            .iter()
            .map(|s| s.map_or("None".into(), |s| format!("'{s}'")))
            .collect();
        format!(
            "<Table [{}] {}, {}>",
            bots.join(", "),
            g.config().profile.name(),
            match g.to_act() {
                Some(s) => format!("S{s} to act"),
                None => "over".into(),
            }
        )
    }
}
