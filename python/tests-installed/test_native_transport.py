"""The Python client's native transport (``maumau_client.native``: a ``maumau_client.Bot`` played
by the Rust SDK's runner inside ``maumau_engine``) against a real `maumau serve`, beside grpcio.

Here both packages are installed, so ``run`` and ``hold_lobby`` play natively by default: the same
seeded match gives the same result on both transports, the lobby plays several matches, a bot's
exception is reported as on grpcio (raised by ``run`` with its traceback, a failed seat in a lobby,
exit code 1 for a program), a dropped stream is warned of as on grpcio, Ctrl-C stops a match and drains a lobby, and the grpcio transport
stays one argument or one environment variable away.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path

import pytest

from maumau_client import Bot, LobbyStats, RunStats, describe, hold_lobby, native, register, run
from maumau_client.pb.maumau.v1 import match_pb2, play_pb2, record_pb2, rules_pb2
from maumau_client.serve import LocalServer

SEED = 20261206


class SeededBot(Bot):
    """A seeded random bot that records everything it is shown."""

    name = "py-seeded"

    def __init__(self, seed: int = 5):
        self.rng = random.Random(seed)
        self.choices: list[int] = []
        self.prompts: list[play_pb2.DecisionPrompt] = []
        self.events: list[int] = []
        self.welcomes = 0
        self.finished: list[record_pb2.MatchReport] = []
        self.messages: list[str] = []  # each part's kind, as on_message saw it
        self.optional: list[int] = []  # state ids of the optional prompts let pass

    def decide(self, prompt):
        assert isinstance(prompt, play_pb2.DecisionPrompt)
        self.prompts.append(prompt)
        choice = self.rng.choice(prompt.legal_actions).index
        self.choices.append(choice)
        return choice

    def decide_optional(self, prompt):
        assert isinstance(prompt, play_pb2.DecisionPrompt) and not prompt.required
        self.optional.append(len(prompt.legal_actions))
        return None

    def on_message(self, message):
        assert isinstance(message, play_pb2.ServerMessage)
        self.messages.append(message.WhichOneof("kind"))

    def on_event(self, event):
        self.events.append(event.number)

    def on_welcome(self, welcome):
        self.welcomes += 1

    def on_finished(self, report):
        self.finished.append(report)


class Boom(Exception):
    pass


class RaisingBot(Bot):
    def decide(self, prompt):
        raise Boom("decide blew up")


def create(server, seats: int = 2) -> match_pb2.CreateMatchResponse:
    request = match_pb2.CreateMatchRequest(
        config=rules_pb2.MatchConfig(profile=rules_pb2.PROFILE_CLASSIC, seats=seats),
        seed=SEED,
        bots=[match_pb2.SeatBot(seat=s, kind=record_pb2.BOT_KIND_HEURISTIC) for s in range(1, seats)],
        label="native transport test",
    )
    return server.matches.CreateMatch(request, timeout=10)


def test_the_native_runner_is_installed():
    assert native.available(), "maumau_engine was built without its runner (feature `runner`)"


def test_the_same_seeded_match_gives_the_same_result_on_both_transports(server):
    played = {}
    for transport in ("native", "grpcio"):
        bot = SeededBot()
        report = run(bot, server.address, create(server).seat_tokens[0].token, transport=transport)
        assert report.status == record_pb2.MATCH_STATUS_FINISHED
        assert bot.finished == [report] and bot.welcomes == 1
        played[transport] = (bot, report)
    (nb, nr), (gb, gr) = played["native"], played["grpcio"]
    assert nb.choices == gb.choices and len(nb.choices) > 10
    assert [p.observation for p in nb.prompts] == [p.observation for p in gb.prompts]
    assert nb.events == gb.events and nb.events == list(range(nb.events[0], nb.events[-1] + 1))
    assert nr.result == gr.result
    assert [r.totals for r in nr.rounds] == [r.totals for r in gr.rounds]
    assert nr.actions == gr.actions
    # Every hook saw the same: the parts of each batch, the optional prompts (heartbeats keep time).
    steady = [[k for k in b.messages if k not in ("heartbeat", "pong")] for b in (nb, gb)]
    assert steady[0] == steady[1] and "prompt" in steady[0] and "event" in steady[0]
    assert nb.optional == gb.optional


class DropsOnce(Bot):
    """Seat 0, through a proxy: at its fifth decision it has the proxy cut the connection."""

    def __init__(self, proxy):
        self.proxy = proxy
        self.decisions = 0
        self.drops: list[int] = []

    def decide(self, prompt):
        self.decisions += 1
        if self.decisions == 5:
            self.proxy.cut(after=0.2)
        return prompt.legal_actions[0].index

    def on_disconnect(self, error, attempt):
        self.drops.append(attempt)


@pytest.mark.parametrize("transport", ["native", "grpcio"])
def test_a_dropped_stream_is_warned_of_on_both_transports(server, proxy_to, caplog, transport):
    proxy = proxy_to(server.address)
    bot = DropsOnce(proxy)
    with caplog.at_level("WARNING", logger="maumau_client"):
        report = run(bot, proxy.address, create(server).seat_tokens[0].token, transport=transport)
    assert report.status == record_pb2.MATCH_STATUS_FINISHED
    assert bot.drops and proxy.cuts == 1  # the bot's own hook still sees it
    warnings = [r.getMessage() for r in caplog.records if r.name == "maumau_client"]
    assert [w for w in warnings if w.startswith("stream dropped (")] and len(warnings) == len(bot.drops), warnings
    assert all("\n" not in w and "source:" not in w for w in warnings), warnings  # a line each


def test_a_decide_that_raises_is_raised_by_run_with_its_traceback(server):
    with pytest.raises(Boom, match="decide blew up") as raised:
        run(RaisingBot(), server.address, create(server).seat_tokens[0].token, transport="native")
    assert any(entry.name == "decide" for entry in raised.traceback), raised.traceback


def test_a_bad_return_value_gets_a_clear_error(server):
    class Wrong(Bot):
        def decide(self, prompt):
            return "first"

    with pytest.raises(ValueError, match=r"decide returned 'first', not one of the legal indices \[\d"):
        run(Wrong(), server.address, create(server).seat_tokens[0].token, transport="native")


def test_a_bot_program_whose_decide_raises_exits_1_with_the_traceback(server, tmp_path):
    script = tmp_path / "raising_bot.py"
    script.write_text(
        "import os\n"
        "from maumau_client import Bot, run\n"
        "class Raising(Bot):\n"
        "    def decide(self, prompt):\n"
        "        raise RuntimeError('no idea what to play')\n"
        "run(Raising(), os.environ['MAUMAU_ADDR'], os.environ['MAUMAU_TOKEN'])\n"
    )
    for transport in ("native", "grpcio"):
        env = {**os.environ, "MAUMAU_ADDR": server.address, "MAUMAU_TOKEN": create(server).seat_tokens[0].token,
               "MAUMAU_PYTHON_TRANSPORT": transport}
        done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1, (transport, done.stderr)
        assert "Traceback" in done.stderr and "RuntimeError: no idea what to play" in done.stderr, done.stderr
        assert "in decide" in done.stderr, done.stderr


def test_ctrl_c_stops_a_native_match_waiting_on_the_network(server, tmp_path):
    # Two remote seats, one played: the match never starts, so the runner only waits.
    request = match_pb2.CreateMatchRequest(
        config=rules_pb2.MatchConfig(profile=rules_pb2.PROFILE_CLASSIC, seats=2), seed=SEED,
    )
    created = server.matches.CreateMatch(request, timeout=10)
    script = tmp_path / "waiting_bot.py"
    script.write_text(
        "import os, sys\n"
        "from maumau_client import Bot, run\n"
        "class First(Bot):\n"
        "    def decide(self, prompt):\n"
        "        return prompt.legal_actions[0].index\n"
        "    def on_welcome(self, welcome):\n"
        "        print('welcome', flush=True)\n"
        "run(First(), os.environ['MAUMAU_ADDR'], os.environ['MAUMAU_TOKEN'], transport='native')\n"
    )
    env = {**os.environ, "MAUMAU_ADDR": server.address, "MAUMAU_TOKEN": created.seat_tokens[0].token}
    bot = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        assert bot.stdout.readline().strip() == "welcome"
        bot.send_signal(signal.SIGINT)
        _, err = bot.communicate(timeout=10)
    finally:
        if bot.poll() is None:
            bot.kill()
    assert bot.returncode != 0 and "KeyboardInterrupt" in err, err


def test_the_grpcio_transport_stays_available(server, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the native runner was used")

    monkeypatch.setattr(native, "run", refuse)
    report = run(SeededBot(), server.address, create(server).seat_tokens[0].token, transport="grpcio")
    assert report.status == record_pb2.MATCH_STATUS_FINISHED
    monkeypatch.setenv(native.TRANSPORT_VAR, "grpcio")
    report = run(SeededBot(), server.address, create(server).seat_tokens[0].token)
    assert report.status == record_pb2.MATCH_STATUS_FINISHED
    # What only grpcio does plays there by default, and is refused by the native transport.
    monkeypatch.delenv(native.TRANSPORT_VAR)
    stats = RunStats()
    run(SeededBot(), server.address, create(server).seat_tokens[0].token, stats=stats)
    assert stats.prompts > 0
    with pytest.raises(ValueError, match="stats"):
        run(SeededBot(), server.address, "token", stats=RunStats(), transport="native")
    with pytest.raises(ValueError, match="transport"):
        run(SeededBot(), server.address, "token", transport="carrier-pigeon")


@pytest.fixture(scope="module")
def ladder_server(maumau_bin: str, tmp_path_factory):
    folder = tmp_path_factory.mktemp("ladder")
    (folder / "data").mkdir()
    config = folder / "ladder.toml"
    config.write_text("ladder_validation = false\n")
    s = LocalServer(maumau_bin, folder / "data", ("--ladder", "--config", str(config)))
    try:
        yield s
    finally:
        s.stop()


def wait_for(condition, what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def start_lobby(address: str, key: str, bot, transport: str, **kwargs):
    """hold_lobby on a thread: (thread, drain event, outcome dict, event lines, played events)."""
    drain = threading.Event()
    outcome: dict = {}
    lines: list[str] = []
    played: list = []

    def on_event(kind, message):
        lines.append(describe(kind, message))
        if kind == "played":
            played.append(message)

    def hold() -> None:
        try:
            outcome["stats"] = hold_lobby(bot, address, key, profiles=["classic"], seats=[2], drain=drain,
                                          on_event=on_event, transport=transport, **kwargs)
        except BaseException as e:  # noqa: BLE001 - the test reads it
            outcome["error"] = e

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    return thread, drain, outcome, lines, played


def test_a_native_lobby_plays_several_matches_against_a_grpcio_one_and_drains(ladder_server):
    keys = [register(ladder_server.address, owner=f"py-native-{n}", bot=f"py-native-{n}-bot", version="1")
            for n in ("native", "grpcio")]
    stats = {"native": LobbyStats(), "grpcio": LobbyStats()}
    lobbies = [start_lobby(ladder_server.address, k.version_key, SeededBot, t, max_matches=2, stats=stats[t])
               for k, t in zip(keys, stats)]
    wait_for(lambda: all(len([e for e in s.ended if e.finished]) >= 3 for s in stats.values()),
             "three finished matches for each lobby")
    for _, drain, _, _, _ in lobbies:
        drain.set()
    for thread, _, outcome, lines, played in lobbies:
        thread.join(timeout=120)
        assert not thread.is_alive(), "hold_lobby returns after draining"
        assert "error" not in outcome, outcome
        assert outcome["stats"].drained and not outcome["stats"].failures, outcome["stats"]
        assert lines[0].startswith("lobby open: version"), lines
        assert any("rating in " in line for line in lines), lines
        assert lines[-1] == "drained", lines
        assert len(played) >= 3 and all(error is None for _, error in played), played


def test_a_native_lobby_reports_a_decide_that_raises_and_gives_the_seat_up(ladder_server):
    keys = [register(ladder_server.address, owner=f"py-raise-{n}", bot=f"py-raise-{n}-bot", version="1")
            for n in "ab"]
    stats = [LobbyStats(), LobbyStats()]
    lobbies = [start_lobby(ladder_server.address, keys[0].version_key, RaisingBot, "native", stats=stats[0]),
               start_lobby(ladder_server.address, keys[1].version_key, SeededBot, "grpcio", stats=stats[1])]
    wait_for(lambda: stats[0].failures, "the raising bot's failed match")
    invitation, error = stats[0].failures[0]
    assert isinstance(error, Boom) and invitation.ladder_match_id > 0
    assert any(frame.name == "decide" for frame in traceback.extract_tb(error.__traceback__))
    for _, drain, _, _, _ in lobbies:
        drain.set()
    for thread, _, outcome, lines, played in lobbies:
        thread.join(timeout=120)
        assert "error" not in outcome, outcome
    assert any(line.startswith(f"match {invitation.ladder_match_id}: failed: decide blew up")
               for line in lobbies[0][3]), lobbies[0][3]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_the_ladder_example_on_the_native_transport_drains_on_a_signal(ladder_server, root: Path, sig):
    name = f"py-native-example-{sig.name.lower()}"
    opponent = register(ladder_server.address, owner=f"{name}-opponent", bot=f"{name}-opponent-bot", version="1")
    thread, drain, outcome, _, _ = start_lobby(ladder_server.address, opponent.version_key, SeededBot, "grpcio")
    out_path = ladder_server.log_path.parent / f"{name}.out"
    with open(out_path, "w") as out:
        example = subprocess.Popen(
            [sys.executable, str(root / "clients" / "python" / "examples" / "ladder_bot.py"),
             "--ladder", ladder_server.address, "--register", name, f"{name}-bot", "1",
             "--profiles", "classic", "--seats", "2"],
            stdout=out, stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", native.TRANSPORT_VAR: "native"},
        )
        try:
            wait_for(lambda: "rating in " in out_path.read_text(), "the example's first rated match")
            example.send_signal(sig)
            assert example.wait(timeout=120) == 0, out_path.read_text()
        finally:
            if example.poll() is None:
                example.kill()
    text = out_path.read_text()
    assert "drained" in text.splitlines(), text
    drain.set()
    thread.join(timeout=120)
    assert "error" not in outcome, outcome


def test_ctrl_c_drains_a_native_lobby_held_on_the_main_thread(ladder_server, tmp_path):
    key = register(ladder_server.address, owner="py-native-ctrl-c", bot="py-native-ctrl-c-bot", version="1")
    script = tmp_path / "lobby_on_main.py"
    script.write_text(
        "import os\n"
        "from maumau_client import Bot, describe, hold_lobby\n"
        "class First(Bot):\n"
        "    def decide(self, prompt):\n"
        "        return prompt.legal_actions[0].index\n"
        "hold_lobby(First, os.environ['MAUMAU_LOBBY_ADDR'], os.environ['MAUMAU_LOBBY_KEY'], transport='native',\n"
        "           on_event=lambda kind, message: print(describe(kind, message), flush=True))\n"
    )
    env = {**os.environ, "MAUMAU_LOBBY_ADDR": ladder_server.address, "MAUMAU_LOBBY_KEY": key.version_key}
    lobby = subprocess.Popen([sys.executable, str(script)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    try:
        assert lobby.stdout.readline().startswith("lobby open: version")
        lobby.send_signal(signal.SIGINT)
        out, err = lobby.communicate(timeout=30)
    finally:
        if lobby.poll() is None:
            lobby.kill()
    assert "drained" in out.splitlines(), out
    assert lobby.returncode != 0 and "KeyboardInterrupt" in err, err
