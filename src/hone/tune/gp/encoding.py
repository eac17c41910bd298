"""How knobs become model inputs: levels, and levels → encoded columns.

A configuration is a row of *levels*: a categorical's choice index, an int knob's step index
(ordered value lists reach the sampler as an int index), a float's position in [0, 1]. The
model sees ordered knobs as one input in [0, 1] (log ranges in log space, so neighbouring
values are near each other) and categoricals one-hot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.search_space import IntersectionSearchSpace


@dataclass(frozen=True)
class Column:
    """One knob in the model: ``size`` levels (0 = continuous) and how a level is encoded."""

    name: str
    dist: BaseDistribution
    size: int  # levels of a discrete knob; 0 for a continuous float

    @property
    def categorical(self) -> bool:
        return isinstance(self.dist, CategoricalDistribution)

    @property
    def top(self) -> float:
        """The highest level of an ordered knob: its last step index, or 1.0 for a float."""
        return float(self.size - 1) if self.size else 1.0

    def width(self) -> int:
        return len(self.dist.choices) if self.categorical else 1  # type: ignore[attr-defined]

    def to_level(self, value: Any) -> float:
        """Param value → level (category index, step index, or [0, 1] position of a float)."""
        d = self.dist
        if isinstance(d, CategoricalDistribution):
            return float(d.to_internal_repr(value))
        if isinstance(d, IntDistribution):
            return float((int(value) - d.low) // d.step)
        assert isinstance(d, FloatDistribution)
        if d.log:
            return (math.log(value) - math.log(d.low)) / max(math.log(d.high) - math.log(d.low), 1e-12)
        return (float(value) - d.low) / max(d.high - d.low, 1e-12)

    def from_level(self, level: float) -> Any:
        d = self.dist
        if isinstance(d, CategoricalDistribution):
            return d.choices[int(level)]
        if isinstance(d, IntDistribution):
            return d.low + int(level) * d.step
        assert isinstance(d, FloatDistribution)
        u = min(1.0, max(0.0, float(level)))
        out = math.exp(math.log(d.low) + u * (math.log(d.high) - math.log(d.low))) if d.log \
            else d.low + u * (d.high - d.low)
        if d.step:
            out = d.low + round((out - d.low) / d.step) * d.step
        return float(min(d.high, max(d.low, out)))

    def encode(self, levels: np.ndarray) -> np.ndarray:
        """Levels (n,) → model inputs (n, width): one-hot, or a position in [0, 1]."""
        d = self.dist
        if isinstance(d, CategoricalDistribution):
            return np.eye(len(d.choices))[levels.astype(int)]
        if isinstance(d, IntDistribution):
            if self.size <= 1:
                return np.zeros((len(levels), 1))
            if d.log:
                vals = d.low + levels * d.step
                return ((np.log(vals) - math.log(d.low)) / (math.log(d.high) - math.log(d.low)))[:, None]
            return (levels / (self.size - 1))[:, None]
        return levels[:, None].astype(float)


def columns(space: dict[str, BaseDistribution]) -> list[Column]:
    """The columns of a search space, in name order."""
    out = []
    for name in sorted(space):
        d = space[name]
        if isinstance(d, CategoricalDistribution):
            size = len(d.choices)
        elif isinstance(d, IntDistribution):
            size = (d.high - d.low) // d.step + 1
        else:
            size = 0  # floats, stepped ones too: searched as continuous, rounded on the way out
        out.append(Column(name, d, size))
    return out


def model_columns(study: optuna.Study) -> list[Column]:
    """The columns of the knobs every trial of ``study`` has and that take more than one value."""
    return columns({n: d for n, d in IntersectionSearchSpace().calculate(study).items() if not d.single()})


def enumerable(cols: list[Column], limit: int) -> bool:
    """Is the space small enough to enumerate (at most ``limit`` configurations, no continuous
    knob)? There EI runs over every configuration, length scales are capped at the knob's range,
    and neither the length-scale prior nor the line probes apply."""
    size = math.prod(c.size for c in cols) if all(c.size for c in cols) else math.inf
    return size <= limit


def width(cols: list[Column]) -> int:
    """How many model inputs ``cols`` encode to: one per ordered knob, one per categorical choice."""
    return sum(c.width() for c in cols)


def encode(cols: list[Column], levels: np.ndarray) -> np.ndarray:
    """Rows of levels (n, knobs) → model inputs (n, encoded width)."""
    return np.hstack([c.encode(levels[:, i]) for i, c in enumerate(cols)])


def grid(cols: list[Column]) -> np.ndarray:
    """Every configuration of an enumerable space, as rows of levels."""
    grids = np.meshgrid(*[np.arange(c.size, dtype=float) for c in cols], indexing="ij")
    return np.column_stack([g.ravel() for g in grids])


def random_levels(cols: list[Column], rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniform rows of levels."""
    return np.column_stack([rng.integers(c.size, size=n).astype(float) if c.size else rng.random(n) for c in cols])


def unmeasured(cands: np.ndarray, seen: set[tuple[float, ...]]) -> np.ndarray:
    """Mask of the candidate rows not yet measured or running."""
    return np.array([tuple(r) not in seen for r in cands.tolist()], dtype=bool)


def to_params(cols: list[Column], levels: list[float]) -> dict[str, Any]:
    return {c.name: c.from_level(v) for c, v in zip(cols, levels, strict=True)}
