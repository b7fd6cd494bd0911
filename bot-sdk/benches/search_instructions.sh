#!/usr/bin/env bash
# Instructions per search decision, counted by callgrind, for every case of the strength bench:
# this build's SearchBot against an earlier build's on the same positions, same seeds and same
# playout budget, with the ratio and whether both chose the same actions (docs/PERFORMANCE.md,
# "The search bot at half the instructions"). Needs valgrind (`apt-get install -y valgrind`).
#
#   BEFORE=/path/to/strength-<hash> bash bot-sdk/benches/search_instructions.sh
#   CASES="classic/4" POSITIONS=40 ITERATIONS=2000 BEFORE=... bash bot-sdk/benches/search_instructions.sh
#
# BEFORE names the strength bench binary of the earlier build, built with this file's
# `bot-sdk/benches/strength.rs` copied into a checkout of that commit (so both builds decide the
# same positions the same way; the bench uses only the public API), with its own
# CARGO_TARGET_DIR: `cargo bench -p maumau-bot-sdk --no-default-features --bench strength
# --no-run`. Without BEFORE only this build is counted. POSITIONS (default 20) positions per case,
# ITERATIONS (default 2000, the bot's default budget) playouts per decision. Work files go to a
# temporary directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

POSITIONS=${POSITIONS:-20}
ITERATIONS=${ITERATIONS:-2000}
# classic/3 is the table of `maumau tournament` with no arguments; the others are the strength
# bench's cases.
CASES=${CASES:-"classic/3 classic/2 classic/4 penalty-points/4 brazilian/6 romanian-32/3"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bin=$(cargo bench -p maumau-bot-sdk --no-default-features --bench strength --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -n 1)
[ -x "$bin" ] || { echo "no strength bench binary found" >&2; exit 1; }

# Instructions per decision of one case with binary $2; the chosen actions go to $3.
count() {
    local log="$work/log"
    SEARCH_INSTRUCTIONS="$1:trusted" SEARCH_POSITIONS=$POSITIONS SEARCH_ITERATIONS=$ITERATIONS \
        valgrind --tool=callgrind --toggle-collect='*measured_search*' \
        --callgrind-out-file="$work/out" --log-file="$log" "$2" >"$work/stdout"
    sed -n 's/.*chosen: //p' "$work/stdout" >"$3"
    local decisions
    decisions=$(sed -n 's/.*: \([0-9]*\) decisions.*/\1/p' "$work/stdout")
    local n
    n=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$log" | tail -n 1)
    awk -v n="$n" -v d="$decisions" 'BEGIN { printf "%.0f", n / d }'
}

echo "search decisions: $POSITIONS positions per case, $ITERATIONS playouts each, trusted playouts"
printf '%-18s %14s %14s %8s  %s\n' case before after ratio "same choices"
for case in $CASES; do
    after=$(count "$case" "$bin" "$work/after")
    before="-" ratio="-" same="-"
    if [ -n "${BEFORE:-}" ]; then
        before=$(count "$case" "$BEFORE" "$work/before")
        ratio=$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.3f", a / b }')
        same=$(paste -d'\t' <(sed 's/, /\n/g' "$work/before") <(sed 's/, /\n/g' "$work/after") |
            awk -F'\t' '$1 == $2 { s++ } END { printf "%d of %d", s, NR }')
    fi
    printf '%-18s %14s %14s %8s  %s\n' "$case" "$before" "$after" "$ratio" "$same"
done
