"""`maumau check-bot --lobby` on the Python ladder example: examples/ladder_bot.py, launched once,
finds check-bot's lobby in MAUMAU_LOBBY_ADDR and MAUMAU_LOBBY_KEY, plays every match of the
gauntlet it is invited to, passes every check and exits when the lobby closes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

LADDER_BOT = Path(__file__).resolve().parents[1] / "examples" / "ladder_bot.py"


def test_the_ladder_example_passes_check_bot_from_one_launch(maumau_bin, tmp_path):
    pids = tmp_path / "pids"
    logs = tmp_path / "logs"
    done = subprocess.run(
        [str(maumau_bin), "check-bot", "--lobby", "--profile", "classic:2,4", "--seed", "5",
         "--log-dir", str(logs), "--", sys.executable, str(LADDER_BOT)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "BOT_PID_FILE": str(pids)},
    )
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "9 of 9 checks passed" in out, out
    assert "after 8 matches from one launch" in out, out
    assert "the bot was launched once (7 launches saved by its lobby)" in out, out
    assert len(pids.read_text().split()) == 1
    log = (logs / "lobby.log").read_text()
    assert log.count("invitation:") == 8, log
    assert "8 matches ended" in log, log
