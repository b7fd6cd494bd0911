//! Where a round's games are played: [`Here`], by this process's threads (what
//! [`Tournament::run`](crate::Tournament::run) uses), or any other [`Venue`], such as the queue
//! that `maumau tournament --store postgres://...` shares with `maumau worker` processes on other
//! machines (kept outside this crate, which links no database).
//!
//! [`Tournament::run_on`](crate::Tournament::run_on) drives every venue through the same loop:
//! each of its threads [claims](Venue::claim) a fixture, plays it in-process (or on the server)
//! and [commits](Venue::commit) it; games finished elsewhere come in through
//! [`Venue::collect`]. The schedule, the order of the records, the ratings and the output files
//! are computed by that one loop whichever venue plays, so a tournament played by many workers
//! gives the same files as one played here.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::{Fixture, Played, TournamentError};

/// What [`Venue::claim`] hands out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    /// Play this fixture (an index into the round's fixtures) here.
    Play(usize),
    /// Nothing to play here now, but games of the round are still being played elsewhere: ask
    /// again after [`Venue::poll_every`].
    Later,
    /// Nothing is left for this process to play in this round.
    Done,
}

/// A place where the fixtures of a round are played (see the module docs).
pub trait Venue: Sync {
    /// Starts round `round`: `fixtures` is its schedule, `todo` the indices of the fixtures
    /// still to play (the others are already in the output directory).
    fn open_round(
        &self,
        round: u32,
        fixtures: &[Fixture],
        todo: &[usize],
    ) -> Result<(), TournamentError>;

    /// The next fixture of the round for this process to play.
    fn claim(&self) -> Result<Claim, TournamentError>;

    /// Keeps a game this process played. `Ok(false)` when it no longer counts (this process
    /// lost its claim, and whoever holds it now delivers the result through
    /// [`Venue::collect`]).
    fn commit(&self, index: usize, played: &Played) -> Result<bool, TournamentError>;

    /// Games among `wanted` (fixture indices) that were finished elsewhere.
    fn collect(&self, wanted: &[usize]) -> Result<Vec<(usize, Played)>, TournamentError>;

    /// How often to [`collect`](Venue::collect) while waiting for games; `None` when every
    /// game is played by this process (nothing to collect).
    fn poll_every(&self) -> Option<Duration>;
}

/// Every game played by this process's threads, each fixture once, in schedule order.
#[derive(Debug, Default)]
pub struct Here {
    /// The round's fixtures still to play, and how many of them were handed out.
    todo: Mutex<(Vec<usize>, usize)>,
}

impl Venue for Here {
    fn open_round(&self, _: u32, _: &[Fixture], todo: &[usize]) -> Result<(), TournamentError> {
        *self.todo.lock().unwrap_or_else(PoisonError::into_inner) = (todo.to_vec(), 0);
        Ok(())
    }

    fn claim(&self) -> Result<Claim, TournamentError> {
        let mut todo = self.todo.lock().unwrap_or_else(PoisonError::into_inner);
        let (list, next) = &mut *todo;
        Ok(match list.get(*next) {
            Some(&i) => {
                *next += 1;
                Claim::Play(i)
            }
            None => Claim::Done,
        })
    }

    fn commit(&self, _: usize, _: &Played) -> Result<bool, TournamentError> {
        Ok(true)
    }

    fn collect(&self, _: &[usize]) -> Result<Vec<(usize, Played)>, TournamentError> {
        Ok(Vec::new())
    }

    fn poll_every(&self) -> Option<Duration> {
        None
    }
}
