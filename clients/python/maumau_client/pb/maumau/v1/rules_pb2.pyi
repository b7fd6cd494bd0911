from . import cards_pb2 as _cards_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Profile(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROFILE_UNSPECIFIED: _ClassVar[Profile]
    PROFILE_CLASSIC: _ClassVar[Profile]
    PROFILE_PENALTY_POINTS: _ClassVar[Profile]
    PROFILE_BRAZILIAN: _ClassVar[Profile]
    PROFILE_ROMANIAN_32: _ClassVar[Profile]

class CallsMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CALLS_MODE_UNSPECIFIED: _ClassVar[CallsMode]
    CALLS_MODE_CHALLENGE: _ClassVar[CallsMode]
    CALLS_MODE_ENFORCE: _ClassVar[CallsMode]
    CALLS_MODE_OFF: _ClassVar[CallsMode]

class DeckSize(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECK_SIZE_UNSPECIFIED: _ClassVar[DeckSize]
    DECK_SIZE_52: _ClassVar[DeckSize]
    DECK_SIZE_32: _ClassVar[DeckSize]

class CardEffect(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CARD_EFFECT_UNSPECIFIED: _ClassVar[CardEffect]
    CARD_EFFECT_NONE: _ClassVar[CardEffect]
    CARD_EFFECT_DRAW_TWO: _ClassVar[CardEffect]
    CARD_EFFECT_SKIP: _ClassVar[CardEffect]
    CARD_EFFECT_REVERSE: _ClassVar[CardEffect]
    CARD_EFFECT_WILD: _ClassVar[CardEffect]
    CARD_EFFECT_PREV_DRAW_ONE: _ClassVar[CardEffect]

class UpCardMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    UP_CARD_MODE_UNSPECIFIED: _ClassVar[UpCardMode]
    UP_CARD_MODE_AS_PLAY_BY_DEALER: _ClassVar[UpCardMode]
    UP_CARD_MODE_AS_PLAY_BY_FIRST: _ClassVar[UpCardMode]
    UP_CARD_MODE_NO_EFFECT: _ClassVar[UpCardMode]

class PlayAfterDraw(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PLAY_AFTER_DRAW_UNSPECIFIED: _ClassVar[PlayAfterDraw]
    PLAY_AFTER_DRAW_DRAWN_ONLY: _ClassVar[PlayAfterDraw]
    PLAY_AFTER_DRAW_ANY_LEGAL: _ClassVar[PlayAfterDraw]

class CallRule(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CALL_RULE_UNSPECIFIED: _ClassVar[CallRule]
    CALL_RULE_NONE: _ClassVar[CallRule]
    CALL_RULE_LAST_CARDS: _ClassVar[CallRule]
    CALL_RULE_ANNOUNCE: _ClassVar[CallRule]
    CALL_RULE_ROMANIAN: _ClassVar[CallRule]

class Scoring(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORING_UNSPECIFIED: _ClassVar[Scoring]
    SCORING_PENALTY: _ClassVar[Scoring]
    SCORING_POSITIVE: _ClassVar[Scoring]

class TieBreak(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TIE_BREAK_UNSPECIFIED: _ClassVar[TieBreak]
    TIE_BREAK_SHARE: _ClassVar[TieBreak]
    TIE_BREAK_ROUNDS_WON_THEN_SHARE: _ClassVar[TieBreak]

class GiveUpPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GIVE_UP_POLICY_UNSPECIFIED: _ClassVar[GiveUpPolicy]
    GIVE_UP_POLICY_BOT: _ClassVar[GiveUpPolicy]
    GIVE_UP_POLICY_FORFEIT: _ClassVar[GiveUpPolicy]
    GIVE_UP_POLICY_BOT_UNTIL_BACK: _ClassVar[GiveUpPolicy]
PROFILE_UNSPECIFIED: Profile
PROFILE_CLASSIC: Profile
PROFILE_PENALTY_POINTS: Profile
PROFILE_BRAZILIAN: Profile
PROFILE_ROMANIAN_32: Profile
CALLS_MODE_UNSPECIFIED: CallsMode
CALLS_MODE_CHALLENGE: CallsMode
CALLS_MODE_ENFORCE: CallsMode
CALLS_MODE_OFF: CallsMode
DECK_SIZE_UNSPECIFIED: DeckSize
DECK_SIZE_52: DeckSize
DECK_SIZE_32: DeckSize
CARD_EFFECT_UNSPECIFIED: CardEffect
CARD_EFFECT_NONE: CardEffect
CARD_EFFECT_DRAW_TWO: CardEffect
CARD_EFFECT_SKIP: CardEffect
CARD_EFFECT_REVERSE: CardEffect
CARD_EFFECT_WILD: CardEffect
CARD_EFFECT_PREV_DRAW_ONE: CardEffect
UP_CARD_MODE_UNSPECIFIED: UpCardMode
UP_CARD_MODE_AS_PLAY_BY_DEALER: UpCardMode
UP_CARD_MODE_AS_PLAY_BY_FIRST: UpCardMode
UP_CARD_MODE_NO_EFFECT: UpCardMode
PLAY_AFTER_DRAW_UNSPECIFIED: PlayAfterDraw
PLAY_AFTER_DRAW_DRAWN_ONLY: PlayAfterDraw
PLAY_AFTER_DRAW_ANY_LEGAL: PlayAfterDraw
CALL_RULE_UNSPECIFIED: CallRule
CALL_RULE_NONE: CallRule
CALL_RULE_LAST_CARDS: CallRule
CALL_RULE_ANNOUNCE: CallRule
CALL_RULE_ROMANIAN: CallRule
SCORING_UNSPECIFIED: Scoring
SCORING_PENALTY: Scoring
SCORING_POSITIVE: Scoring
TIE_BREAK_UNSPECIFIED: TieBreak
TIE_BREAK_SHARE: TieBreak
TIE_BREAK_ROUNDS_WON_THEN_SHARE: TieBreak
GIVE_UP_POLICY_UNSPECIFIED: GiveUpPolicy
GIVE_UP_POLICY_BOT: GiveUpPolicy
GIVE_UP_POLICY_FORFEIT: GiveUpPolicy
GIVE_UP_POLICY_BOT_UNTIL_BACK: GiveUpPolicy

class ProfileOptions(_message.Message):
    __slots__ = ("single_round", "deck", "nine_reverses", "ace_skips", "no_mau_penalty", "limit", "jack_wild_on_paid_seven")
    SINGLE_ROUND_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    NINE_REVERSES_FIELD_NUMBER: _ClassVar[int]
    ACE_SKIPS_FIELD_NUMBER: _ClassVar[int]
    NO_MAU_PENALTY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    JACK_WILD_ON_PAID_SEVEN_FIELD_NUMBER: _ClassVar[int]
    single_round: bool
    deck: DeckSize
    nine_reverses: bool
    ace_skips: bool
    no_mau_penalty: bool
    limit: int
    jack_wild_on_paid_seven: bool
    def __init__(self, single_round: _Optional[bool] = ..., deck: _Optional[_Union[DeckSize, str]] = ..., nine_reverses: _Optional[bool] = ..., ace_skips: _Optional[bool] = ..., no_mau_penalty: _Optional[bool] = ..., limit: _Optional[int] = ..., jack_wild_on_paid_seven: _Optional[bool] = ...) -> None: ...

class MatchConfig(_message.Message):
    __slots__ = ("profile", "options", "seats", "calls", "max_turns_per_round", "max_rounds")
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    MAX_TURNS_PER_ROUND_FIELD_NUMBER: _ClassVar[int]
    MAX_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    profile: Profile
    options: ProfileOptions
    seats: int
    calls: CallsMode
    max_turns_per_round: int
    max_rounds: int
    def __init__(self, profile: _Optional[_Union[Profile, str]] = ..., options: _Optional[_Union[ProfileOptions, _Mapping]] = ..., seats: _Optional[int] = ..., calls: _Optional[_Union[CallsMode, str]] = ..., max_turns_per_round: _Optional[int] = ..., max_rounds: _Optional[int] = ...) -> None: ...

class RankRule(_message.Message):
    __slots__ = ("rank", "in_deck", "effect", "value")
    RANK_FIELD_NUMBER: _ClassVar[int]
    IN_DECK_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    rank: _cards_pb2.Rank
    in_deck: bool
    effect: CardEffect
    value: int
    def __init__(self, rank: _Optional[_Union[_cards_pb2.Rank, str]] = ..., in_deck: _Optional[bool] = ..., effect: _Optional[_Union[CardEffect, str]] = ..., value: _Optional[int] = ...) -> None: ...

class Rules(_message.Message):
    __slots__ = ("profile", "seats", "min_seats", "max_seats", "deck_size", "copies", "hand_size", "up_card", "ranks", "jack_wild_on_paid_seven", "voluntary_draw", "play_after_draw", "penalty_draw_ends_own_turn", "penalty_cards_playable", "call_rule", "calls", "challenges", "omission_penalty", "false_call_penalty", "false_accusation_penalty", "late_cure", "scoring", "target", "tie_break", "max_turns_per_round", "max_rounds")
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    MIN_SEATS_FIELD_NUMBER: _ClassVar[int]
    MAX_SEATS_FIELD_NUMBER: _ClassVar[int]
    DECK_SIZE_FIELD_NUMBER: _ClassVar[int]
    COPIES_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    UP_CARD_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    JACK_WILD_ON_PAID_SEVEN_FIELD_NUMBER: _ClassVar[int]
    VOLUNTARY_DRAW_FIELD_NUMBER: _ClassVar[int]
    PLAY_AFTER_DRAW_FIELD_NUMBER: _ClassVar[int]
    PENALTY_DRAW_ENDS_OWN_TURN_FIELD_NUMBER: _ClassVar[int]
    PENALTY_CARDS_PLAYABLE_FIELD_NUMBER: _ClassVar[int]
    CALL_RULE_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    CHALLENGES_FIELD_NUMBER: _ClassVar[int]
    OMISSION_PENALTY_FIELD_NUMBER: _ClassVar[int]
    FALSE_CALL_PENALTY_FIELD_NUMBER: _ClassVar[int]
    FALSE_ACCUSATION_PENALTY_FIELD_NUMBER: _ClassVar[int]
    LATE_CURE_FIELD_NUMBER: _ClassVar[int]
    SCORING_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    TIE_BREAK_FIELD_NUMBER: _ClassVar[int]
    MAX_TURNS_PER_ROUND_FIELD_NUMBER: _ClassVar[int]
    MAX_ROUNDS_FIELD_NUMBER: _ClassVar[int]
    profile: Profile
    seats: int
    min_seats: int
    max_seats: int
    deck_size: int
    copies: int
    hand_size: int
    up_card: UpCardMode
    ranks: _containers.RepeatedCompositeFieldContainer[RankRule]
    jack_wild_on_paid_seven: bool
    voluntary_draw: bool
    play_after_draw: PlayAfterDraw
    penalty_draw_ends_own_turn: bool
    penalty_cards_playable: bool
    call_rule: CallRule
    calls: CallsMode
    challenges: bool
    omission_penalty: int
    false_call_penalty: int
    false_accusation_penalty: int
    late_cure: bool
    scoring: Scoring
    target: int
    tie_break: TieBreak
    max_turns_per_round: int
    max_rounds: int
    def __init__(self, profile: _Optional[_Union[Profile, str]] = ..., seats: _Optional[int] = ..., min_seats: _Optional[int] = ..., max_seats: _Optional[int] = ..., deck_size: _Optional[int] = ..., copies: _Optional[int] = ..., hand_size: _Optional[int] = ..., up_card: _Optional[_Union[UpCardMode, str]] = ..., ranks: _Optional[_Iterable[_Union[RankRule, _Mapping]]] = ..., jack_wild_on_paid_seven: _Optional[bool] = ..., voluntary_draw: _Optional[bool] = ..., play_after_draw: _Optional[_Union[PlayAfterDraw, str]] = ..., penalty_draw_ends_own_turn: _Optional[bool] = ..., penalty_cards_playable: _Optional[bool] = ..., call_rule: _Optional[_Union[CallRule, str]] = ..., calls: _Optional[_Union[CallsMode, str]] = ..., challenges: _Optional[bool] = ..., omission_penalty: _Optional[int] = ..., false_call_penalty: _Optional[int] = ..., false_accusation_penalty: _Optional[int] = ..., late_cure: _Optional[bool] = ..., scoring: _Optional[_Union[Scoring, str]] = ..., target: _Optional[int] = ..., tie_break: _Optional[_Union[TieBreak, str]] = ..., max_turns_per_round: _Optional[int] = ..., max_rounds: _Optional[int] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("decision_ms", "bank_ms", "max_timeouts", "disconnect_grace_ms", "give_up", "untimed")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    DISCONNECT_GRACE_MS_FIELD_NUMBER: _ClassVar[int]
    GIVE_UP_FIELD_NUMBER: _ClassVar[int]
    UNTIMED_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    bank_ms: int
    max_timeouts: int
    disconnect_grace_ms: int
    give_up: GiveUpPolicy
    untimed: bool
    def __init__(self, decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., max_timeouts: _Optional[int] = ..., disconnect_grace_ms: _Optional[int] = ..., give_up: _Optional[_Union[GiveUpPolicy, str]] = ..., untimed: _Optional[bool] = ...) -> None: ...
