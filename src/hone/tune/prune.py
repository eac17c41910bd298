"""The model's minimal configuration, when the run budget has no room for an ablation.

The ablation (:mod:`hone.tune.ablation`) measures every change of the winner: k + 4 arms of at
least :data:`~hone.tune.confirm.MIN_ROUNDS` rounds, 204 runs for 30 knobs. Under ``--max-runs``
it rarely fits, and the recommendation would change every knob the search happened to move —
an MTU on a NIC the benchmark never uses among them. hone's GP has been fitted on every trial:
the search's last trial is the best observed configuration with the changes the model predicts
worth less than a tolerance (a tenth of the threshold), together, put back at their starting
values (greedy, :func:`hone.tune.gp.ranking.prune_by_model`). It is measured like any trial,
and the candidates take it in place of its parent when it measured no worse (within the
tolerance); the confirmation then judges it against the baseline like any candidate
(docs/decisions/0084-model-pruned-candidate.md).
"""

from __future__ import annotations

from typing import Any

import optuna
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial

from hone.tune.gp import HoneGPSampler
from hone.tune.objective import Objective
from hone.tune.space import SearchSpace

#: trial attr of the pruned configuration: {"parent": the parent trial's number, "dropped": [knob, …]}
ATTR_PRUNED = "hone_pruned"


def queue_pruned(study: optuna.Study, model: HoneGPSampler, ranked: list[FrozenTrial], space: SearchSpace,
                 baseline_config: dict[str, Any], objective: Objective, tolerance: float) -> str | None:
    """Enqueue the best of ``ranked`` (best observed first) with the changes the model predicts
    worth less than ``tolerance`` put back at the baseline's values; the line to print, or None
    when the model puts back none (or there is no model or no parent)."""
    if not ranked:
        return None
    parent = ranked[0]
    start: dict[str, Any] = {}
    for name in space.distributions:
        one = space.params_of(baseline_config, only=[name])
        if one:
            start.update(one)
    pruned = model.pruned(study, dict(parent.params), start, tolerance, percent=objective.mode == "weighted")
    if pruned is None:
        return None
    params, dropped = pruned
    study.enqueue_trial(params, user_attrs={ATTR_PRUNED: {"parent": parent.number, "dropped": dropped}},
                        skip_if_exists=False)
    return (f"last trial: trial {parent.number} with {len(dropped)} of its changes back at their starting values "
            f"(the model predicts them worth < {100 * tolerance:g}% together): {', '.join(dropped)}")


def pruned_of(trials: list[FrozenTrial], parent: int) -> FrozenTrial | None:
    """The completed pruned trial of ``parent`` (the last one), if any."""
    found = [t for t in trials if (t.user_attrs.get(ATTR_PRUNED) or {}).get("parent") == parent]
    return found[-1] if found else None


def pruned_note(t: FrozenTrial) -> str:
    """How a pruned candidate is named: its parent and the changes it leaves out."""
    info = t.user_attrs.get(ATTR_PRUNED) or {}
    dropped = info.get("dropped", [])
    return f" (trial {info.get('parent')} without {len(dropped)} change{'' if len(dropped) == 1 else 's'})"


def fewer_changes(trials: list[FrozenTrial], objective: Objective, best: FrozenTrial,
                  tolerance: float) -> FrozenTrial | None:
    """The pruned trial of ``best`` when it measured no worse than ``best`` (within ``tolerance``);
    None otherwise. The model predicted the changes worth nothing; the measurement catches where
    it is wrong (a rough response it takes for noise). Under noise this asks the pruned trial to
    match its parent's measurement, the best of many and lucky more often than not: a pruned
    trial is taken less often than it could be, never on the model's word alone."""
    if objective.mode == "pareto":
        return None
    t = pruned_of(trials, best.number)
    if t is None:
        return None
    loss = _observed_loss(objective, float(best.values[0]), float(t.values[0]))
    return t if loss is not None and loss <= tolerance else None


def _observed_loss(objective: Objective, best: float, value: float) -> float | None:
    """How much worse ``value`` is than ``best``, relative (positive: worse); None when a single
    metric's values are not positive (no relative change)."""
    if objective.mode == "weighted":  # a % change vs the baseline, maximised
        return (best - value) / 100
    if best <= 0 or value <= 0:
        return None
    maximize = objective.directions[0] == StudyDirection.MAXIMIZE
    return 1 - value / best if maximize else value / best - 1
