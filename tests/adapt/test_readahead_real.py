"""`hone adapt readahead` on a real loop device with real bpftrace: a sequential reader, then
a random one, switch the device's read-ahead up and down; the end (SIGTERM) restores it and
touches no other device. Skipped only without root or bpftrace (CI runs as root)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import LoopFs
from tests.readahead import SWITCH_S, readahead_is, start_controller, start_reader, stop, wait_for

pytestmark = pytest.mark.integration


def _journaled(state_dir: Path) -> set[str]:
    """Every resource whose original was journaled (hone changes nothing it did not journal)."""
    out = set()
    for name in ("journal.jsonl", "journal-history.jsonl"):
        path = state_dir / name
        if path.exists():
            out |= {r["res"] for r in map(json.loads, path.read_text().splitlines()) if r.get("op") == "original"}
    return out


def test_a_sequential_then_a_random_reader_switch_it_both_ways_and_the_end_restores_it(
        loop_fs: LoopFs, state_dir: Path, hone) -> None:  # type: ignore[no-untyped-def]
    original = loop_fs.readahead.read_text().strip()
    assert original not in ("16", "512"), "the test needs a starting value distinct from both sizes"
    ctl = start_controller(loop_fs, state_dir)
    reader = None
    try:
        reader = start_reader("sequential", loop_fs.data)
        assert wait_for(readahead_is(loop_fs, "512"), SWITCH_S), "no switch up"
        stop(reader)
        reader = start_reader("random", loop_fs.data)
        assert wait_for(readahead_is(loop_fs, "16"), SWITCH_S), "no switch down"
    finally:
        if reader is not None:
            stop(reader)
        ctl.send_signal(signal.SIGTERM)
        out, err = ctl.communicate(timeout=30)
    assert ctl.returncode == 0, out + err
    assert loop_fs.readahead.read_text().strip() == original
    # no other device; tracefs too when it was not mounted (mounted for bpftrace, unmounted again)
    assert _journaled(state_dir) - {"script:tracefs-mount"} == {f"sysfs:{os.path.realpath(loop_fs.readahead)}"}
    assert "-> 512 (sequential:" in out and "-> 16 (random:" in out, out
    assert f"back to {original}" in out
    assert hone("status").out.strip() == "nothing changed by hone on this machine"


def test_a_device_that_does_not_exist_is_refused_in_one_line(hone) -> None:  # type: ignore[no-untyped-def]
    res = hone("adapt", "readahead", "--device", "nosuchdisk0")
    assert res.code == 2
    assert res.err.splitlines()[0] == "hone: error: --device nosuchdisk0: no such block device on this machine"


def test_a_probe_that_dies_ends_the_controller_with_the_device_restored(
        loop_fs: LoopFs, state_dir: Path) -> None:
    original = loop_fs.readahead.read_text().strip()
    ctl = start_controller(loop_fs, state_dir)
    try:
        assert ctl.stdout is not None
        first = ctl.stdout.readline()
        if first.startswith("mounted tracefs"):  # a machine that had it unmounted
            first = ctl.stdout.readline()
        assert "watching" in first, first
        found = subprocess.run(["pgrep", "-f", f"readseq.bt .* {loop_fs.dev_t} "], capture_output=True, text=True)
        for pid in found.stdout.split():
            os.kill(int(pid), signal.SIGKILL)
        out, err = ctl.communicate(timeout=30)
    finally:
        if ctl.poll() is None:
            ctl.kill()
    assert found.stdout.strip(), "no bpftrace of the controller found"
    assert ctl.returncode == 2, out + err
    assert "the readseq probe stopped before the controller did: bpftrace exited with code -9" in err
    assert loop_fs.readahead.read_text().strip() == original
