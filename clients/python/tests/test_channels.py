"""How run() plays besides its default (a grpc.aio channel of its own on a loop of its own): on a
synchronous grpc.Channel it is handed (how a TLS channel is passed), and when called from a
coroutine, where asyncio.run cannot start a second loop on the same thread."""

from __future__ import annotations

import asyncio

import grpc

from maumau_client import RunStats, run

from test_delivery import play
from test_play import RecordingBot, assert_contiguous, check_report, create_classic


def test_run_plays_on_a_synchronous_channel_it_is_handed(server):
    with grpc.insecure_channel(server.address) as channel:
        # Both seats share the one channel, as hold_lobby's matches share theirs.
        for st in play(server, channel=channel):
            assert st.streams == 1, st


def test_run_plays_when_called_from_a_coroutine(server):
    created = create_classic(server, remote=1, seats=2)
    bot = RecordingBot(7)
    stats = RunStats()

    async def inside_a_loop():
        return run(bot, server.address, created.seat_tokens[0].token, stats=stats)

    report = asyncio.run(inside_a_loop())
    check_report(report, created, seats=2)
    assert_contiguous(bot.events, bot.snapshots[0].last_event_number + 1)
    assert stats.accepted == report.seats[0].decisions == stats.prompts > 0, stats
