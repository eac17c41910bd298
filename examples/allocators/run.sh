#!/usr/bin/env bash
# Lua 5.4 binary-trees on glibc malloc vs jemalloc vs tcmalloc vs mimalloc (Debian packages),
# interleaved rounds, CPU time ratio vs glibc with 95% bootstrap CIs.
#   ROUNDS=10 examples/allocators/run.sh
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
HONE=${HONE:-$ROOT/.venv/bin/hone}
ROUNDS=${ROUNDS:-10}
mkdir -p build

# The other way to swap malloc: a copy of the interpreter with the allocator as its first
# NEEDED library (patchelf --add-needed), checked by its own loader and a smoke run.
"$HONE" libswap alloc /usr/bin/lua5.4 --with mimalloc --out build/lua-mimalloc --smoke "{bin} -e print(1)"
"$HONE" libswap show build/lua-mimalloc/lua5.4

"$HONE" compare hone.yaml \
  --variant glibc:malloc=glibc --variant jemalloc:malloc=jemalloc \
  --variant tcmalloc:malloc=tcmalloc --variant mimalloc:malloc=mimalloc \
  --metric cpu_time --rounds "$ROUNDS" --warmup 1 --seed 3 \
  --export-markdown results.md --export-json results.json
