#!/usr/bin/env bash
# Regenerates maumau_client/pb/maumau/v1/*_pb2*.py from ../../proto with the protoc that ships in
# the pinned grpcio-tools (no protoc binary needed). Extra arguments go to the generator, e.g.
#   ./generate.sh --out /tmp/pb      # generate elsewhere (the drift check does this)
# Uses $PYTHON, else .venv/bin/python, else python3.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  if [ -x .venv/bin/python ]; then PYTHON=.venv/bin/python; else PYTHON=python3; fi
fi
exec "$PYTHON" -m maumau_client.generate "$@"
