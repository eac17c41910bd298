"""A weighted objective modelled through its metrics: one GP per metric on log m, the score
computed from them (composite Bayesian optimisation, Astudillo & Frazier 2019).

A-Tune's weighted score Σ cᵢ·mᵢ + c₀ is a sum of % changes: one latency blow-up (×100) or a
throughput ×5 dominates the values the GP sees, and ranks keep only the order. Each metric alone
is positive and, in log, smooth with a noise of about its relative sd. So each metric gets its
own GP of log mᵢ, and the score's posterior at a point is the delta method's normal around the
score of the metrics' medians: mean Σ cᵢ·exp(μᵢ), sd √Σ (cᵢ·exp(μᵢ)·σᵢ)². The log-normal mean
exp(μ + σ²/2) is not used: it explodes where the model extrapolates. Ours: scikit-learn and
Optuna have no composite model for a sampler of this shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from optuna.trial import FrozenTrial, TrialState

from hone.tune.gp.acquisition import latent_sample
from hone.tune.gp.encoding import Column
from hone.tune.gp.model import ATTR_INTERRUPTED, GPModel

ATTR_COMPOSITE = "composite"  # key of the baseline point: {metric: [coefficient, baseline mean]} of a weighted score


class CompositeModel:
    """The score's model as hone's GP code reads one: ``predict`` gives the minimised score,
    standardised on the observed scores, and its sd; ``sample`` one joint draw of it."""

    def __init__(self, gps: list[Any], scales: list[tuple[float, float]], coefs: list[float],
                 center: float, spread: float) -> None:
        self.gps, self.scales, self.coefs = gps, scales, np.asarray(coefs, dtype=float)
        self.center, self.spread = center, spread

    def _score(self, logs: list[np.ndarray]) -> np.ndarray:
        return sum(c * np.exp(v) for c, v in zip(self.coefs, logs, strict=True))  # type: ignore[return-value]

    def predict(self, x: np.ndarray, return_std: bool = False) -> Any:
        mus, sds = [], []
        for gp, (mean, sd) in zip(self.gps, self.scales, strict=True):
            mu, s = gp.predict(x, return_std=True)
            mus.append(mean + sd * mu)
            sds.append(sd * s)
        score = self._score(mus)
        y = -(score - self.center) / self.spread
        if not return_std:
            return y
        var = sum((c * np.exp(m) * s) ** 2 for c, m, s in zip(self.coefs, mus, sds, strict=True))
        return y, np.sqrt(var) / self.spread

    def sample(self, cols: list[Column], cands: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One joint posterior draw of the minimised score at ``cands`` (each metric's latent
        function drawn jointly, the measurement noise left out)."""
        logs = [mean + sd * latent_sample(gp, cols, cands, rng)
                for gp, (mean, sd) in zip(self.gps, self.scales, strict=True)]
        return -(self._score(logs) - self.center) / self.spread


def composite_model(model: GPModel, cols: list[Column], trials: Sequence[FrozenTrial],
                    base: Mapping[str, Any] | None, *, feasible: Callable[[FrozenTrial], bool],
                    exclude: int = -1) -> CompositeModel | None:
    """The composite model of a weighted score from the completed trials' metric means (and the
    measured baseline ``base``, the baseline point with its :data:`ATTR_COMPOSITE`); None when the
    score is not a weighted one, a metric mean is not positive, or fewer than 3 points are known.
    Infeasible and failed trials enter each metric's model just beyond its worst value, as they
    enter the score's (``failed_as_worst``); running ones at its best."""
    spec = (base or {}).get(ATTR_COMPOSITE)
    if not spec:
        return None
    names = sorted(spec)
    coefs = [float(spec[n][0]) for n in names]
    rows: list[dict[str, Any]] = []
    logs: list[list[float]] = []
    if base and base.get("params") is not None:
        rows.append(base["params"])
        logs.append([float(spec[n][1]) for n in names])
    bad, running = [], []
    for t in trials:
        if t.number == exclude or not all(c.name in t.params for c in cols):
            continue
        if t.state == TrialState.COMPLETE and t.values and math.isfinite(t.values[0]):
            means = t.user_attrs.get("means") or {}
            if not feasible(t):
                bad.append(t.params)
            elif all(n in means for n in names):
                rows.append(t.params)
                logs.append([float(means[n]) for n in names])
        elif t.state == TrialState.RUNNING:
            running.append(t.params)
        elif t.state == TrialState.FAIL and not t.user_attrs.get(ATTR_INTERRUPTED):
            bad.append(t.params)
    values = np.array(logs, dtype=float)
    if len(values) < 3 or not np.all(values > 0):
        return None
    values = np.log(values)
    scores = np.exp(values) @ np.array(coefs)
    # a lie per metric: failed and infeasible points just beyond its worst, running ones at its best
    worst = [values[:, i].min() if c > 0 else values[:, i].max() for i, c in enumerate(coefs)]
    best = [values[:, i].max() if c > 0 else values[:, i].min() for i, c in enumerate(coefs)]
    margin = [0.5 * (values[:, i].std() or 1.0) for i in range(len(names))]
    lies = [[w - m if c > 0 else w + m for w, m, c in zip(worst, margin, coefs, strict=True)]] * len(bad) \
        + [best] * len(running)
    all_rows = rows + bad + running
    levels = np.array([[c.to_level(p[c.name]) for c in cols] for p in all_rows], dtype=float)
    full = np.vstack([values, np.array(lies, dtype=float).reshape(-1, len(names))])
    gps, scales = [], []
    for i in range(len(names)):
        v = full[:, i]
        mean, sd = float(v.mean()), float(v.std()) or 1.0
        gps.append(model.fit(cols, (levels, np.round((v - mean) / sd, 12))))
        scales.append((mean, sd))
    spread = float(np.std(scores)) or 1.0
    return CompositeModel(gps, scales, coefs, float(np.median(scores)), spread)
