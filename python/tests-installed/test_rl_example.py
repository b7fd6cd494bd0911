"""Train, then enter: examples/python/rl_train.py trains for a few seconds, and the saved policy
plays a real `maumau tournament` (the installed binary) as `cmd:python examples/rl_bot.py`.

Only the plumbing is checked here (the policy file, every game played to its end, no forfeit);
whether a full training beats the random bot is measured, not asserted (python/README.md).
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np

import maumau_engine as mm


def test_train_briefly_then_play_the_policy_in_a_tournament(maumau_bin, root, tmp_path):
    policy = tmp_path / "policy.npz"
    subprocess.run(
        [sys.executable, str(root / "examples/python/rl_train.py"), "--seconds", "3", "--envs", "64",
         "--steps", "64", "--out", str(policy)],
        check=True, timeout=300,
    )
    saved = np.load(policy)
    assert saved["W"].shape == (mm.OBS_LEN, mm.ACTION_COUNT)
    assert saved["b"].shape == (mm.ACTION_COUNT,) and saved["scale"].shape == (mm.OBS_LEN,)
    assert int(saved["decisions"]) > 0, "no update in the training"

    out = tmp_path / "tournament"
    bot = f"{sys.executable} {root / 'examples/rl_bot.py'} --policy {policy}"
    run = subprocess.run(
        [maumau_bin, "tournament", "--bots", "random", "--entrant", f"rl=cmd:{bot}",
         "--deals", "3", "--seed", "5", "--out", str(out)],
        capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    standings = {s["name"]: s for s in json.loads((out / "standings.json").read_text())["standings"]}
    assert set(standings) == {"rl", "random"}, standings
    assert standings["rl"]["games"] == 6, standings  # 3 deals, each at both seatings
    assert standings["rl"]["forfeits"] == 0, run.stdout + run.stderr
