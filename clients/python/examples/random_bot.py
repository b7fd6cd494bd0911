"""A bot that plays a random legal action. Usage:

    python examples/random_bot.py --address 127.0.0.1:50051 --token SEAT_TOKEN [--seed 1]

The seat token comes from MatchService.CreateMatch (one per remote seat).
"""

import argparse
import logging
import random

from maumau_client import Bot, run, verify_seed
from maumau_client.pb.maumau.v1 import record_pb2


class RandomBot(Bot):
    name = "python-random"

    def __init__(self, seed=None):
        self.rng = random.Random(seed)

    def decide(self, prompt):
        # Every required prompt lists the legal actions, each with its dense index.
        return self.rng.choice(prompt.legal_actions).index


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--address", default="127.0.0.1:50051")
    p.add_argument("--token", required=True)
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO)

    report = run(RandomBot(args.seed), args.address, args.token)

    print("status:", record_pb2.MatchStatus.Name(report.status))
    for s in report.result.standings:
        print(f"seat {s.seat}: placing {s.placing}, total {s.total}, rounds won {s.rounds_won}")
    print("seed", report.seed, "matches its commitment:", verify_seed(report))


if __name__ == "__main__":
    main()
