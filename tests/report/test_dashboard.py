"""``hone dashboard`` over a PostgreSQL study, looked at in headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import optuna
import pytest

from hone.tune.storage import driver_url
from tests.conftest import HONE_BIN
from tests.net import free_port

pytestmark = pytest.mark.integration

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
                  "--virtual-time-budget=5000"]


def _fill(url: str) -> None:
    """A small study shaped like a worker's: raw repeats, machine, baseline, verdict."""
    study = optuna.create_study(storage=driver_url(url), study_name="dash-study")
    study.set_user_attr("hone_baseline", {"means": {"score": 50.0}, "cv": {"score": 0.02},
                                          "fingerprint": {"hostname": "node-a"}})
    study.set_user_attr("hone_result", {"verdict": "faster", "improvement_pct": -12.5, "ci_pct": [-15.0, -10.0],
                                        "p_value": 0.01, "recommended": {"x": 7}})
    for _ in range(4):
        trial = study.ask()
        x = trial.suggest_int("x", 0, 20)
        trial.set_user_attr("runs", [{"metrics": {"score": (x - 7) ** 2 + 1.0 + r}, "wall_s": 0.3, "cpu_s": 0.02,
                                      "error": None} for r in range(3)])
        trial.set_user_attr("machine_id", "feedc0ffee01")
        trial.set_user_attr("host", "node-a")
        study.tell(trial, (x - 7) ** 2 + 1)


def _chromium(tmp: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{time.monotonic_ns()}"
    return subprocess.run(["chromium", *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args, url],
                          capture_output=True, text=True, timeout=90)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian chromium not installed (make setup)")
def test_dashboard_shows_the_trials_and_notes(pg, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = pg.createdb("fleet_dash")
    _fill(url)
    port = free_port()
    server = subprocess.Popen([HONE_BIN, "dashboard", "--storage", url, "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                              env={**os.environ, "COLUMNS": "200"})
    try:
        deadline = time.monotonic() + 60
        studies = None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/studies", timeout=5) as resp:
                    studies = json.load(resp)
                break
            except OSError:
                assert server.poll() is None, server.communicate()[1]
                time.sleep(0.5)
        assert studies is not None, "dashboard did not answer"
        study_id = next(s["study_id"] for s in studies["study_summaries"] if s["study_name"] == "dash-study")
        page = f"http://127.0.0.1:{port}/dashboard/studies/{study_id}/trials"

        dom = _chromium(tmp_path, page, "--dump-dom").stdout
        for n in range(4):
            assert f"Trial {n}" in dom
        assert "hone trial 0" in dom and "feedc0ffee01" in dom  # hone's note: machine + raw repeats
        assert "repeat" in dom

        note_page = f"http://127.0.0.1:{port}/dashboard/studies/{study_id}/note"
        study_dom = _chromium(tmp_path, note_page, "--dump-dom").stdout
        assert "verdict: better" in study_dom and "baseline" in study_dom  # a score: better, not faster

        shot = tmp_path / "dashboard.png"
        res = _chromium(tmp_path, page, "--window-size=1400,1000", f"--screenshot={shot}")
        assert shot.exists() and shot.stat().st_size > 20_000, res.stderr[-500:]
    finally:
        os.killpg(server.pid, signal.SIGINT)
        try:
            _, err = server.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            _, err = server.communicate(timeout=5)
    assert "s3cret" not in err  # the password never reaches output
    assert "***" in err
