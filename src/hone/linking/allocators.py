"""malloc implementations hone can put under a program: Debian's jemalloc, tcmalloc
(minimal) and mimalloc packages, and glibc's own malloc (the baseline)."""

from __future__ import annotations

import os
import sysconfig
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from hone.core.errors import CapabilityError, HoneError
from hone.core.process import run_process

INSTALL_TIMEOUT_S = 900.0
_MULTIARCH = sysconfig.get_config_var("MULTIARCH") or "x86_64-linux-gnu"
_LIBDIR = Path("/usr/lib") / _MULTIARCH


@dataclass(frozen=True)
class Allocator:
    """One malloc: its Debian ``package`` and the shared library ``soname`` it installs."""

    name: str
    package: str
    soname: str

    @property
    def path(self) -> Path:
        return _LIBDIR / self.soname


ALLOCATORS: dict[str, Allocator] = {
    "jemalloc": Allocator("jemalloc", "libjemalloc2", "libjemalloc.so.2"),
    "tcmalloc": Allocator("tcmalloc", "libtcmalloc-minimal4", "libtcmalloc_minimal.so.4"),
    "mimalloc": Allocator("mimalloc", "libmimalloc2.0", "libmimalloc.so.2"),
}
#: ``glibc`` means "no replacement": the C library's own malloc.
ALLOCATOR_NAMES = ("glibc", *ALLOCATORS)

# File-name stems and exported symbols that identify an allocator in maps or an ELF file.
_FILE_STEMS = {"libjemalloc": "jemalloc", "libtcmalloc": "tcmalloc", "libmimalloc": "mimalloc",
               "libhoard": "hoard", "libsnmalloc": "snmalloc", "libtbbmalloc": "tbbmalloc"}
_STATIC_MARKERS = {"mallctl": "jemalloc", "je_malloc": "jemalloc", "mi_malloc": "mimalloc",
                   "tc_malloc": "tcmalloc"}


def allocator(name: str) -> Allocator | None:
    """The allocator called ``name`` (None for ``glibc``). Raises HoneError otherwise."""
    if name == "glibc":
        return None
    try:
        return ALLOCATORS[name]
    except KeyError:
        raise HoneError(f"unknown allocator {name!r}", hint=f"one of {', '.join(ALLOCATOR_NAMES)}") from None


def allocator_path(name: str, install: bool = False) -> Path | None:
    """The shared library of allocator ``name`` (None for ``glibc``). When it is missing,
    install its Debian package with ``install`` or raise :class:`CapabilityError`."""
    alloc = allocator(name)
    if alloc is None:
        return None
    if not alloc.path.exists() and install:
        install_package(alloc.package)
    if not alloc.path.exists():
        raise CapabilityError(f"{name}: {alloc.path} is not installed",
                              hint=f"apt-get install {alloc.package} (or `hone libswap alloc … --install`)")
    return alloc.path


def install_package(package: str) -> None:
    """``apt-get install -y PACKAGE`` (root only; waits up to 10 min for the dpkg lock)."""
    if os.geteuid() != 0:
        raise CapabilityError(f"installing {package} needs root", hint=f"sudo apt-get install {package}")
    res = run_process(
        ["apt-get", "-o", "DPkg::Lock::Timeout=600", "install", "-y", "-q", package],
        timeout=INSTALL_TIMEOUT_S, env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
    )
    if not res.ok:
        raise CapabilityError(f"apt-get install {package} failed: {res.describe_failure()}")


def allocator_of_files(paths: Iterable[str]) -> str | None:
    """The allocator among loaded files (``/proc/PID/maps`` paths, resolved libraries)."""
    for p in paths:
        base = Path(p).name
        for stem, name in _FILE_STEMS.items():
            if base.startswith(stem + ".") or base.startswith(stem + "_") or base.startswith(stem + "-"):
                return name
    return None


def allocator_of_symbols(defined: Iterable[str]) -> str | None:
    """An allocator linked statically, recognised by the symbols the binary exports."""
    names = set(defined)
    for marker, name in _STATIC_MARKERS.items():
        if marker in names:
            return name
    return None
