#!/usr/bin/env bash
# Tests the Python and Node clients against the real server, and runs the conformance kit.
#
#   scripts/test-clients.sh
#
# 1. builds the server (`cargo build --release -p maumau-cli`) unless MAUMAU_BIN names a binary;
# 2. Python: a venv in clients/python/.venv with the pinned dependencies and pytest, and
#    Node: `npm ci` in clients/typescript from the committed package-lock.json (in parallel);
# 3. drift checks: regenerates the Python code from proto/ into a temporary directory and diffs it
#    against the checked-in clients/python/maumau_client/pb, and the TypeScript code
#    (`npm run generate`) against clients/typescript/src/gen, and rebuilds the /play page's script
#    (`npm run build:play`) against server/assets/play.bundle.js (any difference fails);
# 4. runs pytest and `npm test` (each client plays the server's heuristic and search bots too;
#    the Node tests also pack the client, install the tarball in an empty folder and play a match
#    with it, and drive examples/web in Chromium over grpc-web: screenshots in
#    $MAUMAU_TEST_OUTPUT/web; and play a match by clicks on the server's /play page: screenshots
#    in $MAUMAU_TEST_OUTPUT/play;
#    pytest also drives the match viewer in Debian's Chromium with Playwright and saves
#    screenshots of each profile's table in $MAUMAU_TEST_OUTPUT/viewer, by default
#    target/test-output/viewer);
# 5. runs `maumau check-bot` on the Python and TypeScript example bots (the Python one also with
#    --sandbox; the TypeScript ladder
#    example with --lobby: one launch for every match; the Python one is in pytest) and on the Rust reference
#    bots (heuristic, search); exits non-zero on any failure (pytest's "no tests ran" included).
#
# Needs only Python 3.11+ with venv and pip, Node 20 with npm, Chromium (Debian: `apt-get install
# -y chromium`; or CHROMIUM=path), and cargo when MAUMAU_BIN is unset.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PY_DIR="$ROOT/clients/python"
JS_DIR="$ROOT/clients/typescript"
PYTHON="${PYTHON:-python3}"
START=$SECONDS
NPM_PID=""
GEN_TMP=""
cleanup() {
  if [ -n "$NPM_PID" ]; then kill "$NPM_PID" 2>/dev/null || true; fi
  if [ -n "$GEN_TMP" ]; then rm -rf "$GEN_TMP"; fi
}
trap cleanup EXIT

step() { printf '\n== %s (%ds) ==\n' "$*" "$((SECONDS - START))"; }

step "server binary"
if [ -n "${MAUMAU_BIN:-}" ]; then
  echo "MAUMAU_BIN=$MAUMAU_BIN"
else
  (cd "$ROOT" && cargo build --release --locked -p maumau-cli)
  TARGET_DIR="${CARGO_TARGET_DIR:-$(cd "$ROOT" && cargo metadata --format-version 1 --no-deps |
    "$PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')}"
  MAUMAU_BIN="$TARGET_DIR/release/maumau"
fi
if [ ! -x "$MAUMAU_BIN" ]; then
  echo "no server binary at $MAUMAU_BIN" >&2
  exit 1
fi
MAUMAU_BIN="$(cd "$(dirname "$MAUMAU_BIN")" && pwd)/$(basename "$MAUMAU_BIN")"
export MAUMAU_BIN

# npm ci downloads while pip does (both mostly wait on the network).
step "node: npm ci (in the background)"
node --version
npm --version
NPM_LOG="$(mktemp)"
npm --prefix "$JS_DIR" ci --ignore-scripts --no-audit --no-fund >"$NPM_LOG" 2>&1 &
NPM_PID=$!

step "python: venv and dependencies"
"$PYTHON" --version
VENV="$PY_DIR/.venv"
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
fi
VPY="$VENV/bin/python"
PIP=("$VPY" -m pip --disable-pip-version-check --no-input)
# The pinned dependencies (and pytest) from pyproject.toml, then the package itself, editable,
# without a second download of setuptools (grpcio-tools brings it).
REQS="$(mktemp)"
"$VPY" - "$PY_DIR/pyproject.toml" >"$REQS" <<'PY'
import sys, tomllib
project = tomllib.load(open(sys.argv[1], "rb"))["project"]
print("\n".join(project["dependencies"] + project["optional-dependencies"]["test"]))
PY
"${PIP[@]}" install --quiet -r "$REQS"
"${PIP[@]}" install --quiet --no-deps --no-build-isolation -e "$PY_DIR"
rm -f "$REQS"
# The match viewer's browser tests (tests/test_viewer.py) drive Debian's Chromium with Playwright,
# launched with the system browser as its executable: `playwright install` is never run.
"${PIP[@]}" install --quiet playwright==1.65.0
"${PIP[@]}" list 2>/dev/null | grep -Ei '^(grpcio|grpcio-tools|protobuf|pytest|maumau-client|playwright) '

step "python: generated code matches the protos (drift check)"
GEN_TMP="$(mktemp -d)"
"$VPY" -m maumau_client.generate --proto "$ROOT/proto" --out "$GEN_TMP/pb"
if ! diff -ru --exclude=__pycache__ "$PY_DIR/maumau_client/pb" "$GEN_TMP/pb"; then
  echo "the checked-in Python code is not what the protos generate: run clients/python/generate.sh" >&2
  exit 1
fi
echo "no drift"

step "node: waiting for npm ci"
npm_rc=0
wait "$NPM_PID" || npm_rc=$?
NPM_PID=""
if [ "$npm_rc" -ne 0 ]; then
  cat "$NPM_LOG" >&2
  echo "npm ci failed ($npm_rc)" >&2
  exit 1
fi
cat "$NPM_LOG"
rm -f "$NPM_LOG"

step "node: generated code matches the protos (drift check)"
# `npm run generate` (buf generate with the protoc-gen-es in node_modules, no network), as written,
# in a copy of the package's generator setup beside the protos, diffed against clients/typescript/src/gen.
JS_GEN="$GEN_TMP/ts/clients/typescript"
mkdir -p "$JS_GEN"
cp "$JS_DIR/package.json" "$JS_DIR/buf.gen.yaml" "$JS_GEN/"
ln -s "$JS_DIR/node_modules" "$JS_GEN/node_modules"
ln -s "$ROOT/proto" "$GEN_TMP/ts/proto"
(cd "$JS_GEN" && npm run generate)
if ! diff -ru "$JS_DIR/src/gen" "$JS_GEN/src/gen"; then
  echo "the checked-in TypeScript code is not what the protos generate: run \`npm run generate\` in clients/typescript" >&2
  exit 1
fi
echo "no drift"

step "node: the /play page's script bundle matches its sources (drift check)"
# `npm run build:play` rebuilds server/assets/play.bundle.js (server/assets/play.js with the
# client's browser entry, esbuild pinned in package-lock.json) in place; the committed bundle is
# put back afterwards, and any difference fails.
cp "$ROOT/server/assets/play.bundle.js" "$GEN_TMP/play.bundle.js"
(cd "$JS_DIR" && npm run build:play)
if ! cmp -s "$ROOT/server/assets/play.bundle.js" "$GEN_TMP/play.bundle.js"; then
  cp "$GEN_TMP/play.bundle.js" "$ROOT/server/assets/play.bundle.js"
  echo "server/assets/play.bundle.js is not what its sources build: run \`npm run build:play\` in clients/typescript and commit it" >&2
  exit 1
fi
echo "no drift"

failed=0

step "python: pytest"
set +e
(cd "$PY_DIR" && "$VPY" -m pytest -v -p no:cacheprovider tests)
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "pytest collected no tests" >&2
  failed=1
elif [ "$rc" -ne 0 ]; then
  failed=1
fi

step "node: npm test"
set +e
(cd "$JS_DIR" && npm test)
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
  failed=1
fi

# The conformance kit (`maumau check-bot`) puts each example bot and each Rust reference bot
# through its whole gauntlet; any failed check fails the client tests.
step "check-bot: the example bots and the Rust reference bots pass the conformance kit"
check_bot() {
  local name="$1"
  shift
  echo "-- $name"
  if ! "$MAUMAU_BIN" check-bot "$@"; then
    echo "check-bot FAILED for $name" >&2
    failed=1
  fi
}
set +e
check_bot "the Python example" -- "$VPY" "$PY_DIR/examples/random_bot.py"
# In the sandbox it sees the client (and its venv, inside it) and the interpreter the venv links to.
PY_BASE="$("$VPY" -c 'import sys; print(sys.base_prefix)')"
# Sandboxed programs run as nobody: every folder above the interpreter and the client must be
# searchable by all users (a Python under a home folder of mode 700 is not; CI opens /root).
closed=""
for d in "$PY_BASE" "$PY_DIR"; do
  while [ "$d" != "/" ]; do
    if [ -d "$d" ] && [ -z "$(find "$d" -maxdepth 0 -perm -o+x)" ]; then closed="$d"; fi
    d="$(dirname "$d")"
  done
done
if [ -n "$closed" ]; then
  echo "-- the Python example, sandboxed: SKIPPED: $closed is not searchable by all users (chmod o+x it to run this check)"
else
  check_bot "the Python example, sandboxed" --sandbox --sandbox-bind "$PY_DIR" \
    --sandbox-bind "$PY_BASE" -- "$VPY" "$PY_DIR/examples/random_bot.py"
fi
check_bot "the TypeScript example" -- node "$JS_DIR/examples/random-bot.js"
# The ladder examples stay up: one launch, every match through the lobby (check-bot --lobby).
check_bot "the TypeScript ladder example, in a lobby" --lobby -- node "$JS_DIR/examples/ladder-bot.js"
check_bot "maumau bot --kind heuristic" -- "$MAUMAU_BIN" bot --kind heuristic
# At its default budget the search bot takes up to a few hundred milliseconds a decision in a
# debug build (scripts/test.sh tests one): give it the server's default 2 s per decision.
check_bot "maumau bot --kind search" --deadline-ms 4000 -- "$MAUMAU_BIN" bot --kind search
set -e

step "done"
if [ "$failed" -ne 0 ]; then
  echo "client tests FAILED" >&2
  exit 1
fi
echo "client tests passed"
