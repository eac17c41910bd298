"""No process of hone's outlives it: SIGTERM mid-benchmark, leftovers of a run, and what a
hone killed with -9 left running (stopped by ``hone rollback``). Real console script, real
processes, found by a mark in their environment."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import HONE_BIN
from tests.procs import MARK_ENV, marked, new_mark, wait_marked


@pytest.fixture
def mark() -> Iterator[str]:
    value = new_mark()
    yield value
    for pid, _ in marked(value):  # whatever the test left: never let it outlive the test
        os.kill(pid, signal.SIGKILL)


def _env(state_dir: Path, mark: str) -> dict[str, str]:
    return {**os.environ, "HONE_STATE_DIR": str(state_dir), MARK_ENV: mark, "COLUMNS": "200"}


def _sleeper_spec(tmp_path: Path) -> Path:
    (tmp_path / "bench.sh").write_text("echo started\nsleep 30\necho score=1\n")
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent("""\
        name: sleeper
        benchmark: {command: [sh, bench.sh], timeout: 60, warmup: 0, repeats: 1}
        metrics:
          - {name: score, extract: {regex: 'score=([0-9.]+)'}, goal: maximize}
        knobs:
          - {name: n, kind: param, values: [1, 2], default: 1}
        tune: {trials: 2, seed: 1, confirm: 0}
        """))
    return spec


@pytest.mark.parametrize("verb", ["run", "tune"])
def test_sigterm_during_a_benchmark_leaves_no_process(verb: str, tmp_path: Path, state_dir: Path, mark: str) -> None:
    spec = _sleeper_spec(tmp_path)
    proc = subprocess.Popen([HONE_BIN, verb, str(spec)], env=_env(state_dir, mark), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        running = wait_marked(mark, "sleep", timeout=60)
        assert {c for _, c in running} >= {"sh", "sleep"}  # sh bench.sh and its sleep 30
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert marked(mark) == []


def test_a_run_kills_and_reports_what_the_benchmark_left(hone, tmp_path: Path, mark: str) -> None:  # type: ignore[no-untyped-def]
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent("""\
        name: leaver
        benchmark: {command: "sleep 60 & nohup sleep 61 >/dev/null 2>&1 & sleep 0.2; echo score=1", shell: true,
                    warmup: 0, repeats: 1}
        metrics:
          - {name: score, extract: {regex: 'score=([0-9.]+)'}, goal: maximize}
        """))
    res = hone("run", spec, env={MARK_ENV: mark})
    assert res.code == 0, res.err
    assert "warning: benchmark left 2 processes running (sleep " in res.err and "): killed" in res.err
    assert marked(mark) == []


def test_rollback_after_kill_9_during_a_slow_set_stops_it_and_the_value_stays_restored(
        hone, tmp_path: Path, state_dir: Path, mark: str) -> None:  # type: ignore[no-untyped-def]
    value = tmp_path / "value"
    value.write_text("a")
    # Slow only on the way to "b": the restore to "a" is over long before the orphan would write.
    set_text = f'case "$1" in b) sleep 3;; esac; printf %s "$1" >{shlex.quote(str(value))}'
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        name: slow-set
        benchmark: {{command: [echo, score=1]}}
        knobs:
          - name: level
            kind: script
            shell: true
            get: {shlex.quote(f"cat {shlex.quote(str(value))}")}
            set: {shlex.quote(set_text)}
            values: [a, b]
        """))
    proc = subprocess.Popen([HONE_BIN, "apply", str(spec), "--set", "level=b"], env=_env(state_dir, mark),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_marked(mark, "sleep", timeout=60)  # the set command is running
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert any(c == "sleep" for _, c in marked(mark))  # the set outlived its hone
    res = hone("rollback")
    assert res.code == 0, res.err
    assert "which is no longer running" in res.out and f"started by hone {proc.pid}" in res.out
    assert value.read_text() == "a"
    assert marked(mark) == []
    time.sleep(3.5)  # when the orphaned set would have written "b"
    assert value.read_text() == "a"


def _restart_spec(tmp_path: Path, restart: str) -> tuple[Path, Path]:
    """A spec of one file knob whose change runs ``restart`` (shell text); (spec, the file)."""
    conf = tmp_path / "app.conf"
    conf.write_text("threads = 2\n")
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        name: service
        benchmark: {{command: [echo, score=1]}}
        knobs:
          - name: threads
            kind: file
            path: {conf}
            key: threads
            range: [1, 16]
            restart: [sh, -c, {json.dumps(restart)}]
        """))
    return spec, conf


def test_a_service_a_knob_restart_command_starts_outlives_hone(hone, tmp_path: Path, mark: str) -> None:  # type: ignore[no-untyped-def]
    spec, conf = _restart_spec(tmp_path, "setsid -f sleep 300 >/dev/null 2>&1; sleep 301 & echo restarted")
    res = hone("apply", spec, "--set", "threads=4", env={MARK_ENV: mark})
    assert res.code == 0, res.err
    # what a restart command leaves is the service: a daemon in a session of its own, and a
    # start script's background job (`mariadbd &`) too, holding the command's output pipe
    first = _cmdlines(mark)
    assert sorted(first.values()) == ["sleep 300", "sleep 301"]
    assert "left" not in res.err
    # rollback stops what dead hones left, but not a service: its restart starts a second one
    assert hone("rollback", env={MARK_ENV: mark}).code == 0
    assert conf.read_text() == "threads = 2\n"
    now = _cmdlines(mark)
    assert first.items() <= now.items() and sorted(now.values()) == ["sleep 300", "sleep 300", "sleep 301", "sleep 301"]


def test_what_a_failed_restart_command_left_running_is_stopped(hone, tmp_path: Path, mark: str) -> None:  # type: ignore[no-untyped-def]
    spec, _ = _restart_spec(tmp_path, "true\nsleep 302 >/dev/null 2>&1 & exit 1")  # two lines, as A-Tune's
    res = hone("apply", spec, "--set", "threads=4", env={MARK_ENV: mark})
    assert res.code != 0
    # named by what it runs when swept: `sh` still, if the fork had not yet exec'd `sleep`
    assert re.search(r"restart left 1 process running \((sleep|sh) \d+\): killed", res.err), res.err
    assert "restart sh -c true; sleep 302 >/dev/null 2>&1 & exit 1 failed: sh exited with code 1" in res.err
    assert _cmdlines(mark) == {}
    hone("rollback", env={MARK_ENV: mark})


def _cmdlines(mark: str) -> dict[int, str]:
    out = {}
    for pid, _ in marked(mark):
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            out[pid] = fh.read().rstrip(b"\0").replace(b"\0", b" ").decode()
    return out
