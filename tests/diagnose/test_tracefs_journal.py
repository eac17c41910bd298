"""`--mount-tracefs` changes the machine: the mount is journaled first and `hone rollback`
undoes it. Exercised on a mount point of the test's own, so /sys/kernel/tracing (which the
session's capability probe may hold mounted) is not disturbed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hone.diagnose.capabilities import tracefs_mount_knob
from hone.run.journal import Journal, MachineLock


def _mounted(path: Path) -> bool:
    return subprocess.run(["mountpoint", "-q", str(path)], timeout=30).returncode == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
def test_tracefs_mount_is_journaled_and_rolled_back(hone, state_dir: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    point = tmp_path / "tracing"
    point.mkdir()
    knob = tracefs_mount_knob(point)
    assert knob.read() == "unmounted"
    try:
        with MachineLock():
            Journal(state_dir).write(knob, "mounted")
        assert _mounted(point) and (point / "events").is_dir()
        status = hone("status")
        assert "script:tracefs-mount" in status.out and "unmounted" in status.out, status.out
        back = hone("rollback")
        assert back.code == 0 and "restored script:tracefs-mount" in back.out, back.out + back.err
        assert not _mounted(point)
        assert hone("status").out.strip() == "nothing changed by hone on this machine"
    finally:
        if _mounted(point):
            subprocess.run(["umount", str(point)], timeout=30)


def test_the_mount_knob_gets_the_path_as_an_argument_not_as_shell_text(tmp_path: Path) -> None:
    odd = tmp_path / "a dir; touch pwned"
    knob = tracefs_mount_knob(odd)
    assert knob.read() == "unmounted"  # mountpoint -q on a missing path: no error, not mounted
    assert not (Path.cwd() / "pwned").exists() and not (tmp_path / "pwned").exists()
    assert str(odd) in knob.model.get and str(odd) in knob.model.set
