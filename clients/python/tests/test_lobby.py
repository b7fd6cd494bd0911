"""End to end against the real `maumau serve --ladder`: the lobby helper (``hold_lobby``) and the
ladder example play rated matches, report what happens, and drain."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from maumau_client import Bot, LobbyError, LobbyStats, describe, hold_lobby, register
from maumau_client.pb.maumau.v1 import ladder_pb2, ladder_pb2_grpc

from maumau_client.serve import LocalServer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


class FirstLegalBot(Bot):
    """Plays the first legal action."""

    def decide(self, prompt):
        return prompt.legal_actions[0].index


def wait_for(condition, what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def rated(stats) -> list:
    return [e for e in stats.ended if e.finished and e.rated]


def start_lobby(address: str, key: str, stats, bot=FirstLegalBot, **kwargs):
    """hold_lobby on a thread: (thread, drain event, outcome dict with 'stats' or 'error', lines)."""
    drain = threading.Event()
    outcome: dict = {}
    lines: list[str] = []

    def hold() -> None:
        try:
            outcome["stats"] = hold_lobby(
                bot, address, key, profiles=["classic"], seats=[2], drain=drain,
                on_event=lambda kind, message: lines.append(describe(kind, message)),
                stats=stats, **kwargs,
            )
        except BaseException as e:  # noqa: BLE001 - the test reads it
            outcome["error"] = e

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return thread, drain, outcome, lines


def test_two_lobby_helpers_play_rated_matches_and_drain(ladder_server):
    keys = [register(ladder_server.address, owner=f"py-lobby-{n}", bot=f"py-lobby-{n}-bot", version="1.0")
            for n in "ab"]
    assert all(k.version_key.startswith("mmv_") and k.owner_key.startswith("mmo_") for k in keys)
    stats = [LobbyStats(), LobbyStats()]
    lobbies = [start_lobby(ladder_server.address, k.version_key, s, max_matches=2)
               for k, s in zip(keys, stats)]

    wait_for(lambda: all(len(rated(s)) >= 2 for s in stats), "two rated matches each")
    for _, drain, _, _ in lobbies:
        drain.set()
    for thread, _, outcome, lines in lobbies:
        thread.join(timeout=120)
        assert not thread.is_alive(), "hold_lobby returns after draining"
        assert "error" not in outcome, outcome
        assert outcome["stats"].drained
        assert not outcome["stats"].failures, outcome["stats"].failures
        assert lines[0].startswith("lobby open: version"), lines
        assert any(line.startswith("invitation: match") for line in lines), lines
        assert any("rating in " in line for line in lines), lines
        assert lines[-1] == "drained", lines

    ladder = ladder_pb2_grpc.LadderServiceStub(ladder_server.channel)
    board = ladder.GetLeaderboard(ladder_pb2.GetLeaderboardRequest(profile="classic"))
    assert {s.bot_name for s in board.standings} == {"py-lobby-a-bot", "py-lobby-b-bot"}
    assert all(s.matches >= 2 for s in board.standings)


def test_a_player_that_fails_before_joining_gives_its_seat_up_at_once(maumau_bin, tmp_path):
    # A join deadline far beyond the test's patience: only the withdrawal ends the match soon.
    config = tmp_path / "ladder.toml"
    config.write_text("ladder_validation = false\nladder_join_deadline_ms = 3600000\njoin_timeout_ms = 3700000\n")
    (tmp_path / "data").mkdir()
    server = LocalServer(maumau_bin, tmp_path / "data", ("--ladder", "--config", str(config)))
    try:
        keys = [register(server.address, owner=f"py-fail-{n}", bot=f"py-fail-{n}-bot", version="1.0")
                for n in "ab"]

        def broken() -> Bot:
            raise RuntimeError("no bot today")

        stats = [LobbyStats(), LobbyStats()]
        lobbies = [start_lobby(server.address, keys[0].version_key, stats[0], bot=broken),
                   start_lobby(server.address, keys[1].version_key, stats[1])]
        wait_for(lambda: any("withdrew before joining" in e.reason for e in stats[1].ended),
                 "the healthy lobby to hear that the broken one gave its seat up")
        assert stats[0].failures, "the broken lobby saw its player fail"
        for _, drain, _, _ in lobbies:
            drain.set()
        for thread, _, outcome, _ in lobbies:
            thread.join(timeout=120)
            assert "error" not in outcome, outcome
    finally:
        server.stop()


def test_a_bad_key_is_refused_for_good(ladder_server):
    with pytest.raises(LobbyError) as refused:
        hold_lobby(FirstLegalBot, ladder_server.address, "mmv_not-a-key", on_event=lambda *_: None)
    assert refused.value.reason == "LADDER_ERROR_REASON_BAD_KEY"


def test_a_waiting_message_reads_as_one_line():
    waiting = ladder_pb2.LobbyWaiting(
        reason=ladder_pb2.WAITING_REASON_NO_OPPONENTS,
        detail="no opponent of classic with 2 seats is online", bots_online=1,
    )
    assert describe("waiting", waiting) == "waiting: no opponent of classic with 2 seats is online (1 bots online)"
    assert describe("waiting", ladder_pb2.LobbyWaiting(reason=ladder_pb2.WAITING_REASON_NO_SEASON, bots_online=3)) \
        == "waiting: no_season (3 bots online)"


def test_the_ladder_example_registers_plays_and_drains_on_sigint(ladder_server):
    opponent = register(ladder_server.address, owner="py-example-opponent", bot="py-opponent", version="1")
    opponent_stats = LobbyStats()
    thread, drain, outcome, _ = start_lobby(ladder_server.address, opponent.version_key, opponent_stats)
    out_path = ladder_server.log_path.parent / "ladder_bot.out"
    with open(out_path, "w") as out:
        example = subprocess.Popen(
            [sys.executable, str(EXAMPLES / "ladder_bot.py"), "--ladder", ladder_server.address,
             "--register", "py-example", "py-example-bot", "1", "--profiles", "classic", "--seats", "2"],
            stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        try:
            wait_for(lambda: "rating in " in out_path.read_text(), "the example's first rated match")
            example.send_signal(signal.SIGINT)
            assert example.wait(timeout=120) == 0, out_path.read_text()
        finally:
            if example.poll() is None:
                example.kill()
    text = out_path.read_text()
    assert "version key (shown once, keep it): mmv_" in text, text
    assert "drained" in text.splitlines(), text
    drain.set()
    thread.join(timeout=120)
    assert "error" not in outcome, outcome


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_maumau_bot_ladder_launches_a_python_program_per_match_and_drains(ladder_server, maumau_bin, sig):
    """`maumau bot --ladder URL --key-file PATH -- python examples/random_bot.py`: the program gets
    each seat in MAUMAU_ADDR and MAUMAU_TOKEN, plays rated matches against a lobby helper, and
    the command drains on the signal and exits 0."""
    key_file = ladder_server.log_path.parent / "version.key"
    registered = subprocess.run(
        [str(maumau_bin), "ladder", "register", "--server", ladder_server.address, "--owner", "py-cmd",
         "--bot", "py-cmd-bot", "--version", "1", "--key-file", str(key_file)],
        capture_output=True, text=True, timeout=60,
    )
    assert registered.returncode == 0, registered.stdout + registered.stderr
    assert key_file.stat().st_mode & 0o777 == 0o600

    opponent = register(ladder_server.address, owner="py-cmd-opponent", bot="py-cmd-opponent-bot", version="1")
    opponent_stats = LobbyStats()
    thread, drain, outcome, _ = start_lobby(ladder_server.address, opponent.version_key, opponent_stats)
    out_path = ladder_server.log_path.parent / "maumau_bot.out"
    with open(out_path, "w") as out:
        joined = subprocess.Popen(
            [str(maumau_bin), "bot", "--ladder", ladder_server.address, "--key-file", str(key_file),
             "--profiles", "classic", "--seats", "2", "--", sys.executable, str(EXAMPLES / "random_bot.py")],
            stdout=out, stderr=subprocess.STDOUT,
        )
        try:
            wait_for(lambda: out_path.read_text().count("rating in ") >= 2, "two rated matches")
            joined.send_signal(sig)
            assert joined.wait(timeout=120) == 0, out_path.read_text()
        finally:
            if joined.poll() is None:
                joined.kill()
    lines = out_path.read_text().splitlines()
    assert any(line.startswith("invitation: match") and "rated" in line for line in lines), lines
    assert any(line.startswith("draining") for line in lines), lines
    assert "drained" in lines, lines
    assert not any("your program" in line for line in lines), lines
    drain.set()
    thread.join(timeout=120)
    assert "error" not in outcome, outcome
    assert len(rated(opponent_stats)) >= 2
