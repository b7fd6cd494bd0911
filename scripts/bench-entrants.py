#!/usr/bin/env python3
"""Benchmark: games per second of a Python tournament entrant launched per match (`cmd:`), the same
bot staying up between matches (`lobby:`), and the Rust reference bot, in one run.

    scripts/bench-entrants.py [--bin target/release/maumau] [--python clients/python/.venv/bin/python] [--deals 30]
                              [--cases py-cmd,py-lobby,rust]

Each case is a two-seat tournament of the entrant against the built-in random bot over gRPC on the
server `maumau tournament` starts (`--deals N` duplicate deals, so 2N games), with the same seed:

  py-cmd    `python3 clients/python/examples/random_bot.py`, launched once per match
  py-lobby  `python3 clients/python/examples/ladder_bot.py`, launched once, invited to each match
  rust      the built-in random bot over gRPC (`--over-grpc`), the Rust SDK's runner

It prints each case's games per second (from the tournament's own "N games ... in S s" line) and
the ratios py-lobby / py-cmd and rust / py-lobby, and each case's decisions per second beside its
games (the Python bot draws its own random numbers, so its games vary in length from run to run). The Python must have maumau_client installed
(clients/python/.venv does: scripts/test-clients.sh makes it).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "clients" / "python" / "examples"


def run(binary: str, out: Path, deals: int, args: list[str]) -> tuple[int, float, int]:
    done = subprocess.run(
        [binary, "tournament", "--seats", "2", "--deals", str(deals), "--seed", "20",
         "--threads", "2", "--out", str(out), *args],
        capture_output=True, text=True,
    )
    if done.returncode != 0:
        sys.exit(f"tournament failed:\n{done.stdout}\n{done.stderr}")
    m = re.search(r"^(\d+) games \(.*\) in ([\d.]+) s; (\d+) decisions", done.stdout, re.M)
    if not m:
        sys.exit(f"no summary line in:\n{done.stdout}")
    if "forfeited" in done.stdout:
        sys.exit(f"an entrant forfeited:\n{done.stdout}")
    return int(m.group(1)), float(m.group(2)), int(m.group(3))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=str(ROOT / "target" / "release" / "maumau"))
    p.add_argument("--python", default=str(ROOT / "clients" / "python" / ".venv" / "bin" / "python"))
    p.add_argument("--deals", type=int, default=30)
    p.add_argument("--cases", default="py-cmd,py-lobby,rust", help="which of the cases to run, in order")
    a = p.parse_args()
    py = a.python
    cases = {
        "py-cmd": ["--bots", "random", "--entrant",
                   f"py=cmd:{py} {EXAMPLES / 'random_bot.py'}"],
        "py-lobby": ["--bots", "random", "--entrant",
                     f"py=lobby:{py} {EXAMPLES / 'ladder_bot.py'} --max-matches 2"],
        "rust": ["--bots", "random,rs=random", "--over-grpc"],
    }
    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.cases.split(","):
            games, seconds, decisions = run(a.bin, Path(tmp) / name, a.deals, cases[name])
            rates[name] = games / seconds
            print(f"{name:<9} {games} games in {seconds:6.2f} s: {rates[name]:7.2f} games/s "
                  f"({decisions / seconds:6.0f} decisions/s of both seats)", flush=True)
    if "py-cmd" in rates and "py-lobby" in rates:
        print(f"py-lobby / py-cmd: {rates['py-lobby'] / rates['py-cmd']:.2f}x (goal: at least 5x)")
    if "rust" in rates and "py-lobby" in rates:
        print(f"rust / py-lobby:   {rates['rust'] / rates['py-lobby']:.2f}x (goal: at most 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
