#!/usr/bin/env bash
# The private prefix of examples/nginx/hone.yaml: build/examples/nginx, with a copy of
# nginx.conf (the file hone edits), logs/, tmp/ and a 4 KiB page in html/.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$root/build/examples/nginx
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || {
  echo "setup: nginx is not installed (Debian package nginx-light; make setup installs it)" >&2; exit 1; }
command -v wrk >/dev/null || { echo "setup: wrk is not installed (Debian package wrk; make setup installs it)" >&2; exit 1; }
mkdir -p "$dir/logs" "$dir/tmp" "$dir/html"
# A copy that is already there is kept unless the example's file is newer: an interrupted
# run leaves its changes for `hone rollback`, which needs the file it changed.
if [[ ! -f $dir/nginx.conf || $root/examples/nginx/nginx.conf -nt $dir/nginx.conf ]]; then
  cp "$root/examples/nginx/nginx.conf" "$dir/nginx.conf"
fi
head -c 4096 /dev/zero | tr '\0' 'x' >"$dir/html/index.html"
: >"$dir/logs/access.log"
echo "setup: $dir ready"
