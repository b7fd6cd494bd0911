from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class LadderErrorReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LADDER_ERROR_REASON_UNSPECIFIED: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_BAD_KEY: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_FORBIDDEN: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_INVITATION_REQUIRED: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_NOT_FOUND: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_DUPLICATE: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_INVALID: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_STATE: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_NO_HELLO: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_SUPERSEDED: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_STORAGE: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_OPERATOR_ONLY: _ClassVar[LadderErrorReason]
    LADDER_ERROR_REASON_RATE_LIMITED: _ClassVar[LadderErrorReason]

class WaitingReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    WAITING_REASON_UNSPECIFIED: _ClassVar[WaitingReason]
    WAITING_REASON_NO_OPPONENTS: _ClassVar[WaitingReason]
    WAITING_REASON_PAUSED: _ClassVar[WaitingReason]
    WAITING_REASON_VALIDATING: _ClassVar[WaitingReason]
    WAITING_REASON_NO_SEASON: _ClassVar[WaitingReason]
    WAITING_REASON_AT_CAPACITY: _ClassVar[WaitingReason]
    WAITING_REASON_MATCHMAKING: _ClassVar[WaitingReason]

class VersionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VERSION_STATUS_UNSPECIFIED: _ClassVar[VersionStatus]
    VERSION_STATUS_ACTIVE: _ClassVar[VersionStatus]
    VERSION_STATUS_HEALTH_PAUSED: _ClassVar[VersionStatus]
    VERSION_STATUS_PAUSED: _ClassVar[VersionStatus]
    VERSION_STATUS_BANNED: _ClassVar[VersionStatus]
    VERSION_STATUS_RETIRED: _ClassVar[VersionStatus]
    VERSION_STATUS_VALIDATING: _ClassVar[VersionStatus]
    VERSION_STATUS_REJECTED: _ClassVar[VersionStatus]

class LadderMatchState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LADDER_MATCH_STATE_UNSPECIFIED: _ClassVar[LadderMatchState]
    LADDER_MATCH_STATE_SCHEDULED: _ClassVar[LadderMatchState]
    LADDER_MATCH_STATE_RUNNING: _ClassVar[LadderMatchState]
    LADDER_MATCH_STATE_FINISHED: _ClassVar[LadderMatchState]
    LADDER_MATCH_STATE_ABORTED: _ClassVar[LadderMatchState]
    LADDER_MATCH_STATE_VOID: _ClassVar[LadderMatchState]

class SanctionTargetKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SANCTION_TARGET_KIND_UNSPECIFIED: _ClassVar[SanctionTargetKind]
    SANCTION_TARGET_KIND_OWNER: _ClassVar[SanctionTargetKind]
    SANCTION_TARGET_KIND_BOT: _ClassVar[SanctionTargetKind]
    SANCTION_TARGET_KIND_VERSION: _ClassVar[SanctionTargetKind]
LADDER_ERROR_REASON_UNSPECIFIED: LadderErrorReason
LADDER_ERROR_REASON_BAD_KEY: LadderErrorReason
LADDER_ERROR_REASON_FORBIDDEN: LadderErrorReason
LADDER_ERROR_REASON_INVITATION_REQUIRED: LadderErrorReason
LADDER_ERROR_REASON_NOT_FOUND: LadderErrorReason
LADDER_ERROR_REASON_DUPLICATE: LadderErrorReason
LADDER_ERROR_REASON_INVALID: LadderErrorReason
LADDER_ERROR_REASON_STATE: LadderErrorReason
LADDER_ERROR_REASON_NO_HELLO: LadderErrorReason
LADDER_ERROR_REASON_SUPERSEDED: LadderErrorReason
LADDER_ERROR_REASON_STORAGE: LadderErrorReason
LADDER_ERROR_REASON_OPERATOR_ONLY: LadderErrorReason
LADDER_ERROR_REASON_RATE_LIMITED: LadderErrorReason
WAITING_REASON_UNSPECIFIED: WaitingReason
WAITING_REASON_NO_OPPONENTS: WaitingReason
WAITING_REASON_PAUSED: WaitingReason
WAITING_REASON_VALIDATING: WaitingReason
WAITING_REASON_NO_SEASON: WaitingReason
WAITING_REASON_AT_CAPACITY: WaitingReason
WAITING_REASON_MATCHMAKING: WaitingReason
VERSION_STATUS_UNSPECIFIED: VersionStatus
VERSION_STATUS_ACTIVE: VersionStatus
VERSION_STATUS_HEALTH_PAUSED: VersionStatus
VERSION_STATUS_PAUSED: VersionStatus
VERSION_STATUS_BANNED: VersionStatus
VERSION_STATUS_RETIRED: VersionStatus
VERSION_STATUS_VALIDATING: VersionStatus
VERSION_STATUS_REJECTED: VersionStatus
LADDER_MATCH_STATE_UNSPECIFIED: LadderMatchState
LADDER_MATCH_STATE_SCHEDULED: LadderMatchState
LADDER_MATCH_STATE_RUNNING: LadderMatchState
LADDER_MATCH_STATE_FINISHED: LadderMatchState
LADDER_MATCH_STATE_ABORTED: LadderMatchState
LADDER_MATCH_STATE_VOID: LadderMatchState
SANCTION_TARGET_KIND_UNSPECIFIED: SanctionTargetKind
SANCTION_TARGET_KIND_OWNER: SanctionTargetKind
SANCTION_TARGET_KIND_BOT: SanctionTargetKind
SANCTION_TARGET_KIND_VERSION: SanctionTargetKind

class RegisterOwnerRequest(_message.Message):
    __slots__ = ("name", "invitation_code")
    NAME_FIELD_NUMBER: _ClassVar[int]
    INVITATION_CODE_FIELD_NUMBER: _ClassVar[int]
    name: str
    invitation_code: str
    def __init__(self, name: _Optional[str] = ..., invitation_code: _Optional[str] = ...) -> None: ...

class RegisterOwnerResponse(_message.Message):
    __slots__ = ("owner_id", "owner_key")
    OWNER_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_KEY_FIELD_NUMBER: _ClassVar[int]
    owner_id: int
    owner_key: str
    def __init__(self, owner_id: _Optional[int] = ..., owner_key: _Optional[str] = ...) -> None: ...

class RegisterBotRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class RegisterBotResponse(_message.Message):
    __slots__ = ("bot_id",)
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    bot_id: int
    def __init__(self, bot_id: _Optional[int] = ...) -> None: ...

class AddVersionRequest(_message.Message):
    __slots__ = ("bot_id", "label")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    bot_id: int
    label: str
    def __init__(self, bot_id: _Optional[int] = ..., label: _Optional[str] = ...) -> None: ...

class AddVersionResponse(_message.Message):
    __slots__ = ("version_id", "version_key", "retired_version_ids")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_KEY_FIELD_NUMBER: _ClassVar[int]
    RETIRED_VERSION_IDS_FIELD_NUMBER: _ClassVar[int]
    version_id: int
    version_key: str
    retired_version_ids: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, version_id: _Optional[int] = ..., version_key: _Optional[str] = ..., retired_version_ids: _Optional[_Iterable[int]] = ...) -> None: ...

class RotateKeyRequest(_message.Message):
    __slots__ = ("version_id",)
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    version_id: int
    def __init__(self, version_id: _Optional[int] = ...) -> None: ...

class RotateKeyResponse(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    def __init__(self, key: _Optional[str] = ...) -> None: ...

class RevokeKeyRequest(_message.Message):
    __slots__ = ("version_id",)
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    version_id: int
    def __init__(self, version_id: _Optional[int] = ...) -> None: ...

class RevokeKeyResponse(_message.Message):
    __slots__ = ("revoked",)
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    revoked: int
    def __init__(self, revoked: _Optional[int] = ...) -> None: ...

class LobbyRequest(_message.Message):
    __slots__ = ("hello", "drain")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    DRAIN_FIELD_NUMBER: _ClassVar[int]
    hello: LobbyHello
    drain: LobbyDrain
    def __init__(self, hello: _Optional[_Union[LobbyHello, _Mapping]] = ..., drain: _Optional[_Union[LobbyDrain, _Mapping]] = ...) -> None: ...

class LobbyHello(_message.Message):
    __slots__ = ("version_key", "max_matches", "profiles", "seats")
    VERSION_KEY_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    PROFILES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    version_key: str
    max_matches: int
    profiles: _containers.RepeatedScalarFieldContainer[str]
    seats: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, version_key: _Optional[str] = ..., max_matches: _Optional[int] = ..., profiles: _Optional[_Iterable[str]] = ..., seats: _Optional[_Iterable[int]] = ...) -> None: ...

class LobbyDrain(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class LobbyResponse(_message.Message):
    __slots__ = ("welcome", "invitation", "match_ended", "notice", "drained", "waiting")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    INVITATION_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    DRAINED_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    welcome: LobbyWelcome
    invitation: Invitation
    match_ended: LadderMatchEnded
    notice: LobbyNotice
    drained: LobbyDrained
    waiting: LobbyWaiting
    def __init__(self, welcome: _Optional[_Union[LobbyWelcome, _Mapping]] = ..., invitation: _Optional[_Union[Invitation, _Mapping]] = ..., match_ended: _Optional[_Union[LadderMatchEnded, _Mapping]] = ..., notice: _Optional[_Union[LobbyNotice, _Mapping]] = ..., drained: _Optional[_Union[LobbyDrained, _Mapping]] = ..., waiting: _Optional[_Union[LobbyWaiting, _Mapping]] = ...) -> None: ...

class LobbyWaiting(_message.Message):
    __slots__ = ("reason", "detail", "bots_online")
    REASON_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    BOTS_ONLINE_FIELD_NUMBER: _ClassVar[int]
    reason: WaitingReason
    detail: str
    bots_online: int
    def __init__(self, reason: _Optional[_Union[WaitingReason, str]] = ..., detail: _Optional[str] = ..., bots_online: _Optional[int] = ...) -> None: ...

class LobbyWelcome(_message.Message):
    __slots__ = ("version_id", "bot_id", "season", "status", "reason")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    SEASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    version_id: int
    bot_id: int
    season: str
    status: VersionStatus
    reason: str
    def __init__(self, version_id: _Optional[int] = ..., bot_id: _Optional[int] = ..., season: _Optional[str] = ..., status: _Optional[_Union[VersionStatus, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class Invitation(_message.Message):
    __slots__ = ("ladder_match_id", "match_id", "seat", "seat_token", "node_address", "join_deadline_unix_ms", "profile", "seats", "rated", "validation")
    LADDER_MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEAT_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NODE_ADDRESS_FIELD_NUMBER: _ClassVar[int]
    JOIN_DEADLINE_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    ladder_match_id: int
    match_id: str
    seat: int
    seat_token: str
    node_address: str
    join_deadline_unix_ms: int
    profile: str
    seats: int
    rated: bool
    validation: bool
    def __init__(self, ladder_match_id: _Optional[int] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., seat_token: _Optional[str] = ..., node_address: _Optional[str] = ..., join_deadline_unix_ms: _Optional[int] = ..., profile: _Optional[str] = ..., seats: _Optional[int] = ..., rated: _Optional[bool] = ..., validation: _Optional[bool] = ...) -> None: ...

class LadderMatchEnded(_message.Message):
    __slots__ = ("ladder_match_id", "match_id", "finished", "rated", "placing", "rating", "reason", "seat", "validation", "profile")
    LADDER_MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    RATED_FIELD_NUMBER: _ClassVar[int]
    PLACING_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    ladder_match_id: int
    match_id: str
    finished: bool
    rated: bool
    placing: int
    rating: Rating
    reason: str
    seat: int
    validation: bool
    profile: str
    def __init__(self, ladder_match_id: _Optional[int] = ..., match_id: _Optional[str] = ..., finished: _Optional[bool] = ..., rated: _Optional[bool] = ..., placing: _Optional[int] = ..., rating: _Optional[_Union[Rating, _Mapping]] = ..., reason: _Optional[str] = ..., seat: _Optional[int] = ..., validation: _Optional[bool] = ..., profile: _Optional[str] = ...) -> None: ...

class LobbyNotice(_message.Message):
    __slots__ = ("status", "reason")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    status: VersionStatus
    reason: str
    def __init__(self, status: _Optional[_Union[VersionStatus, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class LobbyDrained(_message.Message):
    __slots__ = ("closed",)
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    closed: bool
    def __init__(self, closed: _Optional[bool] = ...) -> None: ...

class Rating(_message.Message):
    __slots__ = ("mu", "sigma", "score", "interval_low", "interval_high")
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_LOW_FIELD_NUMBER: _ClassVar[int]
    INTERVAL_HIGH_FIELD_NUMBER: _ClassVar[int]
    mu: float
    sigma: float
    score: float
    interval_low: float
    interval_high: float
    def __init__(self, mu: _Optional[float] = ..., sigma: _Optional[float] = ..., score: _Optional[float] = ..., interval_low: _Optional[float] = ..., interval_high: _Optional[float] = ...) -> None: ...

class GetLeaderboardRequest(_message.Message):
    __slots__ = ("season", "profile", "page_size", "page_token")
    SEASON_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    season: str
    profile: str
    page_size: int
    page_token: str
    def __init__(self, season: _Optional[str] = ..., profile: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class Standing(_message.Message):
    __slots__ = ("rank", "bot_id", "bot_name", "version_id", "version_label", "rating", "matches", "provisional", "house")
    RANK_FIELD_NUMBER: _ClassVar[int]
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_LABEL_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    PROVISIONAL_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    rank: int
    bot_id: int
    bot_name: str
    version_id: int
    version_label: str
    rating: Rating
    matches: int
    provisional: bool
    house: bool
    def __init__(self, rank: _Optional[int] = ..., bot_id: _Optional[int] = ..., bot_name: _Optional[str] = ..., version_id: _Optional[int] = ..., version_label: _Optional[str] = ..., rating: _Optional[_Union[Rating, _Mapping]] = ..., matches: _Optional[int] = ..., provisional: _Optional[bool] = ..., house: _Optional[bool] = ...) -> None: ...

class GetLeaderboardResponse(_message.Message):
    __slots__ = ("season", "profile", "standings", "next_page_token")
    SEASON_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    season: str
    profile: str
    standings: _containers.RepeatedCompositeFieldContainer[Standing]
    next_page_token: str
    def __init__(self, season: _Optional[str] = ..., profile: _Optional[str] = ..., standings: _Optional[_Iterable[_Union[Standing, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetBotRequest(_message.Message):
    __slots__ = ("bot_id", "season", "history_limit")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    SEASON_FIELD_NUMBER: _ClassVar[int]
    HISTORY_LIMIT_FIELD_NUMBER: _ClassVar[int]
    bot_id: int
    season: str
    history_limit: int
    def __init__(self, bot_id: _Optional[int] = ..., season: _Optional[str] = ..., history_limit: _Optional[int] = ...) -> None: ...

class ProfileRating(_message.Message):
    __slots__ = ("profile", "rating", "matches", "provisional")
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    RATING_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    PROVISIONAL_FIELD_NUMBER: _ClassVar[int]
    profile: str
    rating: Rating
    matches: int
    provisional: bool
    def __init__(self, profile: _Optional[str] = ..., rating: _Optional[_Union[Rating, _Mapping]] = ..., matches: _Optional[int] = ..., provisional: _Optional[bool] = ...) -> None: ...

class BotVersion(_message.Message):
    __slots__ = ("version_id", "label", "created_unix_ms", "status", "reason", "ratings", "history", "validations", "waiting")
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    CREATED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    RATINGS_FIELD_NUMBER: _ClassVar[int]
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    VALIDATIONS_FIELD_NUMBER: _ClassVar[int]
    WAITING_FIELD_NUMBER: _ClassVar[int]
    version_id: int
    label: str
    created_unix_ms: int
    status: VersionStatus
    reason: str
    ratings: _containers.RepeatedCompositeFieldContainer[ProfileRating]
    history: _containers.RepeatedCompositeFieldContainer[HistoryEntry]
    validations: _containers.RepeatedCompositeFieldContainer[ValidationResult]
    waiting: LobbyWaiting
    def __init__(self, version_id: _Optional[int] = ..., label: _Optional[str] = ..., created_unix_ms: _Optional[int] = ..., status: _Optional[_Union[VersionStatus, str]] = ..., reason: _Optional[str] = ..., ratings: _Optional[_Iterable[_Union[ProfileRating, _Mapping]]] = ..., history: _Optional[_Iterable[_Union[HistoryEntry, _Mapping]]] = ..., validations: _Optional[_Iterable[_Union[ValidationResult, _Mapping]]] = ..., waiting: _Optional[_Union[LobbyWaiting, _Mapping]] = ...) -> None: ...

class ValidationResult(_message.Message):
    __slots__ = ("ladder_match_id", "match_id", "profile", "passed", "reasons", "ended_unix_ms")
    LADDER_MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    PASSED_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    ENDED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    ladder_match_id: int
    match_id: str
    profile: str
    passed: bool
    reasons: _containers.RepeatedScalarFieldContainer[str]
    ended_unix_ms: int
    def __init__(self, ladder_match_id: _Optional[int] = ..., match_id: _Optional[str] = ..., profile: _Optional[str] = ..., passed: _Optional[bool] = ..., reasons: _Optional[_Iterable[str]] = ..., ended_unix_ms: _Optional[int] = ...) -> None: ...

class HistoryEntry(_message.Message):
    __slots__ = ("ladder_match_id", "match_id", "state", "profile", "seats", "placing", "joined", "timeouts", "ended_unix_ms", "reason", "validation", "replay_pruned", "rejections")
    LADDER_MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    PLACING_FIELD_NUMBER: _ClassVar[int]
    JOINED_FIELD_NUMBER: _ClassVar[int]
    TIMEOUTS_FIELD_NUMBER: _ClassVar[int]
    ENDED_UNIX_MS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    VALIDATION_FIELD_NUMBER: _ClassVar[int]
    REPLAY_PRUNED_FIELD_NUMBER: _ClassVar[int]
    REJECTIONS_FIELD_NUMBER: _ClassVar[int]
    ladder_match_id: int
    match_id: str
    state: LadderMatchState
    profile: str
    seats: int
    placing: int
    joined: bool
    timeouts: int
    ended_unix_ms: int
    reason: str
    validation: bool
    replay_pruned: bool
    rejections: int
    def __init__(self, ladder_match_id: _Optional[int] = ..., match_id: _Optional[str] = ..., state: _Optional[_Union[LadderMatchState, str]] = ..., profile: _Optional[str] = ..., seats: _Optional[int] = ..., placing: _Optional[int] = ..., joined: _Optional[bool] = ..., timeouts: _Optional[int] = ..., ended_unix_ms: _Optional[int] = ..., reason: _Optional[str] = ..., validation: _Optional[bool] = ..., replay_pruned: _Optional[bool] = ..., rejections: _Optional[int] = ...) -> None: ...

class GetBotResponse(_message.Message):
    __slots__ = ("bot_id", "name", "owner_id", "owner_name", "season", "versions", "house")
    BOT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    OWNER_ID_FIELD_NUMBER: _ClassVar[int]
    OWNER_NAME_FIELD_NUMBER: _ClassVar[int]
    SEASON_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    bot_id: int
    name: str
    owner_id: int
    owner_name: str
    season: str
    versions: _containers.RepeatedCompositeFieldContainer[BotVersion]
    house: bool
    def __init__(self, bot_id: _Optional[int] = ..., name: _Optional[str] = ..., owner_id: _Optional[int] = ..., owner_name: _Optional[str] = ..., season: _Optional[str] = ..., versions: _Optional[_Iterable[_Union[BotVersion, _Mapping]]] = ..., house: _Optional[bool] = ...) -> None: ...

class SanctionTarget(_message.Message):
    __slots__ = ("kind", "id")
    KIND_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    kind: SanctionTargetKind
    id: int
    def __init__(self, kind: _Optional[_Union[SanctionTargetKind, str]] = ..., id: _Optional[int] = ...) -> None: ...

class BanRequest(_message.Message):
    __slots__ = ("target", "reason")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    target: SanctionTarget
    reason: str
    def __init__(self, target: _Optional[_Union[SanctionTarget, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class BanResponse(_message.Message):
    __slots__ = ("sanction_id",)
    SANCTION_ID_FIELD_NUMBER: _ClassVar[int]
    sanction_id: int
    def __init__(self, sanction_id: _Optional[int] = ...) -> None: ...

class UnbanRequest(_message.Message):
    __slots__ = ("target", "reason")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    target: SanctionTarget
    reason: str
    def __init__(self, target: _Optional[_Union[SanctionTarget, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class UnbanResponse(_message.Message):
    __slots__ = ("lifted",)
    LIFTED_FIELD_NUMBER: _ClassVar[int]
    lifted: int
    def __init__(self, lifted: _Optional[int] = ...) -> None: ...

class PauseRequest(_message.Message):
    __slots__ = ("target", "reason")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    target: SanctionTarget
    reason: str
    def __init__(self, target: _Optional[_Union[SanctionTarget, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class PauseResponse(_message.Message):
    __slots__ = ("sanction_id",)
    SANCTION_ID_FIELD_NUMBER: _ClassVar[int]
    sanction_id: int
    def __init__(self, sanction_id: _Optional[int] = ...) -> None: ...

class ResumeRequest(_message.Message):
    __slots__ = ("target", "reason")
    TARGET_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    target: SanctionTarget
    reason: str
    def __init__(self, target: _Optional[_Union[SanctionTarget, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...

class ResumeResponse(_message.Message):
    __slots__ = ("lifted",)
    LIFTED_FIELD_NUMBER: _ClassVar[int]
    lifted: int
    def __init__(self, lifted: _Optional[int] = ...) -> None: ...

class ResumeVersionRequest(_message.Message):
    __slots__ = ("version_id",)
    VERSION_ID_FIELD_NUMBER: _ClassVar[int]
    version_id: int
    def __init__(self, version_id: _Optional[int] = ...) -> None: ...

class ResumeVersionResponse(_message.Message):
    __slots__ = ("lifted",)
    LIFTED_FIELD_NUMBER: _ClassVar[int]
    lifted: int
    def __init__(self, lifted: _Optional[int] = ...) -> None: ...

class VoidMatchRequest(_message.Message):
    __slots__ = ("ladder_match_id", "reason")
    LADDER_MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    ladder_match_id: int
    reason: str
    def __init__(self, ladder_match_id: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class VoidMatchResponse(_message.Message):
    __slots__ = ("ratings_changed",)
    RATINGS_CHANGED_FIELD_NUMBER: _ClassVar[int]
    ratings_changed: int
    def __init__(self, ratings_changed: _Optional[int] = ...) -> None: ...

class CloseSeasonRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class CloseSeasonResponse(_message.Message):
    __slots__ = ("season",)
    SEASON_FIELD_NUMBER: _ClassVar[int]
    season: str
    def __init__(self, season: _Optional[str] = ...) -> None: ...

class OpenSeasonRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class OpenSeasonResponse(_message.Message):
    __slots__ = ("season",)
    SEASON_FIELD_NUMBER: _ClassVar[int]
    season: str
    def __init__(self, season: _Optional[str] = ...) -> None: ...

class LadderFormat(_message.Message):
    __slots__ = ("profile", "seats", "weight")
    PROFILE_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    profile: str
    seats: int
    weight: float
    def __init__(self, profile: _Optional[str] = ..., seats: _Optional[int] = ..., weight: _Optional[float] = ...) -> None: ...

class SetFormatsRequest(_message.Message):
    __slots__ = ("formats",)
    FORMATS_FIELD_NUMBER: _ClassVar[int]
    formats: _containers.RepeatedCompositeFieldContainer[LadderFormat]
    def __init__(self, formats: _Optional[_Iterable[_Union[LadderFormat, _Mapping]]] = ...) -> None: ...

class SetFormatsResponse(_message.Message):
    __slots__ = ("formats",)
    FORMATS_FIELD_NUMBER: _ClassVar[int]
    formats: _containers.RepeatedCompositeFieldContainer[LadderFormat]
    def __init__(self, formats: _Optional[_Iterable[_Union[LadderFormat, _Mapping]]] = ...) -> None: ...

class LobbyFeedRequest(_message.Message):
    __slots__ = ("hello",)
    HELLO_FIELD_NUMBER: _ClassVar[int]
    hello: LobbyHello
    def __init__(self, hello: _Optional[_Union[LobbyHello, _Mapping]] = ...) -> None: ...

class WithdrawSeatRequest(_message.Message):
    __slots__ = ("version_key", "ladder_match_id", "seat")
    VERSION_KEY_FIELD_NUMBER: _ClassVar[int]
    LADDER_MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    version_key: str
    ladder_match_id: int
    seat: int
    def __init__(self, version_key: _Optional[str] = ..., ladder_match_id: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class WithdrawSeatResponse(_message.Message):
    __slots__ = ("withdrawn",)
    WITHDRAWN_FIELD_NUMBER: _ClassVar[int]
    withdrawn: bool
    def __init__(self, withdrawn: _Optional[bool] = ...) -> None: ...

class DrainLobbyRequest(_message.Message):
    __slots__ = ("version_key",)
    VERSION_KEY_FIELD_NUMBER: _ClassVar[int]
    version_key: str
    def __init__(self, version_key: _Optional[str] = ...) -> None: ...

class DrainLobbyResponse(_message.Message):
    __slots__ = ("was_open", "matches_in_flight")
    WAS_OPEN_FIELD_NUMBER: _ClassVar[int]
    MATCHES_IN_FLIGHT_FIELD_NUMBER: _ClassVar[int]
    was_open: bool
    matches_in_flight: int
    def __init__(self, was_open: _Optional[bool] = ..., matches_in_flight: _Optional[int] = ...) -> None: ...

class PruneReplaysRequest(_message.Message):
    __slots__ = ("older_than_seconds", "keep_newest", "dry_run")
    OLDER_THAN_SECONDS_FIELD_NUMBER: _ClassVar[int]
    KEEP_NEWEST_FIELD_NUMBER: _ClassVar[int]
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    older_than_seconds: int
    keep_newest: int
    dry_run: bool
    def __init__(self, older_than_seconds: _Optional[int] = ..., keep_newest: _Optional[int] = ..., dry_run: _Optional[bool] = ...) -> None: ...

class PruneReplaysResponse(_message.Message):
    __slots__ = ("pruned", "kept", "bytes_freed")
    PRUNED_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    BYTES_FREED_FIELD_NUMBER: _ClassVar[int]
    pruned: int
    kept: int
    bytes_freed: int
    def __init__(self, pruned: _Optional[int] = ..., kept: _Optional[int] = ..., bytes_freed: _Optional[int] = ...) -> None: ...
