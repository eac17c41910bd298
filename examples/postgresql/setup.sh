#!/usr/bin/env bash
# A private PostgreSQL cluster for hone.yaml: build/examples/postgresql/data, created by
# initdb as the postgres user, with the pgbench tables (scale 10, ~160 MB) loaded.
# Needs root (initdb runs as postgres). Touches no system cluster, socket or service: the
# loading server listens on a Unix socket in the private directory only, and is stopped.
# Reuses a cluster that is already there; `rm -rf build/examples/postgresql` starts over.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/build/examples/postgresql
data=$dir/data
bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
scale=${SCALE:-10}
if [[ -z "$bindir" || ! -x $bindir/initdb ]]; then
  echo "setup: PostgreSQL is not installed (Debian package postgresql; make setup installs it)" >&2; exit 1
fi
if [[ $(id -u) -ne 0 ]]; then echo "setup: run as root (initdb runs as the postgres user)" >&2; exit 1; fi
as_pg=(runuser -u postgres --)

if [[ -f $data/PG_VERSION && -f $dir/.loaded ]]; then
  echo "setup: reusing the cluster in $data"; exit 0
fi
rm -rf "$dir"
mkdir -p "$dir"
chown postgres: "$dir"
chmod 700 "$dir"
# Loopback TCP only (trust: a throwaway cluster that listens on 127.0.0.1 while hone runs it).
"${as_pg[@]}" "$bindir/initdb" -D "$data" -U postgres -E UTF8 --auth-local=peer --auth-host=trust \
  --no-sync >"$dir/initdb.log"
# Load the tables through a socket in the private directory, no TCP port (the example's
# port may be in use by a run of the example).
"${as_pg[@]}" "$bindir/pg_ctl" -D "$data" -l "$dir/setup.log" -w -o "-c listen_addresses='' -k $dir" start >/dev/null
trap '"${as_pg[@]}" "$bindir/pg_ctl" -D "$data" -m fast -w stop >/dev/null' EXIT
"${as_pg[@]}" "$bindir/pgbench" -h "$dir" -i -s "$scale" -q postgres 2>&1 | tail -1
touch "$dir/.loaded"
echo "setup: cluster ready in $data"
