"""The model's word on evaluated configurations: posterior-mean order, the model's candidate.

``hone tune`` confirms its best-*observed* candidates in interleaved rounds (on a rough response
the GP's smooth mean promotes worse configurations than the best observation does,
docs/decisions/0005-candidates-by-best-observation.md); the model decides only among the
confirmed winners (0012) and, in noisy large spaces, names one extra candidate (0013).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optuna
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial

from hone.tune.gp.encoding import encode, model_columns
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
