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
  actions and all 0 for every other agent. The two arrays are read-only views of buffers
  allocated once per agent and overwritten in place: an agent's arrays are valid until the next
  ``step()`` or ``reset()``; copy what you keep (``obs["observation"].copy()``);
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

from ._core import ACTION_COUNT, OBS_LEN, AecCore, Game


def env(**kwargs) -> AECEnv:
    """The environment inside PettingZoo's order-enforcing and bounds-checking wrappers."""
    e = MauMauEnv(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


class MauMauEnv(AECEnv):
    """One match of Mau Mau as a PettingZoo AEC environment (see the module docs)."""

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
        # Checks the configuration and the reward mode now (InvalidConfig).
        self.game = Game(seed=0, **self._config)
        self._core = AecCore(self.game, reward)
        self.reward_mode = reward
        self.render_mode = render_mode
        self.possible_agents = [f"seat_{i}" for i in range(seats)]
        self.agents = []
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        # Each agent's arrays, as the user sees them: read-only views of the core's buffers.
        self._obs = {}
        self._masks = {}
        for agent, vector, mask in zip(
            self.possible_agents, self._core.observations, self._core.masks
        ):
            self._obs[agent] = vector.view()
            self._obs[agent].flags.writeable = False
            self._masks[agent] = mask.view()
            self._masks[agent].flags.writeable = False
        # The agent whose arrays hold its view of the match as it is now (the core writes the
        # selected agent's at every step), or None.
        self._fresh = None
        self._over = True
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
        self.game = Game(seed=match_seed, **self._config)
        self._core.reset(self.game)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._rewarded = False
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.to_act]
        self._fresh = self.agent_selection
        self._over = False

    def observe(self, agent):
        """The agent's observation (see the module docs: valid until the next step)."""
        if agent != self._fresh:
            self._core.observe(self._index[agent])
        return {"observation": self._obs[agent], "action_mask": self._masks[agent]}

    def last(self, observe: bool = True):
        """``(observation, cumulative reward, termination, truncation, info)`` of the selected
        agent, as ``AECEnv.last``."""
        agent = self.agent_selection
        if not observe:
            obs = None
        else:
            # observe(agent), inlined: last() is called once per decision.
            if agent != self._fresh:
                self._core.observe(self._index[agent])
            obs = {"observation": self._obs[agent], "action_mask": self._masks[agent]}
        return (
            obs,
            self._cumulative_rewards[agent],
            self.terminations[agent],
            self.truncations[agent],
            self.infos[agent],
        )

    def agent_iter(self, max_iter: int = 2**63):
        """The selected agent until every agent is done or after ``max_iter`` steps, as
        ``AECEnv.agent_iter`` (a generator: cheaper per step than PettingZoo's iterator class)."""
        return _AgentIter(self, max_iter)

    def step(self, action) -> None:
        agent = self.agent_selection
        if self._over:
            self._was_dead_step(action)
            return
        # One call applies the action and writes the next agent's observation (RejectedAction
        # changes nothing).
        to_act, rewards = self._core.step(action)
        self._cumulative_rewards[agent] = 0.0
        # Most steps end no round: no reward to hand out, and the last ones to clear only once.
        if rewards is not None:
            self.rewards = dict(zip(self.possible_agents, rewards))
            self._rewarded = True
            self._accumulate_rewards()
        elif self._rewarded:
            self.rewards = {a: 0.0 for a in self.agents}
            self._rewarded = False
        if to_act is None:
            self._over = True
            for a in self.agents:
                self.terminations[a] = True
        else:
            self.agent_selection = agent = self.possible_agents[to_act]
        self._fresh = agent
        if self.render_mode == "human":
            self.render()

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


class _AgentIter:
    """``MauMauEnv.agent_iter``'s iterable: each ``iter()`` runs up to ``max_iter`` steps, as
    PettingZoo's ``AECIterable``."""

    __slots__ = ("env", "max_iter")

    def __init__(self, env: MauMauEnv, max_iter: int):
        self.env = env
        self.max_iter = max_iter

    def __iter__(self):
        env = self.env
        for _ in range(self.max_iter):
            if not env.agents:
                return
            yield env.agent_selection
