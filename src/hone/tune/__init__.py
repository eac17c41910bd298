"""Knob search: a study loop over Optuna ask/tell with hone doing the measuring.

Public surface: :func:`tune` (a whole session), and the reusable pieces a fleet worker
needs — :func:`open_study`, :func:`ensure_baseline`, :func:`recover_interrupted`,
:func:`run_trials`, :func:`confirm_candidates`.
"""

from hone.tune.confirm import Candidate, Confirmation, confirm_candidates, pick_candidates, recommend
from hone.tune.objective import Objective, build_objective
from hone.tune.samplers import SAMPLERS, SamplerRequest, make_sampler
from hone.tune.space import SearchSpace
from hone.tune.study import (
    TrialOutcome,
    constraints_from_attrs,
    ensure_baseline,
    finished_trials,
    open_study,
    recover_interrupted,
    run_trials,
)
from hone.tune.tuner import KEEP, TUNE_FORMAT, TuneEvents, TuneResult, TuneSettings, tune

__all__ = [
    "KEEP",
    "SAMPLERS",
    "TUNE_FORMAT",
    "Candidate",
    "Confirmation",
    "Objective",
    "SamplerRequest",
    "SearchSpace",
    "TrialOutcome",
    "TuneEvents",
    "TuneResult",
    "TuneSettings",
    "build_objective",
    "confirm_candidates",
    "constraints_from_attrs",
    "ensure_baseline",
    "finished_trials",
    "make_sampler",
    "open_study",
    "pick_candidates",
    "recommend",
    "recover_interrupted",
    "run_trials",
    "tune",
]
