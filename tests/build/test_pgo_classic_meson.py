"""hone pgo on a meson project whose project() sets ``c_args`` (examples/pgo/classic-meson),
which beat CFLAGS from the environment: meson runs the compiler named in CC, hone's wrapper,
which adds the flags; without the wrappers the build fails with the cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.build.conftest import assert_trained_and_measured, read_json

pytestmark = pytest.mark.integration

BINARY = "_hone_build/classic"
TRAIN = ["--train", "@abcd:3 {binary} 3000000 abcd", "--train", "@zz {binary} 1000000 zzab"]
EVALUATE = ["--evaluate", "@mixed {binary} 4000000 abzc"]
QUICK = ["--rounds", "3", "--noise-builds", "0", "--no-counts"]


@pytest.mark.parametrize(("mode", "wrapper"), [("instr-gcc", "gcc"), ("instr-clang", "clang-16")])
def test_instr_modes_through_a_meson_project_with_its_own_c_args(hone, project, tmp_path: Path, mode: str,
                                                                 wrapper: str) -> None:
    out = tmp_path / "r.json"
    res = hone("pgo", "--meson", project("classic-meson"), "--binary", BINARY, *TRAIN, *EVALUATE, "--mode", mode,
               *QUICK, "--workdir", tmp_path / "work", "--json", out, timeout=120)
    assert res.code == 0, res.err
    assert_trained_and_measured(read_json(out), mode, {"abcd", "zz"})
    log = (tmp_path / "work" / "train" / mode / "build.log").read_text()
    assert "-Dbuildtype=plain" in log and "-Db_pgo" in log
    assert f".hone-wrappers/{wrapper} (" in log and f"hone compiler wrappers: {wrapper}: appended" in log


def test_without_the_wrappers_the_c_args_win_and_the_build_fails_with_the_cause(
        hone, project, tmp_path: Path) -> None:
    res = hone("pgo", "--meson", project("classic-meson"), "--binary", BINARY, *TRAIN, *EVALUATE,
               "--mode", "instr-gcc", *QUICK, "--workdir", tmp_path / "work", env={"HONE_PGO_NO_WRAPPERS": "1"},
               timeout=120)
    assert res.code == 2, res.err
    assert "instr-gcc: the training build did not get hone's flags" in res.err and "__gcov_" in res.err
    assert "c_args in project()'s default_options" in res.err and "HONE_PGO_NO_WRAPPERS" in res.err
