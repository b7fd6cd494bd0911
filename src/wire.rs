//! Conversions between the rules engine's types and the wire types of [`crate::pb`].
//!
//! This is the one place where the two meet. Engine values always have a wire form, so going out
//! is infallible (`From`, or a `*_to_wire` function where the wire form needs context such as the
//! seat count). Coming in, a wire value may be anything a client sent: every `TryFrom` checks it
//! completely and returns a typed [`WireError`] (or [`ConfigWireError`] for configurations),
//! never panics, and each error names the [`pb::ErrorReason`] to report.
//!
//! | engine | wire | out | in |
//! |---|---|---|---|
//! | [`Suit`], [`Rank`], [`Call`] | [`pb::Suit`], [`pb::Rank`], [`pb::Call`] | `From` | `TryFrom` |
//! | [`Card`] | [`pb::Card`] | `From` | `TryFrom` |
//! | [`Action`] | [`pb::Action`], [`pb::LegalAction`], [`pb::ActionSubmission`] | `From`, [`legal_actions_to_wire`] | `TryFrom`, [`action_from_index`], [`action_from_submission`] |
//! | [`MatchConfig`], [`Options`] | [`pb::MatchConfig`], [`pb::ProfileOptions`] | `From` | `TryFrom` (validated by [`MatchConfig::rules`]) |
//! | [`Rules`] | [`pb::Rules`] | `From` | none |
//! | [`Observation`] | [`pb::Observation`] | [`observation_to_wire`], [`spectator_observation_to_wire`] | none |
//! | [`Event`] | [`pb::Event`] | [`event_to_wire`] | `TryFrom` |
//! | [`RoundResult`], [`MatchResult`] | [`pb::RoundResult`], [`pb::MatchResult`] | [`round_result_to_wire`], `From` | `TryFrom` |
//! | [`Rejection`] | [`pb::ErrorReason`] | `From` | [`rejection_from_reason`] |
//! | deck order | [`pb::DeckOrder`] | [`deck_order_to_wire`] | [`deck_order_from_wire`] |
//!
//! Events must already be redacted for their viewer with [`maumau_engine::event_for`]; this
//! module decides nothing about visibility: the engine's `view` module does, for events and
//! observations alike.
//!
//! It also fixes two details of the contract that are not conversions of engine values: the seed
//! commitment ([`seed_commitment`]) and how an [`pb::ErrorReason`] travels in a gRPC status
//! ([`status`], [`reason_of`]).

use std::fmt;

use maumau_engine::event::{ChallengeOutcome, DrawCause, OffenceKind};
use maumau_engine::outcome::MAX_SEATS;
use maumau_engine::profile::{CallRule, Effect, PlayAfterDraw, Scoring, TieBreak, UpCardMode};
use maumau_engine::{
    ACTION_COUNT, Action, Call, CallsMode, Card, ConfigError, DeckSize, Event, Hand, MatchConfig,
    MatchResult, Observation, Offence, Options, Phase, ProfileId, Rank, Rejection, RoundEnd,
    RoundResult, Rules, Seat, Suit,
};

use crate::pb;

// ----- errors -------------------------------------------------------------------------------

/// Why a wire value could not be turned into an engine value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WireError {
    /// A required message field or `oneof` is not set.
    Missing(&'static str),
    /// An enum field holds a number the contract does not define.
    UnknownEnum {
        /// The field, as `Message.field`.
        field: &'static str,
        /// The number received.
        value: i32,
    },
    /// A required enum field is left at its `*_UNSPECIFIED` value.
    Unspecified(&'static str),
    /// A number is outside the range the field allows.
    OutOfRange {
        /// The field, as `Message.field`.
        field: &'static str,
        /// The number received.
        value: u64,
    },
    /// A dense action index outside `0..202`.
    ActionIndex(u32),
    /// A J was played without naming a suit.
    SuitRequired,
    /// A suit was named with a card that is not a J.
    SuitNotAllowed,
    /// A result whose parts do not agree (for example a round that ended OUT without a winner).
    Inconsistent(&'static str),
}

impl WireError {
    /// The reason to report when this error came from decoding an action.
    pub fn reason(&self) -> pb::ErrorReason {
        match self {
            WireError::SuitRequired => pb::ErrorReason::SuitRequired,
            WireError::SuitNotAllowed => pb::ErrorReason::SuitNotAllowed,
            _ => pb::ErrorReason::MalformedAction,
        }
    }
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Missing(field) => write!(f, "{field} is required but not set"),
            WireError::UnknownEnum { field, value } => {
                write!(f, "{field} = {value} is not a value this protocol defines")
            }
            WireError::Unspecified(field) => {
                write!(f, "{field} is required but left unspecified")
            }
            WireError::OutOfRange { field, value } => {
                write!(f, "{field} = {value} is out of range")
            }
            WireError::ActionIndex(i) => {
                write!(f, "action index {i} is outside 0..{ACTION_COUNT}")
            }
            WireError::SuitRequired => f.write_str("a jack must name a suit"),
            WireError::SuitNotAllowed => f.write_str("only a jack names a suit"),
            WireError::Inconsistent(what) => write!(f, "inconsistent value: {what}"),
        }
    }
}

impl std::error::Error for WireError {}

impl From<&WireError> for pb::ErrorDetail {
    fn from(e: &WireError) -> pb::ErrorDetail {
        pb::ErrorDetail {
            reason: e.reason() as i32,
            message: e.to_string(),
        }
    }
}

/// Why a wire [`pb::MatchConfig`] was refused: unreadable, or refused by the engine's
/// [`MatchConfig::rules`]. Always reported as [`pb::ErrorReason::InvalidConfig`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigWireError {
    /// A field could not be read.
    Wire(WireError),
    /// The engine refused the configuration.
    Rules(ConfigError),
}

impl ConfigWireError {
    /// The reason to report: always [`pb::ErrorReason::InvalidConfig`].
    pub fn reason(&self) -> pb::ErrorReason {
        pb::ErrorReason::InvalidConfig
    }
}

impl fmt::Display for ConfigWireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigWireError::Wire(e) => write!(f, "invalid match configuration: {e}"),
            ConfigWireError::Rules(e) => write!(f, "invalid match configuration: {e}"),
        }
    }
}

impl std::error::Error for ConfigWireError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigWireError::Wire(e) => Some(e),
            ConfigWireError::Rules(e) => Some(e),
        }
    }
}

impl From<WireError> for ConfigWireError {
    fn from(e: WireError) -> ConfigWireError {
        ConfigWireError::Wire(e)
    }
}

impl From<ConfigError> for ConfigWireError {
    fn from(e: ConfigError) -> ConfigWireError {
        ConfigWireError::Rules(e)
    }
}

impl From<&ConfigWireError> for pb::ErrorDetail {
    fn from(e: &ConfigWireError) -> pb::ErrorDetail {
        pb::ErrorDetail {
            reason: e.reason() as i32,
            message: e.to_string(),
        }
    }
}

// ----- small helpers --------------------------------------------------------------------------

/// Reads an enum field: an unknown number is an error.
fn enum_field<E: TryFrom<i32>>(value: i32, field: &'static str) -> Result<E, WireError> {
    E::try_from(value).map_err(|_| WireError::UnknownEnum { field, value })
}

/// Reads a seat number: it must be below [`MAX_SEATS`].
fn seat_field(value: u32, field: &'static str) -> Result<Seat, WireError> {
    match Seat::try_from(value) {
        Ok(s) if (s as usize) < MAX_SEATS => Ok(s),
        _ => Err(WireError::OutOfRange {
            field,
            value: value.into(),
        }),
    }
}

/// Reads a `u16` field.
fn u16_field(value: u32, field: &'static str) -> Result<u16, WireError> {
    u16::try_from(value).map_err(|_| WireError::OutOfRange {
        field,
        value: value.into(),
    })
}

/// Reads a `u8` field.
fn u8_field(value: u32, field: &'static str) -> Result<u8, WireError> {
    u8::try_from(value).map_err(|_| WireError::OutOfRange {
        field,
        value: value.into(),
    })
}

/// Reads a per-seat list into a fixed array; more than [`MAX_SEATS`] entries is an error.
fn seat_array<W: Copy, T: Copy + Default>(
    values: &[W],
    field: &'static str,
    mut convert: impl FnMut(W) -> Result<T, WireError>,
) -> Result<[T; MAX_SEATS], WireError> {
    if values.len() > MAX_SEATS {
        return Err(WireError::OutOfRange {
            field,
            value: values.len() as u64,
        });
    }
    let mut out = [T::default(); MAX_SEATS];
    for (slot, &v) in out.iter_mut().zip(values) {
        *slot = convert(v)?;
    }
    Ok(out)
}

/// The first `seats` entries of a per-seat array, as a wire list.
fn seat_list<T: Copy, W>(values: &[T], seats: u8, convert: impl FnMut(&T) -> W) -> Vec<W> {
    values
        .iter()
        .take((seats as usize).min(MAX_SEATS))
        .map(convert)
        .collect()
}

// ----- cards ------------------------------------------------------------------------------------

impl From<Suit> for pb::Suit {
    fn from(s: Suit) -> pb::Suit {
        match s {
            Suit::Clubs => pb::Suit::Clubs,
            Suit::Diamonds => pb::Suit::Diamonds,
            Suit::Hearts => pb::Suit::Hearts,
            Suit::Spades => pb::Suit::Spades,
        }
    }
}

impl TryFrom<pb::Suit> for Suit {
    type Error = WireError;

    /// Fails for [`pb::Suit::Unspecified`].
    fn try_from(s: pb::Suit) -> Result<Suit, WireError> {
        Ok(match s {
            pb::Suit::Unspecified => return Err(WireError::Unspecified("suit")),
            pb::Suit::Clubs => Suit::Clubs,
            pb::Suit::Diamonds => Suit::Diamonds,
            pb::Suit::Hearts => Suit::Hearts,
            pb::Suit::Spades => Suit::Spades,
        })
    }
}

/// An optional suit as a wire enum number (`SUIT_UNSPECIFIED` for none).
fn opt_suit_to_wire(s: Option<Suit>) -> i32 {
    s.map_or(pb::Suit::Unspecified, pb::Suit::from) as i32
}

/// Reads an optional suit: `SUIT_UNSPECIFIED` is none, an unknown number is an error.
fn opt_suit_field(value: i32, field: &'static str) -> Result<Option<Suit>, WireError> {
    match enum_field::<pb::Suit>(value, field)? {
        pb::Suit::Unspecified => Ok(None),
        s => Suit::try_from(s).map(Some),
    }
}

/// Reads a required suit.
fn suit_field(value: i32, field: &'static str) -> Result<Suit, WireError> {
    opt_suit_field(value, field)?.ok_or(WireError::Unspecified(field))
}

impl From<Rank> for pb::Rank {
    fn from(r: Rank) -> pb::Rank {
        match r {
            Rank::Two => pb::Rank::Two,
            Rank::Three => pb::Rank::Three,
            Rank::Four => pb::Rank::Four,
            Rank::Five => pb::Rank::Five,
            Rank::Six => pb::Rank::Six,
            Rank::Seven => pb::Rank::Seven,
            Rank::Eight => pb::Rank::Eight,
            Rank::Nine => pb::Rank::Nine,
            Rank::Ten => pb::Rank::Ten,
            Rank::Jack => pb::Rank::Jack,
            Rank::Queen => pb::Rank::Queen,
            Rank::King => pb::Rank::King,
            Rank::Ace => pb::Rank::Ace,
        }
    }
}

impl TryFrom<pb::Rank> for Rank {
    type Error = WireError;

    /// Fails for [`pb::Rank::Unspecified`].
    fn try_from(r: pb::Rank) -> Result<Rank, WireError> {
        Ok(match r {
            pb::Rank::Unspecified => return Err(WireError::Unspecified("rank")),
            pb::Rank::Two => Rank::Two,
            pb::Rank::Three => Rank::Three,
            pb::Rank::Four => Rank::Four,
            pb::Rank::Five => Rank::Five,
            pb::Rank::Six => Rank::Six,
            pb::Rank::Seven => Rank::Seven,
            pb::Rank::Eight => Rank::Eight,
            pb::Rank::Nine => Rank::Nine,
            pb::Rank::Ten => Rank::Ten,
            pb::Rank::Jack => Rank::Jack,
            pb::Rank::Queen => Rank::Queen,
            pb::Rank::King => Rank::King,
            pb::Rank::Ace => Rank::Ace,
        })
    }
}

impl From<Card> for pb::Card {
    fn from(c: Card) -> pb::Card {
        pb::Card {
            rank: pb::Rank::from(c.rank()) as i32,
            suit: pb::Suit::from(c.suit()) as i32,
        }
    }
}

impl TryFrom<&pb::Card> for Card {
    type Error = WireError;

    fn try_from(c: &pb::Card) -> Result<Card, WireError> {
        let rank = Rank::try_from(enum_field::<pb::Rank>(c.rank, "Card.rank")?)
            .map_err(|_| WireError::Unspecified("Card.rank"))?;
        let suit = Suit::try_from(enum_field::<pb::Suit>(c.suit, "Card.suit")?)
            .map_err(|_| WireError::Unspecified("Card.suit"))?;
        Ok(Card::new(rank, suit))
    }
}

impl TryFrom<pb::Card> for Card {
    type Error = WireError;

    fn try_from(c: pb::Card) -> Result<Card, WireError> {
        Card::try_from(&c)
    }
}

/// Reads a required card field.
fn card_field(c: Option<&pb::Card>, field: &'static str) -> Result<Card, WireError> {
    Card::try_from(c.ok_or(WireError::Missing(field))?)
}

/// Cards as a wire list.
fn cards_to_wire(cards: impl IntoIterator<Item = Card>) -> Vec<pb::Card> {
    cards.into_iter().map(pb::Card::from).collect()
}

impl From<Call> for pb::Call {
    fn from(c: Call) -> pb::Call {
        match c {
            Call::None => pb::Call::Unspecified,
            Call::Mau => pb::Call::Mau,
            Call::MauMau => pb::Call::MauMau,
        }
    }
}

impl From<pb::Call> for Call {
    /// [`pb::Call::Unspecified`] is "nothing said".
    fn from(c: pb::Call) -> Call {
        match c {
            pb::Call::Unspecified => Call::None,
            pb::Call::Mau => Call::Mau,
            pb::Call::MauMau => Call::MauMau,
        }
    }
}

/// Reads a call field: unset is "nothing said", an unknown number is an error.
fn call_field(value: i32, field: &'static str) -> Result<Call, WireError> {
    enum_field::<pb::Call>(value, field).map(Call::from)
}

// ----- actions ----------------------------------------------------------------------------------

impl From<Action> for pb::Action {
    fn from(a: Action) -> pb::Action {
        use pb::action::Kind;
        let kind = match a {
            Action::Play { card, suit, call } => Kind::Play(pb::PlayAction {
                card: Some(card.into()),
                suit: opt_suit_to_wire(suit),
                call: pb::Call::from(call) as i32,
            }),
            Action::Draw => Kind::Draw(pb::DrawAction {}),
            Action::Pass => Kind::PassTurn(pb::PassAction {}),
            Action::DeclareSuit(s) => Kind::DeclareSuit(pb::DeclareSuitAction {
                suit: pb::Suit::from(s) as i32,
            }),
            Action::Announce(call) => Kind::Announce(pb::AnnounceAction {
                call: pb::Call::from(call) as i32,
            }),
            Action::Challenge => Kind::Challenge(pb::ChallengeAction {}),
        };
        pb::Action { kind: Some(kind) }
    }
}

impl TryFrom<&pb::Action> for Action {
    type Error = WireError;

    /// Checks the action completely: a kind is set, every enum value is known, a J names a suit
    /// and no other card does. Whether the action is legal now is the engine's to decide.
    fn try_from(a: &pb::Action) -> Result<Action, WireError> {
        use pb::action::Kind;
        Ok(
            match a.kind.as_ref().ok_or(WireError::Missing("Action.kind"))? {
                Kind::Play(p) => {
                    let card = card_field(p.card.as_ref(), "PlayAction.card")?;
                    let suit = opt_suit_field(p.suit, "PlayAction.suit")?;
                    match (card.rank() == Rank::Jack, suit) {
                        (true, None) => return Err(WireError::SuitRequired),
                        (false, Some(_)) => return Err(WireError::SuitNotAllowed),
                        _ => {}
                    }
                    Action::Play {
                        card,
                        suit,
                        call: call_field(p.call, "PlayAction.call")?,
                    }
                }
                Kind::Draw(_) => Action::Draw,
                Kind::PassTurn(_) => Action::Pass,
                Kind::DeclareSuit(d) => {
                    Action::DeclareSuit(suit_field(d.suit, "DeclareSuitAction.suit")?)
                }
                Kind::Announce(n) => Action::Announce(call_field(n.call, "AnnounceAction.call")?),
                Kind::Challenge(_) => Action::Challenge,
            },
        )
    }
}

impl TryFrom<pb::Action> for Action {
    type Error = WireError;

    fn try_from(a: pb::Action) -> Result<Action, WireError> {
        Action::try_from(&a)
    }
}

/// The action with this dense index (`0..202`).
pub fn action_from_index(index: u32) -> Result<Action, WireError> {
    Action::from_index(index as usize).ok_or(WireError::ActionIndex(index))
}

/// A legal action with its dense index, marked with the offence it opens (if any).
pub fn legal_action_to_wire(action: Action, opens: Option<OffenceKind>) -> pb::LegalAction {
    pb::LegalAction {
        index: action.index() as u32,
        action: Some(action.into()),
        opens_offence: opens.map_or(pb::OffenceKind::Unspecified, Into::into) as i32,
    }
}

/// An observation's legal actions as the wire list of a [`pb::DecisionPrompt`], each marked with
/// the offence it opens ([`Observation::offence_of`]).
pub fn legal_actions_to_wire(obs: &Observation) -> Vec<pb::LegalAction> {
    let rules = obs.config.rules().ok();
    obs.legal
        .iter()
        .map(|&a| legal_action_to_wire(a, rules.as_ref().and_then(|r| obs.offence_of(r, a))))
        .collect()
}

/// The action a client submitted, given either as an action or as its dense index.
pub fn action_from_submission(s: &pb::ActionSubmission) -> Result<Action, WireError> {
    use pb::action_submission::Choice;
    match s
        .choice
        .as_ref()
        .ok_or(WireError::Missing("ActionSubmission.choice"))?
    {
        Choice::Action(a) => Action::try_from(a),
        Choice::ActionIndex(i) => action_from_index(*i),
    }
}

// ----- configuration ----------------------------------------------------------------------------

impl From<ProfileId> for pb::Profile {
    fn from(p: ProfileId) -> pb::Profile {
        match p {
            ProfileId::Classic => pb::Profile::Classic,
            ProfileId::PenaltyPoints => pb::Profile::PenaltyPoints,
            ProfileId::Brazilian => pb::Profile::Brazilian,
            ProfileId::Romanian32 => pb::Profile::Romanian32,
        }
    }
}

impl TryFrom<pb::Profile> for ProfileId {
    type Error = WireError;

    /// Fails for [`pb::Profile::Unspecified`].
    fn try_from(p: pb::Profile) -> Result<ProfileId, WireError> {
        Ok(match p {
            pb::Profile::Unspecified => return Err(WireError::Unspecified("MatchConfig.profile")),
            pb::Profile::Classic => ProfileId::Classic,
            pb::Profile::PenaltyPoints => ProfileId::PenaltyPoints,
            pb::Profile::Brazilian => ProfileId::Brazilian,
            pb::Profile::Romanian32 => ProfileId::Romanian32,
        })
    }
}

impl From<CallsMode> for pb::CallsMode {
    fn from(c: CallsMode) -> pb::CallsMode {
        match c {
            CallsMode::Challenge => pb::CallsMode::Challenge,
            CallsMode::Enforce => pb::CallsMode::Enforce,
            CallsMode::Off => pb::CallsMode::Off,
        }
    }
}

impl From<pb::CallsMode> for CallsMode {
    /// [`pb::CallsMode::Unspecified`] is the default, [`CallsMode::Challenge`].
    fn from(c: pb::CallsMode) -> CallsMode {
        match c {
            pb::CallsMode::Unspecified | pb::CallsMode::Challenge => CallsMode::Challenge,
            pb::CallsMode::Enforce => CallsMode::Enforce,
            pb::CallsMode::Off => CallsMode::Off,
        }
    }
}

impl From<DeckSize> for pb::DeckSize {
    fn from(d: DeckSize) -> pb::DeckSize {
        match d {
            DeckSize::Full52 => pb::DeckSize::DeckSize52,
            DeckSize::Short32 => pb::DeckSize::DeckSize32,
        }
    }
}

impl From<pb::DeckSize> for DeckSize {
    /// [`pb::DeckSize::Unspecified`] is the default, 52 cards.
    fn from(d: pb::DeckSize) -> DeckSize {
        match d {
            pb::DeckSize::Unspecified | pb::DeckSize::DeckSize52 => DeckSize::Full52,
            pb::DeckSize::DeckSize32 => DeckSize::Short32,
        }
    }
}

/// The wire default for "0 means the engine's default" fields.
const DEFAULT_LIMIT: u16 = 100;
const DEFAULT_MAX_TURNS: u16 = 1000;
const DEFAULT_MAX_ROUNDS: u16 = 1000;

impl From<&Options> for pb::ProfileOptions {
    fn from(o: &Options) -> pb::ProfileOptions {
        pb::ProfileOptions {
            single_round: o.single_round,
            deck: pb::DeckSize::from(o.deck) as i32,
            nine_reverses: o.nine_reverses,
            ace_skips: o.ace_skips,
            no_mau_penalty: !o.mau_penalty,
            limit: o.limit.into(),
            jack_wild_on_paid_seven: o.jack_wild_on_paid_seven,
        }
    }
}

impl TryFrom<&pb::ProfileOptions> for Options {
    type Error = WireError;

    /// Reads the fields only; whether they suit the profile is checked with the configuration.
    fn try_from(o: &pb::ProfileOptions) -> Result<Options, WireError> {
        let limit = match o.limit {
            0 => DEFAULT_LIMIT,
            n => u16_field(n, "ProfileOptions.limit")?,
        };
        Ok(Options {
            single_round: o.single_round,
            deck: enum_field::<pb::DeckSize>(o.deck, "ProfileOptions.deck")?.into(),
            nine_reverses: o.nine_reverses,
            ace_skips: o.ace_skips,
            mau_penalty: !o.no_mau_penalty,
            limit,
            jack_wild_on_paid_seven: o.jack_wild_on_paid_seven,
        })
    }
}

impl From<&MatchConfig> for pb::MatchConfig {
    fn from(c: &MatchConfig) -> pb::MatchConfig {
        pb::MatchConfig {
            profile: pb::Profile::from(c.profile) as i32,
            options: Some((&c.options).into()),
            seats: c.seats.into(),
            calls: pb::CallsMode::from(c.calls) as i32,
            max_turns_per_round: c.max_turns_per_round.into(),
            max_rounds: c.max_rounds.into(),
        }
    }
}

impl From<MatchConfig> for pb::MatchConfig {
    fn from(c: MatchConfig) -> pb::MatchConfig {
        pb::MatchConfig::from(&c)
    }
}

impl TryFrom<&pb::MatchConfig> for MatchConfig {
    type Error = ConfigWireError;

    /// Reads the configuration and validates it with [`MatchConfig::rules`]: a configuration
    /// that comes out is one the engine accepts.
    fn try_from(c: &pb::MatchConfig) -> Result<MatchConfig, ConfigWireError> {
        let profile =
            ProfileId::try_from(enum_field::<pb::Profile>(c.profile, "MatchConfig.profile")?)?;
        let options = match &c.options {
            Some(o) => Options::try_from(o)?,
            None => Options::default(),
        };
        let or_default = |v: u32, default: u16, field| match v {
            0 => Ok(default),
            n => u16_field(n, field),
        };
        let config = MatchConfig {
            profile,
            options,
            seats: u8_field(c.seats, "MatchConfig.seats")?,
            calls: enum_field::<pb::CallsMode>(c.calls, "MatchConfig.calls")?.into(),
            max_turns_per_round: or_default(
                c.max_turns_per_round,
                DEFAULT_MAX_TURNS,
                "MatchConfig.max_turns_per_round",
            )?,
            max_rounds: or_default(c.max_rounds, DEFAULT_MAX_ROUNDS, "MatchConfig.max_rounds")?,
        };
        config.rules()?;
        Ok(config)
    }
}

impl TryFrom<pb::MatchConfig> for MatchConfig {
    type Error = ConfigWireError;

    fn try_from(c: pb::MatchConfig) -> Result<MatchConfig, ConfigWireError> {
        MatchConfig::try_from(&c)
    }
}

fn effect_to_wire(e: Effect) -> pb::CardEffect {
    match e {
        Effect::None => pb::CardEffect::None,
        Effect::DrawTwo => pb::CardEffect::DrawTwo,
        Effect::Skip => pb::CardEffect::Skip,
        Effect::Reverse => pb::CardEffect::Reverse,
        Effect::Wild => pb::CardEffect::Wild,
        Effect::PrevDrawOne => pb::CardEffect::PrevDrawOne,
    }
}

impl From<&Rules> for pb::Rules {
    fn from(r: &Rules) -> pb::Rules {
        let up_card = match r.up_card {
            UpCardMode::AsPlayByDealer => pb::UpCardMode::AsPlayByDealer,
            UpCardMode::AsPlayByFirst => pb::UpCardMode::AsPlayByFirst,
            UpCardMode::NoEffect => pb::UpCardMode::NoEffect,
        };
        let play_after_draw = match r.play_after_draw {
            PlayAfterDraw::DrawnOnly => pb::PlayAfterDraw::DrawnOnly,
            PlayAfterDraw::AnyLegal => pb::PlayAfterDraw::AnyLegal,
        };
        let call_rule = match r.call_rule {
            CallRule::None => pb::CallRule::None,
            CallRule::LastCards => pb::CallRule::LastCards,
            CallRule::Announce => pb::CallRule::Announce,
            CallRule::Romanian => pb::CallRule::Romanian,
        };
        let scoring = match r.scoring {
            Scoring::Penalty => pb::Scoring::Penalty,
            Scoring::Positive => pb::Scoring::Positive,
        };
        let tie_break = match r.tie_break {
            TieBreak::Share => pb::TieBreak::Share,
            TieBreak::RoundsWonThenShare => pb::TieBreak::RoundsWonThenShare,
        };
        pb::Rules {
            profile: pb::Profile::from(r.profile) as i32,
            seats: r.seats.into(),
            min_seats: r.min_seats.into(),
            max_seats: r.max_seats.into(),
            deck_size: r.deck_len() as u32,
            copies: r.copies.into(),
            hand_size: r.hand_size.into(),
            up_card: up_card as i32,
            ranks: Rank::ALL
                .iter()
                .map(|&rank| pb::RankRule {
                    rank: pb::Rank::from(rank) as i32,
                    in_deck: rank >= r.low_rank,
                    effect: effect_to_wire(r.effect(rank)) as i32,
                    value: r.value(rank).into(),
                })
                .collect(),
            jack_wild_on_paid_seven: r.jack_wild_on_paid_seven,
            voluntary_draw: r.voluntary_draw,
            play_after_draw: play_after_draw as i32,
            penalty_draw_ends_own_turn: r.penalty_draw_ends_own_turn,
            penalty_cards_playable: r.penalty_cards_playable,
            call_rule: call_rule as i32,
            calls: pb::CallsMode::from(r.calls) as i32,
            challenges: r.windows_open(),
            omission_penalty: r.omission_penalty.into(),
            false_call_penalty: r.false_call_penalty.into(),
            false_accusation_penalty: r.false_accusation_penalty.into(),
            late_cure: r.late_cure,
            scoring: scoring as i32,
            target: r.target.map(u32::from),
            tie_break: tie_break as i32,
            max_turns_per_round: r.max_turns_per_round.into(),
            max_rounds: r.max_rounds.into(),
        }
    }
}

// ----- observation ------------------------------------------------------------------------------

impl From<Phase> for pb::Phase {
    fn from(p: Phase) -> pb::Phase {
        match p {
            Phase::Start => pb::Phase::Start,
            Phase::AfterDraw => pb::Phase::AfterDraw,
            Phase::Announced => pb::Phase::Announced,
            Phase::AwaitSuit => pb::Phase::AwaitSuit,
            Phase::Over => pb::Phase::Over,
        }
    }
}

impl From<OffenceKind> for pb::OffenceKind {
    fn from(k: OffenceKind) -> pb::OffenceKind {
        match k {
            OffenceKind::Omission => pb::OffenceKind::Omission,
            OffenceKind::JackFinish => pb::OffenceKind::JackFinish,
            OffenceKind::NoAnnounce => pb::OffenceKind::NoAnnounce,
        }
    }
}

impl TryFrom<pb::OffenceKind> for OffenceKind {
    type Error = WireError;

    /// Fails for [`pb::OffenceKind::Unspecified`].
    fn try_from(k: pb::OffenceKind) -> Result<OffenceKind, WireError> {
        Ok(match k {
            pb::OffenceKind::Unspecified => return Err(WireError::Unspecified("offence kind")),
            pb::OffenceKind::Omission => OffenceKind::Omission,
            pb::OffenceKind::JackFinish => OffenceKind::JackFinish,
            pb::OffenceKind::NoAnnounce => OffenceKind::NoAnnounce,
        })
    }
}

fn offence_kind_field(value: i32, field: &'static str) -> Result<OffenceKind, WireError> {
    OffenceKind::try_from(enum_field::<pb::OffenceKind>(value, field)?)
        .map_err(|_| WireError::Unspecified(field))
}

impl From<Offence> for pb::Offence {
    fn from(o: Offence) -> pb::Offence {
        pb::Offence {
            offender: o.offender.into(),
            kind: pb::OffenceKind::from(o.kind) as i32,
        }
    }
}

/// What `obs.viewer` may see, as sent to that seat (in a Snapshot or a DecisionPrompt). The legal
/// actions are not part of the wire observation: they go in the prompt, see
/// [`legal_actions_to_wire`].
pub fn observation_to_wire(obs: &Observation) -> pb::Observation {
    pb::Observation {
        config: Some((&obs.config).into()),
        discard: cards_to_wire(obs.discard.as_slice().iter().copied()),
        ..observation_to_wire_unshared(obs)
    }
}

/// [`observation_to_wire`] without the two fields every viewer of a match sees alike and that
/// change least, `config` (never) and `discard` (a card at a time): both are left empty, for a
/// server that encodes them once and appends them to the encoded rest (protobuf reads a
/// message's fields in any order).
pub fn observation_to_wire_unshared(obs: &Observation) -> pb::Observation {
    let seats = obs.config.seats;
    pb::Observation {
        seat: obs.viewer.map(u32::from),
        config: None,
        round: obs.round.into(),
        dealer: obs.dealer.into(),
        phase: pb::Phase::from(obs.phase) as i32,
        to_act: obs.to_act.map(u32::from),
        clockwise: obs.clockwise,
        hand: cards_to_wire(obs.hand.iter()),
        hand_sizes: seat_list(&obs.hand_sizes, seats, |&n| n.into()),
        discard: Vec::new(),
        top: obs.discard.top().map(pb::Card::from),
        named_suit: opt_suit_to_wire(obs.named_suit),
        debt: obs.debt.into(),
        stock_size: obs.stock_size.into(),
        offence: obs.offence.map(pb::Offence::from),
        pending_out: obs.pending_out.map(u32::from),
        last_calls: seat_list(&obs.last_calls, seats, |&c| pb::Call::from(c) as i32),
        just_accused: obs.just_accused,
        drawn_card: obs.drawn_card.map(pb::Card::from),
        penalty_cards: cards_to_wire(obs.penalty_cards.iter()),
        turns: obs.turns.into(),
        totals: seat_list(&obs.totals, seats, |&t| t),
        rounds_won: seat_list(&obs.rounds_won, seats, |&w| w.into()),
    }
}

/// Reads an observation a client received, with the legal actions of its prompt, back into the
/// engine's [`Observation`] (what the Rust bot SDK hands to a bot). Everything is checked: an
/// unknown enum number, a seat or count out of range, or a pile larger than a deck is an error.
pub fn observation_from_wire(
    w: &pb::Observation,
    legal: &[pb::LegalAction],
) -> Result<Observation, WireError> {
    let config = MatchConfig::try_from(
        w.config
            .as_ref()
            .ok_or(WireError::Missing("Observation.config"))?,
    )
    .map_err(|_| WireError::Inconsistent("Observation.config is not a valid configuration"))?;
    let cards = |cs: &[pb::Card]| -> Result<Vec<Card>, WireError> {
        cs.iter().map(Card::try_from).collect()
    };
    let hand: maumau_engine::Hand = cards(&w.hand)?.into_iter().collect();
    let discard = cards(&w.discard)?;
    if discard.len() > maumau_engine::card::MAX_CARDS {
        return Err(WireError::OutOfRange {
            field: "Observation.discard",
            value: discard.len() as u64,
        });
    }
    let phase = match enum_field::<pb::Phase>(w.phase, "Observation.phase")? {
        pb::Phase::Unspecified => return Err(WireError::Unspecified("Observation.phase")),
        pb::Phase::Start => Phase::Start,
        pb::Phase::AfterDraw => Phase::AfterDraw,
        pb::Phase::Announced => Phase::Announced,
        pb::Phase::AwaitSuit => Phase::AwaitSuit,
        pb::Phase::Over => Phase::Over,
    };
    let offence = match &w.offence {
        None => None,
        Some(o) => Some(Offence {
            offender: seat_field(o.offender, "Offence.offender")?,
            kind: offence_kind_field(o.kind, "Offence.kind")?,
        }),
    };
    let legal = legal
        .iter()
        .map(|l| match &l.action {
            Some(a) => Action::try_from(a),
            None => action_from_index(l.index),
        })
        .collect::<Result<Vec<Action>, WireError>>()?;
    Ok(Observation {
        viewer: w
            .seat
            .map(|s| seat_field(s, "Observation.seat"))
            .transpose()?,
        config,
        round: u16_field(w.round, "Observation.round")?,
        dealer: seat_field(w.dealer, "Observation.dealer")?,
        phase,
        to_act: w
            .to_act
            .map(|s| seat_field(s, "Observation.to_act"))
            .transpose()?,
        clockwise: w.clockwise,
        hand,
        hand_sizes: seat_array(&w.hand_sizes, "Observation.hand_sizes", |n| {
            u8_field(n, "Observation.hand_sizes")
        })?,
        discard: discard.into_iter().collect(),
        named_suit: opt_suit_field(w.named_suit, "Observation.named_suit")?,
        debt: u8_field(w.debt, "Observation.debt")?,
        stock_size: u8_field(w.stock_size, "Observation.stock_size")?,
        offence,
        pending_out: w
            .pending_out
            .map(|s| seat_field(s, "Observation.pending_out"))
            .transpose()?,
        last_calls: seat_array(&w.last_calls, "Observation.last_calls", |c| {
            Ok(Call::from(enum_field::<pb::Call>(
                c,
                "Observation.last_calls",
            )?))
        })?,
        just_accused: w.just_accused,
        drawn_card: w.drawn_card.as_ref().map(Card::try_from).transpose()?,
        penalty_cards: cards(&w.penalty_cards)?.into_iter().collect(),
        turns: u16_field(w.turns, "Observation.turns")?,
        totals: seat_array(&w.totals, "Observation.totals", Ok)?,
        rounds_won: seat_array(&w.rounds_won, "Observation.rounds_won", |n| {
            u16_field(n, "Observation.rounds_won")
        })?,
        legal: legal.into_iter().collect(),
    })
}

/// A spectator's observation (from [`maumau_engine::Game::spectator_observation`]): the engine
/// has already left out every private field.
pub fn spectator_observation_to_wire(obs: &Observation) -> pb::Observation {
    debug_assert!(
        obs.viewer.is_none(),
        "a spectator observation has no viewer"
    );
    observation_to_wire(obs)
}

// ----- events -----------------------------------------------------------------------------------

impl From<DrawCause> for pb::DrawCause {
    fn from(c: DrawCause) -> pb::DrawCause {
        match c {
            DrawCause::Deal => pb::DrawCause::Deal,
            DrawCause::Turn => pb::DrawCause::Turn,
            DrawCause::Debt => pb::DrawCause::Debt,
            DrawCause::Omission => pb::DrawCause::Omission,
            DrawCause::FalseCall => pb::DrawCause::FalseCall,
            DrawCause::FalseAccusation => pb::DrawCause::FalseAccusation,
            DrawCause::PrevDrawOne => pb::DrawCause::PrevDrawOne,
        }
    }
}

impl TryFrom<pb::DrawCause> for DrawCause {
    type Error = WireError;

    /// Fails for [`pb::DrawCause::Unspecified`].
    fn try_from(c: pb::DrawCause) -> Result<DrawCause, WireError> {
        Ok(match c {
            pb::DrawCause::Unspecified => return Err(WireError::Unspecified("CardDrawn.cause")),
            pb::DrawCause::Deal => DrawCause::Deal,
            pb::DrawCause::Turn => DrawCause::Turn,
            pb::DrawCause::Debt => DrawCause::Debt,
            pb::DrawCause::Omission => DrawCause::Omission,
            pb::DrawCause::FalseCall => DrawCause::FalseCall,
            pb::DrawCause::FalseAccusation => DrawCause::FalseAccusation,
            pb::DrawCause::PrevDrawOne => DrawCause::PrevDrawOne,
        })
    }
}

/// An event as sent to one viewer. Redact it first with [`maumau_engine::event_for`]; `seats`
/// (the table's seat count) sizes the per-seat lists of a round result.
pub fn event_to_wire(event: &Event, seats: u8) -> pb::Event {
    use pb::event::Kind;
    let kind = match *event {
        Event::RoundStarted { round, dealer } => Kind::RoundStarted(pb::RoundStarted {
            round: round.into(),
            dealer: dealer.into(),
        }),
        Event::Drew { seat, card, cause } => Kind::CardDrawn(pb::CardDrawn {
            seat: seat.into(),
            card: card.map(pb::Card::from),
            cause: pb::DrawCause::from(cause) as i32,
        }),
        Event::UpCard { card } => Kind::UpCardTurned(pb::UpCardTurned {
            card: Some(card.into()),
        }),
        Event::StockRebuilt { size } => Kind::StockRebuilt(pb::StockRebuilt { size: size.into() }),
        Event::TurnStarted { seat } => Kind::TurnStarted(pb::TurnStarted { seat: seat.into() }),
        Event::Played {
            seat,
            card,
            suit,
            call,
        } => Kind::CardPlayed(pb::CardPlayed {
            seat: seat.into(),
            card: Some(card.into()),
            suit: opt_suit_to_wire(suit),
            call: pb::Call::from(call) as i32,
        }),
        Event::SuitDeclared { seat, suit } => Kind::SuitDeclared(pb::SuitDeclared {
            seat: seat.into(),
            suit: pb::Suit::from(suit) as i32,
        }),
        Event::Passed { seat, automatic } => Kind::Passed(pb::Passed {
            seat: seat.into(),
            automatic,
        }),
        Event::Skipped { seat } => Kind::Skipped(pb::Skipped { seat: seat.into() }),
        Event::DirectionChanged { clockwise } => {
            Kind::DirectionChanged(pb::DirectionChanged { clockwise })
        }
        Event::Announced { seat, call, valid } => Kind::Announced(pb::Announced {
            seat: seat.into(),
            call: pb::Call::from(call) as i32,
            valid,
        }),
        Event::OffenceOpened { seat, kind } => Kind::OffenceOpened(pb::OffenceOpened {
            seat: seat.into(),
            kind: pb::OffenceKind::from(kind) as i32,
        }),
        Event::OffenceExpired { seat } => {
            Kind::OffenceExpired(pb::OffenceExpired { seat: seat.into() })
        }
        Event::OffenceCured { seat } => Kind::OffenceCured(pb::OffenceCured { seat: seat.into() }),
        Event::Challenged { by, outcome } => {
            let (result, offender) = match outcome {
                ChallengeOutcome::Caught { offender } => {
                    (pb::ChallengeResult::Caught, Some(offender.into()))
                }
                ChallengeOutcome::False => (pb::ChallengeResult::False, None),
            };
            Kind::Challenged(pb::Challenged {
                by: by.into(),
                result: result as i32,
                offender,
            })
        }
        Event::OffencePenalised { seat, kind } => Kind::OffencePenalised(pb::OffencePenalised {
            seat: seat.into(),
            kind: pb::OffenceKind::from(kind) as i32,
        }),
        Event::PendingOut { seat } => Kind::PendingOut(pb::PendingOut { seat: seat.into() }),
        Event::RoundEnded(r) => Kind::RoundEnded(round_result_to_wire(&r, seats)),
        Event::MatchEnded => Kind::MatchEnded(pb::MatchEnded {}),
    };
    pb::Event { kind: Some(kind) }
}

impl TryFrom<&pb::Event> for Event {
    type Error = WireError;

    /// Reads an event as a client received it (a hidden card stays hidden).
    fn try_from(e: &pb::Event) -> Result<Event, WireError> {
        use pb::event::Kind;
        Ok(
            match e.kind.as_ref().ok_or(WireError::Missing("Event.kind"))? {
                Kind::RoundStarted(r) => Event::RoundStarted {
                    round: u16_field(r.round, "RoundStarted.round")?,
                    dealer: seat_field(r.dealer, "RoundStarted.dealer")?,
                },
                Kind::CardDrawn(d) => Event::Drew {
                    seat: seat_field(d.seat, "CardDrawn.seat")?,
                    card: d.card.as_ref().map(Card::try_from).transpose()?,
                    cause: DrawCause::try_from(enum_field::<pb::DrawCause>(
                        d.cause,
                        "CardDrawn.cause",
                    )?)?,
                },
                Kind::UpCardTurned(u) => Event::UpCard {
                    card: card_field(u.card.as_ref(), "UpCardTurned.card")?,
                },
                Kind::StockRebuilt(s) => Event::StockRebuilt {
                    size: u8_field(s.size, "StockRebuilt.size")?,
                },
                Kind::TurnStarted(t) => Event::TurnStarted {
                    seat: seat_field(t.seat, "TurnStarted.seat")?,
                },
                Kind::CardPlayed(p) => Event::Played {
                    seat: seat_field(p.seat, "CardPlayed.seat")?,
                    card: card_field(p.card.as_ref(), "CardPlayed.card")?,
                    suit: opt_suit_field(p.suit, "CardPlayed.suit")?,
                    call: call_field(p.call, "CardPlayed.call")?,
                },
                Kind::SuitDeclared(s) => Event::SuitDeclared {
                    seat: seat_field(s.seat, "SuitDeclared.seat")?,
                    suit: suit_field(s.suit, "SuitDeclared.suit")?,
                },
                Kind::Passed(p) => Event::Passed {
                    seat: seat_field(p.seat, "Passed.seat")?,
                    automatic: p.automatic,
                },
                Kind::Skipped(s) => Event::Skipped {
                    seat: seat_field(s.seat, "Skipped.seat")?,
                },
                Kind::DirectionChanged(d) => Event::DirectionChanged {
                    clockwise: d.clockwise,
                },
                Kind::Announced(a) => Event::Announced {
                    seat: seat_field(a.seat, "Announced.seat")?,
                    call: call_field(a.call, "Announced.call")?,
                    valid: a.valid,
                },
                Kind::OffenceOpened(o) => Event::OffenceOpened {
                    seat: seat_field(o.seat, "OffenceOpened.seat")?,
                    kind: offence_kind_field(o.kind, "OffenceOpened.kind")?,
                },
                Kind::OffenceExpired(o) => Event::OffenceExpired {
                    seat: seat_field(o.seat, "OffenceExpired.seat")?,
                },
                Kind::OffenceCured(o) => Event::OffenceCured {
                    seat: seat_field(o.seat, "OffenceCured.seat")?,
                },
                Kind::Challenged(c) => {
                    let result = enum_field::<pb::ChallengeResult>(c.result, "Challenged.result")?;
                    let outcome = match (result, c.offender) {
                        (pb::ChallengeResult::Caught, Some(o)) => ChallengeOutcome::Caught {
                            offender: seat_field(o, "Challenged.offender")?,
                        },
                        (pb::ChallengeResult::False, None) => ChallengeOutcome::False,
                        (pb::ChallengeResult::Unspecified, _) => {
                            return Err(WireError::Unspecified("Challenged.result"));
                        }
                        _ => {
                            return Err(WireError::Inconsistent(
                                "Challenged.offender is set exactly when the result is CAUGHT",
                            ));
                        }
                    };
                    Event::Challenged {
                        by: seat_field(c.by, "Challenged.by")?,
                        outcome,
                    }
                }
                Kind::OffencePenalised(o) => Event::OffencePenalised {
                    seat: seat_field(o.seat, "OffencePenalised.seat")?,
                    kind: offence_kind_field(o.kind, "OffencePenalised.kind")?,
                },
                Kind::PendingOut(p) => Event::PendingOut {
                    seat: seat_field(p.seat, "PendingOut.seat")?,
                },
                Kind::RoundEnded(r) => Event::RoundEnded(RoundResult::try_from(r)?),
                Kind::MatchEnded(_) => Event::MatchEnded,
            },
        )
    }
}

impl TryFrom<pb::Event> for Event {
    type Error = WireError;

    fn try_from(e: pb::Event) -> Result<Event, WireError> {
        Event::try_from(&e)
    }
}

// ----- results ----------------------------------------------------------------------------------

/// A round result; `seats` (the table's seat count) sizes the per-seat lists.
pub fn round_result_to_wire(r: &RoundResult, seats: u8) -> pb::RoundResult {
    let (end, winner) = match r.end {
        RoundEnd::Out(s) => (pb::RoundEndKind::Out, Some(s.into())),
        RoundEnd::Blocked => (pb::RoundEndKind::Blocked, None),
    };
    pb::RoundResult {
        round: r.round.into(),
        end: end as i32,
        winner,
        points: seat_list(&r.points, seats, |&p| p),
        totals: seat_list(&r.totals, seats, |&t| t),
        final_hands: seat_list(&r.hands, seats, |h| pb::Cards {
            cards: cards_to_wire(h.iter()),
        }),
    }
}

impl TryFrom<&pb::RoundResult> for RoundResult {
    type Error = WireError;

    fn try_from(r: &pb::RoundResult) -> Result<RoundResult, WireError> {
        let end = match (
            enum_field::<pb::RoundEndKind>(r.end, "RoundResult.end")?,
            r.winner,
        ) {
            (pb::RoundEndKind::Out, Some(w)) => RoundEnd::Out(seat_field(w, "RoundResult.winner")?),
            (pb::RoundEndKind::Blocked, None) => RoundEnd::Blocked,
            (pb::RoundEndKind::Unspecified, _) => {
                return Err(WireError::Unspecified("RoundResult.end"));
            }
            _ => {
                return Err(WireError::Inconsistent(
                    "RoundResult.winner is set exactly when the round ended OUT",
                ));
            }
        };
        Ok(RoundResult {
            round: u16_field(r.round, "RoundResult.round")?,
            end,
            points: seat_array(&r.points, "RoundResult.points", Ok)?,
            totals: seat_array(&r.totals, "RoundResult.totals", Ok)?,
            hands: seat_array(
                &r.final_hands.iter().collect::<Vec<_>>(),
                "RoundResult.final_hands",
                |h| {
                    let mut hand = Hand::EMPTY;
                    for c in &h.cards {
                        if !hand.insert(Card::try_from(c)?) {
                            return Err(WireError::Inconsistent(
                                "RoundResult.final_hands holds a card more than twice",
                            ));
                        }
                    }
                    Ok(hand)
                },
            )?,
        })
    }
}

impl From<&MatchResult> for pb::MatchResult {
    fn from(r: &MatchResult) -> pb::MatchResult {
        let seats = (r.seats as usize).min(MAX_SEATS);
        pb::MatchResult {
            seats: r.seats.into(),
            rounds: r.rounds.into(),
            standings: (0..seats)
                .map(|s| pb::SeatStanding {
                    seat: s as u32,
                    placing: r.placings[s].into(),
                    total: r.totals[s],
                    rounds_won: r.rounds_won[s].into(),
                })
                .collect(),
        }
    }
}

impl TryFrom<&pb::MatchResult> for MatchResult {
    type Error = WireError;

    /// Needs exactly one standing per seat, each seat once.
    fn try_from(r: &pb::MatchResult) -> Result<MatchResult, WireError> {
        let seats = match u8::try_from(r.seats) {
            Ok(n) if (1..=MAX_SEATS).contains(&(n as usize)) => n,
            _ => {
                return Err(WireError::OutOfRange {
                    field: "MatchResult.seats",
                    value: r.seats.into(),
                });
            }
        };
        if r.standings.len() != seats as usize {
            return Err(WireError::Inconsistent(
                "MatchResult needs one standing per seat",
            ));
        }
        let mut result = MatchResult {
            seats,
            placings: [0; MAX_SEATS],
            totals: [0; MAX_SEATS],
            rounds_won: [0; MAX_SEATS],
            rounds: u16_field(r.rounds, "MatchResult.rounds")?,
        };
        let mut seen = [false; MAX_SEATS];
        for st in &r.standings {
            let s = seat_field(st.seat, "SeatStanding.seat")? as usize;
            if s >= seats as usize || std::mem::replace(&mut seen[s], true) {
                return Err(WireError::Inconsistent(
                    "MatchResult needs one standing per seat",
                ));
            }
            result.placings[s] = u8_field(st.placing, "SeatStanding.placing")?;
            result.totals[s] = st.total;
            result.rounds_won[s] = u16_field(st.rounds_won, "SeatStanding.rounds_won")?;
        }
        Ok(result)
    }
}

// ----- setups -----------------------------------------------------------------------------------

/// A first-round deck order (dealer and cards in dealing order) as sent in a
/// [`pb::CreateMatchRequest`] or a [`pb::Replay`].
pub fn deck_order_to_wire(dealer: Seat, deck: &[Card]) -> pb::DeckOrder {
    pb::DeckOrder {
        dealer: dealer.into(),
        cards: cards_to_wire(deck.iter().copied()),
    }
}

/// Reads a deck order. Whether the cards are exactly the profile's deck is checked by
/// [`maumau_engine::Game::from_deck`].
pub fn deck_order_from_wire(d: &pb::DeckOrder) -> Result<(Seat, Vec<Card>), WireError> {
    if d.cards.len() > maumau_engine::card::MAX_CARDS {
        return Err(WireError::OutOfRange {
            field: "DeckOrder.cards",
            value: d.cards.len() as u64,
        });
    }
    let cards = d
        .cards
        .iter()
        .map(Card::try_from)
        .collect::<Result<_, _>>()?;
    Ok((seat_field(d.dealer, "DeckOrder.dealer")?, cards))
}

// ----- rejections and errors --------------------------------------------------------------------

impl From<Rejection> for pb::ErrorReason {
    fn from(r: Rejection) -> pb::ErrorReason {
        use pb::ErrorReason as R;
        match r {
            Rejection::MatchOver => R::MatchOver,
            Rejection::NoSuchSeat => R::NoSuchSeat,
            Rejection::AwaitingSuit => R::AwaitingSuit,
            Rejection::NotAwaitingSuit => R::NotAwaitingSuit,
            Rejection::NotYourTurn => R::NotYourTurn,
            Rejection::CardNotInHand => R::CardNotInHand,
            Rejection::SuitRequired => R::SuitRequired,
            Rejection::SuitNotAllowed => R::SuitNotAllowed,
            Rejection::IllegalCard => R::IllegalCard,
            Rejection::PenaltyCardThisTurn => R::PenaltyCardThisTurn,
            Rejection::OnlyDrawnCard => R::OnlyDrawnCard,
            Rejection::MustPlayAfterAnnounce => R::MustPlayAfterAnnounce,
            Rejection::HoldsLegalPlay => R::HoldsLegalPlay,
            Rejection::AlreadyDrew => R::AlreadyDrew,
            Rejection::NothingToDraw => R::NothingToDraw,
            Rejection::PassBeforeDraw => R::PassBeforeDraw,
            Rejection::ChallengesDisabled => R::ChallengesDisabled,
            Rejection::NoOpenOffence => R::NoOpenOffence,
            Rejection::OwnOffence => R::OwnOffence,
            Rejection::AlreadyChallenged => R::AlreadyChallenged,
            Rejection::AnnounceNotAllowed => R::AnnounceNotAllowed,
            Rejection::WrongWord => R::WrongWord,
            Rejection::AlreadyAnnounced => R::AlreadyAnnounced,
        }
    }
}

/// The engine rejection behind a reason; `None` for protocol and match-service reasons.
pub fn rejection_from_reason(reason: pb::ErrorReason) -> Option<Rejection> {
    use pb::ErrorReason as R;
    Some(match reason {
        R::MatchOver => Rejection::MatchOver,
        R::NoSuchSeat => Rejection::NoSuchSeat,
        R::AwaitingSuit => Rejection::AwaitingSuit,
        R::NotAwaitingSuit => Rejection::NotAwaitingSuit,
        R::NotYourTurn => Rejection::NotYourTurn,
        R::CardNotInHand => Rejection::CardNotInHand,
        R::SuitRequired => Rejection::SuitRequired,
        R::SuitNotAllowed => Rejection::SuitNotAllowed,
        R::IllegalCard => Rejection::IllegalCard,
        R::PenaltyCardThisTurn => Rejection::PenaltyCardThisTurn,
        R::OnlyDrawnCard => Rejection::OnlyDrawnCard,
        R::MustPlayAfterAnnounce => Rejection::MustPlayAfterAnnounce,
        R::HoldsLegalPlay => Rejection::HoldsLegalPlay,
        R::AlreadyDrew => Rejection::AlreadyDrew,
        R::NothingToDraw => Rejection::NothingToDraw,
        R::PassBeforeDraw => Rejection::PassBeforeDraw,
        R::ChallengesDisabled => Rejection::ChallengesDisabled,
        R::NoOpenOffence => Rejection::NoOpenOffence,
        R::OwnOffence => Rejection::OwnOffence,
        R::AlreadyChallenged => Rejection::AlreadyChallenged,
        R::AnnounceNotAllowed => Rejection::AnnounceNotAllowed,
        R::WrongWord => Rejection::WrongWord,
        R::AlreadyAnnounced => Rejection::AlreadyAnnounced,
        _ => return None,
    })
}

impl From<Rejection> for pb::ErrorDetail {
    fn from(r: Rejection) -> pb::ErrorDetail {
        pb::ErrorDetail {
            reason: pb::ErrorReason::from(r) as i32,
            message: r.to_string(),
        }
    }
}

/// The trailer that carries an [`pb::ErrorReason`]'s name in a failed rpc's status.
pub const REASON_TRAILER: &str = "maumau-reason";

/// The gRPC status code that goes with a reason.
pub fn status_code(reason: pb::ErrorReason) -> tonic::Code {
    use pb::ErrorReason as R;
    use tonic::Code;
    if rejection_from_reason(reason).is_some() {
        return Code::FailedPrecondition;
    }
    match reason {
        R::StaleState | R::NotJoined | R::AlreadyJoined | R::MatchNotStarted => {
            Code::FailedPrecondition
        }
        R::MatchNotFinished | R::ReplayMismatch | R::Sealed => Code::FailedPrecondition,
        R::BadToken => Code::Unauthenticated,
        R::NotSeated | R::PermissionDenied => Code::PermissionDenied,
        R::MalformedAction
        | R::MalformedMessage
        | R::InvalidConfig
        | R::InvalidSetup
        | R::InvalidReplay
        | R::InvalidArgument => Code::InvalidArgument,
        R::RateLimited => Code::ResourceExhausted,
        R::Superseded => Code::Aborted,
        R::MatchNotFound | R::ReplayPruned => Code::NotFound,
        R::Unavailable | R::StorageUnavailable => Code::Unavailable,
        R::Internal => Code::Internal,
        _ => Code::Unknown,
    }
}

/// The gRPC status for a failed rpc: the reason's code, the message, and the reason's name in
/// the [`REASON_TRAILER`] trailer.
pub fn status(reason: pb::ErrorReason, message: impl Into<String>) -> tonic::Status {
    let mut status = tonic::Status::new(status_code(reason), message);
    status.metadata_mut().insert(
        REASON_TRAILER,
        tonic::metadata::MetadataValue::from_static(reason.as_str_name()),
    );
    status
}

/// The reason a failed rpc's status carries; [`pb::ErrorReason::Unspecified`] when none.
pub fn reason_of(status: &tonic::Status) -> pb::ErrorReason {
    status
        .metadata()
        .get(REASON_TRAILER)
        .and_then(|v| v.to_str().ok())
        .and_then(pb::ErrorReason::from_str_name)
        .unwrap_or(pb::ErrorReason::Unspecified)
}

// ----- seed commitment --------------------------------------------------------------------------

/// Bytes of the salt the server draws for each match's seed commitment.
pub const SEED_SALT_LEN: usize = 16;

/// The seed commitment sent before play: SHA-256(salt ‖ seed), the hash of the salt's bytes
/// followed by the seed's 8 bytes, big-endian.
///
/// The server draws a fresh [`SEED_SALT_LEN`]-byte salt from the operating system for every match
/// and reveals it with the seed at the end (`MatchReport.seed_salt`), so that a small or guessable
/// seed cannot be found from the commitment by trying seeds. Records written before salted
/// commitments have an empty salt: their commitment is SHA-256 of the 8 seed bytes alone.
pub fn seed_commitment(salt: &[u8], seed: u64) -> [u8; 32] {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(salt);
    h.update(seed.to_be_bytes());
    h.finalize().into()
}

#[cfg(test)]
mod tests {
    use maumau_engine::{Game, event_for};
    use prost::Message;

    use super::*;

    /// Encodes and decodes, as the network would.
    fn over_the_wire<M: Message + Default>(m: &M) -> M {
        M::decode(m.encode_to_vec().as_slice()).expect("a message decodes from its own bytes")
    }

    fn card(text: &str) -> Card {
        text.parse().expect("a card")
    }

    fn play(card: pb::Card, suit: pb::Suit, call: pb::Call) -> pb::Action {
        pb::Action {
            kind: Some(pb::action::Kind::Play(pb::PlayAction {
                card: Some(card),
                suit: suit as i32,
                call: call as i32,
            })),
        }
    }

    #[test]
    fn every_action_index_round_trips() {
        for i in 0..ACTION_COUNT as u32 {
            let action = action_from_index(i).expect("an index below 202");
            let legal = over_the_wire(&legal_action_to_wire(action, None));
            assert_eq!(legal.index, i);
            let back = Action::try_from(legal.action.expect("the action is set"));
            assert_eq!(back, Ok(action), "index {i}");
            assert_eq!(back.map(|a| a.index() as u32), Ok(i));

            let by_action = pb::ActionSubmission {
                state_id: 9,
                choice: Some(pb::action_submission::Choice::Action(action.into())),
                request_id: 1,
            };
            let by_index = pb::ActionSubmission {
                choice: Some(pb::action_submission::Choice::ActionIndex(i)),
                ..by_action
            };
            assert_eq!(
                action_from_submission(&over_the_wire(&by_action)),
                Ok(action)
            );
            assert_eq!(
                action_from_submission(&over_the_wire(&by_index)),
                Ok(action)
            );
        }
        assert_eq!(action_from_index(202), Err(WireError::ActionIndex(202)));
        assert_eq!(
            action_from_index(u32::MAX),
            Err(WireError::ActionIndex(u32::MAX))
        );
    }

    #[test]
    fn every_card_round_trips() {
        for i in 0..52 {
            let c = Card::from_index(i);
            let w = over_the_wire(&pb::Card::from(c));
            assert_eq!(Card::try_from(&w), Ok(c));
            // The wire rank is the pip value, the wire suit the engine's index plus one.
            assert_eq!(w.rank, c.rank().index() as i32 + 2);
            assert_eq!(w.suit, c.suit().index() as i32 + 1);
        }
        assert_eq!(
            pb::Card::from(card("10H")),
            pb::Card {
                rank: pb::Rank::Ten as i32,
                suit: pb::Suit::Hearts as i32
            }
        );
    }

    #[test]
    fn configs_with_options_round_trip_and_are_validated() {
        let mut configs = Vec::new();
        for profile in ProfileId::ALL {
            let seats = if profile == ProfileId::Brazilian {
                5
            } else {
                3
            };
            configs.push(MatchConfig::new(profile, seats));
        }
        let mut pp = MatchConfig::new(ProfileId::PenaltyPoints, 4);
        pp.options = Options {
            deck: DeckSize::Short32,
            nine_reverses: true,
            ace_skips: true,
            mau_penalty: false,
            limit: 150,
            ..Options::default()
        };
        pp.calls = CallsMode::Enforce;
        pp.max_turns_per_round = 250;
        pp.max_rounds = 12;
        configs.push(pp);
        let mut classic = MatchConfig::new(ProfileId::Classic, 2);
        classic.options.single_round = true;
        classic.calls = CallsMode::Off;
        configs.push(classic);
        let mut br = MatchConfig::new(ProfileId::Brazilian, 8);
        br.options.jack_wild_on_paid_seven = true;
        configs.push(br);

        for c in configs {
            let w = over_the_wire(&pb::MatchConfig::from(&c));
            assert_eq!(MatchConfig::try_from(&w), Ok(c));
            let rules = pb::Rules::from(&c.rules().expect("a valid config"));
            assert_eq!(rules.ranks.len(), 13);
            assert_eq!(rules.seats, u32::from(c.seats));
        }

        // Zeros and unset fields are the defaults.
        let minimal = pb::MatchConfig {
            profile: pb::Profile::Romanian32 as i32,
            seats: 4,
            ..Default::default()
        };
        assert_eq!(
            MatchConfig::try_from(&minimal),
            Ok(MatchConfig::new(ProfileId::Romanian32, 4))
        );

        // The engine's validation applies.
        let mut w = pb::MatchConfig::from(MatchConfig::new(ProfileId::Classic, 4));
        w.options = Some(pb::ProfileOptions {
            ace_skips: true,
            ..Default::default()
        });
        let err = MatchConfig::try_from(&w).expect_err("ace_skips is not a classic option");
        assert!(matches!(
            err,
            ConfigWireError::Rules(ConfigError::OptionNotInProfile { .. })
        ));
        assert_eq!(err.reason(), pb::ErrorReason::InvalidConfig);
        w.options = None;
        w.seats = 7;
        assert!(matches!(
            MatchConfig::try_from(&w),
            Err(ConfigWireError::Rules(ConfigError::SeatCount { .. }))
        ));
    }

    #[test]
    fn invalid_configs_give_errors() {
        let good = pb::MatchConfig::from(MatchConfig::new(ProfileId::Classic, 4));
        let bad = [
            pb::MatchConfig { profile: 0, ..good },
            pb::MatchConfig {
                profile: 99,
                ..good
            },
            pb::MatchConfig { calls: -4, ..good },
            pb::MatchConfig { seats: 0, ..good },
            pb::MatchConfig { seats: 260, ..good },
            pb::MatchConfig {
                max_turns_per_round: 70_000,
                ..good
            },
            pb::MatchConfig {
                max_rounds: u32::MAX,
                ..good
            },
            pb::MatchConfig {
                options: Some(pb::ProfileOptions {
                    deck: 3,
                    ..Default::default()
                }),
                ..good
            },
            pb::MatchConfig {
                profile: pb::Profile::PenaltyPoints as i32,
                options: Some(pb::ProfileOptions {
                    limit: 120,
                    ..Default::default()
                }),
                ..good
            },
            pb::MatchConfig {
                profile: pb::Profile::PenaltyPoints as i32,
                options: Some(pb::ProfileOptions {
                    limit: 65_636,
                    ..Default::default()
                }),
                ..good
            },
        ];
        for w in bad {
            let err = MatchConfig::try_from(&w).expect_err("an invalid config");
            assert_eq!(err.reason(), pb::ErrorReason::InvalidConfig, "{w:?}");
            assert!(!err.to_string().is_empty());
        }
        assert_eq!(
            MatchConfig::try_from(&pb::MatchConfig {
                profile: 99,
                ..good
            }),
            Err(ConfigWireError::Wire(WireError::UnknownEnum {
                field: "MatchConfig.profile",
                value: 99
            }))
        );
    }

    #[test]
    fn invalid_actions_give_typed_errors() {
        let jack = pb::Card::from(card("JH"));
        let seven = pb::Card::from(card("7H"));
        let cases = [
            (pb::Action { kind: None }, WireError::Missing("Action.kind")),
            (
                play(jack, pb::Suit::Unspecified, pb::Call::Unspecified),
                WireError::SuitRequired,
            ),
            (
                play(seven, pb::Suit::Spades, pb::Call::Unspecified),
                WireError::SuitNotAllowed,
            ),
            (
                pb::Action {
                    kind: Some(pb::action::Kind::Play(pb::PlayAction::default())),
                },
                WireError::Missing("PlayAction.card"),
            ),
            (
                play(
                    pb::Card { rank: 1, suit: 1 },
                    pb::Suit::Unspecified,
                    pb::Call::Unspecified,
                ),
                WireError::UnknownEnum {
                    field: "Card.rank",
                    value: 1,
                },
            ),
            (
                play(
                    pb::Card {
                        rank: pb::Rank::Ace as i32,
                        suit: 0,
                    },
                    pb::Suit::Unspecified,
                    pb::Call::Unspecified,
                ),
                WireError::Unspecified("Card.suit"),
            ),
            (
                play(
                    pb::Card {
                        rank: pb::Rank::Ace as i32,
                        suit: 5,
                    },
                    pb::Suit::Unspecified,
                    pb::Call::Unspecified,
                ),
                WireError::UnknownEnum {
                    field: "Card.suit",
                    value: 5,
                },
            ),
            (
                pb::Action {
                    kind: Some(pb::action::Kind::Play(pb::PlayAction {
                        card: Some(seven),
                        suit: 0,
                        call: 3,
                    })),
                },
                WireError::UnknownEnum {
                    field: "PlayAction.call",
                    value: 3,
                },
            ),
            (
                pb::Action {
                    kind: Some(pb::action::Kind::Play(pb::PlayAction {
                        card: Some(jack),
                        suit: -1,
                        call: 0,
                    })),
                },
                WireError::UnknownEnum {
                    field: "PlayAction.suit",
                    value: -1,
                },
            ),
            (
                pb::Action {
                    kind: Some(pb::action::Kind::DeclareSuit(pb::DeclareSuitAction {
                        suit: 0,
                    })),
                },
                WireError::Unspecified("DeclareSuitAction.suit"),
            ),
            (
                pb::Action {
                    kind: Some(pb::action::Kind::Announce(pb::AnnounceAction { call: 77 })),
                },
                WireError::UnknownEnum {
                    field: "AnnounceAction.call",
                    value: 77,
                },
            ),
        ];
        for (w, want) in cases {
            assert_eq!(Action::try_from(&over_the_wire(&w)), Err(want.clone()));
            assert!(!want.to_string().is_empty());
        }
        assert_eq!(
            WireError::SuitRequired.reason(),
            pb::ErrorReason::SuitRequired
        );
        assert_eq!(
            WireError::SuitNotAllowed.reason(),
            pb::ErrorReason::SuitNotAllowed
        );
        assert_eq!(
            WireError::Missing("Action.kind").reason(),
            pb::ErrorReason::MalformedAction
        );
        assert_eq!(
            action_from_submission(&pb::ActionSubmission::default()),
            Err(WireError::Missing("ActionSubmission.choice"))
        );
        // A J naming a suit, and every call, are fine.
        assert_eq!(
            Action::try_from(&play(jack, pb::Suit::Clubs, pb::Call::MauMau)),
            Ok(Action::Play {
                card: card("JH"),
                suit: Some(Suit::Clubs),
                call: Call::MauMau
            })
        );
    }

    /// Every enum number from -3 to 20 in every enum field of an action: an error or an action,
    /// never a panic, and an action only for numbers the contract defines.
    #[test]
    fn any_enum_number_is_handled() {
        for rank in -3..20 {
            for suit in -3..8 {
                for named in -3..8 {
                    for call in -3..6 {
                        let w = play(
                            pb::Card { rank, suit },
                            pb::Suit::Unspecified,
                            pb::Call::Unspecified,
                        );
                        let w = match w.kind {
                            Some(pb::action::Kind::Play(p)) => pb::Action {
                                kind: Some(pb::action::Kind::Play(pb::PlayAction {
                                    suit: named,
                                    call,
                                    ..p
                                })),
                            },
                            _ => unreachable!(),
                        };
                        if let Ok(a @ Action::Play { card, suit: s, .. }) = Action::try_from(&w) {
                            assert!((2..=14).contains(&rank) && (1..=4).contains(&suit));
                            assert!((0..=2).contains(&call));
                            assert_eq!(s.is_some(), card.rank() == Rank::Jack);
                            assert_eq!(pb::Action::from(a), w);
                        }
                    }
                }
            }
        }
    }

    /// Arbitrary bytes decoded as requests never make a conversion panic.
    #[test]
    fn arbitrary_bytes_never_panic() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let seed_bytes = [
            pb::ActionSubmission {
                state_id: 3,
                choice: Some(pb::action_submission::Choice::Action(
                    Action::Play {
                        card: card("JD"),
                        suit: Some(Suit::Spades),
                        call: Call::Mau,
                    }
                    .into(),
                )),
                request_id: 4,
            }
            .encode_to_vec(),
            pb::MatchConfig::from(MatchConfig::new(ProfileId::PenaltyPoints, 4)).encode_to_vec(),
        ];
        for round in 0..20_000 {
            let mut bytes = seed_bytes[round % 2].clone();
            for _ in 0..(next() % 4) {
                let i = (next() as usize) % bytes.len();
                bytes[i] = next() as u8;
            }
            if let Ok(s) = pb::ActionSubmission::decode(bytes.as_slice()) {
                let _ = action_from_submission(&s);
            }
            if let Ok(c) = pb::MatchConfig::decode(bytes.as_slice()) {
                let _ = MatchConfig::try_from(&c);
            }
            if let Ok(e) = pb::Event::decode(bytes.as_slice()) {
                let _ = Event::try_from(&e);
            }
            if let Ok(r) = pb::MatchResult::decode(bytes.as_slice()) {
                let _ = MatchResult::try_from(&r);
            }
            if let Ok(d) = pb::DeckOrder::decode(bytes.as_slice()) {
                let _ = deck_order_from_wire(&d);
            }
        }
    }

    #[test]
    fn every_rejection_has_its_reason() {
        for r in Rejection::ALL {
            let reason = pb::ErrorReason::from(r);
            assert_eq!(
                reason.as_str_name(),
                format!("ERROR_REASON_{}", r.code().to_uppercase()),
                "the wire name is the engine's stable code"
            );
            assert!((1..100).contains(&(reason as i32)));
            assert_eq!(rejection_from_reason(reason), Some(r));
            let detail = pb::ErrorDetail::from(r);
            assert_eq!(detail.message, r.to_string());
            assert_eq!(status_code(reason), tonic::Code::FailedPrecondition);
        }
        // Every reason 1..100 is an engine rejection, and no other is.
        for n in 0..400 {
            if let Ok(reason) = pb::ErrorReason::try_from(n) {
                assert_eq!(
                    rejection_from_reason(reason).is_some(),
                    (1..100).contains(&n)
                );
            }
        }
    }

    #[test]
    fn reasons_travel_in_a_status() {
        for n in 0..400 {
            let Ok(reason) = pb::ErrorReason::try_from(n) else {
                continue;
            };
            let s = status(reason, "why");
            assert_eq!(reason_of(&s), reason);
            assert_eq!(s.message(), "why");
        }
        assert_eq!(
            status(pb::ErrorReason::MatchNotFound, "").code(),
            tonic::Code::NotFound
        );
        assert_eq!(
            status(pb::ErrorReason::BadToken, "").code(),
            tonic::Code::Unauthenticated
        );
        assert_eq!(
            reason_of(&tonic::Status::internal("no trailer")),
            pb::ErrorReason::Unspecified
        );
    }

    #[test]
    fn seed_commitment_is_sha256_of_the_salt_then_the_big_endian_seed() {
        let hex = |d: [u8; 32]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        // `printf '\x00\x01…\x0f\0\0\0\0\0\0\0\x2a' | sha256sum`
        let salt: Vec<u8> = (0..16).collect();
        assert_eq!(hex(seed_commitment(&salt, 42)), SALTED_42_SHA256);
        // Without a salt (records written before salted commitments): SHA-256 of the seed alone.
        // `printf '\0\0\0\0\0\0\0\x2a' | sha256sum`
        assert_eq!(hex(seed_commitment(&[], 42)), SEED_42_SHA256);
        assert_ne!(seed_commitment(&salt, 1), seed_commitment(&salt, 2));
        assert_ne!(seed_commitment(&salt, 42), seed_commitment(&salt[1..], 42));
    }

    const SEED_42_SHA256: &str = "a6bb133cb1e3638ad7b8a3ff0539668e9e56f9b850ef1b2a810f5422eaa6c323";
    const SALTED_42_SHA256: &str =
        "aecf08fa44f63fb736020f828b87393cffee9dc0e853f66e6d2e4a10d4f66847";

    /// Plays whole matches of every profile with the first legal action (and every challenge
    /// that is open), converting every observation and every redacted event on the way.
    #[test]
    fn whole_matches_convert() {
        for (profile, seats) in [
            (ProfileId::Classic, 3),
            (ProfileId::PenaltyPoints, 4),
            (ProfileId::Brazilian, 5),
            (ProfileId::Romanian32, 2),
        ] {
            let config = MatchConfig::new(profile, seats);
            let mut events = Vec::new();
            let mut game = Game::new_with(config, 11, &mut events).expect("a valid config");
            let mut steps = 0;
            while let Some(to_act) = game.to_act() {
                steps += 1;
                assert!(steps < 200_000, "the match ends");
                for seat in 0..seats {
                    let obs = game.observation(seat);
                    let w = over_the_wire(&observation_to_wire(&obs));
                    assert_eq!(w.seat, Some(u32::from(seat)));
                    assert_eq!(w.hand.len(), obs.hand.len());
                    assert_eq!(w.hand_sizes.len(), seats as usize);
                    assert_eq!(w.hand_sizes[seat as usize] as usize, w.hand.len());
                    assert_eq!(w.top, w.discard.last().copied());
                    assert_eq!(w.to_act, Some(u32::from(to_act)));
                    assert_eq!(
                        MatchConfig::try_from(w.config.as_ref().expect("config is set")),
                        Ok(config)
                    );
                    let legal = legal_actions_to_wire(&obs);
                    assert_eq!(
                        observation_from_wire(&w, &legal),
                        Ok(obs),
                        "observation round trip"
                    );
                    let public = spectator_observation_to_wire(&game.spectator_observation());
                    assert!(public.seat.is_none() && public.hand.is_empty());
                    assert!(public.drawn_card.is_none() && public.penalty_cards.is_empty());
                    assert_eq!(public.discard, w.discard);
                }
                // Challenge whenever a seat may, otherwise the seat to move takes its first action.
                let challenger =
                    (0..seats).find(|&s| game.legal_actions(s).contains(&Action::Challenge));
                let (seat, action) = match challenger {
                    Some(s) => (s, Action::Challenge),
                    None => (to_act, game.legal_actions(to_act)[0]),
                };
                let w = over_the_wire(&legal_actions_to_wire(&game.observation(seat))[0]);
                assert_eq!(w.index as usize, game.legal_actions(seat)[0].index());
                events.extend(game.apply(seat, action).expect("a legal action"));
            }
            let result = game.match_result().expect("the match is over");
            let w = over_the_wire(&pb::MatchResult::from(&result));
            assert_eq!(w.standings.len(), seats as usize);
            assert_eq!(MatchResult::try_from(&w), Ok(result));

            let mut kinds = std::collections::HashSet::new();
            for e in &events {
                for viewer in (0..seats).map(Some).chain([None]) {
                    let seen = event_for(e, viewer);
                    let w = over_the_wire(&event_to_wire(&seen, seats));
                    kinds.insert(std::mem::discriminant(w.kind.as_ref().expect("a kind")));
                    assert_eq!(Event::try_from(&w), Ok(seen), "{e:?} for {viewer:?}");
                    if let Some(pb::event::Kind::CardDrawn(d)) = &w.kind {
                        assert_eq!(d.card.is_some(), viewer == Some(d.seat as Seat));
                    }
                }
            }
            assert!(kinds.len() >= 6, "{profile}: only {} kinds", kinds.len());
        }
    }

    #[test]
    fn invalid_results_and_events_give_errors() {
        let bad_rounds = [
            pb::RoundResult {
                end: pb::RoundEndKind::Out as i32,
                winner: None,
                ..Default::default()
            },
            pb::RoundResult {
                end: pb::RoundEndKind::Blocked as i32,
                winner: Some(1),
                ..Default::default()
            },
            pb::RoundResult::default(),
            pb::RoundResult {
                end: pb::RoundEndKind::Blocked as i32,
                points: vec![0; 9],
                ..Default::default()
            },
            pb::RoundResult {
                end: pb::RoundEndKind::Out as i32,
                winner: Some(8),
                ..Default::default()
            },
        ];
        for r in &bad_rounds {
            assert!(RoundResult::try_from(r).is_err(), "{r:?}");
        }
        let standing = |seat| pb::SeatStanding {
            seat,
            placing: 1,
            ..Default::default()
        };
        let bad_results = [
            pb::MatchResult {
                seats: 2,
                rounds: 1,
                standings: vec![standing(0)],
            },
            pb::MatchResult {
                seats: 2,
                rounds: 1,
                standings: vec![standing(0), standing(0)],
            },
            pb::MatchResult {
                seats: 2,
                rounds: 1,
                standings: vec![standing(0), standing(2)],
            },
            pb::MatchResult {
                seats: 9,
                rounds: 1,
                standings: (0..9).map(standing).collect(),
            },
            pb::MatchResult::default(),
        ];
        for r in &bad_results {
            assert!(MatchResult::try_from(r).is_err(), "{r:?}");
        }
        let bad_events = [
            pb::Event { kind: None },
            pb::Event {
                kind: Some(pb::event::Kind::TurnStarted(pb::TurnStarted { seat: 8 })),
            },
            pb::Event {
                kind: Some(pb::event::Kind::CardDrawn(pb::CardDrawn {
                    seat: 0,
                    card: None,
                    cause: 0,
                })),
            },
            pb::Event {
                kind: Some(pb::event::Kind::Challenged(pb::Challenged {
                    by: 1,
                    result: pb::ChallengeResult::False as i32,
                    offender: Some(0),
                })),
            },
            pb::Event {
                kind: Some(pb::event::Kind::UpCardTurned(pb::UpCardTurned {
                    card: None,
                })),
            },
        ];
        for e in &bad_events {
            assert!(Event::try_from(e).is_err(), "{e:?}");
        }
    }

    /// Bytes written by Python's protobuf runtime (grpcio-tools) for the action "play JH naming
    /// clubs": the Rust side reads what other languages write.
    #[test]
    fn bytes_from_another_implementation_decode() {
        let bytes = [0x0a, 0x08, 0x0a, 0x04, 0x08, 0x0b, 0x10, 0x03, 0x10, 0x01];
        let w = pb::Action::decode(bytes.as_slice()).expect("valid bytes");
        let want = Action::Play {
            card: card("JH"),
            suit: Some(Suit::Clubs),
            call: Call::None,
        };
        assert_eq!(Action::try_from(&w), Ok(want));
        assert_eq!(pb::Action::from(want).encode_to_vec(), bytes);
    }

    #[test]
    fn deck_orders_round_trip() {
        let deck: Vec<Card> = (0..52).map(Card::from_index).collect();
        let w = over_the_wire(&deck_order_to_wire(2, &deck));
        assert_eq!(deck_order_from_wire(&w), Ok((2, deck)));
        let mut bad = w.clone();
        bad.dealer = 300;
        assert!(deck_order_from_wire(&bad).is_err());
        let mut bad = w;
        bad.cards[3].rank = 0;
        assert!(deck_order_from_wire(&bad).is_err());
    }

    #[test]
    fn rules_describe_the_profile() {
        let rules = MatchConfig::new(ProfileId::Romanian32, 4)
            .rules()
            .expect("a valid config");
        let w = pb::Rules::from(&rules);
        assert_eq!(w.deck_size, 32);
        assert_eq!(w.scoring, pb::Scoring::Positive as i32);
        assert_eq!(w.target, Some(150));
        assert!(w.late_cure && w.challenges);
        let jack = &w.ranks[Rank::Jack.index() as usize];
        assert_eq!(
            (jack.rank, jack.effect, jack.in_deck),
            (pb::Rank::Jack as i32, pb::CardEffect::Wild as i32, true)
        );
        assert!(!w.ranks[Rank::Two.index() as usize].in_deck);
    }
}
