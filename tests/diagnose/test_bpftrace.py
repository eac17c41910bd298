"""bpftrace probes are bounded in time and leave no process behind."""

from __future__ import annotations

import subprocess
import time

import pytest

from hone.core.errors import HoneError
from hone.diagnose.bpftrace import PROBES, probe_script, run_probe

pytestmark = pytest.mark.integration


def test_every_probe_script_ends_itself() -> None:
    for name in PROBES:
        text = probe_script(name).read_text()
        assert "interval:s:$1 { exit(); }" in text, name
        assert "kprobe:" not in text  # this kernel has none


def test_unknown_probe_is_a_user_error() -> None:
    with pytest.raises(HoneError, match="unknown probe"):
        probe_script("nope")


def test_syscount_probe_runs_for_its_window_and_exits(caps) -> None:  # type: ignore[no-untyped-def]
    if caps.bpftrace is None:
        pytest.skip(f"bpftrace unusable: {caps.bpftrace_why}")
    start = time.monotonic()
    result = run_probe("syscount", 1, caps, comm="")
    elapsed = time.monotonic() - start
    assert result.ok, result.error
    assert "@calls[" in result.output
    assert elapsed < 15
    left = subprocess.run(["pgrep", "-f", str(probe_script("syscount"))], capture_output=True, text=True)
    assert left.stdout.strip() == ""
