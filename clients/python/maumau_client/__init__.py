"""Python client of Mau Mau Arena: generated gRPC code (``maumau_client.pb``) and a thin bot helper.

    from maumau_client import Bot, run

    class First(Bot):
        def decide(self, prompt):
            return prompt.legal_actions[0].index

    report = run(First(), "127.0.0.1:50051", token)

Ladder bots: :func:`register` a version, then :func:`hold_lobby` plays its invitations (see
``maumau_client.lobby``).

``maumau_client.deals`` recomputes a finished match's deals from its revealed seed and checks
them against what a seat saw (``DealRecorder``, ``check_deals``).

``maumau_client.native`` chooses the transport: with ``maumau_engine`` installed, ``run`` and
``hold_lobby`` play on the Rust SDK's runner (a quarter of grpcio's CPU time a decision in a
lobby), else on grpcio; ``transport="grpcio"`` or ``MAUMAU_PYTHON_TRANSPORT=grpcio`` keeps grpcio.

``maumau_client.serve.LocalServer`` runs a real ``maumau serve`` on a free loopback port, for a
bot's own tests.
"""

from typing import TYPE_CHECKING

from . import native
from .bot import Bot, MatchError, run, seed_commitment, verify_seed

if TYPE_CHECKING:  # what __getattr__ below imports on first use, for type checkers
    from . import deals
    from ._grpcio import RunStats
    from .lobby import LobbyError, LobbyStats, Registration, describe, hold_lobby, lobby_from_env, register

# Imported on first use (PEP 562), so that a bot launched once per match imports only what it plays
# with: ``from maumau_client import hold_lobby`` and ``maumau_client.deals`` work as ever.
_LAZY = {
    "deals": "deals", "RunStats": "_grpcio",
    "LobbyError": "lobby", "LobbyStats": "lobby", "Registration": "lobby", "describe": "lobby",
    "hold_lobby": "lobby", "lobby_from_env": "lobby", "register": "lobby",
}


def __getattr__(name: str):
    import importlib

    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    loaded = importlib.import_module(f".{module}", __name__)
    return loaded if name == module else getattr(loaded, name)


def __dir__() -> list:
    return sorted(__all__)


__all__ = [
    "Bot", "LobbyError", "LobbyStats", "MatchError", "Registration", "RunStats", "deals",
    "describe", "hold_lobby", "lobby_from_env", "native", "register", "run", "seed_commitment", "verify_seed",
]
__version__ = "0.1.0"
