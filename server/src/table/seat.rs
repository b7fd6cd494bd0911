//! A seat and its clock: who plays it (a remote client, a built-in bot, or the server's default
//! action after it gave up), its budgets and statistics, and what the clock decides: when the
//! table must act by itself next (a decision's deadline, shortened by the disconnect grace), what
//! a decision costs the seat's bank, and when a seat that keeps timing out or stays away gives up.

use std::time::Duration;

use maumau::pb;
use maumau_engine::{Action, Seat};
use tokio::time::Instant;

use super::Table;
use super::connections::Inbound;
use super::delivery::Feed;
use super::recording::Tally;
use crate::bots::BuiltinBot;
use crate::config::{GiveUp, TimeControl};

/// The events the log has room for when a match starts: a classic match of four seats logs
/// about 500, and a few twice that.
const EXPECTED_EVENTS: usize = 1024;
use crate::limit::RateLimit;

/// Who plays a seat.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Controller {
    /// A client over the network.
    Remote,
    /// The built-in random bot.
    Bot,
    /// The server's default action (a forfeited seat).
    Default,
}

pub(super) struct SeatState {
    pub(super) controller: Controller,
    /// The seat's connection and what waits to go out on it.
    pub(super) feed: Feed,
    /// When the seat's connection went away (or the match started without it).
    pub(super) away_since: Option<Instant>,
    pub(super) joined: bool,
    pub(super) name: String,
    pub(super) bank: Duration,
    /// What the seat did, for its statistics.
    pub(super) tally: Tally,
    pub(super) gave_up: bool,
    /// Timeouts that no longer count towards giving up: those before the seat was taken back
    /// from the bot ([`GiveUp::BotUntilBack`]).
    pub(super) timeouts_forgiven: u32,
    pub(super) forfeited: bool,
    /// It resigned (`PlayService.Resign`) rather than being given up by its clock.
    pub(super) resigned: bool,
    pub(super) bot: BuiltinBot,
    /// The state id of the last optional prompt sent (challenge or late cure), to send it once.
    pub(super) optional_prompted: u64,
    /// The seat's Play stream, read by the table.
    pub(super) inbound: Option<Inbound>,
    /// The seat's (its token's) budget of actions over all its connections, streamed or unary.
    pub(super) calls: RateLimit,
    /// The seat's budget of Pings and Resume messages, apart from its actions: a seat that
    /// floods actions can still check its line.
    pub(super) control: RateLimit,
    /// The seat's budget of resumes, each of which sends events again.
    pub(super) resumes: RateLimit,
}

impl SeatState {
    /// Whether a client over the network plays the seat (not a bot, not the default action).
    pub(super) fn is_remote(&self) -> bool {
        self.controller == Controller::Remote
    }

    /// The seat's statistics in the match report (it is seat `s`).
    pub(super) fn stats(&self, s: usize) -> pb::SeatStats {
        pb::SeatStats {
            bank_left_ms: self.bank.as_millis() as u32,
            gave_up: self.gave_up,
            forfeited: self.forfeited,
            resigned: self.resigned,
            ..self.tally.stats(s)
        }
    }
}

/// The limits on what one seat may repeat (see [`crate::ServerConfig`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SeatLimits {
    /// Messages one Play stream may send per second (bursts of twice this).
    pub(crate) actions_per_second: u32,
    /// Calls one seat may make per second over all its connections (bursts of twice this).
    pub(crate) calls_per_second: u32,
    /// Resumes one seat may make per minute (at most this many at once).
    pub(crate) resumes_per_minute: u32,
}

impl SeatLimits {
    pub(crate) fn from_config(c: &crate::ServerConfig) -> SeatLimits {
        SeatLimits {
            actions_per_second: c.actions_per_second,
            calls_per_second: c.calls_per_second,
            resumes_per_minute: c.resumes_per_minute,
        }
    }
}

/// The default action the server plays for a seat: DRAW if legal, else PASS, else the first listed.
pub fn default_action(legal: &[Action]) -> Action {
    [Action::Draw, Action::Pass]
        .into_iter()
        .find(|a| legal.contains(a))
        .unwrap_or(legal[0])
}

/// When the seat to move must have answered a decision that started at `started`: its allowance
/// plus its bank, or, while its connection is away, the disconnect grace counted from when it
/// left (from the decision's start, if it left before), whichever comes first. `None` for an
/// untimed seat that is connected: it may think as long as it likes.
pub(super) fn decision_deadline(
    clock: &TimeControl,
    started: Instant,
    bank: Duration,
    away_since: Option<Instant>,
) -> Option<Instant> {
    let answer_by = (!clock.untimed).then(|| started + clock.decision + bank);
    let back_by = away_since.map(|away| away.max(started) + clock.disconnect_grace);
    match (answer_by, back_by) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// A seat's bank after a decision that took `used`: time beyond the allowance comes out of it
/// (an untimed clock takes nothing).
pub(super) fn bank_after(clock: &TimeControl, bank: Duration, used: Duration) -> Duration {
    if clock.untimed {
        return bank;
    }
    bank.saturating_sub(used.saturating_sub(clock.decision))
}

/// What the table does when a seat's deadline passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lapse {
    /// The seat has been away longer than the grace: it gives up.
    GiveUp,
    /// The server plays the default action for it (its `timeouts`-th), and it gives up too when
    /// that was its last allowed timeout.
    Timeout { then_give_up: bool },
    /// Nothing: an untimed seat that came back before its grace ran out.
    Wait,
}

/// What a passed deadline means for a seat away since `away_since` that has timed out
/// `timeouts` times before.
pub(super) fn lapse(
    clock: &TimeControl,
    now: Instant,
    away_since: Option<Instant>,
    timeouts: u32,
) -> Lapse {
    if away_since.is_some_and(|away| now >= away + clock.disconnect_grace) {
        Lapse::GiveUp
    } else if clock.untimed {
        Lapse::Wait
    } else {
        Lapse::Timeout {
            then_give_up: timeouts + 1 >= clock.max_timeouts,
        }
    }
}

impl Table {
    /// Publishes the seats' names and connections to the match's info (GetMatch).
    pub(super) fn publish_players(&self) {
        let players = self.players();
        self.entry.update(|info| info.players = players);
    }

    /// Who plays each seat, and whether it is connected.
    pub(super) fn players(&self) -> Vec<pb::PlayerInfo> {
        self.seats
            .iter()
            .enumerate()
            .map(|(s, seat)| pb::PlayerInfo {
                seat: s as u32,
                // The name the match's creator gave the seat comes first (a program cannot
                // join as someone else); then a seat the server's bot plays from the start has
                // the bot's name; a remote seat keeps its client's name even while a bot plays
                // for it.
                name: match self.entry.names.get(s).filter(|n| !n.is_empty()) {
                    Some(given) => given.clone(),
                    None if seat.name.is_empty()
                        && seat.controller == Controller::Bot
                        && !seat.gave_up =>
                    {
                        seat.bot.name().to_string()
                    }
                    None => seat.name.clone(),
                },
                bot: match seat.controller {
                    Controller::Bot => seat.bot.kind_to_wire() as i32,
                    _ => pb::BotKind::Unspecified as i32,
                },
                connected: seat.feed.conn.is_some() || seat.controller == Controller::Bot,
            })
            .collect()
    }

    /// Starts the match once every remote seat has joined, or the join timeout has passed.
    pub(super) fn maybe_start(&mut self) {
        if self.running {
            return;
        }
        let all_joined = self
            .seats
            .iter()
            .all(|s| s.joined || s.controller != Controller::Remote);
        if all_joined || self.created.elapsed() >= self.join_timeout {
            self.running = true;
            // Room for a match's events (and actions) from its start, rather than copying the
            // log each time it doubles; a match waiting for its seats holds none.
            self.log.reserve(EXPECTED_EVENTS);
            self.actions.reserve(EXPECTED_EVENTS / 2);
            let now = Instant::now();
            for seat in self
                .seats
                .iter_mut()
                .filter(|s| s.controller == Controller::Remote)
            {
                if seat.feed.conn.is_none() {
                    seat.away_since = Some(now);
                }
            }
            self.entry
                .update(|info| info.status = pb::MatchStatus::Running);
            self.decision_started = None;
            self.prompt();
        }
    }

    /// When the table must act by itself next: the start of a match whose seats did not all
    /// join, or the deadline of the seat to act.
    pub(super) fn deadline(&self) -> Option<Instant> {
        if !self.running {
            return Some(self.created + self.join_timeout);
        }
        let seat = self.game.to_act()?;
        let st = &self.seats[seat as usize];
        if st.controller != Controller::Remote {
            return None;
        }
        let started = self.decision_started?;
        decision_deadline(&self.clock, started, st.bank, st.away_since)
    }

    /// The table's deadline passed: the match starts without the seats that did not join, or
    /// the seat to move times out or gives up.
    pub(super) fn on_deadline(&mut self) {
        if !self.running {
            self.maybe_start();
            return;
        }
        let Some(s) = self.game.to_act() else { return };
        let seat = &mut self.seats[s as usize];
        let then_give_up = match lapse(
            &self.clock,
            Instant::now(),
            seat.away_since,
            seat.tally.timeouts - seat.timeouts_forgiven,
        ) {
            Lapse::GiveUp => return self.give_up(s),
            Lapse::Timeout { then_give_up } => then_give_up,
            Lapse::Wait => return,
        };
        seat.tally.timeouts += 1;
        crate::metrics::timeout();
        seat.bank = Duration::ZERO;
        let timeouts = seat.tally.timeouts;
        let action = default_action(&self.game.legal_actions(s));
        tracing::debug!(match_id = %self.entry.id, seat = s, timeouts, "decision timed out");
        if let Err(r) = self.apply(s, action, true) {
            // Cannot happen: the default action is one of the legal ones.
            tracing::error!(match_id = %self.entry.id, seat = s, %action, error = %r, "the default action was refused");
        }
        if then_give_up {
            self.give_up(s);
        }
    }

    /// The seat gives up: the built-in bot plays it from now on (or, [`GiveUp::BotUntilBack`],
    /// until its client joins again), or it forfeits, as the time control says.
    pub(super) fn give_up(&mut self, s: Seat) {
        let seat = &mut self.seats[s as usize];
        seat.gave_up = true;
        match self.clock.give_up {
            GiveUp::Bot | GiveUp::BotUntilBack => seat.controller = Controller::Bot,
            GiveUp::Forfeit => {
                seat.controller = Controller::Default;
                seat.forfeited = true;
            }
        }
        tracing::info!(match_id = %self.entry.id, seat = s, policy = ?self.clock.give_up, "seat gave up");
        self.publish_players();
    }

    /// Seat `s` resigns: it forfeits, whatever the time control's give-up policy, and the
    /// server plays its default action from now on. False when it had forfeited already.
    pub(super) fn resign(&mut self, s: Seat) -> bool {
        let seat = &mut self.seats[s as usize];
        if seat.forfeited {
            return false;
        }
        seat.gave_up = true;
        seat.controller = Controller::Default;
        seat.forfeited = true;
        seat.resigned = true;
        tracing::info!(match_id = %self.entry.id, seat = s, "seat resigned");
        self.publish_players();
        true
    }

    /// Seat `s`'s client is back: under [`GiveUp::BotUntilBack`] a seat the bot was playing is
    /// its own again, with its timeouts forgiven (it gives up again only after as many new ones).
    pub(super) fn take_back(&mut self, s: Seat) {
        let seat = &mut self.seats[s as usize];
        if self.clock.give_up != GiveUp::BotUntilBack
            || !seat.gave_up
            || seat.controller != Controller::Bot
        {
            return;
        }
        seat.controller = Controller::Remote;
        seat.timeouts_forgiven = seat.tally.timeouts;
        tracing::info!(match_id = %self.entry.id, seat = s, "seat taken back from the bot");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> TimeControl {
        TimeControl {
            decision: Duration::from_secs(2),
            bank: Duration::from_secs(30),
            max_timeouts: 3,
            disconnect_grace: Duration::from_secs(10),
            give_up: GiveUp::Bot,
            untimed: false,
        }
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn the_default_action_draws_else_passes_else_plays_the_first_listed() {
        let play = Action::Challenge;
        assert_eq!(
            default_action(&[play, Action::Pass, Action::Draw]),
            Action::Draw
        );
        assert_eq!(default_action(&[play, Action::Pass]), Action::Pass);
        assert_eq!(default_action(&[play]), play);
    }

    #[test]
    fn a_decision_is_due_after_its_allowance_and_the_bank() {
        let t0 = Instant::now();
        assert_eq!(
            decision_deadline(&clock(), t0, secs(5), None),
            Some(t0 + secs(7))
        );
    }

    #[test]
    fn a_seat_away_is_due_when_its_grace_ends_if_that_comes_first() {
        let t0 = Instant::now();
        let c = clock();
        // Left 1 s into the decision: grace ends at 11 s, before 2 + 30 s.
        assert_eq!(
            decision_deadline(&c, t0, secs(30), Some(t0 + secs(1))),
            Some(t0 + secs(11))
        );
        // Left before the decision started: the grace counts from its start.
        let before = t0.checked_sub(secs(100)).unwrap_or(t0);
        assert_eq!(
            decision_deadline(&c, t0, secs(30), Some(before)),
            Some(t0 + secs(10))
        );
        // An empty bank: the allowance ends first.
        assert_eq!(
            decision_deadline(&c, t0, secs(0), Some(t0)),
            Some(t0 + secs(2))
        );
    }

    #[test]
    fn an_untimed_seat_is_due_only_when_it_stays_away_past_its_grace() {
        let t0 = Instant::now();
        let c = TimeControl {
            untimed: true,
            ..clock()
        };
        assert_eq!(decision_deadline(&c, t0, secs(0), None), None);
        assert_eq!(
            decision_deadline(&c, t0, secs(0), Some(t0 + secs(1))),
            Some(t0 + secs(11))
        );
        assert_eq!(bank_after(&c, secs(30), secs(600)), secs(30));
        assert_eq!(lapse(&c, t0 + secs(5), Some(t0), 0), Lapse::Wait);
        assert_eq!(lapse(&c, t0 + secs(10), Some(t0), 0), Lapse::GiveUp);
    }

    #[test]
    fn the_bank_pays_only_for_time_beyond_the_allowance_and_never_goes_negative() {
        let c = clock();
        assert_eq!(
            bank_after(&c, secs(30), Duration::from_millis(1500)),
            secs(30)
        );
        assert_eq!(bank_after(&c, secs(30), secs(5)), secs(27));
        assert_eq!(bank_after(&c, secs(1), secs(60)), Duration::ZERO);
    }

    #[test]
    fn a_lapse_is_a_timeout_until_the_last_allowed_one_or_the_grace_is_over() {
        let c = clock();
        let now = Instant::now();
        let t = |then_give_up| Lapse::Timeout { then_give_up };
        assert_eq!(lapse(&c, now, None, 0), t(false));
        assert_eq!(lapse(&c, now, None, 1), t(false));
        assert_eq!(
            lapse(&c, now, None, 2),
            t(true),
            "the third timeout is the last"
        );
        // Away, but within the grace: still a timeout.
        assert_eq!(lapse(&c, now + secs(9), Some(now), 0), t(false));
        assert_eq!(lapse(&c, now + secs(10), Some(now), 0), Lapse::GiveUp);
    }
}
