"""run_process: argv only, timeouts that kill the whole group, CPU times from wait4."""

from __future__ import annotations

import sys
import time

import pytest

from hone.errors import HoneError
from hone.run.process import run_process


def _alive(pid: int) -> bool:
    """Running or sleeping; a zombie waiting for a reaper counts as dead."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_cpu_time_of_a_busy_child_is_measured() -> None:
    res = run_process([sys.executable, "-c", "s=0\nfor i in range(3_000_000): s+=i"], timeout=60)
    assert res.ok
    assert res.cpu_s > 0.05
    assert res.wall_s >= res.cpu_s * 0.5
    assert res.max_rss_kb > 1000


def test_timeout_kills_the_whole_process_group() -> None:
    code = "import subprocess, time; p = subprocess.Popen(['sleep', '30']); print(p.pid, flush=True); time.sleep(30)"
    t0 = time.perf_counter()
    res = run_process([sys.executable, "-c", code], timeout=1.0)
    assert res.timed_out and not res.ok
    assert time.perf_counter() - t0 < 10
    grandchild = int(res.stdout.split()[0])
    time.sleep(0.2)
    assert not _alive(grandchild)
    assert "timed out after" in res.describe_failure()


def test_failure_names_exit_code_and_stderr_tail() -> None:
    res = run_process(["sh", "-c", "echo first >&2; echo last words >&2; exit 7"], timeout=10)
    assert res.returncode == 7
    assert res.describe_failure() == "sh exited with code 7; stderr: first | last words"
    with pytest.raises(HoneError, match="exited with code 7"):
        run_process(["sh", "-c", "exit 7"], timeout=10, check=True)


def test_stdin_reaches_the_command_as_data_not_shell_text() -> None:
    payload = "'; rm -rf / ; echo '$(whoami)"
    res = run_process(["cat"], timeout=10, stdin=payload)
    assert res.stdout == payload


def test_missing_command_is_a_user_error() -> None:
    with pytest.raises(HoneError, match="command not found: no-such-cmd-hone"):
        run_process(["no-such-cmd-hone"], timeout=5)


def test_signal_death_is_reported() -> None:
    res = run_process(["sh", "-c", "kill -SEGV $$"], timeout=10)
    assert res.signal == 11
    assert "SIGSEGV" in res.describe_failure()
