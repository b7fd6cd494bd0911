#!/usr/bin/env bash
# Every test of Mau Mau Arena: the Rust workspace (unit, property, golden, end-to-end over
# loopback gRPC), the engine's Python package (scripts/test-python.sh), then the Python and
# TypeScript clients playing against the real server.
#
#   scripts/test.sh
#
# Needs a Rust toolchain, Python 3.11+ (with venv and pip), Node 20 (with npm) and PostgreSQL's
# server binaries (Debian: `sudo apt-get install -y postgresql`); it installs the client packages
# itself (clients/python/.venv, clients/typescript/node_modules) and starts a throwaway
# PostgreSQL server for the ladder's storage tests (scripts/postgres-temp.sh), stopped on exit.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

if [[ -z "${MAUMAU_TEST_POSTGRES:-}" ]]; then
  echo "== a throwaway PostgreSQL for the ladder's storage tests =="
  if ! PG_ENV="$("$ROOT/scripts/postgres-temp.sh" start)"; then
    echo "scripts/test.sh: the ladder's tests need PostgreSQL's server binaries; install them with" >&2
    echo "    sudo apt-get install -y postgresql" >&2
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
