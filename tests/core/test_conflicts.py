"""Daemons that change settings on their own, found by what the kernel says a process runs:
real processes started here (a renamed copy of a program, a script named like tuned), and the
spoofs that must not count (``exec -a``, a script that only sets its name)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hone.core.conflicts import BY_NAME, DAEMONS, detect_conflicts, match_process
from hone.core.fingerprint import fingerprint

# the pretend daemons are seen machine-wide: by every hone that runs meanwhile (`make test` runs these alone)
pytestmark = pytest.mark.exclusive


def test_an_executable_named_like_a_daemon_is_that_daemon() -> None:
    assert match_process("/usr/sbin/irqbalance", "irqbalance", ["/usr/sbin/irqbalance", "--foreground"]).name \
        == "irqbalance"
    assert match_process("/usr/libexec/power-profiles-daemon", "power-profiles-", []).name == "power-profiles-daemon"
    assert match_process("/usr/sbin/thermald (deleted)", "thermald", []).name == "thermald"


def test_a_script_daemon_is_found_by_its_script_under_an_interpreter() -> None:
    tuned = match_process("/usr/bin/python3.11", "tuned", ["/usr/bin/python3", "-Es", "/usr/sbin/tuned", "-l", "-P"])
    assert tuned is not None and tuned.name == "tuned"
    assert match_process("/usr/bin/bash", "ksmtuned", ["/bin/bash", "/usr/sbin/ksmtuned"]).name == "ksmtuned"


def test_argv0_or_a_name_alone_does_not_make_a_daemon() -> None:
    # exec -a irqbalance sleep: argv[0] lies, the executable and comm do not
    assert match_process("/usr/bin/sleep", "sleep", ["irqbalance", "60"]) is None
    # prctl(PR_SET_NAME, "tuned") in some Python program: comm lies, the script does not
    assert match_process("/usr/bin/python3.11", "tuned", ["/usr/bin/python3", "/opt/app/server.py"]) is None
    assert match_process(None, "irqbalance", []) is None  # a kernel thread has no executable


def test_every_daemon_says_what_it_changes() -> None:
    assert {"tuned", "bpftune", "irqbalance", "power-profiles-daemon", "thermald", "tlp", "cpupower", "cpufreqd",
            "ksmtuned", "numad", "atuned"} <= set(BY_NAME)
    for d in DAEMONS:
        assert d.what and d.changes and (d.executables or d.units), d.name


@pytest.fixture
def fake_daemons(tmp_path: Path) -> Iterator[dict[str, subprocess.Popen[bytes]]]:
    """A copy of sleep named irqbalance, a Python script named tuned, and sleep started as
    ``exec -a irqbalance`` (must not count). Stopped at the end."""
    irqbalance = tmp_path / "irqbalance"
    shutil.copy("/bin/sleep", irqbalance)
    tuned = tmp_path / "tuned"
    tuned.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")  # run by its #! line, as tuned is
    tuned.chmod(0o755)
    procs = {
        "irqbalance": subprocess.Popen([str(irqbalance), "60"]),
        "tuned": subprocess.Popen([str(tuned)]),
        "spoof": subprocess.Popen(["bash", "-c", "exec -a irqbalance sleep 60"]),
    }
    time.sleep(0.3)
    try:
        yield procs
    finally:
        for p in procs.values():
            p.kill()
            p.wait()


def test_running_daemons_are_found_and_spoofs_are_not(fake_daemons: dict[str, subprocess.Popen[bytes]]) -> None:
    found = {c.daemon: c for c in detect_conflicts().conflicts}
    assert fake_daemons["irqbalance"].pid in found["irqbalance"].pids
    assert fake_daemons["tuned"].pid in found["tuned"].pids
    assert fake_daemons["spoof"].pid not in found["irqbalance"].pids
    assert any(str(fake_daemons["irqbalance"].pid) in f for f in found["irqbalance"].found)
    assert found["irqbalance"].overlapping({"irq": "sysfs:/proc/irq/24/smp_affinity", "swap": "sysctl:vm.swappiness"}) \
        == ["irq"]
    assert found["tuned"].overlapping({"swap": "sysctl:vm.swappiness", "p": "file:/etc/x.conf#k"}) == ["swap"]


def test_the_fingerprint_records_them(fake_daemons: dict[str, subprocess.Popen[bytes]]) -> None:
    fp = fingerprint()
    daemons = {c["daemon"] for c in fp["conflicts"]}
    assert {"irqbalance", "tuned"} <= daemons
    assert isinstance(fp["conflict_notes"], list)


@pytest.mark.skipif(Path("/run/systemd/system").is_dir(), reason="systemd runs here")
def test_without_systemd_units_are_not_checked_and_it_says_so() -> None:
    scan = detect_conflicts()
    assert any("systemd is not running" in n for n in scan.notes)
