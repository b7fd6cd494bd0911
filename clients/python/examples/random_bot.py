"""A bot that plays a random legal action, but names the suit it holds most when it plays a jack.

    python examples/random_bot.py --address 127.0.0.1:50051 --token SEAT_TOKEN [--seed 1]

--address and --token default to $MAUMAU_ADDR and $MAUMAU_TOKEN (what `maumau check-bot` sets).
The seat token comes from MatchService.CreateMatch (one per remote seat). A tournament or
`maumau check-bot` launches a bot like this once per match, so it imports only what it uses: the
client's warnings (a dropped stream it resumed, say) reach stderr through Python's
logging without any setup.
"""

import argparse
import os
import random
from collections import Counter

from maumau_client import Bot, run, verify_seed
from maumau_client.pb.maumau.v1 import cards_pb2, record_pb2


class RandomBot(Bot):
    name = "python-random"

    def __init__(self, seed=None):
        self.rng = random.Random(seed)

    def decide(self, prompt):
        # Every required prompt lists the legal actions, each with its dense index.
        choice = self.rng.choice(prompt.legal_actions)
        play = choice.action.play
        if choice.action.WhichOneof("kind") == "play" and play.suit:  # a jack names a suit
            held = Counter(c.suit for c in prompt.observation.hand if c.rank != cards_pb2.RANK_JACK)
            same = [a for a in prompt.legal_actions if a.action.play.card == play.card and a.action.play.call == play.call]
            choice = max(same, key=lambda a: held[a.action.play.suit])
        return choice.index


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--address", default=os.environ.get("MAUMAU_ADDR", "127.0.0.1:50051"))
    p.add_argument("--token", default=os.environ.get("MAUMAU_TOKEN"), required="MAUMAU_TOKEN" not in os.environ)
    p.add_argument("--seed", type=int, default=None)
    args = p.parse_args()

    # Events come with each prompt (one message per decision); batched=False gets them as
    # they happen, one message per step of the match.
    report = run(RandomBot(args.seed), args.address, args.token)

    print("status:", record_pb2.MatchStatus.Name(report.status))
    for s in report.result.standings:
        print(f"seat {s.seat}: placing {s.placing}, total {s.total}, rounds won {s.rounds_won}")
    print("seed", report.seed, "matches its commitment:", verify_seed(report))


if __name__ == "__main__":
    main()
