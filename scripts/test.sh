#!/usr/bin/env bash
# Every test of Mau Mau Arena: the Rust workspace (unit, property, golden, end-to-end over
# loopback gRPC), the engine's Python package (scripts/test-python.sh), then the Python and
# TypeScript clients playing against the real server.
#
#   scripts/test.sh
#
# Needs a Rust toolchain, Python 3.11+ (with venv and pip) and Node 20 (with npm). It sets up the
# rest itself: first scripts/setup-test-machine.sh installs the Debian packages the tests use
# (PostgreSQL's server binaries, Chromium, openssl, bubblewrap) when they are missing, or says
# how and stops; then the client packages (clients/python/.venv, clients/typescript/node_modules,
# python/.venv) are installed by the scripts that test them, and a throwaway PostgreSQL server is
# started for the ladder's storage tests (scripts/postgres-temp.sh), stopped on exit.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

echo "== the machine: the Debian packages the tests use =="
"$ROOT/scripts/setup-test-machine.sh"

if [[ -z "${MAUMAU_TEST_POSTGRES:-}" ]]; then
  echo "== a throwaway PostgreSQL for the ladder's storage tests =="
  if ! PG_ENV="$("$ROOT/scripts/postgres-temp.sh" start)"; then
    echo "scripts/test.sh: no throwaway PostgreSQL server for the ladder's tests (see above)" >&2
    exit 1
  fi
  eval "$(printf '%s\n' "$PG_ENV" | sed 's/^/export /')"
  trap '"$ROOT/scripts/postgres-temp.sh" stop "$MAUMAU_POSTGRES_DIR"' EXIT
  echo "$MAUMAU_TEST_POSTGRES"
fi

echo "== Rust: cargo test --workspace =="
cargo test --workspace --locked

echo "== the engine's Python package (python/): maturin develop, pytest =="
"$ROOT/scripts/test-python.sh"

echo "== the server binary for the client tests =="
cargo build --locked -p maumau-cli
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
MAUMAU_BIN="$TARGET_DIR/debug/maumau" "$ROOT/scripts/test-clients.sh"
