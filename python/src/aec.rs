//! The PettingZoo protocol of the AEC environment in Rust (`maumau_engine._core.AecBase`), the
//! native base class of `maumau_engine.env.MauMauEnv`: `last`, `step`, `observe` and
//! `agent_iter` with the selection and PettingZoo's dicts (`rewards`, `_cumulative_rewards`,
//! `terminations`, `truncations`, `infos`) and `agents` list, so that a loop's `env.last()` and
//! `env.step(a)` are single native calls that run no Python code. The dicts and the list are
//! real Python objects, updated in place by `step`, so PettingZoo's own helpers
//! (`_was_dead_step`, which `step` calls once the match is over) and tests work on them.
//!
//! Each seat's observation and action mask live in one float32 numpy array allocated once per
//! seat (the mask's bytes after the observation), which the user sees through read-only views.
//! It is written, only when stale, through a Python buffer held open on it for the
//! environment's life: one copy per write, without unsafe code and without rust-numpy's
//! borrow tracking (which cost more than the copy).

use numpy::PyArray1;
use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyAttributeError, PyKeyError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyList, PyString, PyTuple};
use pyo3::{PyTraverseError, PyVisit};

use crate::core::{OBS_LEN, RewardMode, encode_seat};
use crate::{InvalidConfig, PyGame};
use maumau_engine::ACTION_COUNT;

/// The floats after the observation that hold the action mask's bytes.
const MASK_WORDS: usize = ACTION_COUNT.div_ceil(4);
/// A seat's buffer, in floats.
const BUFFER_LEN: usize = OBS_LEN + MASK_WORDS;

/// One match (`game`) as a PettingZoo AEC environment: the protocol's methods and state; the
/// Python subclass `MauMauEnv` adds the spaces, `reset`'s seeding and rendering.
///
/// The subclass calls `_bind(game, reward, agents, human)` once (the agents' names, one per seat;
/// `human`: call `render()` after every step) and `_deal(game)` at every reset. `step(action)`
/// applies a dense action index for the selected agent (refusals as `Game.step`: nothing
/// changes) and does PettingZoo's bookkeeping: the acting agent's cumulative reward cleared, the
/// step's rewards (every seat's, when a round ended) set and accumulated, every agent terminated
/// when the match is over, the seat to act next selected. Once the match is over, `step` is
/// PettingZoo's `_was_dead_step`.
#[pyclass(name = "AecBase", module = "maumau_engine", subclass)]
pub struct PyAecBase {
    game: Option<Py<PyGame>>,
    mode: RewardMode,
    /// The agents' names, one per seat.
    names: Vec<Py<PyString>>,
    /// Each seat's array: the observation ([`OBS_LEN`] floats), then the mask's bytes.
    buffers: Vec<PyBuffer<f32>>,
    /// What `write` copies into a seat's array (kept to be overwritten, not zeroed, each time).
    scratch: Box<[f32; BUFFER_LEN]>,
    /// Each seat's observation dict (read-only views of its buffer), copied for the user.
    observations: Vec<Py<PyDict>>,
    /// The cumulative reward of an agent that just acted.
    zero: Py<PyFloat>,
    agents: Py<PyList>,
    rewards: Py<PyDict>,
    cumulative: Py<PyDict>,
    terminations: Py<PyDict>,
    truncations: Py<PyDict>,
    infos: Py<PyDict>,
    /// `agent_selection`, and its seat when it names one.
    selection: Option<Py<PyString>>,
    selected: Option<usize>,
    /// Bit `s` set: seat `s`'s arrays show the match as it is now.
    fresh: u64,
    over: bool,
    /// The last step gave rewards (so the next one clears them).
    rewarded: bool,
    human: bool,
}

#[pymethods]
impl PyAecBase {
    /// An environment with no match yet: the subclass's `__init__` calls `_bind` (every argument
    /// is the subclass's and ignored here).
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(
        py: Python<'_>,
        _args: &Bound<'_, PyTuple>,
        _kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyAecBase {
        PyAecBase {
            game: None,
            mode: RewardMode::Win,
            names: Vec::new(),
            buffers: Vec::new(),
            scratch: Box::new([0.0; BUFFER_LEN]),
            observations: Vec::new(),
            zero: PyFloat::new(py, 0.0).unbind(),
            agents: PyList::empty(py).unbind(),
            rewards: PyDict::new(py).unbind(),
            cumulative: PyDict::new(py).unbind(),
            terminations: PyDict::new(py).unbind(),
            truncations: PyDict::new(py).unbind(),
            infos: PyDict::new(py).unbind(),
            selection: None,
            selected: None,
            fresh: 0,
            over: true,
            rewarded: false,
            human: false,
        }
    }

    /// The Python objects held, for the garbage collector (a user may put the environment in
    /// its own `infos`).
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.game)?;
        for name in &self.names {
            visit.call(name)?;
        }
        for dict in &self.observations {
            visit.call(dict)?;
        }
        visit.call(&self.agents)?;
        visit.call(&self.rewards)?;
        visit.call(&self.cumulative)?;
        visit.call(&self.terminations)?;
        visit.call(&self.truncations)?;
        visit.call(&self.infos)?;
        visit.call(&self.selection)
    }

    /// Takes `game` as the match (not yet dealt to the agents: `_deal` does), the reward mode
    /// (`win` or `score`, else `InvalidConfig`), one agent name per seat, and whether to render
    /// after every step.
    fn _bind(
        &mut self,
        py: Python<'_>,
        game: Py<PyGame>,
        reward: &str,
        agents: Vec<Py<PyString>>,
        human: bool,
    ) -> PyResult<()> {
        let mode = crate::reward_mode(reward)?;
        let seats = game.borrow(py).game.seats() as usize;
        if agents.len() != seats {
            return Err(InvalidConfig::new_err(format!(
                "{} agent names for a game of {seats} seats",
                agents.len()
            )));
        }
        let read_only = |view: &Bound<'_, PyAny>| {
            view.getattr(intern!(py, "flags"))?
                .setattr(intern!(py, "writeable"), false)
        };
        self.buffers = Vec::with_capacity(seats);
        self.observations = Vec::with_capacity(seats);
        for _ in 0..seats {
            let buffer = PyArray1::<f32>::zeros(py, BUFFER_LEN, false);
            let obs = buffer.get_item(pyo3::types::PySlice::new(py, 0, OBS_LEN as isize, 1))?;
            let bytes = buffer.call_method1(intern!(py, "view"), (intern!(py, "int8"),))?;
            let start = (OBS_LEN * 4) as isize;
            let mask = bytes.get_item(pyo3::types::PySlice::new(
                py,
                start,
                start + ACTION_COUNT as isize,
                1,
            ))?;
            read_only(&obs)?;
            read_only(&mask)?;
            let dict = PyDict::new(py);
            dict.set_item(intern!(py, "observation"), obs)?;
            dict.set_item(intern!(py, "action_mask"), mask)?;
            self.buffers.push(PyBuffer::get(buffer.as_any())?);
            self.observations.push(dict.unbind());
        }
        self.game = Some(game);
        self.mode = mode;
        self.names = agents;
        self.human = human;
        self.fresh = 0;
        self.over = true;
        Ok(())
    }

    /// Deals `game` (as many seats) to the agents: every agent back, the dicts new (rewards 0,
    /// not terminated, not truncated, empty infos), the seat to act selected.
    fn _deal(&mut self, py: Python<'_>, game: Py<PyGame>) -> PyResult<()> {
        let (seats, to_act) = {
            let g = game.borrow(py);
            (g.game.seats() as usize, g.game.to_act())
        };
        if seats != self.names.len() {
            return Err(InvalidConfig::new_err(format!(
                "a game of {seats} seats for an environment of {}",
                self.names.len()
            )));
        }
        let Some(to_act) = to_act else {
            return Err(InvalidConfig::new_err("a match that is over at its deal"));
        };
        let dict = || PyDict::new(py);
        let (rewards, cumulative, terminations, truncations, infos) =
            (dict(), dict(), dict(), dict(), dict());
        for name in &self.names {
            rewards.set_item(name, 0.0)?;
            cumulative.set_item(name, 0.0)?;
            terminations.set_item(name, false)?;
            truncations.set_item(name, false)?;
            infos.set_item(name, PyDict::new(py))?;
        }
        self.agents = PyList::new(py, &self.names)?.unbind();
        self.rewards = rewards.unbind();
        self.cumulative = cumulative.unbind();
        self.terminations = terminations.unbind();
        self.truncations = truncations.unbind();
        self.infos = infos.unbind();
        self.game = Some(game);
        self.over = false;
        self.rewarded = false;
        let seat = to_act as usize;
        self.select(py, seat);
        self.fresh = 0;
        self.write(py, seat)
    }

    /// The match.
    #[getter]
    fn game(&self, py: Python<'_>) -> PyResult<Py<PyGame>> {
        Ok(self.bound_game()?.clone_ref(py))
    }

    /// The agents still in the match (PettingZoo's `agents`).
    #[getter]
    fn agents(&self, py: Python<'_>) -> Py<PyList> {
        self.agents.clone_ref(py)
    }

    #[setter]
    fn set_agents(&mut self, agents: Py<PyList>) {
        self.agents = agents;
    }

    /// Each agent's reward of the last step.
    #[getter]
    fn rewards(&self, py: Python<'_>) -> Py<PyDict> {
        self.rewards.clone_ref(py)
    }

    #[setter]
    fn set_rewards(&mut self, rewards: Py<PyDict>) {
        self.rewards = rewards;
    }

    /// Each agent's rewards since it last acted (what `last()` returns).
    #[getter(_cumulative_rewards)]
    fn cumulative_rewards(&self, py: Python<'_>) -> Py<PyDict> {
        self.cumulative.clone_ref(py)
    }

    #[setter(_cumulative_rewards)]
    fn set_cumulative_rewards(&mut self, cumulative: Py<PyDict>) {
        self.cumulative = cumulative;
    }

    /// Each agent's termination (all true once the match is over).
    #[getter]
    fn terminations(&self, py: Python<'_>) -> Py<PyDict> {
        self.terminations.clone_ref(py)
    }

    #[setter]
    fn set_terminations(&mut self, terminations: Py<PyDict>) {
        self.terminations = terminations;
    }

    /// Each agent's truncation (never set).
    #[getter]
    fn truncations(&self, py: Python<'_>) -> Py<PyDict> {
        self.truncations.clone_ref(py)
    }

    #[setter]
    fn set_truncations(&mut self, truncations: Py<PyDict>) {
        self.truncations = truncations;
    }

    /// Each agent's info dict (empty).
    #[getter]
    fn infos(&self, py: Python<'_>) -> Py<PyDict> {
        self.infos.clone_ref(py)
    }

    #[setter]
    fn set_infos(&mut self, infos: Py<PyDict>) {
        self.infos = infos;
    }

    /// The agent to act (the engine's seat to act, until the match is over).
    #[getter]
    fn agent_selection(&self, py: Python<'_>) -> PyResult<Py<PyString>> {
        match &self.selection {
            Some(s) => Ok(s.clone_ref(py)),
            None => Err(PyAttributeError::new_err(
                "agent_selection: the environment has not been reset",
            )),
        }
    }

    #[setter]
    fn set_agent_selection(&mut self, agent: Bound<'_, PyString>) -> PyResult<()> {
        self.selected = self.seat_of(agent.as_any())?;
        self.selection = Some(agent.unbind());
        Ok(())
    }

    /// `agent`'s observation: `{"observation": float32[OBS_LEN], "action_mask": int8[202]}`,
    /// read-only views valid until the next `step()` or `reset()`.
    fn observe<'py>(
        &mut self,
        py: Python<'py>,
        agent: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        match self.seat_of(agent)? {
            Some(seat) => self.observation(py, seat),
            None => Err(PyKeyError::new_err(agent.clone().unbind())),
        }
    }

    /// `(observation, cumulative reward, termination, truncation, info)` of the selected agent,
    /// as `AECEnv.last`.
    #[pyo3(signature = (observe=true))]
    fn last<'py>(&mut self, py: Python<'py>, observe: bool) -> PyResult<Bound<'py, PyTuple>> {
        let agent = self.agent_selection(py)?.into_bound(py);
        let obs = if observe {
            match self.selected {
                Some(seat) => self.observation(py, seat)?.into_any(),
                None => return Err(PyKeyError::new_err(agent.unbind())),
            }
        } else {
            py.None().into_bound(py)
        };
        let item = |d: &Py<PyDict>| -> PyResult<Bound<'py, PyAny>> {
            d.bind(py)
                .get_item(&agent)?
                .ok_or_else(|| PyKeyError::new_err(agent.clone().unbind()))
        };
        PyTuple::new(
            py,
            [
                obs,
                item(&self.cumulative)?,
                item(&self.terminations)?,
                item(&self.truncations)?,
                item(&self.infos)?,
            ],
        )
    }

    /// Applies `action` (an int, or anything `int()` takes) for the selected agent; see the
    /// class docs.
    fn step(slf: &Bound<'_, Self>, action: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = slf.py();
        let mut env = slf.borrow_mut();
        if env.over {
            drop(env);
            slf.call_method1(intern!(py, "_was_dead_step"), (action,))?;
            return Ok(());
        }
        let action: i64 = match action.extract() {
            Ok(a) => a,
            // What the environment did before: `int(action)`, with its TypeError for None.
            Err(_) => py
                .get_type::<pyo3::types::PyInt>()
                .call1((action,))?
                .extract()?,
        };
        let human = env.apply(py, action)?;
        drop(env);
        if human {
            slf.call_method0(intern!(py, "render"))?;
        }
        Ok(())
    }

    /// The selected agent until every agent is done or after `max_iter` steps, as
    /// `AECEnv.agent_iter`.
    #[pyo3(signature = (max_iter=1u64 << 63))]
    fn agent_iter(slf: &Bound<'_, Self>, max_iter: u64) -> AgentIterable {
        AgentIterable {
            env: slf.clone().unbind(),
            max_iter,
        }
    }
}

impl PyAecBase {
    fn bound_game(&self) -> PyResult<&Py<PyGame>> {
        self.game.as_ref().ok_or_else(|| {
            PyAttributeError::new_err("game: the environment's __init__ has not bound a match")
        })
    }

    /// The seat `agent` names, if it names one.
    fn seat_of(&self, agent: &Bound<'_, PyAny>) -> PyResult<Option<usize>> {
        for (seat, name) in self.names.iter().enumerate() {
            if agent.is(name) || agent.eq(name)? {
                return Ok(Some(seat));
            }
        }
        Ok(None)
    }

    fn select(&mut self, py: Python<'_>, seat: usize) {
        self.selection = Some(self.names[seat].clone_ref(py));
        self.selected = Some(seat);
    }

    /// `seat`'s observation dict (a new dict of the same views), its arrays first brought up to
    /// date.
    fn observation<'py>(&mut self, py: Python<'py>, seat: usize) -> PyResult<Bound<'py, PyDict>> {
        if self.fresh & (1 << seat) == 0 {
            self.write(py, seat)?;
        }
        self.observations[seat].bind(py).copy()
    }

    /// `step`'s work while the match runs: applies `action` and does the bookkeeping (see the
    /// class docs). Returns whether to render.
    fn apply(&mut self, py: Python<'_>, action: i64) -> PyResult<bool> {
        let game = self.bound_game()?.clone_ref(py);
        let mut game = game.borrow_mut(py);
        let rewards = game.step_rewarded(py, action, self.mode)?;
        let to_act = game.game.to_act();
        drop(game);
        let agent = self.agent_selection(py)?;
        let cumulative = self.cumulative.bind(py);
        cumulative.set_item(&agent, &self.zero)?;
        match rewards {
            Some(rewards) => {
                let dict = self.rewards.bind(py);
                for (name, r) in self.names.iter().zip(rewards) {
                    let r = f64::from(r);
                    dict.set_item(name, r)?;
                    let sum: f64 = match cumulative.get_item(name)? {
                        Some(x) => x.extract()?,
                        None => 0.0,
                    };
                    cumulative.set_item(name, sum + r)?;
                }
                self.rewarded = true;
            }
            None if self.rewarded => {
                let dict = self.rewards.bind(py);
                for name in self.agents.bind(py).iter() {
                    dict.set_item(name, 0.0)?;
                }
                self.rewarded = false;
            }
            None => {}
        }
        // The arrays written: the next agent's, or the acting agent's once the match is over.
        let written = match to_act {
            Some(seat) => {
                self.select(py, seat as usize);
                seat as usize
            }
            None => {
                self.over = true;
                let terminations = self.terminations.bind(py);
                for name in self.agents.bind(py).iter() {
                    terminations.set_item(name, true)?;
                }
                self.selected.unwrap_or_default()
            }
        };
        self.fresh = 0;
        self.write(py, written)?;
        Ok(self.human)
    }

    /// Writes `seat`'s observation of the match as it is now into its arrays.
    fn write(&mut self, py: Python<'_>, seat: usize) -> PyResult<()> {
        let game = self.bound_game()?.bind(py).borrow();
        let (obs, packed) = self.scratch.split_at_mut(OBS_LEN);
        let mut mask = [0; MASK_WORDS * 4];
        encode_seat(&game.game, seat as u8, obs, &mut mask[..ACTION_COUNT]);
        drop(game);
        for (word, bytes) in packed.iter_mut().zip(mask.chunks_exact(4)) {
            *word = f32::from_ne_bytes([bytes[0], bytes[1], bytes[2], bytes[3]].map(|b| b as u8));
        }
        self.buffers[seat].copy_from_slice(py, &self.scratch[..])?;
        self.fresh |= 1 << seat;
        Ok(())
    }
}

/// `AecBase.agent_iter`'s iterable: each `iter()` yields the selected agent up to `max_iter`
/// times, while any agent is left (PettingZoo's `AECIterable`).
#[pyclass(name = "AgentIterable", module = "maumau_engine")]
pub struct AgentIterable {
    env: Py<PyAecBase>,
    max_iter: u64,
}

#[pymethods]
impl AgentIterable {
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.env)
    }

    fn __iter__(&self, py: Python<'_>) -> AgentIterator {
        AgentIterator {
            env: self.env.clone_ref(py),
            left: self.max_iter,
        }
    }
}

/// One pass of an [`AgentIterable`] (PettingZoo's `AECIterator`).
#[pyclass(name = "AgentIterator", module = "maumau_engine")]
pub struct AgentIterator {
    env: Py<PyAecBase>,
    left: u64,
}

#[pymethods]
impl AgentIterator {
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.env)
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<Option<Py<PyString>>> {
        let env = self.env.bind(py).borrow();
        if env.agents.bind(py).is_empty() || self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        env.agent_selection(py).map(Some)
    }
}
