"""The tuning suite's problems: knob spaces, true metric values, a default and an optimum.

Every problem looks to an engine like a user's benchmark: knobs (int or float ranges, log or
not, ordered value lists, categoricals), one or more metrics with goals and A-Tune weights, and
the configuration the machine runs now (``default``, hone's baseline). Its quality measure is
the one a user reads: the **share of the attainable gain over the default** captured by a
configuration, on the problem's own score — A-Tune's weighted %-change score
(Σ wᵢ·sᵢ·(mᵢ − bᵢ)/|bᵢ| / Σ|wᵢ|, b = the default's true metrics, s = +1 maximised / −1
minimised), which for one metric is its plain % change. ``quality(x) = score(x) / score(opt)``:
1 at the optimum, 0 at the default, negative when worse than the default.

Families (``family``; who wrote the problem in ``source``):

* ``bbob-mixint`` — COCO's mixed-integer suite (the ``coco-experiment`` package): 4 or 8
  integer knobs of 2–16 levels and 1 or 2 continuous ones; the metric is f − f* + 1 (a positive
  cost, 1 at the optimum). f* comes from ``data/optima.json`` (``optima.py``: exhaustive over the
  integer knobs for d = 5, a long mixed-integer search for d = 10).
* ``table`` — replayed measurements of real programs on this machine (``data/NAME.csv`` with a
  ``data/NAME.json`` that gives the metrics, goals, weights, the default and how it was measured).
* ``atune-style`` — A-Tune-style weighted multi-metric problems written for this suite
  (:mod:`atune_style`): wide log ranges, categoricals, optima at range edges, interactions,
  inert knobs, latency blow-ups on bad configurations.
"""

from __future__ import annotations

import csv
import json
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data"
Config = dict[str, Any]


@dataclass(frozen=True)
class Knob:
    """One knob: ``int``/``float`` over [low, high] (``log``), or ``ordinal``/``categorical``
    over ``values`` (ordinal: ordered numbers)."""

    name: str
    kind: str
    values: tuple[Any, ...] = ()
    low: float = 0.0
    high: float = 0.0
    log: bool = False

    def spec(self, default: Any) -> dict[str, Any]:
        """The knob as a hone spec entry (``kind: param``)."""
        out: dict[str, Any] = {"name": self.name, "kind": "param"}
        if self.kind in ("int", "float"):
            out |= {"type": self.kind, "range": [_num(self.low, self.kind), _num(self.high, self.kind)]}
            if self.log:
                out["log"] = True
        else:
            out["values"] = list(self.values)
        out["default"] = default
        return out

    def uniform(self, rng: random.Random) -> Any:
        """A uniform draw (log-uniform for ``log`` ranges)."""
        if self.kind in ("ordinal", "categorical"):
            return rng.choice(self.values)
        if self.log:
            v = math.exp(rng.uniform(math.log(self.low), math.log(self.high)))
        else:
            v = rng.uniform(self.low, self.high)
        return min(int(self.high), max(int(self.low), round(v))) if self.kind == "int" else v

    def size(self) -> int | None:
        """Levels of a discrete knob; None for a float."""
        if self.kind in ("ordinal", "categorical"):
            return len(self.values)
        return int(self.high - self.low) + 1 if self.kind == "int" else None


def _num(v: float, kind: str) -> int | float:
    return int(v) if kind == "int" else float(v)


@dataclass(frozen=True)
class Metric:
    name: str
    goal: str  # minimize | maximize
    weight: float = 1.0
    unit: str = ""


@dataclass
class Problem:
    """A tuning problem; ``measure(config)`` gives the true metric values (noise-free)."""

    name: str
    family: str
    source: str
    knobs: list[Knob]
    metrics: list[Metric]
    default: Config
    measure: Callable[[Config], dict[str, float]]
    optimum: Config
    description: str = ""
    _base: dict[str, float] = field(default_factory=dict, repr=False)

    @property
    def base(self) -> dict[str, float]:
        """The default configuration's true metrics (the score's b)."""
        if not self._base:
            self._base.update(self.measure(self.default))
        return self._base

    def score(self, metrics: dict[str, float]) -> float:
        """A-Tune's weighted % change vs the default (maximise)."""
        total = sum(abs(m.weight) for m in self.metrics) or 1.0
        out = 0.0
        for m in self.metrics:
            b = self.base[m.name]
            sign = 1.0 if m.goal == "maximize" else -1.0
            out += abs(m.weight) * sign * (metrics[m.name] - b) / abs(b) * 100
        return out / total

    @property
    def best_score(self) -> float:
        return self.score(self.measure(self.optimum))

    def quality(self, config: Config | None) -> float:
        """Share of the attainable gain captured by ``config`` (None: the default kept → 0)."""
        if config is None:
            return 0.0
        return self.score(self.measure(self.default | config)) / self.best_score

    def observe(self, config: Config, rng: random.Random, noise: float) -> dict[str, float]:
        """One benchmark run: every metric × (1 + noise·N(0, 1))."""
        true = self.measure(config)
        return {k: v * (1.0 + noise * rng.gauss(0.0, 1.0)) for k, v in true.items()}

    def spec_knobs(self) -> list[dict[str, Any]]:
        return [k.spec(self.default[k.name]) for k in self.knobs]


# ---------------------------------------------------------------------------------- tables

def _cell(text: str) -> Any:
    try:
        f = float(text)
    except ValueError:
        return text
    return int(f) if f.is_integer() else f


def table_problem(name: str) -> Problem:
    """``data/NAME.csv`` (knob columns, then one column per metric) + ``data/NAME.json``."""
    meta = json.loads((DATA / f"{name}.json").read_text())
    metrics = [Metric(m["name"], m["goal"], float(m.get("weight", 1.0)), m.get("unit", "")) for m in meta["metrics"]]
    with (DATA / f"{name}.csv").open() as fh:
        rows = list(csv.reader(fh))
    head, body = rows[0], rows[1:]
    names = [m.name for m in metrics]
    knob_cols = [c for c in head if c not in names]
    knobs = []
    for c in knob_cols:
        i = head.index(c)
        seen = list(dict.fromkeys(_cell(r[i]) for r in body))
        numeric = all(isinstance(v, int | float) for v in seen)
        knobs.append(Knob(c, "ordinal", tuple(sorted(seen))) if numeric else Knob(c, "categorical", tuple(seen)))
    table = {tuple(_cell(r[head.index(c)]) for c in knob_cols): {m: float(r[head.index(m)]) for m in names}
             for r in body}

    def measure(cfg: Config) -> dict[str, float]:
        return dict(table[tuple(cfg[c] for c in knob_cols)])

    default = {k: _cell(str(v)) for k, v in meta["default"].items()}
    p = Problem(name=f"table-{name}", family="table", source=meta["source"], knobs=knobs, metrics=metrics,
                default=default, measure=measure, optimum=default, description=meta.get("description", ""))
    p.optimum = dict(zip(knob_cols, max(table, key=lambda k: p.score(table[k])), strict=True))
    return p


def table_names() -> list[str]:
    return sorted(p.stem for p in DATA.glob("*.csv") if (DATA / f"{p.stem}.json").exists())


# ---------------------------------------------------------------------------- bbob-mixint

@cache
def _coco(function: int, instance: int, dim: int) -> Any:
    import cocoex

    suite = cocoex.Suite("bbob-mixint", f"instances:{instance}", f"function_indices:{function} dimensions:{dim}")
    return suite[0]


def bbob_problem(function: int, instance: int, dim: int) -> Problem:
    """COCO bbob-mixint f``function`` instance ``instance`` in ``dim`` dimensions."""
    coco = _coco(function, instance, dim)
    n_int = coco.number_of_integer_variables
    lb, ub = coco.lower_bounds, coco.upper_bounds
    knobs = [Knob(f"x{i}", "int", low=float(lb[i]), high=float(ub[i])) if i < n_int
             else Knob(f"x{i}", "float", low=float(lb[i]), high=float(ub[i])) for i in range(dim)]
    name = f"bbob-f{function:02d}-i{instance:02d}-d{dim:02d}"
    known = json.loads((DATA / "optima.json").read_text()).get(name)
    if known is None:
        raise KeyError(f"{name}: no optimum in data/optima.json (python benchmarks/tuning/optima.py {name})")
    fstar = float(known["f"])

    def measure(cfg: Config) -> dict[str, float]:
        x = [cfg[k.name] for k in knobs]
        return {"cost": float(coco(x)) - fstar + 1.0}

    # the default: the middle level of every integer knob, 0 for the continuous ones
    default: Config = {k.name: int((k.low + k.high) // 2) if k.kind == "int" else 0.0 for k in knobs}
    optimum = {k.name: (int(v) if k.kind == "int" else float(v)) for k, v in zip(knobs, known["x"], strict=True)}
    return Problem(name=name, family="bbob-mixint", source=f"COCO bbob-mixint ({coco.id})", knobs=knobs,
                   metrics=[Metric("cost", "minimize")], default=default, measure=measure, optimum=optimum,
                   description=coco.name)


#: The bbob-mixint problems of the suite: (function, instance, dim), drawn once at random
#: (``optima.py --draw``: seed 2026, 14 distinct functions of the 24, the first 8 in d=5, the
#: other 6 in d=10; instances 1-15).
BBOB = [
    (4, 1, 5), (11, 10, 5), (17, 2, 5), (22, 2, 5), (24, 5, 5), (8, 14, 5), (18, 2, 5), (14, 8, 5),
    (16, 1, 10), (13, 14, 10), (15, 15, 10), (10, 11, 10), (19, 8, 10), (20, 11, 10),
]

#: The bbob-mixint functions the draw above left out, in d=5 (``optima.py --draw-unseen``: an
#: instance each, seed 2027): split.json's "unseen" group, added after the split, never decided on.
UNSEEN = [(1, 2, 5), (2, 15, 5), (3, 8, 5), (5, 2, 5), (6, 1, 5), (7, 11, 5), (9, 6, 5), (12, 13, 5), (21, 7, 5),
          (23, 11, 5)]


# ---------------------------------------------------------------------------------- all

def all_problems() -> dict[str, Callable[[], Problem]]:
    """Every problem of the suite by name (built on first use: some need cocoex or tables)."""
    import atune_style

    out: dict[str, Callable[[], Problem]] = {}
    for f, i, d in BBOB + UNSEEN:
        out[f"bbob-f{f:02d}-i{i:02d}-d{d:02d}"] = (lambda f=f, i=i, d=d: bbob_problem(f, i, d))
    for name in table_names():
        out[f"table-{name}"] = (lambda name=name: table_problem(name))
    for name, make in atune_style.PROBLEMS.items():
        out[name] = make
    return out
