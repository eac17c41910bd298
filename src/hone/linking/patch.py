"""patchelf edits and variant directories: a binary (and the libraries it bundles) made
to run on a private glibc, or to load another malloc — verified, never guessed.

A glibc variant's interpreter is the private ``ld-linux``; its search path is written as
DT_RPATH (``--force-rpath``), not DT_RUNPATH: RUNPATH does not apply to the libraries a
library pulls in, so ``libm``/``libtinfo`` would load from the system and two libcs mix
(docs/machine-facts.md).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hone.core.errors import CapabilityError, HoneError
from hone.core.paths import state_dir
from hone.core.process import run_process
from hone.linking.allocators import allocator, allocator_path
from hone.linking.elf import read_elf, version_key, version_needs
from hone.linking.glibc import GlibcInstall, is_glibc_soname
from hone.linking.loader import LoaderView, ResolvedLib, loader_list

# The --json and variant.json document (docs/formats.md).
LIBSWAP_FORMAT = "hone-libswap/1"
PATCHELF_TIMEOUT_S = 120.0
SMOKE_TIMEOUT_S = 60.0


class GlibcTooOldError(HoneError):
    """The target glibc lacks a symbol version the binary (or a library it loads) needs."""


class VariantVerificationError(HoneError):
    """The patched binary does not resolve the way it must (mixed libcs, missing libs)."""


# ---------------------------------------------------------------- patchelf


@dataclass
class PatchOps:
    """One patchelf edit: new interpreter, new DT_RPATH (list of dirs), extra NEEDED."""

    interpreter: str | None = None
    rpath: list[str] | None = None
    add_needed: list[str] = field(default_factory=list)

    def to_text(self) -> str:
        return json.dumps({"interpreter": self.interpreter, "rpath": self.rpath,
                           "add_needed": self.add_needed}, sort_keys=True)

    @classmethod
    def from_text(cls, text: str) -> PatchOps:
        try:
            data = json.loads(text)
            return cls(data.get("interpreter"), data.get("rpath"), list(data.get("add_needed") or []))
        except (json.JSONDecodeError, AttributeError, TypeError):
            raise HoneError(f"not a patch description: {text!r}") from None


def patchelf_path() -> str:
    path = shutil.which("patchelf")
    if path is None:
        raise CapabilityError("patchelf is not installed", hint="apt-get install patchelf")
    return path


def apply_patch(path: Path, ops: PatchOps) -> None:
    """Run patchelf on ``path`` (in place: callers pass a copy or a temp file)."""
    tool = patchelf_path()
    if ops.rpath is not None and read_elf(path).runpath:
        # An existing DT_RUNPATH would win over the DT_RPATH we write: drop both first.
        run_process([tool, "--remove-rpath", str(path)], timeout=PATCHELF_TIMEOUT_S, check=True)
    argv = [tool]
    if ops.interpreter is not None:
        argv += ["--set-interpreter", ops.interpreter]
    if ops.rpath is not None:
        argv += ["--set-rpath", ":".join(ops.rpath), "--force-rpath"]
    for lib in ops.add_needed:
        argv += ["--add-needed", lib]
    if len(argv) == 1:
        return
    res = run_process([*argv, str(path)], timeout=PATCHELF_TIMEOUT_S)
    if not res.ok:
        raise HoneError(f"patchelf failed on {path}: {res.describe_failure()}")


def _expand_origin(entries: list[str], origin: Path) -> list[str]:
    return [e.replace("${ORIGIN}", str(origin)).replace("$ORIGIN", str(origin)) for e in entries]


def glibc_rpath(glibc: GlibcInstall, original: Path, first: Sequence[Path] = (),
                keep_origin: bool = False) -> list[str]:
    """DT_RPATH for a file moved onto ``glibc``: the ``first`` dirs (variant dir, bundled
    libs' dirs), the glibc lib dir, then the file's own RPATH/RUNPATH (``$ORIGIN``
    expanded to where the original lives unless ``keep_origin``)."""
    info = read_elf(original)
    own = info.rpath + info.runpath
    own = own if keep_origin else _expand_origin(own, original.resolve().parent)
    out: list[str] = []
    for entry in [str(f) for f in first] + [str(glibc.lib_dir)] + own:
        if entry not in out:
            out.append(entry)
    return out


# ---------------------------------------------------------------- symbol versions


@dataclass
class MissingVersion:
    """``file`` needs ``version`` of ``soname`` (for ``symbols``) and the glibc lacks it."""

    file: str
    soname: str
    version: str
    symbols: list[str]


def missing_versions(files: list[Path], glibc: GlibcInstall) -> list[MissingVersion]:
    """Every glibc symbol version some file needs and ``glibc`` does not define."""
    missing: list[MissingVersion] = []
    provided = glibc.provided
    for f in files:
        for soname, versions in version_needs(f).items():
            if not is_glibc_soname(soname):
                continue
            have = provided.get(soname)
            if have is None and soname in ("libpthread.so.0", "libdl.so.2", "librt.so.1"):
                have = provided.get("libc.so.6")  # merged into libc since 2.34
            for version, symbols in versions.items():
                if version_key(version) and (have is None or version not in have):
                    missing.append(MissingVersion(str(f), soname, version, sorted(symbols)))
    missing.sort(key=lambda m: version_key(m.version), reverse=True)
    return missing


def dependencies_outside_glibc(binary: Path) -> list[Path]:
    """Non-glibc libraries ``binary`` loads today (asked of its current loader); they
    will load under the new glibc too, so their symbol versions count."""
    try:
        view = loader_list(binary)
    except HoneError:
        return []
    return [Path(lib.path) for lib in view.libs
            if lib.path and not is_glibc_soname(lib.soname) and not is_glibc_soname(Path(lib.path).name)]


def check_symbol_versions(files: list[Path], glibc: GlibcInstall) -> None:
    """Raise :class:`GlibcTooOldError` naming the missing ``GLIBC_2.xx`` versions."""
    missing = missing_versions(files, glibc)
    if not missing:
        return
    by_version: dict[str, MissingVersion] = {}
    for m in missing:
        by_version.setdefault(m.version, m)
    parts = []
    for version, m in by_version.items():
        syms = ", ".join(m.symbols[:3]) + ("…" if len(m.symbols) > 3 else "")
        parts.append(f"{version} ({Path(m.file).name}{': ' + syms if syms else ''})")
    raise GlibcTooOldError(
        f"glibc {glibc.version} is too old: needs {'; '.join(parts)}; "
        f"it provides up to {glibc.newest_version()}",
        hint="choose a newer glibc, or rebuild the program against this one",
    )


# ---------------------------------------------------------------- verification


def verify_glibc_resolution(binary: Path, glibc: GlibcInstall,
                            bundled: dict[str, Path] | None = None) -> LoaderView:
    """Ask ``binary``'s own loader what it resolves and check: the interpreter is the
    private one, nothing is missing, every glibc library comes from ``glibc``, and each
    bundled library (soname → expected file) resolves to that file."""
    interp = read_elf(binary).interpreter
    if interp is None or not glibc.contains(interp):
        raise VariantVerificationError(f"{binary}: interpreter is {interp}, not inside {glibc.root}")
    view = loader_list(binary)
    problems: list[str] = []
    if not view.ok:
        problems.append(f"the loader failed: {view.output.splitlines()[-1] if view.output else '?'}")
    problems += [f"{name} not found" for name in view.missing()]
    for lib in view.libs:
        if lib.path is None:
            continue
        name = Path(lib.path).name
        if (is_glibc_soname(lib.soname) or is_glibc_soname(name)) and not glibc.contains(lib.path):
            problems.append(f"{lib.soname} resolves to {lib.path}, outside {glibc.root}")
    for soname, expected in (bundled or {}).items():
        got = view.path_of(soname)
        if got is not None and os.path.realpath(got) != os.path.realpath(expected):
            problems.append(f"bundled {soname} resolves to {got}, not {expected}")
    if problems:
        raise VariantVerificationError(f"{binary}: " + "; ".join(problems))
    return view


def run_smoke(command: str, binary: Path, timeout: float = SMOKE_TIMEOUT_S) -> str:
    """Run the smoke command (``{bin}`` → the variant) and return its first output line.
    Raises HoneError when it fails."""
    argv = [a.replace("{bin}", str(binary)) for a in shlex.split(command)]
    if not argv:
        return ""
    res = run_process(argv, timeout=timeout)
    if not res.ok:
        raise VariantVerificationError(f"smoke command failed: {res.describe_failure()}")
    lines = (res.stdout or res.stderr).strip().splitlines()
    return lines[0] if lines else ""


# ---------------------------------------------------------------- variants


@dataclass
class VariantReport:
    """A made (or in-place patched) variant and what verification saw."""

    kind: str  # "glibc" | "alloc"
    binary: Path
    original: Path
    libs: list[Path]
    label: str  # "glibc 2.41" / "jemalloc"
    resolved: list[ResolvedLib] = field(default_factory=list)
    smoke: str | None = None
    in_place: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": LIBSWAP_FORMAT, "kind": self.kind, "binary": str(self.binary), "original": str(self.original),
            "libs": [str(p) for p in self.libs], "label": self.label, "in_place": self.in_place,
            "resolved": [{"name": r.name, "path": r.path} for r in self.resolved],
            "smoke": self.smoke, **self.extra,
        }


def default_variant_dir(binary: Path, label: str) -> Path:
    """``<state>/libswap/<binary-name>-<label>/``."""
    return state_dir() / "libswap" / f"{binary.name}-{label.replace(' ', '-')}"


def _copy_file(src: Path, dest: Path) -> Path:
    if dest.resolve() == src.resolve():
        raise HoneError(f"--out {dest.parent} holds the original {src.name}: a variant must not overwrite it",
                        hint="choose another --out, or use --in-place (journaled, with a backup)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.copy2(src, tmp)  # follows symlinks: the variant owns real bytes
    os.replace(tmp, dest)
    return dest


def check_inputs(binary: Path, libs: list[Path]) -> None:
    for p in [binary, *libs]:
        if not p.is_file():
            raise HoneError(f"{p}: no such file")
    if read_elf(binary).interpreter is None:
        raise HoneError(f"{binary} is statically linked (no interpreter): it carries its own libc")


def make_glibc_variant(binary: Path, libs: list[Path], glibc: GlibcInstall, out_dir: Path | None = None,
                       smoke: str | None = "{bin} --version") -> VariantReport:
    """Copy ``binary`` and its bundled ``libs`` into ``out_dir``, patch them onto
    ``glibc`` and verify. The originals are not touched. Refuses (before copying) when
    the glibc lacks a symbol version the binary, a bundled lib or a dependency needs."""
    binary = binary.resolve()
    libs = [p.resolve() for p in libs]
    check_inputs(binary, libs)
    check_symbol_versions([binary, *libs, *dependencies_outside_glibc(binary)], glibc)
    out = (out_dir or default_variant_dir(binary, f"glibc-{glibc.version}")).resolve()
    for original in (binary, *libs):
        if original.parent == out:
            raise HoneError(f"--out {out} holds the original {original.name}: a variant must not overwrite it",
                            hint="choose another --out, or use --in-place (journaled, with a backup)")
    out.mkdir(parents=True, exist_ok=True)
    bundled: dict[str, Path] = {}
    for lib in libs:
        copy = _copy_file(lib, out / lib.name)
        apply_patch(copy, PatchOps(rpath=glibc_rpath(glibc, lib, first=[out])))
        bundled[read_elf(lib).soname or lib.name] = copy
    variant = _copy_file(binary, out / binary.name)
    apply_patch(variant, PatchOps(interpreter=str(glibc.interpreter), rpath=glibc_rpath(glibc, binary, first=[out])))
    view = verify_glibc_resolution(variant, glibc, bundled)
    report = VariantReport("glibc", variant, binary, list(bundled.values()), f"glibc {glibc.version}",
                           resolved=view.libs, extra={"glibc": str(glibc.root), "origin": glibc.origin})
    if smoke:
        report.smoke = run_smoke(smoke, variant)
    (out / "variant.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    return report


def make_alloc_variant(binary: Path, name: str, out_dir: Path | None = None, install: bool = True,
                       smoke: str | None = "{bin} --version") -> VariantReport:
    """Copy ``binary`` into ``out_dir`` with the allocator ``name`` added as its first
    NEEDED library (``patchelf --add-needed``), so its malloc wins symbol lookup. For
    ``glibc`` the copy is left unpatched (a same-bytes control)."""
    binary = binary.resolve()
    check_inputs(binary, [])
    lib = allocator_path(name, install=install)
    out = (out_dir or default_variant_dir(binary, f"alloc-{name}")).resolve()
    variant = _copy_file(binary, out / binary.name)
    if lib is not None:
        alloc = allocator(name)
        assert alloc is not None
        if alloc.soname not in read_elf(variant).needed:
            apply_patch(variant, PatchOps(add_needed=[alloc.soname]))
    view = loader_list(variant)
    if not view.ok or view.missing():
        raise VariantVerificationError(f"{variant}: {view.output.splitlines()[-1] if view.output else '?'}")
    if lib is not None and not any(r.path and os.path.realpath(r.path) == os.path.realpath(lib) for r in view.libs):
        raise VariantVerificationError(f"{variant}: the loader does not load {lib}")
    report = VariantReport("alloc", variant, binary, [], name, resolved=view.libs,
                           extra={"allocator": name, "library": str(lib) if lib else None})
    if smoke:
        report.smoke = run_smoke(smoke, variant)
    (out / "variant.json").write_text(json.dumps(report.to_json(), indent=2) + "\n")
    return report
