#!/usr/bin/env bash
# Benchmark: what `--sandbox` costs a tournament per game and check-bot per gauntlet, with and
# without it in the same run (docs/PERFORMANCE.md, "The sandbox").
#
#   scripts/bench-sandbox.sh
#
# MAUMAU names the binary (default target/release/maumau), ROUNDS the with/without pairs (default
# 3, alternating, without first), DEALS the tournament's duplicate deals (default 20: 40 games).
# The tournament is two seats: `maumau bot --kind random` launched per game (`cmd:`) against the
# built-in random bot, on the server the tournament starts, so every game is one launch. The
# gauntlet is check-bot's on `maumau bot --kind heuristic` (11 matches, 11 launches). Prints each
# run's seconds, then the mean of each and the ratio with/without. The cost of one launch alone is
# `cargo bench -p maumau-sandbox --bench launch`.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MAUMAU="${MAUMAU:-$ROOT/target/release/maumau}"
ROUNDS="${ROUNDS:-3}"
DEALS="${DEALS:-20}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

# Seconds (wall clock, 3 decimals) that "$@" took; its output goes to $TMP/last.log.
seconds() {
  local start end
  start=$(date +%s.%N)
  if ! "$@" >"$TMP/last.log" 2>&1; then
    cat "$TMP/last.log" >&2
    return 1
  fi
  end=$(date +%s.%N)
  echo "$start $end" | awk '{printf "%.3f", $2 - $1}'
}

tournament() {
  rm -rf "$TMP/out"
  seconds "$MAUMAU" tournament --bots random --seats 2 --deals "$DEALS" --seed 3 --threads 2 \
    --no-replays --out "$TMP/out" \
    --entrant "bot=cmd:'$MAUMAU' bot --kind random --server \"\$MAUMAU_URL\" --seed \"\$MAUMAU_SEED\"" "$@"
}

gauntlet() {
  seconds "$MAUMAU" check-bot --seed 3 --log-dir "$TMP/logs" "$@" -- "$MAUMAU" bot --kind heuristic
}

games=$((DEALS * 2))
t_off=0; t_on=0; g_off=0; g_on=0
for round in $(seq "$ROUNDS"); do
  a=$(tournament); b=$(tournament --sandbox)
  c=$(gauntlet); d=$(gauntlet --sandbox)
  echo "round $round: tournament of $games games ${a} s, sandboxed ${b} s; gauntlet ${c} s, sandboxed ${d} s"
  t_off=$(echo "$t_off $a" | awk '{print $1 + $2}'); t_on=$(echo "$t_on $b" | awk '{print $1 + $2}')
  g_off=$(echo "$g_off $c" | awk '{print $1 + $2}'); g_on=$(echo "$g_on $d" | awk '{print $1 + $2}')
done
echo "$t_off $t_on $g_off $g_on $ROUNDS $games" | awk '{
  printf "tournament: %.1f ms per game, sandboxed %.1f ms per game: ratio %.2f, %.1f ms more per game\n",
    1000 * $1 / $5 / $6, 1000 * $2 / $5 / $6, $2 / $1, 1000 * ($2 - $1) / $5 / $6
  printf "gauntlet: %.2f s, sandboxed %.2f s: ratio %.2f\n", $3 / $5, $4 / $5, $4 / $3
}'
