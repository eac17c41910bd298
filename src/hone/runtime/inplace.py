"""``--in-place``: patch the originals themselves, journaled like any system knob.

Each file becomes a ``binary`` knob (:mod:`hone.knobs.binary`): its bytes are backed up
under a sha256 name and the journal records that backup *before* patchelf touches the
file, so ``hone rollback`` restores them byte for byte even after a ``kill -9``. A failed
verification or smoke test restores the originals at once.
"""

from __future__ import annotations

from pathlib import Path

from hone.core.errors import HoneError
from hone.knobs import driver_for
from hone.linking.elf import read_elf
from hone.linking.glibc import GlibcInstall
from hone.linking.patch import (
    PatchOps,
    VariantReport,
    check_inputs,
    check_symbol_versions,
    dependencies_outside_glibc,
    glibc_rpath,
    run_smoke,
    verify_glibc_resolution,
)
from hone.run.journal import Journal, StateLock
from hone.spec.models import BinaryKnobSpec


def _binary_driver(path: Path):  # type: ignore[no-untyped-def]
    return driver_for(BinaryKnobSpec(name=f"libswap:{path}", kind="binary", path=str(path)))


def patch_glibc_in_place(binary: Path, libs: list[Path], glibc: GlibcInstall,
                         smoke: str | None = "{bin} --version", journal: Journal | None = None) -> VariantReport:
    """Patch ``binary`` (interpreter + DT_RPATH) and its bundled ``libs`` (DT_RPATH) onto
    ``glibc`` where they are, verify with the binary's own loader and run the smoke
    command. Every file is journaled first; on any failure the originals come back."""
    binary = binary.resolve()
    libs = [p.resolve() for p in libs]
    check_inputs(binary, libs)
    check_symbol_versions([binary, *libs, *dependencies_outside_glibc(binary)], glibc)
    journal = journal or Journal()
    lib_dirs = list(dict.fromkeys(p.parent for p in libs))
    plan: list[tuple[Path, PatchOps]] = [
        (lib, PatchOps(rpath=glibc_rpath(glibc, lib, first=lib_dirs, keep_origin=True))) for lib in libs
    ]
    plan.append((binary, PatchOps(interpreter=str(glibc.interpreter),
                                  rpath=glibc_rpath(glibc, binary, first=lib_dirs, keep_origin=True))))
    with StateLock(purpose=f"hone libswap glibc --in-place {binary}"):
        before = {e.ident for e in journal.active()}
        touched: list[str] = []
        try:
            for path, ops in plan:
                driver = _binary_driver(path)
                touched.append(driver.ident())
                journal.write(driver, ops.to_text())
            bundled = {read_elf(lib).soname or lib.name: lib for lib in libs}
            view = verify_glibc_resolution(binary, glibc, bundled)
            report = VariantReport("glibc", binary, binary, libs, f"glibc {glibc.version}", resolved=view.libs,
                                   in_place=True, extra={"glibc": str(glibc.root), "origin": glibc.origin})
            if smoke:
                report.smoke = run_smoke(smoke, binary)
            return report
        except (HoneError, OSError) as exc:
            own = [e for e in journal.active() if e.ident in touched and e.ident not in before]
            outcomes = journal.restore(own)
            bad = [o for o in outcomes if not o.ok]
            tail = "originals restored" if not bad else f"{len(bad)} file(s) NOT restored: run `hone rollback`"
            raise HoneError(f"{exc} ({tail})") from exc
