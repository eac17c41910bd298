#!/usr/bin/env bash
# Idempotent: the venv of the library anchors that cannot live in hone's .venv
# (benchmarks/tuning/.venv-anchors, from anchors-requirements.txt). `make bench-tuning` runs it;
# run.py's optuna-gp, opentuner and smac anchors use it through a subprocess worker.
set -euo pipefail
cd "$(dirname "$0")"
PY=${PYTHON:-python3}
venv=.venv-anchors
stamp=$venv/.installed
if [[ -f $stamp ]] && cmp -s anchors-requirements.txt "$stamp"; then exit 0; fi
echo "setup-anchors: installing $(grep -v '^#' anchors-requirements.txt | paste -sd' ') into $venv (a few minutes)"
[[ -x $venv/bin/python ]] || "$PY" -m venv "$venv"
timeout 600 "$venv/bin/python" -m pip install -q --upgrade pip
timeout 3600 "$venv/bin/python" -m pip install -q -r anchors-requirements.txt
cp anchors-requirements.txt "$stamp"
