"""The `Game` class: the same games as the Rust engine, typed rejections that change nothing,
observations that depend only on what a seat may see."""

import random
from pathlib import Path

import numpy as np
import pytest

import maumau_engine as mm

GOLDEN = Path(__file__).parent / "golden" / "games.txt"


def test_same_seed_and_actions_give_the_rust_engines_positions():
    """tests/golden/games.txt is written by the Rust engine (tests/golden.rs)."""
    game = None
    steps = 0
    games = 0
    for line in GOLDEN.read_text().splitlines():
        word, rest = line.split(" ", 1)
        if word == "game":
            profile, seats, options, calls, seed = rest.split(" ")
            game = mm.Game(profile, int(seats), options, calls, seed=int(seed))
            games += 1
        elif word == "start":
            assert game.position() == rest
        else:
            index, position = rest.split(" ", 1)
            assert game.to_act == int(word)
            assert int(index) in game.legal_actions()
            game.apply(int(index))
            assert game.position() == position
            steps += 1
    assert games == 7 and steps > 900


def random_states(config, count, seed):
    """`count` states of random matches of `config`, taken along the way."""
    rng = random.Random(seed)
    game = mm.Game(seed=seed, **config)
    states = []
    while len(states) < count:
        if game.is_over:
            game = mm.Game(seed=rng.randrange(2**32), **config)
        if rng.random() < 0.3:
            states.append(game.clone())
        game.apply(rng.choice(game.legal_actions()))
    return states


def test_rejections_raise_the_engines_code_and_change_nothing(config):
    codes = set()
    rng = random.Random(1)
    for game in random_states(config, 40, 11):
        before = game.clone()
        events_before = game.events()
        for _ in range(30):
            seat = rng.randrange(game.seats)
            action = rng.randrange(mm.ACTION_COUNT)
            if action in game.legal_actions(seat):
                continue
            trial = game.clone()
            try:
                trial.apply(action, seat=seat)
            except mm.RejectedAction as e:
                codes.add(e.code)
                assert e.seat == seat and e.action == action
                assert trial == before
                assert trial.position() == before.position()
                assert trial.events() == events_before
        with pytest.raises(mm.InvalidAction):
            game.apply(mm.ACTION_COUNT)
        with pytest.raises(mm.InvalidAction):
            game.apply("fly away")
        assert game == before
    assert codes, "some actions were refused"
    assert all(isinstance(c, str) and c.islower() for c in codes)


def test_a_finished_match_refuses_everything_with_match_over():
    game = mm.Game("classic", 2, "single_round", seed=3)
    while not game.is_over:
        game.apply(game.legal_actions()[0])
    with pytest.raises(mm.RejectedAction) as e:
        game.apply("draw", seat=0)
    assert e.value.code == "match_over"
    result = game.result()
    assert result["rounds"] == 1 and 1 in result["placings"]
    assert isinstance(result["placings"], list) and isinstance(result["winners"], list)
    assert isinstance(game.observation(0)["hand_sizes"], list)
    assert "match over" in str(game)


def shuffle_hidden(position, viewer, rng):
    """The same position with the cards `viewer` cannot see dealt differently: other seats'
    hands (to the same sizes) and the stock. The seat to move keeps its hand when it is not the
    viewer (its drawn and penalty cards are in it)."""
    fields = position.split(" ")
    keys = {f.split("=", 1)[0]: i for i, f in enumerate(fields) if "=" in f}
    hands = fields[keys["hands"]].split("=", 1)[1].split("/")
    stock = fields[keys["stock"]].split("=", 1)[1]
    turn = int(fields[keys["turn"]].split("=", 1)[1])
    split = lambda text: [] if text == "-" else text.split(",")
    movable = [s for s in range(len(hands)) if s != viewer and s != turn]
    pool = split(stock) + [c for s in movable for c in split(hands[s])]
    rng.shuffle(pool)
    for s in movable:
        size = len(split(hands[s]))
        hands[s] = ",".join(pool[:size]) or "-"
        pool = pool[size:]
    fields[keys["hands"]] = "hands=" + "/".join(hands)
    fields[keys["stock"]] = "stock=" + (",".join(pool) or "-")
    return " ".join(fields)


def test_the_observation_ignores_cards_hidden_from_the_seat(config):
    rng = random.Random(5)
    changed = 0
    for game in random_states(config, 30, 21):
        for viewer in range(game.seats):
            other_text = shuffle_hidden(game.position(), viewer, rng)
            other = mm.Game.from_position(other_text)
            changed += other.position() != game.position()
            assert other.observation(viewer) == game.observation(viewer)
            np.testing.assert_array_equal(
                other.observation_vector(viewer), game.observation_vector(viewer)
            )
    assert changed > 0, "the hidden cards were really dealt differently"


def test_the_vector_and_the_dict_say_the_same(config):
    layout = mm.OBS_LAYOUT
    for game in random_states(config, 20, 31):
        for seat in range(game.seats):
            obs = game.observation(seat)
            vec = game.observation_vector(seat)
            assert vec.shape == (mm.OBS_LEN,) and vec.dtype == np.float32
            hand = vec[slice(*layout["hand"])]
            assert hand.sum() == len(obs["hand"])
            seats = vec[slice(*layout["seats"])].reshape(mm.MAX_SEATS, -1)
            sizes = [obs["hand_sizes"][(seat + k) % game.seats] for k in range(game.seats)]
            assert list(seats[: game.seats, 1]) == sizes
            assert seats[game.seats :].sum() == 0
            mask = game.legal_mask(seat)
            assert sorted(np.flatnonzero(mask)) == sorted(obs["legal_actions"])
            texts = game.legal_action_texts(seat)
            assert texts == [mm.ACTION_TEXTS[i] for i in game.legal_actions(seat)]


def test_events_hide_another_seats_drawn_card():
    game = mm.Game("classic", 3, seed=8)
    hidden = shown = 0
    while not game.is_over and (hidden == 0 or shown == 0):
        seat = game.to_act
        game.apply("draw" if 192 in game.legal_actions() else game.legal_actions()[0])
        for viewer in range(3):
            for e in game.events(viewer):
                if e["kind"] == "drew" and e["cause"] == "turn":
                    if e["seat"] == viewer:
                        assert e["card"] is not None
                        shown += 1
                    else:
                        assert e["card"] is None
                        hidden += 1
        assert all(e["kind"] for e in game.events())
    assert hidden and shown


def test_positions_and_deck_orders_make_games():
    text = "mm1 classic seats=3 turn=1 hands=9S/KC,7D,2S/AH,10C discard=3S"
    game = mm.Game.from_position(text)
    assert game.to_act == 1
    assert mm.Game.from_position(game.position()) == game
    assert "play 2S" in game.legal_action_texts() or "draw" in game.legal_action_texts()
    deck = [r + s for s in "CDHS" for r in ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]]
    dealt = mm.Game.from_deck(deck, dealer=0, profile="classic", seats=2, seed=4)
    # The first card goes to the seat after the dealer, the card after the hands is the up-card.
    assert dealt.observation(1)["hand"] == ["2C", "4C", "6C", "8C", "10C"]
    assert dealt.observation(0)["hand"] == ["3C", "5C", "7C", "9C", "JC"]
    assert dealt.observation(0)["top"] == "QC"
    assert dealt.events()[1] == {"kind": "drew", "seat": 1, "card": "2C", "cause": "deal"}
    with pytest.raises(mm.InvalidPosition):
        mm.Game.from_deck(deck[:-1], profile="classic", seats=2)
    with pytest.raises(mm.InvalidPosition):
        mm.Game.from_position("mm1 classic seats=9")


def test_bad_configurations_raise_invalid_config():
    for kwargs in [
        dict(profile="poker"),
        dict(profile="classic", seats=9),
        dict(profile="classic", options="deck32"),
        dict(profile="classic", calls="sometimes"),
    ]:
        with pytest.raises(mm.InvalidConfig):
            mm.Game(**kwargs)
    assert issubclass(mm.RejectedAction, mm.MaumauError)
    assert issubclass(mm.MaumauError, ValueError)


def test_clone_is_independent_and_str_is_readable():
    game = mm.Game("romanian-32", 3, seed=2)
    copy = game.clone()
    game.apply(game.legal_actions()[0])
    assert copy != game
    assert "romanian-32 with 3 seats" in str(copy)
    assert repr(copy).startswith("Game.from_position(")
