from . import cards_pb2 as _cards_pb2
from . import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DrawCause(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DRAW_CAUSE_UNSPECIFIED: _ClassVar[DrawCause]
    DRAW_CAUSE_DEAL: _ClassVar[DrawCause]
    DRAW_CAUSE_TURN: _ClassVar[DrawCause]
    DRAW_CAUSE_DEBT: _ClassVar[DrawCause]
    DRAW_CAUSE_OMISSION: _ClassVar[DrawCause]
    DRAW_CAUSE_FALSE_CALL: _ClassVar[DrawCause]
    DRAW_CAUSE_FALSE_ACCUSATION: _ClassVar[DrawCause]
    DRAW_CAUSE_PREV_DRAW_ONE: _ClassVar[DrawCause]

class ChallengeResult(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHALLENGE_RESULT_UNSPECIFIED: _ClassVar[ChallengeResult]
    CHALLENGE_RESULT_CAUGHT: _ClassVar[ChallengeResult]
    CHALLENGE_RESULT_FALSE: _ClassVar[ChallengeResult]

class RoundEndKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ROUND_END_KIND_UNSPECIFIED: _ClassVar[RoundEndKind]
    ROUND_END_KIND_OUT: _ClassVar[RoundEndKind]
    ROUND_END_KIND_BLOCKED: _ClassVar[RoundEndKind]
DRAW_CAUSE_UNSPECIFIED: DrawCause
DRAW_CAUSE_DEAL: DrawCause
DRAW_CAUSE_TURN: DrawCause
DRAW_CAUSE_DEBT: DrawCause
DRAW_CAUSE_OMISSION: DrawCause
DRAW_CAUSE_FALSE_CALL: DrawCause
DRAW_CAUSE_FALSE_ACCUSATION: DrawCause
DRAW_CAUSE_PREV_DRAW_ONE: DrawCause
CHALLENGE_RESULT_UNSPECIFIED: ChallengeResult
CHALLENGE_RESULT_CAUGHT: ChallengeResult
CHALLENGE_RESULT_FALSE: ChallengeResult
ROUND_END_KIND_UNSPECIFIED: RoundEndKind
ROUND_END_KIND_OUT: RoundEndKind
ROUND_END_KIND_BLOCKED: RoundEndKind

class RoundStarted(_message.Message):
    __slots__ = ("round", "dealer")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    round: int
    dealer: int
    def __init__(self, round: _Optional[int] = ..., dealer: _Optional[int] = ...) -> None: ...

class CardDrawn(_message.Message):
    __slots__ = ("seat", "card", "cause")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    CAUSE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: _cards_pb2.Card
    cause: DrawCause
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., cause: _Optional[_Union[DrawCause, str]] = ...) -> None: ...

class UpCardTurned(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: _cards_pb2.Card
    def __init__(self, card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ...) -> None: ...

class StockRebuilt(_message.Message):
    __slots__ = ("size",)
    SIZE_FIELD_NUMBER: _ClassVar[int]
    size: int
    def __init__(self, size: _Optional[int] = ...) -> None: ...

class TurnStarted(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class CardPlayed(_message.Message):
    __slots__ = ("seat", "card", "suit", "call")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: _cards_pb2.Card
    suit: _cards_pb2.Suit
    call: _cards_pb2.Call
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., suit: _Optional[_Union[_cards_pb2.Suit, str]] = ..., call: _Optional[_Union[_cards_pb2.Call, str]] = ...) -> None: ...

class SuitDeclared(_message.Message):
    __slots__ = ("seat", "suit")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SUIT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    suit: _cards_pb2.Suit
    def __init__(self, seat: _Optional[int] = ..., suit: _Optional[_Union[_cards_pb2.Suit, str]] = ...) -> None: ...

class Passed(_message.Message):
    __slots__ = ("seat", "automatic")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    AUTOMATIC_FIELD_NUMBER: _ClassVar[int]
    seat: int
    automatic: bool
    def __init__(self, seat: _Optional[int] = ..., automatic: _Optional[bool] = ...) -> None: ...

class Skipped(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class DirectionChanged(_message.Message):
    __slots__ = ("clockwise",)
    CLOCKWISE_FIELD_NUMBER: _ClassVar[int]
    clockwise: bool
    def __init__(self, clockwise: _Optional[bool] = ...) -> None: ...

class Announced(_message.Message):
    __slots__ = ("seat", "call", "valid")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    VALID_FIELD_NUMBER: _ClassVar[int]
    seat: int
    call: _cards_pb2.Call
    valid: bool
    def __init__(self, seat: _Optional[int] = ..., call: _Optional[_Union[_cards_pb2.Call, str]] = ..., valid: _Optional[bool] = ...) -> None: ...

class OffenceOpened(_message.Message):
    __slots__ = ("seat", "kind")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: _game_pb2.OffenceKind
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[_Union[_game_pb2.OffenceKind, str]] = ...) -> None: ...

class OffenceExpired(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class OffenceCured(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Challenged(_message.Message):
    __slots__ = ("by", "result", "offender")
    BY_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    OFFENDER_FIELD_NUMBER: _ClassVar[int]
    by: int
    result: ChallengeResult
    offender: int
    def __init__(self, by: _Optional[int] = ..., result: _Optional[_Union[ChallengeResult, str]] = ..., offender: _Optional[int] = ...) -> None: ...

class OffencePenalised(_message.Message):
    __slots__ = ("seat", "kind")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: _game_pb2.OffenceKind
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[_Union[_game_pb2.OffenceKind, str]] = ...) -> None: ...

class PendingOut(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class RoundResult(_message.Message):
    __slots__ = ("round", "end", "winner", "points", "totals", "final_hands")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    FINAL_HANDS_FIELD_NUMBER: _ClassVar[int]
    round: int
    end: RoundEndKind
    winner: int
    points: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    final_hands: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Cards]
    def __init__(self, round: _Optional[int] = ..., end: _Optional[_Union[RoundEndKind, str]] = ..., winner: _Optional[int] = ..., points: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ..., final_hands: _Optional[_Iterable[_Union[_cards_pb2.Cards, _Mapping]]] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Event(_message.Message):
    __slots__ = ("round_started", "card_drawn", "up_card_turned", "stock_rebuilt", "turn_started", "card_played", "suit_declared", "passed", "skipped", "direction_changed", "announced", "offence_opened", "offence_expired", "offence_cured", "challenged", "offence_penalised", "pending_out", "round_ended", "match_ended")
    ROUND_STARTED_FIELD_NUMBER: _ClassVar[int]
    CARD_DRAWN_FIELD_NUMBER: _ClassVar[int]
    UP_CARD_TURNED_FIELD_NUMBER: _ClassVar[int]
    STOCK_REBUILT_FIELD_NUMBER: _ClassVar[int]
    TURN_STARTED_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    SUIT_DECLARED_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_CHANGED_FIELD_NUMBER: _ClassVar[int]
    ANNOUNCED_FIELD_NUMBER: _ClassVar[int]
    OFFENCE_OPENED_FIELD_NUMBER: _ClassVar[int]
    OFFENCE_EXPIRED_FIELD_NUMBER: _ClassVar[int]
    OFFENCE_CURED_FIELD_NUMBER: _ClassVar[int]
    CHALLENGED_FIELD_NUMBER: _ClassVar[int]
    OFFENCE_PENALISED_FIELD_NUMBER: _ClassVar[int]
    PENDING_OUT_FIELD_NUMBER: _ClassVar[int]
    ROUND_ENDED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    round_started: RoundStarted
    card_drawn: CardDrawn
    up_card_turned: UpCardTurned
    stock_rebuilt: StockRebuilt
    turn_started: TurnStarted
    card_played: CardPlayed
    suit_declared: SuitDeclared
    passed: Passed
    skipped: Skipped
    direction_changed: DirectionChanged
    announced: Announced
    offence_opened: OffenceOpened
    offence_expired: OffenceExpired
    offence_cured: OffenceCured
    challenged: Challenged
    offence_penalised: OffencePenalised
    pending_out: PendingOut
    round_ended: RoundResult
    match_ended: MatchEnded
    def __init__(self, round_started: _Optional[_Union[RoundStarted, _Mapping]] = ..., card_drawn: _Optional[_Union[CardDrawn, _Mapping]] = ..., up_card_turned: _Optional[_Union[UpCardTurned, _Mapping]] = ..., stock_rebuilt: _Optional[_Union[StockRebuilt, _Mapping]] = ..., turn_started: _Optional[_Union[TurnStarted, _Mapping]] = ..., card_played: _Optional[_Union[CardPlayed, _Mapping]] = ..., suit_declared: _Optional[_Union[SuitDeclared, _Mapping]] = ..., passed: _Optional[_Union[Passed, _Mapping]] = ..., skipped: _Optional[_Union[Skipped, _Mapping]] = ..., direction_changed: _Optional[_Union[DirectionChanged, _Mapping]] = ..., announced: _Optional[_Union[Announced, _Mapping]] = ..., offence_opened: _Optional[_Union[OffenceOpened, _Mapping]] = ..., offence_expired: _Optional[_Union[OffenceExpired, _Mapping]] = ..., offence_cured: _Optional[_Union[OffenceCured, _Mapping]] = ..., challenged: _Optional[_Union[Challenged, _Mapping]] = ..., offence_penalised: _Optional[_Union[OffencePenalised, _Mapping]] = ..., pending_out: _Optional[_Union[PendingOut, _Mapping]] = ..., round_ended: _Optional[_Union[RoundResult, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ...) -> None: ...

class SeatStanding(_message.Message):
    __slots__ = ("seat", "placing", "total", "rounds_won")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLACING_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_WON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    placing: int
    total: int
    rounds_won: int
    def __init__(self, seat: _Optional[int] = ..., placing: _Optional[int] = ..., total: _Optional[int] = ..., rounds_won: _Optional[int] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("seats", "rounds", "standings")
    SEATS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    seats: int
    rounds: int
    standings: _containers.RepeatedCompositeFieldContainer[SeatStanding]
    def __init__(self, seats: _Optional[int] = ..., rounds: _Optional[int] = ..., standings: _Optional[_Iterable[_Union[SeatStanding, _Mapping]]] = ...) -> None: ...
