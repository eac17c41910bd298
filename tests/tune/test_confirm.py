"""Confirmation's recommendation rule (hone.tune.confirm): who may win, and who decides among winners."""

from __future__ import annotations

from hone.stats.paired import compare_paired
from hone.tune.confirm import Candidate, Confirmation, model_observations, recommend

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
