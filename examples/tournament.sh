#!/usr/bin/env bash
# A tournament run from a script with the `maumau tournament` command line: a Swiss event of
# two-seat tables between the reference bots, a deliberately sloppy one, and an external program
# over gRPC (`maumau bot`, standing in for a bot of yours in any language), then its standings.
#
#   examples/tournament.sh [OUT-DIR]      # default OUT-DIR: maumau-tournament/example
#
# $MAUMAU names the `maumau` binary; unset, the script builds it (cargo build --release).
# Running it again on the same OUT-DIR resumes the tournament there (finished games are kept).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="${1:-maumau-tournament/example}"
if [[ -z "${MAUMAU:-}" ]]; then
  cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml" -p maumau-cli
  MAUMAU="${CARGO_TARGET_DIR:-$ROOT/target}/release/maumau"
fi

# An external entrant is any command: it is run once per match with the server in MAUMAU_URL
# (and MAUMAU_ADDR), its seat token in MAUMAU_TOKEN and a seed for its own choices in MAUMAU_SEED.
"$MAUMAU" tournament \
  --format swiss --rounds 3 --seats 2 --deals 2 --threads 2 \
  --bots heuristic,random,sloppy=heuristic~0.3 \
  --entrant "mine=cmd:'$MAUMAU' bot --kind heuristic --server \"\$MAUMAU_URL\" --seed \"\$MAUMAU_SEED\"" \
  --out "$OUT"

echo
echo "standings.csv:"
cat "$OUT/standings.csv"
