"""The model's word on evaluated configurations: posterior-mean order, the model's candidate.

``hone tune`` confirms its best-*observed* candidates in interleaved rounds (on a rough response
the GP's smooth mean promotes worse configurations than the best observation does,
docs/decisions/0005-candidates-by-best-observation.md); the model decides only among the
confirmed winners (0012) and, in noisy large spaces, names one extra candidate (0013).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optuna
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from hone.tune.gp.encoding import encode, model_columns, to_params
from hone.tune.gp.model import GPModel, observations


def order_by_model(model: GPModel, study: optuna.Study, candidates: Sequence[dict[str, Any]], *,
                   feasible: Callable[[FrozenTrial], bool],
                   extra: Sequence[tuple[dict[str, Any], float]] = (),
                   noise_cv: float | None = None) -> list[int] | None:
    """Indices of ``candidates`` (Optuna params), best first by the GP's posterior mean, fitted on
    the completed feasible trials and the ``extra`` observations (params, objective value); with
    ``noise_cv``, the measurements' relative sd, as :meth:`GPModel.fit` uses it. None without a
    model (multi-objective, fewer than 2 trials, a candidate missing a knob)."""
    from threadpoolctl import threadpool_limits

    if len(study.directions) != 1 or not candidates:
        return None
    cols = model_columns(study)
    if not cols or any(c.name not in p for p in [*candidates, *(p for p, _ in extra)] for c in cols):
        return None
    sign = 1.0 if study.direction == StudyDirection.MINIMIZE else -1.0
    with threadpool_limits(1):
        obs = observations(study.get_trials(deepcopy=False), cols, sign=sign, warp=model.settings.warp,
                           feasible=feasible, with_running=False, extra=extra, noise_cv=noise_cv)
        if obs is None or len(obs[1]) < 2:
            return None
        gp = model.fit(cols, obs[:2], obs[3])
        levels = np.array([[c.to_level(p[c.name]) for c in cols] for p in candidates], dtype=float)
        mu = gp.predict(encode(cols, levels))
    return sorted(range(len(candidates)), key=lambda i: (float(mu[i]), i))


def _relative_model(model: GPModel, study: optuna.Study, feasible: Callable[[FrozenTrial], bool],
                    extra: Sequence[tuple[dict[str, Any], float]], noise_cv: float | None,
                    percent: bool) -> tuple[Any, float] | None:
    """The GP and the factor that turns a difference of its y into a relative change of the
    objective: on log values (the sd of log y it standardised by), or, for an objective that
    already is a % change (``percent``: A-Tune's weighted score), on the values themselves (their
    sd / 100). ``noise_cv``, a trial's relative sd when known, is the least noise the fit
    allows: a noisy measurement is weighed as one, not followed. None when log values are
    wanted and a value is not positive."""
    cols = model_columns(study)
    sign = 1.0 if study.direction == StudyDirection.MINIMIZE else -1.0
    obs = observations(study.get_trials(deepcopy=False), cols, sign=sign, warp="linear" if percent else "log",
                       feasible=feasible, with_running=False, extra=extra)
    if obs is None or obs[2] < 2:
        return None
    done = [float(t.values[0]) for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if t.values and math.isfinite(t.values[0]) and feasible(t) and all(c.name in t.params for c in cols)]
    raw = np.array(done + [float(v) for _, v in extra])
    if percent:
        spread = float(raw.std()) / 100
    elif bool(np.all(raw > 0)):
        spread = float(np.log(raw).std())
    else:
        return None
    if spread <= 0:
        return None
    noise = (noise_cv / spread) ** 2 if noise_cv and math.isfinite(noise_cv) else 0.0
    noisy = GPModel(dataclasses.replace(model.settings, known_noise=1.0)) if noise else model
    return noisy.fit(cols, (obs[0], obs[1]), noise), spread


def prune_by_model(model: GPModel, study: optuna.Study, params: dict[str, Any], start: dict[str, Any], *,
                   feasible: Callable[[FrozenTrial], bool], tolerance: float,
                   extra: Sequence[tuple[dict[str, Any], float]] = (),
                   noise_cv: float | None = None, percent: bool = False) -> tuple[dict[str, Any], list[str]] | None:
    """``params`` with the changes the GP predicts worth less than ``tolerance`` (a relative
    change of the objective, the whole lot together) put back at their ``start`` values
    (Optuna params of the knobs whose starting value is in their domain). Greedy: each step
    puts back the change whose removal the model predicts costs least. Returns the pruned
    params and the knobs put back, in that order; None when nothing is put back, or without
    a model on a relative scale (:func:`_relative_model`)."""
    from threadpoolctl import threadpool_limits

    if len(study.directions) != 1:
        return None
    cols = model_columns(study)
    if not cols or any(c.name not in params for c in cols):
        return None
    index = {c.name: i for i, c in enumerate(cols)}
    changed = [n for n, v in start.items() if n in index and params[n] != v]
    if not changed:
        return None
    with threadpool_limits(1):
        fitted = _relative_model(model, study, feasible, extra, noise_cv, percent)
        if fitted is None:
            return None
        gp, spread = fitted
        allowed = (tolerance if percent else math.log1p(tolerance)) / spread  # in the model's standardised y

        def predict(rows: list[list[float]]) -> np.ndarray:
            return gp.predict(encode(cols, np.array(rows, dtype=float)))

        current = [c.to_level(params[c.name]) for c in cols]
        top = float(predict([current])[0])
        dropped: list[str] = []
        while changed:
            rows = []
            for n in changed:
                row = list(current)
                row[index[n]] = cols[index[n]].to_level(start[n])
                rows.append(row)
            mu = predict(rows)
            best = int(np.argmin(mu))
            if float(mu[best]) - top > allowed:
                break
            current = rows[best]
            dropped.append(changed.pop(best))
    if not dropped:
        return None
    return to_params(cols, current), dropped
