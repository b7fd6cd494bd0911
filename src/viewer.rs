//! What a match viewer shows: a replay turned into frames, each the table as one perspective saw
//! it after one step, with the step in readable notation ("S2 plays 7♥ — debt 4", "S0 plays J♣,
//! names ♠", "S1 draws 2 (debt)"). The one place this notation is written: `maumau replay FILE
//! --show`, `maumau play`, the web viewer and its self-contained HTML file all print these frames.
//!
//! # Frames
//!
//! Frame 0 is the first deal; frame `k` (`k ≥ 1`) is the table after the replay's action `k - 1`
//! (the web viewer's permalink `#e=k`). The engine reports its state between actions, so one
//! frame is one step of the engine: an action and every event it caused. An action that ends a
//! round also deals the next one; its frame shows the new deal and carries the round's end
//! ([`Frame::round_end`]: the hands laid down, points and totals), so nothing of the round is lost.
//!
//! # Perspective
//!
//! A [`Perspective`] says whose eyes the frames are seen with. What is visible comes from the
//! engine's one visibility module ([`maumau_engine::view`]): a seat's frames are built from
//! [`Game::observation`] and its events from [`event_for`]; the public view (a spectator's)
//! from [`Game::spectator_observation`] and `event_for(_, None)`. Only the omniscient
//! perspective, which is not a player's, reads every hand from the game itself.
//!
//! ```
//! use maumau::{pb, viewer};
//! use maumau_engine::{Game, MatchConfig, ProfileId};
//!
//! let config = MatchConfig::new(ProfileId::Classic, 2);
//! let mut game = Game::new(config, 3).expect("a valid config");
//! let mut actions = Vec::new();
//! while let Some(seat) = game.to_act() {
//!     let action = game.legal_actions(seat)[0];
//!     game.apply(seat, action).expect("a legal action");
//!     actions.push(pb::ReplayAction { seat: u32::from(seat), action: Some(action.into()), ..Default::default() });
//! }
//! let replay = pb::Replay { config: Some(config.into()), seed: 3, actions, ..Default::default() };
//! let seen = viewer::frames(&replay, viewer::Perspective::Seat(1)).expect("a valid replay");
//! assert_eq!(seen.frames.len(), replay.actions.len() + 1);
//! // Seat 1 sees its own hand and only the sizes of seat 0's.
//! assert!(seen.frames[0].table.seats[1].hand.is_some());
//! assert!(seen.frames[0].table.seats[0].hand.is_none());
//! ```

use std::fmt;
use std::str::FromStr;

use maumau_engine::profile::Scoring;
use maumau_engine::{
    Action, Call, Card, ChallengeOutcome, DrawCause, Event, Game, Hand, MatchResult, Observation,
    OffenceKind, Phase, RoundEnd, RoundResult, Seat, Suit, event_for,
};
use serde::Serialize;

use crate::pb;
use crate::replay::{ReplayError, at_start, play_through, replay_config};

/// Whose eyes a match is seen with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Perspective {
    /// Every hand: after a match, for its analysis.
    Omniscient,
    /// What a spectator sees: public information only.
    Public,
    /// What this seat saw: its own hand, its drawn cards, its legal actions.
    Seat(Seat),
}

impl Perspective {
    /// The seat the engine's visibility functions are asked for (`None`: a spectator).
    fn viewer(self) -> Option<Seat> {
        match self {
            Perspective::Seat(s) => Some(s),
            Perspective::Omniscient | Perspective::Public => None,
        }
    }
}

impl fmt::Display for Perspective {
    /// `omniscient`, `public` or `seat N`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Perspective::Omniscient => f.write_str("omniscient"),
            Perspective::Public => f.write_str("public"),
            Perspective::Seat(s) => write!(f, "seat {s}"),
        }
    }
}

impl FromStr for Perspective {
    type Err = String;

    /// Parses `omniscient` (or `all`), `public`, or a seat number.
    fn from_str(s: &str) -> Result<Perspective, String> {
        match s {
            "omniscient" | "all" => Ok(Perspective::Omniscient),
            "public" => Ok(Perspective::Public),
            _ => s
                .strip_prefix("seat ")
                .unwrap_or(s)
                .parse::<Seat>()
                .map(Perspective::Seat)
                .map_err(|_| {
                    format!("`{s}` is not a perspective (omniscient, public or a seat number)")
                }),
        }
    }
}

impl Serialize for Perspective {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A match as one perspective saw it, step by step.
#[derive(Clone, Debug, Serialize)]
pub struct Viewing {
    /// The match id (empty for a replay without one).
    pub match_id: String,
    /// The rule profile, e.g. `classic`.
    pub profile: String,
    /// The profile's options in words (`deck32,nine_reverses`), or `-`.
    pub options: String,
    /// The call rules: `challenge`, `enforce` or `off`.
    pub calls: String,
    /// Number of seats.
    pub seats: u8,
    /// The perspective of every frame.
    pub perspective: Perspective,
    /// Whether the replay reaches the end of the match.
    pub finished: bool,
    /// The frames: the first deal, then one per action.
    pub frames: Vec<Frame>,
}

/// The table after one step, as the perspective saw it, and the step in words.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Frame {
    /// The frame's number: 0 for the first deal, `k` after the replay's action `k - 1`.
    pub index: usize,
    /// The seat that acted (`None` for the first deal).
    pub actor: Option<Seat>,
    /// The action in the text form of the replay (`play 7H`), `None` for the first deal.
    pub action: Option<String>,
    /// The step in readable notation: "S2 plays 7♥ — debt 4".
    pub line: String,
    /// Milliseconds the seat took to decide, as the replay records it (0: not recorded, an
    /// out-of-turn action or a built-in bot).
    pub think_ms: u32,
    /// True when the server took this action for the seat after a timeout.
    pub timeout: bool,
    /// What else happened in this step: skips, penalties, challenges, a round's end, a deal.
    pub notes: Vec<String>,
    /// The table after the step.
    pub table: Table,
    /// The round that ended in this step, if one did.
    pub round_end: Option<RoundSummary>,
    /// Messages the server refused while the table stood here (after this step, before the
    /// next), as the perspective may see them: a seat sees its own, the omniscient view every
    /// seat's, the public view none.
    pub rejections: Vec<Refused>,
    /// The match's result, on the frame where it ended (public to every perspective).
    pub result: Option<Outcome>,
}

/// How a match ended: its winners, how its totals count, and the standings.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Outcome {
    /// How totals count under the match's rules: `penalty` (lowest wins) or `points` (highest
    /// wins).
    pub scoring: &'static str,
    /// Every seat by placing, best first (seat order among tied seats).
    pub standings: Vec<Placed>,
    /// The result in one line, seats by label: "S2 wins the match (penalty 0; others 41, 23;
    /// lowest penalty wins)".
    pub line: String,
}

/// One seat's place in an [`Outcome`].
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Placed {
    /// 1 is best; tied seats share a place.
    pub place: u8,
    /// The seat.
    pub seat: Seat,
    /// Its final total.
    pub total: i32,
}

impl Outcome {
    /// The outcome of a finished match under `scoring`.
    pub fn of(result: &MatchResult, scoring: Scoring) -> Outcome {
        let mut standings: Vec<Placed> = (0..result.seats)
            .map(|s| Placed {
                place: result.placings[s as usize],
                seat: s,
                total: result.totals[s as usize],
            })
            .collect();
        standings.sort_by_key(|p| (p.place, p.seat));
        let mut outcome = Outcome {
            scoring: match scoring {
                Scoring::Penalty => "penalty",
                Scoring::Positive => "points",
            },
            standings,
            line: String::new(),
        };
        outcome.line = outcome.line_with(&[]);
        outcome
    }

    /// The result in one line, each seat named `S2 name` where `names` has a name for it, `S2`
    /// otherwise: "S2 alices-bot wins the match (penalty 0; others 41, 23, 71; lowest penalty
    /// wins)"; co-winners "S0 and S2 share the win (…)". The one place this line is written.
    pub fn line_with(&self, names: &[String]) -> String {
        let label = |s: Seat| seat_label(s, names);
        let winners: Vec<&Placed> = self.standings.iter().filter(|p| p.place == 1).collect();
        let mut others: Vec<&Placed> = self.standings.iter().filter(|p| p.place != 1).collect();
        others.sort_by_key(|p| p.seat);
        let who = winners
            .iter()
            .map(|p| label(p.seat))
            .collect::<Vec<_>>()
            .join(" and ");
        let verb = if winners.len() == 1 {
            "wins the match"
        } else {
            "share the win"
        };
        let best = winners.first().map_or(0, |p| p.total);
        let rest = if others.is_empty() {
            String::new()
        } else {
            format!(
                "; others {}",
                others
                    .iter()
                    .map(|p| p.total.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let how = match self.scoring {
            "points" => "most points win",
            _ => "lowest penalty wins",
        };
        format!("{who} {verb} ({} {best}{rest}; {how})", self.scoring)
    }
}

/// A seat's message the server refused (it changed nothing), from the replay's `rejections`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Refused {
    /// The seat that sent it.
    pub seat: Seat,
    /// The action it named, in readable notation (`play 7♥`), if the server could read one.
    pub action: Option<String>,
    /// The reason in words: `illegal card`, `stale state`.
    pub reason: String,
    /// The refusal's message, as the seat was sent it.
    pub message: String,
    /// All of it in one line: "S0 tried “play 7♥” — refused (illegal card): …".
    pub line: String,
}

impl Refused {
    /// A recorded refusal in words.
    pub fn from_wire(r: &pb::ReplayRejection) -> Refused {
        Refused::from_wire_named(r, &[])
    }

    /// A recorded refusal in words, its seat named as [`seat_label`] names it.
    pub fn from_wire_named(r: &pb::ReplayRejection, names: &[String]) -> Refused {
        let seat = Seat::try_from(r.seat).unwrap_or(Seat::MAX);
        let action = r
            .action
            .as_ref()
            .and_then(|a| Action::try_from(a).ok())
            .map(action_text);
        let reason = pb::ErrorReason::try_from(r.reason)
            .unwrap_or(pb::ErrorReason::Unspecified)
            .as_str_name()
            .trim_start_matches("ERROR_REASON_")
            .replace('_', " ")
            .to_lowercase();
        let what = match &action {
            Some(a) => format!("{} tried “{a}”", seat_label(seat, names)),
            None => format!("{} sent a message", seat_label(seat, names)),
        };
        // A replay file is anyone's: no control character of it reaches a terminal.
        let message: String = r.message.chars().filter(|c| !c.is_control()).collect();
        Refused {
            seat,
            line: format!("{what} — refused ({reason}): {message}"),
            action,
            reason,
            message,
        }
    }
}

/// The table as the perspective sees it.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Table {
    /// Round number, from 1.
    pub round: u16,
    /// The dealer (brazilian: the first player).
    pub dealer: Seat,
    /// `start`, `after-draw`, `announced`, `await-suit` or `over`.
    pub phase: &'static str,
    /// The seat to act, if any.
    pub to_act: Option<Seat>,
    /// True while play goes clockwise.
    pub clockwise: bool,
    /// The top card of the discard pile (text form, `7H`).
    pub top: String,
    /// The discard pile's last cards, oldest first, the top last (at most [`RECENT`]).
    pub recent: Vec<String>,
    /// Cards in the stock.
    pub stock: u8,
    /// The suit named by a J on top (`C`, `D`, `H`, `S`).
    pub named_suit: Option<String>,
    /// Cards the seat to move owes because of 7s.
    pub debt: u8,
    /// The open offence, in words ("S2 missed a call"), if any.
    pub offence: Option<String>,
    /// Turns taken this round.
    pub turns: u16,
    /// Each seat.
    pub seats: Vec<SeatView>,
    /// The perspective's seat's legal actions now, in readable notation (empty unless it is a
    /// seat's perspective and that seat may act).
    pub legal: Vec<String>,
}

/// The discard pile's cards shown in [`Table::recent`].
pub const RECENT: usize = 6;

/// One seat at the table.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SeatView {
    /// The seat number.
    pub seat: Seat,
    /// Cards held.
    pub cards: u8,
    /// The cards themselves (text form, by suit then rank), where the perspective may see them.
    pub hand: Option<Vec<String>>,
    /// Match total so far.
    pub total: i32,
    /// Rounds won so far.
    pub rounds_won: u16,
    /// The seat's last romanian call (`mau`, `maumau`), if any.
    pub last_call: Option<&'static str>,
}

/// How a round ended: public to every perspective (the hands are laid down and counted).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct RoundSummary {
    /// Round number.
    pub round: u16,
    /// The seat that went out (`None`: the round was blocked).
    pub winner: Option<Seat>,
    /// Points each seat scored this round.
    pub points: Vec<i32>,
    /// Each seat's total after the round.
    pub totals: Vec<i32>,
    /// Each seat's hand when the round ended (text form).
    pub hands: Vec<Vec<String>>,
}

/// The suit's symbol: ♣ ♦ ♥ ♠.
pub fn suit_symbol(suit: Suit) -> char {
    match suit {
        Suit::Clubs => '♣',
        Suit::Diamonds => '♦',
        Suit::Hearts => '♥',
        Suit::Spades => '♠',
    }
}

/// A seat as the notation writes it: `S2`, or `S2 alice` when `names` (by seat) has a name for
/// it. The one place a seat is labelled: every line of the frames, the result's line, and the
/// terminal's move list. A name's control characters are left out (a replay file's names are
/// anyone's, and its lines may reach a terminal).
pub fn seat_label(seat: Seat, names: &[String]) -> String {
    match names.get(seat as usize).filter(|n| !n.is_empty()) {
        Some(name) => {
            let name: String = name.chars().filter(|c| !c.is_control()).collect();
            format!("S{seat} {name}")
        }
        None => format!("S{seat}"),
    }
}

/// A card for people: rank and suit symbol, `7♥`, `10♠`.
pub fn card_text(card: Card) -> String {
    format!("{}{}", card.rank().text(), suit_symbol(card.suit()))
}

/// An action for people, as a seat would say it: `play 7♥, says Mau`, `play J♣, names ♠`,
/// `draw`, `pass`, `name ♠`, `announce Mau Mau`, `challenge`.
pub fn action_text(action: Action) -> String {
    match action {
        Action::Play { card, suit, call } => {
            format!("play {}{}{}", card_text(card), names(suit), says(call))
        }
        Action::Draw => "draw".into(),
        Action::Pass => "pass".into(),
        Action::DeclareSuit(s) => format!("name {}", suit_symbol(s)),
        Action::Announce(c) => format!("announce {}", call_words(c)),
        Action::Challenge => "challenge".into(),
    }
}

/// `Mau`, `Mau Mau` (nothing for no call).
fn call_words(call: Call) -> &'static str {
    match call {
        Call::None => "nothing",
        Call::Mau => "Mau",
        Call::MauMau => "Mau Mau",
    }
}

fn names(suit: Option<Suit>) -> String {
    suit.map(|s| format!(", names {}", suit_symbol(s)))
        .unwrap_or_default()
}

fn says(call: Call) -> String {
    match call {
        Call::None => String::new(),
        c => format!(", says {}", call_words(c)),
    }
}

fn cards_text(cards: impl IntoIterator<Item = Card>) -> String {
    cards
        .into_iter()
        .map(card_text)
        .collect::<Vec<_>>()
        .join(" ")
}

fn hand_codes(hand: &Hand) -> Vec<String> {
    hand.iter().map(|c| c.to_string()).collect()
}

fn offence_words(kind: OffenceKind) -> &'static str {
    match kind {
        OffenceKind::Omission => "missed call",
        OffenceKind::JackFinish => "went out on a J without Mau Mau",
        OffenceKind::NoAnnounce => "played to one card without announcing",
    }
}

fn cause_words(cause: DrawCause) -> &'static str {
    match cause {
        DrawCause::Deal => "deal",
        DrawCause::Turn => "turn",
        DrawCause::Debt => "debt",
        DrawCause::Omission => "penalty: missed call",
        DrawCause::FalseCall => "penalty: false call",
        DrawCause::FalseAccusation => "penalty: false accusation",
        DrawCause::PrevDrawOne => "a 9 makes the previous seat draw",
    }
}

fn phase_name(phase: Phase) -> &'static str {
    match phase {
        Phase::Start => "start",
        Phase::AfterDraw => "after-draw",
        Phase::Announced => "announced",
        Phase::AwaitSuit => "await-suit",
        Phase::Over => "over",
    }
}

/// Builds frames step by step, as a match is played or replayed: [`Recorder::start`] with the
/// game after its first deal and the deal's events, then [`Recorder::step`] after each action.
#[derive(Clone, Debug)]
pub struct Recorder {
    perspective: Perspective,
    /// The players' names by seat, for the lines ([`seat_label`]); empty: seats by number.
    names: Vec<String>,
    frames: Vec<Frame>,
}

impl Recorder {
    /// Frame 0: the first deal (`events` are the deal's, unredacted, as the engine reported
    /// them).
    pub fn start(perspective: Perspective, game: &Game, events: &[Event]) -> Recorder {
        Recorder::start_named(perspective, &[], game, events)
    }

    /// As [`Recorder::start`], with the players' `names` by seat beside their seats in every
    /// line: "S0 alice plays 7♥".
    pub fn start_named(
        perspective: Perspective,
        names: &[String],
        game: &Game,
        events: &[Event],
    ) -> Recorder {
        let mut recorder = Recorder {
            perspective,
            names: names.to_vec(),
            frames: Vec::new(),
        };
        recorder.push(None, events, game);
        recorder
    }

    /// The frame after `seat` took `action`, which caused `events` (unredacted) and left
    /// `game`. Returns it.
    pub fn step(&mut self, seat: Seat, action: Action, events: &[Event], game: &Game) -> &Frame {
        self.push(Some((seat, action)), events, game)
    }

    /// Marks the last frame's action with how it was decided: `think_ms` from prompt to action,
    /// `timeout` when the server acted for the seat (a note says so).
    pub fn decided(&mut self, think_ms: u32, timeout: bool) {
        if let Some(frame) = self.frames.last_mut() {
            frame.think_ms = think_ms;
            frame.timeout = timeout;
            if timeout && let Some(seat) = frame.actor {
                let who = seat_label(seat, &self.names);
                frame.notes.insert(
                    0,
                    format!("{who} ran out of time: the server played for it"),
                );
            }
        }
    }

    /// The frames so far.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The frames, taken.
    pub fn into_frames(self) -> Vec<Frame> {
        self.frames
    }

    fn push(&mut self, acted: Option<(Seat, Action)>, events: &[Event], game: &Game) -> &Frame {
        let viewer = self.perspective.viewer();
        // The events as this perspective saw them (the omniscient one sees them whole).
        let seen: Vec<Event> = match self.perspective {
            Perspective::Omniscient => events.to_vec(),
            _ => events.iter().map(|e| event_for(e, viewer)).collect(),
        };
        let obs = match viewer {
            Some(s) => game.observation(s),
            None => game.spectator_observation(),
        };
        let (line, mut notes) = describe(acted, &seen, &obs, &self.names);
        // The match's end names its winner and how its totals count, in place of "Match over".
        let result = seen
            .iter()
            .any(|e| matches!(e, Event::MatchEnded))
            .then(|| game.match_result())
            .flatten()
            .map(|r| Outcome::of(&r, game.rules().scoring))
            .map(|mut o| {
                o.line = o.line_with(&self.names);
                o
            });
        if let Some(outcome) = &result {
            for note in notes.iter_mut().filter(|n| *n == MATCH_OVER) {
                note.clone_from(&outcome.line);
            }
        }
        let round_end = seen.iter().find_map(|e| match e {
            Event::RoundEnded(r) => Some(round_summary(r, game.seats())),
            _ => None,
        });
        let frame = Frame {
            index: self.frames.len(),
            actor: acted.map(|(s, _)| s),
            action: acted.map(|(_, a)| a.to_string()),
            line,
            think_ms: 0,
            timeout: false,
            notes,
            table: table(self.perspective, &obs, game, &self.names),
            round_end,
            rejections: Vec::new(),
            result,
        };
        let at = self.frames.len();
        self.frames.push(frame);
        &self.frames[at]
    }
}

/// A match's end where its result is not known (the line [`Outcome::line_with`] replaces).
const MATCH_OVER: &str = "Match over";

fn round_summary(r: &RoundResult, seats: u8) -> RoundSummary {
    let n = seats as usize;
    RoundSummary {
        round: r.round,
        winner: r.winner(),
        points: r.points[..n].to_vec(),
        totals: r.totals[..n].to_vec(),
        hands: r.hands[..n].iter().map(hand_codes).collect(),
    }
}

/// The table from the perspective's observation; the omniscient perspective adds every hand.
fn table(perspective: Perspective, obs: &Observation, game: &Game, names: &[String]) -> Table {
    let n = game.seats();
    let discard = obs.discard.as_slice();
    let seats = (0..n)
        .map(|s| {
            let i = s as usize;
            let hand = match perspective {
                Perspective::Omniscient => Some(hand_codes(game.hand(s))),
                Perspective::Seat(v) if v == s => Some(hand_codes(&obs.hand)),
                _ => None,
            };
            SeatView {
                seat: s,
                cards: obs.hand_sizes[i],
                hand,
                total: obs.totals[i],
                rounds_won: obs.rounds_won[i],
                last_call: match obs.last_calls[i] {
                    Call::None => None,
                    c => Some(c.text()),
                },
            }
        })
        .collect();
    Table {
        round: obs.round,
        dealer: obs.dealer,
        phase: phase_name(obs.phase),
        to_act: obs.to_act,
        clockwise: obs.clockwise,
        top: obs.top().to_string(),
        recent: discard[discard.len().saturating_sub(RECENT)..]
            .iter()
            .map(|c| c.to_string())
            .collect(),
        stock: obs.stock_size,
        named_suit: obs.named_suit.map(|s| s.letter().to_string()),
        debt: obs.debt,
        offence: obs.offence.map(|o| {
            format!(
                "{}: {}",
                seat_label(o.offender, names),
                offence_words(o.kind)
            )
        }),
        turns: obs.turns,
        seats,
        legal: obs.legal.iter().map(|&a| action_text(a)).collect(),
    }
}

/// The step in words: the action's line and notes for the rest of its events (already redacted
/// for the perspective), seats labelled with the `players`' names ([`seat_label`]).
fn describe(
    acted: Option<(Seat, Action)>,
    events: &[Event],
    after: &Observation,
    players: &[String],
) -> (String, Vec<String>) {
    let who = |s: Seat| seat_label(s, players);
    let mut notes = Vec::new();
    let mut line = String::new();
    // The draws the action's line tells of (its own turn or debt draw), not repeated as notes.
    let own_draw = |e: &Event| match (acted, e) {
        (Some((seat, Action::Draw)), Event::Drew { seat: s, cause, .. }) => {
            *s == seat && matches!(cause, DrawCause::Turn | DrawCause::Debt)
        }
        _ => false,
    };
    let round_ended = events.iter().any(|e| matches!(e, Event::RoundEnded(_)));
    if let Some((seat, action)) = acted {
        line = match action {
            Action::Play { card, suit, call } => {
                let mut l = format!(
                    "{} plays {}{}{}",
                    who(seat),
                    card_text(card),
                    names(suit),
                    says(call)
                );
                if after.debt > 0 && !round_ended {
                    l.push_str(&format!(" — debt {}", after.debt));
                }
                l
            }
            Action::Draw => {
                let drawn: Vec<&Event> = events.iter().filter(|e| own_draw(e)).collect();
                let debt = drawn.iter().any(|e| {
                    matches!(
                        e,
                        Event::Drew {
                            cause: DrawCause::Debt,
                            ..
                        }
                    )
                });
                let cards: Vec<Card> = drawn
                    .iter()
                    .filter_map(|e| match e {
                        Event::Drew { card, .. } => *card,
                        _ => None,
                    })
                    .collect();
                let mut l = if debt {
                    format!("{} draws {} (debt)", who(seat), drawn.len())
                } else {
                    format!("{} draws", who(seat))
                };
                if !cards.is_empty() {
                    l.push_str(&format!(": {}", cards_text(cards)));
                }
                if events.iter().any(|e| {
                    matches!(
                        e,
                        Event::Passed {
                            automatic: true,
                            ..
                        }
                    )
                }) {
                    l.push_str(", cannot play and passes");
                }
                l
            }
            Action::Pass => format!("{} passes", who(seat)),
            Action::DeclareSuit(s) => {
                format!("{} names {} for the up-card J", who(seat), suit_symbol(s))
            }
            Action::Announce(c) => format!("{} says {}", who(seat), call_words(c)),
            Action::Challenge => {
                let outcome = events.iter().find_map(|e| match e {
                    Event::Challenged { outcome, .. } => Some(*outcome),
                    _ => None,
                });
                match outcome {
                    Some(ChallengeOutcome::Caught { offender }) => {
                        format!("{} challenges {}: caught", who(seat), who(offender))
                    }
                    Some(ChallengeOutcome::False) => {
                        format!("{} challenges: a false accusation", who(seat))
                    }
                    None => format!("{} challenges", who(seat)),
                }
            }
        };
    }
    let mut i = 0;
    while i < events.len() {
        let e = &events[i];
        i += 1;
        if own_draw(e) {
            continue;
        }
        match *e {
            Event::RoundStarted { round, dealer } => {
                notes.push(format!("Round {round}: {} deals", who(dealer)));
            }
            Event::Drew { seat, cause, card } => {
                // A run of draws by one seat for one cause is one note.
                let mut cards: Vec<Card> = card.into_iter().collect();
                let mut count = 1;
                while let Some(&Event::Drew {
                    seat: s,
                    cause: c,
                    card,
                }) = events.get(i)
                {
                    if cause == DrawCause::Deal && c == DrawCause::Deal {
                        // The deal goes round the table: one note for all of it.
                    } else if s != seat || c != cause {
                        break;
                    }
                    cards.extend(card);
                    count += 1;
                    i += 1;
                }
                if cause == DrawCause::Deal {
                    let each = count / usize::from(after.config.seats.max(1));
                    notes.push(format!("{each} cards dealt to each seat"));
                } else {
                    let shown = if cards.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", cards_text(cards))
                    };
                    notes.push(format!(
                        "{} draws {count} ({}){shown}",
                        who(seat),
                        cause_words(cause)
                    ));
                }
            }
            Event::UpCard { card } => notes.push(format!("up-card {}", card_text(card))),
            Event::StockRebuilt { size } => {
                notes.push(format!(
                    "the stock is rebuilt from the discards: {size} cards"
                ));
            }
            Event::TurnStarted { .. } | Event::Played { .. } | Event::Challenged { .. } => {}
            Event::SuitDeclared { .. } => {}
            Event::Passed { seat, automatic } => {
                if !matches!(acted, Some((_, Action::Draw | Action::Pass))) {
                    let how = if automatic { " (cannot play)" } else { "" };
                    notes.push(format!("{} passes{how}", who(seat)));
                }
            }
            Event::Skipped { seat } => notes.push(format!("{} is skipped", who(seat))),
            Event::DirectionChanged { clockwise } => notes.push(
                if clockwise {
                    "play goes clockwise"
                } else {
                    "play goes counter-clockwise"
                }
                .to_string(),
            ),
            Event::Announced { seat, call, valid } => {
                if !valid {
                    notes.push(format!(
                        "{} says {}: a false call",
                        who(seat),
                        call_words(call)
                    ));
                }
            }
            Event::OffenceOpened { seat, kind } => notes.push(format!(
                "{}: {}, open to challenge",
                who(seat),
                offence_words(kind)
            )),
            Event::OffenceExpired { seat } => {
                notes.push(format!("{}'s offence goes unchallenged", who(seat)));
            }
            Event::OffenceCured { seat } => {
                notes.push(format!("{} makes up the missed call", who(seat)))
            }
            Event::OffencePenalised { seat, kind } => {
                notes.push(format!(
                    "{} is penalised: {}",
                    who(seat),
                    offence_words(kind)
                ));
            }
            Event::PendingOut { seat } => notes.push(format!(
                "{} has no cards left: out unless challenged",
                who(seat)
            )),
            Event::RoundEnded(r) => {
                let n = after.config.seats as usize;
                let how = match r.end {
                    RoundEnd::Out(s) => format!("{} goes out", who(s)),
                    RoundEnd::Blocked => "blocked".to_string(),
                };
                let list = |v: &[i32]| {
                    v[..n]
                        .iter()
                        .enumerate()
                        .map(|(s, p)| format!("{} {p}", who(s as Seat)))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                notes.push(format!(
                    "Round {} over: {how}; points {}; totals {}",
                    r.round,
                    list(&r.points),
                    list(&r.totals)
                ));
            }
            Event::MatchEnded => notes.push(MATCH_OVER.to_string()),
        }
    }
    if line.is_empty() {
        // The first deal: its notes are the line.
        line = notes.join("; ");
        notes.clear();
    }
    (line, notes)
}

/// The frames of a replay as `perspective` saw them.
///
/// # Errors
///
/// As [`crate::replay::simulate`]: the first action the engine refuses, or a bad start.
pub fn frames(replay: &pb::Replay, perspective: Perspective) -> Result<Viewing, ReplayError> {
    frames_named(replay, perspective, &[])
}

/// As [`frames`], with the players' `names` by seat beside their seats in every line ("S0 alice
/// plays 7♥", see [`seat_label`]): for a replay whose players are known, such as a tournament's
/// game.
///
/// # Errors
///
/// As [`frames`].
pub fn frames_named(
    replay: &pb::Replay,
    perspective: Perspective,
    names: &[String],
) -> Result<Viewing, ReplayError> {
    let config = replay_config(replay)?;
    if let Perspective::Seat(s) = perspective
        && s >= config.seats
    {
        return Err(at_start(format!(
            "seat {s} is not at this table of {} seats",
            config.seats
        )));
    }
    let (game, recorder) = play_through(
        replay,
        &mut Vec::new(),
        |events, game| Recorder::start_named(perspective, names, game, events),
        |recorder, seat, action, events, game| {
            recorder.step(seat, action, events, game);
            let i = recorder.frames().len() - 2;
            if let Some(a) = replay.actions.get(i) {
                recorder.decided(a.think_ms, a.timeout);
            }
        },
    )?;
    let mut frames = recorder.into_frames();
    // Each refusal at the frame the table stood at when it came; a seat sees only its own.
    for r in &replay.rejections {
        let shown = match perspective {
            Perspective::Omniscient => true,
            Perspective::Public => false,
            Perspective::Seat(s) => r.seat == u32::from(s),
        };
        let at = (r.step as usize).min(frames.len() - 1);
        if shown {
            frames[at]
                .rejections
                .push(Refused::from_wire_named(r, names));
        }
    }
    Ok(Viewing {
        match_id: replay.match_id.clone(),
        profile: config.profile.name().to_string(),
        options: config.options.to_words(),
        calls: config.calls.name().to_string(),
        seats: config.seats,
        perspective,
        finished: game.phase() == Phase::Over,
        frames,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use maumau_engine::{MatchConfig, ProfileId, Rank};

    use super::*;

    /// Profiles and seat counts, one each: every profile is checked.
    const TABLES: [(ProfileId, u8); 4] = [
        (ProfileId::Classic, 3),
        (ProfileId::PenaltyPoints, 4),
        (ProfileId::Brazilian, 4),
        (ProfileId::Romanian32, 3),
    ];

    /// A whole match, each seat taking an action picked from its legal ones by the seed, with
    /// the engine state after every action (index 0: after the deal).
    fn played(profile: ProfileId, seats: u8, seed: u64) -> (pb::Replay, Vec<Game>) {
        let config = MatchConfig::new(profile, seats);
        let mut game = Game::new(config, seed).unwrap();
        let mut states = vec![game];
        let mut actions = Vec::new();
        let mut rng = maumau_engine::seed::SplitMix64::new(seed);
        while let Some(seat) = game.to_act() {
            let legal = game.legal_actions(seat);
            let action = legal[(rng.next_u64() % legal.len() as u64) as usize];
            game.apply(seat, action).unwrap();
            states.push(game);
            actions.push(pb::ReplayAction {
                seat: u32::from(seat),
                action: Some(action.into()),
                index: action.index() as u32,
                ..Default::default()
            });
        }
        let replay = pb::Replay {
            format: 1,
            config: Some(config.into()),
            seed,
            actions,
            ..Default::default()
        };
        (replay, states)
    }

    fn codes(hand: &Hand) -> Vec<String> {
        hand.iter().map(|c| c.to_string()).collect()
    }

    #[test]
    fn every_frame_is_the_engine_state_after_its_step_in_every_profile() {
        for (profile, seats) in TABLES {
            let (replay, states) = played(profile, seats, 21);
            let all = frames(&replay, Perspective::Omniscient).unwrap();
            assert!(all.finished, "{profile}");
            assert_eq!(all.frames.len(), states.len(), "{profile}");
            assert_eq!(all.profile, profile.name());
            for (frame, game) in all.frames.iter().zip(&states) {
                let t = &frame.table;
                assert_eq!(
                    t.top,
                    game.top().to_string(),
                    "{profile} frame {}",
                    frame.index
                );
                assert_eq!(t.debt, game.debt());
                assert_eq!(
                    t.named_suit,
                    game.named_suit().map(|s| s.letter().to_string())
                );
                assert_eq!(t.to_act, game.to_act());
                assert_eq!(t.clockwise, game.clockwise());
                assert_eq!(t.stock as usize, game.stock().len());
                assert_eq!(t.round, game.round());
                assert_eq!(t.phase, phase_name(game.phase()));
                let discard = game.discard().as_slice();
                assert_eq!(t.recent.last(), Some(&t.top));
                assert_eq!(t.recent.len(), discard.len().min(RECENT));
                for s in 0..seats {
                    let v = &t.seats[s as usize];
                    assert_eq!(v.hand.as_ref(), Some(&codes(game.hand(s))));
                    assert_eq!(v.cards as usize, game.hand(s).len());
                    assert_eq!(v.total, game.totals()[s as usize]);
                    assert_eq!(v.rounds_won, game.rounds_won()[s as usize]);
                }
            }
            // Every round's end is in exactly one frame, with the engine's totals.
            let ends: Vec<&RoundSummary> = all
                .frames
                .iter()
                .filter_map(|f| f.round_end.as_ref())
                .collect();
            let result = states.last().unwrap().match_result().unwrap();
            assert_eq!(ends.len(), result.rounds as usize, "{profile}");
            assert_eq!(
                ends.last().unwrap().totals,
                result.totals[..seats as usize].to_vec()
            );
        }
    }

    #[test]
    fn a_seat_sees_what_the_engine_shows_it_and_the_public_sees_no_hand() {
        for (profile, seats) in TABLES {
            let (replay, states) = played(profile, seats, 22);
            let public = frames(&replay, Perspective::Public).unwrap();
            for (frame, game) in public.frames.iter().zip(&states) {
                assert!(frame.table.seats.iter().all(|s| s.hand.is_none()));
                assert!(frame.table.legal.is_empty());
                assert_eq!(frame.table.top, game.top().to_string());
                // No card drawn from the stock is named in the public notation, except the
                // hands laid down at a round's end (public from then on) and the up-card.
                for note in std::iter::once(&frame.line).chain(&frame.notes) {
                    if note.contains(" draws ") {
                        assert!(!note.contains(':'), "{profile}: `{note}` names a card");
                    }
                }
            }
            for seat in 0..seats {
                let mine = frames(&replay, Perspective::Seat(seat)).unwrap();
                for (frame, game) in mine.frames.iter().zip(&states) {
                    let obs = game.observation(seat);
                    for v in &frame.table.seats {
                        if v.seat == seat {
                            assert_eq!(v.hand.as_ref(), Some(&codes(game.hand(seat))));
                        } else {
                            assert_eq!(v.hand, None, "{profile}: seat {seat} sees S{}", v.seat);
                        }
                    }
                    let legal: Vec<String> = obs.legal.iter().map(|&a| action_text(a)).collect();
                    assert_eq!(frame.table.legal, legal);
                    // Its own draws are named, nobody else's.
                    if let Some(actor) = frame.actor
                        && actor != seat
                        && frame.line.contains(" draws")
                    {
                        assert!(!frame.line.contains(':'), "{}", frame.line);
                    }
                }
            }
        }
    }

    #[test]
    fn the_notation_reads_as_a_person_would_say_it() {
        // Seat 0 holds 7♥ J♣ 5♦ 2♣, seat 1 7♠ 9♣ 4♦ 2♦; 3♥ on top.
        let start = "mm1 classic seats=2 turn=0 hands=7H,JC,5D,2C/7S,9C,4D,2D discard=3H stock=*";
        let mut game = Game::from_position(start).unwrap();
        let mut rec = Recorder::start(Perspective::Omniscient, &game, &[]);
        let mut step = |game: &mut Game, seat: Seat, action: Action| {
            let events = game.apply(seat, action).unwrap();
            rec.step(seat, action, &events, game).clone()
        };
        let seven = |s| Card::new(Rank::Seven, s);
        assert_eq!(
            step(&mut game, 0, Action::play(seven(Suit::Hearts))).line,
            "S0 plays 7♥ — debt 2"
        );
        assert_eq!(
            step(&mut game, 1, Action::play(seven(Suit::Spades))).line,
            "S1 plays 7♠ — debt 4"
        );
        let f = step(&mut game, 0, Action::Draw);
        assert!(f.line.starts_with("S0 draws 4 (debt): "), "{}", f.line);
        assert_eq!(f.table.debt, 0);
        let jack = Action::Play {
            card: Card::new(Rank::Jack, Suit::Clubs),
            suit: Some(Suit::Spades),
            call: Call::None,
        };
        let f = step(&mut game, 1, Action::Draw);
        assert!(f.line.starts_with("S1 draws: "), "{}", f.line);
        if game.to_act() == Some(1) {
            step(&mut game, 1, Action::Pass);
        }
        let f = step(&mut game, 0, jack);
        assert_eq!(f.line, "S0 plays J♣, names ♠");
        assert_eq!(f.table.named_suit.as_deref(), Some("S"));
        assert_eq!(action_text(jack), "play J♣, names ♠");
        assert_eq!(
            "seat 2".parse::<Perspective>().unwrap(),
            Perspective::Seat(2)
        );
        assert_eq!(
            "all".parse::<Perspective>().unwrap(),
            Perspective::Omniscient
        );
        assert!("nobody".parse::<Perspective>().is_err());
    }

    /// Named frames are the unnamed ones with each seat's name beside its number, in every line
    /// and note (the result's too), and nothing else changed; a name's control characters are
    /// left out.
    #[test]
    fn names_stand_beside_the_seats_in_every_line() {
        for (profile, seats) in TABLES {
            let (replay, _) = played(profile, seats, 23);
            let names: Vec<String> = (0..seats).map(|s| format!("p{s}x")).collect();
            let plain = frames(&replay, Perspective::Omniscient).unwrap();
            let named = frames_named(&replay, Perspective::Omniscient, &names).unwrap();
            let with_names = |text: &str| {
                (0..seats).fold(text.to_string(), |t, s| {
                    t.replace(&format!("S{s}"), &format!("S{s} p{s}x"))
                })
            };
            assert_eq!(plain.frames.len(), named.frames.len());
            for (p, n) in plain.frames.iter().zip(&named.frames) {
                assert_eq!(n.line, with_names(&p.line), "{profile}");
                let notes: Vec<String> = p.notes.iter().map(|t| with_names(t)).collect();
                assert_eq!(n.notes, notes, "{profile}");
                assert_eq!(n.table.offence, p.table.offence.as_deref().map(with_names));
                assert_eq!(n.table.seats, p.table.seats);
                if let (Some(a), Some(b)) = (&p.result, &n.result) {
                    assert_eq!(b.line, with_names(&a.line));
                    assert!(b.line.contains(" p"), "{}", b.line);
                }
            }
        }
        let sly = ["al\x1b[2Jice".to_string()];
        assert_eq!(seat_label(0, &sly), "S0 al[2Jice");
        assert_eq!(seat_label(1, &sly), "S1");
        assert_eq!(seat_label(0, &[String::new()]), "S0");
    }

    #[test]
    fn decision_times_and_timeouts_come_from_the_replay() {
        let (mut replay, _) = played(ProfileId::Classic, 2, 6);
        replay.actions[0].think_ms = 120;
        replay.actions[1].timeout = true;
        let seen = frames(&replay, Perspective::Public).unwrap();
        assert_eq!(
            (seen.frames[1].think_ms, seen.frames[1].timeout),
            (120, false)
        );
        assert!(seen.frames[2].timeout);
        let seat = seen.frames[2].actor.unwrap();
        assert_eq!(
            seen.frames[2].notes[0],
            format!("S{seat} ran out of time: the server played for it")
        );
        assert_eq!(seen.frames[3].think_ms, 0);
    }

    #[test]
    fn a_refusal_is_shown_at_its_step_to_its_seat_and_the_omniscient_view_only() {
        let (mut replay, _) = played(ProfileId::Classic, 2, 9);
        let tried = Action::Draw;
        replay.rejections = vec![
            pb::ReplayRejection {
                seat: 0,
                step: 3,
                reason: pb::ErrorReason::IllegalCard as i32,
                message: "no such card in hand".into(),
                action: Some(tried.into()),
            },
            // A step past the end (a truncated replay) lands on the last frame.
            pb::ReplayRejection {
                seat: 1,
                step: 10_000,
                reason: pb::ErrorReason::RateLimited as i32,
                message: "too many Pings;\x1b[2J slow down".into(),
                action: None,
            },
        ];
        let at = |p: Perspective| -> Vec<(usize, String)> {
            frames(&replay, p)
                .unwrap()
                .frames
                .iter()
                .flat_map(|f| f.rejections.iter().map(|r| (f.index, r.line.clone())))
                .collect()
        };
        let last = replay.actions.len();
        let mine = format!(
            "S0 tried “{}” — refused (illegal card): no such card in hand",
            action_text(tried)
        );
        // (Without the control character the message held.)
        let theirs = "S1 sent a message — refused (rate limited): too many Pings;[2J slow down";
        assert_eq!(at(Perspective::Seat(0)), [(3, mine.clone())]);
        assert_eq!(at(Perspective::Seat(1)), [(last, theirs.to_string())]);
        assert_eq!(
            at(Perspective::Omniscient),
            [(3, mine), (last, theirs.to_string())]
        );
        assert!(
            at(Perspective::Public).is_empty(),
            "a seat's refusals are its own"
        );
    }

    #[test]
    fn frames_serialise_to_json_with_their_perspective() {
        let (replay, _) = played(ProfileId::Classic, 2, 5);
        let seen = frames(&replay, Perspective::Seat(1)).unwrap();
        let json = serde_json::to_value(&seen).unwrap();
        assert_eq!(json["perspective"], "seat 1");
        assert_eq!(json["frames"][0]["index"], 0);
        assert!(json["frames"][0]["table"]["seats"][0]["hand"].is_null());
        assert!(json["frames"][0]["table"]["seats"][1]["hand"].is_array());
        // A seat outside the table is refused by name.
        let e = frames(&replay, Perspective::Seat(2)).unwrap_err();
        assert_eq!(e.message, "seat 2 is not at this table of 2 seats");
    }
}
