"""The smallest change a planned comparison detects, before any run of it is spent.

A user who pays an hour a run should learn, once the baseline has shown the noise, which gains
the confirmation can show at all: below that size it will most likely end "inconclusive",
whatever the search finds. The exact rank tests hone's comparisons use have no closed-form
power at these sizes (3–8 runs an arm, where the t approximation is 5–20% optimistic), so the
power is simulated: normal runs, a seeded Monte Carlo of the exact test (scipy, vectorised), and
the shift that reaches the power found by bisection (common random numbers keep it monotone).
"""

from __future__ import annotations

import functools
import math
from typing import Literal

import numpy as np

from hone.stats.paired import MDE_POWER, _sps

Design = Literal["paired", "pooled"]


def detectable_shift(design: Design, m: int, n: int = 0, *, alpha: float = 0.05, power: float = MDE_POWER,
                     draws: int = 1000, seed: int = 0) -> float:
    """The smallest shift, in standard deviations of one run, that the exact two-sided test
    detects (p < ``alpha``) in ``power`` of the draws; inf when it cannot reach ``alpha``.

    ``paired``: ``m`` interleaved rounds of two arms, the signed-rank test of the m differences.
    ``pooled``: ``m`` runs of the candidate against ``n`` of the baseline, the rank-sum test.
    Cached: a tune session asks for its confirmation's figure, then its comparisons' mde."""
    if design not in ("paired", "pooled"):
        raise ValueError(f"design must be 'paired' or 'pooled', got {design!r}")
    return _shift(design, m, n if design == "pooled" else 0, alpha, power, draws, seed)


@functools.cache
def _shift(design: Design, m: int, n: int, alpha: float, power: float, draws: int, seed: int) -> float:
    if m < 1 or (design == "pooled" and n < 1):
        return math.inf
    rng = np.random.default_rng(seed)
    sps = _sps()
    if design == "paired":
        noise = rng.standard_normal((draws, m)) * math.sqrt(2.0)  # a difference of two runs

        def p(shift: float) -> np.ndarray:
            return sps.wilcoxon(noise + shift, alternative="two-sided", method="exact", axis=1).pvalue
    else:
        cand, ref = rng.standard_normal((draws, m)), rng.standard_normal((draws, n))

        def p(shift: float) -> np.ndarray:
            return sps.mannwhitneyu(cand + shift, ref, alternative="two-sided", method="exact", axis=1).pvalue

    def reached(shift: float) -> bool:
        return float(np.mean(p(shift) < alpha)) >= power

    hi = 16.0
    if not reached(hi):
        return math.inf
    lo = 0.0
    for _ in range(14):  # to 0.001 sd, below the Monte Carlo's own ~1%
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if reached(mid) else (mid, hi)
    return hi


def detectable_gain_pct(cv: float, design: Design, m: int, n: int = 0, *, alpha: float = 0.05) -> float:
    """:func:`detectable_shift` at a run-to-run relative sd ``cv`` (0.05 = 5%), as a % change
    (the runs' log scale: a shift of k·cv is a ratio of exp(k·cv)); inf when undetectable, nan
    when ``cv`` is not a finite positive number."""
    if not (math.isfinite(cv) and cv > 0):
        return math.nan
    shift = detectable_shift(design, m, n, alpha=alpha)
    return math.inf if math.isinf(shift) else (math.exp(shift * math.log1p(cv)) - 1.0) * 100.0


def noise_upper_bound(cv: float, runs: int, level: float = 0.9) -> float:
    """The run-to-run relative sd that ``runs`` runs showing ``cv`` do not rule out, at one-sided
    ``level`` (normal runs: (runs−1)·s²/σ² is χ² with runs−1 degrees of freedom). Three runs
    leave up to 3.1× the measured noise at 90%, two up to 8×: a figure planned from them says so.
    nan below two runs or for a cv that is not a finite positive number."""
    if runs < 2 or not (math.isfinite(cv) and cv > 0):
        return math.nan
    dof = runs - 1
    return cv * math.sqrt(dof / float(_sps().chi2.ppf(1.0 - level, dof)))
