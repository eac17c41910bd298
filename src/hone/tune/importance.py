"""Which knobs mattered: Optuna's importance evaluators over the completed trials."""

from __future__ import annotations

import optuna
from optuna.trial import TrialState


def knob_importances(study: optuna.Study, evaluator: str = "fanova", seed: int = 0) -> dict[str, float]:
    """Importance of each knob (fractions summing to 1), most important first.

    ``evaluator``: ``fanova`` (default; random-forest functional ANOVA) or ``ped-anova``.
    Multi-objective studies are judged on their first objective. Returns {} when there are
    fewer than 3 completed trials or the evaluator cannot fit (e.g. a constant objective)."""
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    if len(complete) < 3:
        return {}
    ev = (optuna.importance.PedAnovaImportanceEvaluator() if evaluator == "ped-anova"
          else optuna.importance.FanovaImportanceEvaluator(seed=seed))
    target = (lambda t: t.values[0]) if len(study.directions) > 1 else None
    try:
        imp = optuna.importance.get_param_importances(study, evaluator=ev, target=target)
    except (ValueError, RuntimeError, ZeroDivisionError):
        return {}
    return {k: float(v) for k, v in imp.items()}


#: Completed trials per knob below which importances are labelled a rough guide: on the suite's
#: real tables, fewer named the wrong top knob in 1 sample of 5 or more (docs/decisions/0085).
TRIALS_PER_KNOB = 20


def importance_caveat(trials: int, knobs: int) -> str:
    """How the importances were found, with a warning when the trials are too few to rank
    ``knobs`` knobs (fewer than :data:`TRIALS_PER_KNOB` each)."""
    if trials < TRIALS_PER_KNOB * knobs:
        return f"fANOVA over {trials} trials, fewer than {TRIALS_PER_KNOB} per knob: a rough guide, not a ranking"
    return f"fANOVA over {trials} trials"
