#!/bin/sh
# Hostile entrant (cli/tests/sandbox.rs): signals every process it can see, as an entrant once
# killed its rivals (`pgrep -P $PPID`, then SIGKILL), and tries to read their memory, which is
# what ptrace would give. In the sandbox it sees only its own processes.
seen=0
for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [ "$pid" = "$$" ] && continue
    seen=$((seen + 1))
    head -c 1 "/proc/$pid/mem" >/dev/null 2>&1 && echo "read the memory of $pid"
done
echo "other processes visible: $seen"
kill -9 -1 2>/dev/null
echo "signalled every process it may"
exit 3
