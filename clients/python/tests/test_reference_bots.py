"""End to end: the Python helper plays complete matches against the Rust reference bots that the
server seats itself (BOT_KIND_HEURISTIC, BOT_KIND_SEARCH)."""

from __future__ import annotations

import random

import pytest

from maumau_client import Bot, RunStats, run, verify_seed
from maumau_client.pb.maumau.v1 import errors_pb2, match_pb2, record_pb2, rules_pb2

H, S = record_pb2.BOT_KIND_HEURISTIC, record_pb2.BOT_KIND_SEARCH


class SeededBot(Bot):
    """A seeded random bot that challenges every omission it is offered."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.prompts = 0
        self.optional = 0
        self.rejections: list[int] = []

    def decide(self, prompt):
        self.prompts += 1
        return self.rng.choice(prompt.legal_actions).index

    def decide_optional(self, prompt):
        self.optional += 1
        return next((a.index for a in prompt.legal_actions if a.action.WhichOneof("kind") == "challenge"), None)

    def on_rejected(self, rejected):
        self.rejections.append(rejected.reason)


@pytest.mark.parametrize(
    "profile, kinds",
    [
        (rules_pb2.PROFILE_CLASSIC, [H, S]),
        (rules_pb2.PROFILE_ROMANIAN_32, [S, H]),
        (rules_pb2.PROFILE_BRAZILIAN, [H, S, H]),
    ],
    ids=["classic", "romanian-32", "brazilian"],
)
def test_a_python_seat_plays_a_complete_match_against_heuristic_and_search(server, profile, kinds):
    seats = 1 + len(kinds)
    created = server.matches.CreateMatch(
        match_pb2.CreateMatchRequest(
            config=rules_pb2.MatchConfig(
                profile=profile, seats=seats, calls=rules_pb2.CALLS_MODE_CHALLENGE, max_rounds=2
            ),
            seed=7,
            bots=[match_pb2.SeatBot(seat=1 + i, kind=k) for i, k in enumerate(kinds)],
        ),
        timeout=10,
    )
    assert [t.seat for t in created.seat_tokens] == [0]
    bot, stats = SeededBot(3), RunStats()
    report = run(bot, server.address, created.seat_tokens[0].token, stats=stats, client_name="py")

    assert report.status == record_pb2.MATCH_STATUS_FINISHED
    assert verify_seed(report)
    assert [p.bot for p in report.players] == [record_pb2.BOT_KIND_UNSPECIFIED, *kinds]
    assert report.result.rounds >= 1 and len(report.result.standings) == seats
    mine = report.seats[0]
    assert mine.decisions == bot.prompts == stats.prompts > 0
    assert mine.timeouts == 0 and not mine.gave_up
    # A challenge may lose the race with the next play; nothing else is refused.
    assert all(r == errors_pb2.ERROR_REASON_STALE_STATE for r in bot.rejections), bot.rejections
    # The reference bots played their seats (the server records their decisions).
    assert all(report.seats[s].decisions > 0 for s in range(1, seats))
    replay = server.matches.GetReplay(match_pb2.GetReplayRequest(match_id=created.match_id)).replay
    verdict = server.matches.VerifyReplay(match_pb2.VerifyReplayRequest(replay=replay))
    assert verdict.valid and verdict.finished, verdict
