"""Trains a Mau Mau policy against the random reference bot with numpy only, then saves it.

    pip install maumau                     # the command line, the client and the engine
    python examples/python/rl_train.py --minutes 5 --out rl_policy.npz
    maumau tournament --bots random --entrant 'rl=cmd:python examples/rl_bot.py --policy rl_policy.npz'

The policy is linear: logits = (obs * scale) @ W + b over the 202 dense actions, illegal ones
masked out, where obs is the engine's observation vector (maumau_engine.OBS_LAYOUT). It learns by
REINFORCE with a running baseline, on `maumau_engine.VecEnv` (N games stepped per call, no GIL):
in each game one seat is the learner (even games seat 0, odd games seat 1) and the other plays a
uniformly random legal action (`VecEnv.random_actions`, the random reference bot). Each of the
learner's decisions is credited with the reward of the round it was taken in (`reward="win"`: +1
for winning the round, -1 for losing it; the match-end placing reward is added to the last round).
The rules are the tournament's defaults: classic, 2 seats, calls enforced.

The saved .npz (W, b, scale and the rules trained on) is what examples/rl_bot.py plays over gRPC.
Training never touches a server: the env is local, and rated play is only over gRPC.
"""

from __future__ import annotations

import argparse
import os
import time

# The matrices are small: BLAS threads only fight over the cores with the environment (3 to 5
# times slower on a busy 2-core machine). Set before numpy loads; the caller's setting wins.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import maumau_engine as mm  # noqa: E402


def feature_scale() -> np.ndarray:
    """Per-entry factors that bring the raw counts of the observation near 0..1 (card blocks and
    one-hots stay as they are)."""
    scale = np.ones(mm.OBS_LEN, np.float32)
    s0 = mm.OBS_LAYOUT["scalars"][0]
    scale[s0 : s0 + 4] = (1 / 4, 1 / 40, 1 / 10, 1 / 100)  # debt, stock, round, turns
    seats0, seats1 = mm.OBS_LAYOUT["seats"]
    width = (seats1 - seats0) // mm.MAX_SEATS
    for k in range(mm.MAX_SEATS):
        b = seats0 + k * width
        scale[b + 1 : b + 4] = (1 / 10, 1 / 100, 1 / 5)  # hand size, match total, rounds won
    return scale


def masked_softmax(logits: np.ndarray, mask: np.ndarray) -> np.ndarray:
    z = np.where(mask, logits, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    return p


class Adam:
    """Adam for a list of numpy arrays (updated in place, as gradient ascent)."""

    def __init__(self, params, lr: float):
        self.params, self.lr, self.t = params, lr, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def ascend(self, grads) -> None:
        self.t += 1
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            mh = m / (1 - 0.9**self.t)
            vh = v / (1 - 0.999**self.t)
            p += self.lr * mh / (np.sqrt(vh) + 1e-8)


def train(seconds: float, envs: int, steps: int, lr: float, seed: int, log=print) -> dict:
    """Trains for about `seconds` and returns the policy's arrays (what the .npz holds)."""
    rng = np.random.default_rng(seed)
    venv = mm.VecEnv(envs, profile="classic", seats=2, calls="enforce", seed=seed, reward="win")
    scale = feature_scale()
    W = np.zeros((mm.OBS_LEN, mm.ACTION_COUNT), np.float32)
    b = np.zeros(mm.ACTION_COUNT, np.float32)
    opt = Adam([W, b], lr)
    learner = np.arange(envs) % 2
    rows = np.arange(envs)
    obs, mask, to_act = venv.reset()
    baseline, updates, decisions, rounds, won = 0.0, 0, 0, 0, 0
    # The learner's decisions whose round has not ended yet (kept across batches), each with a
    # key naming its game and round there (a counter per game, moved on whenever a reward comes),
    # and the rewards of the rounds that ended, by key.
    episode = np.zeros(envs, np.int64)
    pending_x = np.zeros((0, mm.OBS_LEN), np.float32)
    pending_g = np.zeros((0, mm.ACTION_COUNT), np.float32)
    pending_k = np.zeros(0, np.int64)
    key_reward: dict[int, float] = {}
    start = time.monotonic()
    while time.monotonic() - start < seconds:
        xs, gs, keys = [pending_x], [pending_g], [pending_k]
        for _ in range(steps):
            actions = venv.random_actions()
            mine = to_act == learner
            if mine.any():
                x = obs[mine] * scale
                p = masked_softmax(x @ W + b, mask[mine])
                u = rng.random((len(p), 1))
                a = (p.cumsum(axis=1) < u).sum(axis=1).clip(0, mm.ACTION_COUNT - 1)
                a = np.where(mask[mine][np.arange(len(a)), a], a, p.argmax(axis=1))
                actions[mine] = a
                g = -p
                g[np.arange(len(a)), a] += 1.0  # d log p(a) / d logits
                xs.append(x)
                gs.append(g.astype(np.float32))
                keys.append(rows[mine] * 1_000_000 + episode[mine])
            obs, mask, to_act, rewards, dones = venv.step(actions)
            ended = np.flatnonzero(rewards.any(axis=1) | dones)
            for i in ended:
                key_reward[int(i * 1_000_000 + episode[i])] = float(rewards[i, learner[i]])
                rounds += 1
                won += rewards[i, learner[i]] > 0
            episode[ended] += 1
        x, g, k = np.concatenate(xs), np.concatenate(gs), np.concatenate(keys)
        ret = np.array([key_reward.get(int(key), np.nan) for key in k], np.float32)
        done = ~np.isnan(ret)
        pending_x, pending_g, pending_k = x[~done], g[~done], k[~done]
        for key in set(k[done].tolist()):
            del key_reward[key]
        if not done.any():
            continue
        x, g, ret = x[done], g[done], ret[done]
        adv = ret - baseline
        baseline = 0.9 * baseline + 0.1 * float(ret.mean())
        g *= adv[:, None] / len(adv)
        opt.ascend([x.T @ g, g.sum(axis=0)])
        updates += 1
        decisions += len(x)
        if updates % 50 == 0:
            log(
                f"{time.monotonic() - start:6.1f} s  update {updates}  learner decisions {decisions}"
                f"  rounds won {won / max(rounds, 1):.3f} (since the last line)"
            )
            rounds, won = 0, 0
    return {
        "W": W,
        "b": b,
        "scale": scale,
        "profile": "classic",
        "seats": 2,
        "calls": "enforce",
        "seconds": time.monotonic() - start,
        "decisions": decisions,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--minutes", type=float, default=5.0, help="training time (default 5)")
    p.add_argument("--seconds", type=float, help="training time in seconds (overrides --minutes)")
    p.add_argument("--envs", type=int, default=256, help="games stepped together")
    p.add_argument("--steps", type=int, default=32, help="steps per update")
    p.add_argument("--lr", type=float, default=0.01, help="Adam's step size")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="rl_policy.npz", help="where the policy goes (default rl_policy.npz)")
    args = p.parse_args()
    seconds = args.seconds if args.seconds is not None else args.minutes * 60
    policy = train(seconds, args.envs, args.steps, args.lr, args.seed)
    np.savez(args.out, **policy)
    print(f"saved {args.out}: {policy['decisions']} learner decisions in {policy['seconds']:.0f} s")


if __name__ == "__main__":
    main()
