#!/usr/bin/env bash
# Seed 002 on this machine: the same fseek+fread binary on glibc 2.31, 2.36 (system and a
# patched private copy) and 2.41, at 1/4/16/32 threads, interleaved rounds, speed-up per concurrency with 95% CIs.
#   ROUNDS=10 examples/glibc-swap/run.sh
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(cd ../.. && pwd)
HONE=${HONE:-$ROOT/.venv/bin/hone}
PY=${PY:-$ROOT/.venv/bin/python}
ROUNDS=${ROUNDS:-10}
METRIC=${METRIC:-wall_time}   # the seed measured latency; cpu_time is 5x less noisy on a shared VM
THREADS=${THREADS:-1,4,16,32}
DATA=${DATA:-/tmp/hone-seekread}

"$PY" build.py
smoke="{bin} -t 2 -n 50 -d $DATA"
"$HONE" libswap glibc build/seekread --version 2.41 --out build/glibc-2.41 --smoke "$smoke"
"$HONE" libswap glibc build/seekread --version 2.31 --out build/glibc-2.31 --smoke "$smoke"
# Control: bookworm's own 2.36, unpacked privately and patched exactly like the others. It
# separates "patched binary on a private glibc" from "another glibc version".
"$HONE" libswap glibc build/seekread --version 2.36 --out build/glibc-2.36-private --smoke "$smoke"
# A program built here needs GLIBC_2.34: hone refuses 2.31 and says why.
"$HONE" libswap glibc build/seekread-host --version 2.31 --out build/refused || true

"$HONE" compare \
  -n glibc-2.36 -n private-2.36 -n glibc-2.31 -n glibc-2.41 \
  "build/seekread -t {threads} -d $DATA" \
  "build/glibc-2.36-private/seekread -t {threads} -d $DATA" \
  "build/glibc-2.31/seekread -t {threads} -d $DATA" \
  "build/glibc-2.41/seekread -t {threads} -d $DATA" \
  --sweep "threads=$THREADS" --metric "$METRIC" --rounds "$ROUNDS" --warmup 1 --seed 2 \
  --export-markdown "results-$METRIC.md" --export-json "results-$METRIC.json"
