"""How run() asks for its events: batched with each prompt by default, per step when opted out."""

from __future__ import annotations

import threading

from maumau_client import Bot, RunStats, run
from maumau_client.bot import _Session
from maumau_client.pb.maumau.v1 import play_pb2

from test_play import RecordingBot, assert_contiguous, check_report, create_classic


def joined_with(**kwargs) -> int:
    session = _Session(Bot(), "token", "py", RunStats(), **kwargs)
    return session.join_request().join.event_delivery


def test_run_asks_for_events_with_the_prompt_unless_told_otherwise():
    assert joined_with() == play_pb2.EVENT_DELIVERY_WITH_PROMPT
    assert joined_with(batched=True) == play_pb2.EVENT_DELIVERY_WITH_PROMPT
    assert joined_with(batched=False) == play_pb2.EVENT_DELIVERY_PER_STEP


def play(server, **options) -> list[RunStats]:
    """Plays two remote seats (two server bots at the table) with run(**options)."""
    created = create_classic(server, remote=2)
    bots = [RecordingBot(5), RecordingBot(6)]
    stats = [RunStats(), RunStats()]
    reports: list = [None, None]

    def one(i, token):
        try:
            reports[i] = run(bots[i], server.address, token.token, stats=stats[i], **options)
        except BaseException as e:  # handed to the test below
            reports[i] = e

    threads = [threading.Thread(target=one, args=(i, t), daemon=True) for i, t in enumerate(created.seat_tokens)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not any(t.is_alive() for t in threads), "the match did not end within 120 s"
    for r in reports:
        if isinstance(r, BaseException):
            raise r
    check_report(reports[0], created, seats=4)
    for seat, (bot, st) in enumerate(zip(bots, stats)):
        # Every event once, in order, after the snapshot; every accepted action answered once.
        assert_contiguous(bot.events, bot.snapshots[0].last_event_number + 1)
        assert st.accepted == reports[0].seats[seat].decisions == st.prompts > 0, st
        assert st.batches < st.events, "fewer messages than events"
    return stats


def test_a_default_run_gets_its_events_with_its_prompts(server):
    for st in play(server):
        # One batch per prompt, and one before MatchFinished: nothing comes between prompts.
        assert st.prompts <= st.batches <= st.prompts + 1, st


def test_opting_out_gets_every_step_as_it_happens_in_one_message(server):
    for st in play(server, batched=False):
        # The other seats' steps come too, as they happen, each in one batch.
        assert st.batches > st.prompts + 1, st
