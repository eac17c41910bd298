"""Counting instructions: the counter this machine has, real perf, real valgrind, real programs."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hone.core.process import run_process
from hone.run.instructions import InstructionCounter, counted_command, instruction_counter, probe_perf

needs_valgrind = pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
needs_perf = pytest.mark.skipif(shutil.which("perf") is None, reason="perf is not installed")
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc is not installed")

LOOP_C = """
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    volatile unsigned long acc = 0;
    for (long i = 0; i < n; i++) acc += i * 2654435761u;
    printf("%lu\\n", acc);
    return 0;
}
"""
# One AVX-512 instruction (vpxord on zmm registers): valgrind 3.19 cannot decode it.
AVX512_C = """
#include <stdio.h>
int main(void) {
    int out[16] = {0};
    __asm__ volatile("vpxord %%zmm0, %%zmm0, %%zmm0\\n\\tvmovdqu32 %%zmm0, %0" : "=m"(out) : : "xmm0");
    printf("%d\\n", out[0]);
    return 0;
}
"""


def build(tmp_path: Path, name: str, source: str, *flags: str) -> Path:
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    binary = tmp_path / name
    subprocess.run(["gcc", "-O2", *flags, "-o", str(binary), str(src)], check=True, timeout=120)
    return binary


def has_avx512() -> bool:
    flags = next((line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags")), "")
    return "avx512f" in flags.split()


def valgrind_counter() -> InstructionCounter:
    return InstructionCounter("valgrind", shutil.which("valgrind") or "valgrind", "chosen by the test")


@needs_perf
def test_the_counter_follows_what_perf_answers_on_this_machine() -> None:
    answer = probe_perf(shutil.which("perf") or "perf")
    counter = instruction_counter()
    assert counter is instruction_counter()  # probed once per process
    if answer == "ok":
        assert counter.name == "perf" and counter.timed
    else:  # a VM without a PMU: <not supported>
        assert counter.name == "valgrind" and not counter.timed
        assert answer in counter.why and "counted by valgrind --tool=cachegrind" in counter.describe()


@needs_perf
def test_perf_counting_reads_the_count_and_catches_a_signal_perf_hides() -> None:
    # Software events exist without a PMU: the perf path runs for real with one of them.
    counter = InstructionCounter("perf", shutil.which("perf") or "perf", "chosen by the test", event="page-faults:u")
    with counted_command(["sh", "-c", "exit 0"], 30, counter) as cmd:
        count, error = cmd.finish(run_process(cmd.argv, timeout=cmd.timeout))
    assert error is None and count is not None and count > 0
    with counted_command(["sh", "-c", "kill -SEGV $$"], 30, counter) as cmd:
        res = run_process(cmd.argv, timeout=cmd.timeout)
        count, error = cmd.finish(res)
        # perf stat alone exits 0 when its command dies of a signal, and on a loaded machine now and
        # then prints nothing about it either: the run as perf reports it then, the status file kept
        lost = cmd.finish(dataclasses.replace(res, returncode=0, stderr=""))
    assert res.returncode == 128 + 11  # the status, passed on by the shell around the command
    assert count is None and error == "sh was killed by signal 11 (SIGSEGV)"
    assert lost == (None, "sh was killed by signal 11 (SIGSEGV)")


@needs_valgrind
@needs_gcc
def test_valgrind_counts_children_and_leaves_no_files(tmp_path: Path) -> None:
    loop = build(tmp_path, "loop", LOOP_C)
    counts = []
    for argv in ([str(loop), "200000"], ["sh", "-c", f"{loop} 200000; {loop} 200000"]):
        with counted_command(argv, 60, valgrind_counter()) as cmd:
            res = run_process(cmd.argv, timeout=cmd.timeout)
            directory = cmd.directory
            count, error = cmd.finish(res)
        assert error is None and count is not None, error
        assert not directory.exists()  # the private cachegrind files are gone
        assert "==" not in res.stderr  # valgrind's messages went to its log files, not the program's stderr
        counts.append(count)
    one, two = counts
    # Two runs of the loop under sh: twice the loop plus the shell's own instructions.
    assert 2 * one < two < 2 * one + 2_000_000


@needs_valgrind
@needs_gcc
@pytest.mark.skipif(not has_avx512(), reason="this CPU has no AVX-512: the program itself would die of SIGILL")
def test_an_avx512_binary_under_valgrind_fails_with_the_sigill_message(tmp_path: Path) -> None:
    avx = build(tmp_path, "avx", AVX512_C)
    assert subprocess.run([str(avx)], capture_output=True, timeout=30).returncode == 0  # runs natively
    # Run directly, and as the child of a shell: the message names the program that died.
    for argv in ([str(avx)], ["sh", "-c", f"{avx}; true"]):
        with counted_command(argv, 60, valgrind_counter()) as cmd:
            count, error = cmd.finish(run_process(cmd.argv, timeout=cmd.timeout))
        assert count is None
        assert error is not None and error.startswith(f"valgrind cannot run {avx}: it died with SIGILL"), error
        assert "-march=native" in error


@needs_gcc
def test_hone_run_gives_the_count_in_the_json(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    build(tmp_path, "loop", LOOP_C)
    (tmp_path / "hone.yaml").write_text(
        "name: loop\nbenchmark: {command: [./loop, '2000000'], repeats: 3}\nmetrics:\n  - name: instructions\n")
    res = hone("run", tmp_path / "hone.yaml", "--json", tmp_path / "r.json", cwd=tmp_path)
    assert res.code == 0, res.err
    data = json.loads((tmp_path / "r.json").read_text())
    counts = [r["metrics"]["instructions"] for r in data["runs"]]
    assert all(2_000_000 < c < 40_000_000 for c in counts)  # at least one instruction per iteration
    assert max(counts) - min(counts) <= 1e-4 * min(counts)  # repeatable
    assert data["summary"]["instructions"]["n"] == 3
    counter = instruction_counter()
    assert {r["counted_by"] for r in data["runs"]} == {counter.name}
    assert f"counted by {counter.name}" in res.out and f"counted by {counter.name}" in data["notes"][0]
    if not counter.timed:  # valgrind's times are not the program's: not summarised
        assert set(data["summary"]) == {"instructions"}
        assert "warning: instructions are counted by valgrind" in res.err and "each run takes" in res.err


@needs_gcc
def test_a_spec_with_instructions_and_cpu_time_is_not_run_under_valgrind(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    if instruction_counter().timed:
        pytest.skip("perf counts here: the times stay the program's own")
    build(tmp_path, "loop", LOOP_C)
    (tmp_path / "hone.yaml").write_text(
        "benchmark: {command: [./loop, '1000']}\nmetrics:\n  - name: instructions\n  - name: cpu_time\n")
    res = hone("run", tmp_path / "hone.yaml", cwd=tmp_path)
    assert res.code == 1
    assert "not run: instructions are counted by valgrind here" in res.err
    assert "so cpu_time would be valgrind's" in res.err
