"""The single-agent Gymnasium environment: Gymnasium's own checker, deterministic seeded
resets, the documented rewards, masks and illegal actions, and the training example."""

import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import maumau_engine as mm
from maumau_engine.gym import MauMauGym

# The raw counts of the observation vector have no upper bound; check_env warns about it.
pytestmark = pytest.mark.filterwarnings("ignore:.*maximum value is infinity:UserWarning")


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(),
        dict(profile="brazilian", seats=4, opponents=["heuristic", "random", "search:10"]),
        dict(profile="romanian-32", seats=3, opponents="heuristic", observation="dict"),
        dict(profile="penalty-points", seats=3, reward="score", seat=2),
    ],
)
def test_gymnasiums_check_env_passes(kwargs):
    env = gymnasium.make("maumau_engine.gym:MauMau-v0", **kwargs)
    check_env(env.unwrapped)
    env.close()


def play(env, seed, options=None):
    """One episode with a seeded random legal policy: every step's (obs, reward, info)."""
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed, options=options)
    steps = [(obs, 0.0, info)]
    while True:
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, terminated, truncated, info = env.step(action)
        assert not truncated
        steps.append((obs, reward, info))
        if terminated:
            return steps


def test_a_seeded_reset_replays_the_same_episode():
    a = MauMauGym(profile="classic", seats=3, opponents=["search:10", "heuristic"])
    b = MauMauGym(profile="classic", seats=3, opponents=["search:10", "heuristic"])
    first = play(a, 17)
    for again in (play(b, 17), play(a, 17)):
        assert len(again) == len(first) > 5
        for (o1, r1, i1), (o2, r2, i2) in zip(first, again):
            np.testing.assert_array_equal(o1, o2)
            assert r1 == r2 and i1.keys() == i2.keys() and i1["seat"] == i2["seat"]
    assert play(a, 18)[0][2]["match_seed"] != first[0][2]["match_seed"]


def test_the_learners_seat_rotates_by_seed_unless_fixed():
    env = MauMauGym(seats=3)
    seats = {env.reset(seed=s)[1]["seat"] for s in range(30)}
    assert seats == {0, 1, 2}
    fixed = MauMauGym(seats=3, seat=1)
    assert {fixed.reset(seed=s)[1]["seat"] for s in range(10)} == {1}
    assert fixed.reset(seed=0, options={"seat": 2})[1]["seat"] == 2
    with pytest.raises(ValueError):
        fixed.reset(options={"seat": 3})


def test_score_rewards_add_up_to_the_match_total_and_the_placing():
    env = MauMauGym(profile="classic", seats=2, options="single_round", reward="score")
    for seed in range(5):
        steps = play(env, seed)
        seat, result = steps[-1][2]["seat"], steps[-1][2]["result"]
        placing_reward = 1 - 2 * (result["placings"][seat] - 1)
        total = sum(r for _, r, _ in steps)
        assert total == pytest.approx(-result["totals"][seat] / 100 + placing_reward, abs=1e-5)


def test_the_mask_is_the_learners_legal_actions_in_both_observation_forms():
    env = MauMauGym(profile="brazilian", seats=4, opponents="heuristic", observation="dict")
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs)
    np.testing.assert_array_equal(obs["action_mask"], env.action_masks().astype(np.int8))
    table = env._table
    assert list(np.flatnonzero(env.action_masks())) == sorted(table.legal_actions())
    assert table.to_act == info["seat"]
    np.testing.assert_array_equal(obs["observation"], table.game().observation_vector(info["seat"]))


def test_an_illegal_action_plays_the_first_legal_one_or_raises():
    env = MauMauGym(illegal_penalty=0.5)
    env.reset(seed=1)
    mask = env.action_masks()
    first = int(np.flatnonzero(mask)[0])
    illegal = int(np.flatnonzero(~mask)[0])
    replaced = MauMauGym()
    replaced.reset(seed=1)
    expected = replaced.step(first)
    obs, reward, terminated, _, info = env.step(illegal)
    assert info["illegal_action"] and not expected[4]["illegal_action"]
    np.testing.assert_array_equal(obs, expected[0])
    assert reward == pytest.approx(expected[1] - 0.5)
    strict = MauMauGym(illegal="raise")
    strict.reset(seed=1)
    with pytest.raises(mm.RejectedAction):
        strict.step(illegal)


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(seats=1),
        dict(seats=3, opponents=["random"]),
        dict(opponents="greedy"),
        dict(seat=2),
        dict(observation="image"),
        dict(illegal="ignore"),
        dict(reward="money"),
        dict(render_mode="rgb_array"),
    ],
)
def test_bad_arguments_raise_value_errors(kwargs):
    with pytest.raises(ValueError):
        MauMauGym(**kwargs)


def test_ansi_render_shows_the_table():
    env = MauMauGym(profile="romanian-32", seats=3, render_mode="ansi")
    env.reset(seed=2)
    assert "romanian-32 with 3 seats" in env.render()


def test_the_training_example_runs_with_numpy_alone():
    """examples/python/gym_train.py: trains for a second and evaluates (without sb3)."""
    example = Path(__file__).resolve().parents[2] / "examples" / "python" / "gym_train.py"
    out = subprocess.run(
        [sys.executable, str(example), "--seconds", "1", "--games", "8"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    assert "numpy REINFORCE:" in out and out.count("over 8 games against random") == 3
