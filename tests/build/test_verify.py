"""hone.build.verify on real compiler output: instrumented or not, profile-use recorded or not."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path

import pytest

from hone.build.systems.base import BuildLog
from hone.build.systems.wrappers import WrapperCalls
from hone.build.toolchain import CLANG_MAJOR
from hone.build.verify import check_instrumented, check_profile_use, explain

pytestmark = pytest.mark.integration

CLANG = f"clang-{CLANG_MAJOR}"
SOURCE = '#include <stdio.h>\nint main(int argc, char **argv) { printf("%d\\n", argc * 3); return 0; }\n'


@pytest.fixture
def compile_(tmp_path: Path):  # type: ignore[no-untyped-def]
    src = tmp_path / "p.c"
    src.write_text(SOURCE)

    def _cc(compiler: str, *flags: str, name: str = "p") -> Path:
        out = tmp_path / name
        subprocess.run([compiler, *flags, "-o", str(out), str(src)], check=True, capture_output=True,
                       cwd=tmp_path)
        return out

    return _cc


def test_gcc_instrumentation_is_seen_also_when_stripped(compile_) -> None:
    inst = compile_("gcc", "-O2", "-fprofile-generate", name="inst")
    v = check_instrumented(inst, "gcov")
    assert v.status == "ok" and "__gcov_" in v.detail
    subprocess.run(["strip", str(inst)], check=True)
    assert check_instrumented(inst, "gcov").status == "ok"
    plain = check_instrumented(compile_("gcc", "-O2", name="plain"), "gcov")
    assert plain.status == "missing" and "__gcov_" in plain.detail


def test_clang_instrumentation(compile_) -> None:
    assert check_instrumented(compile_(CLANG, "-O2", "-fprofile-instr-generate", name="inst"), "llvm").status == "ok"
    assert check_instrumented(compile_(CLANG, "-O2", name="plain"), "llvm").status == "missing"


def test_profile_use_from_the_recorded_command_line(compile_) -> None:
    # No .gcda exists: gcc warns and builds; the switch is recorded all the same.
    assert check_profile_use(compile_("gcc", "-O2", "-g", "-fprofile-use", "-Wno-missing-profile"),
                             "-fprofile-use").status == "ok"
    rec = compile_("gcc", "-O2", "-frecord-gcc-switches", "-fprofile-use", "-Wno-missing-profile", name="rec")
    assert check_profile_use(rec, "-fprofile-use").detail.startswith("-fprofile-use in the recorded command line")
    missing = check_profile_use(compile_("gcc", "-O2", "-g", name="g"), "-fprofile-use")
    assert missing.status == "missing"
    assert check_profile_use(compile_("gcc", "-O2", name="bare"), "-fprofile-use").status == "not verifiable"
    # clang's DWARF producer names the compiler only: not a record of the switches
    assert check_profile_use(compile_(CLANG, "-O2", "-g", name="cg"), "-fprofile-instr-use").status == "not verifiable"


def test_the_error_names_the_variant_the_marker_and_the_cause(compile_, tmp_path: Path) -> None:
    plain = compile_("gcc", "-O2", name="plain")
    v = check_instrumented(plain, "gcov")
    bypassed = explain("instr-gcc", "training build", plain, v, BuildLog(wrapper_calls=WrapperCalls()), "gcc",
                       ["-O2", "-fprofile-generate"], tmp_path / "build.log")
    assert "instr-gcc" in bypassed.message and "__gcov_" in bypassed.message
    assert "absolute path" in bypassed.message and str(tmp_path / "build.log") in bypassed.message
    assert bypassed.hint and "--build-command" in bypassed.hint and bypassed.exit_code == 2
    other = WrapperCalls()
    other.counts["clang"] = Counter(passed=2)
    mismatch = explain("instr-gcc", "training build", plain, v, BuildLog(wrapper_calls=other), "gcc", ["-O2"])
    assert "compiled with clang" in mismatch.message
    off = explain("instr-gcc", "training build", plain, v, BuildLog(), "gcc", ["-O2"])
    assert "HONE_PGO_NO_WRAPPERS" in off.message


def test_the_cause_names_the_build_file_of_each_system(compile_) -> None:
    plain = compile_("gcc", "-O2", name="plain")
    v = check_instrumented(plain, "gcov")

    def msg(system: str, calls: WrapperCalls | None) -> str:
        err = explain("instr-gcc", "training build", plain, v, BuildLog(wrapper_calls=calls), "gcc", ["-O2"],
                      system=system)
        return f"{err.message} {err.hint}"

    assert "CMakeLists.txt set() CMAKE_C_FLAGS" in msg("cmake", None)
    assert "configure.ac assign CFLAGS" in msg("autotools", None)
    assert "c_args in project()'s default_options" in msg("meson", None)
    assert "Makefile assign CC" in msg("make", None)
    assert "CMAKE_C_COMPILER_LAUNCHER" in msg("cmake", WrapperCalls())
