"""A thin helper for Mau Mau Arena bots: subclass :class:`Bot`, implement :meth:`Bot.decide`, call
:func:`run`.

``run`` opens ``PlayService.Play``, sends ``Join{token}``, answers every required
``DecisionPrompt`` with the index the bot picks, and returns the ``MatchReport`` of
``MatchFinished``. When the connection drops it opens a new stream with
``Join{token, resume{last_event_number}}`` and carries on, so the bot sees every event exactly
once (see docs/PROTOCOL.md, "Reconnecting").

The stream runs on asyncio (``grpc.aio``): one thread plays a match, and :func:`maumau_client.hold_lobby`
plays all of a lobby's matches as tasks on one event loop, instead of the three threads per match
(channel poller, caller, request iterator) of grpc's synchronous stack and a hand-over between them
for every message. That transport lives in ``maumau_client._grpcio``, imported (with grpc and
asyncio) only when a bot plays on it: with the native transport (:mod:`maumau_client.native`) a
bot launched once per match does not pay for importing grpc.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from .pb.maumau.v1 import play_pb2, record_pb2

if TYPE_CHECKING:
    import grpc

    from ._grpcio import RunStats

__all__ = ["Bot", "MatchError", "RunStats", "run", "seed_commitment", "verify_seed"]

def seed_commitment(seed: int, salt: bytes = b"") -> bytes:
    """SHA-256(salt ‖ seed as 8 big-endian bytes), as sent in Welcome and CreateMatchResponse.

    ``salt`` is the 16 bytes revealed with the seed (``MatchReport.seed_salt``); it is empty only
    in records written before salted commitments."""
    return _sha256(bytes(salt) + seed.to_bytes(8, "big"))


def _sha256(data: bytes) -> bytes:
    """SHA-256 of ``data`` by CPython's own implementation where it has one (``_sha2`` from 3.12,
    ``_sha256`` before), else by ``hashlib``: importing ``hashlib`` loads OpenSSL, about a
    twentieth of what a bot launched once per match spends starting."""
    try:
        from _sha2 import sha256
    except ImportError:
        try:
            from _sha256 import sha256
        except ImportError:
            from hashlib import sha256
    return sha256(data).digest()


def verify_seed(report: record_pb2.MatchReport, commitment: Optional[bytes] = None) -> bool:
    """True when the revealed seed and salt match the commitment: the one you kept from Welcome
    (pass it), else the one the report repeats. :mod:`maumau_client.deals` goes further and
    checks the deals themselves."""
    want = report.seed_commitment if commitment is None else commitment
    return seed_commitment(report.seed, report.seed_salt) == want


def channel_options(address: str) -> list:
    """gRPC channel options for ``address``.

    A Unix socket (``unix:PATH``: how a program in ``maumau --sandbox`` reaches its server) gets
    the HTTP/2 authority ``localhost``: grpcio would otherwise send the socket's path, which the
    server refuses as an authority (the stream is reset with a protocol error).
    """
    if address.startswith("unix:"):
        return [("grpc.default_authority", "localhost")]
    return []


class MatchError(Exception):
    """The server refused the stream for good (bad token, superseded, ...), or it stayed away."""

    def __init__(self, message: str, reason: str = "", code: Optional[grpc.StatusCode] = None):
        super().__init__(message)
        self.reason = reason
        self.code = code


class Bot:
    """Base class of a bot. Only :meth:`decide` is required; every hook has a no-op default."""

    #: Shown to operators and spectators (Join.client_name).
    name = "maumau-client-python"

    def decide(self, prompt: play_pb2.DecisionPrompt) -> int:
        """Returns the dense index of one of ``prompt.legal_actions`` (``LegalAction.index``).

        Called for every required prompt. ``prompt.observation`` holds the seat's full view,
        so a bot need not follow the events.
        """
        raise NotImplementedError

    def decide_optional(self, prompt: play_pb2.DecisionPrompt) -> Optional[int]:
        """An optional prompt (``required = false``): a challenge or late cure is open. Return
        an index to act on it, or None (the default) to let it pass."""
        return None

    def on_message(self, message: play_pb2.ServerMessage) -> None:
        """Every server message, as received, before the helper handles it."""

    def on_welcome(self, welcome: play_pb2.Welcome) -> None:
        """The first message of each stream (so again after every reconnect)."""

    def on_snapshot(self, snapshot: play_pb2.Snapshot) -> None:
        """The seat's view on a first join (or when the server no longer has the missed events)."""

    def on_event(self, event: play_pb2.NumberedEvent) -> None:
        """Each event exactly once, in order of its number."""

    def on_rejected(self, rejected: play_pb2.ActionRejected) -> None:
        """An action of this seat was refused (a stale one after a reconnect is normal)."""

    def on_disconnect(self, error: Optional[BaseException], attempt: int) -> None:
        """The stream dropped; the helper reconnects after this returns."""

    def on_finished(self, report: record_pb2.MatchReport) -> None:
        """The match is over."""


def run(
    bot: Bot,
    address: str,
    token: str,
    *,
    client_name: Optional[str] = None,
    channel: Optional[grpc.Channel] = None,
    max_reconnects: int = 10,
    reconnect_delay: float = 0.2,
    connect_timeout: float = 10.0,
    stats: Optional[RunStats] = None,
    batched: bool = True,
    from_start: bool = False,
    transport: Optional[str] = None,
) -> record_pb2.MatchReport:
    """Plays one seat to the end of its match and returns the final ``MatchReport``.

    ``transport`` chooses what plays it (:mod:`maumau_client.native`): ``"auto"`` (the default,
    unless ``$MAUMAU_PYTHON_TRANSPORT`` says otherwise) plays on the Rust SDK's runner when
    ``maumau_engine`` is installed with it (half the start-up and a quarter of the CPU time a
    decision), else on grpcio; ``"grpcio"`` always on grpcio; ``"native"`` always on the Rust
    runner. The bot sees the same objects
    either way. ``channel``, ``stats`` and ``from_start`` are grpcio's alone (``auto`` plays
    them on grpcio), and so are ``reconnect_delay`` and ``connect_timeout`` (the Rust runner
    backs off from 50 ms to 2 s by itself). An exception raised by the bot ends the match
    either way and is raised here.

    ``address`` is a gRPC target such as ``127.0.0.1:50051`` (ignored when ``channel`` is
    given). A dropped stream is reopened with ``Join{resume}`` up to ``max_reconnects`` times
    in a row without hearing from the server; refusals that a new stream cannot fix (bad
    token, superseded, ...) raise :class:`MatchError`.

    ``batched=True`` (the default) joins with ``EVENT_DELIVERY_WITH_PROMPT``: the server holds the
    seat's events and the answers to its actions and sends them in one ``EventBatch`` with its
    next prompt (one message per decision instead of one per event). ``batched=False`` opts out
    and joins with ``EVENT_DELIVERY_PER_STEP``: events as they happen, each step's answer, events
    and prompt in one ``EventBatch``, for a bot that must see other seats' plays before its own
    turn. The bot sees the same messages in the same order either way (each batch is handed over
    as its answers, events and prompt); batched, it sees them later: an action's
    ``ActionAccepted`` comes with the seat's next prompt.

    ``from_start=True`` joins with ``resume{last_event_number: 0}``: the bot is handed every event
    of the match from event 1 (the deal of the first round included) instead of a first
    ``Snapshot``, which is what :mod:`maumau_client.deals` needs to check the deals.
    """
    from . import native  # it imports this module

    grpcio_only = ", ".join(
        name for name, value in (("channel", channel), ("stats", stats), ("from_start", from_start)) if value
    )
    if native.use_native(transport, grpcio_only):
        return native.run(bot, address, token, client_name or bot.name, max_reconnects, batched)
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from ._grpcio import _play, _SyncChannel

    # A channel of grpc's synchronous stack (e.g. a TLS one) gives the same play, its stream read
    # on a worker thread.
    coroutine = _play(bot, address, token, None if channel is None else _SyncChannel(channel), client_name,
                      max_reconnects, reconnect_delay, connect_timeout, stats, batched, from_start)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    # Called from a coroutine (a notebook, an async program): play on a loop of its own.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="maumau-run") as pool:
        return pool.submit(asyncio.run, coroutine).result()


# The grpcio transport's parts, at their old address (``from maumau_client.bot import RunStats``):
# RunStats counts what happened on grpcio's wire, so it lives there too.
_MOVED = {"RunStats", "_Session", "_Outbox", "_AioChannel", "_AioStream", "_SyncChannel", "_SyncStream", "_play",
          "_reason", "_result_after_end", "_FATAL_REASONS", "_RETRYABLE_CODES"}


def __getattr__(name: str):
    if name in _MOVED:
        from . import _grpcio

        return getattr(_grpcio, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
