"""Which glibc and which malloc a binary (or a running process) uses now.

For a binary we ask its own interpreter (``--list``); for a PID we read
``/proc/PID/maps`` (what is really mapped), ``/proc/PID/exe`` and ``LD_PRELOAD`` from
``/proc/PID/environ``.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hone.core.errors import HoneError
from hone.linking.allocators import allocator_of_files, allocator_of_symbols
from hone.linking.elf import read_elf
from hone.linking.glibc import glibc_version_of, is_glibc_soname
from hone.linking.loader import loader_list

_SYSTEM_LIB_DIRS = ("/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/")
# The ``hone libswap show --json`` document (docs/formats.md).
SHOW_FORMAT = "hone-libswap-show/1"


@dataclass
class RuntimeInfo:
    """What a binary/process runs on: its loader, glibc (version, file, private or the
    system's) and malloc (``how``: NEEDED, LD_PRELOAD, static, or glibc's own)."""

    target: str
    interpreter: str | None
    glibc_version: str | None
    libc: str | None
    private_glibc: bool
    allocator: str
    allocator_file: str | None
    how: str
    libraries: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"format": SHOW_FORMAT, **asdict(self)}


def _is_system_path(path: str) -> bool:
    return path.startswith(_SYSTEM_LIB_DIRS)


def _allocator(paths: list[str], preload: str | None, exe: Path) -> tuple[str, str | None, str]:
    if preload:
        name = allocator_of_files(preload.replace(":", " ").split())
        if name:
            return name, preload, "LD_PRELOAD"
    name = allocator_of_files(paths)
    if name:
        file = next(p for p in paths if allocator_of_files([p]) == name)
        return name, file, "loaded library"
    try:
        static = allocator_of_symbols(read_elf(exe, with_symbols=True).defined)
    except HoneError:
        static = None
    if static:
        return static, str(exe), "linked statically"
    return "glibc", None, "glibc's own malloc"


def show_binary(binary: str | Path) -> RuntimeInfo:
    """Resolve ``binary`` with its own loader and report its glibc and allocator."""
    path = Path(binary)
    if not path.is_file():
        raise HoneError(f"{binary}: no such file")
    info = read_elf(path)
    if info.interpreter is None:
        name, file, how = _allocator([], None, path)
        return RuntimeInfo(str(path), None, None, None, False, name, file, how,
                           notes=["statically linked: it carries its own libc"])
    view = loader_list(path)
    paths = [lib.path for lib in view.libs if lib.path]
    libc = view.path_of("libc.so.6")
    interp_real = os.path.realpath(info.interpreter)
    notes = [f"{name} not found" for name in view.missing()]
    private = bool(libc) and not _is_system_path(libc)
    if libc and private != (not _is_system_path(info.interpreter)):
        notes.append(f"interpreter {info.interpreter} and libc {libc} come from different places")
    if os.environ.get("LD_PRELOAD"):
        notes.append("LD_PRELOAD is set in this shell; the loader view above ignores it")
    mixed = [lib.path for lib in view.libs if lib.path and is_glibc_soname(lib.soname)
             and libc and Path(lib.path).parent != Path(libc).parent and lib.soname != Path(interp_real).name
             and not lib.soname.startswith("ld-linux")]
    if mixed:
        notes.append("glibc libraries from two places: " + ", ".join(mixed))
    name, file, how = _allocator(paths, None, path)
    return RuntimeInfo(str(path), info.interpreter, glibc_version_of(Path(libc)) if libc else None, libc,
                       private, name, file, how, libraries=paths, notes=notes)


def _maps_paths(pid: int) -> list[str]:
    try:
        text = Path(f"/proc/{pid}/maps").read_text()
    except FileNotFoundError:
        raise HoneError(f"no process with PID {pid}") from None
    except PermissionError:
        raise HoneError(f"cannot read /proc/{pid}/maps (permission denied)", hint="run as root") from None
    seen: dict[str, None] = {}
    for line in text.splitlines():
        parts = line.split(None, 5)
        if len(parts) == 6 and parts[5].startswith("/"):
            seen.setdefault(parts[5].removesuffix(" (deleted)"), None)
    return list(seen)


def _preload_of(pid: int) -> str | None:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    for item in raw.split(b"\0"):
        if item.startswith(b"LD_PRELOAD="):
            return item.split(b"=", 1)[1].decode(errors="replace") or None
    return None


def show_pid(pid: int) -> RuntimeInfo:
    """What process ``pid`` has mapped: loader, libc (version), allocator."""
    paths = _maps_paths(pid)
    try:
        exe = Path(os.readlink(f"/proc/{pid}/exe"))
    except OSError:
        exe = Path(f"/proc/{pid}/exe")
    libs = [p for p in paths if ".so" in Path(p).name]
    interp = next((p for p in libs if Path(p).name.startswith("ld-linux") or Path(p).name.startswith("ld-2.")),
                  None)
    libc = next((p for p in libs if Path(p).name in ("libc.so.6",) or Path(p).name.startswith("libc-2.")), None)
    preload = _preload_of(pid)
    name, file, how = _allocator(libs, preload, Path(f"/proc/{pid}/exe"))
    notes = []
    if preload:
        notes.append(f"LD_PRELOAD={preload}")
    version = glibc_version_of(Path(f"/proc/{pid}/root{libc}")) if libc else None
    if libc and version is None:
        version = glibc_version_of(Path(libc))
    return RuntimeInfo(f"PID {pid} ({exe})", interp, version, libc, bool(libc) and not _is_system_path(libc),
                       name, file, how, libraries=libs, notes=notes)
