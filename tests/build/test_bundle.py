"""A program linked against a shared library its own project builds (``-L. -lwork`` with
``libwork.so`` in the tree, as bzip2's Debian build does): every variant carries that library
and loads it from its own directory, so the code measured is the code hone built; a source
compiled twice (static and PIC, one .gcda name) cannot fail the profile-use build."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from hone.build.bundle import bundle_project_libraries, tree_libraries
from hone.linking.elf import read_elf
from tests.build.conftest import build, read_json, rows

pytestmark = pytest.mark.integration

WORK_C = """#include "work.h"
unsigned long work(unsigned long n, const char *key) {
    unsigned long h = 5381;
    for (unsigned long i = 0; i < n; i++) {
        char c = key[i % 4];
        if (c == 'a') h = h * 33 + i; else if (c == 'b') h ^= i << 3; else h += c;
    }
    return h;
}
"""
MAIN_C = """#include <stdio.h>
#include <stdlib.h>
#include "work.h"
int main(int argc, char **argv) {
    printf("%lu\\n", work(strtoul(argv[1], 0, 10), argv[2]));
    return 0;
}
"""
# CC and CFLAGS assigned here, work.c compiled twice (work.o for the archive, work.sho for
# the shared library), the program linked with -L. -lwork: the linker takes libwork.so.
MAKEFILE = """CC = gcc
CFLAGS = -O2 -Wall
all: libwork.a libwork.so.1.0 prog
libwork.a: work.o
\tar rcs $@ work.o
work.o: work.c work.h
\t$(CC) $(CFLAGS) -c work.c -o work.o
work.sho: work.c work.h
\t$(CC) $(CFLAGS) -fPIC -c work.c -o work.sho
libwork.so.1.0: work.sho
\t$(CC) -shared -Wl,-soname,libwork.so.1 -o $@ work.sho
\tln -sf libwork.so.1.0 libwork.so.1
\tln -sf libwork.so.1 libwork.so
prog: main.o libwork.so.1.0
\t$(CC) $(CFLAGS) -o prog main.o -L. -lwork
main.o: main.c work.h
\t$(CC) $(CFLAGS) -c main.c
"""


def _project(tmp_path: Path) -> Path:
    src = tmp_path / "proj"
    src.mkdir()
    (src / "work.h").write_text("unsigned long work(unsigned long n, const char *key);\n")
    (src / "work.c").write_text(WORK_C)
    (src / "main.c").write_text(MAIN_C)
    (src / "Makefile").write_text(MAKEFILE)
    return src


def test_bundle_copies_the_projects_library_beside_the_program(tmp_path: Path) -> None:
    src = _project(tmp_path)
    subprocess.run(["make", "-s"], cwd=src, check=True, timeout=120, capture_output=True)
    assert set(tree_libraries(src)) == {"libwork.so.1"}
    out = tmp_path / "out"
    out.mkdir()
    (out / "prog").write_bytes((src / "prog").read_bytes())
    (out / "prog").chmod(0o755)
    assert bundle_project_libraries(out / "prog", src) == ["libwork.so.1"]
    assert read_elf(out / "prog").rpath == ["$ORIGIN"]
    ldd = subprocess.run(["ldd", str(out / "prog")], capture_output=True, text=True, timeout=30).stdout
    assert f"libwork.so.1 => {out / 'libwork.so.1'}" in ldd
    # A program that needs none of the tree's libraries is left as it is.
    (out / "true").write_bytes(Path("/bin/true").read_bytes())
    assert bundle_project_libraries(out / "true", src) == []


def test_instr_gcc_of_a_program_on_its_projects_shared_library(hone, tmp_path: Path) -> None:
    src = _project(tmp_path)
    out = tmp_path / "r.json"
    res = hone("pgo", "--make", src, "--binary", "prog", "--train", "@ab {binary} 2000000 abab",
               "--evaluate", "@mixed {binary} 3000000 abzc", "--mode", "instr-gcc", "--rounds", "3",
               "--noise-builds", "0", "--workdir", tmp_path / "work", "--json", out, timeout=180)
    assert res.code == 0, res.err
    result = read_json(out)
    b = build(result, "instr-gcc")
    assert b["status"] == "ok", b  # not "libwork.so.1: cannot open shared object file"
    # Two copies of work.c share one .gcda: a copy whose profile does not fit is a warning
    # (reported in profile_problems), not a failed build.
    stages = {s["name"]: s for s in read_json(Path(b["manifest"]))["stages"]}
    assert "-Wno-error=coverage-mismatch" in stages["optimizing build"]["flags"]["cflags"]
    (r,) = rows(result, "instr-gcc")
    assert r["verdict"]
    for variant in ("default", "instr-gcc"):
        vdir = tmp_path / "work" / "variants" / variant
        ldd = subprocess.run(["ldd", str(vdir / "prog")], capture_output=True, text=True, timeout=30).stdout
        assert f"libwork.so.1 => {vdir / 'libwork.so.1'}" in ldd, ldd
    log = (tmp_path / "work" / "train" / "instr-gcc" / "build.log").read_text()
    assert "[hone bundle: libwork.so.1" in log
