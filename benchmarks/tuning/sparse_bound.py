"""How close to its optimum can ANY search get on sparse-8of2 under 5% noise in 120 evaluations?

sparse-8of2 (problems.py) has two knobs that matter (k1, k5: quadratic bowls) and six
near-inert ones, each costing at most 1% of the value, linearly, from 0 (best) to 31. Under 5%
multiplicative noise a 1% slope is hard to see. This script measures an oracle's expected true
regret: it is *told* k1 = 22 and k5 = 6 and that the six others act linearly, and spends the whole
budget on the design that estimates six linear slopes best (a balanced two-level design: every
knob at 0 or 31, columns of a Hadamard matrix), then sets each knob to the end its
least-squares slope favours. No black-box search knows any of that, so its regret is a lower
bound for every method in run.py and confirm_model.py (hone's included).

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

INERT = [0, 2, 3, 4, 6, 7]


def oracle_regret(budget: int, reps: int, seed: int = 0) -> np.ndarray:
    """True regret % of the oracle's recommendation in each of ``reps`` replications."""
    problem = PROBLEMS["sparse-8of2"]()
    size = 1 << max(3, (budget - 1).bit_length())
    signs = hadamard(size)[:budget, 1:1 + len(INERT)]  # ±1 columns, balanced and orthogonal
    configs = []
    for row in signs:
        cfg = {f"k{i}": 0 for i in range(8)} | {"k1": 22, "k5": 6}
        cfg |= {f"k{k}": 31 if s > 0 else 0 for k, s in zip(INERT, row, strict=True)}
        configs.append(cfg)
    truth = np.array([problem.value(c) for c in configs])
    design = np.column_stack([np.ones(budget), signs])
    rng = np.random.default_rng(seed)
    out = np.empty(reps)
    for r in range(reps):
        y = truth * (1 + NOISE * rng.standard_normal(budget))
        slopes = np.linalg.lstsq(design, y, rcond=None)[0][1:]
        rec = {f"k{i}": 0 for i in range(8)} | {"k1": 22, "k5": 6}
        rec |= {f"k{k}": 0 if b > 0 else 31 for k, b in zip(INERT, slopes, strict=True)}
        out[r] = (problem.value(rec) - problem.optimum) / problem.optimum * 100
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=120)
    ap.add_argument("--reps", type=int, default=20000)
    args = ap.parse_args()
    reg = oracle_regret(args.budget, args.reps)
    half = 1.96 * reg.std(ddof=1) / np.sqrt(len(reg))
    print(f"sparse-8of2, {NOISE:.0%} noise, {args.budget} evaluations, oracle (k1, k5 given, two-level design "
          f"on the six others): mean true regret {reg.mean():.2f}% (95% CI ±{half:.2f}), "
          f"more than 1% off in {np.mean(reg > 1 + 1e-9):.0%} of {args.reps} replications")


if __name__ == "__main__":
    main()
