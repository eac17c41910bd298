"""A built program carries the project's own shared libraries.

Many projects link their program against a library they build beside it (``-L. -lbz2``
with ``libbz2.so`` in the tree). Copied out of the tree, such a program would load the
system's copy of that library at run time: it would run code hone did not build (a PGO
variant measured with the distribution's library), and an instrumented program would fail
with ``undefined symbol: __gcov_…``. So each library the program needs (``DT_NEEDED``) that
the build tree produced is copied next to the program, and the program and those libraries
look in their own directory first (``$ORIGIN``, written with patchelf).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from hone.linking.elf import is_elf, read_elf
from hone.linking.patch import PatchOps, apply_patch

#: Folders of a build tree never searched for libraries (version control, hone's own).
SKIP_DIRS = {".git", ".hg", ".svn", ".hone-wrappers"}


def tree_libraries(tree: Path) -> dict[str, Path]:
    """SONAME → file, for every shared library the build tree holds (symlinks resolved)."""
    found: dict[str, Path] = {}
    for root, dirs, files in os.walk(tree):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in files:
            if ".so" not in name:
                continue
            path = Path(root) / name
            real = path.resolve()
            if not real.is_file() or not is_elf(real):
                continue
            soname = read_elf(real).soname
            if soname and soname not in found:
                found[soname] = real
    return found


def bundle_project_libraries(binary: Path, tree: Path) -> list[str]:
    """Copy the libraries of ``tree`` that ``binary`` needs (and those they need) next to
    ``binary`` and make all of them search ``$ORIGIN`` first. Returns the SONAMEs bundled
    (empty: the program needs none of the project's libraries and is left as it is)."""
    libs = tree_libraries(tree)
    if not libs:
        return []
    bundled: list[str] = []
    todo = [binary]
    while todo:
        for soname in read_elf(todo.pop()).needed:
            if soname in libs and soname not in bundled:
                dest = binary.parent / soname
                shutil.copy2(libs[soname], dest)
                bundled.append(soname)
                todo.append(dest)
    if bundled:
        for path in [binary, *(binary.parent / s for s in bundled)]:
            apply_patch(path, PatchOps(rpath=["$ORIGIN"]))
    return bundled
