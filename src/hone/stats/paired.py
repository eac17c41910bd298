"""Paired A/B statistics: per-round log ratios, BCa bootstrap CI, Wilcoxon, verdict.

Rounds are paired by index: ``reference[i]`` and ``candidate[i]`` were measured in the
same interleaved round, so slow drifts of the machine cancel in their ratio.

Verdict rule (DESIGN.md "Statistics we stand on"):

* ``faster`` / ``slower``: the CI of the mean log ratio excludes 0, the Wilcoxon p-value
  is below ``alpha`` and the effect is at least ``threshold`` (fraction, 0.01 = 1%).
  "faster" means better along ``goal`` (lower for minimize, higher for maximize).
* ``no difference``: both tests agree there is no significant effect, or the effect is
  significant but smaller than ``threshold``. ``mde_pct`` says how large an effect this
  N could have detected; callers warn when it exceeds the threshold.
* ``inconclusive``: too few usable rounds for the test to ever reach ``alpha``, or the
  CI and the rank test disagree.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np
from scipy import stats as sps

Goal = Literal["minimize", "maximize"]
Estimator = Literal["mean", "trimmed"]
Verdict = Literal["faster", "slower", "no difference", "inconclusive"]

# Power assumed for the minimal detectable effect (the usual 80%).
MDE_POWER = 0.80
# Asymptotic relative efficiency of Wilcoxon vs the t-test under normality (3/π): the
# rank test needs ~5% more rounds for the same power.
_WILCOXON_ARE = 3.0 / math.pi
# Share cut from each end by the "trimmed" estimator. CPU time on a shared VM has heavy
# tails (kurtosis ~50 measured here): a 20% trimmed mean ignores the rounds another
# process wrecked, and agrees with the rank test far more often than the plain mean.
TRIM = 0.2


@dataclass(frozen=True)
class PairedComparison:
    """Candidate vs reference over ``n`` paired rounds.

    ``ratio`` is candidate/reference (geometric mean of per-round ratios); ``change_pct``
    and ``ci_pct`` are that ratio as a % change ((ratio − 1)·100) with its confidence
    interval; ``p_value`` is the two-sided Wilcoxon signed-rank p on the log ratios;
    ``mde_pct`` is the smallest |change| in % this n could detect with 80% power (inf
    when n is too small for the test to ever reach ``alpha``). ``dropped`` counts pairs
    left out because a value was not positive and finite (no log ratio exists).
    """

    n: int
    ratio: float
    change_pct: float
    ci_pct: tuple[float, float]
    p_value: float
    verdict: Verdict
    mde_pct: float
    improved: bool
    goal: Goal = "minimize"
    threshold: float = 0.01
    alpha: float = 0.05
    confidence: float = 0.95
    dropped: int = 0
    reason: str = ""
    estimator: Estimator = "mean"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci_pct"] = list(self.ci_pct)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PairedComparison:
        d = dict(d)
        d["ci_pct"] = tuple(d["ci_pct"])
        return cls(**d)


def log_ratios(reference: Sequence[float], candidate: Sequence[float]) -> tuple[np.ndarray, int]:
    """Per-round ln(candidate/reference) for pairs where both are positive and finite.

    Returns the log ratios and how many pairs were dropped (zero, negative, NaN)."""
    ref = np.asarray(reference, dtype=float)
    cand = np.asarray(candidate, dtype=float)
    keep = np.isfinite(ref) & np.isfinite(cand) & (ref > 0) & (cand > 0)
    return np.log(cand[keep] / ref[keep]), int((~keep).sum())


def min_rounds_for_alpha(alpha: float) -> int:
    """Smallest n at which the exact two-sided Wilcoxon test can give p < ``alpha``.

    With every sign agreeing, p = 2 / 2**n; n = 6 for alpha = 0.05."""
    n = 1
    while 2.0 / 2**n >= alpha:
        n += 1
    return n


def wilcoxon_p(logr: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p-value of ``logr`` against 0 (1.0 if all zero)."""
    if logr.size == 0 or not np.any(logr != 0):
        return 1.0
    # "pratt" ranks zero differences then drops them: ties at 0 (timer resolution) count
    # as evidence of no difference instead of being thrown away.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = sps.wilcoxon(logr, zero_method="pratt", alternative="two-sided")
        except ValueError:
            return 1.0
    p = float(res.pvalue)
    return 1.0 if math.isnan(p) else p


def location(logr: np.ndarray, estimator: Estimator = "mean", axis: int = -1) -> Any:
    """Mean, or 20% trimmed mean, of log ratios along ``axis``."""
    if estimator == "trimmed":
        return sps.trim_mean(logr, TRIM, axis=axis)
    return np.mean(logr, axis=axis)


def location_se(logr: np.ndarray, estimator: Estimator = "mean") -> float:
    """Standard error of :func:`location`: sd/√n, or the winsorized sd/((1−2g)√n) when trimmed."""
    n = logr.size
    if n < 2:
        return math.nan
    if estimator == "trimmed":
        k = math.floor(TRIM * n)
        srt = np.sort(logr)
        wins = np.clip(logr, srt[k], srt[n - 1 - k])
        return float(wins.std(ddof=1) / ((1 - 2 * k / n) * math.sqrt(n)))
    return float(logr.std(ddof=1) / math.sqrt(n))


def bootstrap_mean_ci(
    logr: np.ndarray, *, confidence: float = 0.95, n_resamples: int = 2000, seed: int | None = 0,
    estimator: Estimator = "mean",
) -> tuple[float, float]:
    """BCa bootstrap CI of the mean (or trimmed mean) of ``logr`` (scipy.stats.bootstrap).

    Degenerate samples (all equal) give the point itself; when BCa cannot be computed
    (tiny n) the percentile interval is used instead."""
    if logr.size == 0:
        return (math.nan, math.nan)
    if logr.size == 1 or float(np.ptp(logr)) == 0.0:
        x = float(logr.mean())
        return (x, x)

    def stat(x: np.ndarray, axis: int = -1) -> Any:
        return location(x, estimator, axis=axis)

    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = sps.bootstrap(
                (logr,),
                stat,
                confidence_level=confidence,
                n_resamples=n_resamples,
                method=method,
                rng=np.random.default_rng(seed),
                vectorized=True,
            )
        lo, hi = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if math.isfinite(lo) and math.isfinite(hi):
            return (lo, hi)
    return (math.nan, math.nan)


def minimal_detectable_log_effect(
    sd: float, n: int, alpha: float = 0.05, power: float = MDE_POWER, *, se: float | None = None
) -> float:
    """Smallest |mean log ratio| detectable with ``power`` at two-sided ``alpha``.

    (t_{1−α/2,n−1} + t_{power,n−1}) · sd/√n, inflated by the Wilcoxon efficiency loss
    (or that sum times ``se`` when a robust standard error is given); inf when n is below
    :func:`min_rounds_for_alpha` (the exact test cannot reach alpha).
    """
    if n < max(2, min_rounds_for_alpha(alpha)):
        return math.inf
    df = n - 1
    t_sum = float(sps.t.ppf(1 - alpha / 2, df) + sps.t.ppf(power, df))
    if se is not None:
        return t_sum * se if math.isfinite(se) else math.inf
    if not math.isfinite(sd):
        return math.inf
    return t_sum * sd / math.sqrt(n) / math.sqrt(_WILCOXON_ARE)


def _pct(log_value: float) -> float:
    if math.isnan(log_value):
        return math.nan
    return math.inf if log_value == math.inf else (math.exp(log_value) - 1.0) * 100.0


def compare_paired(
    reference: Sequence[float],
    candidate: Sequence[float],
    *,
    goal: Goal = "minimize",
    threshold: float = 0.01,
    alpha: float = 0.05,
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int | None = 0,
    estimator: Estimator = "mean",
) -> PairedComparison:
    """Compare paired samples (same unit, any scale) and give a verdict.

    ``estimator="mean"`` (the contract) makes ``ratio`` the geometric mean of per-round
    ratios; ``"trimmed"`` uses the 20% trimmed mean of the log ratios for the ratio, its
    CI and the detectable effect (robust to rounds wrecked by other work on the machine).

    ``threshold`` is the practical effect as a fraction (0.01 = 1%). Pairs with a value
    that is not positive and finite are dropped and counted. Raises ValueError when the
    two samples differ in length or ``goal`` is unknown."""
    if len(reference) != len(candidate):
        raise ValueError(f"paired samples differ in length: {len(reference)} vs {len(candidate)}")
    if goal not in ("minimize", "maximize"):
        raise ValueError(f"goal must be 'minimize' or 'maximize', got {goal!r}")
    logr, dropped = log_ratios(reference, candidate)
    n = int(logr.size)
    if estimator not in ("mean", "trimmed"):
        raise ValueError(f"estimator must be 'mean' or 'trimmed', got {estimator!r}")
    common = dict(goal=goal, threshold=threshold, alpha=alpha, confidence=confidence, dropped=dropped,
                  estimator=estimator)
    if n == 0:
        return PairedComparison(
            n=0, ratio=math.nan, change_pct=math.nan, ci_pct=(math.nan, math.nan), p_value=math.nan,
            verdict="inconclusive", mde_pct=math.inf, improved=False,
            reason="no usable rounds (every pair had a failed, zero or missing value)", **common,
        )
    mean = float(location(logr, estimator))
    lo, hi = bootstrap_mean_ci(logr, confidence=confidence, n_resamples=n_resamples, seed=seed,
                               estimator=estimator)
    p = wilcoxon_p(logr)
    sd = float(logr.std(ddof=1)) if n > 1 else math.nan
    mde_log = minimal_detectable_log_effect(
        sd, n, alpha, se=location_se(logr, estimator) if estimator == "trimmed" else None)
    # A threshold-sized change in % corresponds to this |log ratio|, in either direction.
    thr_log = min(abs(math.log1p(threshold)), abs(math.log1p(-threshold))) if threshold < 1 else math.inf

    ci_excludes_zero = math.isfinite(lo) and math.isfinite(hi) and (lo > 0 or hi < 0)
    significant = p < alpha
    reason = ""
    if n < min_rounds_for_alpha(alpha):
        verdict: Verdict = "inconclusive"
        reason = f"{n} usable rounds: the signed-rank test needs at least {min_rounds_for_alpha(alpha)}"
    elif ci_excludes_zero != significant:
        verdict = "inconclusive"
        reason = "the bootstrap CI and the signed-rank test disagree"
    elif significant and abs(mean) >= thr_log:
        better = mean < 0 if goal == "minimize" else mean > 0
        verdict = "faster" if better else "slower"
    else:
        verdict = "no difference"
        reason = (
            f"significant but below the {threshold:.1%} threshold" if significant
            else "not significant"
        )
    return PairedComparison(
        n=n,
        ratio=math.exp(mean),
        change_pct=_pct(mean),
        ci_pct=(_pct(lo), _pct(hi)),
        p_value=p,
        verdict=verdict,
        mde_pct=_pct(mde_log),
        improved=verdict == "faster",
        reason=reason,
        **common,
    )


def opt_over_default_pct(default_mean: float, optimized_mean: float) -> float:
    """Seed 000's "Opt/Default" column: how much lower the optimized mean is, in %.

    (default − optimized) / default · 100; positive = the optimized variant is faster."""
    if default_mean == 0:
        return math.nan
    return (default_mean - optimized_mean) / default_mean * 100.0
