"""Ask a binary's *own* dynamic loader what it resolves.

``ldd`` traces with the system loader and can mislead for a patched binary
(docs/machine-facts.md): we run the interpreter named in the binary's PT_INTERP as
``<interp> --list <binary>``, with ``LD_LIBRARY_PATH``/``LD_PRELOAD`` removed so the
caller's environment cannot hide a wrong rpath.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from hone.core.errors import HoneError
from hone.core.process import run_process
from hone.linking.elf import read_elf

LIST_TIMEOUT_S = 30.0

_ARROW = re.compile(r"^\s*(\S+)\s+=>\s+(.*?)\s*(?:\(0x[0-9a-f]+\))?\s*$")
_PLAIN = re.compile(r"^\s*(\S+)\s+\(0x[0-9a-f]+\)\s*$")


@dataclass
class ResolvedLib:
    """One line of the loader's list: ``name`` as asked (soname or path), ``path`` where
    it was found (None: not found)."""

    name: str
    path: str | None

    @property
    def soname(self) -> str:
        return Path(self.name).name


@dataclass
class LoaderView:
    """The loader's answer: which interpreter ran, every library and where it resolved."""

    interpreter: str
    libs: list[ResolvedLib] = field(default_factory=list)
    ok: bool = True
    output: str = ""

    def missing(self) -> list[str]:
        return [lib.name for lib in self.libs if lib.path is None]

    def path_of(self, soname: str) -> str | None:
        for lib in self.libs:
            if lib.soname == soname or (lib.path and Path(lib.path).name == soname):
                return lib.path
        return None


def parse_list_output(text: str) -> list[ResolvedLib]:
    """Parse ``ld.so --list`` output (the ``ldd`` format) into resolved libraries.
    The vDSO (no file) is left out; the loader's own line is kept."""
    libs: list[ResolvedLib] = []
    for line in text.splitlines():
        m = _ARROW.match(line)
        if m:
            target = m.group(2).strip()
            if target == "not found":
                libs.append(ResolvedLib(m.group(1), None))
            elif target:
                libs.append(ResolvedLib(m.group(1), target))
            continue
        m = _PLAIN.match(line)
        if m and m.group(1).startswith("/"):
            libs.append(ResolvedLib(Path(m.group(1)).name, m.group(1)))
    return libs


def loader_list(binary: str | Path, interpreter: str | Path | None = None) -> LoaderView:
    """Run ``<interp> --list <binary>`` (``interp``: the binary's PT_INTERP unless given).
    Raises :class:`HoneError` for a static binary (no loader to ask)."""
    binary = Path(binary)
    interp = str(interpreter) if interpreter else read_elf(binary).interpreter
    if not interp:
        raise HoneError(f"{binary} has no interpreter (statically linked): nothing to resolve")
    if not Path(interp).exists():
        raise HoneError(f"{binary}: its interpreter {interp} does not exist")
    env = {k: v for k, v in os.environ.items() if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD", "LD_AUDIT")}
    res = run_process([interp, "--list", str(binary)], timeout=LIST_TIMEOUT_S, env=env)
    view = LoaderView(interpreter=interp, libs=parse_list_output(res.stdout), ok=res.ok,
                      output=(res.stdout + res.stderr).strip())
    return view
