#!/bin/sh
# Hostile entrant (cli/tests/sandbox.rs): looks for other seats' tokens in every process's
# environment and in its arguments, and reads the tournament's output folder (its first argument)
# and another entrant's folder. Prints LEAK for anything it finds.
for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do
    tr '\0' '\n' <"$f" 2>/dev/null | grep 'MAUMAU_TOKEN=' | while read -r line; do
        [ "$line" = "MAUMAU_TOKEN=$MAUMAU_TOKEN" ] || echo "LEAK: another token in $f"
    done
done
echo "own token: $(tr '\0' '\n' </proc/$$/environ | grep -c '^MAUMAU_TOKEN=')"
here=$(dirname "$0")
for path in "$1" "$here/../killer" "$here/../memory"; do
    found=$(find "$path" -type f 2>/dev/null | head -1)
    [ -n "$found" ] && echo "LEAK: read $found"
done
echo "looked in: $1"
exit 4
