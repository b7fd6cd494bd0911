"""The engine's observation in Python equals what a real `maumau serve` sends that seat over gRPC.

Matches created from a seed on the server, every seat played by the Python client (seeded random
choices); the same seed and actions replayed in `maumau_engine.Game`. At every decision the
prompt's observation, encoded by `maumau_engine.wire.observation_vector` (what examples/rl_bot.py
feeds its policy), must equal `Game.observation_vector(seat)` range by range (`OBS_LAYOUT`), and
the prompt's legal actions the engine's.
"""

from __future__ import annotations

import random
import threading
import time

import numpy as np
import pytest

import maumau_engine as mm
from maumau_client import Bot, run
from maumau_client.pb.maumau.v1 import match_pb2, rules_pb2
from maumau_engine.wire import action_mask, observation_vector

PROFILES = {
    "classic": rules_pb2.PROFILE_CLASSIC,
    "penalty-points": rules_pb2.PROFILE_PENALTY_POINTS,
    "brazilian": rules_pb2.PROFILE_BRAZILIAN,
    "romanian-32": rules_pb2.PROFILE_ROMANIAN_32,
}
CALLS = {
    "challenge": rules_pb2.CALLS_MODE_CHALLENGE,
    "enforce": rules_pb2.CALLS_MODE_ENFORCE,
    "off": rules_pb2.CALLS_MODE_OFF,
}
MAX_ROUNDS = 2


class Recorder(Bot):
    """Plays a seeded random legal action and appends (seat, prompt, action) to a shared log."""

    def __init__(self, seat: int, seed: int, log: list, lock: threading.Lock):
        self.seat, self.rng, self.log, self.lock = seat, random.Random(seed), log, lock

    def decide(self, prompt):
        action = self.rng.choice(prompt.legal_actions).index
        with self.lock:  # the next prompt comes only after this answer: the log is in game order
            self.log.append((self.seat, prompt, action))
        return action


def play_on_server(server, profile: str, seats: int, calls: str, seed: int) -> list:
    created = server.matches.CreateMatch(
        match_pb2.CreateMatchRequest(
            config=rules_pb2.MatchConfig(
                profile=PROFILES[profile],
                seats=seats,
                calls=CALLS[calls],
                max_turns_per_round=1000,
                max_rounds=MAX_ROUNDS,
            ),
            seed=seed,
            label="tests-installed: observation against the engine",
        ),
        timeout=30,
    )
    assert [t.seat for t in created.seat_tokens] == list(range(seats))
    log: list = []
    lock = threading.Lock()
    errors: list = []

    def play(token):
        try:
            run(Recorder(token.seat, seed * 100 + token.seat, log, lock), server.address, token.token)
        except BaseException as e:  # re-raised below
            errors.append(e)

    threads = [threading.Thread(target=play, args=(t,), daemon=True) for t in created.seat_tokens]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 300
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "the match did not end within 300 s"
    if errors:
        raise errors[0]
    return log


@pytest.mark.parametrize(
    "profile,seats,calls,seed",
    [
        ("classic", 4, "challenge", 11),
        ("classic", 2, "enforce", 12),
        ("penalty-points", 3, "challenge", 13),
        ("brazilian", 5, "enforce", 14),
        ("romanian-32", 3, "challenge", 15),
        ("romanian-32", 4, "off", 16),
    ],
)
def test_observation_equals_what_the_server_sends(server, profile, seats, calls, seed):
    log = play_on_server(server, profile, seats, calls, seed)
    assert len(log) > 20, "too few decisions to compare"
    game = mm.Game(profile, seats=seats, calls=calls, seed=seed, max_turns_per_round=1000, max_rounds=MAX_ROUNDS)
    for step, (seat, prompt, action) in enumerate(log):
        assert game.to_act == seat, f"decision {step}: the server asked seat {seat}, the engine has {game.to_act} to act"
        wire = observation_vector(prompt.observation)
        engine = game.observation_vector(seat)
        for name, (start, end) in mm.OBS_LAYOUT.items():
            np.testing.assert_array_equal(
                wire[start:end], engine[start:end],
                err_msg=f"decision {step} (seat {seat}, {game.position()}): `{name}` differs",
            )
        assert np.array_equal(action_mask(prompt), game.legal_mask(seat)), f"decision {step}: legal actions differ"
        game.apply(action, seat)
    assert game.is_over, "the server's match ended, the engine's did not"
