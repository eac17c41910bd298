"""Tiny, fast workloads for tune tests: a file knob, a param knob, a score metric; and three
knobs of known effects (large, small, none) for the ablation and the time budget."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

BENCH = textwrap.dedent(
    """
    import os, pathlib, sys, time
    conf, x, mode = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    level = int(conf.read_text().split("=")[1])
    with open(os.environ["HONE_TEST_LOG"], "a") as log:
        log.write(f"{level} {x}\\n")
    if mode == "fail" and x % 3 == 0:
        print("boom", file=sys.stderr)
        sys.exit(1)
    if mode in ("slow", "slow-noisy"):  # HONE_TEST_NAP: another nap, for a test that needs slow runs only for a while
        time.sleep(float(os.environ.get("HONE_TEST_NAP", "0.5")))
    score = 0.0 if mode == "zero" else 100.0 + 10 * x - x * x - 4 * (level - 3) ** 2
    runs = len(pathlib.Path(os.environ["HONE_TEST_LOG"]).read_text().splitlines())
    # ±5% by turns (drift: after 6 exact runs)
    if mode in ("noisy", "slow-noisy", "step") or (mode == "drift" and runs > 6):
        score *= 1.05 if runs % 2 else 0.95
    if mode == "quiet" or (mode == "lucky" and runs <= 2):  # ±0.1% by turns: within 1%, never identical
        score *= 1.001 if runs % 2 else 0.999
    if mode == "lucky" and runs > 2:  # the first 2 runs agreed within 1% by chance: ±5% by turns after
        score *= 1.05 if runs % 2 else 0.95
    if mode == "step" and runs > 3:  # every run after the first 3 (a baseline's) 30% higher
        score *= 1.3
    print(f"score: {score}")
    print(f"x: {x}")
    """
)


def write_workload(tmp: Path, mode: str = "ok", trials: int = 5, extra_tune: str = "", repeats: int = 1,
                   extra_metrics: str = "") -> Path:
    """A spec + bench + conf file in ``tmp``; returns the spec path."""
    (tmp / "bench.py").write_text(BENCH)
    (tmp / "app.conf").write_text("level = 1\n")
    spec = tmp / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""
        name: tiny
        benchmark:
          command: [{sys.executable}, bench.py, app.conf, "{{x}}", {mode}]
          timeout: 20
          repeats: {repeats}
        metrics:
          - {{name: score, extract: {{regex: 'score: ([-0-9.]+)'}}, goal: maximize}}{extra_metrics}
        knobs:
          - {{name: level, kind: file, path: {tmp / 'app.conf'}, key: level, type: int, range: [0, 6]}}
          - {{name: x, kind: param, values: [1, 2, 3, 4, 5, 6, 7, 8], default: 1}}
        tune: {{trials: {trials}, seed: 3, top_k: 1{extra_tune}}}
    """))
    return spec


THREE_KNOBS_BENCH = textwrap.dedent(
    """
    import os, pathlib, sys, time
    conf, big, mode, nap = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    if os.environ.get("HONE_TEST_LOG"):  # one line per run, for tests that count them
        with open(os.environ["HONE_TEST_LOG"], "a") as log:
            log.write(f"{big} {conf.read_text()!r}\\n")
    values = dict(line.replace(" ", "").split("=") for line in conf.read_text().splitlines() if "=" in line)
    small, inert = int(values["small"]), int(values["inert"])
    time.sleep(nap)
    gain = {0: 1.0, 1: 1.2, 2: 1.3}[big]
    if mode == "apart":  # big: a large effect, small: a small real one, inert: none
        gain *= {0: 1.0, 1: 1.02, 2: 1.03}[small]
    elif mode == "either":  # small or inert: the same 5% gain, either one is enough
        gain *= 1.05 if small or inert else 1.0
    steady = os.environ.get("HONE_TEST_STEADY")  # identical runs until the log holds this many, then ±5% by turns
    if steady:
        n = len(pathlib.Path(os.environ["HONE_TEST_LOG"]).read_text().splitlines())
        gain *= 1.0 if n <= int(steady) else 1.05 if n % 2 else 0.95
    print(f"score: {100 * gain}")
    """
)


def write_three_knobs(tmp: Path, mode: str, *, nap: float = 0.0, trials: int = 8, tune: str = "") -> Path:
    """Three knobs whose starting values (0) lie outside the searched values (1, 2), so every
    trial changes all three: ``big`` (param), ``small`` and ``inert`` (keys of app.conf)."""
    (tmp / "bench.py").write_text(THREE_KNOBS_BENCH)
    (tmp / "app.conf").write_text("small = 0\ninert = 0\n")
    spec = tmp / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""
        name: ablate
        benchmark:
          command: [{sys.executable}, bench.py, app.conf, "{{big}}", {mode}, "{nap}"]
          timeout: 20
          repeats: 1
          warmup: 0
        metrics:
          - {{name: score, extract: {{regex: 'score: ([-0-9.]+)'}}, goal: maximize}}
        knobs:
          - {{name: big, kind: param, values: [1, 2], default: 0}}
          - {{name: small, kind: file, path: {tmp / 'app.conf'}, key: small, values: [1, 2]}}
          - {{name: inert, kind: file, path: {tmp / 'app.conf'}, key: inert, values: [1, 2]}}
        tune: {{trials: {trials}, seed: 3, top_k: 1{tune}}}
    """))
    return spec


@pytest.fixture
def workload(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HONE_TEST_LOG", str(tmp_path / "runs.log"))
    return tmp_path


def tune_killed_after(args: list[str], env: Mapping[str, str], log: Path, runs: int) -> None:
    """Start ``hone tune ARGS`` in a session of its own and SIGKILL it (the whole group) once
    ``log`` holds ``runs`` benchmark runs: a crash mid-job, for the ``--resume`` tests."""
    from tests.conftest import HONE_BIN

    proc = subprocess.Popen([HONE_BIN, "tune", *args], env={**os.environ, **env}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and (not log.exists() or len(log.read_text().splitlines()) < runs):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
