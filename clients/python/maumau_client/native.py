"""The native transport: :func:`maumau_client.run` and :func:`maumau_client.hold_lobby` played by
the Rust SDK's runner, when ``maumau_engine`` (with its native runner) is installed.

The Rust runner (in ``maumau_engine._core``, loaded without importing the rest of
``maumau_engine`` or numpy) owns the connection, the resume after a dropped stream and, for
``hold_lobby``, the lobby, its reconnects, the drain and the WithdrawSeat of a seat whose player
failed. The bot is the same :class:`maumau_client.Bot` and sees the same objects: each prompt
reaches ``decide`` as a ``play_pb2.DecisionPrompt`` parsed from the bytes Rust encoded, and a
hook is called only when the bot's class overrides it, so a bot with only ``decide`` costs one
parse and one call per decision. The GIL is released while the runner waits on the network.

Which transport plays is chosen by :func:`use_native`: the ``transport`` argument, else
``$MAUMAU_PYTHON_TRANSPORT``, each ``auto`` (native when available; the default), ``native``
(an error when not available) or ``grpcio`` (the pure-Python stack, always there). This module
never needs ``maumau_engine``: without it, everything plays on grpcio.
"""

from __future__ import annotations

import importlib.machinery
import os
import sys
import threading
from typing import TYPE_CHECKING, Callable, Optional

from .bot import Bot, MatchError
from .pb.maumau.v1 import play_pb2, record_pb2

if TYPE_CHECKING:
    import grpc

__all__ = ["TRANSPORT_VAR", "TRANSPORTS", "available", "use_native"]

#: The environment variable that chooses the transport when the caller does not.
TRANSPORT_VAR = "MAUMAU_PYTHON_TRANSPORT"
#: The transports by name: ``auto`` (native when available), ``native`` and ``grpcio``.
TRANSPORTS = ("auto", "native", "grpcio")

_lock = threading.Lock()
_loaded: list = []  # [module or None] once looked for


def _find_core():
    """``maumau_engine._core`` if it is installed with the native runner, else None. Loaded by
    itself when the package is not imported yet: the package's ``__init__`` imports numpy, which
    a bot launched once per match should not pay for."""
    module = sys.modules.get("maumau_engine._core")
    if module is None:
        spec = importlib.machinery.PathFinder.find_spec("maumau_engine")
        if spec is None:  # installed where only a finder of its own knows (an editable install)
            from importlib.util import find_spec

            try:
                spec = find_spec("maumau_engine")
            except (ImportError, ValueError):
                return None
        if spec is None or not spec.submodule_search_locations:
            return None
        for folder in spec.submodule_search_locations:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = os.path.join(folder, "_core" + suffix)
                if not os.path.isfile(path):
                    continue
                loader = importlib.machinery.ExtensionFileLoader("maumau_engine._core", path)
                core_spec = importlib.machinery.ModuleSpec("maumau_engine._core", loader, origin=path)
                try:
                    module = loader.create_module(core_spec)
                    loader.exec_module(module)
                except ImportError:
                    return None
                sys.modules["maumau_engine._core"] = module
                break
            if module is not None:
                break
    if module is None or not hasattr(module, "play_seat"):
        return None
    return module


def _core():
    with _lock:
        if not _loaded:
            _loaded.append(_find_core())
        return _loaded[0]


def available() -> bool:
    """True when ``maumau_engine`` is installed with the native runner."""
    return _core() is not None


def use_native(transport: Optional[str], unsupported: str = "") -> bool:
    """Whether to play on the native runner: ``transport`` (else ``$MAUMAU_PYTHON_TRANSPORT``,
    else ``auto``). ``unsupported`` names what the caller asked for that only grpcio does (a
    channel of its own, ``stats``, ``from_start``): ``auto`` then plays on grpcio, and
    ``native`` refuses."""
    name = (transport or os.environ.get(TRANSPORT_VAR, "").strip() or "auto").lower()
    if name not in TRANSPORTS:
        raise ValueError(f"transport {name!r} is none of {', '.join(TRANSPORTS)}")
    if name == "grpcio":
        return False
    if name == "native":
        if not available():
            raise RuntimeError(
                "the native transport needs maumau_engine with its runner (pip install maumau-engine)"
            )
        if unsupported:
            raise ValueError(f"the native transport does not support {unsupported}: use transport='grpcio'")
        return True
    return not unsupported and available()


def _overrides(bot: Bot, name: str) -> Optional[Callable]:
    """The bot's method ``name`` when its class (or the instance) replaces :class:`Bot`'s."""
    method = getattr(bot, name)
    return None if getattr(method, "__func__", method) is getattr(Bot, name) else method


# The hooks the runner may call: the part's kind, the method, the message it is handed.
_HOOKS = (
    ("welcome", "on_welcome", play_pb2.Welcome),
    ("snapshot", "on_snapshot", play_pb2.Snapshot),
    ("event", "on_event", play_pb2.NumberedEvent),
    ("rejected", "on_rejected", play_pb2.ActionRejected),
    ("finished", "on_finished", record_pb2.MatchReport),
    ("message", "on_message", play_pb2.ServerMessage),
)


def _player(bot: Bot) -> tuple:
    """What the Rust runner calls for ``bot`` (see ``python/src/runner.rs``)."""
    hooks = {}
    for kind, name, message in _HOOKS:
        method = _overrides(bot, name)
        if method is not None:
            hooks[kind] = (method, message.FromString)
    disconnect = _overrides(bot, "on_disconnect")

    def on_disconnect(why: str, attempt: int, disconnect=disconnect) -> None:
        # The warning grpcio logs too; logging is imported only when a stream drops, since a bot
        # launched once per match pays for every import.
        import logging

        logging.getLogger("maumau_client").warning("stream dropped (%s); resuming (attempt %d)", why, attempt)
        if disconnect is not None:
            disconnect(ConnectionError(why), attempt)

    return (bot.decide, _overrides(bot, "decide_optional"), play_pb2.DecisionPrompt.FromString, hooks,
            on_disconnect)


def _status(code: int) -> Optional[grpc.StatusCode]:
    import grpc

    return next((c for c in grpc.StatusCode if c.value[0] == code), None) if code else None


def run(bot: Bot, address: str, token: str, name: str, max_reconnects: int, batched: bool) -> record_pb2.MatchReport:
    """:func:`maumau_client.run` on the native runner."""
    core = _core()
    try:
        report = core.play_seat(_player(bot), address, token, name, max_reconnects, batched)
    except core.TransportError as e:
        message, reason, code = e.args
        raise MatchError(message, reason, _status(code)) from None
    return record_pb2.MatchReport.FromString(report)


def hold_lobby(make_bot: Callable[[], Bot], address: str, key: str, *, name: str, max_matches: int,
               profiles: tuple, seats: tuple, drain: threading.Event, on_event: Callable[[str, object], None],
               max_backoff: float, stats) -> None:
    """:func:`maumau_client.hold_lobby` on the native runner; fills ``stats`` as grpcio does."""
    from .lobby import LobbyError  # lobby imports this module
    from .pb.maumau.v1 import ladder_pb2

    core = _core()
    # Lobby events whose payload is a message's bytes.
    messages = {
        "welcome": ladder_pb2.LobbyWelcome,
        "waiting": ladder_pb2.LobbyWaiting,
        "invitation": ladder_pb2.Invitation,
        "match_ended": ladder_pb2.LadderMatchEnded,
        "notice": ladder_pb2.LobbyNotice,
    }

    def event(kind: str, payload) -> None:
        message = payload
        if kind in messages:
            message = messages[kind].FromString(payload)
            if kind == "welcome":
                stats.lobbies += 1
            elif kind == "waiting":
                stats.waiting.append(message)
            elif kind == "match_ended":
                stats.ended.append(message)
            elif kind == "invitation":
                stats.invitations += 1
        elif kind == "played":
            invitation, error = payload
            if isinstance(error, str):
                error = MatchError(error)
            message = (ladder_pb2.Invitation.FromString(invitation), error)
            if error is not None:
                stats.failures.append(message)
        elif kind == "drained":
            stats.drained = True
        on_event(kind, message)

    try:
        core.hold_lobby(lambda: _player(make_bot()), address, key, name, event, drain.is_set,
                        max_matches=max_matches, profiles=list(profiles), seats=list(seats),
                        max_backoff=max_backoff)
    except core.TransportError as e:
        message, reason, code = e.args
        raise LobbyError(message, reason, _status(code)) from None
