"""Fixtures for the diagnose tests: compiled C test programs and the capability probe."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

PROGRAMS = Path(__file__).parent / "programs"
REPO = Path(__file__).resolve().parents[2]


def compile_c(source: Path, out: Path, *flags: str) -> Path:
    subprocess.run(["gcc", "-O2", "-g", "-fno-omit-frame-pointer", *flags, "-o", str(out), str(source)],
                   check=True, timeout=60)
    return out


@pytest.fixture(scope="session")
def c_programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """cpu_hot (hot_spin dominant), cpu_hot_changed (changed_spin 6× heavier), syscall_heavy."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")
    d = tmp_path_factory.mktemp("diag-bin")
    return {
        "cpu_hot": compile_c(PROGRAMS / "cpu_hot.c", d / "cpu_hot"),
        "cpu_hot_changed": compile_c(PROGRAMS / "cpu_hot.c", d / "cpu_hot_changed", "-DEXTRA=6"),
        "syscall_heavy": compile_c(PROGRAMS / "syscall_heavy.c", d / "syscall_heavy"),
    }


@pytest.fixture(scope="session")
def caps(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The capability probe. As root the suite sets up what it needs: tracefs is mounted if a
    fresh machine has none (syscall tracepoints, off-CPU graphs and bpftrace need it, docs/machine-facts.md),
    journaled in a state directory of the suite's own, and rolled back at the end, so the machine
    is left as it was found."""
    from hone.diagnose.capabilities import probe_capabilities
    from hone.run.journal import Journal

    state = tmp_path_factory.mktemp("caps-state")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HONE_STATE_DIR", str(state))
        found = probe_capabilities(allow_mount=True)
    try:
        if found.perf is None or not found.cpu_clock_sampling:
            pytest.skip("perf cpu-clock sampling is not available")
        yield found
    finally:
        assert all(o.ok for o in Journal(state).restore())
