#!/bin/sh
# Hostile entrant (cli/tests/sandbox.rs): a fork bomb; it keeps going until it is stopped.
bomb() { bomb | bomb & }
bomb
sleep 120
