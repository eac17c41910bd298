"""Before a session: a warning per daemon naming the knobs it can change, or with --strict a
refusal (exit 2) before anything on the machine changed. Real verbs, a real stand-in daemon."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hone.core.conflicts import ConflictScan, detect_conflicts
from hone.run.conflicts import conflict_lines, knob_idents
from hone.spec import load_spec

# the pretend daemons are seen machine-wide: by every hone that runs meanwhile (`make test` runs these alone)
pytestmark = pytest.mark.exclusive


@pytest.fixture
def tuned(tmp_path: Path) -> Iterator[int]:
    """A process the kernel says runs an executable named tuned (a copy of sleep)."""
    exe = tmp_path / "daemon" / "tuned"
    exe.parent.mkdir()
    shutil.copy("/bin/sleep", exe)
    proc = subprocess.Popen([str(exe), "60"])
    time.sleep(0.2)
    try:
        yield proc.pid
    finally:
        proc.kill()
        proc.wait()


def _spec(tmp: Path) -> Path:
    (tmp / "conf.ini").write_text("k = 1\n")
    spec = tmp / "hone.yaml"
    spec.write_text("name: conflicts\nbenchmark:\n  command: ['true']\n  repeats: 1\n"
                    "metrics:\n  - {name: wall_time}\n"
                    "knobs:\n  - {name: k, kind: file, path: conf.ini, key: k, values: ['1', '2']}\n"
                    "  - {name: vm.swappiness, kind: sysctl, type: int, range: [0, 100]}\n"
                    "tune: {trials: 2, confirm: 0}\n")
    return spec


def test_each_daemon_names_the_knobs_of_the_session_it_can_change(tmp_path: Path, tuned: int) -> None:
    loaded = load_spec(_spec(tmp_path))
    idents = knob_idents(loaded)
    assert idents["vm.swappiness"] == "sysctl:vm.swappiness" and idents["k"].startswith("file:")
    scan = detect_conflicts()
    line = next(line for line in conflict_lines(scan, idents) if line.startswith("tuned runs"))
    assert f"process {tuned}" in line and "can change this session's knobs vm.swappiness" in line
    assert "k," not in line
    quiet = conflict_lines(ConflictScan([c for c in scan.conflicts if c.daemon == "tuned"], []), {"k": idents["k"]})
    assert "none of this session's knobs" in quiet[0]


def test_apply_warns_and_strict_refuses_changing_nothing(hone, tmp_path: Path, tuned: int) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path)
    res = hone("apply", spec, "--set", "k=2", "--strict")
    assert res.code == 2 and "Traceback" not in res.err
    assert "hone apply --strict: refusing, nothing was changed" in res.err and "tuned runs" in res.err
    assert (tmp_path / "conf.ini").read_text() == "k = 1\n"
    assert "nothing changed by hone" in hone("status").out
    res = hone("apply", spec, "--set", "k=2")
    assert res.code == 0, res.err
    assert "warning: tuned runs" in res.err and "none of this session's knobs" in res.err
    assert (tmp_path / "conf.ini").read_text() == "k = 2\n"
    assert hone("rollback").code == 0
    assert (tmp_path / "conf.ini").read_text() == "k = 1\n"


@pytest.mark.parametrize("verb", [["tune", "--trials", "1"], ["compare", "--variant", "two:k=2", "-r", "2"]])
def test_tune_and_compare_strict_refuse_before_any_run(hone, tmp_path: Path, tuned: int, verb: list[str]) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path)
    res = hone(verb[0], spec, *verb[1:], "--strict")
    assert res.code == 2 and f"hone {verb[0]} --strict: refusing" in res.err, res.err
    assert (tmp_path / "conf.ini").read_text() == "k = 1\n"


def test_preset_apply_strict_refuses_before_any_setting(hone, tuned: int) -> None:  # type: ignore[no-untyped-def]
    planned = hone("preset", "apply", "throughput-server", "--dry-run")
    assert planned.code == 0 and "would set" in planned.out, planned.out + planned.err
    res = hone("preset", "apply", "throughput-server", "--strict")
    assert res.code == 2 and "hone preset apply --strict: refusing, nothing was changed" in res.err, res.err
    assert "tuned runs" in res.err and "it can change this session's knobs" in res.err
    assert "nothing changed by hone" in hone("status").out
