"""hone pgo on a classic Makefile that assigns ``CC = gcc`` (or clang) and ``CFLAGS = -O2 -Wall``
itself (examples/pgo/classic-make): the flags in the environment never reach the compiler,
hone's compiler wrappers do; without them the build fails with a clear error."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hone.build.toolchain import CLANG_MAJOR
from tests.build.conftest import assert_trained_and_measured, build, read_json, rows

pytestmark = pytest.mark.integration

TRAIN = ["--train", "@abcd:3 {binary} 3000000 abcd", "--train", "@zz {binary} 1000000 zzab"]
EVALUATE = ["--evaluate", "@mixed {binary} 4000000 abzc"]
QUICK = ["--rounds", "3", "--noise-builds", "0"]


def _assert_instrumented_trained_measured(result: dict, variant: str) -> None:
    assert_trained_and_measured(result, variant, {"abcd", "zz"})
    (r,) = rows(result, variant)
    assert r["instructions_ratio"] is not None, r


def test_instr_gcc_through_a_makefile_with_its_own_cc_and_cflags(hone, project, tmp_path: Path) -> None:
    src = project("classic-make")
    out = tmp_path / "r.json"
    res = hone("pgo", "--make", src, "--binary", "classic", *TRAIN, *EVALUATE, "--mode", "instr-gcc", *QUICK,
               "--workdir", tmp_path / "work", "--json", out, timeout=120)
    assert res.code == 0, res.err
    result = read_json(out)
    _assert_instrumented_trained_measured(result, "instr-gcc")
    log = (tmp_path / "work" / "train" / "instr-gcc" / "build.log").read_text()
    assert "gcc -O2 -Wall -c" in log and "hone compiler wrappers: gcc: appended" in log


def test_instr_clang_through_a_makefile_that_names_clang(hone, project, tmp_path: Path) -> None:
    src = project("classic-make")
    # This machine has clang-16 but no plain `clang`; a user whose Makefile says
    # CC = clang has one: give it one.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "clang").symlink_to(f"/usr/bin/clang-{CLANG_MAJOR}")
    out = tmp_path / "r.json"
    res = hone("pgo", "--make", src, "--binary", "classic", "--build-command", "make -f Makefile.clang",
               *TRAIN, *EVALUATE, "--mode", "instr-clang", *QUICK, "--workdir", tmp_path / "work", "--json", out,
               env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, timeout=120)
    assert res.code == 0, res.err
    result = read_json(out)
    _assert_instrumented_trained_measured(result, "instr-clang")
    log = (tmp_path / "work" / "train" / "instr-clang" / "build.log").read_text()
    assert "clang -O2 -Wall -c" in log and "hone compiler wrappers: clang: appended" in log


def test_without_the_wrappers_the_build_fails_with_the_cause(hone, project, tmp_path: Path) -> None:
    src = project("classic-make")
    res = hone("pgo", "--make", src, "--binary", "classic", *TRAIN, *EVALUATE, "--mode", "instr-gcc", *QUICK,
               "--workdir", tmp_path / "work", env={"HONE_PGO_NO_WRAPPERS": "1"}, timeout=120)
    assert res.code == 2, res.err
    assert "wrote no .gcda" not in res.err
    assert "instr-gcc: the training build did not get hone's flags" in res.err
    assert "__gcov_" in res.err and "HONE_PGO_NO_WRAPPERS" in res.err and "--build-command" in res.err
    assert not (tmp_path / "work" / "build").exists()


def test_a_compiler_called_by_absolute_path_fails_with_the_cause(hone, project, tmp_path: Path) -> None:
    src = project("classic-make")
    mk = src / "Makefile"
    mk.write_text(mk.read_text().replace("CC = gcc", "CC = /usr/bin/gcc"))
    res = hone("pgo", "--make", src, "--binary", "classic", *TRAIN, *EVALUATE, "--mode", "instr-gcc", *QUICK,
               "--workdir", tmp_path / "work", timeout=120)
    assert res.code == 2, res.err
    assert "wrappers were bypassed" in res.err and "absolute path" in res.err


def test_no_gcda_from_an_instrumented_binary_blames_the_scenario(hone, project, tmp_path: Path) -> None:
    src = project("classic-make")
    out = tmp_path / "r.json"
    # The scenario names {binary} but never runs it: the verified binary wrote nothing.
    res = hone("pgo", "--make", src, "--binary", "classic", "--train", "@idle true {binary}", *EVALUATE,
               "--mode", "instr-gcc", *QUICK, "--no-counts", "--workdir", tmp_path / "work", "--json", out,
               timeout=120)
    assert res.code == 0, res.err
    err = build(read_json(out), "instr-gcc")["error"]
    assert "wrote no .gcda files" in err and "The training binary is instrumented (__gcov_" in err
    assert "the likely cause is the scenario" in err and "hone verify" in err


def test_a_clang_mode_on_a_gcc_makefile_fails_that_variant_only(hone, project, tmp_path: Path) -> None:
    src = project("classic-make")
    out = tmp_path / "r.json"
    # The Makefile says CC = gcc: instr-clang's flags cannot arrive (the gcc wrapper of a clang
    # variant runs gcc unchanged); instr-gcc still builds, trains and is measured.
    res = hone("pgo", "--make", src, "--binary", "classic", *TRAIN, *EVALUATE, "--mode", "instr-gcc",
               "--mode", "instr-clang", *QUICK, "--no-counts", "--workdir", tmp_path / "work", "--json", out,
               timeout=180)
    assert res.code == 0, res.err
    result = read_json(out)
    assert build(result, "instr-gcc")["status"] == "ok"
    failed = build(result, "instr-clang")
    assert failed["status"] == "failed"
    assert "the project picks its own compiler" in failed["error"] and "hint: build the mode" in failed["error"]


def test_a_build_that_deletes_the_gcda_before_compiling_still_reads_the_profile(hone, project,
                                                                                   tmp_path: Path) -> None:
    src = project("classic-make")
    # As Redis's Makefile does when its flags change: *.gcda removed before any object is built.
    # hone's optimizing build reads the profile from outside the tree (-fprofile-use=DIR).
    mk = src / "Makefile"
    mk.write_text(mk.read_text() + "\n$(OBJS): | cleanprofile\ncleanprofile:\n\trm -f *.gcda\n")
    out = tmp_path / "r.json"
    res = hone("pgo", "--make", src, "--binary", "classic", *TRAIN, *EVALUATE, "--mode", "instr-gcc", *QUICK,
               "--no-counts", "--workdir", tmp_path / "work", "--json", out, timeout=120)
    assert res.code == 0, res.err
    b = build(read_json(out), "instr-gcc")
    assert b["status"] == "ok" and b["profile_problems"] == [], b
    assert "rm -f *.gcda" in (tmp_path / "work" / "variants" / "instr-gcc" / "build.log").read_text()
