"""The library anchors that run as their library's user would call it: Optuna (TPE, GP), OpenTuner
and SMAC3, each given a knob space, a seed, a budget and ``evaluate(config) -> score`` (one noisy
run's score, to maximise).

Imported by :mod:`.library` (``tpe`` runs in hone's venv) and run as a script by it in the anchors'
venv (``.venv-anchors``, setup-anchors.sh) for the libraries that cannot live in hone's: ::

    .venv-anchors/bin/python anchor_worker.py ENGINE

reads one JSON line ``{"space": [...], "seed": S, "budget": B, "noise": N}`` on stdin, then writes
``{"ask": config}`` and reads ``{"score": s}`` for each evaluation, and ends with ``{"done": true,
"recommended": config or null}`` (null: the best observation). Libraries' own prints go to stderr.
Only the standard library is imported at the top: this file runs outside hone's venv.

A knob of the space is ``{"name", "kind", "low", "high", "log", "values"}``, kind ``int`` /
``float`` (a range, ``log`` or not), ``ordinal`` (an ordered list of numbers) or ``categorical``.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from collections.abc import Callable
from typing import Any

Config = dict[str, Any]
Evaluate = Callable[[Config], float]


# ------------------------------------------------------------------------------ Optuna

def optuna_params(trial: Any, space: list[dict[str, Any]]) -> Config:
    """The space as an Optuna user writes it: ``suggest_int``/``suggest_float`` (``log``) for
    ranges, ``suggest_categorical`` for a list of values, ordered or not (Optuna has no ordinal
    distribution)."""
    out: Config = {}
    for k in space:
        if k["kind"] == "int":
            out[k["name"]] = trial.suggest_int(k["name"], int(k["low"]), int(k["high"]), log=bool(k["log"]))
        elif k["kind"] == "float":
            out[k["name"]] = trial.suggest_float(k["name"], float(k["low"]), float(k["high"]), log=bool(k["log"]))
        else:
            out[k["name"]] = trial.suggest_categorical(k["name"], list(k["values"]))
    return out


def optuna_session(sampler: str, space: list[dict[str, Any]], seed: int, budget: int, noise: float,
                   evaluate: Evaluate) -> Config | None:
    """``budget`` trials of Optuna's ``TPESampler(seed=…)`` (defaults) or ``GPSampler(seed=…,
    deterministic_objective=noise == 0)``; Optuna's best trial is the best observation."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    if sampler == "tpe":
        s: Any = optuna.samplers.TPESampler(seed=seed)
    else:
        s = optuna.samplers.GPSampler(seed=seed, deterministic_objective=noise == 0)
    study = optuna.create_study(direction="maximize", sampler=s)
    study.optimize(lambda t: evaluate(optuna_params(t, space)), n_trials=budget)
    return None


# --------------------------------------------------------------------------- OpenTuner

def opentuner_session(space: list[dict[str, Any]], seed: int, budget: int, noise: float,
                      evaluate: Evaluate) -> Config | None:
    """OpenTuner 0.8.8's default search (the AUC bandit ensemble ``AUCBanditMetaTechniqueA``)
    through its ``TuningRunManager`` API, results in an in-memory database, minimising
    ``time = −score``. Ranges are ``IntegerParameter``/``FloatParameter`` (``Log…`` when log),
    value lists ``EnumParameter``. OpenTuner never re-runs a configuration it has a result for;
    its best result is the best observation."""
    import argparse
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    import numpy as np
    import opentuner
    from opentuner.api import TuningRunManager
    from opentuner.measurement.interface import DefaultMeasurementInterface
    from opentuner.resultsdb.models import Result
    from opentuner.search import manipulator as om

    random.seed(seed)  # OpenTuner draws from the global generators
    np.random.seed(seed)
    args = argparse.ArgumentParser(parents=opentuner.argparsers()).parse_args([])
    args.database = "sqlite://"
    m = om.ConfigurationManipulator()
    for k in space:
        name = k["name"]
        if k["kind"] == "int":
            cls = om.LogIntegerParameter if k["log"] else om.IntegerParameter
            m.add_parameter(cls(name, int(k["low"]), int(k["high"])))
        elif k["kind"] == "float":
            cls = om.LogFloatParameter if k["log"] else om.FloatParameter
            m.add_parameter(cls(name, float(k["low"]), float(k["high"])))
        else:
            m.add_parameter(om.EnumParameter(name, list(k["values"])))
    interface = DefaultMeasurementInterface(args=args, manipulator=m, project_name="suite", program_name="p",
                                            program_version="0")
    api = TuningRunManager(interface, args)
    done = spins = 0
    while done < budget and spins < 50 * budget:  # None: every technique waits on results or is spent
        spins += 1
        dr = api.get_next_desired_result()
        if dr is None:
            continue
        score = evaluate(dict(dr.configuration.data))
        api.report_result(dr, Result(time=-score))
        done += 1
    api.finish()
    return None


# -------------------------------------------------------------------------------- SMAC

def smac_session(space: list[dict[str, Any]], seed: int, budget: int, noise: float,
                 evaluate: Evaluate) -> Config | None:
    """SMAC3's ``HyperparameterOptimizationFacade`` (random forest, log EI, Sobol initial design
    sized by the budget, its intensifier) with its defaults, through ask/tell, minimising
    ``cost = −score``; ``Scenario(deterministic=noise == 0, n_trials=budget, seed=seed)`` — with
    noise SMAC re-runs its incumbents (up to 3 seeds each) and every run counts as a trial.
    SMAC stops early when its configuration selector finds nothing new (small spaces).
    Ranges are ``Integer``/``Float`` (``log``), ordered value lists ``Categorical(ordered=True)``
    (ConfigSpace's ``OrdinalHyperparameter``), the others ``Categorical``. Recommends SMAC's incumbent."""
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.CRITICAL)
    from ConfigSpace import Categorical, ConfigurationSpace, Float, Integer
    from smac import HyperparameterOptimizationFacade, Scenario
    from smac.main.exceptions import ConfigurationSpaceExhaustedException
    from smac.runhistory.dataclasses import TrialValue

    cs = ConfigurationSpace(seed=seed)
    for k in space:
        name = k["name"]
        if k["kind"] == "int":
            cs.add(Integer(name, (int(k["low"]), int(k["high"])), log=bool(k["log"])))
        elif k["kind"] == "float":
            cs.add(Float(name, (float(k["low"]), float(k["high"])), log=bool(k["log"])))
        elif k["kind"] == "ordinal":
            cs.add(Categorical(name, list(k["values"]), ordered=True))  # an OrdinalHyperparameter
        else:
            cs.add(Categorical(name, list(k["values"])))

    def unused(config: Any, seed: int = 0) -> float:  # ask/tell: SMAC never calls it
        raise RuntimeError("SMAC called the target function")

    with tempfile.TemporaryDirectory(prefix="smac-anchor-") as tmp:
        scenario = Scenario(cs, deterministic=noise == 0, n_trials=budget, seed=seed, output_directory=tmp)
        smac = HyperparameterOptimizationFacade(scenario, unused, overwrite=True, logging_level=50)
        for _ in range(budget):
            try:
                info = smac.ask()
            except ConfigurationSpaceExhaustedException:  # SMAC found no new configuration to try
                break
            score = evaluate(dict(info.config))
            smac.tell(info, TrialValue(cost=-score))
        inc = smac.intensifier.get_incumbent()
        return None if inc is None else dict(inc)


SESSIONS: dict[str, Callable[..., Config | None]] = {
    "tpe": lambda *a: optuna_session("tpe", *a),
    "optuna-gp": lambda *a: optuna_session("gp", *a),
    "opentuner": opentuner_session,
    "smac": smac_session,
}


def _plain(v: Any) -> Any:
    """numpy scalars → Python numbers (JSON)."""
    return v.item() if hasattr(v, "item") else v


def main() -> None:
    engine = sys.argv[1]
    proto = os.fdopen(os.dup(1), "w")  # the protocol; the libraries' prints go to stderr
    os.dup2(2, 1)
    job = json.loads(sys.stdin.readline())

    def evaluate(cfg: Config) -> float:
        proto.write(json.dumps({"ask": {k: _plain(v) for k, v in cfg.items()}}) + "\n")
        proto.flush()
        line = sys.stdin.readline()
        if not line:
            sys.exit("anchor_worker: the runner went away")
        return float(json.loads(line)["score"])

    rec = SESSIONS[engine](job["space"], int(job["seed"]), int(job["budget"]), float(job["noise"]), evaluate)
    proto.write(json.dumps({"done": True, "recommended": None if rec is None else
                            {k: _plain(v) for k, v in rec.items()}}) + "\n")
    proto.flush()


if __name__ == "__main__":
    main()
