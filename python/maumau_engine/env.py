"""The PettingZoo AEC environment of Mau Mau (``pip install maumau-engine[env]``).

``MauMauEnv(profile="classic", seats=4, options="-", calls="challenge", reward="win",
max_turns_per_round=1000, max_rounds=1000, render_mode=None)`` plays one match of any profile
and option set. Agents are ``seat_0`` ... ``seat_{seats-1}``; the agent selected is always the
engine's seat to act, so out-of-turn actions (a challenge by a seat that is not to move, a
romanian-32 late cure) are not offered: play them through ``Game`` if you need them.

- action space: ``Discrete(202)``, the engine's dense action index (``ACTION_TEXTS[i]`` is
  its text);
- observation: ``{"observation": float32[OBS_LEN], "action_mask": int8[202]}``; the vector's
  layout is ``OBS_LAYOUT`` and the package README, the mask is 1 for the selected agent's legal
  actions and all 0 for every other agent. The dict is new at every call; the two arrays are
  read-only views of a buffer allocated once per agent and overwritten in place: an agent's
  arrays are valid until the next ``step()`` or ``reset()``; copy what you keep
  (``obs["observation"].copy()``);
- rewards (``reward="win"`` or ``"score"``), given to every seat when a round or the match ends:
  see the package README. A match ends by the rules (or its turn and round guards), so every
  agent terminates together; truncations are never set.

An action outside the mask raises ``RejectedAction`` (with the engine's ``code``) and changes
nothing, unless the engine accepts it (a play with another call word is legal but may be
challenged).
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from ._core import ACTION_COUNT, OBS_LEN, AecBase, Game


def env(**kwargs) -> AECEnv:
    """The environment inside PettingZoo's order-enforcing and bounds-checking wrappers."""
    e = MauMauEnv(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


class MauMauEnv(AecBase, AECEnv):
    """One match of Mau Mau as a PettingZoo AEC environment (see the module docs).

    The protocol is native (``AecBase``, in Rust): ``last``, ``step``, ``observe`` and
    ``agent_iter`` run no Python code, and ``agents``, ``agent_selection``, ``rewards``,
    ``_cumulative_rewards``, ``terminations``, ``truncations`` and ``infos`` are the list, string
    and dicts PettingZoo expects, updated in place at every step. This class adds the spaces,
    ``reset``'s seeding and rendering."""

    metadata = {"render_modes": ["human", "ansi"], "name": "maumau_v0", "is_parallelizable": False}

    def __init__(
        self,
        profile: str = "classic",
        seats: int = 4,
        options: str = "-",
        calls: str = "challenge",
        reward: str = "win",
        max_turns_per_round: int = 1000,
        max_rounds: int = 1000,
        render_mode: str | None = None,
    ):
        super().__init__()
        self._config = dict(
            profile=profile,
            seats=seats,
            options=options,
            calls=calls,
            max_turns_per_round=max_turns_per_round,
            max_rounds=max_rounds,
        )
        self.reward_mode = reward
        self.render_mode = render_mode
        self.possible_agents = [f"seat_{i}" for i in range(seats)]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        # Checks the configuration (Game) and the reward mode (_bind) now: InvalidConfig.
        self._bind(
            Game(seed=0, **self._config), reward, self.possible_agents, render_mode == "human"
        )
        self._action_space = spaces.Discrete(ACTION_COUNT)
        self._observation_space = spaces.Dict(
            {
                "observation": spaces.Box(low=0.0, high=np.inf, shape=(OBS_LEN,), dtype=np.float32),
                "action_mask": spaces.Box(low=0, high=1, shape=(ACTION_COUNT,), dtype=np.int8),
            }
        )
        self._np_random, _ = seeding.np_random(None)

    def observation_space(self, agent):
        return self._observation_space

    def action_space(self, agent):
        return self._action_space

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deals a new match. With ``seed``, the match (and every later one until the next seeded
        reset) is fixed by it."""
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
        match_seed = int(self._np_random.integers(0, 2**63 - 1))
        self._deal(Game(seed=match_seed, **self._config))

    def render(self):
        if self.render_mode is None:
            return None
        text = str(self.game)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass
