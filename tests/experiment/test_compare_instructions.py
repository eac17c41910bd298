"""``hone compare --metric instructions``: real builds, real counters, deterministic verdicts."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hone.experiment.compare import metric_value
from hone.run.instructions import instruction_counter
from hone.stats.paired import compare_paired

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

# The loop count is fixed at build time: two builds differ only in how often the loop runs.
LOOP_C = """
#include <stdio.h>
int main(void) {
    volatile unsigned long acc = 0;
    for (long i = 0; i < ITERATIONS; i++) acc += i * 2654435761u;
    printf("%lu\\n", acc);
    return 0;
}
"""


def build(tmp_path: Path, name: str, iterations: int) -> Path:
    src = tmp_path / "loop.c"
    src.write_text(LOOP_C)
    binary = tmp_path / name
    subprocess.run(["gcc", "-O2", f"-DITERATIONS={iterations}", "-o", str(binary), str(src)], check=True,
                   timeout=120)
    return binary


def compare(hone: Any, tmp_path: Path, *args: str) -> tuple[Any, dict[str, Any]]:
    res = hone("compare", *args, "--metric", "instructions", "--seed", "1", "--export-json", tmp_path / "r.json",
               cwd=tmp_path)
    assert res.code == 0, res.err
    return res, json.loads((tmp_path / "r.json").read_text())


def test_ten_percent_more_iterations_is_slower_by_ten_percent_with_a_tight_ci(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    build(tmp_path, "base", 3_000_000)
    build(tmp_path, "more", 3_300_000)
    res, data = compare(hone, tmp_path, "./base", "./more")
    row = data["rows"][0]
    c = row["comparisons"]["./more"]
    assert c["verdict"] == "slower"
    assert 9.5 < c["change_pct"] < 10.5  # the loop dominates; start-up adds the same count to both
    lo, hi = c["ci_pct"]
    assert lo <= c["change_pct"] <= hi and hi - lo < 0.05
    assert len(row["looks"]) == 1 and row["stopped"] == "decisive"  # settled at the first look
    assert data["unit"] == "instructions" and "instructions (instructions, lower is better)" in res.out
    counter = instruction_counter()
    assert f"counted by {counter.name}" in data["metric_reason"]
    assert f"counted by {counter.name}" in res.out.replace("\n", " ")
    runs = [r for v in row["variants"] for r in v["runs"]]
    assert {r["counted_by"] for r in runs} == {counter.name}  # one counter for the whole comparison
    if not counter.timed:  # valgrind's times are no figure of the program's, in the table or the data
        assert all(s["wall_mean"] is None for s in row["summaries"].values())
        assert all(math.isnan(metric_value(r, "cpu_time")) for r in runs)
        assert "runs take" in data["metric_reason"]


def test_the_same_program_twice_is_equivalent(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    build(tmp_path, "prog", 3_000_000)
    _, data = compare(hone, tmp_path, "./prog", "./prog", "--name", "A", "--name", "B")
    row = data["rows"][0]
    c = row["comparisons"]["B"]
    assert c["verdict"] == "equivalent"
    assert abs(c["change_pct"]) < 0.01 and len(row["looks"]) == 1


def test_a_spec_variant_compares_instructions_without_listing_them(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    build(tmp_path, "prog", 3_000_000)
    build(tmp_path, "prog-more", 3_300_000)
    (tmp_path / "hone.yaml").write_text(
        "benchmark: {command: ['./{binary}']}\n"
        "knobs:\n  - {name: binary, kind: param, values: [prog, prog-more], default: prog}\n")
    _, data = compare(hone, tmp_path, "hone.yaml", "--variant", "more:binary=prog-more", "--rounds", "6")
    c = data["rows"][0]["comparisons"]["more"]
    assert c["verdict"] == "slower" and 9.5 < c["change_pct"] < 10.5
    assert data["metric_reason"].startswith("chosen with --metric; counted by ")


def test_an_avx512_build_fails_every_run_with_the_sigill_message(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    flags = next((ln for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("flags")), "")
    if "avx512f" not in flags.split():
        pytest.skip("this CPU has no AVX-512: the program itself would die of SIGILL")
    if instruction_counter().name != "valgrind":
        pytest.skip("perf counts instructions here: no valgrind, no SIGILL")
    build(tmp_path, "prog", 100_000)
    (tmp_path / "avx.c").write_text(
        "#include <stdio.h>\nint main(void) { int out[16] = {0};\n"
        '  __asm__ volatile("vpxord %%zmm0, %%zmm0, %%zmm0\\n\\tvmovdqu32 %%zmm0, %0" : "=m"(out) : : "xmm0");\n'
        '  printf("%d\\n", out[0]); return 0; }\n')
    subprocess.run(["gcc", "-O2", "-o", str(tmp_path / "avx"), str(tmp_path / "avx.c")], check=True, timeout=120)
    res = hone("compare", "./prog", "./avx", "--metric", "instructions", "--rounds", "2", "--warmup", "0",
               "--max-time", "0", cwd=tmp_path)
    assert res.code == 1  # a variant failed every run
    assert "valgrind cannot run ./avx: it died with SIGILL on an instruction it cannot decode" in res.err
    assert "./avx failed every run" in res.err


def test_mostly_identical_counts_do_not_break_the_automatic_estimator() -> None:
    # Counts repeat exactly in most rounds and move by a few instructions in others: the
    # rounds' spread is 0, where a Welsch width would collapse to nothing.
    ref = [12_129_937.0] * 20
    same = [12_129_937.0] * 17 + [12_129_951.0] * 3
    c = compare_paired(ref, same, estimator="auto")
    assert c.verdict == "equivalent" and math.isfinite(c.ci_pct[0]) and math.isfinite(c.ci_pct[1])
    more = [x * 1.1 for x in same]
    assert compare_paired(ref, more, estimator="auto").verdict == "slower"
    # All rounds identical: a zero-width CI at the exact ratio.
    c = compare_paired(ref, [x * 1.1 for x in ref], estimator="auto")
    assert c.verdict == "slower" and c.ci_pct[0] == pytest.approx(10.0) and c.ci_pct[1] == pytest.approx(10.0)
