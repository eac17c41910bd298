"""Knob importances: fANOVA over the completed trials, labelled a rough guide when the trials
are fewer than twenty per knob."""

from __future__ import annotations

import optuna
from optuna.distributions import IntDistribution
from optuna.trial import create_trial

from hone.tune.importance import importance_caveat, knob_importances


def _study(n: int) -> optuna.Study:
    space = {"a": IntDistribution(0, 9), "b": IntDistribution(0, 9)}
    study = optuna.create_study(direction="maximize")
    for i in range(n):
        p = {"a": i % 10, "b": (7 * i + 3) % 10}
        study.add_trial(create_trial(params=p, distributions=space, value=float(p["a"] ** 2)))
    return study


def test_the_knob_that_decides_the_value_gets_the_importance() -> None:
    imp = knob_importances(_study(40))
    assert list(imp) == ["a", "b"] and imp["a"] > 0.8 and abs(sum(imp.values()) - 1) < 1e-9
    assert knob_importances(_study(2)) == {}  # too few to fit


def test_fewer_than_twenty_trials_per_knob_are_a_rough_guide() -> None:
    assert importance_caveat(8, 6) == "fANOVA over 8 trials, fewer than 20 per knob: a rough guide, not a ranking"
    assert importance_caveat(119, 6).endswith("a rough guide, not a ranking")
    assert importance_caveat(120, 6) == "fANOVA over 120 trials"
