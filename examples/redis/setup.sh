#!/usr/bin/env bash
# The private directory of examples/redis/hone.yaml: build/examples/redis, with a copy of
# redis.conf (the file hone edits) and an empty data directory (no AOF from an earlier run).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/build/examples/redis
command -v redis-server >/dev/null || {
  echo "setup: redis-server is not installed (Debian packages redis-server, redis-tools; make setup installs them)" >&2; exit 1; }
mkdir -p "$dir"
# A copy that is already there is kept unless the example's file is newer: an interrupted
# run leaves its changes for `hone rollback`, which needs the file it changed.
if [[ ! -f $dir/redis.conf || $root/examples/redis/redis.conf -nt $dir/redis.conf ]]; then
  cp "$root/examples/redis/redis.conf" "$dir/redis.conf"
fi
rm -rf "$dir/appendonlydir" "$dir/dump.rdb"
echo "setup: $dir ready"
