from . import cards_pb2 as _cards_pb2
from . import errors_pb2 as _errors_pb2
from . import events_pb2 as _events_pb2
from . import game_pb2 as _game_pb2
from . import rules_pb2 as _rules_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BotKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BOT_KIND_UNSPECIFIED: _ClassVar[BotKind]
    BOT_KIND_RANDOM: _ClassVar[BotKind]
    BOT_KIND_HEURISTIC: _ClassVar[BotKind]
    BOT_KIND_SEARCH: _ClassVar[BotKind]

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_WAITING: _ClassVar[MatchStatus]
    MATCH_STATUS_RUNNING: _ClassVar[MatchStatus]
    MATCH_STATUS_FINISHED: _ClassVar[MatchStatus]
    MATCH_STATUS_ABORTED: _ClassVar[MatchStatus]
BOT_KIND_UNSPECIFIED: BotKind
BOT_KIND_RANDOM: BotKind
BOT_KIND_HEURISTIC: BotKind
BOT_KIND_SEARCH: BotKind
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_WAITING: MatchStatus
MATCH_STATUS_RUNNING: MatchStatus
MATCH_STATUS_FINISHED: MatchStatus
MATCH_STATUS_ABORTED: MatchStatus

class PlayerInfo(_message.Message):
    __slots__ = ("seat", "name", "bot", "connected")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    CONNECTED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    bot: BotKind
    connected: bool
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., bot: _Optional[_Union[BotKind, str]] = ..., connected: _Optional[bool] = ...) -> None: ...

class DeckOrder(_message.Message):
    __slots__ = ("dealer", "cards")
    DEALER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    dealer: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    def __init__(self, dealer: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ...) -> None: ...

class SeatStats(_message.Message):
    __slots__ = ("seat", "decisions", "timeouts", "rejections", "decision_ms_p50", "decision_ms_p90", "decision_ms_p99", "decision_ms_max", "bank_left_ms", "gave_up", "forfeited", "protocol_errors", "resigned")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    REJECTIONS_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_P50_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_P90_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_P99_FIELD_NUMBER: _ClassVar[int]
    DECISION_MS_MAX_FIELD_NUMBER: _ClassVar[int]
    BANK_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    GAVE_UP_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_ERRORS_FIELD_NUMBER: _ClassVar[int]
    RESIGNED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    decisions: int
    timeouts: int
    rejections: int
    decision_ms_p50: int
    decision_ms_p90: int
    decision_ms_p99: int
    decision_ms_max: int
    bank_left_ms: int
    gave_up: bool
    forfeited: bool
    protocol_errors: int
    resigned: bool
    def __init__(self, seat: _Optional[int] = ..., decisions: _Optional[int] = ..., timeouts: _Optional[int] = ..., rejections: _Optional[int] = ..., decision_ms_p50: _Optional[int] = ..., decision_ms_p90: _Optional[int] = ..., decision_ms_p99: _Optional[int] = ..., decision_ms_max: _Optional[int] = ..., bank_left_ms: _Optional[int] = ..., gave_up: _Optional[bool] = ..., forfeited: _Optional[bool] = ..., protocol_errors: _Optional[int] = ..., resigned: _Optional[bool] = ...) -> None: ...

class MatchReport(_message.Message):
    __slots__ = ("match_id", "status", "result", "rounds", "seats", "seed", "seed_commitment", "actions", "players", "seed_salt", "sealed")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEED_SALT_FIELD_NUMBER: _ClassVar[int]
    SEALED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    status: MatchStatus
    result: _events_pb2.MatchResult
    rounds: _containers.RepeatedCompositeFieldContainer[_events_pb2.RoundResult]
    seats: _containers.RepeatedCompositeFieldContainer[SeatStats]
    seed: int
    seed_commitment: bytes
    actions: int
    players: _containers.RepeatedCompositeFieldContainer[PlayerInfo]
    seed_salt: bytes
    sealed: bool
    def __init__(self, match_id: _Optional[str] = ..., status: _Optional[_Union[MatchStatus, str]] = ..., result: _Optional[_Union[_events_pb2.MatchResult, _Mapping]] = ..., rounds: _Optional[_Iterable[_Union[_events_pb2.RoundResult, _Mapping]]] = ..., seats: _Optional[_Iterable[_Union[SeatStats, _Mapping]]] = ..., seed: _Optional[int] = ..., seed_commitment: _Optional[bytes] = ..., actions: _Optional[int] = ..., players: _Optional[_Iterable[_Union[PlayerInfo, _Mapping]]] = ..., seed_salt: _Optional[bytes] = ..., sealed: _Optional[bool] = ...) -> None: ...

class ReplayAction(_message.Message):
    __slots__ = ("seat", "action", "index", "think_ms", "timeout")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    THINK_MS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    action: _game_pb2.Action
    index: int
    think_ms: int
    timeout: bool
    def __init__(self, seat: _Optional[int] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ..., index: _Optional[int] = ..., think_ms: _Optional[int] = ..., timeout: _Optional[bool] = ...) -> None: ...

class ReplayRejection(_message.Message):
    __slots__ = ("seat", "step", "reason", "message", "action")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    seat: int
    step: int
    reason: _errors_pb2.ErrorReason
    message: str
    action: _game_pb2.Action
    def __init__(self, seat: _Optional[int] = ..., step: _Optional[int] = ..., reason: _Optional[_Union[_errors_pb2.ErrorReason, str]] = ..., message: _Optional[str] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ...) -> None: ...

class Replay(_message.Message):
    __slots__ = ("format", "match_id", "config", "seed", "deck_order", "position", "actions", "players", "time_control", "result", "seed_salt", "seed_commitment", "rejections")
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DECK_ORDER_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    SEED_SALT_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    REJECTIONS_FIELD_NUMBER: _ClassVar[int]
    format: int
    match_id: str
    config: _rules_pb2.MatchConfig
    seed: int
    deck_order: DeckOrder
    position: str
    actions: _containers.RepeatedCompositeFieldContainer[ReplayAction]
    players: _containers.RepeatedCompositeFieldContainer[PlayerInfo]
    time_control: _rules_pb2.TimeControl
    result: _events_pb2.MatchResult
    seed_salt: bytes
    seed_commitment: bytes
    rejections: _containers.RepeatedCompositeFieldContainer[ReplayRejection]
    def __init__(self, format: _Optional[int] = ..., match_id: _Optional[str] = ..., config: _Optional[_Union[_rules_pb2.MatchConfig, _Mapping]] = ..., seed: _Optional[int] = ..., deck_order: _Optional[_Union[DeckOrder, _Mapping]] = ..., position: _Optional[str] = ..., actions: _Optional[_Iterable[_Union[ReplayAction, _Mapping]]] = ..., players: _Optional[_Iterable[_Union[PlayerInfo, _Mapping]]] = ..., time_control: _Optional[_Union[_rules_pb2.TimeControl, _Mapping]] = ..., result: _Optional[_Union[_events_pb2.MatchResult, _Mapping]] = ..., seed_salt: _Optional[bytes] = ..., seed_commitment: _Optional[bytes] = ..., rejections: _Optional[_Iterable[_Union[ReplayRejection, _Mapping]]] = ...) -> None: ...

class StoredMatch(_message.Message):
    __slots__ = ("report", "replay", "created_unix_ms", "ended_unix_ms", "label", "rated", "replay_pruned", "sealed")
    REPORT_FIELD_NUMBER: _ClassVar[int]
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    ENDED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    REPLAY_PRUNED_FIELD_NUMBER: _ClassVar[int]
    SEALED_FIELD_NUMBER: _ClassVar[int]
    report: MatchReport
    replay: Replay
    created_unix_ms: int
    ended_unix_ms: int
    label: str
    rated: bool
    replay_pruned: bool
    sealed: bool
    def __init__(self, report: _Optional[_Union[MatchReport, _Mapping]] = ..., replay: _Optional[_Union[Replay, _Mapping]] = ..., created_unix_ms: _Optional[int] = ..., ended_unix_ms: _Optional[int] = ..., label: _Optional[str] = ..., rated: _Optional[bool] = ..., replay_pruned: _Optional[bool] = ..., sealed: _Optional[bool] = ...) -> None: ...
