"""Search-space encoding, objectives, and a sysctl tune as root (restored afterwards)."""

from __future__ import annotations

import json
import math
import sys
import textwrap
from pathlib import Path

import pytest
from optuna.distributions import CategoricalDistribution, IntDistribution

from hone.spec.models import Metric, ParamKnobSpec
from hone.tune.objective import build_objective
from hone.tune.space import SearchSpace
from tests.conftest import needs_root


def test_numeric_values_stay_ordered_and_log_ranges_stay_log():
    space = SearchSpace([
        ParamKnobSpec(name="page", kind="param", values=[65536, 1024, 4096]),
        ParamKnobSpec(name="mode", kind="param", values=["WAL", "DELETE"]),
        ParamKnobSpec(name="cache", kind="param", type="int", range=[10, 100000], log=True),
        ParamKnobSpec(name="n", kind="param", type="int", range=[0, 100], step=5),
    ])
    d = space.distributions
    assert d["page"] == IntDistribution(0, 2)  # an index into [1024, 4096, 65536], not a category
    assert isinstance(d["mode"], CategoricalDistribution)
    assert d["cache"].log and d["n"].step == 5
    assert space.decode({"page": 0, "mode": "WAL", "cache": 77, "n": 35}) == {
        "page": 1024, "mode": "WAL", "cache": 77, "n": 35}
    assert space.encode({"page": 65536}) == {"page": 2}


def test_weighted_objective_is_percent_change_and_survives_a_zero_baseline():
    ops = Metric(name="ops", extract={"regex": "o: (\\d+)"}, goal="maximize", weight=3)
    lat = Metric(name="lat", extract={"regex": "l: (\\d+)"}, goal="minimize", weight=1, constraint="<= 5")
    obj = build_objective([ops, lat], baseline={"ops": 100.0, "lat": 0.0})
    assert obj.mode == "weighted"
    # ops +10% (×3), lat 0 → 2 is an absolute change of 2 (×1, minimized): (30 − 200)/4
    assert math.isclose(obj.values({"ops": 110.0, "lat": 2.0})[0], (3 * 10 - 1 * 200) / 4)
    assert obj.constraints({"ops": 1, "lat": 7}) == [2.0]
    assert build_objective([ops, lat], pareto=True).directions[1].name == "MINIMIZE"


@needs_root
def test_sysctl_knob_is_back_after_tune(hone, tmp_path, monkeypatch):
    key = Path("/proc/sys/vm/dirty_writeback_centisecs")
    before = key.read_text()
    (tmp_path / "b.py").write_text("import pathlib\nv = int(pathlib.Path('/proc/sys/vm/dirty_writeback_centisecs')"
                                   ".read_text())\nprint('score:', 1000 - abs(v - 450))\n")
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent(f"""
        name: root-sysctl
        benchmark: {{command: [{sys.executable}, b.py], repeats: 1, timeout: 20}}
        metrics: [{{name: score, extract: {{regex: 'score: ([0-9.]+)'}}, goal: maximize}}]
        knobs: [{{name: vm.dirty_writeback_centisecs, kind: sysctl, values: [300, 450, 600]}}]
        tune: {{trials: 3, seed: 1, confirm: 0}}
    """))
    res = hone("tune", spec, "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    assert key.read_text() == before
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["trials"] == 3 and doc["recommended"] is None  # no confirmation → nothing recommended


pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def test_the_baseline_becomes_the_models_observation_only_when_it_can_be_one():
    import optuna

    from hone.tune.gp import ATTR_BASELINE_POINT
    from hone.tune.study import record_baseline_point

    space = SearchSpace([
        ParamKnobSpec(name="page", kind="param", values=[65536, 1024, 4096]),
        ParamKnobSpec(name="n", kind="param", type="int", range=[0, 100], step=5),
    ])
    ops = Metric(name="ops", extract={"regex": "o: (\\d+)"}, goal="maximize")
    lat = Metric(name="lat", extract={"regex": "l: (\\d+)"}, goal="minimize", weight=0, constraint="<= 5")
    obj = build_objective([ops, lat], baseline={"ops": 100.0, "lat": 3.0})

    def stored(config: dict, means: dict) -> object:
        study = optuna.create_study(direction="maximize")
        record_baseline_point(study, {"config": config, "means": means}, obj, space)
        return study.user_attrs[ATTR_BASELINE_POINT]

    good = {"ops": 100.0, "lat": 3.0}
    # current values as the machine reports them (text): the ordinal list's index, the int itself
    assert stored({"page": "4096", "n": "35"}, good) == {"params": {"page": 1, "n": 35}, "value": 100.0}
    assert stored({"page": 4096, "n": 37}, good) is None  # off the step grid
    assert stored({"page": 8192, "n": 35}, good) is None  # not in the list
    assert stored({"page": 4096}, good) is None  # a current value unknown
    assert stored({"page": 4096, "n": 35}, {"ops": 100.0, "lat": 9.0}) is None  # infeasible
    assert stored({"page": 4096, "n": 35}, {"ops": 100.0}) is None  # a constrained metric unmeasured
