//! The PettingZoo environment's engine half (`maumau_engine._core.AecCore`): one step per call,
//! and each seat's observation written into numpy arrays allocated once per seat, so that the
//! Python half (`maumau_engine/env.py`) makes one call into Rust per decision and allocates no
//! array.

use numpy::{PyArray1, PyArrayMethods};
use pyo3::prelude::*;

use crate::core::{OBS_LEN, RewardMode, encode_seat};
use crate::{InvalidConfig, PyGame};
use maumau_engine::ACTION_COUNT;

/// A match (`game`, a `Game`) stepped for the AEC environment, with one observation vector
/// (float32[OBS_LEN]) and one action mask (int8[202]) per seat, overwritten in place.
///
/// `AecCore(game, reward="win")`; `reset(game)` takes the next match (same number of seats).
/// `step(action)` applies a dense action index for the seat to act (refusals as `Game.step`:
/// nothing changes), writes the observation of the seat to act next (of the seat that acted,
/// once the match is over) into that seat's arrays, and returns `(to_act, rewards)`: the seat
/// to act next or `None`, and every seat's rewards or `None` when no round ended.
#[pyclass(name = "AecCore", module = "maumau_engine")]
pub struct PyAecCore {
    game: Py<PyGame>,
    mode: RewardMode,
    obs: Vec<Py<PyArray1<f32>>>,
    masks: Vec<Py<PyArray1<i8>>>,
}

#[pymethods]
impl PyAecCore {
    #[new]
    #[pyo3(signature = (game, reward="win"))]
    fn new(py: Python<'_>, game: Py<PyGame>, reward: &str) -> PyResult<PyAecCore> {
        let mode = RewardMode::parse(reward).ok_or_else(|| {
            InvalidConfig::new_err(format!("reward `{reward}`: use win or score"))
        })?;
        let seats = game.borrow(py).game.seats() as usize;
        let core = PyAecCore {
            game,
            mode,
            obs: (0..seats)
                .map(|_| PyArray1::zeros(py, OBS_LEN, false).unbind())
                .collect(),
            masks: (0..seats)
                .map(|_| PyArray1::zeros(py, ACTION_COUNT, false).unbind())
                .collect(),
        };
        core.write_to_act(py)?;
        Ok(core)
    }

    /// The match.
    #[getter]
    fn game(&self, py: Python<'_>) -> Py<PyGame> {
        self.game.clone_ref(py)
    }

    /// Each seat's observation vector (the arrays `observe` and `step` overwrite).
    #[getter]
    fn observations(&self, py: Python<'_>) -> Vec<Py<PyArray1<f32>>> {
        self.obs.iter().map(|a| a.clone_ref(py)).collect()
    }

    /// Each seat's action mask (the arrays `observe` and `step` overwrite).
    #[getter]
    fn masks(&self, py: Python<'_>) -> Vec<Py<PyArray1<i8>>> {
        self.masks.iter().map(|a| a.clone_ref(py)).collect()
    }

    /// Takes `game` as the match (it must have as many seats) and writes the observation of its
    /// seat to act.
    fn reset(&mut self, py: Python<'_>, game: Py<PyGame>) -> PyResult<()> {
        let seats = game.borrow(py).game.seats() as usize;
        if seats != self.obs.len() {
            return Err(InvalidConfig::new_err(format!(
                "a game of {seats} seats for an environment of {}",
                self.obs.len()
            )));
        }
        self.game = game;
        self.write_to_act(py)
    }

    /// Writes `seat`'s observation of the match as it is now into its arrays.
    fn observe(&self, py: Python<'_>, seat: u8) -> PyResult<()> {
        let game = self.game.borrow(py);
        game.check_seat(seat)?;
        self.write(py, &game, seat)
    }

    /// Applies `action` (an int, or anything `int()` takes) for the seat to act; see the class
    /// docs.
    #[allow(clippy::type_complexity)]
    fn step(
        &mut self,
        py: Python<'_>,
        action: &Bound<'_, PyAny>,
    ) -> PyResult<(Option<u8>, Option<Vec<f32>>)> {
        let action: i64 = match action.extract() {
            Ok(a) => a,
            // What the environment did before: `int(action)`, with its TypeError for None.
            Err(_) => py
                .get_type::<pyo3::types::PyInt>()
                .call1((action,))?
                .extract()?,
        };
        let mut game = self.game.borrow_mut(py);
        let seat = game.game.to_act();
        let rewards = game.step_rewarded(py, action, self.mode)?;
        let to_act = game.game.to_act();
        if let Some(s) = to_act.or(seat) {
            self.write(py, &game, s)?;
        }
        Ok((to_act, rewards))
    }
}

impl PyAecCore {
    /// Writes the observation of the seat to act, if any.
    fn write_to_act(&self, py: Python<'_>) -> PyResult<()> {
        let game = self.game.borrow(py);
        match game.game.to_act() {
            Some(s) => self.write(py, &game, s),
            None => Ok(()),
        }
    }

    fn write(&self, py: Python<'_>, game: &PyGame, seat: u8) -> PyResult<()> {
        let obs = self.obs[seat as usize].bind(py);
        let mask = self.masks[seat as usize].bind(py);
        // rust-numpy's checked borrows (a few per cent of an AEC decision) rather than
        // unsafe code: the arrays are also Python objects, handed out as read-only views.
        let (mut obs, mut mask) = (obs.try_readwrite()?, mask.try_readwrite()?);
        let (obs, mask) = (obs.as_slice_mut()?, mask.as_slice_mut()?);
        encode_seat(&game.game, seat, obs, mask);
        Ok(())
    }
}
