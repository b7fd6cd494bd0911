#!/usr/bin/env bash
# A throwaway PostgreSQL server in a temporary directory, for the tests and for trying the
# ladder on several nodes. Uses Debian's server binaries (/usr/lib/postgresql/*/bin: initdb,
# pg_ctl); install them with
#
#   sudo apt-get install -y postgresql
#
#   scripts/postgres-temp.sh start [--owner-pid PID] [--tls]   # prints KEY=VALUE lines, see below
#   scripts/postgres-temp.sh stop DIR                  # stops the server and deletes DIR
#   scripts/postgres-temp.sh pause DIR                 # stops the server, keeps DIR (outage tests)
#   scripts/postgres-temp.sh resume DIR                # starts it again on the same port
#
# `start` prints three lines:
#
#   MAUMAU_TEST_POSTGRES=postgres://maumau@127.0.0.1:PORT/postgres
#   MAUMAU_POSTGRES_DIR=/tmp/maumau-pg.XXXX
#   MAUMAU_POSTGRES_PID=...
#
# With --tls the server also takes TLS (`ssl=on`; plain connections still work): the script makes
# a throwaway CA and a server certificate for 127.0.0.1 and localhost with openssl, and prints a
# fourth line with the CA's certificate, for `sslmode=verify-full&sslrootcert=...`:
#
#   MAUMAU_POSTGRES_CA=/tmp/maumau-pg.XXXX/tls/ca.pem
#
# The server listens on 127.0.0.1 only, on a free port, with trust authentication for the role
# `maumau` (a superuser, so tests may create databases). PostgreSQL refuses to run as root: when
# started by root the script runs the server as the `postgres` system user (or `nobody`), which
# owns the temporary directory. With --owner-pid the server stops and its directory is deleted
# when that process exits (the Rust tests pass their own pid).
set -euo pipefail

die() {
  echo "postgres-temp.sh: $*" >&2
  exit 1
}

find_bin() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [[ -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
      echo "$d"
      return 0
    fi
  done
  if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
    dirname "$(command -v initdb)"
    return 0
  fi
  return 1
}

# Runs a command as the user who owns the cluster.
as_owner() {
  if [[ -n "${RUN_AS:-}" ]]; then
    runuser -u "$RUN_AS" -- "$@"
  else
    "$@"
  fi
}

pick_user() {
  RUN_AS=""
  if [[ "$(id -u)" == 0 ]]; then
    if id postgres >/dev/null 2>&1; then
      RUN_AS=postgres
    else
      RUN_AS=nobody
    fi
  fi
}

# Makes a CA and a server certificate for 127.0.0.1 and localhost in DIR (ca.pem, server.pem,
# server.key), readable by the server.
make_certificates() {
  local tls="$1"
  command -v openssl >/dev/null || die "--tls needs openssl (sudo apt-get install -y openssl)"
  mkdir -p "$tls"
  (
    cd "$tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 \
      -keyout ca.key -out ca.pem -subj "/CN=maumau throwaway test CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -keyout server.key -out server.csr -subj "/CN=localhost"
    printf '%s\n' "subjectAltName=IP:127.0.0.1,DNS:localhost" \
      "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
      "extendedKeyUsage=serverAuth" >server.ext
    openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 \
      -extfile server.ext -out server.pem
    rm -f ca.key server.csr server.ext ca.srl
  ) >"$tls.log" 2>&1 || { cat "$tls.log" >&2; die "making the TLS certificates failed"; }
  # PostgreSQL wants its key owned by the server's user and private.
  chmod 600 "$tls/server.key"
  if [[ -n "$RUN_AS" ]]; then
    chown -R "$RUN_AS" "$tls"
  fi
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local owner_pid="" tls=""
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --owner-pid) owner_pid="$2"; shift 2 ;;
      --tls) tls=1; shift ;;
      *) die "unknown argument $1" ;;
    esac
  done
  local bin
  bin="$(find_bin)" || die "no PostgreSQL server binaries (initdb, pg_ctl) found under /usr/lib/postgresql.
Install them with:   sudo apt-get install -y postgresql"
  pick_user
  local dir
  dir="$(mktemp -d "${TMPDIR:-/tmp}/maumau-pg.XXXXXX")"
  if [[ -n "$RUN_AS" ]]; then
    chown "$RUN_AS" "$dir"
  fi
  chmod 700 "$dir"
  as_owner "$bin/initdb" -D "$dir/data" -U maumau --auth=trust -E UTF8 --no-sync \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  local ssl_options=""
  if [[ -n "$tls" ]]; then
    make_certificates "$dir/tls"
    ssl_options=" -c ssl=on -c ssl_cert_file=$dir/tls/server.pem -c ssl_key_file=$dir/tls/server.key"
  fi
  local port="" tries options
  for tries in 1 2 3 4 5; do
    port="$(free_port)"
    # fsync off: a throwaway server for tests; the sockets live in the temporary directory.
    options="-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200$ssl_options"
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 -o "$options" \
      start >/dev/null 2>&1; then
      # For `resume`.
      echo "$options" >"$dir/options"
      break
    fi
    port=""
  done
  [[ -n "$port" ]] || { cat "$dir/server.log" >&2; die "the server did not start"; }
  local pid
  pid="$(head -1 "$dir/data/postmaster.pid")"
  if [[ -n "$owner_pid" ]]; then
    # Stops the server once the owner has gone (checked every second).
    nohup bash -c "while kill -0 $owner_pid 2>/dev/null; do sleep 1; done; \"$0\" stop \"$dir\"" \
      "$0" >/dev/null 2>&1 &
  fi
  echo "MAUMAU_TEST_POSTGRES=postgres://maumau@127.0.0.1:$port/postgres"
  echo "MAUMAU_POSTGRES_DIR=$dir"
  echo "MAUMAU_POSTGRES_PID=$pid"
  if [[ -n "$tls" ]]; then
    echo "MAUMAU_POSTGRES_CA=$dir/tls/ca.pem"
  fi
}

stop() {
  local dir="${1:-}"
  [[ -n "$dir" && -d "$dir/data" ]] || die "stop needs the directory printed by start"
  local bin
  bin="$(find_bin)" || die "no pg_ctl found"
  pick_user
  as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

# Stops the server (fast: open connections are closed) and keeps its directory.
pause() {
  local dir="${1:-}"
  [[ -n "$dir" && -f "$dir/options" ]] || die "pause needs the directory printed by start"
  local bin
  bin="$(find_bin)" || die "no pg_ctl found"
  pick_user
  as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
}

# Starts a paused server again, with the options (and port) it started with.
resume() {
  local dir="${1:-}"
  [[ -n "$dir" && -f "$dir/options" ]] || die "resume needs the directory printed by start"
  local bin
  bin="$(find_bin)" || die "no pg_ctl found"
  pick_user
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 -o "$(cat "$dir/options")" \
    start >/dev/null
}

case "${1:-}" in
  start) shift; start "$@" ;;
  stop) shift; stop "$@" ;;
  pause) shift; pause "$@" ;;
  resume) shift; resume "$@" ;;
  *) die "usage: $0 start [--owner-pid PID] [--tls] | stop DIR | pause DIR | resume DIR" ;;
esac
