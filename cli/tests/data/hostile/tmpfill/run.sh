#!/bin/sh
# Hostile entrant (cli/tests/sandbox.rs): fills its temporary folder.
err=$(head -c 1000000000 /dev/zero 2>&1 >/tmp/fill)
echo "filling /tmp stopped at $(wc -c </tmp/fill) bytes: $err"
exit 7
