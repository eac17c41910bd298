"""Knob domains as Optuna distributions, and back.

Why not one categorical per ``values`` list (what A-Tune does): a list of numbers is an
*ordered* domain (page sizes, mmap sizes); an unordered category throws away that 4096 sits
between 1024 and 16384, which TPE/GP/CMA-ES can exploit. Numeric ``values`` are searched
as the integer *index* into the sorted list (param name unchanged, value = index), and
mapped back with :meth:`SearchSpace.decode`. ``log: true`` ranges stay log-scaled. Int
ranges with both ``step`` and ``log`` are searched on the log scale and rounded to the step
(Optuna cannot combine the two).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)

from hone.core.errors import HoneError
from hone.spec.models import KnobBase, Scalar


def holds(dist: BaseDistribution, value: Any) -> bool:
    """Is Optuna param ``value`` inside ``dist`` (its range, step grid or choices)? False for a
    value of another type. Optuna's own check; its version is pinned, so the private name stays."""
    try:
        return bool(dist._contains(dist.to_internal_repr(value)))
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class KnobDimension:
    """One searched knob: its model and the Optuna distribution standing for it."""

    knob: KnobBase
    distribution: BaseDistribution
    ordinal_values: tuple[Scalar, ...] | None = None  # set when the param is an index

    @property
    def name(self) -> str:
        return self.knob.name

    def decode(self, raw: Any) -> Scalar:
        """The knob value for Optuna's internal param value ``raw``."""
        if self.ordinal_values is not None:
            return self.ordinal_values[int(raw)]
        knob = self.knob
        if knob.type == "int":
            value = round(float(raw))
            if knob.step and knob.log and knob.range:
                # log + step: round to the step grid, stay inside the range
                lo = int(knob.range[0])
                step = int(knob.step)
                value = lo + step * round((value - lo) / step)
                value = max(lo, min(int(knob.range[1]), value))
            return value
        if knob.type == "float":
            return float(raw)
        if knob.type == "bool":
            return bool(raw)
        return raw  # type: ignore[no-any-return]

    def encode(self, value: Scalar) -> Any:
        """Optuna's param value for knob value ``value`` (for enqueueing a config)."""
        if self.ordinal_values is not None:
            for i, v in enumerate(self.ordinal_values):
                if v == value or float(v) == float(value):  # type: ignore[arg-type]
                    return i
            raise ValueError(f"{value!r} is not one of {list(self.ordinal_values)}")
        return value


def dimension_for(knob: KnobBase) -> KnobDimension:
    """The distribution for one knob's domain (see the module docstring)."""
    if knob.type == "bool":
        return KnobDimension(knob, CategoricalDistribution([False, True]))
    if knob.values is not None:
        if knob.ordinal:
            ordered = tuple(sorted(knob.values, key=float))  # type: ignore[arg-type]
            return KnobDimension(knob, IntDistribution(0, len(ordered) - 1), ordered)
        return KnobDimension(knob, CategoricalDistribution(list(knob.values)))
    if knob.type in ("int", "float") and knob.range is not None:
        lo, hi = knob.range
        if knob.type == "int":
            if knob.log:
                return KnobDimension(knob, IntDistribution(int(lo), int(hi), log=True))
            step = int(knob.step or 1)
            hi_on_grid = int(lo) + step * ((int(hi) - int(lo)) // step)
            return KnobDimension(knob, IntDistribution(int(lo), hi_on_grid, step=step))
        if knob.log:
            return KnobDimension(knob, FloatDistribution(lo, hi, log=True))
        if knob.step:
            hi_on_grid = lo + knob.step * math.floor((hi - lo) / knob.step + 1e-9)
            return KnobDimension(knob, FloatDistribution(lo, hi_on_grid, step=knob.step))
        return KnobDimension(knob, FloatDistribution(lo, hi))
    raise HoneError(f"knob {knob.name}: no searchable domain (give range, values or type: bool)")


class SearchSpace:
    """The searchable knobs of a spec, in spec order."""

    def __init__(self, knobs: list[KnobBase]) -> None:
        self.dimensions = [dimension_for(k) for k in knobs if k.searchable]
        if not self.dimensions:
            raise HoneError(
                "nothing to tune: the spec has no searchable knob",
                hint="give knobs a range, values or type: bool (dangerous knobs need allow_dangerous: true)",
            )

    @property
    def distributions(self) -> dict[str, BaseDistribution]:
        return {d.name: d.distribution for d in self.dimensions}

    def decode(self, params: dict[str, Any]) -> dict[str, Scalar]:
        """Knob values for an Optuna trial's ``params``."""
        return {d.name: d.decode(params[d.name]) for d in self.dimensions if d.name in params}

    def encode(self, values: dict[str, Scalar]) -> dict[str, Any]:
        """Optuna params for knob values (knobs not searched are left out)."""
        return {d.name: d.encode(values[d.name]) for d in self.dimensions if d.name in values}

    def params_of(self, values: dict[str, Any], only: list[str] | None = None) -> dict[str, Any] | None:
        """Optuna params for knob values as the machine reports them (text or typed), or None
        when a searched knob's value (of ``only`` those knobs) is missing or outside its domain."""
        out: dict[str, Any] = {}
        for d in self.dimensions:
            if only is not None and d.name not in only:
                continue
            try:
                raw = d.encode(d.knob.coerce(values[d.name]))
            except (KeyError, TypeError, ValueError):
                return None
            if not holds(d.distribution, raw):  # coerce checked the knob; this also checks the step grid
                return None
            out[d.name] = raw
        return out

    def size(self) -> float:
        """Number of distinct configurations (inf when a float range is continuous)."""
        total = 1.0
        for d in self.dimensions:
            dist = d.distribution
            if isinstance(dist, CategoricalDistribution):
                total *= len(dist.choices)
            elif isinstance(dist, IntDistribution):
                total *= (dist.high - dist.low) // dist.step + 1
            elif isinstance(dist, FloatDistribution) and dist.step:
                total *= round((dist.high - dist.low) / dist.step) + 1
            else:
                return math.inf
        return total
