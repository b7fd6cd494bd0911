#!/usr/bin/env python3
"""Benchmark: games per second of a Python tournament entrant launched per match (`cmd:`), the same
bot staying up between matches (`lobby:`), each on grpcio and on the native transport (the Rust
SDK's runner), and the Rust reference bot, in one run; then `maumau check-bot` on the Python
example bot on each transport.

    scripts/bench-entrants.py [--bin target/release/maumau] [--python clients/python/.venv/bin/python] [--deals 30]
                              [--cases py-cmd,py-lobby,py-cmd-native,py-lobby-native,rust,check-bot,check-bot-native]

Each case is a two-seat tournament of the entrant against the built-in random bot over gRPC on the
server `maumau tournament` starts (`--deals N` duplicate deals, so 2N games), with the same seed:

  py-cmd    `python3 clients/python/examples/random_bot.py`, launched once per match
  py-lobby  `python3 clients/python/examples/ladder_bot.py`, launched once, invited to each match
  rust      the built-in random bot over gRPC (`--over-grpc`), the Rust SDK's runner: both seats
            play over gRPC here, the entrant's and its opponent's
  rust-lobby  `maumau bot --kind random --max-matches 2` as a `lobby:` entrant: the Rust SDK's lobby
            and runner on the entrant's seat alone, as in the Python cases

py-cmd and py-lobby play on grpcio (MAUMAU_PYTHON_TRANSPORT=grpcio); py-cmd-native and
py-lobby-native are the same programs on the native transport (MAUMAU_PYTHON_TRANSPORT=native:
the Python bot's `decide` called by the Rust SDK's runner, which needs maumau_engine installed
beside maumau_client, in the release profile for a fair figure).

It prints each case's games per second (from the tournament's own "N games ... in S s" line) and
the ratios py-lobby / py-cmd, rust / py-lobby, native / grpcio, py-lobby-native / rust and
py-lobby-native / rust-lobby, and each case's decisions per second beside its games (the Python
bot draws its own random numbers, so its games vary in length from run to run), and the CPU time
of the tournament with everything it ran (server, bots, the entrant's processes), in all and per
decision of both seats, which the machine's load moves less than the wall clock. check-bot and
check-bot-native run `maumau check-bot --seed 1 -- PYTHON clients/python/examples/random_bot.py`
(its whole gauntlet) on each transport and print the wall time and the CPU time of check-bot and
everything it launched. The Python must
have maumau_client installed (clients/python/.venv does: scripts/test-clients.sh makes it), and
maumau_engine for the native cases.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "clients" / "python" / "examples"


def transport_env(transport: str) -> dict:
    return {**os.environ, "MAUMAU_PYTHON_TRANSPORT": transport}


def run(binary: str, out: Path, deals: int, args: list[str], transport: str) -> tuple[int, float, int, float]:
    """Games, seconds and decisions from the tournament's summary line, and the CPU seconds of the
    tournament with everything it ran (its server, its bots, the entrant's processes)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [binary, "tournament", "--seats", "2", "--deals", str(deals), "--seed", "20",
         "--threads", "2", "--out", str(out), *args],
        capture_output=True, text=True, env=transport_env(transport),
    )
    if done.returncode != 0:
        sys.exit(f"tournament failed:\n{done.stdout}\n{done.stderr}")
    m = re.search(r"^(\d+) games \(.*\) in ([\d.]+) s; (\d+) decisions", done.stdout, re.M)
    if not m:
        sys.exit(f"no summary line in:\n{done.stdout}")
    if "forfeited" in done.stdout:
        sys.exit(f"an entrant forfeited:\n{done.stdout}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return int(m.group(1)), float(m.group(2)), int(m.group(3)), cpu


def check_bot(binary: str, python: str, transport: str) -> tuple[float, float]:
    """Wall and CPU seconds (check-bot and every process it launched) of the whole gauntlet."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [binary, "check-bot", "--seed", "1", "--", python, str(EXAMPLES / "random_bot.py")],
        capture_output=True, text=True, env=transport_env(transport),
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"check-bot failed on {transport}:\n{done.stdout}\n{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bin", default=str(ROOT / "target" / "release" / "maumau"))
    p.add_argument("--python", default=str(ROOT / "clients" / "python" / ".venv" / "bin" / "python"))
    p.add_argument("--deals", type=int, default=30)
    p.add_argument("--cases", default="py-cmd,py-lobby,py-cmd-native,py-lobby-native,rust,rust-lobby,check-bot,"
                                      "check-bot-native",
                   help="which of the cases to run, in order")
    a = p.parse_args()
    py = a.python
    cmd = ["--bots", "random", "--entrant", f"py=cmd:{py} {EXAMPLES / 'random_bot.py'}"]
    lobby = ["--bots", "random", "--entrant", f"py=lobby:{py} {EXAMPLES / 'ladder_bot.py'} --max-matches 2"]
    cases = {
        "py-cmd": (cmd, "grpcio"),
        "py-lobby": (lobby, "grpcio"),
        "py-cmd-native": (cmd, "native"),
        "py-lobby-native": (lobby, "native"),
        "rust": (["--bots", "random,rs=random", "--over-grpc"], "grpcio"),
        "rust-lobby": (["--bots", "random", "--entrant", f"rs=lobby:{a.bin} bot --kind random --max-matches 2"],
                       "grpcio"),
    }
    rates = {}
    cpu_per_game = {}
    checks = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.cases.split(","):
            if name.startswith("check-bot"):
                transport = "native" if name.endswith("-native") else "grpcio"
                checks[transport] = check_bot(a.bin, py, transport)
                wall, cpu = checks[transport]
                print(f"{name:<16} check-bot's gauntlet on {transport}: {wall:6.2f} s wall, {cpu:6.2f} s CPU", flush=True)
                continue
            args, transport = cases[name]
            games, seconds, decisions, cpu = run(a.bin, Path(tmp) / name, a.deals, args, transport)
            rates[name] = games / seconds
            cpu_per_game[name] = cpu / games
            print(f"{name:<16} {games} games in {seconds:6.2f} s: {rates[name]:7.2f} games/s "
                  f"({decisions / seconds:6.0f} decisions/s of both seats; {cpu:5.2f} s CPU in all, "
                  f"{cpu / decisions * 1000:.3f} ms a decision)", flush=True)
    if "py-cmd" in rates and "py-lobby" in rates:
        print(f"py-lobby / py-cmd: {rates['py-lobby'] / rates['py-cmd']:.2f}x (goal: at least 5x)")
    if "rust" in rates and "py-lobby" in rates:
        print(f"rust / py-lobby:   {rates['rust'] / rates['py-lobby']:.2f}x (goal: at most 2x)")
    for kind in ("cmd", "lobby"):
        if f"py-{kind}-native" in rates and f"py-{kind}" in rates:
            print(f"py-{kind}-native / py-{kind}: {rates[f'py-{kind}-native'] / rates[f'py-{kind}']:.2f}x")
    if "rust" in rates and "py-lobby-native" in rates:
        print(f"py-lobby-native / rust: {rates['py-lobby-native'] / rates['rust']:.2f}x (goal: at least 0.67x)")
    if "rust-lobby" in rates and "py-lobby-native" in rates:
        print(f"py-lobby-native / rust-lobby: {rates['py-lobby-native'] / rates['rust-lobby']:.2f}x; "
              f"by games per CPU second of the whole tournament "
              f"{cpu_per_game['rust-lobby'] / cpu_per_game['py-lobby-native']:.2f}x")
    if "grpcio" in checks and "native" in checks:
        (wall_g, cpu_g), (wall_n, cpu_n) = checks["grpcio"], checks["native"]
        print(f"check-bot grpcio / native: {wall_g / wall_n:.2f}x wall, {cpu_g / cpu_n:.2f}x CPU (goal: at least 2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
