"""The bbob-mixint problems of the suite: how they were drawn, and their optima (data/optima.json).

    python benchmarks/tuning/optima.py --draw        # print the draw (seed 2026) that suite/problems.py lists
    python benchmarks/tuning/optima.py --draw-unseen # the functions it left out (the "unseen" group)
    python benchmarks/tuning/optima.py [NAME ...]    # compute missing optima (~1 min for d=5, ~3 min for d=10)

The A-Tune-style problems' optima (suite/atune_style.py) are found by its coordinate search.

d = 5 (4 integer knobs of 2, 4, 8, 16 levels, 1 continuous): every integer combination, the
continuous knob on a 401-point grid, the best 20 refined by a bounded scalar search — exact up to
that search. d = 10 (8 integer, 2 continuous; 10⁶ integer combinations): scipy's differential
evolution with integrality from 8 seeds, each finished by a coordinate search (integer knobs
level by level, continuous knobs by a bounded scalar search) — the best found, not a proof;
the runner reports any engine that finds a better configuration.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "suite"))
import atune_style  # noqa: E402
from problems import BBOB, DATA, UNSEEN, _coco  # noqa: E402


def draw() -> list[tuple[int, int, int]]:
    r = random.Random(2026)
    fs = r.sample(range(1, 25), 14)
    inst = [r.randint(1, 15) for _ in fs]
    return [(f, i, 5 if n < 8 else 10) for n, (f, i) in enumerate(zip(fs, inst, strict=True))]


def _refine(coco: object, x: np.ndarray, n_int: int, lb: np.ndarray, ub: np.ndarray) -> tuple[float, np.ndarray]:
    from scipy.optimize import minimize_scalar

    x = x.copy()
    best = float(coco(x))  # type: ignore[operator]
    improved = True
    while improved:
        improved = False
        for i in range(len(x)):
            if i < n_int:
                for v in range(int(lb[i]), int(ub[i]) + 1):
                    y = x.copy()
                    y[i] = v
                    f = float(coco(y))  # type: ignore[operator]
                    if f < best - 1e-12:
                        best, x, improved = f, y, True
            else:
                def g(c: float, i: int = i, base: np.ndarray = x) -> float:
                    y = base.copy()
                    y[i] = c
                    return float(coco(y))  # type: ignore[operator]
                r = minimize_scalar(g, bounds=(lb[i], ub[i]), method="bounded", options={"xatol": 1e-9})
                if r.fun < best - 1e-12:
                    x[i], best, improved = r.x, float(r.fun), True
    return best, x


def optimum(f: int, i: int, d: int) -> tuple[float, list[float]]:
    coco = _coco(f, i, d)
    n_int = coco.number_of_integer_variables
    lb, ub = np.array(coco.lower_bounds), np.array(coco.upper_bounds)
    found: list[tuple[float, np.ndarray]] = []
    if d == 5:
        grid = np.linspace(lb[-1], ub[-1], 401)
        for ints in itertools.product(*[range(int(lb[k]), int(ub[k]) + 1) for k in range(n_int)]):
            vals = [float(coco([*ints, c])) for c in grid]
            j = int(np.argmin(vals))
            found.append((vals[j], np.array([*ints, grid[j]], dtype=float)))
        found.sort(key=lambda t: t[0])
        found = [_refine(coco, x, n_int, lb, ub) for _, x in found[:20]]
    else:
        from scipy.optimize import differential_evolution

        integrality = [k < n_int for k in range(d)]
        for seed in range(8):
            r = differential_evolution(lambda x: float(coco(x)), list(zip(lb, ub, strict=True)), seed=seed,
                                       integrality=integrality, popsize=40, maxiter=3000, tol=1e-12,
                                       mutation=(0.5, 1.0), recombination=0.9, polish=False)
            found.append(_refine(coco, np.array(r.x), n_int, lb, ub))
    fbest, xbest = min(found, key=lambda t: t[0])
    return fbest, [float(v) for v in xbest]


def draw_unseen() -> list[tuple[int, int, int]]:
    """Every bbob-mixint function :func:`draw` left out, in d=5, an instance each (seed 2027):
    the "unseen" problems, added after the split and never used to decide anything."""
    r = random.Random(2027)
    drawn = {f for f, _, _ in draw()}
    return [(f, r.randint(1, 15), 5) for f in range(1, 25) if f not in drawn]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--draw", action="store_true")
    ap.add_argument("--draw-unseen", action="store_true")
    args = ap.parse_args()
    if args.draw or args.draw_unseen:
        print(draw() if args.draw else draw_unseen())
        return
    path = DATA / "optima.json"
    known = json.loads(path.read_text()) if path.exists() else {}
    for f, i, d in BBOB + UNSEEN:
        name = f"bbob-f{f:02d}-i{i:02d}-d{d:02d}"
        if (args.names and name not in args.names) or (name in known and not args.names):
            continue
        fbest, x = optimum(f, i, d)
        known[name] = {"f": fbest, "x": x}
        print(name, fbest, x, flush=True)
        path.write_text(json.dumps(dict(sorted(known.items())), indent=1) + "\n")
    for name in atune_style.SPECS:
        if (args.names and name not in args.names) or (name in known and not args.names):
            continue
        p = atune_style.make(name)
        cfg = atune_style.search_optimum(p)
        known[name] = {"config": cfg, "score": p.score(p.measure(cfg))}
        print(name, known[name], flush=True)
        path.write_text(json.dumps(dict(sorted(known.items())), indent=1) + "\n")


if __name__ == "__main__":
    main()
