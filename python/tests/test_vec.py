"""The vectorized environment: the same games as single `Game`s, all-or-nothing steps."""

import numpy as np
import pytest

import maumau_engine as mm


def test_the_vector_env_plays_the_same_games_as_single_games(config):
    n = 6
    venv = mm.VecEnv(n, seed=17, reward="score", **config)
    obs, mask, to_act = venv.reset()
    singles = [venv.game(i) for i in range(n)]
    seats = config["seats"]
    finished = 0
    for _ in range(400):
        actions = venv.random_actions().copy()
        assert all(mask[i, actions[i]] for i in range(n))
        obs, mask, to_act, rewards, dones = venv.step(actions)
        assert rewards.shape == (n, seats)
        for i, game in enumerate(singles):
            r = game.step(int(actions[i]), "score") or [0.0] * seats
            np.testing.assert_allclose(rewards[i], r)
            assert dones[i] == game.is_over
            if game.is_over:
                finished += 1
                singles[i] = game = venv.game(i)
            assert venv.game(i) == game
            assert to_act[i] == game.to_act
            np.testing.assert_array_equal(obs[i], game.observation_vector(game.to_act))
            np.testing.assert_array_equal(mask[i], game.legal_mask())
    assert venv.matches_finished == finished


def test_a_refused_action_changes_no_game():
    venv = mm.VecEnv(4, profile="classic", seats=3, seed=3)
    venv.reset()
    before = [venv.game(i).position() for i in range(4)]
    actions = venv.random_actions().copy()
    actions[1] = 201  # a challenge, with nothing to challenge
    with pytest.raises(mm.RejectedAction) as e:
        venv.step(actions)
    assert e.value.game == 1 and e.value.code == "no_open_offence"
    actions[1] = 999
    with pytest.raises(mm.InvalidAction):
        venv.step(actions)
    with pytest.raises(ValueError):
        venv.step(actions[:2])
    assert [venv.game(i).position() for i in range(4)] == before


def test_reset_with_a_seed_repeats_the_deals():
    venv = mm.VecEnv(3, profile="penalty-points", seats=4, seed=1)
    first = venv.reset(seed=99)[0].copy()
    venv.step(venv.random_actions())
    again = venv.reset(seed=99)[0]
    np.testing.assert_array_equal(first, again)


def test_actions_may_be_any_sequence_of_ints():
    a = mm.VecEnv(3, profile="brazilian", seats=4, seed=6)
    b = mm.VecEnv(3, profile="brazilian", seats=4, seed=6)
    a.reset()
    b.reset()
    for _ in range(50):
        actions = a.random_actions().copy()
        b.random_actions()
        np.testing.assert_array_equal(a.step(actions)[0], b.step(list(actions.astype(np.int32)))[0])
    with pytest.raises(ValueError):
        a.step(["draw"] * 3)
