"""The compiler wrappers hone pgo puts first on PATH: what they append, when, and that
flags reach the real compiler as the same words (no shell re-parsing)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hone.build.systems.base import BuildFlags
from hone.build.systems.make import MakeBuild
from hone.build.systems.wrappers import WrapperCalls, write_wrappers
from hone.core.errors import HoneError

# A stand-in compiler: writes each argument on its own line, NUL-terminated (so spaces and
# line breaks inside an argument stay visible).
FAKE = """#!/bin/sh
for a in "$@"; do printf '%s\\0' "$a"; done > "$FAKE_OUT"
"""


def _fake(dirpath: Path, name: str) -> Path:
    dirpath.mkdir(parents=True, exist_ok=True)
    path = dirpath / name
    path.write_text(FAKE)
    path.chmod(0o755)
    return path


@pytest.fixture
def wrapped(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A gcc-family wrapper set whose real compilers are fakes; ``call(name, *args)`` →
    the argv the fake compiler received."""
    real = tmp_path / "real"
    cc, cxx = _fake(real, "gcc"), _fake(real, "g++")
    _fake(real, "clang")
    cflags = ["-O2", "-fprofile-generate", "-DMSG=a b", "$(touch pwned)", "it's"]
    ldflags = ["-fprofile-generate", "-Wl,--emit-relocs"]
    w = write_wrappers(tmp_path / "wrap", cc=str(cc), cxx=str(cxx), cflags=cflags, ldflags=ldflags, family="gcc",
                       search_path=str(real))
    out = tmp_path / "args"

    def call(name: str, *args: str) -> list[str]:
        env = {**w.environment({"PATH": os.environ["PATH"]}), "FAKE_OUT": str(out)}
        subprocess.run([name, *args], env=env, check=True, cwd=tmp_path)
        return out.read_bytes().decode().split("\0")[:-1]

    call.wrappers = w  # type: ignore[attr-defined]
    call.cflags, call.ldflags = cflags, ldflags  # type: ignore[attr-defined]
    return call


def test_compile_gets_the_c_flags_as_the_same_words(wrapped, tmp_path: Path) -> None:
    assert wrapped("gcc", "-c", "-o", "x.o", "x.c") == ["-c", "-o", "x.o", "x.c", *wrapped.cflags]
    assert not (tmp_path / "pwned").exists()
    # cc and the versioned name stand for the same compiler; c++ for g++
    assert wrapped("cc", "-c", "x.c")[2:] == wrapped.cflags
    assert wrapped("c++", "-c", "x.cc")[2:] == wrapped.cflags
    assert "gcc" in wrapped.wrappers.names and "cc" in wrapped.wrappers.names


def test_a_link_also_gets_the_link_flags(wrapped) -> None:
    got = wrapped("gcc", "-o", "prog", "a.o", "b.o")
    # A word in both lists (-fprofile-generate) then comes twice, which gcc and clang accept.
    assert got == ["-o", "prog", "a.o", "b.o", *wrapped.cflags, *wrapped.ldflags]
    # The C flags already on the link line: only the link flags are added.
    assert wrapped("gcc", "-o", "prog", *wrapped.cflags, "a.o") == ["-o", "prog", *wrapped.cflags, "a.o",
                                                                    *wrapped.ldflags]


def test_flags_the_build_already_passes_are_not_appended_again(wrapped) -> None:
    args = ["-Wall", *wrapped.cflags, "-c", "x.c"]
    assert wrapped("gcc", *args) == args
    link = ["-o", "prog", *wrapped.cflags, *wrapped.ldflags, "a.o"]
    assert wrapped("gcc", *link) == link


def test_calls_without_an_input_file_are_left_alone(wrapped) -> None:
    assert wrapped("gcc", "--version") == ["--version"]
    assert wrapped("gcc", "-print-prog-name=ld") == ["-print-prog-name=ld"]


def test_the_other_family_runs_unchanged_and_every_call_is_logged(wrapped) -> None:
    assert wrapped("clang", "-c", "x.c") == ["-c", "x.c"]
    wrapped("gcc", "-c", "x.c")
    wrapped("gcc", "--version")
    calls = wrapped.wrappers.calls()
    assert calls.counts["clang"]["passed"] == 1
    assert calls.counts["gcc"]["appended"] == 1 and calls.counts["gcc"]["none"] == 1
    assert calls.names("appended", "present") == ["gcc"]
    assert "clang: passed ×1" in calls.summary()


def test_cc_and_cxx_from_the_environment_point_at_the_wrappers(wrapped) -> None:
    env = wrapped.wrappers.environment({"PATH": "/usr/bin", "CC": "/usr/bin/gcc", "CXX": "/usr/bin/g++"})
    assert env["CC"] == str(wrapped.wrappers.dir / "gcc") and env["CXX"] == str(wrapped.wrappers.dir / "g++")
    assert env["PATH"].split(os.pathsep)[0] == str(wrapped.wrappers.dir)
    assert "CC" not in wrapped.wrappers.environment({"PATH": "/usr/bin"})


def test_a_make_build_with_its_own_cc_and_cflags_gets_the_flags(tmp_path: Path) -> None:
    tree = tmp_path / "slot" / "proj"
    tree.mkdir(parents=True)
    (tree / "Makefile").write_text("CC = gcc\nCFLAGS = -O2 -Wall\nprog: prog.c\n\t$(CC) $(CFLAGS) -o $@ prog.c\n")
    (tree / "prog.c").write_text("#ifndef HONE_WAS_HERE\n#error flags did not arrive\n#endif\n"
                                 "int main(void){return 0;}\n")
    flags = BuildFlags(cc="/usr/bin/gcc", cxx="/usr/bin/g++", cflags=["-O2", "-DHONE_WAS_HERE"], family="gcc")
    binary, log = MakeBuild(binary="prog").build(tree, flags)
    assert binary.is_file()
    assert isinstance(log.wrapper_calls, WrapperCalls) and log.wrapper_calls.names("appended") == ["gcc"]
    assert "hone compiler wrappers: gcc: appended ×1" in log.text
    assert not (tmp_path / "slot" / ".hone-wrappers").exists()  # removed after the build


def test_the_switch_turns_the_wrappers_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HONE_PGO_NO_WRAPPERS", "1")
    tree = tmp_path / "proj"
    tree.mkdir()
    (tree / "Makefile").write_text("prog: prog.c\n\tgcc -o $@ prog.c\n")
    (tree / "prog.c").write_text("int main(void){return 0;}\n")
    _, log = MakeBuild(binary="prog").build(tree, BuildFlags(cc="/usr/bin/gcc", family="gcc"))
    assert log.wrapper_calls is None


def test_the_cmake_launcher_appends_to_the_compiler_it_is_given(wrapped, tmp_path: Path) -> None:
    launcher = str(wrapped.wrappers.dir / "hone-launch")
    gcc, clang = str(tmp_path / "real" / "gcc"), str(tmp_path / "real" / "clang")
    # cmake calls `<launcher> <compiler by absolute path> <args…>`, for compiles and links.
    assert wrapped(launcher, gcc, "-c", "x.c") == ["-c", "x.c", *wrapped.cflags]
    assert wrapped(launcher, gcc, "-o", "prog", "a.o") == ["-o", "prog", "a.o", *wrapped.cflags, *wrapped.ldflags]
    assert wrapped(launcher, gcc, "-c", *wrapped.cflags, "x.c") == ["-c", *wrapped.cflags, "x.c"]
    # A compiler of the other family runs unchanged.
    assert wrapped(launcher, clang, "-c", "x.c") == ["-c", "x.c"]
    calls = wrapped.wrappers.calls()
    assert calls.counts["gcc"]["appended"] == 2 and calls.counts["gcc"]["present"] == 1
    assert calls.counts["clang"]["passed"] == 1


def test_a_failed_step_that_wrote_only_to_stdout_shows_its_last_lines(tmp_path: Path) -> None:
    # nginx's ./configure prints its errors on stdout.
    tree = tmp_path / "proj"
    tree.mkdir()
    (tree / "Makefile").write_text("prog:\n\t@echo 'checking for PCRE ... not found'\n"
                                   "\t@echo './configure: error: the HTTP rewrite module requires PCRE'\n\t@exit 1\n")
    with pytest.raises(HoneError) as exc:
        MakeBuild(binary="prog").build(tree, BuildFlags(cc="/usr/bin/gcc", family="gcc"))
    assert "output: checking for PCRE ... not found | ./configure: error: the HTTP rewrite module" in exc.value.message
