"""End to end against the real server: full matches played by the Python helper."""

from __future__ import annotations

import random
import threading
import time

from maumau_client import Bot, RunStats, run, seed_commitment, verify_seed
from maumau_client.serve import LocalServer
from maumau_client.pb.maumau.v1 import (
    errors_pb2,
    match_pb2,
    record_pb2,
    rules_pb2,
)

SEED = 20261130


class RecordingBot(Bot):
    """A seeded random bot that records what it sees."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.welcomes = []
        self.snapshots = []
        self.raw_events: list[int] = []  # event numbers as they came off the wire
        self.events: list[int] = []  # event numbers as handed to the bot
        self.events_per_stream: list[list[int]] = []
        self.rejections: list[str] = []
        self.prompts = 0

    def decide(self, prompt):
        self.prompts += 1
        return self.rng.choice(prompt.legal_actions).index

    def on_message(self, message):
        if message.WhichOneof("kind") == "welcome":
            self.events_per_stream.append([])
        if message.WhichOneof("kind") == "event":
            self.raw_events.append(message.event.number)
            self.events_per_stream[-1].append(message.event.number)

    def on_welcome(self, welcome):
        self.welcomes.append(welcome)

    def on_snapshot(self, snapshot):
        self.snapshots.append(snapshot)

    def on_event(self, event):
        self.events.append(event.number)

    def on_rejected(self, rejected):
        self.rejections.append(errors_pb2.ErrorReason.Name(rejected.reason))


def create_classic(server, remote: int, seats: int = 4) -> match_pb2.CreateMatchResponse:
    request = match_pb2.CreateMatchRequest(
        config=rules_pb2.MatchConfig(profile=rules_pb2.PROFILE_CLASSIC, seats=seats),
        seed=SEED,
        bots=[match_pb2.SeatBot(seat=s, kind=record_pb2.BOT_KIND_RANDOM) for s in range(remote, seats)],
        label="python client test",
    )
    created = server.matches.CreateMatch(request, timeout=10)
    assert len(created.seat_tokens) == remote
    assert [t.seat for t in created.seat_tokens] == list(range(remote))
    # Salted: the commitment is not SHA-256 of the seed alone (the salt is revealed at the end).
    assert len(created.seed_commitment) == 32
    assert created.seed_commitment != seed_commitment(SEED)
    return created


def play_seats(server, created, bots, stats, addresses=None, timeout=120.0, batched=False):
    """Plays every remote seat on its own thread; returns the reports in seat order."""
    addresses = addresses or [server.address] * len(bots)
    results: dict[int, object] = {}

    def play(i, bot, address, token, st):
        try:
            results[i] = run(
                bot, address, token.token, stats=st, client_name=f"py-{token.seat}", batched=batched
            )
        except BaseException as e:  # handed to the test below
            results[i] = e

    threads = [
        threading.Thread(target=play, args=(i, *seat), daemon=True)
        for i, seat in enumerate(zip(bots, addresses, created.seat_tokens, stats))
    ]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), f"the match did not end within {timeout} s"
    for i in range(len(bots)):
        if isinstance(results[i], BaseException):
            raise results[i]
    return [results[i] for i in range(len(bots))]


def assert_contiguous(numbers: list[int], start: int = 1) -> None:
    assert numbers, "no events"
    assert numbers == list(range(start, start + len(numbers))), "event numbers skip or repeat"


def check_report(report, created, seats: int) -> None:
    assert report.match_id == created.match_id
    assert report.status == record_pb2.MATCH_STATUS_FINISHED
    assert report.seed == SEED
    assert len(report.seed_salt) == 16
    assert report.seed_commitment == seed_commitment(SEED, report.seed_salt) == created.seed_commitment
    assert verify_seed(report) and verify_seed(report, created.seed_commitment)
    result = report.result
    assert result.seats == seats
    assert [s.seat for s in result.standings] == list(range(seats))
    assert result.rounds == len(report.rounds) >= 1
    placings = [s.placing for s in result.standings]
    assert min(placings) == 1 and all(1 <= p <= seats for p in placings)
    # Classic scores penalty points: a lower total never places worse.
    for a in result.standings:
        for b in result.standings:
            if a.total < b.total:
                assert a.placing <= b.placing, (a, b)
            if a.total == b.total and a.rounds_won == b.rounds_won:
                assert a.placing == b.placing, (a, b)
    # Placings are competition ranks: a placing p is shared by k seats, the next is p + k.
    for p in set(placings):
        better = sum(1 for q in placings if q < p)
        assert p == better + 1, placings
    assert list(report.rounds[-1].totals) == [s.total for s in result.standings]
    assert [s.seat for s in report.seats] == list(range(seats))
    assert report.actions > 0


def test_full_match_two_python_seats_and_two_random_bots(server):
    created = create_classic(server, remote=2)
    bots = [RecordingBot(1), RecordingBot(2)]
    stats = [RunStats(), RunStats()]
    reports = play_seats(server, created, bots, stats)

    report = reports[0]
    assert reports[1] == report, "every seat gets the same report"
    check_report(report, created, seats=4)
    assert [p.bot for p in report.players] == [
        record_pb2.BOT_KIND_UNSPECIFIED,
        record_pb2.BOT_KIND_UNSPECIFIED,
        record_pb2.BOT_KIND_RANDOM,
        record_pb2.BOT_KIND_RANDOM,
    ]
    assert [p.name for p in report.players[:2]] == ["py-0", "py-1"]
    for seat, (bot, st) in enumerate(zip(bots, stats)):
        welcome = bot.welcomes[0]
        assert welcome.match_id == created.match_id
        assert welcome.seat == seat
        assert welcome.seed_commitment == created.seed_commitment
        assert welcome.rules.profile == rules_pb2.PROFILE_CLASSIC and welcome.rules.seats == 4
        assert st.streams == 1 and st.duplicates == 0 and st.gaps == 0
        first = bot.snapshots[0].last_event_number + 1
        assert_contiguous(bot.raw_events, first)
        assert bot.events == bot.raw_events
        assert bot.rejections == []
        stats_row = report.seats[seat]
        assert stats_row.decisions == bot.prompts == st.prompts > 0
        assert stats_row.timeouts == 0 and stats_row.rejections == 0
        assert not stats_row.gave_up and not stats_row.forfeited
    # Every seat sees the same numbered events.
    assert bots[0].events[-1] == bots[1].events[-1]

    # The server keeps the result and a replay that re-simulates to it.
    assert server.matches.GetResult(match_pb2.GetResultRequest(match_id=created.match_id)).report == report
    replay = server.matches.GetReplay(match_pb2.GetReplayRequest(match_id=created.match_id)).replay
    assert len(replay.actions) == report.actions and replay.seed == SEED
    verdict = server.matches.VerifyReplay(match_pb2.VerifyReplayRequest(replay=replay))
    assert verdict.valid and verdict.finished, verdict


class DroppingBot(RecordingBot):
    """Seat 0, connected through a proxy: once, right after choosing a play that hands the turn to
    seat 1, it has the proxy swallow the server's messages and then cut the connection."""

    def __init__(self, seed, proxy, dropped: threading.Event, resumed: threading.Event):
        super().__init__(seed)
        self.proxy = proxy
        self.dropped = dropped
        self.resumed = resumed
        self.rules = None
        self.prompt_at_drop = None

    def on_welcome(self, welcome):
        super().on_welcome(welcome)
        self.rules = welcome.rules
        if len(self.welcomes) == 2:
            self.resumed.set()

    def _hands_turn_to_seat_1(self, prompt, legal):
        """A play that keeps two cards in hand and neither skips nor reverses: seat 1 moves next."""
        obs = prompt.observation
        if legal.action.WhichOneof("kind") != "play" or len(obs.hand) < 3 or not obs.clockwise:
            return False
        effect = next(r.effect for r in self.rules.ranks if r.rank == legal.action.play.card.rank)
        return effect not in (rules_pb2.CARD_EFFECT_SKIP, rules_pb2.CARD_EFFECT_REVERSE)

    def decide(self, prompt):
        self.prompts += 1
        if not self.dropped.is_set() and self.prompts >= 3:
            plays = [a for a in prompt.legal_actions if self._hands_turn_to_seat_1(prompt, a)]
            if plays:
                self.prompt_at_drop = prompt
                self.dropped.set()
                self.proxy.cut(after=0.5)
                return self.rng.choice(plays).index
        return self.rng.choice(prompt.legal_actions).index


class WaitingBot(RecordingBot):
    """Seat 1: while seat 0 is away, it waits for seat 0 to be back before it answers, so that
    the turn cannot come back to seat 0 while it is disconnected."""

    def __init__(self, seed, dropped: threading.Event, resumed: threading.Event):
        super().__init__(seed)
        self.dropped = dropped
        self.resumed = resumed

    def decide(self, prompt):
        if self.dropped.is_set():
            assert self.resumed.wait(timeout=20), "seat 0 did not come back"
        return super().decide(prompt)


def test_dropped_connection_resumes_without_missing_or_repeating_events(server, proxy_to):
    created = create_classic(server, remote=2)
    proxy = proxy_to(server.address)
    dropped, resumed = threading.Event(), threading.Event()
    a = DroppingBot(3, proxy, dropped, resumed)
    b = WaitingBot(4, dropped, resumed)
    stats = [RunStats(), RunStats()]
    reports = play_seats(server, created, [a, b], stats, addresses=[proxy.address, server.address])

    report = reports[0]
    assert reports[1] == report
    check_report(report, created, seats=4)
    assert dropped.is_set() and resumed.is_set() and proxy.cuts == 1
    sa, sb = stats

    # Seat 0 used two streams; the second resumed after the last event of the first.
    assert sa.streams == 2 and len(a.welcomes) == 2
    first_stream, second_stream = a.events_per_stream
    assert sa.resumed_from == [first_stream[-1]]
    assert first_stream[-1] == a.prompt_at_drop.last_event_number
    # What the server sent while the proxy swallowed it came again after the resume: the
    # events of seat 0's own play (accepted while it was away) at least.
    assert proxy.swallowed > 0
    assert second_stream[0] == first_stream[-1] + 1
    assert len(second_stream) > 0
    # Across both streams: every number exactly once, in order, as the bot saw them.
    first = a.snapshots[0].last_event_number + 1
    assert_contiguous(a.raw_events, first)
    assert a.events == a.raw_events
    assert sa.duplicates == 0 and sa.gaps == 0
    assert a.events[-1] == b.events[-1], "both seats end on the same event number"
    assert_contiguous(b.raw_events, b.snapshots[0].last_event_number + 1)

    # The play chosen before the drop got through (the helper's re-send after the resume was
    # refused as stale), and the seat never timed out or gave up.
    assert sa.resent == 1
    assert a.rejections in ([], ["ERROR_REASON_STALE_STATE"])
    row = report.seats[0]
    assert row.timeouts == 0 and not row.gave_up and not row.forfeited
    assert row.rejections == len(a.rejections)
    assert report.seats[1].timeouts == 0


class LosingBot(RecordingBot):
    """Seat 0, through a proxy: on its third decision the proxy swallows both directions (so its
    answer never reaches the server) and then cuts the connection."""

    def __init__(self, seed, proxy):
        super().__init__(seed)
        self.proxy = proxy
        self.prompt_at_drop = None

    def decide(self, prompt):
        choice = super().decide(prompt)
        if self.prompts == 3:
            self.prompt_at_drop = prompt
            self.proxy.cut(after=0.5, upstream=True)
        return choice


def test_answer_lost_with_the_connection_is_sent_again_after_the_resume(server, proxy_to):
    created = create_classic(server, remote=2)
    proxy = proxy_to(server.address)
    a, b = LosingBot(5, proxy), RecordingBot(6)
    stats = [RunStats(), RunStats()]
    reports = play_seats(server, created, [a, b], stats, addresses=[proxy.address, server.address])

    report = reports[0]
    assert reports[1] == report
    check_report(report, created, seats=4)
    sa = stats[0]
    assert proxy.cuts == 1 and proxy.swallowed_up > 0
    assert sa.streams == 2 and sa.resent == 1
    first_stream, second_stream = a.events_per_stream
    # Nothing happened while seat 0 was away: the match waited for its answer.
    assert first_stream[-1] == a.prompt_at_drop.last_event_number == sa.resumed_from[0]
    assert second_stream[0] == first_stream[-1] + 1
    assert_contiguous(a.raw_events, a.snapshots[0].last_event_number + 1)
    assert a.events == a.raw_events and sa.duplicates == 0 and sa.gaps == 0
    # The answer sent again after the resume was accepted: no refusal, no timeout.
    assert a.rejections == []
    row = report.seats[0]
    assert row.timeouts == 0 and row.rejections == 0 and not row.gave_up
    assert row.decisions == a.prompts


def test_full_match_with_events_batched_with_prompts(server):
    """batched=True: events and answers come in EventBatch messages, handed over one by one."""
    created = create_classic(server, remote=2)
    bots = [RecordingBot(3), RecordingBot(4)]
    stats = [RunStats(), RunStats()]
    reports = play_seats(server, created, bots, stats, batched=True)
    report = reports[0]
    assert reports[1] == report
    check_report(report, created, seats=4)
    for seat, (bot, st) in enumerate(zip(bots, stats)):
        assert st.batches >= st.prompts > 0, st
        assert st.batches < st.events, "fewer messages than events"
        # Every event once, in order, after the snapshot.
        start = bot.snapshots[0].last_event_number + 1
        assert_contiguous(bot.events, start)
        assert bot.raw_events == bot.events
        # Every accepted action of the seat answered once.
        assert st.accepted == report.seats[seat].decisions > 0, st
        assert st.rejected == 0 and bot.rejections == []


def test_a_rate_limited_answer_is_sent_again_until_accepted(maumau_bin, tmp_path):
    # 10 actions a second, bursts of 20: a seat among three quick server bots runs out (unless
    # its game took 70 ms a decision) and has its answers refused as RATE_LIMITED; run() waits on
    # its event loop and answers again.
    data = tmp_path / "data"
    data.mkdir()
    with LocalServer(maumau_bin, data, ("--calls-per-second", "10")) as server:
        created = create_classic(server, remote=1)
        bot = RecordingBot(8)
        stats = RunStats()
        report = run(bot, server.address, created.seat_tokens[0].token, stats=stats)
    check_report(report, created, seats=4)
    assert report.seats[0].decisions > 40, "enough decisions to run out of the burst of 20"
    assert stats.rejected > 0 and set(bot.rejections) == {"ERROR_REASON_RATE_LIMITED"}, bot.rejections
    assert stats.accepted == report.seats[0].decisions == stats.prompts, stats
