"""AutoFDO for gcc (create_gcov, profile_merger, -fauto-profile) and clang (llvm-profgen,
llvm-profdata merge -sample, -fprofile-sample-use): one profile per binary of a project from
the same samples, merged across binaries and weighted scenarios, applied in a build, and a
profile that maps nothing is a clear error.

Collection itself needs LBR (``perf record -b``), which this VM lacks, so the samples are
the tools' text form of the same ranges and branches, derived exactly from callgrind
(tests/build/afdo_text.py)."""

from __future__ import annotations

import re
import shutil
import signal
import struct
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from hone.build.modes import AutoFdo, AutoFdoClang, EmptyProfileError
from hone.build.modes import autofdo as autofdo_mod
from hone.build.modes.autofdo import lbr_probe
from hone.build.profiles import GCDA_MAGIC, ScenarioProfile, afdo_for_gcc
from hone.build.recipe import parse_mode
from hone.build.systems.base import BuildFlags
from hone.build.toolchain import LLVM_BIN
from tests.build.afdo_text import callgrind, gcov_text, llvm_text

COMMON = r"""
int __attribute__((noinline)) classify(unsigned x) {
    if (x % 97 == 0) return 3;
    if (x % 13 == 0) return 2;
    if ((x & 7) == 1) return 1;
    return 0;
}
"""
SERVER = r"""
#include <stdio.h>
#include <stdlib.h>
int classify(unsigned x);
static long __attribute__((noinline)) NAME(long n) {
    long acc = 0;
    for (long i = 0; i < n; i++) {
        unsigned x = (unsigned)(i * MUL);
        switch (classify(x)) {
        case 3: acc += x % 11; break;
        case 2: acc ^= x; break;
        case 1: acc -= 7; break;
        default: acc += 1; break;
        }
    }
    return acc;
}
int main(int argc, char **argv) {
    printf("%ld\n", NAME(argc > 1 ? atol(argv[1]) : 1000));
    return 0;
}
"""
ROLES = {"graphd": ("graph_step", "2654435761u"), "storaged": ("store_step", "40503u")}
SCENARIOS = {"small": ("60000", 1.0), "big": ("150000", 3.0)}

needs_gcc_afdo = pytest.mark.skipif(shutil.which("create_gcov") is None, reason="Debian package autofdo")
needs_clang_afdo = pytest.mark.skipif(not (LLVM_BIN / "llvm-profgen").exists(), reason="llvm-16")


def _sources(tmp: Path) -> Path:
    src = tmp / "src"
    src.mkdir()
    (src / "common.c").write_text(COMMON)
    for role, (name, mul) in ROLES.items():
        (src / f"{role}.c").write_text(SERVER.replace("NAME", name).replace("MUL", mul))
    return src


def _build(cc: str, flags: list[str], src: Path, out: Path, role: str) -> Path:
    subprocess.run([cc, *flags, "-no-pie", "-o", str(out), str(src / f"{role}.c"), str(src / "common.c")],
                   check=True, timeout=60, capture_output=True)
    return out.resolve()


def _sampled(cc: str, mode: AutoFdo | AutoFdoClang, tmp: Path) -> dict[str, Path]:
    flags = BuildFlags()
    mode.instrument(flags, tmp)
    src = tmp / "src" if (tmp / "src").is_dir() else _sources(tmp)
    return {role: _build(cc, ["-O2", *flags.cflags], src, tmp / f"{role}.sampled", role) for role in ROLES}


def _train(mode: AutoFdo | AutoFdoClang, binaries: dict[str, Path], tmp: Path) -> list[ScenarioProfile]:
    """Per scenario: both binaries run, one profile each, merged (as from one perf.data)."""
    derive = gcov_text if isinstance(mode, AutoFdo) else llvm_text
    parts = []
    for scn, (arg, weight) in SCENARIOS.items():
        sdir = tmp / scn
        sdir.mkdir()
        per_binary = []
        for role, binary in binaries.items():
            text = derive(*callgrind(binary, [arg], sdir / f"{role}.callgrind"), sdir / f"{role}.txt")
            prof = sdir / f"{role}{mode.suffix}"
            assert mode.profile_of(binary, text, prof, "text") > 0
            per_binary.append((prof, 1))
        out = sdir / f"{scn}{mode.suffix}"
        total = mode.merge_files(per_binary, out)
        assert total > 0
        parts.append(ScenarioProfile(scn, str(out), "", total, weight))
    return parts


def test_afdo_for_gcc_rewrites_the_string_table_for_gcc_12(tmp_path: Path) -> None:
    # autofdo 0.19's form: version "407*", strings as word counts + padded words.
    names = [b"", b"classify"]
    table = b"".join(struct.pack("<I", (len(n) + 4) // 4) + n.ljust((len(n) + 4) // 4 * 4, b"\0") for n in names)
    rest = struct.pack("<4I", 0xAC000000, 3, 0, 0)
    src = tmp_path / "old.afdo"
    src.write_bytes(struct.pack("<6I", GCDA_MAGIC, 0x3430372A, 0, 0xAA000000, len(table) // 4 + 1, 2) + table + rest)
    out = tmp_path / "new.afdo"
    afdo_for_gcc(src, out)
    data = out.read_bytes()
    assert struct.unpack_from("<3I", data, 0) == (GCDA_MAGIC, 2, 0)
    strings = b"".join(struct.pack("<I", len(n) + 1) + n + b"\0" for n in names)
    assert data[12:] == struct.pack("<3I", 0xAA000000, 4 + len(strings), 2) + strings + rest
    bad = tmp_path / "bad.afdo"
    bad.write_bytes(rest * 2)
    with pytest.raises(ValueError, match="not an AutoFDO"):
        afdo_for_gcc(bad, tmp_path / "again.afdo")


def test_autofdo_spellings_pick_the_compiler_family() -> None:
    assert (parse_mode("autofdo", "make").family, parse_mode("autofdo", "make").profile) == ("gcc", "autofdo")
    for spelling in ("autofdo-clang", "clang+autofdo", "autofdo+lto-thin"):
        r = parse_mode(spelling, "make")
        assert (r.family, r.profile) == ("clang", "autofdo-clang"), spelling
    assert parse_mode("clang+autofdo", "make").name == "autofdo-clang"
    assert parse_mode("autofdo+lto", "make").name == "autofdo+lto"


@pytest.mark.integration
@needs_gcc_afdo
def _glog_files() -> set[str]:
    """create_gcov's glog log files where glog puts them by default."""
    dirs = {Path(tempfile.gettempdir()), Path("/tmp")}
    return {str(p) for d in dirs for p in d.glob("create_gcov*")}


def test_gcc_autofdo_two_binaries_two_scenarios_merged_and_read_by_gcc(tmp_path: Path) -> None:
    mode = AutoFdo()
    mode.find_tools()
    binaries = _sampled("gcc", mode, tmp_path)
    logs = _glog_files()
    parts = _train(mode, binaries, tmp_path)
    assert _glog_files() == logs  # create_gcov logs to its stderr, not to files left in /tmp
    mdir = tmp_path / "merged"
    mdir.mkdir()
    merged = mode.merge(parts, mdir)
    assert Path(merged.path).name == "merged.afdo" and len(merged.sha256) == 64
    # Weighted: the big scenario (3 × 2.5 the iterations) holds ~7.5/8.5 of the counts.
    assert 0.8 < merged.to_dict()["contributions"]["big"] < 0.95
    dump = subprocess.run(["dump_gcov", str(mdir / "merged.raw.afdo")], capture_output=True, text=True,
                          timeout=30).stdout
    assert {"classify", "graph_step", "store_step"} <= {line.split()[0] for line in dump.splitlines()
                                                       if line and not line[0].isspace()}
    flags = BuildFlags()
    mode.apply(flags, merged)
    assert flags.cflags == [f"-fauto-profile={merged.path}"]
    src = tmp_path / "src"
    for role in ROLES:
        # gcc reads it (no error, no crash) and annotates blocks with the profile's counts.
        res = subprocess.run(["gcc", "-O2", *flags.cflags, f"-fdump-ipa-afdo={tmp_path / role}.afdo-dump", "-o",
                              str(tmp_path / role), str(src / f"{role}.c"), str(src / "common.c")],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and mode.problems(res.stderr) == [] and "AutoFDO" not in res.stderr, res.stderr
        dumps = "".join(p.read_text() for p in tmp_path.glob(f"{role}.afdo-dump*"))
        assert "[count: " in dumps and any(int(c) > 0 for c in _counts(dumps)), dumps[:2000]
        plain = subprocess.run([str(binaries[role]), "1000"], capture_output=True, text=True, timeout=30).stdout
        assert subprocess.run([str(tmp_path / role), "1000"], capture_output=True, text=True,
                              timeout=30).stdout == plain


def _counts(dump: str) -> list[str]:
    return re.findall(r"\[count: (\d+)\]", dump)


@pytest.mark.integration
@needs_clang_afdo
def test_clang_autofdo_two_binaries_two_scenarios_merged_and_used_by_clang(tmp_path: Path) -> None:
    mode = AutoFdoClang()
    mode.find_tools()
    binaries = _sampled("clang-16", mode, tmp_path)
    parts = _train(mode, binaries, tmp_path)
    mdir = tmp_path / "merged"
    mdir.mkdir()
    merged = mode.merge(parts, mdir)
    assert 0.8 < merged.to_dict()["contributions"]["big"] < 0.95
    show = subprocess.run([mode.profdata, "show", "-sample", merged.path], capture_output=True, text=True,
                          timeout=30).stdout
    assert all(f"Function: {f}:" in show for f in ("classify", "graph_step", "store_step")), show
    flags = BuildFlags()
    mode.apply(flags, merged)
    src = tmp_path / "src"
    for role in ROLES:
        # clang reads it without a warning and the IR carries the profile's entry counts.
        res = subprocess.run(["clang-16", "-O2", *flags.cflags, "-S", "-emit-llvm", "-o", "-", str(src / f"{role}.c")],
                             capture_output=True, text=True, timeout=60)
        assert res.returncode == 0 and mode.problems(res.stderr) == [] and "warning" not in res.stderr, res.stderr
        assert '!"function_entry_count", i64 ' in res.stdout and '"branch_weights"' in res.stdout
        plain = subprocess.run(["clang-16", "-O2", "-S", "-emit-llvm", "-o", "-", str(src / f"{role}.c")],
                               capture_output=True, text=True, timeout=60).stdout
        assert "function_entry_count" not in plain


@pytest.mark.integration
@pytest.mark.parametrize("family", ["gcc", "clang"])
def test_a_profile_that_maps_nothing_names_the_binary_and_the_causes(family: str, tmp_path: Path) -> None:
    if family == "gcc" and shutil.which("create_gcov") is None:
        pytest.skip("Debian package autofdo")
    mode: AutoFdo | AutoFdoClang = AutoFdo() if family == "gcc" else AutoFdoClang()
    mode.find_tools()
    cc = "gcc" if family == "gcc" else "clang-16"
    src = _sources(tmp_path)
    sampled = _sampled(cc, mode, tmp_path)["graphd"]
    derive = gcov_text if family == "gcc" else llvm_text
    text = derive(*callgrind(sampled, ["20000"], tmp_path / "cg.out"), tmp_path / "samples.txt")
    # The same program without debug info: nothing maps.
    bare = _build(cc, ["-O2"], src, tmp_path / "graphd.bare", "graphd")
    with pytest.raises(EmptyProfileError) as err:
        mode.profile_of(bare, text, tmp_path / f"p{mode.suffix}", "text")
    assert "graphd.bare" in err.value.message and "debug info" in (err.value.hint or "")
    assert "build-id" in (err.value.hint or "") and "another process" in (err.value.hint or "")
    # No samples at all: nothing maps either.
    empty = tmp_path / "none.txt"
    empty.write_text("0\n0\n0\n" if family == "gcc" else "0\n0\n")
    with pytest.raises(EmptyProfileError):
        mode.profile_of(sampled, empty, tmp_path / f"q{mode.suffix}", "text")


@pytest.mark.integration
@needs_gcc_afdo
def test_cli_profile_from_perf_data_without_branch_stacks_is_a_clear_error(hone, tmp_path: Path) -> None:
    src = _sources(tmp_path)
    binary = _build("gcc", ["-O2", "-g", "-gdwarf-4"], src, tmp_path / "graphd", "graphd")
    data = tmp_path / "perf.data"
    rec = subprocess.run(["perf", "record", "-e", "cpu-clock", "-o", str(data), "--", str(binary), "3000000"],
                         capture_output=True, timeout=60)
    if rec.returncode != 0:
        pytest.skip(f"perf record does not work here: {rec.stderr[-200:]!r}")
    res = hone("pgo", "autofdo-profile", "--perf-data", data, "--binary", binary, "-o", tmp_path / "x.afdo")
    assert res.code == 2, res.err
    assert "maps no samples" in res.err and "graphd" in res.err and "Traceback" not in res.err
    assert not (tmp_path / "x.afdo").exists()


@pytest.mark.skipif(lbr_probe()[0], reason="this machine has LBR: AutoFDO is not refused here")
def test_cli_sampling_pids_without_lbr_refuses_before_sampling(hone, tmp_path: Path) -> None:
    res = hone("pgo", "autofdo-profile", "--pid", "1", "--binary", "/bin/true", "--duration", "1",
               "-o", tmp_path / "x.afdo")
    assert res.code == 2 and "LBR" in res.err and "modes that work here" in res.err and "instr-gcc" in res.err
    assert not (tmp_path / "x.afdo").exists()
    res = hone("pgo", "autofdo-profile", "--binary", "/bin/true", "-o", tmp_path / "x.afdo")
    assert res.code == 2 and "nothing to sample" in res.err


def test_recording_attaches_to_pids_and_stops_after_the_body(monkeypatch, tmp_path: Path) -> None:
    # The attach mechanism of training under load, with cpu-clock in place of -b (no LBR here).
    monkeypatch.setattr(autofdo_mod, "perf_record_argv",
                        lambda out: ["perf", "record", "-e", "cpu-clock", "-o", str(out)])
    busy = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        t0 = time.monotonic()
        with autofdo_mod.recording([busy.pid], tmp_path / "perf.data"):
            time.sleep(1)
        assert time.monotonic() - t0 < 30
    finally:
        busy.send_signal(signal.SIGKILL)
        busy.wait()
    assert (tmp_path / "perf.data").stat().st_size > 0
