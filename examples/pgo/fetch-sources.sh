#!/usr/bin/env bash
# Fetch Lua 5.4 and zstd (and the packages named as arguments) as Debian source packages
# into examples/pgo/third_party/.
# A private apt configuration (own source list, own lists directory) gives apt a
# `deb-src` line without touching the system's sources. Idempotent; called by setup.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="$here/third_party"
apt_dir="$dest/.apt"
mkdir -p "$apt_dir/lists/partial"
want=()
[[ -f "$dest/lua/src/lua.c" ]] || want+=(lua5.4)
[[ -f "$dest/zstd/programs/zstdcli.c" ]] || want+=(zstd)
# More Debian source packages on request (`fetch-sources.sh redis nginx`), into third_party/NAME;
# every Debian source package has debian/control (nginx has no Makefile before ./configure).
for pkg in "$@"; do [[ -f "$dest/$pkg/debian/control" ]] || want+=("$pkg"); done
make_corpus() {
  # zstd inputs: source code and documentation of the two packages, in a fixed order.
  mkdir -p "$dest/corpus"
  [[ -s "$dest/corpus/code.txt" ]] || LC_ALL=C cat $(LC_ALL=C ls "$dest"/zstd/lib/*/*.[ch]) > "$dest/corpus/code.txt"
  [[ -s "$dest/corpus/docs.txt" ]] || LC_ALL=C cat $(LC_ALL=C ls "$dest"/lua/doc/*.html "$dest"/zstd/doc/*.md) \
    > "$dest/corpus/docs.txt"
}
if ((${#want[@]} == 0)); then cp "$here/lua.mk" "$dest/lua/Makefile.hone"; make_corpus; exit 0; fi
echo "deb-src http://deb.debian.org/debian bookworm main" > "$apt_dir/sources.list"
opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$apt_dir/lists" -o Debug::NoLocking=1)
timeout 600 apt-get "${opts[@]}" -qq update
for pkg in "${want[@]}"; do
  work="$apt_dir/get-$pkg"
  rm -rf "$work" && mkdir -p "$work"
  (cd "$work" && timeout 600 apt-get "${opts[@]}" -qq source "$pkg" >/dev/null)
  tree=$(find "$work" -mindepth 1 -maxdepth 1 -type d | head -n1)
  name=${pkg%5.4}
  rm -rf "${dest:?}/$name" && mv "$tree" "$dest/$name"
  rm -rf "$work"
done
# Our Makefile for Lua (see lua.mk for why).
cp "$here/lua.mk" "$dest/lua/Makefile.hone"
make_corpus
