"""A single-agent Gymnasium environment: the learner plays one seat, built-in bots the others
(``pip install maumau-engine[env]``).

``MauMauGym(profile="classic", seats=2, opponents="random", seat=None, options="-",
calls="challenge", reward="win", observation="vector", illegal="first", illegal_penalty=0.0,
max_turns_per_round=1000, max_rounds=1000, render_mode=None)``. Importing this module registers
it as ``"MauMau-v0"``, so ``gymnasium.make("maumau_engine.gym:MauMau-v0", opponents="heuristic")``
works without importing it first.

- an episode is one match; the bots' turns are played inside ``reset`` and ``step`` at engine
  speed (``Table``), so every ``step`` is one decision of the learner's. A match ends by the
  rules (or its turn and round guards): ``terminated`` is set, ``truncated`` never.
- ``opponents``: a bot name (``random``, ``heuristic``, ``search``, ``search:N``) for every other
  seat, or a list with one name per other seat, clockwise after the learner.
- ``seat``: the learner's seat, or ``None`` to draw it for every episode from the environment's
  random generator (so ``reset(seed=...)`` fixes it too); ``reset(options={"seat": k})`` sets it
  for one episode.
- action space: ``Discrete(202)``, the engine's dense action index (``ACTION_TEXTS[i]``).
  ``action_masks()`` gives the legal actions as bools (what sb3-contrib's ``MaskablePPO``
  calls). An action outside the mask is replaced by the first legal action
  (``illegal="first"``, as the engine's bot runners do) and ``illegal_penalty`` is subtracted
  from the reward, ``info["illegal_action"]`` set; ``illegal="raise"`` hands it to the engine
  as it is, which raises ``RejectedAction`` if it refuses it.
- observation: ``observation="vector"`` gives the AEC environment's float32 vector of
  ``OBS_LEN`` (``OBS_LAYOUT``), ``"dict"`` gives ``{"observation": float32[OBS_LEN],
  "action_mask": int8[202]}`` as the AEC environment does. New arrays at every call.
- reward: the learner's reward of the ``win`` or ``score`` mode (package README) from its action
  and the bots' actions up to its next decision.
- ``info``: ``seat`` (the learner's), ``match_seed``; after a step ``illegal_action``, and at the
  match's end ``result`` (``Game.result()``: placings, totals, ...).

A match that ends before the learner's first decision (possible only in a one-round match) is
dealt again from the next seed.
"""

from __future__ import annotations

from typing import Any, Sequence, Union

import gymnasium
import numpy as np
from gymnasium import spaces

from ._core import ACTION_COUNT, OBS_LEN, Table

__all__ = ["MauMauGym"]


class MauMauGym(gymnasium.Env):
    """One seat of Mau Mau against built-in bots, as a Gymnasium environment (see the module
    docs)."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 4}

    def __init__(
        self,
        profile: str = "classic",
        seats: int = 2,
        opponents: Union[str, Sequence[str]] = "random",
        seat: int | None = None,
        options: str = "-",
        calls: str = "challenge",
        reward: str = "win",
        observation: str = "vector",
        illegal: str = "first",
        illegal_penalty: float = 0.0,
        max_turns_per_round: int = 1000,
        max_rounds: int = 1000,
        render_mode: str | None = None,
    ):
        if isinstance(seats, bool) or not isinstance(seats, int) or seats < 2:
            raise ValueError(f"seats is the table's size, 2 or more, got {seats!r}")
        names = [opponents] * (seats - 1) if isinstance(opponents, str) else list(opponents)
        if len(names) != seats - 1:
            raise ValueError(
                f"{seats} seats need {seats - 1} opponents (or one name for all), got {names}"
            )
        if seat is not None and not (isinstance(seat, int) and 0 <= seat < seats):
            raise ValueError(f"seat is the learner's seat, 0 to {seats - 1}, or None; got {seat!r}")
        if observation not in ("vector", "dict"):
            raise ValueError(f"observation is 'vector' or 'dict', got {observation!r}")
        if illegal not in ("first", "raise"):
            raise ValueError(f"illegal is 'first' or 'raise', got {illegal!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode is 'human', 'ansi' or None, got {render_mode!r}")
        self.opponents = tuple(names)
        self.seat = seat
        self.illegal = illegal
        self.illegal_penalty = float(illegal_penalty)
        self.render_mode = render_mode
        # One table per seat of the learner, the opponents clockwise after it. Bad bot names,
        # rules or reward modes raise InvalidConfig (a ValueError) here.
        self._tables = []
        for p in range(seats):
            bots: list[str | None] = [None] * seats
            for j, name in enumerate(names):
                bots[(p + 1 + j) % seats] = name
            self._tables.append(
                Table(
                    bots,
                    profile=profile,
                    options=options,
                    calls=calls,
                    reward=reward,
                    max_turns_per_round=max_turns_per_round,
                    max_rounds=max_rounds,
                )
            )
        self.action_space = spaces.Discrete(ACTION_COUNT)
        vector = spaces.Box(low=0.0, high=np.inf, shape=(OBS_LEN,), dtype=np.float32)
        if observation == "dict":
            self.observation_space = spaces.Dict(
                {
                    "observation": vector,
                    "action_mask": spaces.Box(low=0, high=1, shape=(ACTION_COUNT,), dtype=np.int8),
                }
            )
        else:
            self.observation_space = vector
        self._dict = observation == "dict"
        self._table = self._tables[0]
        self._learner = 0
        self._match_seed = 0
        self._mask = np.zeros(ACTION_COUNT, bool)
        self._carry = 0.0

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        """Deals a new match; the learner's seat and the deal come from the environment's random
        generator (seeded by ``seed``). ``options={"seat": k}`` seats the learner at ``k``."""
        super().reset(seed=seed)
        seats = len(self._tables)
        seat = (options or {}).get("seat", self.seat)
        if seat is None:
            seat = int(self.np_random.integers(seats))
        elif not (isinstance(seat, (int, np.integer)) and 0 <= seat < seats):
            raise ValueError(f"options['seat'] is a seat, 0 to {seats - 1}; got {seat!r}")
        self._learner = int(seat)
        self._table = self._tables[self._learner]
        while True:
            self._match_seed = int(self.np_random.integers(0, 2**63 - 1))
            if self._table.reset(self._match_seed) is not None:
                break
        # The bots' actions before the learner's first decision may have ended a round: their
        # reward comes with the first step's.
        self._carry = self._table.rewards[self._learner]
        if self.render_mode == "human":
            self.render()
        return self._observe(), {"seat": self._learner, "match_seed": self._match_seed}

    def step(self, action) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        """Plays the learner's action and the bots' after it, up to the learner's next decision
        or the match's end."""
        penalty = 0.0
        illegal = False
        a = action
        if self.illegal == "first":
            a = int(action)
            if not (0 <= a < ACTION_COUNT and self._mask[a]):
                illegal = True
                penalty = self.illegal_penalty
                a = int(np.flatnonzero(self._mask)[0])
        to_act = self._table.step(a)
        reward = self._table.rewards[self._learner] + self._carry - penalty
        self._carry = 0.0
        terminated = to_act is None
        info: dict[str, Any] = {
            "seat": self._learner,
            "match_seed": self._match_seed,
            "illegal_action": illegal,
        }
        if terminated:
            info["result"] = self._table.game().result()
        if self.render_mode == "human":
            self.render()
        return self._observe(), float(reward), terminated, False, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as bools over the 202 dense indices (all false once the
        match is over); what sb3-contrib's ``MaskablePPO`` asks for."""
        return self._mask.copy()

    def render(self):
        if self.render_mode is None:
            return None
        text = str(self._table.game())
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    def _observe(self):
        obs, self._mask = self._table.observe(self._learner)
        if self._dict:
            return {"observation": obs, "action_mask": self._mask.astype(np.int8)}
        return obs


if "MauMau-v0" not in gymnasium.registry:
    gymnasium.register(id="MauMau-v0", entry_point="maumau_engine.gym:MauMauGym")
