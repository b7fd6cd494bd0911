//! A tournament on several machines: what [`PgStore`] keeps for `maumau tournament --store` (the
//! coordinator) and `maumau worker` (any number, anywhere).
//!
//! - **An event** is one tournament ([`PgStore::create_event`]): its description as JSON (the
//!   tournament crate's `Description`, secret seed included), whether replays are kept, and the
//!   version of the program that created it; workers of another version play none of its games.
//!   Its coordinator renews its liveness ([`PgStore::renew_event_leases`]); games of an event
//!   whose coordinator stopped renewing are not handed out, until the same tournament started
//!   again takes the event over ([`PgStore::take_over_event`]) with its finished games.
//! - **Games** are added a round at a time as the coordinator releases them
//!   ([`PgStore::add_event_games`]). Anyone claims the first unfinished one
//!   ([`PgStore::claim_event_game`], `FOR UPDATE SKIP LOCKED`) under a lease: an owner (one
//!   random id per process), an epoch (one more at every claim) and an expiry. A game whose
//!   lease ran out (its player died or stalled) is claimed again and played from its seed.
//! - **A result is kept once** ([`PgStore::commit_event_game`]): only while the row is still
//!   claimed by the same owner and epoch, in one `UPDATE`; a late result of a lost claim changes
//!   nothing. The coordinator reads the finished games back ([`PgStore::done_event_games`]).
//!
//! Every expiry is judged by the database's clock (`db_now!`), never a machine's. This module
//! stores text and numbers only (records and replays as the tournament wrote them): it knows
//! nothing of tournaments, which stay free of any database.

use std::sync::atomic::Ordering;

use super::PgStore;
use crate::error::{LadderError, Result};

/// Whether an event is still being played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventState {
    /// Its coordinator releases rounds and collects results (or did, until it stopped).
    Running,
    /// All its games are in; its coordinator wrote the results.
    Finished,
}

/// A tournament event as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventInfo {
    /// Its id.
    pub id: i64,
    /// The tournament's description, as JSON.
    pub description: String,
    /// Whether its games' replays are kept.
    pub replays: bool,
    /// The version of the program that created it.
    pub version: String,
    /// Running or finished.
    pub state: EventState,
    /// Whether its coordinator renewed its liveness recently (by the database's clock).
    pub coordinated: bool,
}

/// A game claimed to be played here: its fixture and the claim that must commit it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventGame {
    /// The game's row.
    pub id: i64,
    /// Its event.
    pub event: i64,
    /// Its round.
    pub round: u32,
    /// Its index among the round's fixtures.
    pub index: usize,
    /// The fixture's id (`r0-t1-d2-s0`).
    pub fixture: String,
    /// The game's seed.
    pub seed: u64,
    /// The entrant at each seat.
    pub seats: Vec<usize>,
    /// The claim's epoch (with the owner, what [`PgStore::commit_event_game`] checks).
    pub epoch: i64,
}

/// A finished game as [`PgStore::done_event_games`] gives it: (index in the round, record,
/// replay).
pub type DoneGame = (usize, String, Option<Vec<u8>>);

/// A fixture to add to an event: (index in the round, fixture id, seed, entrant at each seat).
pub type NewEventGame<'a> = (usize, &'a str, u64, &'a [usize]);

fn event_state(s: &str) -> Result<EventState> {
    match s {
        "running" => Ok(EventState::Running),
        "finished" => Ok(EventState::Finished),
        other => Err(LadderError::Database(
            format!("unknown tournament event state `{other}`").into(),
        )),
    }
}

/// The columns of [`EventInfo`], in its order.
const EVENT_COLUMNS: &str = concat!(
    "id, description, replays, version, state, coordinator_until_ms > ",
    db_now!()
);

fn event_of(r: &postgres::Row) -> Result<EventInfo> {
    Ok(EventInfo {
        id: r.try_get(0)?,
        description: r.try_get(1)?,
        replays: r.try_get(2)?,
        version: r.try_get(3)?,
        state: event_state(r.try_get(4)?)?,
        coordinated: r.try_get(5)?,
    })
}

/// A count or index as stored (an `INTEGER`).
fn int(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| LadderError::Invalid(format!("{n} is too large to store")))
}

impl PgStore {
    /// Creates a running event; its coordinator counts as alive for `lease_ms`.
    pub fn create_event(
        &self,
        description: &str,
        replays: bool,
        version: &str,
        lease_ms: i64,
    ) -> Result<i64> {
        self.counted(1);
        self.tx(|t| {
            let row = t.query_one(
                concat!(
                    "INSERT INTO tournament_events (description, replays, version, created_ms, \
                     coordinator_until_ms) VALUES ($1, $2, $3, ",
                    db_now!(),
                    ", ",
                    db_now!(),
                    " + $4) RETURNING id"
                ),
                &[&description, &replays, &version, &lease_ms],
            )?;
            Ok(row.try_get(0)?)
        })
    }

    /// Takes over the newest running event of `version` with this `description` whose
    /// coordinator stopped renewing it (it died): its coordinator counts as alive again for
    /// `lease_ms`, and its finished games are kept. `None` when there is no such event.
    pub fn take_over_event(
        &self,
        description: &str,
        version: &str,
        lease_ms: i64,
    ) -> Result<Option<i64>> {
        self.counted(1);
        self.tx(|t| {
            let row = t.query_opt(
                concat!(
                    "UPDATE tournament_events SET coordinator_until_ms = ",
                    db_now!(),
                    " + $3 WHERE id = (
                         SELECT id FROM tournament_events
                         WHERE description = $1 AND version = $2 AND state = 'running'
                           AND coordinator_until_ms <= ",
                    db_now!(),
                    "    ORDER BY id DESC LIMIT 1 FOR UPDATE SKIP LOCKED
                     ) RETURNING id"
                ),
                &[&description, &version, &lease_ms],
            )?;
            row.map(|r| r.try_get(0)).transpose().map_err(Into::into)
        })
    }

    /// The event `id`, if there is one.
    pub fn event(&self, id: i64) -> Result<Option<EventInfo>> {
        self.counted(1);
        self.tx(|t| {
            let sql = format!("SELECT {EVENT_COLUMNS} FROM tournament_events WHERE id = $1");
            t.query_opt(&sql, &[&id])?
                .as_ref()
                .map(event_of)
                .transpose()
        })
    }

    /// The running events whose coordinator is alive, oldest first.
    pub fn running_events(&self) -> Result<Vec<EventInfo>> {
        self.counted(1);
        self.tx(|t| {
            let sql = format!(
                "SELECT {EVENT_COLUMNS} FROM tournament_events WHERE state = 'running' AND \
                 coordinator_until_ms > {} ORDER BY id",
                db_now!()
            );
            t.query(&sql, &[])?.iter().map(event_of).collect()
        })
    }

    /// Releases games of round `round` of `event` (a game already there is left as it is, so
    /// a round released again after a restart keeps its finished games).
    pub fn add_event_games(
        &self,
        event: i64,
        round: u32,
        games: &[NewEventGame<'_>],
    ) -> Result<()> {
        self.counted(1);
        let round = int(round as usize)?;
        let mut index = Vec::with_capacity(games.len());
        let mut fixture = Vec::with_capacity(games.len());
        let mut seed = Vec::with_capacity(games.len());
        // Seats as text (`{0,2,1}`), since one array per game does not fit a parameter list.
        let mut seats = Vec::with_capacity(games.len());
        for &(i, f, s, at) in games {
            index.push(int(i)?);
            fixture.push(f);
            seed.push(s as i64);
            let list: Vec<String> = at.iter().map(usize::to_string).collect();
            seats.push(format!("{{{}}}", list.join(",")));
        }
        self.tx(|t| {
            t.execute(
                "INSERT INTO tournament_games (event_id, round, idx, fixture, seed, seats)
                 SELECT $1, $2, g.idx, g.fixture, g.seed, g.seats::INTEGER[]
                 FROM unnest($3::INTEGER[], $4::TEXT[], $5::BIGINT[], $6::TEXT[])
                     AS g (idx, fixture, seed, seats)
                 ON CONFLICT (event_id, round, idx) DO NOTHING",
                &[&event, &round, &index, &fixture, &seed, &seats],
            )?;
            Ok(())
        })
    }

    /// Claims the first unfinished game (never claimed, or its lease ran out) of a running,
    /// coordinated event of `version` (of `event` alone when given) for `owner`, for
    /// `lease_ms`. `None` when there is none now.
    pub fn claim_event_game(
        &self,
        owner: i64,
        version: &str,
        event: Option<i64>,
        lease_ms: i64,
    ) -> Result<Option<EventGame>> {
        self.claim_event_game_except(owner, version, event, &[], lease_ms)
    }

    /// [`PgStore::claim_event_game`], but never of the events `except` (events this process
    /// cannot play: a worker that cannot sandbox leaves the games of an event whose programs
    /// run sandboxed to others).
    pub fn claim_event_game_except(
        &self,
        owner: i64,
        version: &str,
        event: Option<i64>,
        except: &[i64],
        lease_ms: i64,
    ) -> Result<Option<EventGame>> {
        self.counted(1);
        self.tx(|t| {
            let row = t.query_opt(
                concat!(
                    "WITH next AS (
                         SELECT g.id FROM tournament_games g
                         JOIN tournament_events e ON e.id = g.event_id
                         WHERE e.state = 'running' AND e.version = $2
                           AND e.coordinator_until_ms > ",
                    db_now!(),
                    "     AND ($3::BIGINT IS NULL OR g.event_id = $3)
                           AND NOT (g.event_id = ANY($5::BIGINT[]))
                           AND (g.state = 'open' OR (g.state = 'claimed' AND g.lease_until_ms < ",
                    db_now!(),
                    "))
                         ORDER BY g.event_id, g.round, g.idx
                         LIMIT 1
                         FOR UPDATE OF g SKIP LOCKED
                     )
                     UPDATE tournament_games g SET state = 'claimed', lease_owner = $1,
                         lease_epoch = g.lease_epoch + 1, plays = g.plays + 1,
                         lease_until_ms = ",
                    db_now!(),
                    " + $4
                     FROM next WHERE g.id = next.id
                     RETURNING g.id, g.event_id, g.round, g.idx, g.fixture, g.seed, g.seats,
                         g.lease_epoch"
                ),
                &[&owner, &version, &event, &lease_ms, &except],
            )?;
            let Some(r) = row else { return Ok(None) };
            let round: i32 = r.try_get(2)?;
            let index: i32 = r.try_get(3)?;
            let seed: i64 = r.try_get(5)?;
            let seats: Vec<i32> = r.try_get(6)?;
            Ok(Some(EventGame {
                id: r.try_get(0)?,
                event: r.try_get(1)?,
                round: round as u32,
                index: index as usize,
                fixture: r.try_get(4)?,
                seed: seed as u64,
                seats: seats.into_iter().map(|s| s as usize).collect(),
                epoch: r.try_get(7)?,
            }))
        })
    }

    /// Keeps the result of `game` (its record as JSON, its replay line) if `owner`'s claim of
    /// `epoch` still holds it; `false` (nothing changed) when it was lost or already kept.
    pub fn commit_event_game(
        &self,
        game: &EventGame,
        owner: i64,
        record: &str,
        replay: Option<&[u8]>,
    ) -> Result<bool> {
        self.counted(1);
        self.tx(|t| {
            let n = t.execute(
                "UPDATE tournament_games SET state = 'done', record = $4, replay = $5,
                     lease_until_ms = NULL
                 WHERE id = $1 AND lease_owner = $2 AND lease_epoch = $3 AND state = 'claimed'",
                &[&game.id, &owner, &game.epoch, &record, &replay],
            )?;
            Ok(n == 1)
        })
    }

    /// Gives back a game `owner` claimed (its claim of `epoch`) and will not play (this process
    /// cannot, or playing it failed here): it is open to the next claim at once, instead of once
    /// its lease runs out. `false` when the claim was lost already.
    pub fn release_event_game(&self, game: &EventGame, owner: i64) -> Result<bool> {
        self.counted(1);
        self.tx(|t| {
            let n = t.execute(
                "UPDATE tournament_games SET state = 'open', lease_owner = NULL,
                     lease_until_ms = NULL
                 WHERE id = $1 AND lease_owner = $2 AND lease_epoch = $3 AND state = 'claimed'",
                &[&game.id, &owner, &game.epoch],
            )?;
            Ok(n == 1)
        })
    }

    /// Renews for `lease_ms` the leases of the games `owner` holds, and the liveness of the
    /// event it coordinates, if any. Returns how many games it holds.
    pub fn renew_event_leases(
        &self,
        owner: i64,
        coordinating: Option<i64>,
        lease_ms: i64,
    ) -> Result<u64> {
        self.counted(if coordinating.is_some() { 2 } else { 1 });
        self.tx(|t| {
            if let Some(event) = coordinating {
                t.execute(
                    concat!(
                        "UPDATE tournament_events SET coordinator_until_ms = ",
                        db_now!(),
                        " + $2 WHERE id = $1 AND state = 'running'"
                    ),
                    &[&event, &lease_ms],
                )?;
            }
            Ok(t.execute(
                concat!(
                    "UPDATE tournament_games SET lease_until_ms = ",
                    db_now!(),
                    " + $2 WHERE lease_owner = $1 AND state = 'claimed'"
                ),
                &[&owner, &lease_ms],
            )?)
        })
    }

    /// The finished games of round `round` of `event` among the indices `wanted`: (index,
    /// record, replay).
    pub fn done_event_games(
        &self,
        event: i64,
        round: u32,
        wanted: &[usize],
    ) -> Result<Vec<DoneGame>> {
        self.counted(1);
        let round = int(round as usize)?;
        let wanted = wanted
            .iter()
            .map(|&i| int(i))
            .collect::<Result<Vec<i32>>>()?;
        self.tx(|t| {
            let rows = t.query(
                "SELECT idx, record, replay FROM tournament_games
                 WHERE event_id = $1 AND round = $2 AND state = 'done' AND idx = ANY($3)
                 ORDER BY idx",
                &[&event, &round, &wanted],
            )?;
            rows.iter()
                .map(|r| {
                    let index: i32 = r.try_get(0)?;
                    Ok((index as usize, r.try_get(1)?, r.try_get(2)?))
                })
                .collect()
        })
    }

    /// Which of the deals `seeds` of `event` are over: every game of the seed is done (a deal
    /// is the games with one seed, the seatings of a duplicate deal). A worker reveals its
    /// sealed matches of a deal once it is over, wherever its other games were played.
    pub fn finished_event_deals(&self, event: i64, seeds: &[u64]) -> Result<Vec<u64>> {
        self.counted(1);
        let seeds: Vec<i64> = seeds.iter().map(|&s| s as i64).collect();
        self.tx(|t| {
            let rows = t.query(
                "SELECT seed FROM tournament_games WHERE event_id = $1 AND seed = ANY($2)
                 GROUP BY seed HAVING bool_and(state = 'done')",
                &[&event, &seeds],
            )?;
            rows.iter()
                .map(|r| Ok(r.try_get::<_, i64>(0)? as u64))
                .collect()
        })
    }

    /// How many times each game of `event` was claimed, by (round, index): more than once
    /// means a claim was lost (its player died or stalled) and the game played again.
    pub fn event_game_plays(&self, event: i64) -> Result<Vec<(u32, usize, u32)>> {
        self.counted(1);
        self.tx(|t| {
            let rows = t.query(
                "SELECT round, idx, plays FROM tournament_games WHERE event_id = $1
                 ORDER BY round, idx",
                &[&event],
            )?;
            rows.iter()
                .map(|r| {
                    let (round, index, plays): (i32, i32, i32) =
                        (r.try_get(0)?, r.try_get(1)?, r.try_get(2)?);
                    Ok((round as u32, index as usize, plays as u32))
                })
                .collect()
        })
    }

    /// Marks `event` finished: no more of its games are handed out.
    pub fn finish_event(&self, event: i64) -> Result<()> {
        self.counted(1);
        self.tx(|t| {
            t.execute(
                "UPDATE tournament_events SET state = 'finished' WHERE id = $1",
                &[&event],
            )?;
            Ok(())
        })
    }

    /// Statements sent by this store's event methods so far, and the transactions they were
    /// sent in (all clones together; one transaction per call, each with a BEGIN and a COMMIT on
    /// top of its statements): what the tournament benchmark divides by its games.
    pub fn event_statements(&self) -> (u64, u64) {
        let [statements, transactions] = &*self.event_statements;
        (
            statements.load(Ordering::Relaxed),
            transactions.load(Ordering::Relaxed),
        )
    }

    fn counted(&self, statements: u64) {
        let [counted, transactions] = &*self.event_statements;
        counted.fetch_add(statements, Ordering::Relaxed);
        transactions.fetch_add(1, Ordering::Relaxed);
    }
}
