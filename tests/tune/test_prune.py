"""The model's pruned last trial (hone.tune.prune): under a run budget with no room for the
ablation, changes the GP finds worth nothing go back to their starting values — measured first."""

from __future__ import annotations

import json
import math
import sys
import textwrap
from pathlib import Path

import numpy as np
import optuna
from optuna.distributions import IntDistribution
from optuna.trial import create_trial

from hone.spec.models import Metric
from hone.tune.confirm import pick_candidates
from hone.tune.gp import ATTR_BASELINE_POINT, ATTR_NOISE_CV, HoneGPSampler
from hone.tune.objective import Objective
from hone.tune.prune import ATTR_PRUNED

optuna.logging.set_verbosity(optuna.logging.ERROR)
SPACE = {n: IntDistribution(0, 20) for n in ("a", "b", "c", "d", "e")}
START = dict.fromkeys(SPACE, 10)


def _score(p: dict) -> float:  # a and b matter (best at 16 and 4); c, d and e do nothing
    return 100 * (1 + 0.3 * math.exp(-((p["a"] - 16) / 5) ** 2) + 0.2 * math.exp(-((p["b"] - 4) / 5) ** 2))


def _study(n: int = 30, noise: float = 0.0) -> optuna.Study:
    """``n`` random trials, each measured with a relative sd of ``noise``."""
    study = optuna.create_study(direction="maximize")
    study.set_user_attr(ATTR_BASELINE_POINT, {"params": START, "value": _score(START)})
    rng = np.random.default_rng(7)
    for _ in range(n):
        p = {k: int(rng.integers(0, 21)) for k in SPACE}
        value = _score(p) * (1 + noise * rng.standard_normal())
        study.add_trial(create_trial(params=p, distributions=SPACE, value=value, user_attrs={"config": p}))
    if noise:
        study.set_user_attr(ATTR_NOISE_CV, noise)
    return study


def test_the_model_puts_back_the_changes_that_do_nothing_and_keeps_those_that_matter() -> None:
    study = _study()
    model = HoneGPSampler(seed=0)
    best = {"a": 16, "b": 4, "c": 3, "d": 19, "e": 0}
    pruned = model.pruned(study, best, START, 0.001)
    assert pruned is not None
    params, dropped = pruned
    assert sorted(dropped) == ["c", "d", "e"]
    assert params == {"a": 16, "b": 4, "c": 10, "d": 10, "e": 10}
    # nothing left to put back: None
    assert model.pruned(study, {"a": 16, "b": 4, "c": 10, "d": 10, "e": 10}, START, 0.001) is None


def _objective() -> Objective:
    return Objective(mode="single", metrics=[Metric(name="score", goal="maximize", extract={"regex": "(.*)"})],
                     constrained=[], baseline={})


def _with_pruned(value_factor: float, noise: float = 0.0) -> tuple[optuna.Study, int]:
    """A study whose best trial (measured 1% above its true value) has a pruned trial measuring
    ``value_factor`` × the true value."""
    study = _study(noise=noise)
    best = {"a": 16, "b": 4, "c": 3, "d": 19, "e": 0}
    study.add_trial(create_trial(params=best, distributions=SPACE, value=1.01 * _score(best),
                                 user_attrs={"config": best}))
    parent = len(study.trials) - 1
    lean = {"a": 16, "b": 4, "c": 10, "d": 10, "e": 10}
    study.add_trial(create_trial(params=lean, distributions=SPACE, value=value_factor * _score(lean),
                                 user_attrs={"config": lean,
                                             ATTR_PRUNED: {"parent": parent, "dropped": ["c", "d", "e"]}}))
    return study, parent


def test_the_pruned_trial_takes_its_parents_place_only_when_its_measurement_agrees() -> None:
    model = HoneGPSampler(seed=0)
    study, parent = _with_pruned(1.01)  # measured as good as its parent: it replaces it
    cands = pick_candidates(study, _objective(), 2, model=model, tolerance=0.001)
    assert cands[0].trial_number == parent + 1 and f"trial {parent} without 3 changes" in cands[0].name
    assert all(c.trial_number != parent for c in cands)  # the parent is not confirmed beside it
    # measured 10% worse (runs that repeat exactly): the model was wrong, the parent stays
    study, parent = _with_pruned(0.9)
    cands = pick_candidates(study, _objective(), 2, model=model, tolerance=0.001)
    assert cands[0].trial_number == parent
    # under noise too: 2% below its parent's (lucky) measurement is not taken on the model's word ...
    study, parent = _with_pruned(0.99, noise=0.05)
    assert pick_candidates(study, _objective(), 2, model=model, tolerance=0.001)[0].trial_number == parent
    # ... measured as well, it is
    study, parent = _with_pruned(1.01, noise=0.05)
    assert pick_candidates(study, _objective(), 2, model=model, tolerance=0.001)[0].trial_number == parent + 1
    # without a tolerance (--no-prune) the best observed stays first
    study, parent = _with_pruned(1.01)
    assert pick_candidates(study, _objective(), 2, model=model)[0].trial_number == parent


BENCH = textwrap.dedent("""
    import math, sys
    a, b = int(sys.argv[1]), int(sys.argv[2])
    print(f"score: {100 * (1 + 0.3 * math.exp(-((a - 16) / 5) ** 2) + 0.2 * math.exp(-((b - 4) / 5) ** 2))}")
""")


def test_under_a_run_budget_the_recommendation_leaves_the_inert_knobs_at_their_start(tmp_path: Path,
                                                                                      hone) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bench.py").write_text(BENCH)
    knobs = "\n".join(f"  - {{name: {n}, kind: param, range: [0, 20], default: 10}}" for n in "abcde")
    spec = tmp_path / "hone.yaml"
    spec.write_text(f"name: lean\nbenchmark:\n  command: [{sys.executable}, bench.py, '{{a}}', '{{b}}', '{{c}}', "
                    f"'{{d}}', '{{e}}']\n  timeout: 20\n  warmup: 0\nmetrics:\n  - {{name: score, extract: {{regex: "
                    f"'score: ([-0-9.]+)'}}, goal: maximize}}\nknobs:\n{knobs}\ntune: {{seed: 2}}\n")
    res = hone("tune", spec, "--max-runs", "40", "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert "prune: last trial: trial" in res.out, res.out
    rec = doc["recommended"]
    assert rec is not None and doc["budget"]["runs_total"] <= 40
    assert {k: rec[k] for k in "cde"} == dict.fromkeys("cde", 10), rec
    assert rec["a"] != 10 and rec["b"] != 10
    pruned = doc["best_candidate"]["pruned"]
    assert set(pruned["dropped"]) <= {"c", "d", "e"} and pruned["dropped"], pruned
    assert f"(trial {pruned['parent']} without {len(pruned['dropped'])} change" in doc["best_candidate"]["name"]
