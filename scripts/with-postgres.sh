#!/usr/bin/env bash
# Runs a command against a private, throw-away PostgreSQL server: initdb in a temp dir, pg_ctl start on a
# unix socket in that dir (no TCP port, no system service), a database `ctxbench`, then
#   CTXBENCH_TEST_DATABASE_URL=postgresql+asyncpg://postgres@/ctxbench?host=<dir>  <cmd...>
# and the server is stopped and the dir removed when the command ends, fails or is interrupted.
# Usage: scripts/with-postgres.sh <cmd...>      (exit status: the command's)
# Debian's binaries live in /usr/lib/postgresql/<major>/bin (the newest is taken; PG_BINDIR overrides).
# As root the server runs as the `postgres` user (postgres refuses root); otherwise as the caller.
# Durability is off (fsync, synchronous_commit, full_page_writes): the data is thrown away anyway.
set -euo pipefail

[ $# -gt 0 ] || { echo "usage: $0 <cmd...>" >&2; exit 2; }
die() { echo "with-postgres: $*" >&2; exit 1; }

bindir=${PG_BINDIR:-}
if [ -z "$bindir" ]; then
  bindir=$(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -n1)
  [ -n "$bindir" ] || bindir=$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")
fi
if [ ! -x "$bindir/initdb" ] || [ ! -x "$bindir/pg_ctl" ]; then
  die "PostgreSQL server binaries not found (apt-get install postgresql, or set PG_BINDIR)"
fi

as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  id postgres >/dev/null 2>&1 || die "running as root needs the 'postgres' user (Debian's postgresql package)"
  as_pg=(runuser -u postgres --)
fi
pg() { "${as_pg[@]}" "$@"; }

# Leftovers of runs that were killed before their trap ran (SIGKILL, a crashed CI job): each dir records
# the pid of the script that made it; when that pid is gone, stop its server and remove the dir.
tmp=${TMPDIR:-/tmp}
for old in "$tmp"/ctxbench-pg.*; do
  [ -f "$old/owner" ] || continue
  owner=$(cat "$old/owner")
  if [ ! -d "/proc/$owner" ]; then  # not `kill -0`: that also fails for another user's live process
    pg "$bindir/pg_ctl" -D "$old/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$old" 2>/dev/null || true
  fi
done

dir=$(mktemp -d "$tmp/ctxbench-pg.XXXXXX")
echo $$ >"$dir/owner"
# The socket path must fit in sun_path (107 bytes).
[ ${#dir} -le 80 ] || die "temp dir path too long for a unix socket: $dir (set TMPDIR=/tmp)"

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  pg "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  exit "$rc"
}
child=""
# A signal to this script reaches the command too (it runs in the background so that the trap runs
# at once rather than when the command has finished).
on_signal() {
  [ -z "$child" ] || { kill -TERM "$child" 2>/dev/null || true; wait "$child" 2>/dev/null || true; }
  exit "$1"
}
trap cleanup EXIT
trap 'on_signal 130' INT
trap 'on_signal 143' TERM

[ ${#as_pg[@]} -eq 0 ] || chown postgres: "$dir"
pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync \
  >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
opts="-c listen_addresses='' -k $dir -p 5432 -c fsync=off -c synchronous_commit=off"
opts+=" -c full_page_writes=off -c max_connections=200"
pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -o "$opts" -w -t 60 start >/dev/null ||
  { cat "$dir/server.log" >&2; die "pg_ctl start failed"; }
pg "$bindir/psql" -h "$dir" -U postgres -d postgres -q -v ON_ERROR_STOP=1 -c "CREATE DATABASE ctxbench" ||
  die "CREATE DATABASE failed"

export CTXBENCH_TEST_DATABASE_URL="postgresql+asyncpg://postgres@/ctxbench?host=$dir"
echo "with-postgres: PostgreSQL $("$bindir/postgres" --version | awk '{print $3}') at $dir" >&2
"$@" <&0 &  # keeps stdin (a background command would get /dev/null)
child=$!
wait "$child"
