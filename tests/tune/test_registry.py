"""Conformance of the sampler registry (``hone.tune.SAMPLERS``): every sampler builds with a
seed, suggests 5 trials of a tiny 2-knob study inside the space, and suggests the same ones
again under the same seed."""

from __future__ import annotations

from typing import Any

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, IntDistribution
from optuna.samplers import BaseSampler

from hone.core.errors import HoneError
from hone.tune import SAMPLERS, SamplerRequest, make_sampler
from hone.tune.samplers import startup_trials

TRIALS = 5
SPACE = {"threads": IntDistribution(1, 8), "mode": CategoricalDistribution(["a", "b", "c"])}
# Samplers that need an optional package: skipped (not failed) where it is not installed.
NEEDS = {"optuna-gp": "torch", "cmaes": "cmaes"}


def _value(params: dict[str, Any]) -> float:
    return (params["threads"] - 5) ** 2 + {"a": 1.0, "b": 0.0, "c": 2.0}[params["mode"]]


def _suggestions(name: str, seed: int) -> list[dict[str, Any]]:
    sampler = make_sampler(name, seed=seed, n_trials=TRIALS, distributions=SPACE)
    assert isinstance(sampler, BaseSampler)
    study = optuna.create_study(sampler=sampler, direction="minimize")
    out = []
    for _ in range(TRIALS):
        trial = study.ask(SPACE)
        study.tell(trial, _value(trial.params))
        out.append(trial.params)
    return out


@pytest.fixture(autouse=True)
def _quiet_optuna() -> None:
    optuna.logging.set_verbosity(optuna.logging.WARNING)


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_sampler_suggests_trials_in_the_space_and_repeats_them_under_its_seed(name: str) -> None:
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    first = _suggestions(name, seed=11)
    assert len(first) == TRIALS
    for params in first:
        assert params.keys() == SPACE.keys()
        for knob, dist in SPACE.items():
            assert dist._contains(dist.to_internal_repr(params[knob])), (knob, params[knob])
    assert _suggestions(name, seed=11) == first


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_registry_entry_builds_from_a_request(name: str) -> None:
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    assert name == name.lower() and name.strip() == name
    request = SamplerRequest(seed=1, n_trials=TRIALS, n_startup=startup_trials(TRIALS), distributions=SPACE)
    assert isinstance(SAMPLERS[name](request), BaseSampler)


def test_names_are_case_insensitive_and_an_unknown_one_lists_the_registry() -> None:
    assert isinstance(make_sampler("TPE", seed=0, n_trials=TRIALS), optuna.samplers.TPESampler)
    with pytest.raises(HoneError) as err:
        make_sampler("annealing", seed=0, n_trials=TRIALS)
    assert all(name in err.value.message for name in SAMPLERS)
