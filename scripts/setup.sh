#!/usr/bin/env bash
# Idempotent set-up: the Debian packages of the groups asked for that are missing, the .venv,
# hone with its dependencies and extras.
#
#   scripts/setup.sh [GROUP...]     GROUP = a file deps/apt/GROUP.txt; none = every group
#
# Each make target asks for the groups it needs (`make demo`: core; `make test`: all of them).
# Only with the group `pgo` are the hone pgo example sources fetched; only with `test` are the
# cargo tools (deps/cargo-tools.txt) installed.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}

groups=("$@")
if ((${#groups[@]} == 0)); then
  for f in deps/apt/*.txt; do groups+=("$(basename "$f" .txt)"); done
fi
wants() { local g; for g in "${groups[@]}"; do [[ "$g" == "$1" ]] && return 0; done; return 1; }

missing=()
for group in "${groups[@]}"; do
  list=deps/apt/$group.txt
  [[ -f "$list" ]] || { echo "setup: no package group $group (deps/apt/*.txt)" >&2; exit 2; }
  while read -r pkg probe; do
    [[ -z "${pkg:-}" || "$pkg" == \#* ]] && continue
    [[ " ${missing[*]} " == *" $pkg "* ]] && continue
    if [[ -n "${probe:-}" ]]; then
      if [[ "$probe" == /* ]]; then [[ -e "$probe" ]] && continue
      else command -v "$probe" >/dev/null 2>&1 && continue; fi
    else
      dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" && continue
    fi
    missing+=("$pkg")
  done < "$list"
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then echo "setup: need root to apt-get install ${missing[*]}" >&2; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  timeout 900 apt-get update -qq || true
  timeout 1800 apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if wants test && [[ -f deps/cargo-tools.txt ]]; then
  export PATH="$HOME/.cargo/bin:$PATH"
  while read -r crate probe; do
    [[ -z "${crate:-}" || "$crate" == \#* ]] && continue
    command -v "$probe" >/dev/null 2>&1 && continue
    echo "setup: cargo install $crate"
    timeout 1200 cargo install --quiet --locked "$crate" || timeout 1200 cargo install --quiet "$crate"
  done < deps/cargo-tools.txt
fi

# The extras (pyproject.toml) the target needs: HONE_EXTRAS="" for hone alone (`make demo`);
# by default every extra, as the test suite covers the fleet, the dashboard and Rust PGO.
# The stamp holds what is installed; a target that needs more installs the union.
extras=${HONE_EXTRAS-dev,bench,fleet,dashboard,rust}
stamp=.venv/.hone-installed
if [[ ! -x .venv/bin/python ]]; then "$PY" -m venv .venv; fi
have=$(cat "$stamp" 2>/dev/null || echo "-")
missing_extra=0
for e in ${extras//,/ }; do [[ ",$have," == *",$e,"* ]] || missing_extra=1; done
# Versions come from deps/python-constraints.txt (make lock), so results repeat across clones.
constraints=deps/python-constraints.txt
if [[ ! -f $stamp || pyproject.toml -nt $stamp || $constraints -nt $stamp || $missing_extra -eq 1 ]]; then
  [[ "$have" == "-" ]] && have=""
  union=$(printf '%s\n' ${have//,/ } ${extras//,/ } | sort -u | paste -sd, -)
  .venv/bin/python -m pip install -q --upgrade pip
  # uv resolves and installs the same packages in well under half pip's time (a fresh venv with
  # every extra: ~17 s against ~38 s here); pip does it when uv cannot be had.
  if timeout 300 .venv/bin/python -m pip install -q uv \
      && timeout 1800 .venv/bin/uv pip install -q --python .venv/bin/python --compile-bytecode \
           ${PIP_INDEX_URL:+--index-url "$PIP_INDEX_URL"} ${PIP_FIND_LINKS:+--find-links "$PIP_FIND_LINKS"} \
           -c "$constraints" -e ".${union:+[$union]}"; then :
  else
    .venv/bin/python -m pip install -q -c "$constraints" -e ".${union:+[$union]}"
  fi
  echo "$union" > "$stamp"
fi

# hone's own bytecode, written once: the editable install leaves it to the first import, which
# writes nothing when PYTHONDONTWRITEBYTECODE is set, so every `hone` would compile its
# ~34k lines again (0.3 s a command). Python checks each file's mtime: an edit is never stale.
.venv/bin/python -m compileall -q -j 0 src >/dev/null

# Lua 5.4 and zstd sources for the `hone pgo` examples (Debian source packages through a
# private apt configuration; the system's sources are never edited): the pgo group only.
if wants pgo; then
  bash examples/pgo/fetch-sources.sh || echo "setup: could not fetch the hone pgo example sources" >&2
fi
