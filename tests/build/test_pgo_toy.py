"""hone pgo on small programs of ours: the profile is used (no missing/mismatched
profile warning, fewer instructions on the training input), each variant has its own
directory and manifest, the original tree is untouched, wrong answers are rejected."""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path

import pytest

from hone.build.modes.autofdo import lbr_probe
from hone.build.pipeline import default_workdir
from tests.build.conftest import build, read_json, rows

pytestmark = pytest.mark.integration


def _assert_profile_used(result: dict, variant: str, max_ratio: float) -> None:
    b = build(result, variant)
    assert b["status"] == "ok", b
    assert b["profile_problems"] == [], b["profile_problems"]
    (r,) = rows(result, variant)
    assert r["instructions_ratio"] is not None and r["instructions_ratio"] < max_ratio, r
    manifest = json.loads(Path(b["manifest"]).read_text())
    prof = manifest["profiles"][0]
    assert len(prof["sha256"]) == 64
    assert {s["scenario"] for s in prof["scenarios"]} == {"small", "other"}
    assert any(st["name"] == "training build" for st in manifest["stages"])
    assert manifest["tools"] and manifest["binary_sha256"]


def test_instr_gcc_instr_clang_and_bolt_on_a_c_program(hone, project, tmp_path: Path) -> None:
    src = project("toy-c")
    before = sorted(p.name for p in src.iterdir())
    out = tmp_path / "r.json"
    # The training input is also the evaluate input: the acceptance check is that the
    # instruction count on the training input drops.
    res = hone("pgo", "--make", src, "--binary", "toy",
               "--train", "@small:3 {binary} 200000", "--train", "@other {binary} 50000",
               "--evaluate", "@train-input {binary} 200000",
               "--mode", "instr-gcc", "--mode", "instr-clang", "--mode", "bolt",
               "--rounds", "6", "--noise-builds", "1", "--workdir", tmp_path / "work", "--json", out, timeout=300)
    assert res.code == 0, res.err
    result = read_json(out)
    _assert_profile_used(result, "instr-gcc", 0.97)
    _assert_profile_used(result, "instr-clang", 0.97)
    assert build(result, "bolt")["status"] == "ok"
    assert "train and evaluate scenarios are the same" in res.err
    # Weighted merge: weight 3 on 4× the iterations of "other" → about 12/13 of the counts.
    share = result["profiles"]["instr-gcc"]["contributions"]["small"]
    assert 0.85 < share < 0.97
    # The JSON fields the issue promises, ratios variant/default.
    for r in result["variants"]:
        assert {"mode", "binary", "scenario", "time_ratio", "time_ci", "instructions_ratio", "verdict"} <= r.keys()
    assert rows(result, "noise-1")[0]["verdict"] == "noise probe"
    # Each variant in its own directory; the original tree untouched.
    binaries = {r["binary"] for r in result["variants"]}
    assert len(binaries) == len(result["variants"])
    assert all(Path(b).is_file() and str(tmp_path / "work") in b for b in binaries)
    assert sorted(p.name for p in src.iterdir()) == before
    # report regenerates the table from result.json without rebuilding
    rep = hone("pgo", "report", tmp_path / "work")
    assert rep.code == 0 and "instr-clang" in rep.out and "train-input" in rep.out


def test_instr_gcc_through_cmake(hone, project, tmp_path: Path) -> None:
    src = project("toy-c")
    out = tmp_path / "r.json"
    res = hone("pgo", "--cmake", src, "--binary", "_hone_build/toy",
               "--train", "@small {binary} 200000", "--train", "@other {binary} 50000",
               "--evaluate", "@train-input {binary} 200000", "--mode", "instr-gcc",
               "--rounds", "2", "--noise-builds", "0", "--json", out, timeout=300)
    assert res.code == 0, res.err
    _assert_profile_used(read_json(out), "instr-gcc", 0.97)
    assert not (src / "_hone_build").exists()


def test_a_variant_with_different_output_is_rejected_loudly(hone, project, tmp_path: Path) -> None:
    src = project("toy-c")
    prog = src / "toy.c"
    # Output that depends on the compiler: the clang build answers differently.
    prog.write_text(prog.read_text().replace('printf("%ld\\n", acc);', '''printf("%ld\\n", acc);
#ifdef __clang__
    puts("clang");
#endif'''))
    out = tmp_path / "r.json"
    res = hone("pgo", "--make", src, "--binary", "toy", "--train", "{binary} 1000", "--evaluate", "{binary} 2000",
               "--mode", "clang", "--mode", "lto", "--rounds", "2", "--noise-builds", "0", "--no-counts",
               "--json", out, timeout=200)
    assert res.code == 0, res.err
    assert "REJECTED clang" in res.err and "stdout differs" in res.err
    result = read_json(out)
    assert build(result, "clang")["status"] == "rejected"
    assert build(result, "lto")["status"] == "ok"
    assert {r["variant"] for r in result["variants"]} == {"default", "lto"}
    # A user check comparing only the first line (the number) accepts the clang build.
    check = 'first=$(head -n1); test "$first" = "$(head -n1 "$HONE_REFERENCE_OUTPUT")"'
    res = hone("pgo", "--make", src, "--binary", "toy", "--train", "{binary} 1000", "--evaluate", "{binary} 2000",
               "--mode", "clang", "--rounds", "2", "--noise-builds", "0", "--no-counts",
               "--check", check, "--json", out, timeout=200)
    assert res.code == 0, res.err
    assert build(read_json(out), "clang")["status"] == "ok"


def test_instr_rust_on_a_crate(hone, project, tmp_path: Path) -> None:
    src = project("toy-rust")
    out = tmp_path / "r.json"
    res = hone("pgo", "--cargo", src, "--binary", "target/release/toy",
               "--train", "@small {binary} 200000", "--train", "@other:2 {binary} 50000 axmj",
               "--evaluate", "@train-input {binary} 200000",
               "--mode", "instr-rust", "--rounds", "6", "--noise-builds", "0", "--json", out, timeout=300,
               # Left in the environment (cargo sets it for build scripts), it would beat RUSTFLAGS.
               env={"CARGO_ENCODED_RUSTFLAGS": "-Cdebug-assertions=off"})
    assert res.code == 0, res.err
    result = read_json(out)
    _assert_profile_used(result, "instr-rust", 0.95)
    assert "llvm-profdata" in result["tools"] and "LLVM" in result["tools"]["rustc"]
    assert not (src / "target").exists()


def test_a_cargo_build_that_drops_rustflags_fails_with_the_cause(hone, project, tmp_path: Path) -> None:
    res = hone("pgo", "--cargo", project("toy-rust"), "--binary", "target/release/toy",
               "--build-command", "env -u RUSTFLAGS -u CARGO_ENCODED_RUSTFLAGS cargo build --release",
               "--train", "{binary} 1000", "--evaluate", "{binary} 1000", "--mode", "instr-rust",
               "--noise-builds", "0", "--no-counts", "--workdir", tmp_path / "work", timeout=300)
    assert res.code == 2, res.err
    assert "instr-rust: the training build did not get hone's flags (-Cprofile-generate=" in res.err, res.err
    assert "__llvm_profile_" in res.err and "RUSTFLAGS" in res.err and "Makefile" not in res.err, res.err


@pytest.mark.skipif(lbr_probe()[0], reason="this machine has LBR: AutoFDO is not refused here")
def test_autofdo_without_lbr_refuses_and_builds_nothing(hone, project, state_dir: Path) -> None:
    src = project("toy-c")
    res = hone("pgo", "--make", src, "--binary", "toy", "--train", "{binary} 1000", "--evaluate", "{binary} 1000",
               "--mode", "instr-gcc", "--mode", "autofdo")
    assert res.code != 0
    assert "LBR" in res.err and "modes that work here" in res.err and "instr-gcc" in res.err
    assert not (state_dir / "pgo").exists() or not any((state_dir / "pgo").iterdir())
    assert sorted(os.listdir(src)) == ["CMakeLists.txt", "Makefile", "toy.c"]


def test_runs_started_in_the_same_second_get_work_directories_of_their_own(state_dir: Path) -> None:
    now = datetime(2026, 11, 30, 1, 22, 59)
    first, second, third = (default_workdir("toy-c", now) for _ in range(3))
    assert first == state_dir / "pgo" / "20261130-012259-toy-c"
    assert [second.name, third.name] == ["20261130-012259-toy-c-2", "20261130-012259-toy-c-3"]
    assert all(p.is_dir() and not any(p.iterdir()) for p in (first, second, third))
