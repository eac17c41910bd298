"""``--patience N``: end the search once N trials in a row have not found a real gain.

For a user who pays an hour per benchmark run, the runs after the search has settled are the
expensive ones. A trial *gains* when its objective value beats the best so far (the baseline's
to begin with) by at least ``min_gain`` of the baseline's value (weighted objectives, already a
% change: ``min_gain`` × 100 points); smaller steps do not reset the count, but they add up
against the last real gain (Keras' EarlyStopping, with ``min_delta`` relative). Failed and
infeasible trials gain nothing. The count starts after the sampler's random starts, and it is
read from the study, so a ``--resume`` continues it. The confirmation and the ablation are
unchanged: stopping early saves search runs only (docs/decisions/0076-patience.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import optuna
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from hone.tune.objective import Objective
from hone.tune.study import constraints_from_attrs, finished_trials


@dataclass(frozen=True)
class Patience:
    trials: int  # N trials in a row without a gain end the search
    min_gain: float  # a gain: at least this share of the baseline's objective value
    starts: int = 0  # the sampler's random starts: not counted

    def step(self, objective: Objective) -> float:
        """The smallest change of the objective value that counts as a gain."""
        if objective.mode == "weighted":
            return self.min_gain * 100.0  # the score is a % change vs the baseline
        base = objective.values(objective.baseline)
        return self.min_gain * abs(base[0]) if base and math.isfinite(base[0]) else 0.0

    def stalled(self, trials: list[FrozenTrial], objective: Objective, direction: StudyDirection) -> str | None:
        """Why the search should stop now (``trials``: the finished ones), or None."""
        try:
            base = objective.values(objective.baseline)
        except KeyError:  # no baseline measured yet
            return None
        if len(base) != 1 or len(trials) < self.starts + self.trials:
            return None
        sign = -1.0 if direction == StudyDirection.MAXIMIZE else 1.0  # minimised
        best = sign * base[0] if math.isfinite(base[0]) else math.inf
        step, last = self.step(objective), -1
        ordered = sorted(trials, key=lambda t: t.number)
        for i, t in enumerate(ordered):
            if t.state != TrialState.COMPLETE or not t.values or any(c > 0 for c in constraints_from_attrs(t)):
                continue
            value = sign * float(t.values[0])
            if math.isfinite(value) and value <= best - step and (step > 0 or value < best):
                best, last = value, i
        idle = len(ordered) - 1 - last if last >= self.starts else len(ordered) - self.starts
        if idle < self.trials:
            return None
        since = f"trial {ordered[last].number}" if last >= 0 else "the baseline"
        return (f"--patience {self.trials}: {idle} trials in a row without a gain of "
                f"{100 * self.min_gain:g}% over the best ({since})")

    def check(self, study: optuna.Study, objective: Objective) -> str | None:
        return self.stalled(finished_trials(study), objective, study.direction)

