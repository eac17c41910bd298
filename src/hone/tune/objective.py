"""What a trial is scored by: one metric, a weighted % change, or a Pareto front.

Modes (``tune.objective`` or chosen from the metrics):

* ``single`` — the one metric with a non-zero weight, in its own units and direction.
* ``weighted`` — A-Tune's score: Σ wᵢ·sᵢ·(mᵢ − bᵢ)/|bᵢ| · 100 / Σ|wᵢ| (percent, maximized),
  with sᵢ = +1 for maximized and −1 for minimized metrics and bᵢ the baseline mean.
  A baseline of exactly 0 would divide by zero (A-Tune aborts); hone uses the absolute
  change for that metric instead and says so in the result.
* ``pareto`` — every weighted metric is its own objective (Optuna multi-objective).

``constraint: "<= 5"`` on a metric becomes an Optuna constraint value c (feasible when
c ≤ 0), so infeasible trials never become the recommendation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from optuna.study import StudyDirection

from hone.core.errors import HoneError
from hone.spec.models import Metric

MODES = ("single", "weighted", "pareto")


def _slack(m: Metric, v: float) -> float:
    """How far ``v`` misses metric ``m``'s constraint (≤ 0: it holds)."""
    bound = m.constraint_bound()
    assert bound is not None
    op, limit = bound
    if op in ("<=", "<"):
        return v - limit
    if op in (">=", ">"):
        return limit - v
    return abs(v - limit)


@dataclass
class Objective:
    """How metric means (per trial) turn into Optuna values and constraint values."""

    mode: str
    metrics: list[Metric]  # the scored metrics (weight != 0)
    constrained: list[Metric]
    baseline: dict[str, float]

    @property
    def directions(self) -> list[StudyDirection]:
        if self.mode == "single":
            return [_direction(self.metrics[0].goal)]
        if self.mode == "weighted":
            return [StudyDirection.MAXIMIZE]
        return [_direction(m.goal) for m in self.metrics]

    @property
    def units(self) -> list[str | None]:
        """The scored metrics' units: what a verdict on the objective is about (verdict_word)."""
        return [m.unit for m in self.metrics]

    @property
    def label(self) -> str:
        """What the objective value means, for humans (with its unit)."""
        if self.mode == "single":
            m = self.metrics[0]
            return f"{m.name}{f' ({m.unit})' if m.unit else ''}, {m.goal}"
        if self.mode == "weighted":
            return "weighted % change vs baseline (" + ", ".join(
                f"{m.name}×{m.weight:g}" for m in self.metrics) + "), maximize"
        return "Pareto front of " + ", ".join(f"{m.name} ({m.goal})" for m in self.metrics)

    def values(self, means: Mapping[str, float]) -> list[float]:
        """Optuna objective values for one configuration's metric means."""
        if self.mode == "single":
            return [float(means[self.metrics[0].name])]
        if self.mode == "pareto":
            return [float(means[m.name]) for m in self.metrics]
        return [self.weighted_score(means)]

    def weighted_score(self, means: Mapping[str, float]) -> float:
        """The weighted % change vs the baseline (positive = better), in percent."""
        total_w = sum(abs(m.weight) for m in self.metrics) or 1.0
        score = 0.0
        for m in self.metrics:
            base = self.baseline.get(m.name, math.nan)
            sign = 1.0 if m.goal == "maximize" else -1.0
            denom = abs(base) if base and math.isfinite(base) else 1.0
            score += abs(m.weight) * sign * (means[m.name] - (base if math.isfinite(base) else 0.0)) / denom * 100
        return score / total_w

    def constraints(self, means: Mapping[str, float]) -> list[float]:
        """One value per constrained metric; ≤ 0 means the constraint holds."""
        return [_slack(m, float(means[m.name])) for m in self.constrained]

    def violated(self, means: Mapping[str, float]) -> list[Metric]:
        """The constrained metrics of ``means`` whose constraint does not hold."""
        return [m for m in self.constrained if m.name in means and _slack(m, float(means[m.name])) > 0]

    def figure(self, means: Mapping[str, float]) -> tuple[float, str]:
        """One positive number per run for paired confirmation, and its goal.

        single: the metric itself. weighted/pareto: the weighted geometric mean of the
        metrics, each raised to ±weight so that larger is better; if a metric is ≤ 0
        (a geometric mean cannot take it) the heaviest metric alone is used."""
        if self.mode == "single":
            m = self.metrics[0]
            return float(means[m.name]), str(m.goal)
        if all(means[m.name] > 0 for m in self.metrics):
            return self.geometric(means), "maximize"
        m = self.primary
        return float(means[m.name]), str(m.goal)

    def geometric(self, means: Mapping[str, float]) -> float:
        """The weighted geometric mean of the scored metrics, each raised to ±weight so that
        larger is better (NaN when one is missing, not finite or ≤ 0)."""
        got = [float(means.get(m.name, math.nan)) for m in self.metrics]
        if not all(math.isfinite(v) and v > 0 for v in got):
            return math.nan
        total_w = sum(abs(m.weight) for m in self.metrics) or 1.0
        log = sum(abs(m.weight) * (1 if m.goal == "maximize" else -1) * math.log(v)
                  for m, v in zip(self.metrics, got, strict=True))
        return math.exp(log / total_w)

    @property
    def primary(self) -> Metric:
        return max(self.metrics, key=lambda m: abs(m.weight))

    def better(self, a: float, b: float) -> bool:
        """True when objective value ``a`` beats ``b`` (single-objective modes)."""
        return a > b if self.directions[0] == StudyDirection.MAXIMIZE else a < b


def weighted_figures_line(objective: Objective) -> str:
    """What a weighted study's two figures are: the trials' score (A-Tune's, in points) and
    the confirmation's % change (of the weighted geometric mean), which users otherwise mistake
    for one another."""
    return (f"a trial's score (its `best`) is the {objective.label.removesuffix(', maximize')}; the "
            "confirmation's % change is of the weighted geometric mean of the same metrics "
            "(each metric's ratio to its share of the weights: at equal weights a halved latency counts "
            "like a doubled throughput)")


def _direction(goal: str | None) -> StudyDirection:
    return StudyDirection.MAXIMIZE if goal == "maximize" else StudyDirection.MINIMIZE


def build_objective(metrics: list[Metric], mode: str | None = None, baseline: dict[str, float] | None = None,
                    pareto: bool = False) -> Objective:
    """Choose the objective for a spec's metrics (see the module docstring)."""
    scored = [m for m in metrics if m.weight != 0]
    constrained = [m for m in metrics if m.constraint is not None]
    if not scored:
        raise HoneError("nothing to optimise: every metric has weight 0", hint="give one metric a weight")
    if pareto:
        mode = "pareto"
    if mode is None:
        mode = "single" if len(scored) == 1 else "weighted"
    if mode not in MODES:
        raise HoneError(f"unknown objective {mode!r} (expected one of {', '.join(MODES)})")
    if mode == "single" and len(scored) > 1:
        raise HoneError(
            "objective single needs exactly one metric with a non-zero weight, got "
            + ", ".join(m.name for m in scored),
            hint="set weight: 0 on the others, or use objective: weighted / --pareto",
        )
    if mode == "pareto" and len(scored) < 2:
        raise HoneError("--pareto needs at least two metrics with a non-zero weight")
    return Objective(mode=mode, metrics=scored, constrained=constrained, baseline=dict(baseline or {}))
