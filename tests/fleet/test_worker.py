"""Workers on one real PostgreSQL study: exact budget, kill -9 recovery, clear errors."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from hone.tune.storage import driver_url
from tests.conftest import HONE_BIN

pytestmark = pytest.mark.integration

SPEC = """\
name: fleet-test
benchmark:
  command: ["python3", "-c", "import sys, time; x = int(sys.argv[1]); time.sleep(float(sys.argv[2])); \
print('score:', (x - 7) ** 2 + 1)", "{x}", "{sleep}"]
  repeats: 1
  timeout: 60
metrics:
  - {name: score, extract: {regex: 'score: ([0-9.]+)'}, goal: minimize}
knobs:
  - {name: x, kind: param, type: int, range: [0, 20], default: 15}
  - {name: sleep, kind: param, values: ["%(sleep)s"], default: "%(sleep)s"}
  - name: level
    kind: script
    shell: true
    get: 'cat "$KNOBFILE"'
    set: 'printf %%s "$value" > "$KNOBFILE"'
    values: [1, 2, 3]
tune: {trials: 5, seed: 3}
"""


def _machine(tmp: Path, name: str) -> dict[str, str]:
    """A pretend machine: its own state and machine dirs (journal, lock) and its own knob
    file (value 0)."""
    home = tmp / name
    home.mkdir()
    (home / "knob").write_text("0")
    return {**os.environ, "HONE_STATE_DIR": str(home / "state"), "HONE_MACHINE_DIR": str(home / "machine"),
            "KNOBFILE": str(home / "knob"), "COLUMNS": "200"}


def _spec(tmp: Path, sleep: float) -> Path:
    path = tmp / "hone.yaml"
    path.write_text(SPEC % {"sleep": sleep})
    return path


def _worker(spec: Path, url: str, study: str, env: dict[str, str], *extra: str,
            hostname: str | None = None) -> subprocess.Popen[str]:
    argv = [HONE_BIN, "worker", str(spec), "--storage", url, "--study", study, *extra]
    if hostname:
        # Its own UTS namespace: another hostname, so only the heartbeat can tell it died.
        argv = ["unshare", "--uts", "--", "sh", "-c", 'hostname "$0" && exec "$@"', hostname, *argv]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _study(url: str, name: str) -> optuna.Study:
    return optuna.load_study(study_name=name, storage=driver_url(url))


def _counted(study: optuna.Study) -> list[optuna.trial.FrozenTrial]:
    return [t for t in study.get_trials() if t.state in (TrialState.COMPLETE, TrialState.FAIL)
            and not t.user_attrs.get("hone_interrupted")]


def test_three_workers_finish_exactly_the_budget(pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = pg.createdb("fleet_three")
    spec = _spec(tmp_path, 0.2)
    envs = [_machine(tmp_path, f"m{i}") for i in range(3)]
    procs = [_worker(spec, url, "three", env, "--trials", "6") for env in envs]
    outs = [p.communicate(timeout=150) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    study = _study(url, "three")
    trials = study.get_trials()
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    assert len(complete) == 6
    assert len(_counted(study)) == 6
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    assert all(t.user_attrs.get("machine_id") and t.user_attrs.get("fingerprint") for t in complete)
    assert all("runs" in t.user_attrs for t in complete)
    assert "hone_baseline" in study.user_attrs  # measured once for the study
    assert sum("worker done" in out for out, _ in outs) == 3
    for env in envs:  # every machine's knob is back
        assert Path(env["KNOBFILE"]).read_text() == "0"

    # Confirmation runs once, on one machine, after the budget: `hone tune --resume`.
    res = subprocess.run([HONE_BIN, "tune", str(spec), "--storage", url, "--study", "three", "--resume",
                          "--trials", "6", "--confirm", "2", "--top-k", "1", "--json", "-",
                          "--html", str(tmp_path / "r.html")],
                         env=envs[0], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    assert len(_study(url, "three").get_trials(states=(TrialState.COMPLETE,))) == 6  # no extra trials
    assert "hone_result" in _study(url, "three").user_attrs
    assert Path(envs[0]["KNOBFILE"]).read_text() == "0"



def test_workers_stop_once_every_configuration_is_measured(pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # 2 × 2 configurations, one of them the baseline (x=7, level 1): 3 left for a budget of 10
    url = pg.createdb("fleet_small")
    spec = tmp_path / "hone.yaml"
    spec.write_text((SPEC % {"sleep": 0.2}).replace("type: int, range: [0, 20], default: 15",
                                                    "values: [0, 7], default: 7")
                    .replace("values: [1, 2, 3]", "values: [1, 2]"))
    envs = [_machine(tmp_path, f"m{i}") for i in range(2)]
    for env in envs:
        Path(env["KNOBFILE"]).write_text("1")
    procs = [_worker(spec, url, "small", env, "--trials", "10") for env in envs]
    outs = [p.communicate(timeout=150) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    study = _study(url, "small")
    point = study.user_attrs["hone_baseline_point"]["params"]  # Optuna's encoding: indices into values
    assert (point["x"], point["level"]) == (1, 0)
    seen = {(t.params["x"], t.params["level"]) for t in _counted(study)}
    assert {(1, 0), *seen} == {(x, lv) for x in (0, 1) for lv in (0, 1)}
    assert 3 <= len(_counted(study)) < 10  # the budget was not spent re-measuring
    assert not [t for t in study.get_trials() if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    assert any("every one of the 4 configurations is measured" in out for out, _ in outs)
    for env in envs:
        assert Path(env["KNOBFILE"]).read_text() == "1"

def test_kill_9_mid_trial_loses_nothing_and_rollback_restores(pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = pg.createdb("fleet_kill")
    spec = _spec(tmp_path, 1.5)
    victim_env, other_env = _machine(tmp_path, "victim"), _machine(tmp_path, "other")
    hb = ("--heartbeat", "1", "--grace", "3")
    victim = _worker(spec, url, "kill", victim_env, "--trials", "3", *hb, hostname="fleet-victim")
    killed_number = None
    deadline = time.monotonic() + 60
    while killed_number is None and time.monotonic() < deadline:
        time.sleep(0.3)
        try:
            running = _study(url, "kill").get_trials(states=(TrialState.RUNNING,))
        except KeyError:  # not created yet
            continue
        mine = [t for t in running if t.user_attrs.get("host") == "fleet-victim" and t.params]
        if mine and Path(victim_env["KNOBFILE"]).read_text() != "0":
            killed_number = mine[0].number
            killed_params = mine[0].params
            os.kill(victim.pid, signal.SIGKILL)
    victim.communicate(timeout=10)
    assert killed_number is not None, "the victim never got to a trial"
    assert Path(victim_env["KNOBFILE"]).read_text() != "0"  # kill -9: nothing restored it

    other = _worker(spec, url, "kill", other_env, *hb)
    _out, err = other.communicate(timeout=120)
    assert other.returncode == 0, err

    study = _study(url, "kill")
    trials = study.get_trials()
    assert len(_counted(study)) == 3
    assert len([t for t in trials if t.state == TrialState.COMPLETE]) == 3
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    dead = trials[killed_number]
    assert dead.state == TrialState.FAIL and dead.user_attrs["hone_interrupted"]
    assert "stopped heartbeating" in dead.user_attrs["fail_reason"]
    retried = [t for t in trials if t.user_attrs.get("requeued_from") == killed_number]
    assert len(retried) == 1 and retried[0].state == TrialState.COMPLETE and retried[0].params == killed_params

    # The victim's machine: its journal still holds the change; rollback puts it back.
    status = subprocess.run([HONE_BIN, "status"], env=victim_env, capture_output=True, text=True, timeout=60)
    assert "script:level" in status.stdout
    rb = subprocess.run([HONE_BIN, "rollback"], env=victim_env, capture_output=True, text=True, timeout=60)
    assert rb.returncode == 0, rb.stderr
    assert Path(victim_env["KNOBFILE"]).read_text() == "0"


def test_stalled_worker_is_replaced_and_its_late_result_dropped(pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = pg.createdb("fleet_stall")
    spec = _spec(tmp_path, 1.5)
    slow_env, other_env = _machine(tmp_path, "slow"), _machine(tmp_path, "other")
    hb = ("--heartbeat", "1", "--grace", "3")
    slow = _worker(spec, url, "stall", slow_env, "--trials", "2", *hb)
    stalled = None
    deadline = time.monotonic() + 60
    while stalled is None and time.monotonic() < deadline:
        time.sleep(0.3)
        try:
            running = _study(url, "stall").get_trials(states=(TrialState.RUNNING,))
        except KeyError:
            continue
        mine = [t for t in running if t.user_attrs.get("pid") == slow.pid and "config" in t.user_attrs]
        if mine:
            stalled = mine[0].number
            os.kill(slow.pid, signal.SIGSTOP)  # a paused VM, a partition: no heartbeats
    assert stalled is not None
    try:
        other = _worker(spec, url, "stall", other_env, *hb)
        _out, err = other.communicate(timeout=120)
        assert other.returncode == 0, err
    finally:
        os.kill(slow.pid, signal.SIGCONT)
    _out, err = slow.communicate(timeout=60)
    assert slow.returncode == 0, err  # it wakes up, finds its trial failed, drops its result

    trials = _study(url, "stall").get_trials()
    assert len([t for t in trials if t.state == TrialState.COMPLETE]) == 2
    assert trials[stalled].state == TrialState.FAIL and trials[stalled].user_attrs["hone_interrupted"]
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    assert Path(slow_env["KNOBFILE"]).read_text() == "0"  # it restored its own knobs on the way out


def test_wrong_password_is_one_clear_line(pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path, 0)
    env = _machine(tmp_path, "m")
    bad = pg.url("postgres", password="Wr0ng-Secret")
    res = subprocess.run([HONE_BIN, "worker", str(spec), "--storage", bad, "--study", "s"], env=env,
                         capture_output=True, text=True, timeout=60)
    assert res.returncode == 2
    assert "Wr0ng-Secret" not in res.stdout + res.stderr
    lines = res.stderr.splitlines()
    assert lines[0].startswith("hone: error: storage 127.0.0.1:")
    assert "password authentication failed for user 'hone'" in lines[0]
    assert len(lines) == 2 and lines[1].startswith("hint: ")  # the error line and its hint, nothing else
    assert "Traceback" not in res.stderr
