"""How close to its optimum can ANY search get on sparse-8of2 under 5% noise in 120 evaluations?

sparse-8of2 (problems.py) has two knobs that matter (k1, k5: quadratic bowls, optima 22 and 6)
and six near-inert ones, each costing at most 1% of the value, linearly, from 0 (best) to 31.
Under 5% multiplicative noise a 1% slope is hard to see. Two oracles, each told the function's
form (quadratic in k1 and k5, linear in the six) and fitting it by least squares, spend the whole
budget on the design that estimates six linear slopes best — a balanced two-level design, every
one of the six at 0 or 31 (columns of a Hadamard matrix) — and set each of the six to the end
its slope favours:

* ``given``: also told k1 = 22 and k5 = 6 (held there in every run);
* ``near ±w``: not told k1 and k5, but measures them only at three levels, their optimum and
  ±w around it (balanced, shuffled), and recommends the fitted vertex.

No black-box search knows any of that, so their true regret is a lower bound for every method in
run.py and confirm_model.py (hone's included). The ``near`` oracle shows the price of having to
find k1 and k5: measured far from them, the value and with it the 5% noise grow, and the six
slopes drown; measured too close, the vertex is badly placed.

    python benchmarks/tuning/sparse_bound.py [--budget 120] [--reps 20000]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from scipy.linalg import hadamard

sys.path.insert(0, str(Path(__file__).resolve().parent))
from problems import PROBLEMS

from run import NOISE

K1, K5, TOP = 22, 6, 31
INERT = [0, 2, 3, 4, 6, 7]


def _vertex(lin: float, quad: float, lo: int, hi: int) -> int:
    """The level of the fitted parabola's minimum (the better end of the measured span when it
    does not open upwards)."""
    if quad <= 0:
        return lo if lin + quad * (lo + hi) / TOP > 0 else hi
    return int(np.clip(round(-lin / (2 * quad) * TOP), 0, TOP))


def oracle_regret(budget: int, reps: int, width: int | None, seed: int = 0) -> np.ndarray:
    """True regret % of the oracle's recommendation in each of ``reps`` replications; ``width``
    None = k1 and k5 given, else measured at their optimum and ±width."""
    problem = PROBLEMS["sparse-8of2"]()
    size = 1 << max(3, (budget - 1).bit_length())
    signs = hadamard(size)[:budget, 1:1 + len(INERT)]  # ±1 columns, balanced and orthogonal
    six = np.where(signs > 0, TOP, 0)
    rng = np.random.default_rng(seed)
    out = np.empty(reps)
    for r in range(reps):
        if width is None:
            k1, k5 = np.full(budget, K1), np.full(budget, K5)
        else:
            k1 = rng.permutation(np.resize([K1 - width, K1, K1 + width], budget))
            k5 = rng.permutation(np.resize([max(0, K5 - width), K5, K5 + width], budget))
        truth = np.array([problem.value({"k1": a, "k5": b} | {f"k{k}": int(v) for k, v in zip(INERT, row, strict=True)})
                          for a, b, row in zip(k1, k5, six, strict=True)])
        y = truth * (1 + NOISE * rng.standard_normal(budget))
        x1, x5 = k1 / TOP, k5 / TOP
        cols = [np.ones(budget), signs] if width is None else [np.ones(budget), x1, x1**2, x5, x5**2, signs]
        coef = np.linalg.lstsq(np.column_stack(cols), y, rcond=None)[0]
        rec = {f"k{k}": 0 if b > 0 else TOP for k, b in zip(INERT, coef[-len(INERT):], strict=True)}
        if width is None:
            rec |= {"k1": K1, "k5": K5}
        else:
            rec |= {"k1": _vertex(coef[1], coef[2], int(k1.min()), int(k1.max())),
                    "k5": _vertex(coef[3], coef[4], int(k5.min()), int(k5.max()))}
        out[r] = (problem.value(rec) - problem.optimum) / problem.optimum * 100
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=120)
    ap.add_argument("--reps", type=int, default=5000)
    ap.add_argument("--widths", nargs="*", type=int, default=[2, 4, 6, 9, 12])
    args = ap.parse_args()
    print(f"sparse-8of2, {NOISE:.0%} noise, {args.budget} evaluations, two-level design on the six near-inert "
          f"knobs; mean true regret % of the oracle's recommendation ({args.reps} replications, 95% CI)")
    for width in [None, *args.widths]:
        reg = oracle_regret(args.budget, args.reps, width)
        half = 1.96 * reg.std(ddof=1) / np.sqrt(len(reg))
        label = "k1, k5 given" if width is None else f"k1, k5 measured at their optimum ±{width}"
        print(f"  {label:40s} {reg.mean():5.2f} ± {half:.2f}   more than 1% off in {np.mean(reg > 1 + 1e-9):.0%}")


if __name__ == "__main__":
    main()
