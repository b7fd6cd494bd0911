//! Checks what one connection received against a local re-simulation of the match's replay, and
//! clients that record everything they receive while they play.
//!
//! Included by the test files that need it with `#[path = "common/feed.rs"] mod feed;` (it uses
//! `crate::common`, so those files also declare `mod common;`).
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::collections::HashMap;
use std::time::Duration;

use maumau::pb::play_service_client::PlayServiceClient;
use maumau::{pb, wire};
use maumau_engine::{Action, Event, Game, MatchConfig, Seat, event_for};
use tokio_stream::StreamExt;
use tonic::transport::Channel;

use crate::common;

/// A match re-simulated from its replay: the full (unredacted) event log and the engine state
/// after every accepted action.
pub struct Resim {
    pub seats: u8,
    /// Event number `n` is `events[n - 1]`.
    pub events: Vec<Event>,
    /// `states[k]` is the game after `k` actions: the state the server calls `state_id` `k + 1`.
    pub states: Vec<Game>,
    /// `log_len[k]`: events in the log after `k` actions.
    pub log_len: Vec<usize>,
}

impl Resim {
    /// The engine state a message with this `state_id` was built from.
    pub fn state(&self, state_id: u64) -> (usize, &Game) {
        assert!(state_id >= 1, "state ids start at 1");
        let k = (state_id - 1) as usize;
        assert!(
            k < self.states.len(),
            "state_id {state_id} is beyond the replay ({} actions)",
            self.states.len() - 1
        );
        (k, &self.states[k])
    }
}

/// Re-simulates a seeded replay locally with the engine.
pub fn resimulate(replay: &pb::Replay) -> Resim {
    assert!(replay.start.is_none(), "a seeded replay");
    let config =
        MatchConfig::try_from(replay.config.as_ref().expect("a config")).expect("a valid config");
    let mut events: Vec<Event> = Vec::new();
    let mut game = Game::new_with(config, replay.seed, &mut events).expect("the match deals");
    let mut states = vec![game];
    let mut log_len = vec![events.len()];
    for (i, a) in replay.actions.iter().enumerate() {
        let seat = Seat::try_from(a.seat).expect("a seat number");
        let action = Action::try_from(a.action.as_ref().expect("an action")).expect("an action");
        assert_eq!(
            action.index() as u32,
            a.index,
            "replay action {i}: index and action agree"
        );
        game.apply_with(seat, action, &mut events)
            .unwrap_or_else(|r| panic!("replay action {i} ({action}) by seat {seat}: {r}"));
        states.push(game);
        log_len.push(events.len());
    }
    Resim {
        seats: config.seats,
        events,
        states,
        log_len,
    }
}

/// A card as a hashable key.
pub fn key(c: &pb::Card) -> (i32, i32) {
    (c.rank, c.suit)
}

/// Every card named anywhere in a server message. Destructures without `..`, so a field added to
/// the contract fails to compile here until the scan covers it.
pub fn cards_in(m: &pb::ServerMessage) -> Vec<pb::Card> {
    use pb::server_message::Kind;
    let mut out = Vec::new();
    match m.kind.as_ref() {
        None => {}
        Some(Kind::Welcome(w)) => {
            let pb::Welcome {
                match_id: _,
                seat: _,
                config: _,
                rules: _,
                time_control: _,
                seed_commitment: _,
                players: _,
                rated: _,
                status: _,
            } = w;
        }
        Some(Kind::Snapshot(s)) => {
            let pb::Snapshot {
                state_id: _,
                last_event_number: _,
                observation,
            } = s;
            if let Some(o) = observation {
                observation_cards(o, &mut out);
            }
        }
        Some(Kind::Event(e)) => {
            if let Some(e) = &e.event {
                event_cards(e, &mut out);
            }
        }
        Some(Kind::Prompt(p)) => {
            let pb::DecisionPrompt {
                state_id: _,
                legal_actions,
                required: _,
                deadline_unix_ms: _,
                time_left_ms: _,
                time_bank_ms: _,
                observation,
                last_event_number: _,
            } = p;
            for la in legal_actions {
                if let Some(pb::Action {
                    kind: Some(pb::action::Kind::Play(play)),
                }) = &la.action
                {
                    out.extend(play.card);
                }
            }
            if let Some(o) = observation {
                observation_cards(o, &mut out);
            }
        }
        Some(Kind::Accepted(_) | Kind::Rejected(_) | Kind::Pong(_)) => {}
        Some(Kind::Heartbeat(pb::Heartbeat {
            server_time_unix_ms: _,
        })) => {}
        Some(Kind::Batch(_)) => {
            for m in flatten(m) {
                out.extend(cards_in(&m));
            }
        }
        Some(Kind::Finished(_)) => {} // a report: results, statistics and the seed, no card
    }
    out
}

fn observation_cards(o: &pb::Observation, out: &mut Vec<pb::Card>) {
    let pb::Observation {
        seat: _,
        config: _,
        round: _,
        dealer: _,
        phase: _,
        to_act: _,
        clockwise: _,
        hand,
        hand_sizes: _,
        discard,
        top,
        named_suit: _,
        debt: _,
        stock_size: _,
        offence: _,
        pending_out: _,
        last_calls: _,
        just_accused: _,
        drawn_card,
        penalty_cards,
        turns: _,
        totals: _,
        rounds_won: _,
    } = o;
    out.extend(hand.iter().copied());
    out.extend(discard.iter().copied());
    out.extend(*top);
    out.extend(*drawn_card);
    out.extend(penalty_cards.iter().copied());
}

fn event_cards(e: &pb::Event, out: &mut Vec<pb::Card>) {
    use pb::event::Kind;
    match e.kind.as_ref() {
        Some(Kind::CardDrawn(d)) => out.extend(d.card),
        Some(Kind::UpCardTurned(u)) => out.extend(u.card),
        Some(Kind::CardPlayed(p)) => out.extend(p.card),
        Some(
            Kind::RoundStarted(_)
            | Kind::StockRebuilt(_)
            | Kind::TurnStarted(_)
            | Kind::SuitDeclared(_)
            | Kind::Passed(_)
            | Kind::Skipped(_)
            | Kind::DirectionChanged(_)
            | Kind::Announced(_)
            | Kind::OffenceOpened(_)
            | Kind::OffenceExpired(_)
            | Kind::OffenceCured(_)
            | Kind::Challenged(_)
            | Kind::OffencePenalised(_)
            | Kind::PendingOut(_)
            | Kind::RoundEnded(_)
            | Kind::MatchEnded(_),
        )
        | None => {}
    }
}

/// For each card `viewer` may know, the number of the first event that showed it: a card it drew
/// itself, the up-card, a card played face up. `None` is a spectator (no drawn card).
pub fn first_seen(r: &Resim, viewer: Option<Seat>) -> HashMap<(i32, i32), u64> {
    let mut seen = HashMap::new();
    for (i, e) in r.events.iter().enumerate() {
        let card = match *e {
            Event::Drew {
                seat,
                card: Some(c),
                ..
            } if Some(seat) == viewer => c,
            Event::UpCard { card } => card,
            Event::Played { card, .. } => card,
            _ => continue,
        };
        seen.entry(key(&card.into())).or_insert(i as u64 + 1);
    }
    seen
}

/// A message as the messages it stands for: an EventBatch (EVENT_DELIVERY_WITH_PROMPT) is its
/// held ActionAccepted answers, its events, then its prompt; any other message is itself.
pub fn flatten(m: &pb::ServerMessage) -> Vec<pb::ServerMessage> {
    use pb::server_message::Kind;
    match &m.kind {
        Some(Kind::Batch(b)) => {
            let mut out: Vec<pb::ServerMessage> = b
                .accepted
                .iter()
                .map(|a| pb::ServerMessage {
                    kind: Some(Kind::Accepted(*a)),
                })
                .collect();
            out.extend(b.events.iter().map(|e| pb::ServerMessage {
                kind: Some(Kind::Event(e.clone())),
            }));
            out.extend(b.prompt.as_ref().map(|p| pb::ServerMessage {
                kind: Some(Kind::Prompt(p.clone())),
            }));
            out
        }
        _ => vec![m.clone()],
    }
}

/// Every message of a feed, batches flattened ([`flatten`]).
pub fn flatten_all(messages: &[pb::ServerMessage]) -> Vec<pb::ServerMessage> {
    messages.iter().flat_map(flatten).collect()
}

/// What [`check_batched`] found.
#[derive(Debug, Default, Clone, Copy)]
pub struct BatchStats {
    /// Batches with a prompt.
    pub with_prompt: usize,
    /// Batches without one (before a Pong, an ActionRejected or MatchFinished).
    pub without_prompt: usize,
    /// Events inside batches.
    pub events: usize,
    /// ActionAccepted answers inside batches.
    pub accepted: usize,
}

/// Checks the shape of a feed under EVENT_DELIVERY_WITH_PROMPT: no event, no prompt and no
/// ActionAccepted on its own (each comes in an EventBatch), no empty batch, and a batch without
/// a prompt only just before a Pong, an ActionRejected or MatchFinished. What the messages say
/// is [`check_feed`]'s business.
pub fn check_batched(who: &str, messages: &[pb::ServerMessage]) -> BatchStats {
    use pb::server_message::Kind;
    let mut stats = BatchStats::default();
    for (i, m) in messages.iter().enumerate() {
        match &m.kind {
            Some(Kind::Event(e)) => panic!("{who}: message {i} is event {} on its own", e.number),
            Some(Kind::Prompt(p)) => {
                panic!(
                    "{who}: message {i} is a prompt (state {}) on its own",
                    p.state_id
                )
            }
            Some(Kind::Accepted(a)) => panic!(
                "{who}: message {i} is the answer to request {} on its own",
                a.request_id
            ),
            Some(Kind::Batch(b)) => {
                stats.events += b.events.len();
                stats.accepted += b.accepted.len();
                if b.prompt.is_some() {
                    stats.with_prompt += 1;
                } else {
                    stats.without_prompt += 1;
                    assert!(
                        !b.events.is_empty() || !b.accepted.is_empty(),
                        "{who}: message {i} is an empty batch"
                    );
                    assert!(
                        matches!(
                            messages.get(i + 1).and_then(|n| n.kind.as_ref()),
                            Some(Kind::Pong(_) | Kind::Rejected(_) | Kind::Finished(_))
                        ),
                        "{who}: a batch without a prompt (message {i}) comes just before a Pong, \
                         an ActionRejected or MatchFinished"
                    );
                }
            }
            _ => {}
        }
    }
    stats
}

/// What [`check_feed`] found.
#[derive(Debug, Default, Clone, Copy)]
pub struct FeedStats {
    pub events: usize,
    pub snapshots: usize,
    pub required_prompts: usize,
    pub optional_prompts: usize,
    pub accepted: usize,
    pub rejected: usize,
    pub cards: usize,
}

/// The observation `viewer` is owed in `game`.
pub fn expected_observation(game: &Game, viewer: Option<Seat>) -> pb::Observation {
    match viewer {
        Some(s) => wire::observation_to_wire(&game.observation(s)),
        None => wire::spectator_observation_to_wire(&game.spectator_observation()),
    }
}

/// Checks a whole feed (every message of one Play or Watch stream, in order) against the
/// re-simulation:
///
/// - numbered events are exactly `event_to_wire(event_for(e, viewer))`, numbered consecutively
///   from where the feed starts (1, or after the snapshot) to the last event of the match;
/// - every Snapshot and DecisionPrompt carries exactly the engine's observation for `viewer` in
///   the state its `state_id` names, with that state's `last_event_number`, after every event up
///   to that number (and a prompt the engine's legal actions, required exactly when the viewer is
///   to act);
/// - every card in every message was visible to `viewer` by then;
/// - spectators get no prompt, no hand and no drawn card;
/// - MatchFinished comes last, with the replay's seed.
pub fn check_feed(
    r: &Resim,
    replay: &pb::Replay,
    viewer: Option<Seat>,
    messages: &[pb::ServerMessage],
) -> FeedStats {
    use pb::server_message::Kind;
    let who = match viewer {
        Some(s) => format!("seat {s}"),
        None => "the spectator".to_string(),
    };
    let seen = first_seen(r, viewer);
    let mut stats = FeedStats::default();
    let mut last_event: Option<u64> = None;
    let mut last_state = 0u64;
    let mut finished = false;
    // Batches (EVENT_DELIVERY_WITH_PROMPT) are checked as the events and prompt they carry.
    let messages = flatten_all(messages);
    for (i, m) in messages.iter().enumerate() {
        assert!(!finished, "{who}: message {i} after MatchFinished: {m:?}");
        let kind = m
            .kind
            .as_ref()
            .unwrap_or_else(|| panic!("{who}: message {i} has no kind"));
        let moment = match kind {
            Kind::Welcome(w) => {
                assert_eq!(i, 0, "{who}: Welcome comes first");
                assert_eq!(
                    w.seat,
                    viewer.map(u32::from),
                    "{who}: Welcome names the seat"
                );
                assert_eq!(w.match_id, replay.match_id);
                0
            }
            Kind::Snapshot(s) => {
                stats.snapshots += 1;
                let (k, game) = r.state(s.state_id);
                assert!(s.state_id >= last_state, "{who}: state ids never go back");
                last_state = s.state_id;
                assert_eq!(
                    s.last_event_number as usize, r.log_len[k],
                    "{who}: snapshot of state {} names the last event of that state",
                    s.state_id
                );
                if let Some(l) = last_event {
                    assert!(
                        s.last_event_number >= l,
                        "{who}: a snapshot never goes back"
                    );
                }
                let want = expected_observation(game, viewer);
                assert_eq!(
                    s.observation.as_ref(),
                    Some(&want),
                    "{who}: snapshot {i} (state {}) is exactly the engine's observation",
                    s.state_id
                );
                last_event = Some(s.last_event_number);
                s.last_event_number
            }
            Kind::Event(e) => {
                stats.events += 1;
                let want_number = last_event.map_or(1, |l| l + 1);
                assert_eq!(
                    e.number, want_number,
                    "{who}: message {i}: events are numbered without a gap"
                );
                assert!(
                    (e.number as usize) <= r.events.len(),
                    "{who}: event {} is beyond the match's {} events",
                    e.number,
                    r.events.len()
                );
                let full = r.events[e.number as usize - 1];
                let want = wire::event_to_wire(&event_for(&full, viewer), r.seats);
                assert_eq!(
                    e.event.as_ref(),
                    Some(&want),
                    "{who}: event {} is the engine's event {full:?} redacted for it",
                    e.number
                );
                if viewer.is_none()
                    && let Some(pb::event::Kind::CardDrawn(d)) =
                        e.event.as_ref().and_then(|e| e.kind.as_ref())
                {
                    assert!(d.card.is_none(), "a spectator sees no drawn card");
                }
                last_event = Some(e.number);
                e.number
            }
            Kind::Prompt(p) => {
                let Some(seat) = viewer else {
                    panic!("the spectator received a prompt: {p:?}")
                };
                if p.required {
                    stats.required_prompts += 1;
                } else {
                    stats.optional_prompts += 1;
                }
                let (k, game) = r.state(p.state_id);
                assert!(p.state_id >= last_state, "{who}: state ids never go back");
                last_state = p.state_id;
                assert_eq!(
                    p.last_event_number as usize, r.log_len[k],
                    "{who}: prompt for state {} names the last event of that state",
                    p.state_id
                );
                assert_eq!(
                    Some(p.last_event_number),
                    last_event,
                    "{who}: every event up to the prompt's last_event_number came before it"
                );
                let want = expected_observation(game, viewer);
                assert_eq!(
                    p.observation.as_ref(),
                    Some(&want),
                    "{who}: prompt {i} (state {}) carries exactly the engine's observation",
                    p.state_id
                );
                assert_eq!(
                    p.legal_actions,
                    wire::legal_actions_to_wire(&game.observation(seat)),
                    "{who}: prompt {i} lists exactly the engine's legal actions"
                );
                assert_eq!(
                    p.required,
                    game.to_act() == Some(seat),
                    "{who}: a prompt is required exactly when the seat is to act"
                );
                assert!(
                    !p.legal_actions.is_empty(),
                    "{who}: a prompt offers something"
                );
                p.last_event_number
            }
            Kind::Accepted(_) => {
                stats.accepted += 1;
                last_event.unwrap_or(0)
            }
            Kind::Rejected(_) => {
                stats.rejected += 1;
                last_event.unwrap_or(0)
            }
            Kind::Pong(_) | Kind::Heartbeat(_) => last_event.unwrap_or(0),
            Kind::Batch(_) => unreachable!("batches are flattened"),
            Kind::Finished(f) => {
                finished = true;
                let report = f.report.as_ref().expect("a report");
                assert_eq!(
                    report.seed, replay.seed,
                    "{who}: the report reveals the seed"
                );
                assert_eq!(
                    last_event,
                    Some(r.events.len() as u64),
                    "{who}: every event of the match came before MatchFinished"
                );
                last_event.unwrap_or(0)
            }
        };
        // (c) No card the viewer could not see by then.
        for c in cards_in(m) {
            stats.cards += 1;
            let first = seen.get(&key(&c));
            assert!(
                first.is_some_and(|&n| n <= moment),
                "{who}: message {i} names {c:?}, which it could not see by event {moment} \
                 (first visible at {first:?}): {m:?}"
            );
        }
        if viewer.is_none()
            && let Kind::Snapshot(pb::Snapshot {
                observation: Some(o),
                ..
            }) = kind
        {
            assert!(o.seat.is_none() && o.hand.is_empty(), "spectator: no hand");
            assert!(
                o.drawn_card.is_none() && o.penalty_cards.is_empty(),
                "spectator: no drawn card"
            );
        }
    }
    assert!(finished, "{who}: the feed ends with MatchFinished");
    stats
}

// ----- recording clients -----------------------------------------------------------------------

/// How a recording client plays.
#[derive(Clone, Copy, Debug)]
pub struct Style {
    /// Seeds the client's choices.
    pub seed: u64,
    /// Sometimes plays without the call the rules want, so missed calls open challenge windows.
    pub sloppy: bool,
    /// Sometimes challenges (brazilian: accuses) with nothing open, or announces when it may not.
    pub reckless: bool,
}

/// A tiny seeded generator (PCG step), so a client's choices replay.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn is_challenge(la: &pb::LegalAction) -> bool {
    matches!(
        la.action.as_ref().and_then(|a| a.kind.as_ref()),
        Some(pb::action::Kind::Challenge(_))
    )
}

fn is_announce(la: &pb::LegalAction) -> bool {
    matches!(
        la.action.as_ref().and_then(|a| a.kind.as_ref()),
        Some(pb::action::Kind::Announce(_))
    )
}

/// The call a listed play carries (0 for none, or for an action that is not a play).
fn play_call(la: &pb::LegalAction) -> u32 {
    match la.action.as_ref().and_then(|a| a.kind.as_ref()) {
        Some(pb::action::Kind::Play(p)) => p.call.max(0) as u32,
        _ => 0,
    }
}

/// The dense index of a challenge.
pub const CHALLENGE: u32 = 201;
/// The dense index of announcing MAU-MAU.
pub const ANNOUNCE_MAU_MAU: u32 = 200;

/// What a client sends for a prompt, as `(state_id, action index)` pairs, in order.
///
/// - An optional prompt: CHALLENGE whenever it is listed; a listed late cure half the time.
/// - A required prompt: CHALLENGE half the time when it is listed; otherwise a random listed
///   action, its call dropped half the time when `sloppy`; when `reckless`, now and then an
///   unlisted challenge or announce first (refused, or penalised in brazilian).
pub fn choose(rng: &mut Rng, p: &pb::DecisionPrompt, style: Style) -> Vec<(u64, u32)> {
    let legal = &p.legal_actions;
    let mut out = Vec::new();
    if !p.required {
        if legal.iter().any(is_challenge) {
            // Out of turn: alternately "whatever the state is" and the prompt's state.
            let state = if rng.below(2) == 0 { 0 } else { p.state_id };
            out.push((state, CHALLENGE));
        } else if let Some(cure) = legal.iter().find(|la| is_announce(la))
            && rng.below(2) == 0
        {
            out.push((0, cure.index));
        }
        return out;
    }
    if style.reckless && rng.below(12) == 0 && !legal.iter().any(is_challenge) {
        out.push((0, CHALLENGE));
    } else if style.reckless
        && rng.below(12) == 0
        && !legal.iter().any(|la| la.index == ANNOUNCE_MAU_MAU)
    {
        out.push((p.state_id, ANNOUNCE_MAU_MAU));
    }
    if legal.iter().any(is_challenge) && rng.below(2) == 0 {
        out.push((p.state_id, CHALLENGE));
        return out;
    }
    let pick = &legal[rng.below(legal.len())];
    let call = play_call(pick);
    let index = if style.sloppy && call != 0 && rng.below(2) == 0 {
        pick.index - call // the same play, nothing said
    } else {
        pick.index
    };
    out.push((p.state_id, index));
    out
}

fn submission(state_id: u64, index: u32, request_id: u64) -> pb::ActionSubmission {
    pb::ActionSubmission {
        state_id,
        choice: Some(pb::action_submission::Choice::ActionIndex(index)),
        request_id,
    }
}

/// How long a client waits for the next message before the test fails.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// Plays a seat over its Play stream until MatchFinished, answering prompts with [`choose`];
/// returns every message the stream carried. Checks that the stream ends after MatchFinished.
pub async fn play_recording(mut seat: common::Seat, style: Style) -> Vec<pb::ServerMessage> {
    let mut rng = Rng::new(style.seed);
    let mut request = 0u64;
    loop {
        let m = match tokio::time::timeout(PATIENCE, seat.rx.next()).await {
            Err(_) => panic!(
                "no message within {PATIENCE:?}; the last ones: {:#?}",
                &seat.log[seat.log.len().saturating_sub(6)..]
            ),
            Ok(None) => panic!("the Play stream ended before MatchFinished"),
            Ok(Some(Err(status))) => panic!("the Play stream failed: {status:?}"),
            Ok(Some(Ok(r))) => r.message.expect("a server message"),
        };
        seat.log.push(m.clone());
        let mut finished = false;
        for m in flatten(&m) {
            match m.kind {
                Some(pb::server_message::Kind::Prompt(p)) => {
                    for (state_id, index) in choose(&mut rng, &p, style) {
                        request += 1;
                        let submission = submission(state_id, index, request);
                        let kind = pb::play_request::Kind::Action(submission);
                        // A send fails only once the server has closed the stream: the match
                        // ended meanwhile, and MatchFinished is among the messages still to read.
                        let _ = seat.tx.send(pb::PlayRequest { kind: Some(kind) }).await;
                    }
                }
                Some(pb::server_message::Kind::Finished(_)) => finished = true,
                _ => {}
            }
        }
        if finished {
            break;
        }
    }
    if std::env::var("SKIP_END").is_err() {
        let end = tokio::time::timeout(PATIENCE, seat.rx.next())
            .await
            .expect("the Play stream closes after MatchFinished");
        assert!(
            matches!(end, None | Some(Err(_))),
            "MatchFinished is the last message of a Play stream, got {end:?}"
        );
    }
    seat.log
}

/// Plays a seat the grpc-web way: the one-way Watch feed with the seat token, and a SubmitAction
/// call per action. Returns every message of the feed and how many submissions were accepted.
pub async fn watch_recording(
    client: &mut PlayServiceClient<Channel>,
    token: &str,
    style: Style,
) -> (Vec<pb::ServerMessage>, usize) {
    let mut rng = Rng::new(style.seed);
    let mut feed = client
        .watch(pb::WatchRequest {
            token: token.to_string(),
            client_name: "watcher".into(),
            resume: None,
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner();
    let mut log = Vec::new();
    let mut request = 0u64;
    let mut accepted = 0;
    loop {
        let m = tokio::time::timeout(PATIENCE, feed.next())
            .await
            .expect("a message on the Watch feed within the patience")
            .expect("the Watch feed ended before MatchFinished")
            .expect("a message, not an error")
            .message
            .expect("a server message");
        log.push(m.clone());
        match m.kind {
            Some(pb::server_message::Kind::Prompt(p)) => {
                for (state_id, index) in choose(&mut rng, &p, style) {
                    request += 1;
                    let answer = client
                        .submit_action(pb::SubmitActionRequest {
                            token: token.to_string(),
                            action: Some(submission(state_id, index, request)),
                        })
                        .await
                        .expect("SubmitAction answers")
                        .into_inner();
                    match answer.result.expect("accepted or rejected") {
                        pb::submit_action_response::Result::Accepted(a) => {
                            assert_eq!(a.request_id, request);
                            accepted += 1;
                        }
                        pb::submit_action_response::Result::Rejected(r) => {
                            assert_eq!(r.request_id, request);
                        }
                    }
                }
            }
            Some(pb::server_message::Kind::Finished(_)) => break,
            _ => {}
        }
    }
    let end = tokio::time::timeout(PATIENCE, feed.next())
        .await
        .expect("the Watch feed closes after MatchFinished");
    assert!(
        matches!(end, None | Some(Err(_))),
        "MatchFinished is the last message of a Watch feed, got {end:?}"
    );
    (log, accepted)
}

/// Reads a feed (a spectator's Watch) to the end; returns its messages.
pub async fn read_feed(mut feed: tonic::Streaming<pb::WatchResponse>) -> Vec<pb::ServerMessage> {
    let mut log = Vec::new();
    loop {
        let m = tokio::time::timeout(PATIENCE, feed.next())
            .await
            .expect("a message on the Watch feed within the patience")
            .expect("the Watch feed ended before MatchFinished")
            .expect("a message, not an error")
            .message
            .expect("a server message");
        let done = matches!(m.kind, Some(pb::server_message::Kind::Finished(_)));
        log.push(m);
        if done {
            break;
        }
    }
    let end = tokio::time::timeout(PATIENCE, feed.next())
        .await
        .expect("the Watch feed closes after MatchFinished");
    assert!(
        matches!(end, None | Some(Err(_))),
        "MatchFinished is the last message of a Watch feed, got {end:?}"
    );
    log
}

/// Counts events of the full log by a predicate, for coverage assertions.
pub fn count(r: &Resim, f: impl Fn(&Event) -> bool) -> usize {
    r.events.iter().filter(|e| f(e)).count()
}

/// Watches a match with its spectator token until MatchFinished; returns the final report.
pub async fn watch_to_end(server: &common::TestServer, spectator_token: &str) -> pb::MatchReport {
    let mut client = server.play_client().await;
    let feed = client
        .watch(pb::WatchRequest {
            token: spectator_token.to_string(),
            ..Default::default()
        })
        .await
        .expect("watch")
        .into_inner();
    let log = read_feed(feed).await;
    match log.last().and_then(|m| m.kind.clone()) {
        Some(pb::server_message::Kind::Finished(f)) => f.report.expect("a report"),
        other => panic!("MatchFinished last, not {other:?}"),
    }
}
