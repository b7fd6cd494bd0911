#!/usr/bin/env bash
# Tests what a Python user installs: builds the three wheels (`maumau`, the command line as a
# binary wheel from cli/ by maturin; `maumau-engine` from python/; `maumau-client` from
# clients/python), installs them into a fresh virtual environment, and from there, with no cargo
# on PATH, runs `maumau check-bot` on the Python example bot, a short `maumau tournament` with it,
# and the tests that need the binary and the client (python/tests-installed: the engine's
# observation against what `maumau serve` sends over gRPC; the reinforcement-learning example
# trained briefly and entered in a tournament; the client's native transport, a Python bot played
# by the Rust runner in maumau_engine, beside grpcio). With both packages installed the example
# bot plays check-bot and the tournament below on the native transport (scripts/test-clients.sh
# plays it on grpcio, in a venv without maumau_engine).
#
#   scripts/test-wheels.sh
#
# Called by scripts/test-python.sh after its own tests. The wheels are built by
# scripts/build-wheels.sh, the command docs/PYTHON.md gives, but in the dev profile, unstripped and
# for this machine: with the workspace's target directory (CARGO_TARGET_DIR or target/) the binary
# is then the one `cargo build -p maumau-cli` builds, not compiled a second time. Needs Python
# 3.10+ with venv and pip, cargo, and maturin (python/.venv, made by scripts/test-python.sh; made
# by build-wheels.sh if missing).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
TOOLS="$ROOT/python/.venv"
START=$SECONDS
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

step() { printf '\n== wheels: %s (%ds) ==\n' "$*" "$((SECONDS - START))"; }

WHEELS="$WORK/wheels"
step "the three wheels: scripts/build-wheels.sh, dev profile, unstripped, for this machine"
if ! grep -q '^scripts/build-wheels.sh ' "$ROOT/docs/PYTHON.md"; then
  echo "test-wheels.sh: docs/PYTHON.md no longer builds the wheels with scripts/build-wheels.sh" >&2
  exit 1
fi
# The wheels are for this machine (`linux` tag: not for upload to PyPI, which needs a manylinux
# tag, but pip installs them here like any other).
PROFILE=dev STRIP=false COMPATIBILITY=linux PYTHON="$PYTHON" "$ROOT/scripts/build-wheels.sh" "$WHEELS"

step "a fresh virtual environment with the three wheels (and pytest)"
VENV="$WORK/venv"
"$PYTHON" -m venv "$VENV"
# The wheel files themselves, so that pip takes `maumau`, `maumau-client` and `maumau-engine`
# from here and only their own dependencies (grpcio, protobuf, numpy) from the index.
"$VENV/bin/pip" install -q --disable-pip-version-check "$WHEELS"/*.whl pytest==9.2.0

# From here on: the virtual environment and the system, no cargo, no rustc, no target directory.
# The toolchain's usual homes leave PATH; should a system directory hold a cargo anyway (Debian's
# cargo package), stubs that fail loudly come before it.
NO_RUST="$WORK/no-rust"
mkdir -p "$NO_RUST"
for tool in cargo rustc rustup maturin; do
  printf '#!/bin/sh\necho "test-wheels.sh: %s called where only the wheels may be used" >&2\nexit 1\n' "$tool" >"$NO_RUST/$tool"
  chmod +x "$NO_RUST/$tool"
done
export PATH="$VENV/bin:$NO_RUST:/usr/local/bin:/usr/bin:/bin"
unset CARGO_TARGET_DIR MAUMAU_BIN VIRTUAL_ENV
for tool in cargo rustc; do
  if [ "$(command -v "$tool")" != "$NO_RUST/$tool" ]; then
    echo "test-wheels.sh: $tool is still on PATH ($(command -v "$tool"))" >&2
    exit 1
  fi
done
cd "$WORK"
if [ "$(command -v maumau)" != "$VENV/bin/maumau" ]; then
  echo "test-wheels.sh: maumau is $(command -v maumau), not the wheel's $VENV/bin/maumau" >&2
  exit 1
fi
maumau --version

step "maumau check-bot -- python <the client's example bot>"
maumau check-bot --profile classic:2 -- python "$ROOT/clients/python/examples/random_bot.py"

step "a short maumau tournament with the example bot as an entrant"
maumau tournament --bots random,heuristic --deals 2 --seed 7 --out "$WORK/tournament" \
  --entrant 'py=cmd:python "'"$ROOT"'/clients/python/examples/random_bot.py"'
test -s "$WORK/tournament/standings.json"

step "pytest python/tests-installed (gRPC observation, the RL example, the native transport)"
# Exit code 5 (no tests collected) is a failure here too.
MAUMAU_ROOT="$ROOT" python -m pytest -q -p no:cacheprovider "$ROOT/python/tests-installed"
step "done"
