"""Compiler wrappers: hone's flags reach the compiler even when a Makefile assigns
``CC = gcc`` and ``CFLAGS = -O2`` itself (docs/pgo.md, "How hone's flags reach the compiler").

For each C/C++ build hone writes small POSIX sh scripts named like the compilers a build
may call (cc, c++, gcc, g++, gcc-12, clang, clang++, clang-16, clang++-16) into
``<build dir>/.hone-wrappers/`` and puts that directory first on PATH, as ccache does.
A wrapper of the variant's compiler family appends hone's C flags (and, when the call
links, its link flags) unless the call already carries them as one run of words (the
build passed ``$(CFLAGS)`` from the environment), then ``exec``s the real compiler by the
absolute path found before PATH changed. A wrapper of the other family passes the call
through unchanged (a gcc variant leaves ``clang`` alone) and only notes that it ran.
Beside them ``hone-launch`` does the same as cmake's compiler and linker launcher
(``hone-launch <compiler> <args…>``), for compilers cmake calls by absolute path.

The flags are read from ``cflags.list``/``ldflags.list`` (one word a line) next to the
scripts, never pasted into shell text; every call appends ``<name> <action>`` to
``calls.log`` there (action: appended, present, none = no input file, passed), which
:class:`WrapperCalls` reads back to explain a build whose flags did not arrive.

``HONE_PGO_NO_WRAPPERS=1`` switches the wrappers off (a diagnostic switch: flags then
travel only in CC/CFLAGS/LDFLAGS, as before wrappers existed).
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from hone.build.toolchain import compiler_names
from hone.core.errors import HoneError

WRAPPERS_OFF = "HONE_PGO_NO_WRAPPERS"
DIR_NAME = ".hone-wrappers"
CALLS_LOG = "calls.log"
LAUNCHER = "hone-launch"  # cmake's compiler/linker launcher, beside the wrappers

# The shell text is fixed; only the real compiler's path and the wrapper's own name (both
# hone's, quoted) are filled in. Arguments and flags stay in "$@" and the .list files.
# What a wrapper and the launcher share: append hone's flags (cflags.list, and ldflags.list
# when linking; one word a line) unless the call already carries them, then run $real.
_APPEND_BODY = """nl='
'
seen=$nl
input=
link=yes
for a in "$@"; do
  seen=$seen$a$nl
  case $a in
    -c|-S|-E|-M|-MM) link= ;;
    -) input=yes ;;
    -*) ;;
    *) input=yes ;;
  esac
done
action=none
if [ -n "$input" ]; then
  action=present
  for f in cflags ${{link:+ldflags}}; do
    want=
    while IFS= read -r w; do want=$want$w$nl; done < "$d/$f.list"
    case $seen in
      *"$nl$want"*) ;;
      *)
        while IFS= read -r w; do set -- "$@" "$w"; done < "$d/$f.list"
        seen=$seen$want
        action=appended
        ;;
    esac
  done
fi
printf '%s %s\\n' "$name" "$action" >> "$d/{calls}" 2>/dev/null
exec "$real" "$@"
"""

_APPEND = """#!/bin/sh
# hone pgo compiler wrapper (generated; docs/pgo.md "How hone's flags reach the compiler").
# Appends hone's flags unless the call already carries them, then runs the real compiler.
real={real}
name={name}
d=${{HONE_WRAPPER_DIR:-${{0%/*}}}}
""" + _APPEND_BODY

# cmake's CMAKE_<LANG>_COMPILER_LAUNCHER / _LINKER_LAUNCHER (as ccache): called as
# `hone-launch <compiler> <args…>` with the compiler cmake chose, even one CMakeLists.txt
# set by absolute path. A compiler of the other family (by its name or where it links to)
# runs unchanged; any other gets hone's flags like a wrapper.
_LAUNCH = """#!/bin/sh
# hone pgo compiler launcher (generated; docs/pgo.md "How hone's flags reach the compiler").
d=${{HONE_WRAPPER_DIR:-${{0%/*}}}}
real=$1
shift
name=${{real##*/}}
target=$(readlink -f "$real" 2>/dev/null)
case "$name ${{target##*/}}" in
  *clang*) fam=clang ;;
  *gcc*|*g++*) fam=gcc ;;
  *) fam={family} ;;
esac
if [ "$fam" != {family} ]; then
  printf '%s passed\\n' "$name" >> "$d/{calls}" 2>/dev/null
  exec "$real" "$@"
fi
""" + _APPEND_BODY

_PASS = """#!/bin/sh
# hone pgo compiler wrapper (generated): a compiler of the other family, run unchanged.
real={real}
name={name}
d=${{HONE_WRAPPER_DIR:-${{0%/*}}}}
printf '%s passed\\n' "$name" >> "$d/{calls}" 2>/dev/null
exec "$real" "$@"
"""


def wrappers_enabled() -> bool:
    return os.environ.get(WRAPPERS_OFF, "").strip() in ("", "0")


def family_of(cc: str) -> str:
    """``/usr/bin/clang-16`` → clang, anything else → gcc (the C families hone builds with)."""
    return "clang" if "clang" in Path(cc).name else "gcc"


@dataclass
class WrapperCalls:
    """What the wrappers saw during one build: ``{name: {action: count}}``."""

    counts: dict[str, Counter[str]] = field(default_factory=dict)

    @classmethod
    def read(cls, path: Path) -> WrapperCalls:
        calls = cls()
        if path.is_file():
            for line in path.read_text(errors="replace").splitlines():
                name, _, action = line.partition(" ")
                if name:
                    calls.counts.setdefault(name, Counter())[action or "?"] += 1
        return calls

    def names(self, *actions: str) -> list[str]:
        """Wrappers that ran with one of ``actions`` (all that ran if none given)."""
        return sorted(n for n, c in self.counts.items() if not actions or any(c[a] for a in actions))

    def total(self, *actions: str) -> int:
        return sum(c[a] for c in self.counts.values() for a in actions) if actions else \
            sum(sum(c.values()) for c in self.counts.values())

    def summary(self) -> str:
        if not self.counts:
            return "no compiler was called through the wrappers"
        return "; ".join(f"{n}: " + ", ".join(f"{a} ×{k}" for a, k in sorted(c.items()))
                         for n, c in sorted(self.counts.items()))


@dataclass
class Wrappers:
    """The wrapper directory of one build and the environment that activates it."""

    dir: Path
    family: str
    cc: str | None = None  # the wrapper standing for flags.cc / flags.cxx (CC/CXX point there)
    cxx: str | None = None
    names: dict[str, str] = field(default_factory=dict)  # wrapper name → "append" | "pass"

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with the wrappers first on PATH and CC/CXX (when the build sets them)
        pointing at them."""
        out = dict(env)
        out["PATH"] = str(self.dir) + os.pathsep + env.get("PATH", os.defpath)
        out["HONE_WRAPPER_DIR"] = str(self.dir)
        if "CC" in env and self.cc:
            out["CC"] = self.cc
        if "CXX" in env and self.cxx:
            out["CXX"] = self.cxx
        return out

    def calls(self) -> WrapperCalls:
        return WrapperCalls.read(self.dir / CALLS_LOG)

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _real(name_or_path: str, search_path: str) -> str | None:
    if os.path.isabs(name_or_path):
        return name_or_path if os.access(name_or_path, os.X_OK) else None
    return shutil.which(name_or_path, path=search_path)


def _write_list(path: Path, words: list[str]) -> None:
    for w in words:
        if "\n" in w or "\r" in w:
            raise HoneError(f"a build flag contains a line break: {w!r}")
    path.write_text("".join(w + "\n" for w in words))


def write_wrappers(dest: Path, *, cc: str, cxx: str, cflags: list[str], ldflags: list[str],
                   family: str = "", search_path: str | None = None) -> Wrappers:
    """Write the wrappers for a build whose compilers are ``cc``/``cxx`` into ``dest``
    (emptied first). ``search_path`` is the PATH the real compilers are found on."""
    search_path = search_path if search_path is not None else os.environ.get("PATH", os.defpath)
    family = family or family_of(cc)
    other = "gcc" if family == "clang" else "clang"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    _write_list(dest / "cflags.list", cflags)
    _write_list(dest / "ldflags.list", ldflags)
    own_c, own_cxx = compiler_names(family)
    other_c, other_cxx = compiler_names(other)
    plan: dict[str, tuple[str | None, str]] = {}
    real_cc, real_cxx = _real(cc, search_path), _real(cxx, search_path)
    for name in ["cc", Path(cc).name, *own_c]:
        plan.setdefault(name, (real_cc, "append"))
    for name in ["c++", Path(cxx).name, *own_cxx]:
        plan.setdefault(name, (real_cxx, "append"))
    for name in [*other_c, *other_cxx]:
        plan.setdefault(name, (_real(name, search_path), "pass"))
    wrappers = Wrappers(dest, family)
    for name, (real, how) in plan.items():
        if real is None:
            continue  # not installed: the build's "command not found" stays as it was
        text = (_APPEND if how == "append" else _PASS).format(
            real=shlex.quote(real), name=shlex.quote(name), calls=CALLS_LOG)
        path = dest / name
        path.write_text(text)
        path.chmod(0o755)
        wrappers.names[name] = how
    launcher = dest / LAUNCHER
    launcher.write_text(_LAUNCH.format(family=family, calls=CALLS_LOG))
    launcher.chmod(0o755)
    if Path(cc).name in wrappers.names:
        wrappers.cc = str(dest / Path(cc).name)
    if Path(cxx).name in wrappers.names:
        wrappers.cxx = str(dest / Path(cxx).name)
    return wrappers
