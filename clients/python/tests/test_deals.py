"""End to end against the real server: maumau_client.deals recomputes a finished match's deals
from the revealed seed and salt (pure Python, from the description in docs/PROTOCOL.md) and finds
exactly what each seat was dealt. A wrong generator, seeding, shuffle loop, deal order or
commitment formula fails these tests."""

from __future__ import annotations

import hashlib
import random
import threading

import pytest

from maumau_client import Bot, deals, run, seed_commitment, verify_seed
from maumau_client.pb.maumau.v1 import match_pb2, record_pb2, rules_pb2


class RandomBot(deals.DealRecorder, Bot):
    """Random legal actions; records the Welcome and every event (from event 1)."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)

    def decide(self, prompt):
        return self.rng.choice(prompt.legal_actions).index


def play_match(server, config, remote: int, seed=None):
    """Creates a match (remote seats 0..remote-1, the server's random bots on the rest), plays
    the remote seats with random Python bots from event 1, returns (created, bots, reports)."""
    request = match_pb2.CreateMatchRequest(
        config=config,
        bots=[
            match_pb2.SeatBot(seat=s, kind=record_pb2.BOT_KIND_RANDOM)
            for s in range(remote, config.seats)
        ],
        label="python deal check",
    )
    if seed is not None:
        request.seed = seed
    created = server.matches.CreateMatch(request, timeout=10)
    reports: dict[int, object] = {}
    bots = [RandomBot(i) for i in range(len(created.seat_tokens))]

    def play(i, token):
        try:
            reports[i] = run(
                bots[i], server.address, token.token, client_name=f"deals-{i}", from_start=True
            )
        except BaseException as e:  # raised below
            reports[i] = e

    threads = [
        threading.Thread(target=play, args=(i, t), daemon=True)
        for i, t in enumerate(created.seat_tokens)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    assert not any(t.is_alive() for t in threads), "the match did not end"
    for r in reports.values():
        if isinstance(r, BaseException):
            raise r
    return created, bots, [reports[i] for i in range(len(threads))]


CASES = [
    # profile, seats, remote seats, rounds: every deck (52, 32, two 52s), both deal orders
    (rules_pb2.PROFILE_CLASSIC, 4, 2, 4),
    (rules_pb2.PROFILE_PENALTY_POINTS, 3, 2, 3),
    (rules_pb2.PROFILE_BRAZILIAN, 5, 2, 3),
    (rules_pb2.PROFILE_ROMANIAN_32, 2, 2, 3),
]


@pytest.mark.parametrize("profile,seats,remote,rounds", CASES)
def test_the_deals_recomputed_from_the_revealed_seed_are_what_every_seat_was_dealt(
    server, profile, seats, remote, rounds
):
    config = rules_pb2.MatchConfig(profile=profile, seats=seats, max_rounds=rounds)
    created, bots, reports = play_match(server, config, remote)
    report = reports[0]
    assert report.status == record_pb2.MATCH_STATUS_FINISHED
    # The commitment: SHA-256 over the 16-byte salt followed by the seed's 8 big-endian bytes.
    assert len(report.seed_salt) == 16
    assert created.seed_commitment == hashlib.sha256(
        report.seed_salt + report.seed.to_bytes(8, "big")
    ).digest()
    assert created.seed_commitment != hashlib.sha256(report.seed.to_bytes(8, "big")).digest()
    assert verify_seed(report, created.seed_commitment)
    for token, bot, final in zip(created.seat_tokens, bots, reports):
        welcome, events = bot.welcome, bot.events
        assert welcome.seat == token.seat
        assert welcome.seed_commitment == created.seed_commitment
        assert final.seed == report.seed and final.seed_salt == report.seed_salt
        assert events and events[0].number == 1, "the whole log, from event 1"
        check = deals.check_deals(welcome, events, final)
        assert check.ok, check.problems
        assert check.commitment_ok
        assert check.rounds_checked == len(final.rounds) >= 1
        # The same log against another seed, or another salt, fails.
        wrong_seed = record_pb2.MatchReport()
        wrong_seed.CopyFrom(final)
        wrong_seed.seed ^= 1
        bad = deals.check_deals(welcome, events, wrong_seed)
        assert not bad.ok and not bad.commitment_ok
        assert any("dealt" in p or "up-card" in p or "dealer" in p for p in bad.problems), bad.problems
        wrong_salt = record_pb2.MatchReport()
        wrong_salt.CopyFrom(final)
        wrong_salt.seed_salt = bytes(16)
        assert not deals.check_deals(welcome, events, wrong_salt).commitment_ok


def test_a_round_after_a_rebuilt_stock_is_dealt_by_the_next_generator(server):
    """A rebuilt stock takes a shuffle number, so the next round's deal moves one generator on:
    the checker must count it. Two seats and 32 cards rebuild the stock often (10 or more times a
    match in every run tried); up to 5 matches are played until one rebuilds before a later
    round's deal."""
    config = rules_pb2.MatchConfig(profile=rules_pb2.PROFILE_ROMANIAN_32, seats=2, max_rounds=3)
    for _ in range(5):
        created, bots, reports = play_match(server, config, 2)
        for bot, report in zip(bots, reports):
            check = bot.check_deals(report)
            assert check.ok, check.problems
        kinds = [e.event.WhichOneof("kind") for e in bots[0].events]
        starts = [i for i, k in enumerate(kinds) if k == "round_started"]
        if len(starts) > 1 and "stock_rebuilt" in kinds[: starts[-1]]:
            return
    pytest.fail("no match rebuilt its stock before a later round")


def test_a_small_chosen_seed_is_hidden_by_the_salt_and_still_checks(server):
    """A guessable seed (4242) no longer shows in the commitment: two matches with it publish
    different commitments, and each one's deals still check against the revealed seed and salt."""
    config = rules_pb2.MatchConfig(profile=rules_pb2.PROFILE_CLASSIC, seats=2, max_rounds=2)
    seen = []
    for _ in range(2):
        created, bots, reports = play_match(server, config, 2, seed=4242)
        assert created.seed_commitment != seed_commitment(4242)
        assert created.seed_commitment == seed_commitment(4242, reports[0].seed_salt)
        for bot, report in zip(bots, reports):
            check = bot.check_deals(report)
            assert check.ok, check.problems
        seen.append(created.seed_commitment)
    assert seen[0] != seen[1]


def test_the_generator_and_the_shuffle_follow_the_documented_steps():
    """Hand-checked values of the pieces the protocol page describes."""
    # seed_from_u64(0): the PCG32 steps of rand_core give these 16 seed bytes.
    state = 0
    words = []
    for _ in range(4):
        state = (state * 0x5851F42D4C957F2D + 0xA17654E46FBE17F3) % 2**64
        x = (((state >> 18) ^ state) >> 27) % 2**32
        r = state >> 59
        words.append(((x >> r) | (x << (32 - r))) % 2**32)
    raw = b"".join(w.to_bytes(4, "little") for w in words)
    want_state = int.from_bytes(raw, "little") | 1
    assert deals.Pcg64Mcg.seed_from_u64(0).state == want_state
    # The shuffle is a permutation, and the same generator gives the same one.
    cards = list(range(52))
    deals.shuffle(cards, deals.generator(7, 1))
    assert sorted(cards) == list(range(52)) and cards != list(range(52))
    again = list(range(52))
    deals.shuffle(again, deals.generator(7, 1))
    assert again == cards
    # random_below stays in range, and a range of one always gives 0.
    rng = deals.generator(1, 0)
    assert all(0 <= deals.random_below(rng, 5) < 5 for _ in range(200))
    assert all(deals.random_below(rng, 1) == 0 for _ in range(20))
