"""hone pgo on a CMakeLists.txt that sets its own CMAKE_C_FLAGS and CMAKE_BUILD_TYPE
(examples/pgo/classic-cmake), and for gcc its own CMAKE_C_COMPILER by absolute path: the
cache entries hone passes lose, its compiler launcher (CMAKE_C_COMPILER_LAUNCHER,
CMAKE_C_LINKER_LAUNCHER) still adds the flags; without it the build fails with the cause."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.build.conftest import assert_trained_and_measured, read_json

pytestmark = pytest.mark.integration

BINARY = "_hone_build/classic"
TRAIN = ["--train", "@abcd:3 {binary} 3000000 abcd", "--train", "@zz {binary} 1000000 zzab"]
EVALUATE = ["--evaluate", "@mixed {binary} 4000000 abzc"]
QUICK = ["--rounds", "3", "--noise-builds", "0", "--no-counts"]


def test_instr_gcc_through_a_cmakelists_with_its_own_compiler_flags_and_build_type(
        hone, project, tmp_path: Path) -> None:
    src = project("classic-cmake")
    lists = src / "CMakeLists.txt"
    lists.write_text(lists.read_text().replace("project(classic C)",
                                               "set(CMAKE_C_COMPILER /usr/bin/gcc)\nproject(classic C)"))
    out = tmp_path / "r.json"
    res = hone("pgo", "--cmake", src, "--binary", BINARY, *TRAIN, *EVALUATE, "--mode", "instr-gcc", *QUICK,
               "--workdir", tmp_path / "work", "--json", out, timeout=120)
    assert res.code == 0, res.err
    assert_trained_and_measured(read_json(out), "instr-gcc", {"abcd", "zz"})
    log = (tmp_path / "work" / "train" / "instr-gcc" / "build.log").read_text()
    assert "-DCMAKE_C_COMPILER_LAUNCHER=" in log and "hone compiler wrappers: gcc: appended" in log


def test_instr_clang_through_the_launcher(hone, project, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    res = hone("pgo", "--cmake", project("classic-cmake"), "--binary", BINARY, *TRAIN, *EVALUATE,
               "--mode", "instr-clang", *QUICK, "--workdir", tmp_path / "work", "--json", out, timeout=120)
    assert res.code == 0, res.err
    assert_trained_and_measured(read_json(out), "instr-clang", {"abcd", "zz"})
    log = (tmp_path / "work" / "train" / "instr-clang" / "build.log").read_text()
    assert "hone compiler wrappers: clang-16: appended" in log


def test_without_the_launcher_the_cmakelists_flags_win_and_the_build_fails_with_the_cause(
        hone, project, tmp_path: Path) -> None:
    res = hone("pgo", "--cmake", project("classic-cmake"), "--binary", BINARY, *TRAIN, *EVALUATE,
               "--mode", "instr-gcc", *QUICK, "--workdir", tmp_path / "work", env={"HONE_PGO_NO_WRAPPERS": "1"},
               timeout=120)
    assert res.code == 2, res.err
    assert "instr-gcc: the training build did not get hone's flags" in res.err and "__gcov_" in res.err
    assert "CMakeLists.txt set() CMAKE_C_FLAGS" in res.err and "HONE_PGO_NO_WRAPPERS" in res.err
    assert not (tmp_path / "work" / "build").exists()
