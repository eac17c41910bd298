"""Tuning problems with known optima (all minimize a positive value).

``space``: name → (kind, values); kind ``int`` (a contiguous integer range), ``ordinal``
(an ordered list of numbers, e.g. page sizes), ``categorical`` (labels). Tables come from
``data/*.csv`` (``measure_tables.py``); synthetic functions are mixed-integer with a known
optimum.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"


@dataclass
class Problem:
    name: str
    space: dict[str, tuple[str, list[Any]]]
    table: dict[tuple[Any, ...], float] = field(default_factory=dict)
    fn: Any = None
    optimum: float = 0.0

    def value(self, cfg: dict[str, Any]) -> float:
        if self.fn is not None:
            return float(self.fn(cfg))
        return self.table[tuple(cfg[n] for n in self.space)]


def _num(text: str) -> Any:
    try:
        f = float(text)
    except ValueError:
        return text
    return int(f) if f.is_integer() else f


def table_problem(name: str) -> Problem:
    with (DATA / f"{name}.csv").open() as fh:
        rows = list(csv.reader(fh))
    head, body = rows[0], rows[1:]
    knobs = head[:-1]
    space: dict[str, tuple[str, list[Any]]] = {}
    for i, k in enumerate(knobs):
        seen: list[Any] = []
        for r in body:
            v = _num(r[i])
            if v not in seen:
                seen.append(v)
        numeric = all(isinstance(v, int | float) for v in seen)
        space[k] = ("ordinal", sorted(seen)) if numeric else ("categorical", seen)
    table = {tuple(_num(x) for x in r[:-1]): float(r[-1]) for r in body}
    return Problem(name, space, table=table, optimum=min(table.values()))


def ellipsoid() -> Problem:
    """4 ints in 0..63 (ill-conditioned bowl) × 2 categoricals with 4 levels."""
    centre = [41, 13, 57, 30]
    weights = [1.0, 4.0, 16.0, 64.0]
    cat_cost = {"a": 0.3, "b": 0.0, "c": 0.6, "d": 0.15}

    def f(c: dict[str, Any]) -> float:
        bowl = sum(w * ((c[f"x{i}"] - centre[i]) / 63) ** 2 for i, w in enumerate(weights))
        return 1.0 + bowl + cat_cost[c["algo"]] + 0.5 * cat_cost[c["mode"]]

    space = {f"x{i}": ("int", list(range(64))) for i in range(4)}
    space["algo"] = ("categorical", list(cat_cost))
    space["mode"] = ("categorical", list(cat_cost))
    return Problem("mixint-ellipsoid", space, fn=f, optimum=1.0)


def sparse() -> Problem:
    """8 ints in 0..31, two of which matter (screening inert knobs)."""

    def f(c: dict[str, Any]) -> float:
        return 1.0 + 3 * ((c["k1"] - 22) / 31) ** 2 + 6 * ((c["k5"] - 6) / 31) ** 2 + 0.01 * sum(
            (c[f"k{i}"] / 31) for i in (0, 2, 3, 4, 6, 7))

    space = {f"k{i}": ("int", list(range(32))) for i in range(8)}
    return Problem("sparse-8of2", space, fn=f, optimum=1.0)


def rosenbrock() -> Problem:
    """Rosenbrock on 3 ints (41 levels over [-2, 2]) × a categorical multiplier: a narrow
    curved valley, the hard case for a model of independent knobs."""
    levels = [round(-2 + 0.1 * i, 1) for i in range(41)]

    def f(c: dict[str, Any]) -> float:
        x = [c["a"], c["b"], c["c"]]
        r = sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2 for i in range(2))
        return (1.0 + r) * {"lz4": 1.0, "zstd": 1.2, "gzip": 1.5}[c["codec"]]

    space = {k: ("ordinal", levels) for k in "abc"}
    space["codec"] = ("categorical", ["gzip", "zstd", "lz4"])
    return Problem("rosenbrock-int", space, fn=f, optimum=1.0)


PROBLEMS = {
    "sqlite": lambda: table_problem("sqlite"),
    "zlib": lambda: table_problem("zlib"),
    "mixint-ellipsoid": ellipsoid,
    "sparse-8of2": sparse,
    "rosenbrock-int": rosenbrock,
}
