#!/usr/bin/env bash
# Tests the Python package of the engine (python/, `maumau_engine`): builds the native module
# once in the dev profile with maturin into python/.venv and runs its pytest suite (the Game
# class against golden games written by the Rust engine, PettingZoo's api_test and seed test,
# the vectorized environment, the built-in bots, Gymnasium's check_env on the single-agent
# environment, evaluate's intervals), then scripts/test-wheels.sh: the wheels a Python user
# installs (`maumau` with the command line, `maumau-engine`, `maumau-client`) in a fresh virtual
# environment, with check-bot, a tournament and the tests that need the binary and the client.
#
#   scripts/test-python.sh
#
# Needs Python 3.10+ with venv and pip, and cargo; installs the pinned maturin, numpy,
# PettingZoo, Gymnasium and pytest into the venv itself.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PKG="$ROOT/python"
PYTHON="${PYTHON:-python3}"
VENV="$PKG/.venv"

echo "== python engine: venv and pinned tools =="
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check \
  maturin==1.16.0 numpy==2.4.6 pettingzoo==1.27.0 gymnasium==1.4.0 pytest==9.2.0

echo "== python engine: maturin develop (dev profile) =="
(cd "$PKG" && VIRTUAL_ENV="$VENV" PATH="$VENV/bin:$PATH" "$VENV/bin/maturin" develop --locked)

echo "== python engine: pytest =="
# Exit code 5 (no tests collected) is a failure here too.
(cd "$PKG" && "$VENV/bin/python" -m pytest -q)

"$ROOT/scripts/test-wheels.sh"
