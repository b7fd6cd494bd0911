//! Recording: each seat's statistics (decisions, think times, timeouts, rejections), each refused
//! message with its reason and the step it came at (the replay's `rejections`, for the match
//! viewer's seat views), the match's end as a `MatchReport` and a `Replay` (recorded durably
//! before any seat is told), and the placing of seats that forfeited behind every seat that did
//! not.

use maumau::pb;
use maumau_engine::{Action, Seat};

use super::Table;
use super::connections::drain;
use super::delivery::message;
use crate::frames::Staged;

impl Table {
    /// Records the match's end and, once the record is durable, tells every seat and spectator.
    pub(super) async fn finish(&mut self) {
        let status = if self.aborted.is_some() {
            pb::MatchStatus::Aborted
        } else {
            pb::MatchStatus::Finished
        };
        let result = self.game.match_result().map(|r| {
            let mut w = pb::MatchResult::from(&r);
            let forfeited: Vec<bool> = self.seats.iter().map(|s| s.forfeited).collect();
            place_forfeits_last(&mut w, &forfeited);
            w
        });
        let (seed, _) = self.game.rng_state();
        let stats = self
            .seats
            .iter()
            .enumerate()
            .map(|(s, seat)| seat.stats(s))
            .collect();
        let report = pb::MatchReport {
            match_id: self.entry.id.clone(),
            status: status as i32,
            result: result.clone(),
            rounds: std::mem::take(&mut self.rounds),
            seats: stats,
            seed,
            seed_commitment: self.entry.seed_commitment.clone(),
            actions: self.actions.len() as u32,
            players: self.players(),
            seed_salt: self.entry.seed_salt.clone(),
            // The record keeps everything; what goes out is sealed below.
            sealed: false,
        };
        let actions = std::mem::take(&mut self.actions);
        let replay = self.replay(actions, result);
        if let Some(why) = &self.aborted {
            tracing::info!(match_id = %self.entry.id, reason = %why, "match aborted");
        } else {
            tracing::info!(match_id = %self.entry.id, actions = report.actions, "match finished");
        }
        let report = self.entry.finish(report, replay).await;
        // A sealed match keeps its seed and salt from seats and spectators (the record keeps
        // them); the flag is read here, at the end, never on a step.
        let report = match self.entry.sealed() {
            true => super::handle::seal(report),
            false => report,
        };
        // Encoded once for every seat and spectator.
        let done = Staged::message(message(pb::server_message::Kind::Finished(
            pb::MatchFinished {
                report: Some(report),
            },
        )))
        .encode();
        for s in 0..self.game.seats() {
            self.stage_snapshot(s);
            self.seats[s as usize]
                .feed
                .send(Staged::Encoded(done.clone()));
        }
        if !self.spectators.is_empty() {
            self.spectators_staged.push(Staged::Encoded(done));
        }
        self.flush();
        for seat in &mut self.seats {
            seat.feed.conn = None;
            if let Some(inbound) = seat.inbound.take() {
                // The stream has ended for the client; what it still sends is read and dropped
                // until it closes its side.
                tokio::spawn(drain(inbound.stream));
            }
        }
        self.spectators.clear();
    }

    /// Counts a refusal of one of seat `s`'s messages (`action`: the action it named, if it
    /// could be read) and keeps it for the replay, the first [`KEPT_REJECTIONS`] of each seat.
    pub(super) fn record_rejection(
        &mut self,
        s: Seat,
        reason: pb::ErrorReason,
        message: &str,
        action: Option<Action>,
    ) {
        let tally = &mut self.seats[s as usize].tally;
        tally.rejection(reason);
        crate::metrics::rejection(reason);
        if tally.rejections <= KEPT_REJECTIONS {
            self.rejections.push(pb::ReplayRejection {
                seat: s.into(),
                step: self.actions.len() as u32,
                reason: reason as i32,
                message: message.to_string(),
                action: action.map(Into::into),
            });
        }
    }

    /// The match's replay: its start and `actions`, and its `result` once there is one.
    pub(super) fn replay(
        &self,
        actions: Vec<pb::ReplayAction>,
        result: Option<pb::MatchResult>,
    ) -> pb::Replay {
        pb::Replay {
            format: 1,
            match_id: self.entry.id.clone(),
            config: Some((&self.entry.config).into()),
            seed: self.game.rng_state().0,
            start: self.entry.start.clone(),
            actions,
            players: self.players(),
            time_control: Some(self.clock.to_wire()),
            result,
            seed_salt: self.entry.seed_salt.clone(),
            seed_commitment: self.entry.seed_commitment.clone(),
            rejections: self.rejections.clone(),
        }
    }
}

/// Refused messages kept in the replay per seat (the first ones; the seat's statistics count
/// them all): enough to see what a bot got wrong, bounded against a bot that floods.
pub(super) const KEPT_REJECTIONS: u32 = 100;

/// Whether a refusal means the bot broke the protocol or the rules, rather than losing a race that
/// a correct bot can lose: its state id went stale (another action or a timeout came first),
/// another seat challenged first or the offence closed, the match ended or has not started yet,
/// or the server plays the seat now (it gave up).
pub(super) fn is_protocol_error(reason: pb::ErrorReason) -> bool {
    use pb::ErrorReason as R;
    !matches!(
        reason,
        R::StaleState
            | R::MatchOver
            | R::MatchNotStarted
            | R::NotSeated
            | R::AlreadyChallenged
            | R::NoOpenOffence
    )
}

/// What one seat did, for its `SeatStats` in the match report.
#[derive(Default)]
pub(super) struct Tally {
    /// Decisions the seat made (its turns, including those the server played for it).
    pub(super) decisions: u32,
    /// Decisions the server made for it when its time ran out.
    pub(super) timeouts: u32,
    /// Its messages the table refused.
    pub(super) rejections: u32,
    /// Refusals a correct bot never causes (see [`is_protocol_error`]).
    pub(super) protocol_errors: u32,
    /// How long each decision took, in milliseconds.
    pub(super) think_ms: Vec<u32>,
}

impl Tally {
    /// Counts a decision that took `think_ms`.
    pub(super) fn decision(&mut self, think_ms: u32) {
        self.decisions += 1;
        self.think_ms.push(think_ms);
    }

    /// Counts a refusal of one of the seat's messages.
    pub(super) fn rejection(&mut self, reason: pb::ErrorReason) {
        self.rejections += 1;
        if is_protocol_error(reason) {
            self.protocol_errors += 1;
        }
    }

    /// The seat's statistics: counts and decision-time percentiles (nearest rank, rounded up).
    pub(super) fn stats(&self, seat: usize) -> pb::SeatStats {
        let mut t = self.think_ms.clone();
        t.sort_unstable();
        let pct = |p| crate::percentile::nearest_rank(&t, p);
        pb::SeatStats {
            seat: seat as u32,
            decisions: self.decisions,
            timeouts: self.timeouts,
            rejections: self.rejections,
            protocol_errors: self.protocol_errors,
            decision_ms_p50: pct(50),
            decision_ms_p90: pct(90),
            decision_ms_p99: pct(99),
            decision_ms_max: t.last().copied().unwrap_or(0),
            ..Default::default()
        }
    }
}

/// Places every seat that forfeited behind every seat that did not, keeping the order within
/// each group (`forfeited[s]` for seat `s`).
pub(super) fn place_forfeits_last(result: &mut pb::MatchResult, forfeited: &[bool]) {
    if !forfeited.iter().any(|&f| f) {
        return;
    }
    let old: Vec<u32> = result.standings.iter().map(|st| st.placing).collect();
    let n = old.len();
    for (s, standing) in result.standings.iter_mut().enumerate() {
        standing.placing = 1
            + (0..n)
                .filter(|&o| {
                    (!forfeited[o] && forfeited[s])
                        || (forfeited[o] == forfeited[s] && old[o] < old[s])
                })
                .count() as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(placings: &[u32]) -> pb::MatchResult {
        pb::MatchResult {
            standings: placings
                .iter()
                .enumerate()
                .map(|(s, &placing)| pb::SeatStanding {
                    seat: s as u32,
                    placing,
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    fn placings(r: &pb::MatchResult) -> Vec<u32> {
        r.standings.iter().map(|s| s.placing).collect()
    }

    #[test]
    fn forfeited_seats_go_behind_the_rest_keeping_each_groups_order() {
        let mut r = result(&[1, 2, 3, 4]);
        place_forfeits_last(&mut r, &[true, false, false, false]);
        assert_eq!(placings(&r), [4, 1, 2, 3]);
        let mut r = result(&[2, 1, 4, 3]);
        place_forfeits_last(&mut r, &[false, true, false, true]);
        assert_eq!(placings(&r), [1, 3, 2, 4]);
        // Ties stay ties within a group.
        let mut r = result(&[1, 1, 3]);
        place_forfeits_last(&mut r, &[false, false, true]);
        assert_eq!(placings(&r), [1, 1, 3]);
        let mut r = result(&[3, 1, 2]);
        place_forfeits_last(&mut r, &[false, false, false]);
        assert_eq!(placings(&r), [3, 1, 2], "nobody forfeited: unchanged");
    }

    #[test]
    fn a_tally_counts_protocol_errors_apart_from_races_a_correct_bot_can_lose() {
        let mut t = Tally::default();
        t.rejection(pb::ErrorReason::StaleState);
        t.rejection(pb::ErrorReason::AlreadyChallenged);
        t.rejection(pb::ErrorReason::IllegalCard);
        t.rejection(pb::ErrorReason::MalformedMessage);
        let s = t.stats(2);
        assert_eq!((s.seat, s.rejections, s.protocol_errors), (2, 4, 2));
    }

    #[test]
    fn decision_times_give_nearest_rank_percentiles() {
        let mut t = Tally::default();
        assert_eq!(t.stats(0).decision_ms_p50, 0, "no decisions: zeros");
        for ms in (1..=100).rev() {
            t.decision(ms);
        }
        let s = t.stats(0);
        assert_eq!(s.decisions, 100);
        assert_eq!(
            (
                s.decision_ms_p50,
                s.decision_ms_p90,
                s.decision_ms_p99,
                s.decision_ms_max
            ),
            (51, 91, 100, 100)
        );
        t.think_ms = vec![7];
        assert_eq!(t.stats(0).decision_ms_p99, 7);
    }
}
