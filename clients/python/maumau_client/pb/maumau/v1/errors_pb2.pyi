from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ERROR_REASON_UNSPECIFIED: _ClassVar[ErrorReason]
    ERROR_REASON_MATCH_OVER: _ClassVar[ErrorReason]
    ERROR_REASON_NO_SUCH_SEAT: _ClassVar[ErrorReason]
    ERROR_REASON_AWAITING_SUIT: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_AWAITING_SUIT: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_YOUR_TURN: _ClassVar[ErrorReason]
    ERROR_REASON_CARD_NOT_IN_HAND: _ClassVar[ErrorReason]
    ERROR_REASON_SUIT_REQUIRED: _ClassVar[ErrorReason]
    ERROR_REASON_SUIT_NOT_ALLOWED: _ClassVar[ErrorReason]
    ERROR_REASON_ILLEGAL_CARD: _ClassVar[ErrorReason]
    ERROR_REASON_PENALTY_CARD_THIS_TURN: _ClassVar[ErrorReason]
    ERROR_REASON_ONLY_DRAWN_CARD: _ClassVar[ErrorReason]
    ERROR_REASON_MUST_PLAY_AFTER_ANNOUNCE: _ClassVar[ErrorReason]
    ERROR_REASON_HOLDS_LEGAL_PLAY: _ClassVar[ErrorReason]
    ERROR_REASON_ALREADY_DREW: _ClassVar[ErrorReason]
    ERROR_REASON_NOTHING_TO_DRAW: _ClassVar[ErrorReason]
    ERROR_REASON_PASS_BEFORE_DRAW: _ClassVar[ErrorReason]
    ERROR_REASON_CHALLENGES_DISABLED: _ClassVar[ErrorReason]
    ERROR_REASON_NO_OPEN_OFFENCE: _ClassVar[ErrorReason]
    ERROR_REASON_OWN_OFFENCE: _ClassVar[ErrorReason]
    ERROR_REASON_ALREADY_CHALLENGED: _ClassVar[ErrorReason]
    ERROR_REASON_ANNOUNCE_NOT_ALLOWED: _ClassVar[ErrorReason]
    ERROR_REASON_WRONG_WORD: _ClassVar[ErrorReason]
    ERROR_REASON_ALREADY_ANNOUNCED: _ClassVar[ErrorReason]
    ERROR_REASON_STALE_STATE: _ClassVar[ErrorReason]
    ERROR_REASON_BAD_TOKEN: _ClassVar[ErrorReason]
    ERROR_REASON_MALFORMED_ACTION: _ClassVar[ErrorReason]
    ERROR_REASON_RATE_LIMITED: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_SEATED: _ClassVar[ErrorReason]
    ERROR_REASON_NOT_JOINED: _ClassVar[ErrorReason]
    ERROR_REASON_ALREADY_JOINED: _ClassVar[ErrorReason]
    ERROR_REASON_SUPERSEDED: _ClassVar[ErrorReason]
    ERROR_REASON_MALFORMED_MESSAGE: _ClassVar[ErrorReason]
    ERROR_REASON_MATCH_NOT_STARTED: _ClassVar[ErrorReason]
    ERROR_REASON_MATCH_NOT_FOUND: _ClassVar[ErrorReason]
    ERROR_REASON_PERMISSION_DENIED: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_CONFIG: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_SETUP: _ClassVar[ErrorReason]
    ERROR_REASON_MATCH_NOT_FINISHED: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_REPLAY: _ClassVar[ErrorReason]
    ERROR_REASON_REPLAY_MISMATCH: _ClassVar[ErrorReason]
    ERROR_REASON_INVALID_ARGUMENT: _ClassVar[ErrorReason]
    ERROR_REASON_UNAVAILABLE: _ClassVar[ErrorReason]
    ERROR_REASON_REPLAY_PRUNED: _ClassVar[ErrorReason]
    ERROR_REASON_STORAGE_UNAVAILABLE: _ClassVar[ErrorReason]
    ERROR_REASON_SEALED: _ClassVar[ErrorReason]
    ERROR_REASON_INTERNAL: _ClassVar[ErrorReason]
ERROR_REASON_UNSPECIFIED: ErrorReason
ERROR_REASON_MATCH_OVER: ErrorReason
ERROR_REASON_NO_SUCH_SEAT: ErrorReason
ERROR_REASON_AWAITING_SUIT: ErrorReason
ERROR_REASON_NOT_AWAITING_SUIT: ErrorReason
ERROR_REASON_NOT_YOUR_TURN: ErrorReason
ERROR_REASON_CARD_NOT_IN_HAND: ErrorReason
ERROR_REASON_SUIT_REQUIRED: ErrorReason
ERROR_REASON_SUIT_NOT_ALLOWED: ErrorReason
ERROR_REASON_ILLEGAL_CARD: ErrorReason
ERROR_REASON_PENALTY_CARD_THIS_TURN: ErrorReason
ERROR_REASON_ONLY_DRAWN_CARD: ErrorReason
ERROR_REASON_MUST_PLAY_AFTER_ANNOUNCE: ErrorReason
ERROR_REASON_HOLDS_LEGAL_PLAY: ErrorReason
ERROR_REASON_ALREADY_DREW: ErrorReason
ERROR_REASON_NOTHING_TO_DRAW: ErrorReason
ERROR_REASON_PASS_BEFORE_DRAW: ErrorReason
ERROR_REASON_CHALLENGES_DISABLED: ErrorReason
ERROR_REASON_NO_OPEN_OFFENCE: ErrorReason
ERROR_REASON_OWN_OFFENCE: ErrorReason
ERROR_REASON_ALREADY_CHALLENGED: ErrorReason
ERROR_REASON_ANNOUNCE_NOT_ALLOWED: ErrorReason
ERROR_REASON_WRONG_WORD: ErrorReason
ERROR_REASON_ALREADY_ANNOUNCED: ErrorReason
ERROR_REASON_STALE_STATE: ErrorReason
ERROR_REASON_BAD_TOKEN: ErrorReason
ERROR_REASON_MALFORMED_ACTION: ErrorReason
ERROR_REASON_RATE_LIMITED: ErrorReason
ERROR_REASON_NOT_SEATED: ErrorReason
ERROR_REASON_NOT_JOINED: ErrorReason
ERROR_REASON_ALREADY_JOINED: ErrorReason
ERROR_REASON_SUPERSEDED: ErrorReason
ERROR_REASON_MALFORMED_MESSAGE: ErrorReason
ERROR_REASON_MATCH_NOT_STARTED: ErrorReason
ERROR_REASON_MATCH_NOT_FOUND: ErrorReason
ERROR_REASON_PERMISSION_DENIED: ErrorReason
ERROR_REASON_INVALID_CONFIG: ErrorReason
ERROR_REASON_INVALID_SETUP: ErrorReason
ERROR_REASON_MATCH_NOT_FINISHED: ErrorReason
ERROR_REASON_INVALID_REPLAY: ErrorReason
ERROR_REASON_REPLAY_MISMATCH: ErrorReason
ERROR_REASON_INVALID_ARGUMENT: ErrorReason
ERROR_REASON_UNAVAILABLE: ErrorReason
ERROR_REASON_REPLAY_PRUNED: ErrorReason
ERROR_REASON_STORAGE_UNAVAILABLE: ErrorReason
ERROR_REASON_SEALED: ErrorReason
ERROR_REASON_INTERNAL: ErrorReason

class ErrorDetail(_message.Message):
    __slots__ = ("reason", "message")
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    reason: ErrorReason
    message: str
    def __init__(self, reason: _Optional[_Union[ErrorReason, str]] = ..., message: _Optional[str] = ...) -> None: ...
