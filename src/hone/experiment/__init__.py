"""The one A/B engine: arms in interleaved randomized rounds, looks until decisive, one analysis.

Callers (``hone compare``, tune confirmation and ablation, ``hone pgo`` evaluation, doctor
experiments) keep only their presentation.
"""

from hone.experiment.engine import (
    ExperimentResult,
    ExperimentSettings,
    Figure,
    Look,
    compare_arms,
    plan_for,
    run_experiment,
)
from hone.experiment.sequential import LookPlan

__all__ = ["ExperimentResult", "ExperimentSettings", "Figure", "Look", "LookPlan", "compare_arms", "plan_for",
           "run_experiment"]
