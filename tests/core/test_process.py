"""run_process: argv only, timeouts that kill the whole group, CPU times from wait4."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from hone.core import process
from hone.core.errors import HoneError
from hone.core.process import run_process, shutdown, start_process, stop_orphans
from tests.procs import MARK_ENV, marked, new_mark, wait_marked


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


@pytest.fixture
def mark() -> Iterator[str]:
    """A unique mark for this test's processes; whatever still carries it is killed afterwards."""
    value = new_mark()
    yield value
    for pid, _ in marked(value):
        os.kill(pid, signal.SIGKILL)


def _env(mark: str, **extra: str) -> dict[str, str]:
    return {**os.environ, MARK_ENV: mark, **extra}


def test_leftovers_of_background_nohup_and_setsid_children_are_killed_and_reported(
        mark: str, capsys: pytest.CaptureFixture[str]) -> None:
    script = ("sleep 300 & nohup sleep 301 >/dev/null 2>&1 & setsid sleep 302 & "
              "sleep 0.3; echo done")  # the pause lets each background child exec its sleep
    res = run_process(["sh", "-c", script], timeout=20, env=_env(mark), label="benchmark")
    assert res.ok and res.stdout == "done\n"
    assert res.wall_s < 5
    assert marked(mark) == []  # all three gone, the setsid one (another session) too
    assert len(res.leftovers) == 3 and all(item.startswith("sleep ") for item in res.leftovers)
    err = capsys.readouterr().err
    assert "benchmark left 3 processes running (sleep " in err and "): killed" in err


def test_a_command_that_leaves_nothing_reports_nothing(mark: str, capsys: pytest.CaptureFixture[str]) -> None:
    res = run_process(["sh", "-c", "sleep 0.1 & wait"], timeout=20, env=_env(mark))
    assert res.ok and res.leftovers == []
    assert "left" not in capsys.readouterr().err


def test_keyboard_interrupt_during_the_wait_kills_the_group_and_the_detached(mark: str) -> None:
    def interrupt_when_running() -> None:
        wait_marked(mark, "sleep", count=2)
        os.kill(os.getpid(), signal.SIGUSR1)

    def raise_interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt  # what hone's CLI does with SIGTERM

    previous = signal.signal(signal.SIGUSR1, raise_interrupt)
    try:
        threading.Thread(target=interrupt_when_running, daemon=True).start()
        with pytest.raises(KeyboardInterrupt):
            run_process(["sh", "-c", "setsid sleep 300 & sleep 300"], timeout=60, env=_env(mark))
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert marked(mark) == []


def test_a_sparing_call_leaves_the_daemon_it_detached_but_kills_what_stayed(mark: str) -> None:
    script = "setsid sleep 300 >/dev/null 2>&1 & sleep 301 & sleep 0.3"  # a daemon lets go of the output pipes
    res = run_process(["sh", "-c", script], timeout=20, env=_env(mark), spare_daemons=True)
    assert res.ok
    assert [item.split()[0] for item in res.leftovers] == ["sleep"]
    left = marked(mark)
    assert len(left) == 1  # the daemon (setsid: a session of its own) is a service it started
    with open(f"/proc/{left[0][0]}/cmdline", "rb") as fh:
        assert fh.read() == b"sleep\x00300\x00"
    assert shutdown() == []  # nor does hone's exit stop it
    assert len(marked(mark)) == 1


def test_shutdown_stops_a_started_process_still_running(mark: str) -> None:
    proc = start_process(["sh", "-c", "sleep 300 & sleep 300"], env=_env(mark))
    wait_marked(mark, "sleep", count=2)
    stopped = shutdown()
    assert proc.wait(timeout=10) != 0
    assert marked(mark) == []
    assert sum(item.startswith("sleep ") for item in stopped) == 2


def _tagged_sleep(mark: str, owner: str) -> subprocess.Popen[bytes]:
    """A sleep tagged as started by ``owner`` (PID:STARTTIME:CALL), as if a hone had started it."""
    return subprocess.Popen(["sleep", "300"], env=_env(mark, **{process.OWNER_ENV: owner}),
                            start_new_session=True)


def test_stop_orphans_stops_what_a_dead_or_reused_pid_owner_left(mark: str) -> None:
    me = process._owner()
    pid, start = me.split(":")
    gone = _tagged_sleep(mark, f"{2**22 + 7}:{start}:1")  # above pid_max: that hone is gone
    reused = _tagged_sleep(mark, f"{pid}:{int(start) + 1}:1")  # our pid, another start: a reused pid
    ours = _tagged_sleep(mark, f"{me}:1")  # started by a running hone: left alone
    wait_marked(mark, "sleep", count=3)
    stopped = stop_orphans()
    assert gone.wait(timeout=10) and reused.wait(timeout=10)
    assert f"sleep {gone.pid} (started by hone {2**22 + 7}, which is no longer running)" in stopped
    assert any(s.startswith(f"sleep {reused.pid} ") for s in stopped)
    assert ours.poll() is None
    ours.kill()
    ours.wait()


def test_stop_orphans_leaves_a_service_a_dead_hones_knob_command_detached(mark: str) -> None:
    dead = f"{2**22 + 7}:1:3:spare"
    service = subprocess.Popen(["setsid", "-f", "sleep", "300"], env=_env(mark, **{process.OWNER_ENV: dead}))
    service.wait(timeout=10)  # setsid -f forked: the sleep leads its own session
    attached = subprocess.Popen(["sleep", "301"], env=_env(mark, **{process.OWNER_ENV: dead}))
    wait_marked(mark, "sleep", count=2)
    stopped = stop_orphans()
    assert attached.wait(timeout=10)
    assert any(s.startswith(f"sleep {attached.pid} ") for s in stopped)
    assert [c for _, c in marked(mark)] == ["sleep"]
