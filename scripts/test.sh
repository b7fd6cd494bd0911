#!/usr/bin/env bash
# Every test of Mau Mau Arena: the Rust workspace (unit, property, golden, end-to-end over
# loopback gRPC), then the Python and TypeScript clients playing against the real server.
#
#   scripts/test.sh
#
# Needs a Rust toolchain, Python 3.11+ (with venv and pip) and Node 20 (with npm); it installs
# the client packages itself (clients/python/.venv, clients/typescript/node_modules).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

echo "== Rust: cargo test --workspace =="
cargo test --workspace --locked

echo "== the server binary for the client tests =="
cargo build --locked -p maumau-cli
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
MAUMAU_BIN="$TARGET_DIR/debug/maumau" "$ROOT/scripts/test-clients.sh"
