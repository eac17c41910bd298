"""The local-refinement sampler layer (``--sampler local``): domains, order, determinism."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from hone.spec.models import KnobBase
from hone.tune.local import LocalRefineSampler, neighbour_value
from hone.tune.samplers import make_sampler
from hone.tune.space import dimension_for

optuna.logging.set_verbosity(optuna.logging.ERROR)
pytestmark = pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")

DISTS = {
    "idx": IntDistribution(0, 6),  # an ordinal list searched as its index
    "stepped": IntDistribution(8, 64, step=8),
    "logint": IntDistribution(1, 4096, log=True),
    "f": FloatDistribution(0.0, 1.0),
    "logf": FloatDistribution(1e-4, 1.0, log=True),
    "fstep": FloatDistribution(0.0, 2.0, step=0.25),
    "cat": CategoricalDistribution(["a", "b", "c"]),
    "flag": CategoricalDistribution([False, True]),
}


@pytest.mark.parametrize("name", sorted(DISTS))
def test_neighbour_moves_stay_in_the_domain(name):
    dist = DISTS[name]
    rng = np.random.default_rng(1)
    value = {"idx": 6, "stepped": 8, "logint": 4096, "f": 1.0, "logf": 1e-4, "fstep": 2.0, "cat": "a",
             "flag": True}[name]
    for scale in (1, 2, 3):
        for _ in range(200):
            new = neighbour_value(dist, value, rng, scale)
            assert dist._contains(dist.to_internal_repr(new)), (name, new)
            if not isinstance(dist, FloatDistribution):
                assert new != value


def test_ordinal_moves_are_small_steps_in_the_sorted_order():
    # page sizes as a knob: hone searches the index of the sorted list
    knob = KnobBase.model_validate({"name": "page_size", "values": [65536, 512, 4096, 1024]})
    dim = dimension_for(knob)
    assert dim.ordinal_values == (512, 1024, 4096, 65536)
    rng = np.random.default_rng(7)
    moves = [neighbour_value(dim.distribution, 1, rng) for _ in range(400)]  # from 1024
    assert set(moves) <= {0, 2, 3}
    # neighbours in the order (512, 4096) are far more likely than the far end (65536)
    assert moves.count(0) + moves.count(2) > 1.5 * moves.count(3)
    decoded = {dim.decode(m) for m in moves}
    assert decoded <= {512, 4096, 65536}


def test_stepped_and_log_ranges_move_by_steps_and_factors():
    rng = np.random.default_rng(3)
    steps = [neighbour_value(DISTS["stepped"], 32, rng) for _ in range(300)]
    assert all(s % 8 == 0 for s in steps)
    assert sum(abs(s - 32) == 8 for s in steps) > len(steps) / 3  # one step is the commonest move
    ratios = [neighbour_value(DISTS["logint"], 64, rng) / 64 for _ in range(300)]
    assert statistics_median([abs(math.log(r)) for r in ratios]) < math.log(4)


def statistics_median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def _run(seed: int, trials: int = 30) -> list[dict]:
    sampler = make_sampler("local", seed=seed, n_trials=trials)
    study = optuna.create_study(sampler=sampler)
    dists = {"idx": DISTS["idx"], "stepped": DISTS["stepped"], "cat": DISTS["cat"], "f": DISTS["f"]}
    out = []
    for _ in range(trials):
        t = study.ask(dists)
        p = t.params
        value = (p["idx"] - 4) ** 2 + abs(p["stepped"] - 40) / 8 + (p["cat"] != "b") + (p["f"] - 0.3) ** 2
        study.tell(t, value)
        out.append(p)
    return out


def test_same_seed_same_measurements_same_suggestions():
    assert _run(5) == _run(5)
    assert _run(5) != _run(6)


def test_local_turns_refine_the_incumbent_and_avoid_repeats():
    sampler = make_sampler("local", seed=0, n_trials=30)
    assert isinstance(sampler, LocalRefineSampler)
    study = optuna.create_study(sampler=sampler)
    dists = {"idx": DISTS["idx"], "stepped": DISTS["stepped"], "cat": DISTS["cat"]}
    seen = []
    for _ in range(30):
        t = study.ask(dists)
        if sampler.is_local_turn(t.number):
            best = min(study.get_trials(states=(optuna.trial.TrialState.COMPLETE,)), key=lambda x: x.value)
            # a local trial is the incumbent with a few knobs moved, not a repeat
            changed = [k for k in dists if t.params[k] != best.params[k]]
            assert 1 <= len(changed) <= len(dists)
            assert t.params not in seen
        seen.append(t.params)
        study.tell(t, (t.params["idx"] - 4) ** 2 + (t.params["stepped"] - 40) ** 2 / 64
                   + (t.params["cat"] != "b"))
    assert sum(sampler.is_local_turn(n) for n in range(30)) > 5


def test_multi_objective_falls_back_to_the_inner_sampler():
    sampler = make_sampler("local", seed=0, n_trials=12)
    study = optuna.create_study(sampler=sampler, directions=["minimize", "minimize"])
    for _ in range(12):
        t = study.ask({"idx": DISTS["idx"]})
        study.tell(t, [t.params["idx"], -t.params["idx"]])
    assert len(study.trials) == 12
