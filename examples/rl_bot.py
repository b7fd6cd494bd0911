"""Plays a policy trained by examples/python/rl_train.py as a bot over gRPC.

    maumau tournament --bots random --entrant 'rl=cmd:python examples/rl_bot.py'
    maumau check-bot --profile classic:2 -- python examples/rl_bot.py --policy rl_policy.npz

The server is $MAUMAU_ADDR and the seat token $MAUMAU_TOKEN (what `maumau tournament` and
`maumau check-bot` set), or --address and --token. The policy file is --policy, else
$MAUMAU_POLICY, else rl_policy.npz in the current directory. Each prompt's observation becomes the
engine's observation vector (maumau_engine.wire, checked against the engine by a test), the
policy scores the legal actions and the bot plays the best one (--sample: draws one instead).
Needs `pip install maumau` (the client and the engine).
"""

import argparse
import os

import numpy as np

from maumau_client import Bot, run
from maumau_engine.wire import action_mask, observation_vector


class PolicyBot(Bot):
    name = "python-rl"

    def __init__(self, path: str, sample: bool, seed=None):
        policy = np.load(path)
        self.W, self.b, self.scale = policy["W"], policy["b"], policy["scale"]
        self.sample = sample
        self.rng = np.random.default_rng(seed)

    def decide(self, prompt):
        x = observation_vector(prompt.observation) * self.scale
        logits = np.where(action_mask(prompt), x @ self.W + self.b, -np.inf)
        if not self.sample:
            return int(logits.argmax())
        p = np.exp(logits - logits.max())
        return int(self.rng.choice(len(p), p=p / p.sum()))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--address", default=os.environ.get("MAUMAU_ADDR", "127.0.0.1:50051"))
    p.add_argument("--token", default=os.environ.get("MAUMAU_TOKEN"), required="MAUMAU_TOKEN" not in os.environ)
    p.add_argument("--policy", default=os.environ.get("MAUMAU_POLICY", "rl_policy.npz"))
    p.add_argument("--sample", action="store_true", help="draw from the policy instead of its best action")
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    run(PolicyBot(args.policy, args.sample, args.seed), args.address, args.token)


if __name__ == "__main__":
    main()
