#!/usr/bin/env bash
# Tests what a Python user installs: builds the three wheels (`maumau`, the command line as a
# binary wheel from cli/ by maturin; `maumau-engine` from python/; `maumau-client` from
# clients/python), installs them into a fresh virtual environment, and from there, with no cargo
# on PATH, runs `maumau check-bot` on the Python example bot, a short `maumau tournament` with it,
# and the tests that need the binary and the client (python/tests-installed: the engine's
# observation against what `maumau serve` sends over gRPC; the reinforcement-learning example
# trained briefly and entered in a tournament).
#
#   scripts/test-wheels.sh
#
# Called by scripts/test-python.sh after its own tests. The wheels are built in the dev profile
# with the workspace's target directory (CARGO_TARGET_DIR or target/), so the binary is the one
# `cargo build -p maumau-cli` builds and is not compiled a second time. Needs Python 3.10+ with
# venv and pip, cargo, and maturin (python/.venv, made by scripts/test-python.sh; made here if
# missing).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
TOOLS="$ROOT/python/.venv"
START=$SECONDS
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

step() { printf '\n== wheels: %s (%ds) ==\n' "$*" "$((SECONDS - START))"; }

step "build tools (maturin in python/.venv)"
if [ ! -x "$TOOLS/bin/maturin" ]; then
  [ -x "$TOOLS/bin/python" ] || "$PYTHON" -m venv "$TOOLS"
  "$TOOLS/bin/pip" install -q --disable-pip-version-check maturin==1.16.0
fi
WHEELS="$WORK/wheels"
mkdir -p "$WHEELS"
# maturin calls cargo (its output shows whether anything was compiled again); the wheels are for this machine (`linux` tag: not for upload to PyPI,
# which needs a manylinux build, but pip installs them here like any other).
build() {
  (cd "$1" && VIRTUAL_ENV="$TOOLS" PATH="$TOOLS/bin:$PATH" \
    "$TOOLS/bin/maturin" build --locked --profile dev --compatibility linux --out "$WHEELS")
}

step "maumau (the command line, maturin bindings = \"bin\")"
T0=$SECONDS
build "$ROOT/python/cli"
echo "built in $((SECONDS - T0)) s"

step "maumau-engine (python/)"
T0=$SECONDS
build "$ROOT/python"
echo "built in $((SECONDS - T0)) s"

step "maumau-client (clients/python, built from a copy so that no build/ is left in the tree)"
mkdir -p "$WORK/client"
cp -r "$ROOT/clients/python/pyproject.toml" "$ROOT/clients/python/maumau_client" "$WORK/client/"
"$TOOLS/bin/pip" wheel -q --disable-pip-version-check --no-deps -w "$WHEELS" "$WORK/client"
ls -l "$WHEELS"

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

step "pytest python/tests-installed (gRPC observation, the RL example)"
# Exit code 5 (no tests collected) is a failure here too.
MAUMAU_ROOT="$ROOT" python -m pytest -q -p no:cacheprovider "$ROOT/python/tests-installed"
step "done"
