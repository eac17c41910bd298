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


def test_readseq_probe_reports_a_readers_file_as_a_table(caps, tmp_path) -> None:  # type: ignore[no-untyped-def]
    if caps.bpftrace is None:
        pytest.skip(f"bpftrace unusable: {caps.bpftrace_why}")
    data = tmp_path / "data"
    data.write_bytes(b"x" * (4 << 20))
    loop = subprocess.Popen(["sh", "-c", f'while :; do dd if="{data}" of=/dev/null bs=64k 2>/dev/null; done'])
    try:
        result = run_probe("readseq", 2, caps, comm="dd")
    finally:
        loop.kill()
        loop.wait()
    assert result.ok, result.error
    lines = result.output.splitlines()
    assert lines[0].startswith("pid ")
    ino = data.stat().st_ino
    row = next(line for line in lines[1:] if line.split()[2] == str(ino))
    assert "100%" in row  # dd reads its file from the start to the end
