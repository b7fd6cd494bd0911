//! One match of the gauntlet as the proxy sees it: what the bot was sent and answered, when,
//! and the one thing the kit does to it (the tamper).
//!
//! The proxy calls [`Trial::on_join`], [`Trial::on_down`] for every server message it forwards
//! to the bot, and [`Trial::on_action`] for every action the bot sends, which says whether to
//! forward the action, hold it back, or cut the connection. The checks read the record
//! ([`Trial::record`]) afterwards.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use maumau::{pb, wire};
use maumau_engine::{Action, Card, Rank, Suit};
use tokio::sync::watch;
use tokio::time::Instant;

/// What the kit does to the bot's answer to one required prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tamper {
    /// Nothing: every message passes unchanged.
    Nothing,
    /// The answer is swapped for an illegal action, which the server rejects; the bot must
    /// answer again.
    Reject,
    /// The answer is held back until the server has timed the decision out and moved on, then
    /// forwarded: the server rejects it as stale.
    Stale,
    /// The answer is swallowed and the bot's connection cut: it must reconnect and resume.
    Cut,
}

/// A required prompt forwarded to the bot.
#[derive(Clone, Debug)]
pub(crate) struct PromptRecord {
    /// The prompt, as first forwarded.
    pub(crate) prompt: pb::DecisionPrompt,
    /// When it was (last) forwarded.
    pub(crate) sent: Instant,
    /// How long the bot took to send its first answer.
    pub(crate) answered_after: Option<Duration>,
}

/// The server's verdict on an action.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Accepted.
    Accepted,
    /// Refused, with the reason and the server's message.
    Rejected(pb::ErrorReason, String),
}

/// An action the bot sent.
#[derive(Clone, Debug)]
pub(crate) struct Submission {
    /// When it reached the proxy.
    pub(crate) at: Instant,
    /// The state id it named.
    pub(crate) state_id: u64,
    /// The action, if it could be read.
    pub(crate) action: Option<Action>,
    /// The client's request id.
    pub(crate) request_id: u64,
    /// What the kit did to it.
    pub(crate) tampered: Option<Tamper>,
    /// The server's answer.
    pub(crate) verdict: Option<Verdict>,
}

/// A Join the bot sent.
#[derive(Clone, Debug)]
pub(crate) struct JoinRecord {
    /// When.
    pub(crate) at: Instant,
    /// The resume it asked for: `Some((last_event_number, snapshot))`.
    pub(crate) resume: Option<(u64, bool)>,
}

/// Everything the proxy saw of one trial.
#[derive(Clone, Debug, Default)]
pub(crate) struct Record {
    /// Every Join (and Watch) the bot opened.
    pub(crate) joins: Vec<JoinRecord>,
    /// Required prompts, in the order first forwarded (one per state id).
    pub(crate) prompts: Vec<PromptRecord>,
    /// Optional prompts forwarded (challenges, late cures), with when.
    pub(crate) optional: Vec<(Instant, pb::DecisionPrompt)>,
    /// Every action the bot sent.
    pub(crate) submissions: Vec<Submission>,
    /// When the tamper happened, and to which state id.
    pub(crate) tampered: Option<(Instant, u64)>,
    /// When the proxy cut the connection.
    pub(crate) cut_at: Option<Instant>,
    /// The last event number forwarded.
    pub(crate) last_event: u64,
}

impl Record {
    /// The 1-based position of the required prompt with this state id.
    fn ordinal(&self, state_id: u64) -> Option<usize> {
        self.prompts
            .iter()
            .position(|p| p.prompt.state_id == state_id)
            .map(|i| i + 1)
    }

    /// The required prompt with this state id.
    pub(crate) fn prompt(&self, state_id: u64) -> Option<&PromptRecord> {
        self.prompts.iter().find(|p| p.prompt.state_id == state_id)
    }
}

/// What the proxy should do with an action from the bot.
pub(crate) enum Route {
    /// Send this (possibly rewritten) action to the server.
    Forward(pb::ActionSubmission),
    /// Send it once the receiver reads `true`.
    Hold(pb::ActionSubmission, watch::Receiver<bool>),
    /// Drop it and cut the bot's connection.
    Cut,
}

/// One trial: the seat token it maps to, its tamper, and its record.
pub(crate) struct Trial {
    /// The seat token the server issued.
    pub(crate) token: String,
    tamper: Tamper,
    /// The required prompt (1-based) whose answer is tampered with.
    tamper_at: usize,
    /// Becomes true when a held answer may go (the server moved on).
    release: watch::Sender<bool>,
    /// The bot's Play streams open through the proxy now.
    streams: watch::Sender<usize>,
    record: Mutex<Record>,
}

/// A Play stream of the bot's, open until dropped.
pub(crate) struct OpenStream(Arc<Trial>);

impl Drop for OpenStream {
    fn drop(&mut self) {
        self.0.streams.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Trial {
    /// A trial for a seat token; `tamper` applies to the answer to required prompt `at`.
    pub(crate) fn new(token: String, tamper: Tamper, at: usize) -> Trial {
        Trial {
            token,
            tamper,
            tamper_at: at,
            release: watch::channel(false).0,
            streams: watch::channel(0).0,
            record: Mutex::new(Record::default()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True once the bot has opened a stream for this trial.
    pub(crate) fn joined(&self) -> bool {
        !self.lock().joins.is_empty()
    }

    /// A copy of the record so far.
    pub(crate) fn record(&self) -> Record {
        self.lock().clone()
    }

    /// The bot opened a stream.
    pub(crate) fn on_join(&self, resume: Option<&pb::Resume>) {
        self.lock().joins.push(JoinRecord {
            at: Instant::now(),
            resume: resume.map(|r| (r.last_event_number, r.snapshot)),
        });
    }

    /// The bot opened a Play stream; it counts as open until the value is dropped.
    pub(crate) fn open_stream(self: &Arc<Self>) -> OpenStream {
        self.streams.send_modify(|n| *n += 1);
        OpenStream(self.clone())
    }

    /// Completes once none of the bot's Play streams is open (at once if none ever was).
    pub(crate) async fn streams_closed(&self) {
        let _ = self.streams.subscribe().wait_for(|&n| n == 0).await;
    }

    /// The proxy cut the connection.
    pub(crate) fn on_cut(&self) {
        self.lock().cut_at = Some(Instant::now());
    }

    /// A server message on its way to the bot.
    pub(crate) fn on_down(&self, m: &pb::ServerMessage) {
        use pb::server_message::Kind;
        if let Some(Kind::Batch(b)) = &m.kind {
            // A bot that asked for EVENT_DELIVERY_WITH_PROMPT: its held answers, its events,
            // then its prompt.
            let answers = b.accepted.iter().copied().map(Kind::Accepted);
            let inner = answers.chain(b.events.iter().cloned().map(Kind::Event));
            for kind in inner.chain(b.prompt.clone().map(Kind::Prompt)) {
                self.on_down(&pb::ServerMessage { kind: Some(kind) });
            }
            return;
        }
        let mut r = self.lock();
        match &m.kind {
            Some(Kind::Prompt(p)) if p.required => {
                let now = Instant::now();
                match r
                    .prompts
                    .iter_mut()
                    .find(|x| x.prompt.state_id == p.state_id)
                {
                    Some(x) if x.answered_after.is_none() => x.sent = now,
                    Some(_) => {}
                    None => r.prompts.push(PromptRecord {
                        prompt: p.clone(),
                        sent: now,
                        answered_after: None,
                    }),
                }
            }
            Some(Kind::Prompt(p)) => r.optional.push((Instant::now(), p.clone())),
            Some(Kind::Event(e)) => {
                r.last_event = r.last_event.max(e.number);
                // A held answer may go once the server has moved past its prompt.
                if self.tamper == Tamper::Stale
                    && let Some((_, state_id)) = r.tampered
                    && r.prompt(state_id)
                        .is_some_and(|p| e.number > p.prompt.last_event_number)
                {
                    self.release.send_replace(true);
                }
            }
            Some(Kind::Snapshot(s)) => r.last_event = r.last_event.max(s.last_event_number),
            Some(Kind::Accepted(a)) => set_verdict(&mut r, a.request_id, Verdict::Accepted),
            Some(Kind::Rejected(x)) => set_verdict(
                &mut r,
                x.request_id,
                Verdict::Rejected(x.reason(), x.message.clone()),
            ),
            _ => {}
        }
    }

    /// The server's verdict on an action sent with SubmitAction.
    pub(crate) fn on_unary_verdict(&self, response: &pb::SubmitActionResponse) {
        use pb::submit_action_response::Result as R;
        let mut r = self.lock();
        match &response.result {
            Some(R::Accepted(a)) => set_verdict(&mut r, a.request_id, Verdict::Accepted),
            Some(R::Rejected(x)) => set_verdict(
                &mut r,
                x.request_id,
                Verdict::Rejected(x.reason(), x.message.clone()),
            ),
            None => {}
        }
    }

    /// An action from the bot: records it and says what to do with it.
    pub(crate) fn on_action(&self, mut sub: pb::ActionSubmission) -> Route {
        let now = Instant::now();
        let mut r = self.lock();
        let action = wire::action_from_submission(&sub).ok();
        if let Some(p) = r
            .prompts
            .iter_mut()
            .find(|p| p.prompt.state_id == sub.state_id && sub.state_id != 0)
            && p.answered_after.is_none()
        {
            p.answered_after = Some(now.saturating_duration_since(p.sent));
        }
        let target = sub.state_id != 0 && r.ordinal(sub.state_id) == Some(self.tamper_at);
        let first = r.tampered.is_none();
        let same = r.tampered.is_some_and(|(_, s)| s == sub.state_id);
        let mut record = Submission {
            at: now,
            state_id: sub.state_id,
            action,
            request_id: sub.request_id,
            tampered: None,
            verdict: None,
        };
        if self.tamper == Tamper::Stale
            && target
            && r.prompt(sub.state_id)
                .is_some_and(|p| r.last_event > p.prompt.last_event_number)
        {
            // A late answer: the server has moved on already and will refuse it as it is.
            self.release.send_replace(true);
        }
        let route = match self.tamper {
            Tamper::Reject if target && first => {
                let prompt = r.prompt(sub.state_id).map(|p| p.prompt.clone());
                if let Some(bad) = prompt.and_then(|p| illegal_index(&p)) {
                    sub.choice = Some(pb::action_submission::Choice::ActionIndex(bad));
                    record.tampered = Some(Tamper::Reject);
                    r.tampered = Some((now, sub.state_id));
                }
                Route::Forward(sub)
            }
            // Every answer to the held prompt waits: a bot that repeats itself must not slip
            // one through before the server moves on.
            Tamper::Stale if target && (first || same) && !*self.release.borrow() => {
                record.tampered = Some(Tamper::Stale);
                r.tampered.get_or_insert((now, sub.state_id));
                Route::Hold(sub, self.release.subscribe())
            }
            Tamper::Cut if target && first => {
                record.tampered = Some(Tamper::Cut);
                r.tampered = Some((now, sub.state_id));
                Route::Cut
            }
            _ => Route::Forward(sub),
        };
        r.submissions.push(record);
        route
    }
}

fn set_verdict(r: &mut Record, request_id: u64, verdict: Verdict) {
    if let Some(s) = r
        .submissions
        .iter_mut()
        .rev()
        .find(|s| s.request_id == request_id && s.verdict.is_none())
    {
        s.verdict = Some(verdict);
    }
}

/// The dense index of an action the server must refuse for this prompt: a play of a plain card
/// the seat does not hold (so the engine answers CARD_NOT_IN_HAND).
fn illegal_index(prompt: &pb::DecisionPrompt) -> Option<u32> {
    let obs =
        wire::observation_from_wire(prompt.observation.as_ref()?, &prompt.legal_actions).ok()?;
    let ranks = [
        Rank::Ten,
        Rank::King,
        Rank::Queen,
        Rank::Nine,
        Rank::Ace,
        Rank::Eight,
    ];
    ranks
        .into_iter()
        .flat_map(|r| Suit::ALL.into_iter().map(move |s| Card::new(r, s)))
        .find(|&c| !obs.hand.contains(c))
        .map(|c| Action::play(c).index() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use maumau_engine::Game;

    #[test]
    fn the_swapped_action_is_one_the_engine_refuses() {
        let game = Game::from_position(
            "mm1 classic seats=2 turn=0 hands=10C,10D,10H,10S,KC/7H discard=9C",
        )
        .expect("valid");
        let obs = game.observation(0);
        let prompt = pb::DecisionPrompt {
            state_id: 3,
            legal_actions: wire::legal_actions_to_wire(&obs),
            required: true,
            observation: Some(wire::observation_to_wire(&obs)),
            ..Default::default()
        };
        let bad = illegal_index(&prompt).expect("an illegal action");
        let action = Action::from_index(bad as usize).expect("an action");
        assert!(!obs.legal.contains(&action));
        let mut probe = game;
        assert!(probe.apply(0, action).is_err());
    }

    fn prompt(state_id: u64, last_event_number: u64) -> pb::ServerMessage {
        pb::ServerMessage {
            kind: Some(pb::server_message::Kind::Prompt(pb::DecisionPrompt {
                state_id,
                required: true,
                last_event_number,
                ..Default::default()
            })),
        }
    }

    fn answer(state_id: u64, request_id: u64) -> pb::ActionSubmission {
        pb::ActionSubmission {
            state_id,
            choice: Some(pb::action_submission::Choice::ActionIndex(192)),
            request_id,
        }
    }

    #[test]
    fn a_stale_tamper_holds_every_answer_to_its_prompt_until_the_server_moves_on() {
        let trial = Trial::new("t".into(), Tamper::Stale, 2);
        trial.on_down(&prompt(5, 10));
        assert!(matches!(trial.on_action(answer(5, 1)), Route::Forward(_)));
        trial.on_down(&prompt(7, 12));
        let Route::Hold(_, mut released) = trial.on_action(answer(7, 2)) else {
            panic!("held")
        };
        assert!(matches!(trial.on_action(answer(7, 3)), Route::Hold(..)));
        trial.on_down(&pb::ServerMessage {
            kind: Some(pb::server_message::Kind::Event(pb::NumberedEvent {
                number: 12,
                event: None,
            })),
        });
        assert!(
            !*released.borrow_and_update(),
            "not before the server moves on"
        );
        trial.on_down(&pb::ServerMessage {
            kind: Some(pb::server_message::Kind::Event(pb::NumberedEvent {
                number: 13,
                event: None,
            })),
        });
        assert!(*released.borrow_and_update());
        let record = trial.record();
        assert_eq!(record.tampered.map(|t| t.1), Some(7));
        assert!(record.prompt(5).and_then(|p| p.answered_after).is_some());
    }

    #[test]
    fn a_late_answer_is_not_held_the_server_has_moved_on_already() {
        let trial = Trial::new("t".into(), Tamper::Stale, 2);
        trial.on_down(&prompt(5, 10));
        assert!(matches!(trial.on_action(answer(5, 1)), Route::Forward(_)));
        trial.on_down(&prompt(7, 12));
        trial.on_down(&pb::ServerMessage {
            kind: Some(pb::server_message::Kind::Event(pb::NumberedEvent {
                number: 13,
                event: None,
            })),
        });
        assert!(matches!(trial.on_action(answer(7, 2)), Route::Forward(_)));
        assert_eq!(trial.record().tampered, None);
    }
}
