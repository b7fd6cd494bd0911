"""The built-in bots in Python: `Bot` on a `Game`, and `Table`, whose bot seats play at engine
speed while the caller plays the others."""

import numpy as np
import pytest

import maumau_engine as mm


def test_bots_finish_matches_of_every_profile_with_legal_actions(config):
    game = mm.Game(seed=3, **config)
    bots = [mm.Bot(["random", "heuristic", "search:20"][s % 3], seed=s) for s in range(game.seats)]
    steps = 0
    while not game.is_over and steps < 3000:
        seat = game.to_act
        action = bots[seat].act(game)
        assert action in game.legal_actions()
        game.apply(action)
        for s, bot in enumerate(bots):
            bot.see(game, s)
        steps += 1
    assert game.is_over and game.result()["winners"]


def test_a_bot_is_deterministic_for_its_seed_and_reset_replays_it():
    def play(bots):
        game = mm.Game("penalty-points", seats=3, seed=8)
        while not game.is_over:
            game.apply(bots[game.to_act].act(game))
        return game.position()

    def table():
        return [mm.Bot("heuristic", seed=1), mm.Bot("search:10", seed=2), mm.Bot("random", seed=3)]

    first = table()
    once = play(first)
    assert play(table()) == once
    for bot in first:
        bot.reset()
    assert play(first) == once
    assert repr(first[1]) == 'Bot("search:10", seed=2)' and first[1].name == "search:10"


def test_a_bot_answers_out_of_turn_only_with_an_out_of_turn_action():
    game = mm.Game("classic", seats=3, seed=4)
    bot = mm.Bot("heuristic")
    other = (game.to_act + 1) % 3
    # Nothing to challenge at the start: no out-of-turn action, so no answer.
    assert game.legal_actions(other) == [] and bot.act(game, other) is None
    with pytest.raises(mm.InvalidAction):
        bot.act(game, 7)


@pytest.mark.parametrize("name", ["greedy", "search:0", "heuristic:5", "Random", ""])
def test_unknown_bots_are_refused_with_the_names_that_exist(name):
    with pytest.raises(ValueError, match="bot"):
        mm.Bot(name)
    with pytest.raises(mm.InvalidConfig, match="bot"):
        mm.Table([name, None])


def test_a_table_asks_the_caller_only_for_its_seats_and_gives_every_seats_rewards():
    table = mm.Table(
        [None, "heuristic", "random", None], profile="classic", options="single_round", reward="win"
    )
    assert table.bots == [None, "heuristic", "random", None] and table.seats == 4
    to_act = table.reset(seed=11)
    decisions = 0
    total = np.zeros(4)
    while to_act is not None:
        assert to_act in (0, 3) and table.to_act == to_act
        obs, mask = table.observe(to_act)
        assert obs.dtype == np.float32 and obs.shape == (mm.OBS_LEN,)
        assert mask.dtype == bool and list(np.flatnonzero(mask)) == sorted(table.legal_actions())
        np.testing.assert_array_equal(obs, table.game().observation_vector(to_act))
        assert not table.observe((to_act + 1) % 4)[1].any()
        to_act = table.step(int(np.flatnonzero(mask)[-1]))
        assert abs(sum(table.rewards)) < 1e-4
        total += table.rewards
        decisions += 1
    assert table.is_over and decisions > 3
    # One round: its winner wins the match, +1 for the round and +1 for the placing.
    assert total.max() == pytest.approx(2.0) and total.argmax() in table.game().result()["winners"]


def test_a_table_of_bots_plays_the_whole_match_in_reset_and_a_seed_repeats_it():
    table = mm.Table(["heuristic", "search:20", "random"], profile="romanian-32")
    assert table.reset(seed=5) is None and table.is_over
    once = table.game().position()
    assert table.reset(seed=5) is None and table.game().position() == once
    assert table.reset(seed=6) is None and table.game().position() != once


def test_a_refused_step_changes_nothing():
    table = mm.Table([None, "random"], profile="classic")
    to_act = table.reset(seed=2)
    before = table.game().position()
    mask = table.observe(to_act)[1]
    with pytest.raises(mm.RejectedAction) as e:
        table.step(int(np.flatnonzero(~mask)[0]))
    assert e.value.seat == to_act
    with pytest.raises(mm.InvalidAction):
        table.step(999)
    assert table.game().position() == before and table.to_act == to_act
    with pytest.raises(mm.InvalidConfig, match="seats"):
        mm.Table([None])
    with pytest.raises(mm.InvalidConfig, match="reward"):
        mm.Table([None, "random"], reward="money")
