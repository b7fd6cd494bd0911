"""The Python example in examples/python/ runs against the real `maumau serve`, so it cannot rot."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from maumau_client.pb.maumau.v1 import match_pb2, record_pb2

SCRIPT = Path(__file__).resolve().parents[3] / "examples" / "python" / "create_and_watch.py"


def test_create_and_watch(server):
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--address", server.address, "--rounds", "2"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    match_id = re.search(r"^match (\S+)$", out, re.M).group(1)
    report = server.matches.GetResult(match_pb2.GetResultRequest(match_id=match_id), timeout=10).report
    assert report.status == record_pb2.MATCH_STATUS_FINISHED
    # The report came from the spectator feed (it ends with MatchFinished).
    assert "the last one MatchFinished" in out, out
    status = f"status MATCH_STATUS_FINISHED after {report.actions} actions, {report.result.rounds} rounds"
    assert status in out, out
    assert 1 <= report.result.rounds <= 2
    for s in report.result.standings:
        assert f"  seat {s.seat}: placing {s.placing}, total {s.total}\n" in out, out
    assert "seed matches its commitment: True" in out, out
    assert "replay verified: True" in out, out
