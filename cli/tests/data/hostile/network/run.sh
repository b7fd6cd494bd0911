#!/bin/sh
# Hostile entrant (cli/tests/sandbox.rs): opens a TCP connection to 127.0.0.1:$1, a listener of
# the test, and to a public address. Prints CONNECTED for any that opens.
for target in "127.0.0.1/$1" "1.1.1.1/80"; do
    if timeout 3 bash -c "echo hello >/dev/tcp/$target" 2>/dev/null; then
        echo "CONNECTED to $target"
    else
        echo "no connection to $target"
    fi
done
exit 5
