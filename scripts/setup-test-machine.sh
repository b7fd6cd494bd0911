#!/usr/bin/env bash
# Makes this machine ready for scripts/test.sh, which runs it first: checks for the programs the
# tests use beyond Rust, Python and Node, and installs the Debian packages of the missing ones.
#
#   scripts/setup-test-machine.sh
#
#   program                        Debian package  used by
#   initdb, pg_ctl                 postgresql      the ladder's storage tests, on a throwaway server
#                                                  (scripts/postgres-temp.sh); not needed when
#                                                  MAUMAU_TEST_POSTGRES names a server
#   chromium (or $CHROMIUM)        chromium        the browser tests: tests/viewer.rs,
#                                                  tests/ladder_html.rs, the clients' Playwright tests
#   openssl                        openssl         the Python client's TLS test makes its certificate
#   bwrap (or $MAUMAU_BWRAP)       bubblewrap      `maumau --sandbox`: cli/tests/sandbox.rs,
#                                                  sandbox/tests/jail.rs, the sandboxed check-bot run
#   prlimit                        util-linux      the sandbox's rlimits
#   systemd-analyze                systemd         cli/tests/deploy.rs verifies deploy/maumau.service
#   sqlite3                        sqlite3         cli/tests/deploy.rs backs up a node's archive as
#                                                  docs/LADDER.md says
#   curl                           curl            cli/tests/tournament_workers.rs: a program asks
#                                                  its worker's server which matches it reveals
#
# Nothing is installed when every program is there. Otherwise the missing packages are installed
# with apt-get when this script may: as root, or through sudo without a password (`sudo -n`).
# When it may not (or the machine has no apt-get), it prints the one command to run and exits
# with status 1. The Python virtual environments and the Node packages are not installed here:
# scripts/test-python.sh and scripts/test-clients.sh make them in the repository.
set -euo pipefail

missing=()
need() { # need PACKAGE WHAT: WHAT, which PACKAGE installs, was not found
  missing+=("$1")
  echo "setup: missing: $2 (Debian package $1)"
}

# PostgreSQL's server binaries: where scripts/postgres-temp.sh looks for them.
if [ -n "${MAUMAU_TEST_POSTGRES:-}" ]; then
  echo "setup: PostgreSQL: the server MAUMAU_TEST_POSTGRES names"
elif ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 ||
  { command -v initdb && command -v pg_ctl; } >/dev/null 2>&1; then
  echo "setup: PostgreSQL: $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | head -n 1 || dirname "$(command -v initdb)")"
else
  need postgresql "PostgreSQL's server binaries (initdb, pg_ctl)"
fi

if [ -n "${CHROMIUM:-}" ] && [ -x "$CHROMIUM" ]; then
  echo "setup: Chromium: $CHROMIUM"
elif command -v chromium >/dev/null 2>&1; then
  echo "setup: Chromium: $(command -v chromium)"
else
  need chromium "chromium"
fi

if command -v openssl >/dev/null 2>&1; then
  echo "setup: openssl: $(command -v openssl)"
else
  need openssl "openssl"
fi

if [ -n "${MAUMAU_BWRAP:-}" ] && [ -x "$MAUMAU_BWRAP" ]; then
  echo "setup: bubblewrap: $MAUMAU_BWRAP"
elif command -v bwrap >/dev/null 2>&1; then
  echo "setup: bubblewrap: $(command -v bwrap)"
else
  need bubblewrap "bwrap"
fi

if command -v prlimit >/dev/null 2>&1; then
  echo "setup: prlimit: $(command -v prlimit)"
else
  need util-linux "prlimit"
fi

if command -v systemd-analyze >/dev/null 2>&1; then
  echo "setup: systemd-analyze: $(command -v systemd-analyze)"
else
  need systemd "systemd-analyze"
fi

if command -v sqlite3 >/dev/null 2>&1; then
  echo "setup: sqlite3: $(command -v sqlite3)"
else
  need sqlite3 "sqlite3"
fi

if command -v curl >/dev/null 2>&1; then
  echo "setup: curl: $(command -v curl)"
else
  need curl "curl"
fi

if [ "${#missing[@]}" -gt 0 ]; then
  # apt-get runs as root: this user, or sudo when it asks for no password.
  if [ "$(id -u)" = 0 ]; then
    how=root
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    how=sudo
  else
    how=""
  fi
  if [ -z "$how" ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "scripts/setup-test-machine.sh: the tests need ${missing[*]}; install them (Debian, Ubuntu) with" >&2
    echo "    sudo apt-get install -y ${missing[*]}" >&2
    echo "then run scripts/test.sh again." >&2
    exit 1
  fi
  apt() {
    if [ "$how" = sudo ]; then
      sudo -n env DEBIAN_FRONTEND=noninteractive apt-get "$@"
    else
      env DEBIAN_FRONTEND=noninteractive apt-get "$@"
    fi
  }
  echo "setup: installing ${missing[*]} with apt-get${how:+ (as $how)}"
  apt update -qq
  apt install -y -qq "${missing[@]}" >/dev/null
fi

# Sandboxed programs (`--sandbox`) run as the user nobody, and a sandboxed Python bot runs the
# interpreter its virtual environment links to. When that interpreter lives under a folder nobody
# may not pass through, as under /root (mode 700) on machines whose Python is root's pyenv,
# scripts/test-clients.sh skips its sandboxed Python check-bot run. As root, let every user pass
# through /root (o+x: enter, not list it), as CI does; otherwise say which folder is closed.
PYTHON="${PYTHON:-python3}"
if interpreter="$("$PYTHON" -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null)"; then
  dir="$(dirname "$interpreter")"
  while [ "$dir" != / ]; do
    # Passing through a folder takes its x bit for others: the last octal digit odd.
    case "$(stat -c '%a' "$dir")" in
      *[1357]) closed="" ;;
      *) closed=yes ;;
    esac
    if [ -n "$closed" ]; then
      if [ "$dir" = /root ] && [ "$(id -u)" = 0 ]; then
        chmod o+x /root
        echo "setup: chmod o+x /root, so that sandboxed programs reach $interpreter"
      else
        echo "setup: note: sandboxed programs cannot reach $interpreter ($dir is closed to other users);"
        echo "setup: the sandboxed Python check-bot run will be skipped (chmod o+x $dir allows it)"
      fi
      break
    fi
    dir="$(dirname "$dir")"
  done
fi
echo "setup: ready"
