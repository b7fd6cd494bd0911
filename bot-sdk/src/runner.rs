//! Plays a bot against a Mau Mau Arena server over gRPC: join with a seat token, answer every
//! prompt before its deadline, retry a rejected action sensibly, reconnect and resume after a
//! dropped connection.
//!
//! ```no_run
//! # async fn demo() -> Result<(), maumau_bot_sdk::runner::RunError> {
//! use maumau_bot_sdk::{bots::HeuristicBot, runner::{RunOptions, run}};
//! let mut bot = HeuristicBot::new(7);
//! let options = RunOptions::new("http://127.0.0.1:50051", "SEAT-TOKEN");
//! let report = run(&mut bot, &options).await?;
//! println!("placings: {:?}", report.result);
//! # Ok(())
//! # }
//! ```
//!
//! [`run`] plays a Rust [`Bot`], shown each prompt as an engine [`maumau_engine::Observation`].
//! [`run_wire`] plays a [`WirePlayer`] instead, which is shown the wire messages themselves and
//! answers with an action's dense index: what a binding to another language plugs in (the
//! Python client's native transport), so that the connection, the resume and the retries stay
//! here.

use std::fmt;
use std::time::Duration;

use maumau::{pb, wire};
use maumau_engine::{Event, MatchResult};
use tokio::sync::mpsc;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use crate::Bot;

/// Where and how to play.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The server, e.g. `http://127.0.0.1:50051`, or a Unix socket as `unix:PATH` (how a program
    /// in `maumau --sandbox` reaches its server: `unix:/run/maumau/maumau.sock`).
    pub server: String,
    /// The seat token from CreateMatch.
    pub token: String,
    /// The name shown to operators and spectators.
    pub name: String,
    /// Reconnects tried in a row before giving up.
    pub max_reconnects: u32,
    /// Asks for `EVENT_DELIVERY_WITH_PROMPT` (the default, `true`): the seat's events and the
    /// answers to its actions come in one batch with its next prompt, one message per decision.
    /// `false` asks for `EVENT_DELIVERY_PER_STEP` instead (see
    /// [`RunOptions::with_events_as_they_happen`]): each step's events in one message as the
    /// step happens, for a bot that must see other seats' plays before its own turn. The bot
    /// sees the same events in the same order either way; batched, it sees them later.
    pub batched: bool,
}

impl RunOptions {
    /// Options with a default name and 10 reconnects.
    pub fn new(server: impl Into<String>, token: impl Into<String>) -> RunOptions {
        RunOptions {
            server: server.into(),
            token: token.into(),
            name: "rust-bot".into(),
            max_reconnects: 10,
            batched: true,
        }
    }

    /// The same options, asking for events batched with each prompt (the default; see
    /// [`RunOptions::batched`]).
    pub fn with_batched_events(mut self) -> RunOptions {
        self.batched = true;
        self
    }

    /// The same options, opting out of the batched delivery: events come as they happen, one
    /// message per step of the match (`EVENT_DELIVERY_PER_STEP`; see [`RunOptions::batched`]).
    pub fn with_events_as_they_happen(mut self) -> RunOptions {
        self.batched = false;
        self
    }

    /// The `Join.event_delivery` these options ask for.
    pub fn event_delivery(&self) -> pb::EventDelivery {
        if self.batched {
            pb::EventDelivery::WithPrompt
        } else {
            pb::EventDelivery::PerStep
        }
    }
}

/// Why a run ended without a match report.
#[derive(Debug)]
pub enum RunError {
    /// The server address is not a valid URI.
    BadAddress(String),
    /// The server refused the seat (a wrong token, for example): retrying will not help.
    Refused(tonic::Status),
    /// The connection failed more than `max_reconnects` times in a row.
    GaveUp(String),
    /// The server sent something the SDK could not read.
    Protocol(String),
    /// The player failed ([`WirePlayer`] returned an error): the run stops at once, and the
    /// seat is left to the server's deadline.
    Player(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::BadAddress(a) => write!(
                f,
                "`{a}` is not a server address (try http://127.0.0.1:50051)"
            ),
            RunError::Refused(s) => write!(
                f,
                "the server refused the seat: {} ({})",
                s.message(),
                wire::reason_of(s).as_str_name()
            ),
            RunError::GaveUp(why) => write!(f, "lost the connection and could not resume: {why}"),
            RunError::Protocol(why) => write!(f, "unexpected message from the server: {why}"),
            RunError::Player(why) => write!(f, "the player failed: {why}"),
        }
    }
}

impl std::error::Error for RunError {}

/// What one connection ended with.
enum Outcome {
    Finished(pb::MatchReport),
    Dropped(String),
}

/// A player shown the wire messages themselves, for [`run_wire`].
///
/// Only [`WirePlayer::prompt`] is required. Every method may fail, usually with
/// [`RunError::Player`] (a binding keeps its own error beside it to hand back): the run then stops
/// with that error.
pub trait WirePlayer: Send {
    /// Answers a prompt with the dense index of one of `prompt.legal_actions` (never empty here).
    /// A required prompt (`prompt.required`) must be answered; an optional one (a challenge or a
    /// late cure is open) may be let pass with `None`.
    fn prompt(&mut self, prompt: &pb::DecisionPrompt) -> Result<Option<u32>, RunError>;

    /// Every other part of what the server sends, in order, each part of an `EventBatch` on its
    /// own (its answers, its events, then its prompt, which goes to [`WirePlayer::prompt`]).
    /// The default ignores them.
    fn observe(&mut self, _part: &pb::server_message::Kind) -> Result<(), RunError> {
        Ok(())
    }

    /// The stream dropped (`attempt` failures in a row, counting this one); the runner
    /// reconnects and resumes after this returns, unless it gives up. The default ignores it.
    fn disconnected(&mut self, _why: &str, _attempt: u32) -> Result<(), RunError> {
        Ok(())
    }
}

/// Plays the seat until the match ends and returns the final report.
pub async fn run(bot: &mut dyn Bot, options: &RunOptions) -> Result<pb::MatchReport, RunError> {
    let report = run_wire(&mut BotPlayer { bot }, options).await?;
    let result = report
        .result
        .as_ref()
        .and_then(|r| MatchResult::try_from(r).ok());
    bot.on_match_end(result.as_ref());
    Ok(report)
}

/// A [`Bot`] as a [`WirePlayer`]: each prompt read into an engine observation, each event into
/// an engine event.
struct BotPlayer<'a> {
    bot: &'a mut dyn Bot,
}

impl WirePlayer for BotPlayer<'_> {
    fn prompt(&mut self, p: &pb::DecisionPrompt) -> Result<Option<u32>, RunError> {
        let observation = p
            .observation
            .as_ref()
            .ok_or_else(|| RunError::Protocol("a prompt without an observation".into()))?;
        let obs = wire::observation_from_wire(observation, &p.legal_actions)
            .map_err(|e| RunError::Protocol(e.to_string()))?;
        if obs.legal.is_empty() {
            return Ok(None);
        }
        let action = if p.required {
            self.bot.decide(&obs)
        } else {
            match self.bot.react(&obs) {
                Some(a) => a,
                None => return Ok(None),
            }
        };
        Ok(Some(action.index() as u32))
    }

    fn observe(&mut self, part: &pb::server_message::Kind) -> Result<(), RunError> {
        if let pb::server_message::Kind::Event(e) = part
            && let Some(event) = e.event.as_ref().and_then(|ev| Event::try_from(ev).ok())
        {
            self.bot.on_event(&event);
        }
        Ok(())
    }
}

/// Plays the seat with a [`WirePlayer`] until the match ends and returns the final report: the
/// same connection, resume and retries as [`run`].
pub async fn run_wire(
    player: &mut dyn WirePlayer,
    options: &RunOptions,
) -> Result<pb::MatchReport, RunError> {
    let endpoint = tonic::transport::Endpoint::from_shared(options.server.clone())
        .map_err(|_| RunError::BadAddress(options.server.clone()))?
        .tcp_nodelay(true);
    let mut last_event = None;
    let mut failures = 0;
    loop {
        let outcome = match endpoint.connect().await {
            Ok(channel) => play_once(player, options, channel, &mut last_event).await?,
            Err(e) => Outcome::Dropped(e.to_string()),
        };
        match outcome {
            Outcome::Finished(report) => return Ok(report),
            Outcome::Dropped(why) => {
                failures += 1;
                player.disconnected(&why, failures)?;
                if failures > options.max_reconnects {
                    return Err(RunError::GaveUp(why));
                }
                // Back off a little more each time: 50 ms, 100 ms, … up to 2 s.
                let wait =
                    Duration::from_millis(50u64 << failures.min(6)).min(Duration::from_secs(2));
                tokio::time::sleep(wait).await;
            }
        }
    }
}

async fn play_once(
    player: &mut dyn WirePlayer,
    options: &RunOptions,
    channel: tonic::transport::Channel,
    last_event: &mut Option<u64>,
) -> Result<Outcome, RunError> {
    let mut client = pb::play_service_client::PlayServiceClient::new(channel);
    let (tx, rx) = mpsc::channel(64);
    let join = pb::Join {
        token: options.token.clone(),
        client_name: options.name.clone(),
        resume: last_event.map(|n| pb::Resume {
            last_event_number: n,
            snapshot: false,
        }),
        event_delivery: options.event_delivery() as i32,
        ..Default::default()
    };
    let send = |kind| pb::PlayRequest { kind: Some(kind) };
    if tx
        .send(send(pb::play_request::Kind::Join(join)))
        .await
        .is_err()
    {
        return Ok(Outcome::Dropped("the stream closed".into()));
    }
    let mut inbound = match client.play(ReceiverStream::new(rx)).await {
        Ok(r) => r.into_inner(),
        Err(s) if is_refusal(&s) => return Err(RunError::Refused(s)),
        Err(s) => return Ok(Outcome::Dropped(why_dropped(&s))),
    };
    let mut request_id = 0u64;
    // The prompt we answered last and the fallback to send if the answer is refused.
    let mut pending: Option<(u64, u64, u32)> = None;
    while let Some(message) = inbound.next().await {
        let message = match message {
            Ok(m) => m.message,
            Err(s) if is_refusal(&s) => return Err(RunError::Refused(s)),
            Err(s) => return Ok(Outcome::Dropped(why_dropped(&s))),
        };
        let Some(kind) = message.and_then(|m| m.kind) else {
            continue;
        };
        // An EventBatch (only sent when a stream asks for it) is its held answers, its events,
        // then its prompt.
        let kinds = match kind {
            pb::server_message::Kind::Batch(b) => b
                .accepted
                .into_iter()
                .map(pb::server_message::Kind::Accepted)
                .chain(b.events.into_iter().map(pb::server_message::Kind::Event))
                .chain(b.prompt.map(pb::server_message::Kind::Prompt))
                .collect(),
            kind => vec![kind],
        };
        for kind in kinds {
            let pb::server_message::Kind::Prompt(p) = kind else {
                match &kind {
                    pb::server_message::Kind::Event(e) => *last_event = Some(e.number),
                    pb::server_message::Kind::Snapshot(s) => {
                        *last_event = Some(s.last_event_number)
                    }
                    _ => {}
                }
                player.observe(&kind)?;
                match kind {
                    pb::server_message::Kind::Rejected(r) => {
                        // A stale state means the match moved on: the next prompt comes by
                        // itself. Anything else: send the fallback once.
                        if let Some((id, state_id, fallback)) = pending.take()
                            && id == r.request_id
                            && r.reason() != pb::ErrorReason::StaleState
                        {
                            request_id += 1;
                            let retry = submission(state_id, fallback, request_id);
                            if tx
                                .send(send(pb::play_request::Kind::Action(retry)))
                                .await
                                .is_err()
                            {
                                return Ok(Outcome::Dropped("the stream closed".into()));
                            }
                        }
                    }
                    pb::server_message::Kind::Finished(f) => {
                        return f.report.map(Outcome::Finished).ok_or_else(|| {
                            RunError::Protocol("MatchFinished without a report".into())
                        });
                    }
                    _ => {}
                }
                continue;
            };
            if p.legal_actions.is_empty() {
                continue;
            }
            let Some(index) = player.prompt(&p)? else {
                continue;
            };
            let state_id = if p.required { p.state_id } else { 0 };
            // Should the player answer with something unlisted, the first listed action is the
            // fallback for a refusal.
            let fallback = if p.legal_actions.iter().any(|a| a.index == index) {
                index
            } else {
                p.legal_actions[0].index
            };
            request_id += 1;
            if p.required {
                pending = Some((request_id, state_id, fallback));
            }
            let submission = submission(state_id, index, request_id);
            if tx
                .send(send(pb::play_request::Kind::Action(submission)))
                .await
                .is_err()
            {
                return Ok(Outcome::Dropped("the stream closed".into()));
            }
        }
    }
    Ok(Outcome::Dropped("the server closed the stream".into()))
}

fn submission(state_id: u64, index: u32, request_id: u64) -> pb::ActionSubmission {
    pb::ActionSubmission {
        state_id,
        choice: Some(pb::action_submission::Choice::ActionIndex(index)),
        request_id,
    }
}

/// Why a stream dropped, in a line: the status code and its message (`Unavailable: ...`), not
/// the status's whole `Display` with its source chain.
fn why_dropped(s: &tonic::Status) -> String {
    format!("{:?}: {}", s.code(), s.message())
}

/// Refusals that reconnecting cannot fix.
fn is_refusal(s: &tonic::Status) -> bool {
    matches!(
        wire::reason_of(s),
        pb::ErrorReason::BadToken
            | pb::ErrorReason::NotSeated
            | pb::ErrorReason::NotJoined
            | pb::ErrorReason::Superseded
            | pb::ErrorReason::PermissionDenied
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_stream_is_named_by_its_code_and_message_alone() {
        let io = std::io::Error::new(std::io::ErrorKind::BrokenPipe, "broken pipe");
        let mut status = tonic::Status::unknown("h2 protocol error: error reading a body");
        status.set_source(std::sync::Arc::new(io));
        assert!(status.to_string().contains("source"), "{status}");
        assert_eq!(
            why_dropped(&status),
            "Unknown: h2 protocol error: error reading a body"
        );
    }
}
