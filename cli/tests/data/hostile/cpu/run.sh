#!/bin/sh
# Hostile entrant (cli/tests/sandbox.rs): spins on the CPU.
while :; do :; done
