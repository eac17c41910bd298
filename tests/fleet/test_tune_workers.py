"""``hone tune --workers K`` on PostgreSQL: K local workers, one baseline, one confirmation."""

from __future__ import annotations

import json
import re
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from hone.tune.storage import driver_url
from tests.fleet.test_worker import SPEC
from tests.pg import PG_PASSWORD

pytestmark = pytest.mark.integration

PARAM_SPEC = """\
name: fleet-tune
benchmark:
  command: ["python3", "-c", "import sys, time; x = int(sys.argv[1]); time.sleep(0.3); \
print('score:', (x - 7) ** 2 + 1)", "{x}"]
  repeats: 1
metrics:
  - {name: score, extract: {regex: 'score: ([0-9.]+)'}, goal: minimize}
knobs:
  - {name: x, kind: param, type: int, range: [0, 20], default: 15}
"""


def test_tune_with_three_local_workers(pg, hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    url = pg.createdb("fleet_tune")
    spec = tmp_path / "hone.yaml"
    spec.write_text(PARAM_SPEC)
    out = tmp_path / "result.json"
    res = hone("tune", spec, "--storage", url, "--study", "tw", "--workers", "3", "--trials", "4",
               "--confirm", "2", "--top-k", "1", "--seed", "1", "--json", out, "--html", tmp_path / "r.html")
    assert res.code == 0, res.err
    assert PG_PASSWORD not in res.out + res.err + out.read_text()
    doc = json.loads(out.read_text())
    assert doc["trials"] == 4 and doc["storage"].startswith("postgresql") and "***" in doc["storage"]
    study = optuna.load_study(study_name="tw", storage=driver_url(url))
    complete = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(complete) == 4
    assert len({t.user_attrs["pid"] for t in complete}) >= 2  # the trials really were shared
    assert "hone_result" in study.user_attrs  # confirmed once, by the tune process
    assert all(t.user_attrs["hone_runs_started"] == 1 for t in complete)  # repeats 1, no warm-up
    assert doc["budget"]["runs_spent"]["search"] == 4  # the workers' runs are the session's
    assert "search 4," in res.out
    assert re.findall(r"trial (\d)/4 ", res.out) == ["1", "2", "3", "4"]  # each trial counted once, in order


def test_workers_refuse_system_knobs(pg, hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = tmp_path / "hone.yaml"
    spec.write_text(SPEC % {"sleep": 0})
    (tmp_path / "knob").write_text("0")
    res = hone("tune", spec, "--storage", pg.url("postgres"), "--workers", "2",
               env={"KNOBFILE": str(tmp_path / "knob")})
    assert res.code == 2
    assert "system knobs (level)" in res.err and "hone worker" in res.err
