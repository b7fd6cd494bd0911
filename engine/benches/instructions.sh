#!/usr/bin/env bash
# Instructions per decision, counted by callgrind, for every case of the playout bench and for
# OpenSpiel's crazy_eights C++ loop in the same run, with the ratios (docs/PERFORMANCE.md, engine
# section). Needs valgrind (`apt-get install -y valgrind`); the OpenSpiel column needs a Python
# with `open_spiel` (`pip install open_spiel`), named by OPENSPIEL_PYTHON (default python3), and
# is left out when it cannot import pyspiel.
#
#   bash engine/benches/instructions.sh            # every case, apply_unchecked and apply_with
#   CASES="classic/4" bash engine/benches/instructions.sh
#   BEFORE=/path/to/playout-<hash> bash engine/benches/instructions.sh   # adds a "before" column
#
# DECISIONS (default 200000) decisions per engine case after 10 000 of warm-up; OPENSPIEL_GAMES
# (default 2000) OpenSpiel games. BEFORE names the playout bench binary of an earlier build
# (`cargo bench -p maumau-engine --bench playout --no-run` in a checkout of that commit, with its
# own CARGO_TARGET_DIR): its `apply_unchecked` column is counted in the same run, case by case.
# Work files go to a temporary directory.
set -euo pipefail
cd "$(dirname "$0")/../.."

DECISIONS=${DECISIONS:-200000}
OPENSPIEL_GAMES=${OPENSPIEL_GAMES:-2000}
OPENSPIEL_PYTHON=${OPENSPIEL_PYTHON:-python3}
CASES=${CASES:-"classic/4 classic/2 penalty-points/4 brazilian/4 brazilian/8 romanian-32/2 romanian-32/4 bare-crazy-eights/4"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bin=$(cargo bench -p maumau-engine --bench playout --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -n 1)
[ -x "$bin" ] || { echo "no playout bench binary found" >&2; exit 1; }

# Instructions callgrind collected inside the toggled function, from its log.
collected() { sed -n 's/.*Collected : \([0-9]*\).*/\1/p' "$1" | tail -n 1; }

# instructions per decision of one engine case; $2 = 1 for apply_with; $3 the binary (default
# this build's).
engine_case() {
    local log="$work/log"
    PLAYOUT_CASE=$1 PLAYOUT_DECISIONS=$DECISIONS PLAYOUT_CHECKED=$2 valgrind --tool=callgrind \
        --toggle-collect='*measured_run*' --callgrind-out-file="$work/out" --log-file="$log" \
        "${3:-$bin}" >"$work/stdout"
    sed -n 's/.*checksum \([0-9a-f]*\).*/\1/p' "$work/stdout" >"$work/checksum"
    awk -v n="$(collected "$log")" -v d="$DECISIONS" 'BEGIN { printf "%.1f", n / d }'
}

openspiel=""
if "$OPENSPIEL_PYTHON" -c 'import pyspiel' 2>/dev/null; then
    log="$work/os-log"
    decisions=$(valgrind --tool=callgrind --toggle-collect='open_spiel::EvaluateBots*' \
        --callgrind-out-file="$work/os-out" --log-file="$log" \
        "$OPENSPIEL_PYTHON" engine/benches/openspiel_loop.py "$OPENSPIEL_GAMES" | awk '{ print $3 }')
    openspiel=$(awk -v n="$(collected "$log")" -v d="$decisions" 'BEGIN { printf "%.1f", n / d }')
    echo "OpenSpiel crazy_eights/4, C++ EvaluateBots loop: $openspiel instructions per decision" \
        "($decisions decisions in $OPENSPIEL_GAMES games)"
else
    echo "OpenSpiel: $OPENSPIEL_PYTHON cannot import pyspiel; its column is left out"
fi

printf '%-22s %10s %12s %12s %14s %14s  %s\n' case before unchecked apply_with "x OpenSpiel" \
    "vs classic/4" "checksum (before)"
classic=""
for case in $CASES; do
    before="-"
    before_sum=""
    if [ -n "${BEFORE:-}" ]; then
        before=$(engine_case "$case" 0 "$BEFORE")
        before_sum=" ($(cat "$work/checksum"))"
    fi
    fast=$(engine_case "$case" 0)
    sum=$(cat "$work/checksum")
    checked="-"
    [[ $case == bare* ]] || checked=$(engine_case "$case" 1)
    [ "$case" = classic/4 ] && classic=$fast
    ratio="-"
    [ -n "$openspiel" ] && ratio=$(awk -v o="$openspiel" -v f="$fast" 'BEGIN { printf "%.2f", o / f }')
    rel="-"
    [ -n "$classic" ] && rel=$(awk -v c="$classic" -v f="$fast" 'BEGIN { printf "%+.1f%%", 100 * (f / c - 1) }')
    printf '%-22s %10s %12s %12s %14s %14s  %s\n' "$case" "$before" "$fast" "$checked" "$ratio" \
        "$rel" "$sum$before_sum"
done
