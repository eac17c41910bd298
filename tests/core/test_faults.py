"""Fault injection: `kill -9` of `hone tune` at every crash point (before the first write,
between two writes of one configuration, during a restart, during the confirmation,
during the final restore), then `hone rollback`: every resource is back byte for byte.

Every knob kind that changes the machine takes part: three `file` knobs on one config
(a key present, one commented out, one absent) with a restart command, a `script` knob,
and as root a sysctl and a block device's read-ahead. `hone adapt readahead` is killed at its
own points on a private loop device.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from hone.core.faults import POINTS
from tests.conftest import HONE_BIN, LoopFs, block_readahead, is_root
from tests.readahead import SWITCH_S, readahead_is, start_controller, start_reader, stop, wait_for

pytestmark = pytest.mark.integration

CONF = "# app\na = 1\n#b = 7\nd = 1\nd = 2\ne = 'x y'\n"
SYSCTL = Path("/proc/sys/vm/dirty_writeback_centisecs")




@dataclass
class Machine:
    spec: Path
    conf: Path
    script_file: Path
    restart_log: Path
    env: dict[str, str]
    readahead: Path | None

    def snapshot(self) -> dict[str, object]:
        out: dict[str, object] = {
            "conf": self.conf.read_bytes(),
            "script": self.script_file.read_text(),
            "strays": sorted(p.name for p in self.conf.parent.glob(".hone-tmp-*")),
        }
        if is_root():
            out["sysctl"] = SYSCTL.read_text().strip()
            if self.readahead is not None:
                out["readahead"] = self.readahead.read_text().strip()
        return out

    def hone(self, *args: str, crash: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        env = dict(self.env)
        if crash:
            env["HONE_CRASH_AT"] = crash
        return subprocess.run([HONE_BIN, *args], env=env, capture_output=True, text=True, timeout=timeout)


def _machine(tmp_path: Path, state_dir: Path, restart_extra: str = "") -> Machine:
    conf = tmp_path / "app.conf"
    conf.write_text(CONF)
    script_file = tmp_path / "level"
    script_file.write_text("low")
    log = tmp_path / "restarts.log"
    (tmp_path / "bench.py").write_text(
        "import re, sys\nt = open(sys.argv[1]).read()\n"
        "n = sum(int(x) for x in re.findall(r'^[abc] = (\\d+)', t, re.M))\n"
        "print('score:', 10 + n + (5 if open(sys.argv[2]).read() == 'high' else 0))\n")
    restart = json.dumps(["sh", "-c", 'echo restart >> "$0"' + restart_extra, str(log)])
    knobs = [
        f"{{name: a, kind: file, path: {conf}, key: a, values: [1, 2, 3], restart: {restart}}}",
        f"{{name: b, kind: file, path: {conf}, key: b, values: [1, 2, 3], restart: {restart}}}",
        f"{{name: c, kind: file, path: {conf}, key: c, values: [1, 2, 3], restart: {restart}}}",
        f"{{name: level, kind: script, get: [cat, {script_file}],"
        f" set: [sh, -c, 'printf %s \"$1\" > \"$0\"', {script_file}, $value], values: [low, high]}}",
    ]
    readahead = block_readahead() if is_root() else None
    if is_root():
        knobs.append("{name: vm.dirty_writeback_centisecs, kind: sysctl, values: [310, 420, 530]}")
        if readahead is not None:
            knobs.append(f"{{name: ra, kind: sysfs, path: {readahead}, values: [96, 160, 224]}}")
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""\
        name: faults
        benchmark: {{command: [python3, bench.py, {conf}, {script_file}], timeout: 60}}
        metrics: [{{name: score, extract: {{regex: 'score: ([0-9]+)'}}, goal: maximize}}]
        knobs:
        """) + "".join(f"  - {k}\n" for k in knobs))
    env = {**os.environ, "HONE_STATE_DIR": str(state_dir), "COLUMNS": "200"}
    return Machine(spec, conf, script_file, log, env, readahead)


def _tune_args(m: Machine, seed: int = 2) -> list[str]:
    return ["tune", str(m.spec), "--sampler", "random", "--trials", "3", "--seed", str(seed), "--repeats", "1",
            "--confirm", "6", "--top-k", "1"]


def _run_args(m: Machine) -> list[str]:
    sets = ["a=3", "b=2", "c=1", "level=high"]
    if is_root():
        sets.append("vm.dirty_writeback_centisecs=420")
        if m.readahead is not None:
            sets.append("ra=160")
    return ["run", str(m.spec), *(x for s in sets for x in ("--set", s))]


def _apply_args(m: Machine) -> list[str]:
    return ["apply", *_run_args(m)[1:]]


# (verb, crash point, pass): each point at its first pass and at a later one, with a verb
# that surely passes it that often (a tune's final restore may have nothing left to do).
CASES = [
    ("tune", "journal.original.before", 1), ("tune", "journal.original.after", 1),
    ("tune", "journal.original.after", 2), ("tune", "configure.written", 1), ("tune", "configure.written", 3),
    ("tune", "configure.restart", 1), ("tune", "configure.restart", 3), ("tune", "schedule.round", 1),
    ("tune", "schedule.round", 7), ("run", "configure.written", 2), ("run", "restore.written", 1),
    ("run", "restore.written", 2), ("run", "restore.restart", 1), ("apply", "journal.apply.written", 1),
    ("apply", "journal.apply.written", 3), ("apply", "journal.original.after", 2),
]
ARGS = {"tune": _tune_args, "run": _run_args, "apply": _apply_args}


# `hone adapt readahead`'s own points, on a loop device (test_kill_9_of_the_readahead_controller…)
ADAPT_CASES = ["adapt.switched", "adapt.exiting"]


def test_every_crash_point_is_exercised() -> None:
    assert {p for _, p, _ in CASES} | set(ADAPT_CASES) == set(POINTS)


@pytest.mark.parametrize(("verb", "point", "count"), CASES, ids=[f"{v}-{p}:{n}" for v, p, n in CASES])
def test_kill_9_at_a_crash_point_then_rollback_restores_everything(
        tmp_path: Path, state_dir: Path, verb: str, point: str, count: int) -> None:
    m = _machine(tmp_path, state_dir)
    before = m.snapshot()
    res = m.hone(*ARGS[verb](m), crash=f"{point}:{count}")
    assert res.returncode == -9, f"not killed at {point}:{count}: {res.stderr}"
    back = m.hone("rollback")
    assert back.returncode == 0, back.stdout + back.stderr
    assert m.snapshot() == before
    status = m.hone("status")
    assert status.stdout.strip() == "nothing changed by hone on this machine", status.stdout
    again = m.hone("rollback")
    assert again.returncode == 0 and "nothing to restore" in again.stdout


def test_kill_9_during_a_restart_then_rollback_restores_and_restarts(tmp_path: Path, state_dir: Path) -> None:
    flag = tmp_path / "kill-hone"
    # The restart command itself kills hone (its parent) the first time it runs after the flag appears.
    m = _machine(tmp_path, state_dir, f'; if [ -e {flag} ]; then rm {flag}; kill -9 $PPID; sleep 1; fi')
    before = m.snapshot()
    flag.touch()
    res = m.hone(*_tune_args(m, seed=3))
    assert res.returncode == -9, res.stderr
    assert m.conf.read_bytes() != before["conf"]  # killed with the trial's configuration written
    back = m.hone("rollback")
    assert back.returncode == 0, back.stdout + back.stderr
    assert m.snapshot() == before
    # the restart owed to the restored file ran: one line more than before the rollback
    assert m.restart_log.read_text().count("restart") >= 2


def test_kill_9_at_a_random_moment_then_rollback_restores_everything(tmp_path: Path, state_dir: Path) -> None:
    m = _machine(tmp_path, state_dir)
    before = m.snapshot()
    for delay in (0.9, 1.6, 2.4):
        proc = subprocess.Popen([HONE_BIN, *_tune_args(m)], env=m.env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.kill()
        proc.wait(timeout=30)
        back = m.hone("rollback")
        assert back.returncode == 0, back.stdout + back.stderr
        assert m.snapshot() == before, f"after a kill at {delay} s"


@pytest.mark.parametrize("point", ADAPT_CASES)
def test_kill_9_of_the_readahead_controller_then_rollback_restores_the_device(
        loop_fs: LoopFs, state_dir: Path, hone, point: str) -> None:  # type: ignore[no-untyped-def]
    original = loop_fs.readahead.read_text().strip()
    ctl = start_controller(loop_fs, state_dir, env={"HONE_CRASH_AT": point})
    reader = start_reader("sequential", loop_fs.data)
    try:
        assert wait_for(readahead_is(loop_fs, "512"), SWITCH_S), "no switch"
        if point == "adapt.exiting":
            ctl.send_signal(signal.SIGTERM)
        ctl.wait(timeout=30)
    finally:
        stop(reader)
        if ctl.poll() is None:
            ctl.kill()
        ctl.communicate(timeout=30)
    assert ctl.returncode == -9, f"not killed at {point}"
    assert loop_fs.readahead.read_text().strip() == "512"  # the switch outlived its controller
    back = hone("rollback")
    assert back.code == 0, back.out + back.err
    assert loop_fs.readahead.read_text().strip() == original
    left = subprocess.run(["pgrep", "-f", f"readseq.bt .* {loop_fs.dev_t} "], capture_output=True, text=True)
    assert left.stdout == "", "the controller's bpftrace outlived the rollback"
    assert hone("status").out.strip() == "nothing changed by hone on this machine"
