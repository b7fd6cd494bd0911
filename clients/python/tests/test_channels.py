"""How run() plays besides its default (a grpc.aio channel of its own on a loop of its own): on a
synchronous grpc.Channel it is handed (how a TLS channel is passed), and when called from a
coroutine, where asyncio.run cannot start a second loop on the same thread; and through a Unix
socket (`unix:PATH`, a sandboxed bot's address)."""

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


def test_run_plays_through_a_unix_socket(server, tmp_path):
    """`unix:PATH`, the address of a bot in `maumau --sandbox`: here a socket forwarded to the
    server's TCP port by a thread of the test, as the sandbox's forwarder does."""
    import socket
    import threading

    path = str(tmp_path / "maumau.sock")
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen()
    host, port = server.address.rsplit(":", 1)

    def pipe(a, b):
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            b.close()

    def forward():
        while True:
            try:
                inside, _ = listener.accept()
            except OSError:
                return
            outside = socket.create_connection((host, int(port)))
            threading.Thread(target=pipe, args=(inside, outside), daemon=True).start()
            threading.Thread(target=pipe, args=(outside, inside), daemon=True).start()

    threading.Thread(target=forward, daemon=True).start()
    created = create_classic(server, remote=1, seats=2)
    report = run(RecordingBot(3), f"unix:{path}", created.seat_tokens[0].token)
    listener.close()
    check_report(report, created, seats=2)
