from . import errors_pb2 as _errors_pb2
from . import events_pb2 as _events_pb2
from . import record_pb2 as _record_pb2
from . import rules_pb2 as _rules_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SeatBot(_message.Message):
    __slots__ = ("seat", "kind")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: _record_pb2.BotKind
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[_Union[_record_pb2.BotKind, str]] = ...) -> None: ...

class CreateMatchRequest(_message.Message):
    __slots__ = ("config", "seed", "deck_order", "position", "time_control", "bots", "rated", "label", "join_timeout_ms", "sealed")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    DECK_ORDER_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    JOIN_TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    SEALED_FIELD_NUMBER: _ClassVar[int]
    config: _rules_pb2.MatchConfig
    seed: int
    deck_order: _record_pb2.DeckOrder
    position: str
    time_control: _rules_pb2.TimeControl
    bots: _containers.RepeatedCompositeFieldContainer[SeatBot]
    rated: bool
    label: str
    join_timeout_ms: int
    sealed: bool
    def __init__(self, config: _Optional[_Union[_rules_pb2.MatchConfig, _Mapping]] = ..., seed: _Optional[int] = ..., deck_order: _Optional[_Union[_record_pb2.DeckOrder, _Mapping]] = ..., position: _Optional[str] = ..., time_control: _Optional[_Union[_rules_pb2.TimeControl, _Mapping]] = ..., bots: _Optional[_Iterable[_Union[SeatBot, _Mapping]]] = ..., rated: _Optional[bool] = ..., label: _Optional[str] = ..., join_timeout_ms: _Optional[int] = ..., sealed: _Optional[bool] = ...) -> None: ...

class CreatePublicMatchRequest(_message.Message):
    __slots__ = ("config", "bots", "time_control")
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    BOTS_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    config: _rules_pb2.MatchConfig
    bots: _containers.RepeatedCompositeFieldContainer[SeatBot]
    time_control: _rules_pb2.TimeControl
    def __init__(self, config: _Optional[_Union[_rules_pb2.MatchConfig, _Mapping]] = ..., bots: _Optional[_Iterable[_Union[SeatBot, _Mapping]]] = ..., time_control: _Optional[_Union[_rules_pb2.TimeControl, _Mapping]] = ...) -> None: ...

class SeatToken(_message.Message):
    __slots__ = ("seat", "token")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    token: str
    def __init__(self, seat: _Optional[int] = ..., token: _Optional[str] = ...) -> None: ...

class CreateMatchResponse(_message.Message):
    __slots__ = ("match_id", "seat_tokens", "spectator_token", "seed_commitment")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    SPECTATOR_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat_tokens: _containers.RepeatedCompositeFieldContainer[SeatToken]
    spectator_token: str
    seed_commitment: bytes
    def __init__(self, match_id: _Optional[str] = ..., seat_tokens: _Optional[_Iterable[_Union[SeatToken, _Mapping]]] = ..., spectator_token: _Optional[str] = ..., seed_commitment: _Optional[bytes] = ...) -> None: ...

class AbortMatchRequest(_message.Message):
    __slots__ = ("match_id", "reason")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    reason: str
    def __init__(self, match_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class AbortMatchResponse(_message.Message):
    __slots__ = ("status",)
    STATUS_FIELD_NUMBER: _ClassVar[int]
    status: _record_pb2.MatchStatus
    def __init__(self, status: _Optional[_Union[_record_pb2.MatchStatus, str]] = ...) -> None: ...

class RevealMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class RevealMatchResponse(_message.Message):
    __slots__ = ("was_sealed",)
    WAS_SEALED_FIELD_NUMBER: _ClassVar[int]
    was_sealed: bool
    def __init__(self, was_sealed: _Optional[bool] = ...) -> None: ...

class MatchSummary(_message.Message):
    __slots__ = ("match_id", "status", "config", "time_control", "rated", "label", "players", "created_unix_ms", "ended_unix_ms", "round", "actions", "totals", "seed_commitment", "result", "replay_pruned")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    ENDED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    REPLAY_PRUNED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    status: _record_pb2.MatchStatus
    config: _rules_pb2.MatchConfig
    time_control: _rules_pb2.TimeControl
    rated: bool
    label: str
    players: _containers.RepeatedCompositeFieldContainer[_record_pb2.PlayerInfo]
    created_unix_ms: int
    ended_unix_ms: int
    round: int
    actions: int
    totals: _containers.RepeatedScalarFieldContainer[int]
    seed_commitment: bytes
    result: _events_pb2.MatchResult
    replay_pruned: bool
    def __init__(self, match_id: _Optional[str] = ..., status: _Optional[_Union[_record_pb2.MatchStatus, str]] = ..., config: _Optional[_Union[_rules_pb2.MatchConfig, _Mapping]] = ..., time_control: _Optional[_Union[_rules_pb2.TimeControl, _Mapping]] = ..., rated: _Optional[bool] = ..., label: _Optional[str] = ..., players: _Optional[_Iterable[_Union[_record_pb2.PlayerInfo, _Mapping]]] = ..., created_unix_ms: _Optional[int] = ..., ended_unix_ms: _Optional[int] = ..., round: _Optional[int] = ..., actions: _Optional[int] = ..., totals: _Optional[_Iterable[int]] = ..., seed_commitment: _Optional[bytes] = ..., result: _Optional[_Union[_events_pb2.MatchResult, _Mapping]] = ..., replay_pruned: _Optional[bool] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ("status", "page_size", "page_token")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    status: _record_pb2.MatchStatus
    page_size: int
    page_token: str
    def __init__(self, status: _Optional[_Union[_record_pb2.MatchStatus, str]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches", "next_page_token")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchSummary]
    next_page_token: str
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetMatchResponse(_message.Message):
    __slots__ = ("match",)
    MATCH_FIELD_NUMBER: _ClassVar[int]
    match: MatchSummary
    def __init__(self, match: _Optional[_Union[MatchSummary, _Mapping]] = ...) -> None: ...

class GetResultRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetResultResponse(_message.Message):
    __slots__ = ("report",)
    REPORT_FIELD_NUMBER: _ClassVar[int]
    report: _record_pb2.MatchReport
    def __init__(self, report: _Optional[_Union[_record_pb2.MatchReport, _Mapping]] = ...) -> None: ...

class GetReplayRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetReplayResponse(_message.Message):
    __slots__ = ("replay",)
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    replay: _record_pb2.Replay
    def __init__(self, replay: _Optional[_Union[_record_pb2.Replay, _Mapping]] = ...) -> None: ...

class VerifyReplayRequest(_message.Message):
    __slots__ = ("replay",)
    REPLAY_FIELD_NUMBER: _ClassVar[int]
    replay: _record_pb2.Replay
    def __init__(self, replay: _Optional[_Union[_record_pb2.Replay, _Mapping]] = ...) -> None: ...

class VerifyReplayResponse(_message.Message):
    __slots__ = ("valid", "result", "rounds", "actions_applied", "failed_action", "error", "finished")
    VALID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_APPLIED_FIELD_NUMBER: _ClassVar[int]
    FAILED_ACTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    valid: bool
    result: _events_pb2.MatchResult
    rounds: _containers.RepeatedCompositeFieldContainer[_events_pb2.RoundResult]
    actions_applied: int
    failed_action: int
    error: _errors_pb2.ErrorDetail
    finished: bool
    def __init__(self, valid: _Optional[bool] = ..., result: _Optional[_Union[_events_pb2.MatchResult, _Mapping]] = ..., rounds: _Optional[_Iterable[_Union[_events_pb2.RoundResult, _Mapping]]] = ..., actions_applied: _Optional[int] = ..., failed_action: _Optional[int] = ..., error: _Optional[_Union[_errors_pb2.ErrorDetail, _Mapping]] = ..., finished: _Optional[bool] = ...) -> None: ...
