"""`evaluate`: win share, placing and total with 95% intervals that cover the truth, and
clear errors for bad input."""

import numpy as np
import pytest

import maumau_engine as mm


def random_policy(seed):
    rng = np.random.default_rng(seed)

    def policy(observation, action_mask):
        assert observation.shape == (mm.OBS_LEN,) and action_mask.dtype == bool
        return int(rng.choice(np.flatnonzero(action_mask)))

    return policy


def test_random_against_random_gets_its_share_within_the_interval():
    r = mm.evaluate("random", "random", games=600, duplicate=False, seed=3)
    assert r.games == 600 and r.even_share == 0.5
    assert r.win_share.covers(0.5) and r.placing.covers(1.5)
    assert 0.02 < r.win_share.ci95 < 0.06
    assert np.array_equal(np.bincount(r.seat), [300, 300])


def test_a_python_policy_at_a_table_of_three_gets_a_third():
    r = mm.evaluate(random_policy(1), ["random", "random"], games=240, seed=4)
    assert r.seats == 3 and r.opponents == ("random", "random") and r.policy == "policy"
    assert r.win_share.covers(1 / 3) and r.placing.covers(2.0)


def test_duplicate_deals_cancel_the_luck_of_identical_players():
    """All-random tables seed each seat's bot from the deal and the seat, so the games of a block
    are one game seen from every seat: the policy wins exactly its share in each block."""
    r = mm.evaluate("random", "random", games=100, seed=5)
    assert r.win_share.mean == pytest.approx(0.5) and r.win_share.ci95 == pytest.approx(0.0)


def test_the_heuristic_bot_beats_random_with_an_interval_above_the_even_share():
    r = mm.evaluate("heuristic", "random", games=300, seed=6)
    assert r.win_share.low > r.even_share
    assert r.placing.high < 1.5
    text = str(r)
    assert text.startswith(f"win share {r.win_share.mean:.3f} ± ")
    assert "over 300 games against random (even share 0.500)" in text
    # Same arguments, same games.
    again = mm.evaluate("heuristic", "random", games=300, seed=6)
    assert np.array_equal(again.placings, r.placings) and np.array_equal(again.totals, r.totals)


def test_one_name_fills_every_other_seat():
    r = mm.evaluate("heuristic", ["random"], seats=4, games=40, seed=7, profile="penalty-points")
    assert r.opponents == ("random",) * 3 and r.even_share == 0.25
    assert "against random ×3" in str(r)
    assert len(r.placings) == 40 and set(r.seat) == {0, 1, 2, 3}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(games=0), "games"),
        (dict(games=-3), "games"),
        (dict(opponents="greedy"), "unknown bot `greedy`"),
        (dict(opponents=["random", "minimax"]), "unknown bot `minimax`"),
        (dict(opponents=[]), "opponents"),
        (dict(seats=1), "seats"),
        (dict(opponents=["random", "random"], seats=4), "4 seats need 3 opponents"),
        (dict(seats=9), "seats"),
        (dict(profile="poker"), "poker"),
    ],
)
def test_bad_input_raises_a_clear_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mm.evaluate(random_policy(0), **kwargs)


def test_a_bad_policy_is_refused():
    with pytest.raises(ValueError, match="unknown bot `greedy`"):
        mm.evaluate("greedy", games=2)
    with pytest.raises(TypeError, match="policy"):
        mm.evaluate(42, games=2)
    with pytest.raises(mm.RejectedAction):
        mm.evaluate(lambda obs, mask: int(np.flatnonzero(~mask)[0]), games=2)
