#!/usr/bin/env bash
# The private prefix of examples/pgo/nginx.yaml: build/examples/pgo-nginx with nginx.conf,
# logs/, tmp/, a 4 KiB page (index.html) and a 64 KiB one (big.html).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
dir=$root/build/examples/pgo-nginx
command -v wrk >/dev/null || { echo "setup: wrk is not installed (Debian package wrk)" >&2; exit 1; }
mkdir -p "$dir/logs" "$dir/tmp" "$dir/html"
cp "$root/examples/pgo/nginx/nginx.conf" "$dir/nginx.conf"
head -c 4096 /dev/zero | tr '\0' 'x' >"$dir/html/index.html"
head -c 65536 /dev/zero | tr '\0' 'y' >"$dir/html/big.html"
echo "setup: $dir ready"
