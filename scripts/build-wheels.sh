#!/usr/bin/env bash
# Builds the three wheels a Python user installs, into OUT (default target/wheels):
# `maumau` (python/cli: the command line, the Rust binary in a wheel by maturin's `bin`
# bindings), `maumau-engine` (python/: the rules engine as a native module) and `maumau-client`
# (clients/python: the gRPC client, pure Python).
#
#   scripts/build-wheels.sh [OUT]
#
# Release profile by default. PROFILE=dev builds in the dev profile, STRIP=false keeps the
# command line's symbols, COMPATIBILITY=linux tags the wheels for this machine only (by default
# maturin gives the manylinux tag the binaries meet, which PyPI accepts). Needs cargo and Python
# 3.10+ with venv and pip; the pinned maturin comes from python/.venv (made here if missing, as
# scripts/test-python.sh makes it).
#
# The command line's wheel does not compile the workspace again: maturin runs `cargo rustc
# --release --bin maumau` on cli/ in the same target directory (CARGO_TARGET_DIR or target/), so
# every dependency `cargo build --release` (or `cargo run --release -- ...`) compiled is reused;
# only the maumau crate itself is compiled once more, with rustc's `-C strip=symbols`
# (python/cli/pyproject.toml: `strip = true`), and kept beside the unstripped one, so neither
# build undoes the other. What a build of other packages compiled (`cargo test --workspace`,
# `cargo bench`, `cargo build --workspace`) is not reused for a dozen crates (tokio, tonic, clap,
# syn, libc, ...) and those that depend on them: cargo builds each crate with the features all
# the packages of one build ask for, and those builds ask for more (tokio's test-util, tonic's
# TLS, ...) than the command line does.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
TOOLS="$ROOT/python/.venv"
OUT="$(mkdir -p "${1:-$ROOT/target/wheels}" && cd "${1:-$ROOT/target/wheels}" && pwd)"
PROFILE="${PROFILE:-release}"
STRIP="${STRIP:-true}"
COMPATIBILITY="${COMPATIBILITY:-}"

if [ ! -x "$TOOLS/bin/maturin" ]; then
  [ -x "$TOOLS/bin/python" ] || "$PYTHON" -m venv "$TOOLS"
  "$TOOLS/bin/pip" install -q --disable-pip-version-check maturin==1.16.0
fi

# maturin calls cargo; its output shows what, if anything, was compiled.
maturin() {
  local dir="$1"
  shift
  local args=(build --locked --profile "$PROFILE" --out "$OUT" "$@")
  if [ -n "$COMPATIBILITY" ]; then args+=(--compatibility "$COMPATIBILITY"); fi
  (cd "$dir" && VIRTUAL_ENV="$TOOLS" PATH="$TOOLS/bin:$PATH" "$TOOLS/bin/maturin" "${args[@]}")
}

T0=$SECONDS
echo "== maumau: the command line (python/cli, profile $PROFILE, strip $STRIP) =="
maturin "$ROOT/python/cli" --strip "$STRIP"
echo "built in $((SECONDS - T0)) s"

T0=$SECONDS
echo "== maumau-engine (python/, profile $PROFILE) =="
maturin "$ROOT/python"
echo "built in $((SECONDS - T0)) s"

echo "== maumau-client (clients/python, built from a copy so that no build/ is left in the tree) =="
COPY="$(mktemp -d)"
trap 'rm -rf "$COPY"' EXIT
cp -r "$ROOT/clients/python/pyproject.toml" "$ROOT/clients/python/maumau_client" "$COPY/"
"$TOOLS/bin/pip" wheel -q --disable-pip-version-check --no-deps -w "$OUT" "$COPY"

ls -l "$OUT"/maumau-0.1.0-*.whl "$OUT"/maumau_engine-*.whl "$OUT"/maumau_client-*.whl
