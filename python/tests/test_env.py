"""The PettingZoo AEC environment: PettingZoo's own API and seed tests for every profile and
option, and the documented rewards."""

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import maumau_engine as mm
from maumau_engine.env import MauMauEnv, env


@pytest.mark.parametrize("reward", ["win", "score"])
def test_pettingzoos_api_test_passes(config, reward):
    api_test(env(reward=reward, **config), num_cycles=300)


def test_pettingzoos_seed_test_passes(config):
    seed_test(lambda: env(**config), num_cycles=300)


def play(e, seed):
    """Plays one match with the first legal action; returns each agent's summed reward."""
    e.reset(seed=seed)
    total = {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, termination, truncation, _ = e.last()
        total[agent] += reward
        if termination or truncation:
            e.step(None)
            continue
        assert obs["action_mask"].dtype == np.int8
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
    return total


def test_win_rewards_add_up_to_zero_and_rank_the_winner_first():
    e = MauMauEnv(profile="classic", seats=3, reward="win")
    total = play(e, 4)
    assert abs(sum(total.values())) < 1e-4
    placings = e.game.result()["placings"]
    best = max(total.values())
    for agent, p in zip(e.possible_agents, placings):
        if p == 1:
            assert total[agent] == pytest.approx(best)


def test_score_rewards_are_round_points_over_100_plus_the_placing():
    e = MauMauEnv(profile="classic", seats=2, options="single_round", reward="score")
    total = play(e, 9)
    result = e.game.result()
    for i, agent in enumerate(e.possible_agents):
        placing_reward = 1 - 2 * (result["placings"][i] - 1)
        assert total[agent] == pytest.approx(-result["totals"][i] / 100 + placing_reward, abs=1e-5)


def test_only_the_seat_to_act_has_actions_and_a_refused_one_changes_nothing():
    e = MauMauEnv(profile="brazilian", seats=4)
    e.reset(seed=1)
    selected = e.agent_selection
    for agent in e.possible_agents:
        mask = e.observe(agent)["action_mask"]
        assert mask.any() == (agent == selected)
    before = e.game.position()
    illegal = int(np.flatnonzero(e.observe(selected)["action_mask"] == 0)[0])
    with pytest.raises(mm.RejectedAction):
        e.step(illegal)
    assert e.game.position() == before and e.agent_selection == selected
    with pytest.raises(mm.InvalidConfig):
        MauMauEnv(reward="money")


def test_ansi_render_shows_the_table():
    e = MauMauEnv(profile="romanian-32", seats=3, render_mode="ansi")
    e.reset(seed=2)
    assert "romanian-32 with 3 seats" in e.render()


def test_observations_are_read_only_buffers_that_match_the_game_at_every_step():
    e = MauMauEnv(profile="penalty-points", seats=3)
    e.reset(seed=5)
    for _ in range(200):
        obs, _, termination, _, _ = e.last()
        if termination:
            break
        assert not obs["observation"].flags.writeable and not obs["action_mask"].flags.writeable
        for other in e.possible_agents:
            vector, mask = e.game.observe(e._index[other])
            seen = e.observe(other)
            assert np.array_equal(seen["observation"], vector)
            assert np.array_equal(seen["action_mask"], mask)
        e.step(int(np.flatnonzero(obs["action_mask"])[0]))
        assert e.game.is_over or e.agent_selection == e.possible_agents[e.game.to_act]


def test_the_native_protocol_agrees_with_pettingzoos_own_methods_at_every_step(config):
    """`last`, `agent_iter` and the dicts are native (AecBase); PettingZoo's own `AECEnv.last`
    and `AECEnv.agent_iter`, reading the same dicts, must see the same thing at every step."""
    from pettingzoo import AECEnv

    native = MauMauEnv(reward="score", **config)
    assert isinstance(native, AECEnv)
    native.reset(seed=3)
    steps = 0
    for agent, theirs in zip(native.agent_iter(), AECEnv.agent_iter(native)):
        assert agent == theirs == native.agent_selection
        obs, reward, termination, truncation, info = native.last()
        their_obs, *rest = AECEnv.last(native)
        assert [reward, termination, truncation, info] == rest
        assert reward == native._cumulative_rewards[agent]
        assert set(native.rewards) == set(native.terminations) == set(native.agents)
        assert set(native.truncations) == set(native.infos) == set(native._cumulative_rewards)
        for key in ("observation", "action_mask"):
            assert np.array_equal(obs[key], their_obs[key])
        if termination or truncation:
            native.step(None)
            continue
        native.step(int(np.flatnonzero(obs["action_mask"])[-1]))
        steps += 1
        if steps == 3000:
            break
    assert steps > 0
