"""Joining a ladder: register a version (:func:`register`) and hold its lobby (:func:`hold_lobby`).

    from maumau_client import Bot, hold_lobby, register

    keys = register("127.0.0.1:50051", owner="me", bot="first-legal", version="1.0")
    drain = threading.Event()          # set it (e.g. on SIGINT) to drain and return
    hold_lobby(FirstLegal, "127.0.0.1:50051", keys.version_key, drain=drain)

``hold_lobby`` opens ``LadderService.Lobby`` with the version key, plays every invitation with
:func:`maumau_client.run`'s play (several at once, up to ``max_matches``, as tasks on one asyncio
event loop thread),
reports what happens to ``on_event`` (by default as log lines such as
``waiting: no opponent online (1 bots online)``), reconnects after a dropped lobby with a growing
delay, and when ``drain`` is set sends ``LobbyDrain``, lets the running matches finish and returns.

A tournament's ``lobby:`` entrant gets its lobby in the environment (:func:`lobby_from_env`).
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Optional, Union

from .bot import Bot, channel_options
from .pb.maumau.v1 import ladder_pb2

if TYPE_CHECKING:  # grpc is imported when used: a bot on the native transport never needs it
    import grpc

__all__ = [
    "LOBBY_ADDR_VAR", "LOBBY_KEY_VAR", "LobbyError", "LobbyStats", "Registration", "describe",
    "hold_lobby", "lobby_from_env", "register",
]

log = logging.getLogger("maumau_client.lobby")

ALL_PROFILES = ("classic", "penalty-points", "brazilian", "romanian-32")

#: Where a tournament that launched this bot (``--entrant 'name=lobby:COMMAND'``) holds its lobby
#: (``http://127.0.0.1:PORT``), and the key for it; see :func:`lobby_from_env`.
LOBBY_ADDR_VAR = "MAUMAU_LOBBY_ADDR"
LOBBY_KEY_VAR = "MAUMAU_LOBBY_KEY"


def lobby_from_env() -> Optional[tuple]:
    """``(address, key)`` of the lobby a tournament launched this bot for, from
    ``$MAUMAU_LOBBY_ADDR`` (as ``host:port``) and ``$MAUMAU_LOBBY_KEY``; ``None`` when either is
    unset. A ladder bot that tries this first plays tournaments unchanged: the tournament invites
    it to each of its matches and, when it is over, closes the lobby, which ends
    :func:`hold_lobby` as a drain does."""
    addr = os.environ.get(LOBBY_ADDR_VAR, "").strip()
    key = os.environ.get(LOBBY_KEY_VAR, "").strip()
    if not addr or not key:
        return None
    return addr.split("://", 1)[-1].rstrip("/"), key


def _fatal_codes() -> set:
    """Refusals after which opening the lobby again cannot help."""
    import grpc

    return {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ALREADY_EXISTS,
        grpc.StatusCode.ABORTED,  # superseded: a newer lobby of the same version took over
    }


class LobbyError(Exception):
    """The ladder refused the lobby or a registration for good (bad key, superseded, ...)."""

    def __init__(self, message: str, reason: str = "", code: Optional[grpc.StatusCode] = None):
        super().__init__(message)
        self.reason = reason  #: the ``maumau-ladder-reason`` trailer, e.g. LADDER_ERROR_REASON_BAD_KEY
        self.code = code


def _ladder_reason(error: grpc.RpcError) -> str:
    try:
        for key, value in error.trailing_metadata() or ():
            if key == "maumau-ladder-reason":
                return value
    except Exception:  # a locally failed call may have no trailers
        pass
    return ""


def _refused(what: str, error: grpc.RpcError) -> LobbyError:
    return LobbyError(f"{what}: {error.code().name}: {error.details()}", _ladder_reason(error), error.code())


@dataclass
class Registration:
    """What :func:`register` made; the keys are shown only once, so keep them."""

    owner_key: str
    bot_id: int
    version_id: int
    version_key: str


def register(
    address: str,
    *,
    owner: str = "",
    bot: str = "",
    version: str = "1",
    owner_key: str = "",
    bot_id: int = 0,
    invitation_code: str = "",
    channel: Optional[grpc.Channel] = None,
) -> Registration:
    """Registers an owner (or uses ``owner_key``), a bot (or adds to ``bot_id``) and a version.

    Raises :class:`LobbyError` when the ladder refuses (a taken name, a missing invitation code).
    """
    import grpc

    from .pb.maumau.v1 import ladder_pb2_grpc

    ch = channel if channel is not None else grpc.insecure_channel(
        address, options=channel_options(address)
    )
    try:
        ladder = ladder_pb2_grpc.LadderServiceStub(ch)
        try:
            if not owner_key:
                owner_key = ladder.RegisterOwner(
                    ladder_pb2.RegisterOwnerRequest(name=owner, invitation_code=invitation_code), timeout=10
                ).owner_key
            auth = (("authorization", f"Bearer {owner_key}"),)
            if not bot_id:
                bot_id = ladder.RegisterBot(ladder_pb2.RegisterBotRequest(name=bot), metadata=auth, timeout=10).bot_id
            added = ladder.AddVersion(
                ladder_pb2.AddVersionRequest(bot_id=bot_id, label=version), metadata=auth, timeout=10
            )
        except grpc.RpcError as e:
            raise _refused("registration refused", e) from e
        return Registration(owner_key, bot_id, added.version_id, added.version_key)
    finally:
        if channel is None:
            ch.close()


def describe(kind: str, message) -> str:
    """One line for a lobby event (what the default ``on_event`` logs)."""
    if kind == "waiting":
        detail = message.detail or ladder_pb2.WaitingReason.Name(message.reason).removeprefix("WAITING_REASON_").lower()
        return f"waiting: {detail} ({message.bots_online} bots online)"
    if kind == "welcome":
        status = ladder_pb2.VersionStatus.Name(message.status).removeprefix("VERSION_STATUS_").lower()
        season = f"season {message.season}" if message.season else "no season open"
        return f"lobby open: version {message.version_id} of bot {message.bot_id}, {season}, status {status}"
    if kind == "invitation":
        how = "validation" if message.validation else "rated" if message.rated else "unrated"
        return (f"invitation: match {message.ladder_match_id} ({message.match_id}), {message.profile} "
                f"with {message.seats} seats, seat {message.seat}, {how}")
    if kind == "match_ended":
        text = f"match {message.ladder_match_id} ({message.match_id}) "
        text += f"finished: placing {message.placing}" if message.finished else "aborted"
        if message.rated and message.HasField("rating"):
            r = message.rating
            where = f" in {message.profile}" if message.profile else ""
            text += f", rating{where} μ {r.mu:.2f} σ {r.sigma:.2f} (score {r.score:.2f})"
        return text + (f": {message.reason}" if message.reason else "")
    if kind == "notice":
        status = ladder_pb2.VersionStatus.Name(message.status).removeprefix("VERSION_STATUS_").lower()
        return f"status: {status}" + (f" ({message.reason})" if message.reason else "")
    if kind == "dropped":
        return f"lobby dropped ({message}); reconnecting"
    if kind == "played":
        invitation, error = message
        return f"match {invitation.ladder_match_id}: " + (f"failed: {error}" if error else "played")
    return kind


def _log_event(kind: str, message) -> None:
    log.info("%s", describe(kind, message))


@dataclass
class LobbyStats:
    """What :func:`hold_lobby` saw."""

    lobbies: int = 0  #: Lobby streams opened (1 + reconnects)
    invitations: int = 0
    ended: list = field(default_factory=list)  #: every LadderMatchEnded, in order
    waiting: list = field(default_factory=list)  #: every LobbyWaiting, in order
    failures: list = field(default_factory=list)  #: (invitation, error) of players that failed
    drained: bool = False  #: the server confirmed the drain


def _target(node_address: str, address: str) -> str:
    if not node_address:
        return address
    return node_address.split("://", 1)[-1].rstrip("/")


async def _withdraw(channel: grpc.aio.Channel, key: str, invitation: ladder_pb2.Invitation) -> None:
    """Gives up the seat of a match whose player failed (``LadderService.WithdrawSeat``), so that a
    match it never joined is aborted now rather than at its join deadline; the server leaves a
    match that started alone. A tournament's game server is no ladder (the call is unimplemented
    there): the seat is resigned with its token instead (``PlayService.Resign``), so its match
    need not wait for its clock. Best effort: a failed call leaves the deadline (or the seat's
    clock) to do it."""
    import grpc
    import grpc.aio

    from .pb.maumau.v1 import ladder_pb2_grpc, play_pb2, play_pb2_grpc

    request = ladder_pb2.WithdrawSeatRequest(ladder_match_id=invitation.ladder_match_id, seat=invitation.seat)
    try:
        await ladder_pb2_grpc.LadderServiceStub(channel).WithdrawSeat(
            request, metadata=(("authorization", f"Bearer {key}"),), timeout=10
        )
    except grpc.aio.AioRpcError as error:
        if error.code() != grpc.StatusCode.UNIMPLEMENTED:
            return
        try:
            await play_pb2_grpc.PlayServiceStub(channel).Resign(
                play_pb2.ResignRequest(token=invitation.seat_token), timeout=10
            )
        except grpc.aio.AioRpcError:
            pass


def hold_lobby(
    bot: Union[Bot, Callable[[], Bot]],
    address: str,
    key: str,
    *,
    max_matches: int = 1,
    profiles: tuple = ALL_PROFILES,
    seats: tuple = (2, 3, 4),
    drain: Optional[threading.Event] = None,
    on_event: Callable[[str, object], None] = _log_event,
    max_backoff: float = 30.0,
    first_backoff: float = 0.25,
    stats: Optional[LobbyStats] = None,
    transport: Optional[str] = None,
) -> LobbyStats:
    """Holds the version's lobby and plays its invitations until ``drain`` is set (then drains and
    returns once every running match is over); raises :class:`LobbyError` when the ladder refuses
    the lobby for good (a bad key, a newer lobby of the same version).

    ``bot`` is a :class:`Bot` (used for every match) or a function that makes one per match, e.g.
    the class itself. Every match runs on one event loop thread, so a bot's hooks are never
    called at once from two matches; a bot that blocks in them holds up its other matches.
    ``on_event(kind, message)`` hears ``welcome``, ``waiting`` (a ``LobbyWaiting``),
    ``invitation``, ``match_ended``, ``notice``, ``played`` (``(invitation, error or None)``),
    ``dropped`` (the error), ``draining`` and ``drained``; :func:`describe` turns each into a line.

    ``transport`` is :func:`maumau_client.run`'s: by default the lobby and its matches are played
    by the Rust SDK's lobby and runner when ``maumau_engine`` is installed with them (the same
    events, the same ``stats``; the first reconnection delay is then a quarter of a second
    whatever ``first_backoff`` says), else on grpcio. A bot's exception fails its match either
    way: reported in ``played`` and ``stats.failures``, and the seat given up.
    """
    from . import native

    drain = drain if drain is not None else threading.Event()
    stats = stats if stats is not None else LobbyStats()
    make_bot: Callable[[], Bot] = (lambda: bot) if isinstance(bot, Bot) else bot  # type: ignore[assignment]
    if native.use_native(transport):
        native.hold_lobby(
            make_bot, address, key, name=getattr(bot, "name", Bot.name), max_matches=max_matches,
            profiles=profiles, seats=seats, drain=drain, on_event=on_event, max_backoff=max_backoff,
            stats=stats,
        )
        return stats

    import asyncio
    import concurrent.futures

    import grpc
    import grpc.aio

    from ._grpcio import _AioChannel, _Outbox, _play
    from .pb.maumau.v1 import ladder_pb2_grpc

    hello = ladder_pb2.LobbyHello(version_key=key, max_matches=max_matches, profiles=list(profiles), seats=list(seats))
    lock = threading.Lock()

    # Every match is a task on one event loop thread, and the matches played on one node share a
    # channel: a thread, a channel or a handshake per match would cost more than a game.
    loop = asyncio.new_event_loop()
    loop_thread = threading.Thread(target=loop.run_forever, daemon=True, name="maumau-matches")
    loop_thread.start()
    channels: dict = {}
    playing: list = []
    slots = asyncio.Semaphore(max(1, max_matches))  # bound to the loop on first use (3.10+)

    async def play(invitation: ladder_pb2.Invitation) -> None:
        error = None
        target = _target(invitation.node_address, address)
        async with slots:
            try:
                if target not in channels:
                    channels[target] = _AioChannel(
                        grpc.aio.insecure_channel(target, options=channel_options(target))
                    )
                await _play(make_bot(), target, invitation.seat_token, channels[target])
            except Exception as e:  # noqa: BLE001 - reported, the lobby goes on
                error = e
                stats.failures.append((invitation, e))
                if target in channels:
                    await _withdraw(channels[target].channel, key, invitation)
        with lock:
            on_event("played", (invitation, error))

    async def close_channels() -> None:
        for ch in channels.values():
            await ch.channel.close()

    channel = grpc.insecure_channel(address, options=channel_options(address))  # the lobby's own stream

    def event(kind: str, message) -> None:
        with lock:
            on_event(kind, message)

    backoff = first_backoff
    refused: Optional[LobbyError] = None
    try:
        ladder = ladder_pb2_grpc.LadderServiceStub(channel)
        while not drain.is_set():
            outbox = _Outbox()
            outbox.put(ladder_pb2.LobbyRequest(hello=hello))
            call = ladder.Lobby(iter(outbox))
            stats.lobbies += 1
            asked = threading.Event()  # this stream was asked to drain

            def ask_drain(call=call, outbox=outbox, asked=asked) -> None:
                while not drain.wait(0.5):
                    if call.done():
                        return
                if not call.done():
                    asked.set()
                    event("draining", None)
                    outbox.put(ladder_pb2.LobbyRequest(drain=ladder_pb2.LobbyDrain()))

            threading.Thread(target=ask_drain, daemon=True, name="maumau-lobby-drain").start()
            error: object = "the server closed the lobby"
            try:
                for response in call:
                    kind = response.WhichOneof("kind")
                    message = getattr(response, kind)
                    if kind == "welcome":
                        backoff = first_backoff
                    elif kind == "waiting":
                        stats.waiting.append(message)
                    elif kind == "match_ended":
                        stats.ended.append(message)
                    elif kind == "drained":
                        # Asked for, or the lobby's last word (a tournament is over): done.
                        if asked.is_set() or message.closed:
                            stats.drained = True  # reported last, once the players are done
                            break
                        error = "the server is stopping"  # it drained on its own: come back later
                        break
                    event(kind, message)
                    if kind == "invitation":
                        stats.invitations += 1
                        playing.append(asyncio.run_coroutine_threadsafe(play(message), loop))
            except grpc.RpcError as e:
                if e.code() in _fatal_codes():
                    refused = _refused("the ladder refused the lobby", e)
                    break
                error = e
            finally:
                outbox.close()
                call.cancel()
            if stats.drained or drain.is_set():
                break
            event("dropped", error)
            drain.wait(backoff)
            backoff = min(backoff * 2, max_backoff)
    finally:
        concurrent.futures.wait(playing)
        asyncio.run_coroutine_threadsafe(close_channels(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        loop_thread.join()
        loop.close()
        channel.close()
    if refused is not None:
        raise refused
    if stats.drained:
        event("drained", None)
    return stats
