"""Decisions per second, in one run: the vectorized env, the PettingZoo AEC env, and, when they
are installed, OpenSpiel's crazy_eights through its Python loop and RLCard's UNO env. A
benchmark, not a test: build the module in release first (`maturin develop --release`).

    python bench/speed.py [--seconds 5] [--rounds 5] [--envs 1024]

Every loop plays uniformly random legal actions, so each figure is the cost of the environment
plus the cheapest possible policy: the Python loops all draw with `random.Random.choice` from the
legal actions as each environment hands them out (the AEC env: `action_mask.nonzero()[0]`;
OpenSpiel: `state.legal_actions()`; RLCard: the keys of `state["legal_actions"]`). The
vectorized env is measured twice: with the actions drawn in Rust (`VecEnv.random_actions`, the
environment alone) and drawn in numpy from the masks (what a Python policy adds). The AEC env's
loop is also run over a stub env that does nothing, for context: the loop's and the policy's
own cost, which bounds any AEC env measured this way. Ratios are to RLCard's UNO env and
OpenSpiel's Python loop, measured in the same run.
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

import maumau_engine as mm
from maumau_engine.env import MauMauEnv


def timed(run, seconds):
    """Runs `run(deadline)` (which returns decisions made) and returns decisions per second."""
    start = time.perf_counter()
    decisions = run(start + seconds)
    return decisions / (time.perf_counter() - start)


def vec_rust_actions(n, seconds):
    venv = mm.VecEnv(n, profile="classic", seats=4, seed=1)
    venv.reset()

    def run(deadline):
        count = 0
        while time.perf_counter() < deadline:
            for _ in range(20):
                venv.step(venv.random_actions())
            count += 20 * n
        return count

    return timed(run, seconds)


def vec_numpy_actions(n, seconds):
    venv = mm.VecEnv(n, profile="classic", seats=4, seed=1)
    _, mask, _ = venv.reset()
    rng = np.random.default_rng(1)

    def run(deadline):
        nonlocal mask
        count = 0
        while time.perf_counter() < deadline:
            # A random legal action per row: the largest random number among the legal entries.
            scores = rng.random(mask.shape, dtype=np.float32)
            actions = np.where(mask, scores, -1.0).argmax(axis=1)
            _, mask, _, _, _ = venv.step(actions)
            count += n
        return count

    return timed(run, seconds)


def aec(seconds, make_env=MauMauEnv):
    env = make_env(profile="classic", seats=4)
    env.reset(seed=1)
    rng = random.Random(1)

    def run(deadline):
        count = 0
        while time.perf_counter() < deadline:
            for agent in env.agent_iter():
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    env.step(None)
                    continue
                env.step(int(rng.choice(obs["action_mask"].nonzero()[0])))
                count += 1
            env.reset()
            if time.perf_counter() >= deadline:
                break
        return count

    return timed(run, seconds)


class StubEnv:
    """The AEC loop's environment with nothing behind it, for context: `last()` returns one
    fixed tuple (a real observation, copied), `step()` does nothing, a match is 200 decisions.
    Its rate is the loop's and the policy's own cost: no AEC env measured by this loop can be
    faster."""

    def __init__(self, **config):
        env = MauMauEnv(**config)
        env.reset(seed=1)
        obs = env.last()[0]
        obs = {"observation": obs["observation"].copy(), "action_mask": obs["action_mask"].copy()}
        self._last = (obs, 0.0, False, False, {})
        self._match = [env.agent_selection] * 200

    def reset(self, seed=None):
        pass

    def agent_iter(self):
        return iter(self._match)

    def last(self):
        return self._last

    def step(self, action):
        pass


def openspiel(seconds):
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("crazy_eights")
    rng = random.Random(1)

    def run(deadline):
        count = 0
        while time.perf_counter() < deadline:
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(rng.choice(state.chance_outcomes())[0])
                else:
                    state.apply_action(rng.choice(state.legal_actions()))
                    count += 1
        return count

    return timed(run, seconds)


def rlcard_uno(seconds):
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("uno", config={"seed": 1})
    rng = random.Random(1)

    def run(deadline):
        count = 0
        while time.perf_counter() < deadline:
            state, _ = env.reset()
            while not env.is_over():
                state, _ = env.step(rng.choice(list(state["legal_actions"])))
                count += 1
        return count

    return timed(run, seconds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="time per loop, over all rounds")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (best kept)")
    parser.add_argument("--envs", type=int, default=1024, help="games in the vectorized env")
    args = parser.parse_args()
    loops = {
        f"VecEnv x{args.envs}, actions from VecEnv.random_actions": lambda t: vec_rust_actions(
            args.envs, t
        ),
        f"VecEnv x{args.envs}, actions drawn in numpy from the masks": lambda t: vec_numpy_actions(
            args.envs, t
        ),
        "PettingZoo AEC env (MauMauEnv), Python loop": aec,
        "  the same loop over a stub env (the loop and policy alone)": lambda t: aec(
            t, StubEnv
        ),
        "OpenSpiel crazy_eights, Python loop": openspiel,
        "RLCard UNO env": rlcard_uno,
    }
    # On a shared machine a loop may be measured while another process runs: every loop is
    # measured in each of several rounds, interleaved, and its best round is kept.
    figures = {name: None for name in loops}
    for _ in range(args.rounds):
        for name, loop in loops.items():
            rate = loop(args.seconds / args.rounds)
            if rate is not None and (figures[name] is None or rate > figures[name]):
                figures[name] = rate
    spiel = figures["OpenSpiel crazy_eights, Python loop"]
    uno = figures["RLCard UNO env"]
    print(f"{'loop':<62} {'decisions/s':>12} {'x OpenSpiel':>12} {'x RLCard':>9}")
    for name, rate in figures.items():
        if rate is None:
            print(f"{name:<62} {'not installed':>12}")
            continue
        vs_spiel = f"{rate / spiel:.1f}" if spiel else "-"
        vs_uno = f"{rate / uno:.1f}" if uno else "-"
        print(f"{name:<62} {rate:>12,.0f} {vs_spiel:>12} {vs_uno:>9}")


if __name__ == "__main__":
    main()
