"""``hone tune --patience N``: the search ends after N trials in a row without a real gain; the
rule on hand-made studies (every case of what counts as a gain), then the real command."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
from hypothesis import given, settings
from hypothesis import strategies as st
from optuna.distributions import IntDistribution
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState, create_trial

from hone.spec.models import Metric
from hone.tune.objective import build_objective
from hone.tune.patience import Patience
from hone.tune.study import ATTR_CONSTRAINTS
from tests.tune.conftest import write_workload


def _objective(goal: str = "maximize", baseline: float = 100.0, weighted: bool = False):  # type: ignore[no-untyped-def]
    metrics = [Metric(name="score", extract={"regex": "s: (.*)"}, goal=goal)]
    if weighted:
        metrics.append(Metric(name="lat", extract={"regex": "l: (.*)"}, goal="minimize", weight=1.0))
    return build_objective(metrics, baseline={"score": baseline, "lat": 10.0})


def _trials(values: list[float | None], infeasible: tuple[int, ...] = ()) -> list[FrozenTrial]:
    """Finished trials in order; None = a failed trial."""
    out = []
    for i, v in enumerate(values):
        t = create_trial(state=TrialState.FAIL if v is None else TrialState.COMPLETE,
                         value=None if v is None else v, params={"x": i}, distributions={"x": IntDistribution(0, 999)},
                         user_attrs={ATTR_CONSTRAINTS: [1.0]} if i in infeasible else {})
        t.number = i
        out.append(t)
    return out


def test_the_search_stops_only_after_n_trials_in_a_row_without_a_gain() -> None:
    p, obj = Patience(trials=3, min_gain=0.01), _objective()  # a gain: +1 over the best (1% of 100)
    up = StudyDirection.MAXIMIZE
    assert p.stalled(_trials([100.5, 100.9, 99.0]), obj, up) == (
        "--patience 3: 3 trials in a row without a gain of 1% over the best (the baseline)")
    assert p.stalled(_trials([100.5, 101.0, 99.0]), obj, up) is None  # trial 1 gained +1
    assert p.stalled(_trials([100.5, 101.0, 99.0, 101.9]), obj, up) is None
    assert p.stalled(_trials([100.5, 101.0, 99.0, 101.9, 50.0]), obj, up) == (
        "--patience 3: 3 trials in a row without a gain of 1% over the best (trial 1)")
    # small steps add up against the last real gain: 101 → 101.9 → 102.1 is one
    assert p.stalled(_trials([100.5, 101.0, 99.0, 101.9, 102.1, 50.0]), obj, up) is None


def test_failed_and_infeasible_trials_gain_nothing_and_minimised_metrics_gain_downwards() -> None:
    p = Patience(trials=2, min_gain=0.05)
    assert p.stalled(_trials([None, 200.0, 90.0], infeasible=(1,)), _objective(), StudyDirection.MAXIMIZE) \
        == "--patience 2: 3 trials in a row without a gain of 5% over the best (the baseline)"
    why = p.stalled(_trials([None, 200.0]), _objective(), StudyDirection.MAXIMIZE)
    assert why is None  # trial 1 gained
    why = p.stalled(_trials([None, 200.0], infeasible=(1,)), _objective(), StudyDirection.MAXIMIZE)
    assert why is not None and "(the baseline)" in why
    down = _objective("minimize", baseline=10.0)
    assert p.stalled(_trials([9.6, 9.4]), down, StudyDirection.MINIMIZE) is None  # 9.4 ≤ 10 − 0.5
    assert p.stalled(_trials([9.6, 9.7]), down, StudyDirection.MINIMIZE) is not None
    assert p.stalled(_trials([9.6, 9.4, 9.0, 20.0]), down, StudyDirection.MINIMIZE) is not None  # 9.0 > 9.4 − 0.5


def test_the_random_starts_are_not_counted_and_a_weighted_score_gains_in_points() -> None:
    p = Patience(trials=2, min_gain=0.01, starts=3)
    up = StudyDirection.MAXIMIZE
    assert p.stalled(_trials([90.0, 90.0, 90.0, 90.0]), _objective(), up) is None  # 1 trial after the starts
    assert "2 trials in a row" in (p.stalled(_trials([150.0, 90.0, 90.0, 90.0, 90.0]), _objective(), up) or "")
    weighted = _objective(weighted=True)  # the score is a % change: 1% = 1 point, whatever the baseline
    assert Patience(trials=1, min_gain=0.01).step(weighted) == 1.0
    assert Patience(trials=1, min_gain=0.02).stalled(_trials([1.5]), weighted, up) is not None
    assert Patience(trials=1, min_gain=0.01).stalled(_trials([1.5]), weighted, up) is None


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.floats(50, 150)), max_size=30), n=st.integers(1, 6),
       starts=st.integers(0, 5), gain=st.sampled_from([0.001, 0.01, 0.1]))
def test_a_stop_always_has_n_trials_without_a_gain_behind_it(values: list[float | None], n: int, starts: int,
                                                             gain: float) -> None:
    p, obj = Patience(trials=n, min_gain=gain, starts=starts), _objective()
    why = p.stalled(_trials(values), obj, StudyDirection.MAXIMIZE)
    best, last = 100.0, -1
    for i, v in enumerate(values):
        if v is not None and v >= best + gain * 100.0:
            best, last = v, i
    idle = len(values) - max(last + 1, starts)
    assert (why is not None) == (idle >= n)
    if why is not None:
        assert len(values) >= starts + n


def test_hone_tune_patience_ends_the_search_and_still_confirms(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, trials=30)
    # a gain is +50% of the baseline's 93: more than this benchmark's best (125), so none comes and the
    # search ends after the random sampler's 6 starts + 3 trials; what it found is still confirmed
    res = hone("tune", spec, "--sampler", "random", "--patience", "3", "--min-gain", "0.5", "--no-ablation",
               "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert doc["trials"] == 9
    why = "--patience 3: 3 trials in a row without a gain of 50% over the best (the baseline)"
    assert doc["budget"]["search_stopped"] == why
    assert f"search stopped after 9 of 30 trials: {why}" in res.out
    assert "trials, sampler random; ends after 3 in a row without a 50% gain" in res.out
    assert doc["confirmations"] and doc["recommended"] is not None  # the best found beats the baseline
    assert (workload / "app.conf").read_text() == "level = 1\n"


def test_the_spec_patience_with_the_gp_and_its_bad_values(workload: Path, hone, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, mode="zero", trials=30)  # never a gain
    spec.write_text(spec.read_text().replace("top_k: 1", "top_k: 1, patience: 4"))
    res = hone("tune", spec, "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert doc["trials"] == 5 + 4  # hone's GP: 5 Latin-hypercube starts at 30 trials
    assert "--patience 4: 4 trials in a row" in doc["budget"]["search_stopped"]
    good = spec.read_text()
    for bad, field in (("patience: 0", "tune.patience"), ("patience: 4, min_gain: 1.5", "tune.min_gain")):
        spec.write_text(good.replace("patience: 4", bad))
        res = hone("tune", spec)
        assert res.code == 2 and "Traceback" not in res.err and field in res.err, res.err
    spec.write_text(good)
    (workload / "two").mkdir()
    two = write_workload(workload / "two", extra_metrics="""
          - {name: xv, extract: {regex: 'x: ([0-9]+)'}, goal: minimize}""")
    before, runs = sorted(p.name for p in state_dir.iterdir()), (workload / "runs.log").read_text()
    for spec_path, args in ((two, ("--pareto",)), (spec, ("--workers", "2"))):
        res = hone("tune", spec_path, "--patience", "3", *args)
        assert res.code == 2 and "--patience needs" in res.err.splitlines()[0], res.err
    res = hone("tune", two, "--min-gain", "0.05")
    assert res.code == 2 and "--min-gain goes with --patience N" in res.err, res.err
    assert sorted(p.name for p in state_dir.iterdir()) == before and (workload / "runs.log").read_text() == runs


def test_a_resumed_study_keeps_counting() -> None:
    p, obj = Patience(trials=3, min_gain=0.01), _objective()
    study = optuna.create_study(direction="maximize")
    for t in _trials([100.0, 102.0, 101.0, 100.0]):
        study.add_trial(t)
    assert p.check(study, obj) is None
    study.add_trial(_trials([101.0])[0])  # the next session's first trial
    assert p.check(study, obj) == "--patience 3: 3 trials in a row without a gain of 1% over the best (trial 1)"
