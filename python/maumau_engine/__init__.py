"""The Mau Mau Arena rules engine for Python.

``Game`` is the Rust engine's match (same seed and actions, same match as the server);
``VecEnv`` steps N matches from numpy arrays without the GIL; ``maumau_engine.env`` holds the
PettingZoo AEC environment and ``maumau_engine.gym`` the single-agent Gymnasium environment
against built-in bots (``pip install maumau-engine[env]``); ``maumau_engine.wire`` encodes a
gRPC prompt's observation as the same vector, for a trained policy playing as a bot. The
observation vector's layout is ``OBS_LAYOUT`` (name -> (start, end)) and the package README.

The built-in bots (``BOTS``: random, heuristic, search) play at engine speed: ``Bot`` chooses
for a seat of a ``Game``, ``Table`` plays a match whose other seats they play, and
``evaluate(policy, opponents, games=...)`` measures a policy against them with 95% intervals.

Every error derives from ``MaumauError`` (a ``ValueError``); an action the engine refuses raises
``RejectedAction`` with the engine's ``code`` and leaves the game unchanged.
"""

from ._core import (
    ACTION_COUNT,
    ACTION_TEXTS,
    BOTS,
    MAX_SEATS,
    OBS_LAYOUT,
    OBS_LEN,
    Bot,
    Game,
    InvalidAction,
    InvalidConfig,
    InvalidPosition,
    MaumauError,
    RejectedAction,
    Table,
    VecEnv,
)
from .evaluation import Estimate, Evaluation, evaluate

PROFILES = ("classic", "penalty-points", "brazilian", "romanian-32")
"""The four rule profiles."""

__all__ = [
    "ACTION_COUNT",
    "ACTION_TEXTS",
    "BOTS",
    "MAX_SEATS",
    "OBS_LAYOUT",
    "OBS_LEN",
    "PROFILES",
    "Bot",
    "Estimate",
    "Evaluation",
    "Game",
    "InvalidAction",
    "InvalidConfig",
    "InvalidPosition",
    "MaumauError",
    "RejectedAction",
    "Table",
    "VecEnv",
    "evaluate",
]
