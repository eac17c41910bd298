"""hone pgo on ``./configure && make`` (examples/pgo/classic-autotools, configured by
autoreconf at build time): a configure.ac that assigns CFLAGS itself, hard-codes ``CC=gcc``
or was configured before in the user's tree still gets hone's flags through the compiler
wrappers; without them the build fails with the cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.build.conftest import assert_trained_and_measured, read_json

pytestmark = pytest.mark.integration

TRAIN = ["--train", "@abcd:3 {binary} 3000000 abcd", "--train", "@zz {binary} 1000000 zzab"]
EVALUATE = ["--evaluate", "@mixed {binary} 4000000 abzc"]
QUICK = ["--rounds", "3", "--noise-builds", "0", "--no-counts"]


def test_instr_gcc_through_a_configure_that_hard_codes_cc_and_cflags(hone, project, tmp_path: Path) -> None:
    src = project("classic-autotools")
    ac = src / "configure.ac"
    ac.write_text(ac.read_text().replace("AC_PROG_CC", "CC=gcc\nAC_PROG_CC"))
    # A configure result left in the user's tree, naming the compiler by path: never copied.
    (src / "Makefile").write_text("classic:\n\t/usr/bin/gcc -O2 -o classic main.c work.c\n")
    (src / "config.status").write_text("#!/bin/sh\nexit 1\n")
    out = tmp_path / "r.json"
    res = hone("pgo", "--autotools", src, "--binary", "classic", *TRAIN, *EVALUATE, "--mode", "instr-gcc", *QUICK,
               "--workdir", tmp_path / "work", "--json", out, timeout=120)
    assert res.code == 0, res.err
    assert_trained_and_measured(read_json(out), "instr-gcc", {"abcd", "zz"})
    log = (tmp_path / "work" / "train" / "instr-gcc" / "build.log").read_text()
    assert "$ autoreconf -i" in log and "$ sh ./configure" in log
    assert "gcc -O2 -Wall -c" in log and "hone compiler wrappers: gcc: appended" in log


def test_without_the_wrappers_the_configure_flags_win_and_the_build_fails_with_the_cause(
        hone, project, tmp_path: Path) -> None:
    res = hone("pgo", "--autotools", project("classic-autotools"), "--binary", "classic", *TRAIN, *EVALUATE,
               "--mode", "instr-gcc", *QUICK, "--workdir", tmp_path / "work", env={"HONE_PGO_NO_WRAPPERS": "1"},
               timeout=120)
    assert res.code == 2, res.err
    assert "instr-gcc: the training build did not get hone's flags" in res.err and "__gcov_" in res.err
    assert "configure.ac assign CFLAGS" in res.err and "HONE_PGO_NO_WRAPPERS" in res.err
