"""ELF facts read with pyelftools (no external tools): interpreter, NEEDED, RPATH/RUNPATH,
symbol versions a file needs and a library defines."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from elftools.common.exceptions import DWARFError, ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerDefSection, GNUVerNeedSection, GNUVerSymSection

from hone.core.errors import HoneError

_VERSION = re.compile(r"^GLIBC_(\d+(?:\.\d+)*)$")


class NotElfError(HoneError):
    """A path that is not a readable ELF file."""


@dataclass
class ElfInfo:
    """What the dynamic loader reads from one ELF file."""

    path: Path
    interpreter: str | None
    soname: str | None
    needed: list[str] = field(default_factory=list)
    rpath: list[str] = field(default_factory=list)
    runpath: list[str] = field(default_factory=list)
    #: Symbols defined (not imported) in the dynamic symbol table, for allocator detection.
    defined: set[str] = field(default_factory=set)


def _open(path: Path) -> tuple[object, ELFFile]:
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise NotElfError(f"cannot read {path}: {exc.strerror}") from None
    try:
        return fh, ELFFile(fh)
    except ELFError:
        fh.close()
        raise NotElfError(f"{path} is not an ELF file") from None


def read_elf(path: str | Path, with_symbols: bool = False) -> ElfInfo:
    """Interpreter (PT_INTERP), SONAME, NEEDED, RPATH and RUNPATH of ``path``; with
    ``with_symbols`` also the names it defines in ``.dynsym``."""
    path = Path(path)
    fh, elf = _open(path)
    try:
        interp = None
        for seg in elf.iter_segments():
            if seg["p_type"] == "PT_INTERP":
                interp = seg.get_interp_name()
        info = ElfInfo(path=path, interpreter=interp, soname=None)
        for sec in elf.iter_sections():
            if isinstance(sec, DynamicSection):
                for tag in sec.iter_tags():
                    if tag.entry.d_tag == "DT_NEEDED":
                        info.needed.append(tag.needed)
                    elif tag.entry.d_tag == "DT_SONAME":
                        info.soname = tag.soname
                    elif tag.entry.d_tag == "DT_RPATH":
                        info.rpath = [p for p in tag.rpath.split(":") if p]
                    elif tag.entry.d_tag == "DT_RUNPATH":
                        info.runpath = [p for p in tag.runpath.split(":") if p]
        if with_symbols:
            dynsym = elf.get_section_by_name(".dynsym")
            if dynsym is not None:
                for sym in dynsym.iter_symbols():
                    if sym.name and sym["st_shndx"] != "SHN_UNDEF":
                        info.defined.add(sym.name)
        return info
    finally:
        fh.close()  # type: ignore[attr-defined]


def version_key(version: str) -> tuple[int, ...]:
    """``"GLIBC_2.3.4"`` → ``(2, 3, 4)``; non-GLIBC names sort first as ``()``."""
    m = _VERSION.match(version)
    return tuple(int(x) for x in m.group(1).split(".")) if m else ()


def version_needs(path: str | Path) -> dict[str, dict[str, list[str]]]:
    """The symbol versions ``path`` needs: ``{soname: {version: [symbols…]}}``, e.g.
    ``{"libc.so.6": {"GLIBC_2.34": ["__libc_start_main", …]}}``. A version with no
    symbol listed is still needed (the loader checks every VERNEED entry)."""
    path = Path(path)
    fh, elf = _open(path)
    try:
        needs: dict[str, dict[str, list[str]]] = {}
        by_index: dict[int, tuple[str, str]] = {}
        versym: GNUVerSymSection | None = None
        for sec in elf.iter_sections():
            if isinstance(sec, GNUVerNeedSection):
                for verneed, auxes in sec.iter_versions():
                    for aux in auxes:
                        by_index[int(aux["vna_other"])] = (verneed.name, aux.name)
                        needs.setdefault(verneed.name, {}).setdefault(aux.name, [])
            elif isinstance(sec, GNUVerSymSection):
                versym = sec
        dynsym = elf.get_section_by_name(".dynsym")
        if versym is not None and dynsym is not None and by_index:
            for i, sym in enumerate(dynsym.iter_symbols()):
                if sym["st_shndx"] != "SHN_UNDEF" or not sym.name:
                    continue
                ndx = versym.get_symbol(i).entry["ndx"]
                if isinstance(ndx, int) and (ndx & 0x7FFF) in by_index:
                    lib, ver = by_index[ndx & 0x7FFF]
                    needs[lib][ver].append(sym.name)
        return needs
    finally:
        fh.close()  # type: ignore[attr-defined]


def version_definitions(path: str | Path) -> set[str]:
    """Version names a shared library defines (``.gnu.version_d``), e.g. ``GLIBC_2.34``."""
    path = Path(path)
    fh, elf = _open(path)
    try:
        names: set[str] = set()
        for sec in elf.iter_sections():
            if isinstance(sec, GNUVerDefSection):
                for _verdef, auxes in sec.iter_versions():
                    for aux in auxes:
                        names.add(aux.name)
                        break  # the first aux names the version; the rest are parents
        return names
    finally:
        fh.close()  # type: ignore[attr-defined]


def is_elf(path: str | Path) -> bool:
    try:
        with Path(path).open("rb") as fh:
            return fh.read(4) == b"\x7fELF"
    except OSError:
        return False


@dataclass
class BuildMarks:
    """What an ELF file records about how it was compiled (for ``hone pgo``'s check that
    its flags reached the compiler)."""

    sections: set[str] = field(default_factory=set)
    #: Names in ``.symtab``/``.dynsym`` starting with one of the prefixes asked for.
    symbols: set[str] = field(default_factory=set)
    #: Strings of ``.GCC.command.line`` (gcc ``-frecord-gcc-switches``, clang ``-frecord-command-line``).
    command_lines: list[str] = field(default_factory=list)
    #: ``DW_AT_producer`` of each compile unit (with ``-g``; gcc's lists the switches, clang's does not).
    producers: list[str] = field(default_factory=list)


def build_marks(path: str | Path, symbol_prefixes: tuple[str, ...] = ()) -> BuildMarks:
    """Section names, symbols starting with ``symbol_prefixes``, recorded command lines and
    DWARF producers of ``path``."""
    path = Path(path)
    fh, elf = _open(path)
    try:
        marks = BuildMarks()
        for sec in elf.iter_sections():
            marks.sections.add(sec.name)
            if symbol_prefixes and sec.name in (".symtab", ".dynsym") and hasattr(sec, "iter_symbols"):
                marks.symbols |= {s.name for s in sec.iter_symbols() if s.name.startswith(symbol_prefixes)}
        rec = elf.get_section_by_name(".GCC.command.line")
        if rec is not None:
            marks.command_lines = [s.decode(errors="replace") for s in rec.data().split(b"\0") if s.strip()]
        if ".debug_info" in marks.sections:
            try:
                for cu in elf.get_dwarf_info().iter_CUs():
                    attr = cu.get_top_DIE().attributes.get("DW_AT_producer")
                    if attr is not None:
                        val = attr.value
                        marks.producers.append(val.decode(errors="replace") if isinstance(val, bytes) else str(val))
            except (DWARFError, ELFError, KeyError, ValueError, AssertionError):
                pass  # DWARF pyelftools cannot read: no producers, i.e. not verifiable that way
        return marks
    finally:
        fh.close()  # type: ignore[attr-defined]
