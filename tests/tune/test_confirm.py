"""Confirmation's recommendation rule (hone.tune.confirm): who may win, and who decides among winners."""

from __future__ import annotations

import dataclasses

import pytest

from hone.spec.models import Metric
from hone.stats.paired import compare_paired
from hone.tune.confirm import (
    Candidate,
    Confirmation,
    baseline_held,
    compare_runs,
    keep_reason,
    model_observations,
    objective_figure,
    recommend,
    repeats_identically,
    reproduces,
)
from hone.tune.objective import build_objective
from tests.measurements import aa_cpu_times, cpu_run

BASE = [100.0, 101.0, 99.0, 100.5, 99.5, 100.0]


def _confirmation(name: str, factor: float) -> Confirmation:
    """A candidate whose rounds are the baseline's × ``factor`` (goal: maximize)."""
    rounds = [b * factor * (1 + 0.001 * i) for i, b in enumerate(BASE)]
    comp = compare_paired(BASE, rounds, goal="maximize")
    return Confirmation(Candidate(name, 0, {"k": name}, {}), comp, values=rounds)


def test_only_a_significant_win_can_be_recommended():
    worse, same = _confirmation("worse", 0.8), _confirmation("same", 1.0)
    assert not worse.comparison.improved
    assert recommend([worse, same]) is None
    assert recommend([worse, same], order=[0, 1]) is None  # the model's order cannot promote a loser


def test_the_model_order_decides_among_winners_else_the_largest_change():
    small, big, loser = _confirmation("small", 1.10), _confirmation("big", 1.30), _confirmation("loser", 0.7)
    both = [loser, small, big]
    assert small.comparison.improved and big.comparison.improved
    assert recommend(both) is big  # no model: the largest mean change
    assert recommend(both, order=[0, 1, 2]) is small  # the model ranks the loser first: skipped
    assert recommend(both, order=[2, 1, 0]) is big


def test_rounds_become_observations_on_a_trials_footing():
    six = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    assert model_observations(six, 1) == six  # a trial of one run: every round is one
    assert model_observations(six, 3) == [2.0, 5.0]  # a trial is the mean of 3 runs
    assert model_observations(six, 4) == [3.5]  # fewer rounds than two trials' worth: one mean
    assert model_observations([1.0, 2.0], 5) == [1.5]
    assert model_observations([], 2) == []
    # 7 rounds, trials of 3: two groups of near-equal size (4 + 3), no round lost
    assert model_observations([1.0] * 4 + [8.0] * 3, 3) == [1.0, 8.0]


CPU = build_objective([Metric(name="cpu_time")])


@pytest.mark.parametrize("seed", range(30))
def test_an_identical_candidate_in_few_rounds_is_equivalent_only_with_the_ci_inside_the_threshold(seed: int) -> None:
    # A/A at the confirmation's default 6 rounds (up to 10), noise from tiny to this VM's heavy tails.
    base, other = aa_cpu_times(seed)
    comp, per_metric = compare_runs(CPU, [cpu_run(x) for x in base], [cpu_run(x) for x in other], threshold=0.01,
                                    seed=seed)
    inside = comp.ci_pct[0] > -1.0 and comp.ci_pct[1] < 1.0
    assert comp.verdict != "equivalent" or inside
    assert comp.estimator in ("welsch", "trimmed")  # auto: heavy-tail protection
    assert per_metric["cpu_time"].verdict == comp.verdict


def test_keeping_the_configuration_says_each_candidates_verdict_in_its_own_words() -> None:
    base = [0.020, 0.021, 0.019, 0.020, 0.022, 0.020]
    wobble = [1.05, 0.93, 1.08, 0.96, 1.02, 0.95]
    same, _ = compare_runs(CPU, [cpu_run(x) for x in base], [cpu_run(x * 1.0001) for x in base], threshold=0.01, seed=0)
    noisy, _ = compare_runs(CPU, [cpu_run(x) for x in base],
                            [cpu_run(x * w) for x, w in zip(base, wobble, strict=True)], threshold=0.01, seed=0)
    assert same.verdict == "equivalent" and noisy.verdict == "inconclusive"
    text = keep_reason([Confirmation(Candidate("trial 3", 3, {}, {}), same),
                        Confirmation(Candidate("trial 5", 5, {}, {}), noisy)])
    assert "trial 3 equivalent to the baseline (the whole CI lies within ±1.0%)" in text
    assert "trial 5 inconclusive after 6 rounds (not significant: the change could be anywhere from" in text
    assert "no difference" not in text


def test_a_weighted_objective_is_one_figure_for_every_round() -> None:
    # One run with a metric at 0 has no geometric mean: every round uses the heaviest metric then.
    obj = build_objective([Metric(name="cpu_time", weight=2), Metric(name="wall_time", weight=1)])
    runs = [cpu_run(0.02), cpu_run(0.0)]
    figure, goal = objective_figure(obj, runs)
    assert goal == "minimize" and figure(runs[0]) == 0.02
    figure, goal = objective_figure(obj, runs[:1])
    assert goal == "maximize" and figure(runs[0]) == pytest.approx(1 / 0.02)


def test_the_baselines_runs_are_pooled_unless_those_beside_the_candidate_all_beat_the_first() -> None:
    before = [100.0, 95.0, 105.0]
    assert baseline_held(before, [104.0, 96.0, 101.0], "maximize", exact=False)
    assert baseline_held(before, [90.0, 92.0, 94.0], "maximize", exact=False)  # a drift against the candidate
    assert not baseline_held(before, [106.0, 110.0, 108.0], "maximize", exact=False)
    assert not baseline_held(before, [90.0, 92.0, 94.0], "minimize", exact=False)  # lower is better here
    assert not baseline_held([], [100.0], "maximize", exact=False)
    # runs that repeat exactly must still repeat within 1%, whichever way they moved
    assert baseline_held([100.0, 100.1], [100.2], "maximize", exact=True)
    assert not baseline_held([100.0, 100.1], [97.0], "maximize", exact=True)


def test_identical_runs_are_every_scored_metric_the_same_and_a_reproduction_its_search_figures() -> None:
    obj = build_objective([Metric(name="ops", extract={"regex": "ops: (.*)"}, goal="maximize", weight=3),
                           Metric(name="p99", extract={"regex": "p99: (.*)"}, goal="minimize", weight=1)])
    same = [cpu_run(0.02 + 0.001 * i, ops=500.0, p99=3.25) for i in range(3)]  # times differ: not scored
    assert repeats_identically(obj, same)
    assert not repeats_identically(obj, same[:1])  # one run shows nothing
    assert not repeats_identically(obj, [*same[:2], cpu_run(0.02, ops=500.0, p99=3.2500001)])
    failed = dataclasses.replace(same[0], error="exit 1")
    assert not repeats_identically(obj, [*same[:2], failed])
    assert reproduces(obj, same[:1], {"ops": 500.0, "p99": 3.25})
    assert reproduces(obj, same[:1], {"ops": (500.0 + 500.0 + 500.0) / 3, "p99": 3.25})  # a mean of 3 runs
    assert not reproduces(obj, same[:1], {"ops": 501.0, "p99": 3.25})
    assert not reproduces(obj, same[:1], {"ops": 500.0})  # the search never measured p99
    assert not reproduces(obj, [failed], {"ops": 500.0, "p99": 3.25}) and not reproduces(obj, [], {"ops": 500.0})
