"""The Mau Mau Arena rules engine for Python.

``Game`` is the Rust engine's match (same seed and actions, same match as the server);
``VecEnv`` steps N matches from numpy arrays without the GIL; ``maumau_engine.env`` holds the
PettingZoo AEC environment (``pip install maumau-engine[env]``); ``maumau_engine.wire`` encodes a
gRPC prompt's observation as the same vector, for a trained policy playing as a bot. The
observation vector's layout is ``OBS_LAYOUT`` (name -> (start, end)) and the package README.

Every error derives from ``MaumauError`` (a ``ValueError``); an action the engine refuses raises
``RejectedAction`` with the engine's ``code`` and leaves the game unchanged.
"""

from ._core import (
    ACTION_COUNT,
    ACTION_TEXTS,
    MAX_SEATS,
    OBS_LAYOUT,
    OBS_LEN,
    Game,
    InvalidAction,
    InvalidConfig,
    InvalidPosition,
    MaumauError,
    RejectedAction,
    VecEnv,
)

PROFILES = ("classic", "penalty-points", "brazilian", "romanian-32")
"""The four rule profiles."""

__all__ = [
    "ACTION_COUNT",
    "ACTION_TEXTS",
    "MAX_SEATS",
    "OBS_LAYOUT",
    "OBS_LEN",
    "PROFILES",
    "Game",
    "InvalidAction",
    "InvalidConfig",
    "InvalidPosition",
    "MaumauError",
    "RejectedAction",
    "VecEnv",
]
