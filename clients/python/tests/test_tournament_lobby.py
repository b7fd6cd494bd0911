"""A Python lobby entrant in a real `maumau tournament`: examples/ladder_bot.py, launched once, plays
every one of its games through the tournament's lobby (`--entrant 'name=lobby:COMMAND'`), a
lobby program that exits early forfeits its games with the reason, and one whose bot fails has its
seats resigned at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LADDER_BOT = Path(__file__).resolve().parents[1] / "examples" / "ladder_bot.py"


def tournament(maumau_bin: Path, out: Path, *args: str, env: dict | None = None, timeout: int = 300) -> str:
    done = subprocess.run(
        [str(maumau_bin), "tournament", "--seats", "2", "--deals", "3", "--threads", "2",
         "--seed", "11", "--out", str(out), *args],
        capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_a_lobby_entrant_plays_every_game_from_one_launch(maumau_bin, tmp_path):
    pids = tmp_path / "pids"
    out = tmp_path / "out"
    shown = tournament(
        maumau_bin, out, "--bots", "random,heuristic",
        "--entrant", f"py=lobby:{sys.executable} {LADDER_BOT} --max-matches 2",
        env={"BOT_PID_FILE": str(pids)},
    )
    games = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    # 3 tables x 3 deals x 2 seatings; py sits in two tables of three.
    assert len(games) == 18
    py = [g for g in games if 2 in g["seats"]]
    assert len(py) == 12
    assert all(not g.get("forfeits") for g in games), shown
    assert "forfeited" not in shown, shown
    # One launch for all twelve games, and the program ended when the tournament closed its lobby.
    assert len(pids.read_text().split()) == 1
    log = (out / "logs" / "py-lobby.log").read_text()
    assert log.count("invitation:") == 12, log
    assert "12 matches ended" in log, log


def test_a_lobby_program_that_exits_early_forfeits_with_the_reason(maumau_bin, tmp_path):
    shown = tournament(
        maumau_bin, tmp_path / "out", "--bots", "random", "--grace-ms", "300",
        "--entrant", "quitter=lobby:echo 'no lobby today' >&2; exit 3",
    )
    assert "quitter forfeited 6 of its 6 games" in shown, shown
    assert "its program exited with exit status: 3" in shown, shown
    assert "no lobby today" in shown, shown


BROKEN_LOBBY_BOT = '''
import sys
from maumau_client import Bot, hold_lobby, lobby_from_env


class Broken(Bot):
    def decide(self, prompt):
        raise RuntimeError("this bot is broken")


address, key = lobby_from_env()
hold_lobby(Broken, address, key, transport=sys.argv[1])
'''


def test_a_lobby_whose_bot_fails_resigns_its_seats(maumau_bin, tmp_path):
    """A Python lobby program whose bot raises in every match stays up, and the lobby helper gives
    each seat up: at a tournament, whose game server is no ladder, by resigning it with the seat
    token. With ten minutes of grace the games are over in seconds, each a forfeit by resignation.
    On grpcio here; the native transport is the Rust SDK's lobby (tested with the Rust SDK)."""
    script = tmp_path / "broken_lobby_bot.py"
    script.write_text(BROKEN_LOBBY_BOT)
    try:
        shown = tournament(
            maumau_bin, tmp_path / "out", "--bots", "random", "--grace-ms", "600000",
            "--entrant", f"broken=lobby:{sys.executable} {script} grpcio",
            timeout=120,
        )
    except subprocess.TimeoutExpired:
        raise AssertionError("the tournament waited for the clocks of seats whose bot had failed") from None
    assert "broken forfeited 6 of its 6 games" in shown, shown
    assert shown.count("its program gave the seat up (it resigned)") == 6, shown
