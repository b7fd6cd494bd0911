#!/bin/sh
# Hostile entrant (cli/tests/sandbox.rs): allocates far past its memory limit (`tail` keeps a
# line that never ends in memory).
head -c 1000000000 /dev/zero | tail >/dev/null
echo "tail ended with status $?"
exit 6
