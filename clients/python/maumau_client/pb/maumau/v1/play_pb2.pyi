from . import errors_pb2 as _errors_pb2
from . import events_pb2 as _events_pb2
from . import game_pb2 as _game_pb2
from . import record_pb2 as _record_pb2
from . import rules_pb2 as _rules_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EventDelivery(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EVENT_DELIVERY_UNSPECIFIED: _ClassVar[EventDelivery]
    EVENT_DELIVERY_AS_THEY_HAPPEN: _ClassVar[EventDelivery]
    EVENT_DELIVERY_WITH_PROMPT: _ClassVar[EventDelivery]
    EVENT_DELIVERY_PER_STEP: _ClassVar[EventDelivery]
EVENT_DELIVERY_UNSPECIFIED: EventDelivery
EVENT_DELIVERY_AS_THEY_HAPPEN: EventDelivery
EVENT_DELIVERY_WITH_PROMPT: EventDelivery
EVENT_DELIVERY_PER_STEP: EventDelivery

class PlayRequest(_message.Message):
    __slots__ = ("join", "resume", "action", "ping")
    JOIN_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    PING_FIELD_NUMBER: _ClassVar[int]
    join: Join
    resume: Resume
    action: ActionSubmission
    ping: Ping
    def __init__(self, join: _Optional[_Union[Join, _Mapping]] = ..., resume: _Optional[_Union[Resume, _Mapping]] = ..., action: _Optional[_Union[ActionSubmission, _Mapping]] = ..., ping: _Optional[_Union[Ping, _Mapping]] = ...) -> None: ...

class Join(_message.Message):
    __slots__ = ("token", "client_name", "resume", "event_delivery", "snapshot_every_step")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    CLIENT_NAME_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    EVENT_DELIVERY_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_EVERY_STEP_FIELD_NUMBER: _ClassVar[int]
    token: str
    client_name: str
    resume: Resume
    event_delivery: EventDelivery
    snapshot_every_step: bool
    def __init__(self, token: _Optional[str] = ..., client_name: _Optional[str] = ..., resume: _Optional[_Union[Resume, _Mapping]] = ..., event_delivery: _Optional[_Union[EventDelivery, str]] = ..., snapshot_every_step: _Optional[bool] = ...) -> None: ...

class Resume(_message.Message):
    __slots__ = ("last_event_number", "snapshot")
    LAST_EVENT_NUMBER_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    last_event_number: int
    snapshot: bool
    def __init__(self, last_event_number: _Optional[int] = ..., snapshot: _Optional[bool] = ...) -> None: ...

class ActionSubmission(_message.Message):
    __slots__ = ("state_id", "action", "action_index", "request_id")
    STATE_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ACTION_INDEX_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    state_id: int
    action: _game_pb2.Action
    action_index: int
    request_id: int
    def __init__(self, state_id: _Optional[int] = ..., action: _Optional[_Union[_game_pb2.Action, _Mapping]] = ..., action_index: _Optional[int] = ..., request_id: _Optional[int] = ...) -> None: ...

class Ping(_message.Message):
    __slots__ = ("nonce",)
    NONCE_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    def __init__(self, nonce: _Optional[int] = ...) -> None: ...

class ServerMessage(_message.Message):
    __slots__ = ("welcome", "snapshot", "event", "prompt", "accepted", "rejected", "finished", "pong", "batch", "heartbeat")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    PONG_FIELD_NUMBER: _ClassVar[int]
    BATCH_FIELD_NUMBER: _ClassVar[int]
    HEARTBEAT_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    snapshot: Snapshot
    event: NumberedEvent
    prompt: DecisionPrompt
    accepted: ActionAccepted
    rejected: ActionRejected
    finished: MatchFinished
    pong: Pong
    batch: EventBatch
    heartbeat: Heartbeat
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., snapshot: _Optional[_Union[Snapshot, _Mapping]] = ..., event: _Optional[_Union[NumberedEvent, _Mapping]] = ..., prompt: _Optional[_Union[DecisionPrompt, _Mapping]] = ..., accepted: _Optional[_Union[ActionAccepted, _Mapping]] = ..., rejected: _Optional[_Union[ActionRejected, _Mapping]] = ..., finished: _Optional[_Union[MatchFinished, _Mapping]] = ..., pong: _Optional[_Union[Pong, _Mapping]] = ..., batch: _Optional[_Union[EventBatch, _Mapping]] = ..., heartbeat: _Optional[_Union[Heartbeat, _Mapping]] = ...) -> None: ...

class Heartbeat(_message.Message):
    __slots__ = ("server_time_unix_ms",)
    SERVER_TIME_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    server_time_unix_ms: int
    def __init__(self, server_time_unix_ms: _Optional[int] = ...) -> None: ...

class EventBatch(_message.Message):
    __slots__ = ("events", "prompt", "accepted")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[NumberedEvent]
    prompt: DecisionPrompt
    accepted: _containers.RepeatedCompositeFieldContainer[ActionAccepted]
    def __init__(self, events: _Optional[_Iterable[_Union[NumberedEvent, _Mapping]]] = ..., prompt: _Optional[_Union[DecisionPrompt, _Mapping]] = ..., accepted: _Optional[_Iterable[_Union[ActionAccepted, _Mapping]]] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("match_id", "seat", "config", "rules", "time_control", "seed_commitment", "players", "rated", "status")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    SEED_COMMITMENT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    config: _rules_pb2.MatchConfig
    rules: _rules_pb2.Rules
    time_control: _rules_pb2.TimeControl
    seed_commitment: bytes
    players: _containers.RepeatedCompositeFieldContainer[_record_pb2.PlayerInfo]
    rated: bool
    status: _record_pb2.MatchStatus
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., config: _Optional[_Union[_rules_pb2.MatchConfig, _Mapping]] = ..., rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ..., time_control: _Optional[_Union[_rules_pb2.TimeControl, _Mapping]] = ..., seed_commitment: _Optional[bytes] = ..., players: _Optional[_Iterable[_Union[_record_pb2.PlayerInfo, _Mapping]]] = ..., rated: _Optional[bool] = ..., status: _Optional[_Union[_record_pb2.MatchStatus, str]] = ...) -> None: ...

class Snapshot(_message.Message):
    __slots__ = ("state_id", "last_event_number", "observation")
    STATE_ID_FIELD_NUMBER: _ClassVar[int]
    LAST_EVENT_NUMBER_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    state_id: int
    last_event_number: int
    observation: _game_pb2.Observation
    def __init__(self, state_id: _Optional[int] = ..., last_event_number: _Optional[int] = ..., observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ...) -> None: ...

class NumberedEvent(_message.Message):
    __slots__ = ("number", "event")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    EVENT_FIELD_NUMBER: _ClassVar[int]
    number: int
    event: _events_pb2.Event
    def __init__(self, number: _Optional[int] = ..., event: _Optional[_Union[_events_pb2.Event, _Mapping]] = ...) -> None: ...

class DecisionPrompt(_message.Message):
    __slots__ = ("state_id", "legal_actions", "required", "deadline_unix_ms", "time_left_ms", "time_bank_ms", "observation", "last_event_number")
    STATE_ID_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_LEFT_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LAST_EVENT_NUMBER_FIELD_NUMBER: _ClassVar[int]
    state_id: int
    legal_actions: _containers.RepeatedCompositeFieldContainer[_game_pb2.LegalAction]
    required: bool
    deadline_unix_ms: int
    time_left_ms: int
    time_bank_ms: int
    observation: _game_pb2.Observation
    last_event_number: int
    def __init__(self, state_id: _Optional[int] = ..., legal_actions: _Optional[_Iterable[_Union[_game_pb2.LegalAction, _Mapping]]] = ..., required: _Optional[bool] = ..., deadline_unix_ms: _Optional[int] = ..., time_left_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., observation: _Optional[_Union[_game_pb2.Observation, _Mapping]] = ..., last_event_number: _Optional[int] = ...) -> None: ...

class ActionAccepted(_message.Message):
    __slots__ = ("request_id", "state_id", "action_index")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_INDEX_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    state_id: int
    action_index: int
    def __init__(self, request_id: _Optional[int] = ..., state_id: _Optional[int] = ..., action_index: _Optional[int] = ...) -> None: ...

class ActionRejected(_message.Message):
    __slots__ = ("request_id", "reason", "message", "state_id")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    STATE_ID_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    reason: _errors_pb2.ErrorReason
    message: str
    state_id: int
    def __init__(self, request_id: _Optional[int] = ..., reason: _Optional[_Union[_errors_pb2.ErrorReason, str]] = ..., message: _Optional[str] = ..., state_id: _Optional[int] = ...) -> None: ...

class MatchFinished(_message.Message):
    __slots__ = ("report",)
    REPORT_FIELD_NUMBER: _ClassVar[int]
    report: _record_pb2.MatchReport
    def __init__(self, report: _Optional[_Union[_record_pb2.MatchReport, _Mapping]] = ...) -> None: ...

class Pong(_message.Message):
    __slots__ = ("nonce", "server_time_unix_ms")
    NONCE_FIELD_NUMBER: _ClassVar[int]
    SERVER_TIME_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    nonce: int
    server_time_unix_ms: int
    def __init__(self, nonce: _Optional[int] = ..., server_time_unix_ms: _Optional[int] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: ServerMessage
    def __init__(self, message: _Optional[_Union[ServerMessage, _Mapping]] = ...) -> None: ...

class WatchRequest(_message.Message):
    __slots__ = ("token", "client_name", "resume", "snapshot_every_step")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    CLIENT_NAME_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_EVERY_STEP_FIELD_NUMBER: _ClassVar[int]
    token: str
    client_name: str
    resume: Resume
    snapshot_every_step: bool
    def __init__(self, token: _Optional[str] = ..., client_name: _Optional[str] = ..., resume: _Optional[_Union[Resume, _Mapping]] = ..., snapshot_every_step: _Optional[bool] = ...) -> None: ...

class WatchResponse(_message.Message):
    __slots__ = ("message",)
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    message: ServerMessage
    def __init__(self, message: _Optional[_Union[ServerMessage, _Mapping]] = ...) -> None: ...

class SubmitActionRequest(_message.Message):
    __slots__ = ("token", "action")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    token: str
    action: ActionSubmission
    def __init__(self, token: _Optional[str] = ..., action: _Optional[_Union[ActionSubmission, _Mapping]] = ...) -> None: ...

class ResignRequest(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class ResignResponse(_message.Message):
    __slots__ = ("resigned",)
    RESIGNED_FIELD_NUMBER: _ClassVar[int]
    resigned: bool
    def __init__(self, resigned: _Optional[bool] = ...) -> None: ...

class SubmitActionResponse(_message.Message):
    __slots__ = ("accepted", "rejected")
    ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    REJECTED_FIELD_NUMBER: _ClassVar[int]
    accepted: ActionAccepted
    rejected: ActionRejected
    def __init__(self, accepted: _Optional[_Union[ActionAccepted, _Mapping]] = ..., rejected: _Optional[_Union[ActionRejected, _Mapping]] = ...) -> None: ...
