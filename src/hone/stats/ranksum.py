"""Two groups of runs compared without pairing: the exact Wilcoxon rank-sum (Mann–Whitney) test.

For benchmarks whose runs repeat exactly (counted instructions, a simulator, a replayed table):
there a configuration's runs all land within a fraction of a percent, so a paired test's six
rounds (the fewest a sign-flip test needs for p < 0.05) buy nothing but cost. Pooling the
baseline's first runs with runs interleaved later is sound only when nothing drifted in between,
which the baseline's runs repeating again shows (the caller checks it).

* p — the exact two-sided rank-sum p-value (scipy, ``method="exact"``).
* the change — the Hodges–Lehmann shift: the median of every candidate − reference difference
  of log values, as a ratio.
* its CI — the distribution-free interval between order statistics of those differences (the
  rank-sum test inverted, Bauer 1972): at the smallest sizes it is [min, max], whose exact
  level 1 − 2/C(m + n, n) is at least the asked ``confidence`` when the test can reach ``alpha``.

Written here because scipy gives the test's p but not its confidence interval. The verdict
follows :func:`hone.stats.paired.compare_paired`'s rule, so reports read the same.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from math import comb

import numpy as np

from hone.stats.paired import (
    Goal,
    PairedComparison,
    _pct,
    _range_text,
    _sps,
    beyond,
    rounds_to_settle,
    threshold_log,
)


def min_p(m: int, n: int) -> float:
    """The smallest two-sided p the exact rank-sum test of ``m`` and ``n`` values can give."""
    return min(1.0, 2.0 / comb(m + n, n)) if m and n else 1.0


def rounds_for_alpha(reference_before: int, alpha: float) -> int:
    """The fewest interleaved rounds (one run of each arm) after which ``reference_before``
    earlier runs of the reference and the rounds' runs can reach p < ``alpha``."""
    k = 1
    while min_p(reference_before + k, k) >= alpha:
        k += 1
    return k


@cache
def _u_counts(m: int, n: int) -> tuple[int, ...]:
    """How many of the C(m + n, n) arrangements give each Mann–Whitney U (0 … m·n), no ties."""
    # f(m, n, u) = f(m − 1, n, u − n) + f(m, n − 1, u): the largest value is one group's or the other's
    if m == 0 or n == 0:
        return (1,)
    a, b = _u_counts(m - 1, n), _u_counts(m, n - 1)
    out = [0] * (m * n + 1)
    for u, c in enumerate(a):
        out[u + n] += c
    for u, c in enumerate(b):
        out[u] += c
    return tuple(out)


def _ci_rank(m: int, n: int, confidence: float) -> int:
    """The largest k such that the k-th smallest and k-th largest of the m·n differences bound the
    shift with at least ``confidence`` (1: the extreme differences; 0: no such bound)."""
    total = comb(m + n, n)
    cum, k = 0, 0
    for u, c in enumerate(_u_counts(m, n)):
        cum += c
        if 2 * cum / total > 1 - confidence:
            break
        k = u + 1  # P(U ≤ u) within (1 − confidence)/2: the (u + 1)-th differences bound the shift
    return k


def compare_runs_unpaired(reference: Sequence[float], candidate: Sequence[float], *, goal: Goal = "minimize",
                          threshold: float = 0.01, alpha: float = 0.05,
                          confidence: float = 0.95) -> PairedComparison:
    """Candidate runs against reference runs, unpaired (see the module docstring). ``n`` is the
    number of candidate runs; values that are not positive and finite are dropped and counted."""
    ref = np.array([v for v in reference if math.isfinite(v) and v > 0], dtype=float)
    cand = np.array([v for v in candidate if math.isfinite(v) and v > 0], dtype=float)
    dropped = len(reference) + len(candidate) - ref.size - cand.size
    common = dict(goal=goal, threshold=threshold, alpha=alpha, confidence=confidence, dropped=dropped,
                  estimator="median")
    m, n = int(ref.size), int(cand.size)
    if m == 0 or n == 0:
        return PairedComparison(n=n, ratio=math.nan, change_pct=math.nan, ci_pct=(math.nan, math.nan),
                                p_value=math.nan, verdict="inconclusive", mde_pct=math.inf, improved=False,
                                reason="no usable runs in one of the two groups", **common)  # type: ignore[arg-type]
    lr, lc = np.log(ref), np.log(cand)
    diffs = np.sort((lc[:, None] - lr[None, :]).ravel())
    shift = float(np.median(diffs))
    k = _ci_rank(m, n, confidence)
    lo, hi = (float(diffs[k - 1]), float(diffs[-k])) if k else (-math.inf, math.inf)
    p = 1.0 if np.all(diffs == 0) else float(_sps().mannwhitneyu(lc, lr, alternative="two-sided",
                                                                    method="exact").pvalue)
    # a shift wider than the spread of both groups' runs around their medians separates them completely
    spread = float(np.ptp(np.concatenate([lr - np.median(lr), lc - np.median(lc)])))
    significant = p < alpha
    excludes_zero = lo > 0 or hi < 0
    within = math.isfinite(lo) and math.isfinite(hi) and -threshold * 100 < _pct(lo) and _pct(hi) < threshold * 100
    test = f"rank-sum test of {n} against {m} runs"
    reason = ""
    if min_p(m, n) >= alpha:
        verdict = "inconclusive"
        reason = f"the {test} cannot reach p < {alpha:g}"
    elif significant != excludes_zero:
        verdict, reason = "inconclusive", f"its CI and the {test} disagree; the change {_range_text(lo, hi)}"
    elif significant and beyond(shift, threshold):
        verdict = "faster" if (shift < 0 if goal == "minimize" else shift > 0) else "slower"
        reason = test
    elif within:
        verdict, reason = "equivalent", f"the whole CI lies within ±{threshold:.1%} ({test})"
    else:
        what = f"significant but below the {threshold:.1%} threshold" if significant else "not significant"
        verdict, reason = "inconclusive", f"{what} ({test}): the change {_range_text(lo, hi)}"
    # inconclusive: the paired rounds a fresh comparison would need, from the rounds whose mean
    # has this shift's variance (2/r = 1/m + 1/n)
    needed = (rounds_to_settle(max(1, round(2 * m * n / (m + n))), shift, lo, hi, threshold_log(threshold))
              if verdict == "inconclusive" and threshold < 1 else None)
    return PairedComparison(n=n, ratio=math.exp(shift), change_pct=_pct(shift), ci_pct=(_pct(lo), _pct(hi)),
                            p_value=p, verdict=verdict, mde_pct=_pct(spread),  # type: ignore[arg-type]
                            improved=verdict == "faster", reason=reason, rounds_needed=needed,
                            **common)  # type: ignore[arg-type]


def compare_identical(reference: Sequence[float], candidate: Sequence[float], *, goal: Goal = "minimize",
                      threshold: float = 0.01) -> PairedComparison:
    """Two groups whose runs each repeat identically (a deterministic benchmark: the caller checks
    it): the change is the one difference there is, with no sampling error to bound — the CI is
    that point, p is 0 when the figures differ (1 when they do not), and the verdict is the
    threshold's alone: faster or slower beyond it, equivalent within it."""
    ref, cand = float(reference[0]), float(candidate[0])
    common = dict(n=len(candidate), goal=goal, threshold=threshold, alpha=0.05, confidence=1.0, estimator="exact",
                  mde_pct=0.0)
    if not (math.isfinite(ref) and math.isfinite(cand) and ref > 0 and cand > 0):
        return PairedComparison(ratio=math.nan, change_pct=math.nan, ci_pct=(math.nan, math.nan), p_value=math.nan,
                                verdict="inconclusive", improved=False, reason="no positive figure to compare",
                                **common)  # type: ignore[arg-type]
    shift = math.log(cand / ref)
    if beyond(shift, threshold):
        verdict = "faster" if (shift < 0 if goal == "minimize" else shift > 0) else "slower"
    else:
        verdict = "equivalent"
    reason = (f"runs repeat identically ({len(reference)} of the reference, {len(candidate)} of the candidate): "
              "the difference is exact")
    return PairedComparison(ratio=cand / ref, change_pct=_pct(shift), ci_pct=(_pct(shift), _pct(shift)),
                            p_value=0.0 if cand != ref else 1.0, verdict=verdict,  # type: ignore[arg-type]
                            improved=verdict == "faster", reason=reason, **common)  # type: ignore[arg-type]
