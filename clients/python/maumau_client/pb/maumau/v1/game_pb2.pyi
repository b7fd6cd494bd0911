from . import cards_pb2 as _cards_pb2
from . import rules_pb2 as _rules_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_START: _ClassVar[Phase]
    PHASE_AFTER_DRAW: _ClassVar[Phase]
    PHASE_ANNOUNCED: _ClassVar[Phase]
    PHASE_AWAIT_SUIT: _ClassVar[Phase]
    PHASE_OVER: _ClassVar[Phase]

class OffenceKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OFFENCE_KIND_UNSPECIFIED: _ClassVar[OffenceKind]
    OFFENCE_KIND_OMISSION: _ClassVar[OffenceKind]
    OFFENCE_KIND_JACK_FINISH: _ClassVar[OffenceKind]
    OFFENCE_KIND_NO_ANNOUNCE: _ClassVar[OffenceKind]
PHASE_UNSPECIFIED: Phase
PHASE_START: Phase
PHASE_AFTER_DRAW: Phase
PHASE_ANNOUNCED: Phase
PHASE_AWAIT_SUIT: Phase
PHASE_OVER: Phase
OFFENCE_KIND_UNSPECIFIED: OffenceKind
OFFENCE_KIND_OMISSION: OffenceKind
OFFENCE_KIND_JACK_FINISH: OffenceKind
OFFENCE_KIND_NO_ANNOUNCE: OffenceKind

class PlayAction(_message.Message):
    __slots__ = ("card", "suit", "call")
    CARD_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    card: _cards_pb2.Card
    suit: _cards_pb2.Suit
    call: _cards_pb2.Call
    def __init__(self, card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., suit: _Optional[_Union[_cards_pb2.Suit, str]] = ..., call: _Optional[_Union[_cards_pb2.Call, str]] = ...) -> None: ...

class DrawAction(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class PassAction(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DeclareSuitAction(_message.Message):
    __slots__ = ("suit",)
    SUIT_FIELD_NUMBER: _ClassVar[int]
    suit: _cards_pb2.Suit
    def __init__(self, suit: _Optional[_Union[_cards_pb2.Suit, str]] = ...) -> None: ...

class AnnounceAction(_message.Message):
    __slots__ = ("call",)
    CALL_FIELD_NUMBER: _ClassVar[int]
    call: _cards_pb2.Call
    def __init__(self, call: _Optional[_Union[_cards_pb2.Call, str]] = ...) -> None: ...

class ChallengeAction(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Action(_message.Message):
    __slots__ = ("play", "draw", "pass_turn", "declare_suit", "announce", "challenge")
    PLAY_FIELD_NUMBER: _ClassVar[int]
    DRAW_FIELD_NUMBER: _ClassVar[int]
    PASS_TURN_FIELD_NUMBER: _ClassVar[int]
    DECLARE_SUIT_FIELD_NUMBER: _ClassVar[int]
    ANNOUNCE_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_FIELD_NUMBER: _ClassVar[int]
    play: PlayAction
    draw: DrawAction
    pass_turn: PassAction
    declare_suit: DeclareSuitAction
    announce: AnnounceAction
    challenge: ChallengeAction
    def __init__(self, play: _Optional[_Union[PlayAction, _Mapping]] = ..., draw: _Optional[_Union[DrawAction, _Mapping]] = ..., pass_turn: _Optional[_Union[PassAction, _Mapping]] = ..., declare_suit: _Optional[_Union[DeclareSuitAction, _Mapping]] = ..., announce: _Optional[_Union[AnnounceAction, _Mapping]] = ..., challenge: _Optional[_Union[ChallengeAction, _Mapping]] = ...) -> None: ...

class LegalAction(_message.Message):
    __slots__ = ("index", "action", "opens_offence")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    OPENS_OFFENCE_FIELD_NUMBER: _ClassVar[int]
    index: int
    action: Action
    opens_offence: OffenceKind
    def __init__(self, index: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., opens_offence: _Optional[_Union[OffenceKind, str]] = ...) -> None: ...

class Offence(_message.Message):
    __slots__ = ("offender", "kind")
    OFFENDER_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    offender: int
    kind: OffenceKind
    def __init__(self, offender: _Optional[int] = ..., kind: _Optional[_Union[OffenceKind, str]] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "config", "round", "dealer", "phase", "to_act", "clockwise", "hand", "hand_sizes", "discard", "top", "named_suit", "debt", "stock_size", "offence", "pending_out", "last_calls", "just_accused", "drawn_card", "penalty_cards", "turns", "totals", "rounds_won")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    CLOCKWISE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    TOP_FIELD_NUMBER: _ClassVar[int]
    NAMED_SUIT_FIELD_NUMBER: _ClassVar[int]
    DEBT_FIELD_NUMBER: _ClassVar[int]
    STOCK_SIZE_FIELD_NUMBER: _ClassVar[int]
    OFFENCE_FIELD_NUMBER: _ClassVar[int]
    PENDING_OUT_FIELD_NUMBER: _ClassVar[int]
    LAST_CALLS_FIELD_NUMBER: _ClassVar[int]
    JUST_ACCUSED_FIELD_NUMBER: _ClassVar[int]
    DRAWN_CARD_FIELD_NUMBER: _ClassVar[int]
    PENALTY_CARDS_FIELD_NUMBER: _ClassVar[int]
    TURNS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_WON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    config: _rules_pb2.MatchConfig
    round: int
    dealer: int
    phase: Phase
    to_act: int
    clockwise: bool
    hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    discard: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    top: _cards_pb2.Card
    named_suit: _cards_pb2.Suit
    debt: int
    stock_size: int
    offence: Offence
    pending_out: int
    last_calls: _containers.RepeatedScalarFieldContainer[_cards_pb2.Call]
    just_accused: bool
    drawn_card: _cards_pb2.Card
    penalty_cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    turns: int
    totals: _containers.RepeatedScalarFieldContainer[int]
    rounds_won: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., config: _Optional[_Union[_rules_pb2.MatchConfig, _Mapping]] = ..., round: _Optional[int] = ..., dealer: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., to_act: _Optional[int] = ..., clockwise: _Optional[bool] = ..., hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., discard: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., top: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., named_suit: _Optional[_Union[_cards_pb2.Suit, str]] = ..., debt: _Optional[int] = ..., stock_size: _Optional[int] = ..., offence: _Optional[_Union[Offence, _Mapping]] = ..., pending_out: _Optional[int] = ..., last_calls: _Optional[_Iterable[_Union[_cards_pb2.Call, str]]] = ..., just_accused: _Optional[bool] = ..., drawn_card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., penalty_cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., turns: _Optional[int] = ..., totals: _Optional[_Iterable[int]] = ..., rounds_won: _Optional[_Iterable[int]] = ...) -> None: ...
