#!/usr/bin/env bash
# Idempotent set-up: Debian packages that are missing, the .venv, hone with its dependencies.
# Called by `make setup`; every other make target depends on it.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

missing=()
while read -r pkg probe; do
  [[ -z "${pkg:-}" || "$pkg" == \#* ]] && continue
  if [[ -n "${probe:-}" ]]; then
    if [[ "$probe" == /* ]]; then [[ -e "$probe" ]] && continue
    else command -v "$probe" >/dev/null 2>&1 && continue; fi
  else
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" && continue
  fi
  missing+=("$pkg")
done < deps/apt-packages.txt
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then echo "setup: need root to apt-get install ${missing[*]}" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  timeout 900 apt-get update -qq || true
  timeout 1800 apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [[ -f deps/cargo-tools.txt ]]; then
  export PATH="$HOME/.cargo/bin:$PATH"
  while read -r crate probe; do
    [[ -z "${crate:-}" || "$crate" == \#* ]] && continue
    command -v "$probe" >/dev/null 2>&1 && continue
    echo "setup: cargo install $crate"
    timeout 1200 cargo install --quiet --locked "$crate" || timeout 1200 cargo install --quiet "$crate"
  done < deps/cargo-tools.txt
fi

stamp=.venv/.hone-installed
if [[ ! -x .venv/bin/python ]]; then "$PY" -m venv .venv; fi
if [[ ! -f $stamp || pyproject.toml -nt $stamp ]]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[dev,bench]"
  touch "$stamp"
fi

# Lua 5.4 and zstd sources for the `hone pgo` examples (Debian source packages through a
# private apt configuration; the system's sources are never edited).
bash examples/pgo/fetch-sources.sh || echo "setup: could not fetch the hone pgo example sources" >&2
