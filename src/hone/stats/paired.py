"""Paired A/B statistics: per-round log ratios, BCa bootstrap CI, Wilcoxon, verdict.

Rounds are paired by index: ``reference[i]`` and ``candidate[i]`` were measured in the
same interleaved round, so slow drifts of the machine cancel in their ratio.

Verdict rule (docs/statistics.md):

* ``faster`` / ``slower``: the CI of the mean log ratio excludes 0, the Wilcoxon p-value
  is below ``alpha`` and the effect is at least ``threshold`` (fraction, 0.01 = 1%).
  "faster" means better along ``goal`` (lower for minimize, higher for maximize).
* ``equivalent``: the whole CI lies inside ±``threshold`` — an equivalence test (the
  two one-sided tests at the CI's level): a change that matters is ruled out.
* ``inconclusive``: anything else — not significant with a CI wider than the threshold,
  significant but smaller than the threshold with a CI reaching past it, too few usable
  rounds for the test to ever reach ``alpha``, or a CI and a test that disagree. Not
  significant is not "no difference": ``reason`` says the range of changes that could not
  be ruled out, and ``rounds_needed`` about how many rounds would settle it.

Estimators (what "the ratio", its CI and its test are):

* ``mean`` — geometric mean of per-round ratios, BCa bootstrap CI, Wilcoxon signed-rank p.
* ``trimmed`` — 20% trimmed mean of the log ratios, BCa bootstrap CI, Wilcoxon p.
* ``median`` — median of the log ratios, its exact distribution-free CI (order statistics,
  binomial) and the sign test: the optimal rank test when rounds are peaked with heavy
  tails (Laplace-like), which is what CPU time on this VM gives — the host moves the vCPU
  between speed levels every ~0.2–1 s, so most rounds pair tightly (±1–2%) and the rounds
  that straddle a switch are off by 10–25%.
* ``welsch`` — the Welsch (Gaussian-kernel) redescending M-estimate of the log ratios, a
  sign-flip randomization test of its score and the CI from inverting that test. The ψ width
  is :data:`WELSCH_WIDTH` × the rounds' own spread (1.4826·median|x − centre|), so it finds
  the tight core of rounds that paired cleanly and gives the rounds that straddled a host
  speed change almost no weight, where the median still counts their signs. The test is
  exact by design: under no change each round's sign is a fair coin (the variants ran in
  a random order), so flipping signs at random — all 2ⁿ patterns up to n = 12, else
  :data:`SIGN_FLIP_DRAWS` seeded draws — gives the statistic's null distribution, whatever
  the shape of the noise.
* ``auto`` — Hogg's adaptive choice (Hogg, Fisher & Randles 1975): ``welsch`` when the
  rounds' tail ratio (:func:`tail_ratio`) exceeds :data:`HEAVY_TAIL` (and is finite: not
  most rounds tied exactly, as repeatable counts are), else ``trimmed``. The
  tail ratio depends only on |log ratio|, which under no change (a distribution
  symmetric about 0) is independent of the signs the tests look at, so choosing the test
  from it keeps the false-positive rate at ``alpha``.
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any, Literal, get_args

import numpy as np

Goal = Literal["minimize", "maximize"]


def _sps() -> ModuleType:
    """scipy.stats, imported on first use: it takes about half a second, which every command
    that imports this module (help, status, rollback) would otherwise pay."""
    return importlib.import_module("scipy.stats")

Estimator = Literal["mean", "trimmed", "median", "welsch", "auto"]
ESTIMATORS: tuple[str, ...] = get_args(Estimator)
Verdict = Literal["faster", "slower", "equivalent", "inconclusive"]
#: Verdicts that settle the question (the experiment may stop there).
DECISIVE: tuple[str, ...] = ("faster", "slower", "equivalent")

# Power assumed for the minimal detectable effect (the usual 80%).
MDE_POWER = 0.80
# Asymptotic relative efficiency of Wilcoxon vs the t-test under normality (3/π): the
# rank test needs ~5% more rounds for the same power.
_WILCOXON_ARE = 3.0 / math.pi
# Share cut from each end by the "trimmed" estimator. CPU time on a shared VM has heavy
# tails (kurtosis ~50 measured here): a 20% trimmed mean ignores the rounds another
# process wrecked, and agrees with the rank test far more often than the plain mean.
TRIM = 0.2
# auto picks the median and sign test above this tail ratio. The ratio is 1.00 for normal
# rounds, 1.11 for logistic (where Wilcoxon is the optimal rank test) and 1.38 for Laplace
# (where the sign test is); 1.25 sits between. Rounds measured here: 1.9–2.9.
HEAVY_TAIL = 1.25
# 1.4826·median|x| is the normal-consistent scale of |x| (MAD about 0).
_MAD_NORMAL = 1.4826
# Width of the Welsch ψ as a share of the rounds' spread: 0.5 finds the core of cleanly
# paired rounds; a wider kernel lets straddling rounds back in (docs/decisions/0002-welsch-estimator.md).
WELSCH_WIDTH = 0.5
# Random sign patterns for the randomization test above EXACT_FLIP_MAX_N rounds. The
# Monte-Carlo p-value (1 + hits)/(draws + 1) is itself a valid p-value at any draw count.
SIGN_FLIP_DRAWS = 4000
EXACT_FLIP_MAX_N = 12


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
    estimator: Estimator | Literal["exact"] = "mean"  # exact: runs that repeat identically (ranksum)
    tail_ratio: float = math.nan
    rounds_needed: int | None = None  # inconclusive: about how many rounds would settle it

    @property
    def decisive(self) -> bool:
        return self.verdict in DECISIVE

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci_pct"] = list(self.ci_pct)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PairedComparison:
        d = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        d["ci_pct"] = tuple(d["ci_pct"])
        if d.get("verdict") == "no difference":  # format 1 results: "not significant" was all it said
            d["verdict"] = "inconclusive"
        return cls(**d)


def log_ratios(reference: Sequence[float], candidate: Sequence[float]) -> tuple[np.ndarray, int]:
    """Per-round ln(candidate/reference) for pairs where both are positive and finite.

    Returns the log ratios and how many pairs were dropped (zero, negative, NaN)."""
    ref = np.asarray(reference, dtype=float)
    cand = np.asarray(candidate, dtype=float)
    keep = np.isfinite(ref) & np.isfinite(cand) & (ref > 0) & (cand > 0)
    return np.log(cand[keep] / ref[keep]), int((~keep).sum())


def min_rounds_for_alpha(alpha: float) -> int:
    """Smallest n at which the exact two-sided Wilcoxon (or sign) test can give p < ``alpha``.

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
            res = _sps().wilcoxon(logr, zero_method="pratt", alternative="two-sided")
        except ValueError:
            return 1.0
    p = float(res.pvalue)
    return 1.0 if math.isnan(p) else p


def location(logr: np.ndarray, estimator: Estimator = "mean", axis: int = -1) -> Any:
    """Mean, 20% trimmed mean or median of log ratios along ``axis`` (the Welsch
    M-estimate of a 1-D sample)."""
    if estimator == "trimmed":
        return _sps().trim_mean(logr, TRIM, axis=axis)
    if estimator == "median":
        return np.median(logr, axis=axis)
    if estimator == "welsch":
        return welsch_location(logr)
    return np.mean(logr, axis=axis)


def tail_ratio(logr: np.ndarray) -> float:
    """How heavy the tails of the log ratios are: √mean(x²) / (1.4826·median|x|).

    1 for normal rounds, ~1.38 for Laplace, larger for rounds with wild outliers. A function
    of |x| only (see the module docstring for why that matters); NaN when undefined."""
    a = np.abs(np.asarray(logr, dtype=float))
    if a.size < 2:
        return math.nan
    mad = float(np.median(a)) * _MAD_NORMAL
    rms = float(np.sqrt(np.mean(a * a)))
    if mad == 0.0:
        return math.inf if rms > 0 else math.nan
    return rms / mad


def resolve_estimator(logr: np.ndarray, estimator: Estimator) -> tuple[Estimator, float]:
    """The estimator ``auto`` stands for on these rounds, and the tail ratio it looked at
    (NaN when ``estimator`` was not ``auto``)."""
    if estimator != "auto":
        return estimator, math.nan
    r = tail_ratio(logr)
    # Infinite: most rounds tie exactly (repeatable counts such as instructions). The Welsch
    # width, a share of the rounds' spread, collapses there; the trimmed mean copes.
    return ("welsch" if HEAVY_TAIL < r < math.inf else "trimmed"), r


def sign_test_p(logr: np.ndarray) -> float:
    """Two-sided exact sign test of ``logr`` against 0 (scipy.stats.binomtest).

    Zero differences count half for each side (rounded toward no evidence): a timer tie is
    evidence of no difference, not a round to throw away."""
    pos, neg = int((logr > 0).sum()), int((logr < 0).sum())
    half_zeros = int((logr == 0).sum()) // 2
    n = pos + neg + 2 * half_zeros
    if n == 0 or pos == neg:
        return 1.0
    return float(_sps().binomtest(min(pos, neg) + half_zeros, n, 0.5).pvalue)


def median_ci(logr: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Exact distribution-free CI of the median: order statistics x_(k+1) .. x_(n−k) with
    k the largest count for which P(Binomial(n, ½) ≤ k) ≤ (1 − confidence)/2. Infinite
    bounds when n is too small for that confidence."""
    n = logr.size
    if n == 0:
        return (math.nan, math.nan)
    srt = np.sort(logr)
    tail = (1.0 - confidence) / 2.0
    k = int(_sps().binom.ppf(tail, n, 0.5))
    if _sps().binom.cdf(k, n, 0.5) > tail:
        k -= 1
    if k < 0:
        return (-math.inf, math.inf)
    return (float(srt[k]), float(srt[n - 1 - k]))


def welsch_width(resid: np.ndarray) -> float:
    """Width c of the Welsch ψ for residuals ``resid``: :data:`WELSCH_WIDTH` × their
    normal-consistent spread about 0 (mean |r| when more than half are exactly 0, as timer
    ties give; 0 when all are)."""
    a = np.abs(resid)
    spread = float(np.median(a)) if a.size else 0.0
    if spread == 0.0:
        spread = float(a.mean()) if a.size else 0.0
    return WELSCH_WIDTH * _MAD_NORMAL * spread


def _welsch_psi(r: np.ndarray, c: float) -> np.ndarray:
    return r * np.exp(-0.5 * (r / c) ** 2)


def welsch_location(logr: np.ndarray, max_iter: int = 200) -> float:
    """Welsch M-estimate of location: iteratively reweighted mean from the median, weights
    exp(−½((x − μ)/c)²) with c = :func:`welsch_width` of the residuals about the median
    (Hampel's advice: start a redescending estimator at the median, scale from the MAD)."""
    x = np.asarray(logr, dtype=float)
    if x.size == 0:
        return math.nan
    mu = float(np.median(x))
    c = welsch_width(x - mu)
    if c == 0.0:
        return mu
    for _ in range(max_iter):
        w = np.exp(-0.5 * ((x - mu) / c) ** 2)
        nxt = float(np.dot(w, x) / w.sum())
        if abs(nxt - mu) <= 1e-12 * max(1.0, abs(mu)):
            return nxt
        mu = nxt
    return mu


def sign_patterns(n: int, seed: int | None = 0) -> tuple[np.ndarray, bool]:
    """±1 sign patterns for the randomization test and whether they are all 2ⁿ of them
    (n ≤ :data:`EXACT_FLIP_MAX_N`) or :data:`SIGN_FLIP_DRAWS` seeded random draws."""
    if n <= EXACT_FLIP_MAX_N:
        bits = (np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1
        return 1.0 - 2.0 * bits, True
    rng = np.random.default_rng(seed)
    return np.where(rng.random((SIGN_FLIP_DRAWS, n)) < 0.5, -1.0, 1.0), False


def welsch_test_p(logr: np.ndarray, shift: float = 0.0, patterns: tuple[np.ndarray, bool] | None = None,
                  seed: int | None = 0) -> float:
    """Two-sided sign-flip randomization p-value of "the log ratios are symmetric about
    ``shift``", statistic |Σ ψ(x − shift)| with the Welsch ψ of width
    :func:`welsch_width` (x − shift). The width depends on |x − shift| only, so it is the
    same for every sign pattern and the test stays exact."""
    r = np.asarray(logr, dtype=float) - shift
    if r.size == 0:
        return 1.0
    c = welsch_width(r)
    if c == 0.0:
        return 1.0
    signs, exact = patterns if patterns is not None else sign_patterns(r.size, seed)
    psi = _welsch_psi(r, c)
    observed = abs(float(psi.sum()))
    # Ties (symmetric data) must count as "as extreme": compare with a rounding margin.
    hits = int(np.sum(np.abs(signs @ psi) >= observed - 1e-12 * float(np.abs(psi).sum())))
    return hits / signs.shape[0] if exact else (hits + 1) / (signs.shape[0] + 1)


def welsch_ci(logr: np.ndarray, confidence: float = 0.95, seed: int | None = 0,
              centre: float | None = None) -> tuple[float, float]:
    """CI of the Welsch location by test inversion: the shifts the randomization test of
    :func:`welsch_test_p` does not reject at 1 − ``confidence`` (the same sign patterns for
    every shift). Each bound is found by bisection between the estimate and a shift beyond
    the data; infinite when even that is not rejected (too few rounds)."""
    x = np.asarray(logr, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan)
    alpha = 1.0 - confidence
    patterns = sign_patterns(x.size, seed)
    mu = welsch_location(x) if centre is None else centre
    span = float(np.ptp(x)) or max(abs(mu), 1e-12)

    def accepted(shift: float) -> bool:
        return welsch_test_p(x, shift, patterns) > alpha

    if not accepted(mu):  # never seen on real rounds; no interval around the estimate to report
        return (math.nan, math.nan)
    bounds = []
    for direction in (-1.0, 1.0):
        outer = (float(x.min()) if direction < 0 else float(x.max())) + direction * span
        if accepted(outer):
            bounds.append(direction * math.inf)
            continue
        inner = mu
        for _ in range(50):
            mid = 0.5 * (inner + outer)
            if accepted(mid):
                inner = mid
            else:
                outer = mid
            if abs(outer - inner) <= 1e-9 * span:
                break
        bounds.append(inner)
    return (bounds[0], bounds[1])


def location_se(logr: np.ndarray, estimator: Estimator = "mean", *,
                ci: tuple[float, float] | None = None, confidence: float = 0.95) -> float:
    """Standard error of :func:`location`: sd/√n, the winsorized sd/((1−2g)√n) when trimmed;
    for ``median`` and ``welsch`` the half-width of their CI (``ci`` at ``confidence`` when
    the caller has it, else computed at 95%) over the normal quantile — what their exact
    tests really resolve, steadier at small n than an asymptotic formula."""
    n = logr.size
    if n < 2:
        return math.nan
    if estimator in ("median", "welsch"):
        if ci is None:
            ci, confidence = (median_ci(logr, 0.95) if estimator == "median" else welsch_ci(logr, 0.95)), 0.95
        lo, hi = ci
        z = float(_sps().norm.ppf(0.5 + confidence / 2))
        return (hi - lo) / (2 * z) if math.isfinite(hi - lo) else math.nan
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
            res = _sps().bootstrap(
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
    (or that sum times ``se`` when a robust standard error is given), and below 10 rounds by
    the exact test's own power (:func:`_small_n_factor`, docs/decisions/0113); inf when n is below
    :func:`min_rounds_for_alpha` (the exact test cannot reach alpha).
    """
    if n < max(2, min_rounds_for_alpha(alpha)):
        return math.inf
    df = n - 1
    t_sum = float(_sps().t.ppf(1 - alpha / 2, df) + _sps().t.ppf(power, df))
    factor = _small_n_factor(n, alpha, power, t_sum / math.sqrt(n) / math.sqrt(_WILCOXON_ARE))
    if se is not None:
        return t_sum * se * factor if math.isfinite(se) else math.inf
    if not math.isfinite(sd):
        return math.inf
    return t_sum * sd / math.sqrt(n) / math.sqrt(_WILCOXON_ARE) * factor


#: Below this many rounds the exact test's few attainable p-values make the t approximation
#: optimistic (at 6 rounds at p < 0.05 only all six differences of one sign count: 22% more).
_EXACT_BELOW = 10


def _small_n_factor(n: int, alpha: float, power: float, approx: float) -> float:
    """The exact signed-rank test's detectable shift (simulated and cached,
    :mod:`hone.stats.detectable`) over the t approximation's (``approx``, in sd of the
    differences), below :data:`_EXACT_BELOW` rounds; 1 from there on, where the two agree within
    ~2%. Never below 1: the approximation is kept where it is the more cautious."""
    if n >= _EXACT_BELOW:
        return 1.0
    from hone.stats.detectable import detectable_shift  # it builds on this module

    exact = detectable_shift("paired", n, alpha=alpha, power=power) / math.sqrt(2.0)  # in sd of the differences
    return max(1.0, exact / approx) if math.isfinite(exact) else math.inf


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
    CI and the detectable effect (robust to rounds wrecked by other work on the machine);
    ``"median"`` the median, its exact CI and the sign test; ``"welsch"`` the Welsch
    M-estimate, its randomization test and the CI inverted from it; ``"auto"`` picks
    ``welsch`` or ``trimmed`` from the tails of these rounds (the module docstring says why that is
    sound). The result's ``estimator`` is the one actually used.

    ``threshold`` is the practical effect as a fraction (0.01 = 1%). Pairs with a value
    that is not positive and finite are dropped and counted. Raises ValueError when the
    two samples differ in length or ``goal`` is unknown."""
    if len(reference) != len(candidate):
        raise ValueError(f"paired samples differ in length: {len(reference)} vs {len(candidate)}")
    if goal not in ("minimize", "maximize"):
        raise ValueError(f"goal must be 'minimize' or 'maximize', got {goal!r}")
    logr, dropped = log_ratios(reference, candidate)
    n = int(logr.size)
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {', '.join(ESTIMATORS)}, got {estimator!r}")
    used, tails = resolve_estimator(logr, estimator)
    common = dict(goal=goal, threshold=threshold, alpha=alpha, confidence=confidence, dropped=dropped,
                  estimator=used, tail_ratio=tails)
    if n == 0:
        return PairedComparison(
            n=0, ratio=math.nan, change_pct=math.nan, ci_pct=(math.nan, math.nan), p_value=math.nan,
            verdict="inconclusive", mde_pct=math.inf, improved=False,
            reason="no usable rounds (every pair had a failed, zero or missing value)", **common,
        )
    mean = float(location(logr, used))
    if used == "median":
        lo, hi = median_ci(logr, confidence)
        p = sign_test_p(logr)
    elif used == "welsch":
        lo, hi = welsch_ci(logr, confidence, seed=seed, centre=mean)
        p = welsch_test_p(logr, seed=seed)
    else:
        lo, hi = bootstrap_mean_ci(logr, confidence=confidence, n_resamples=n_resamples, seed=seed, estimator=used)
        p = wilcoxon_p(logr)
    sd = float(logr.std(ddof=1)) if n > 1 else math.nan
    mde_log = minimal_detectable_log_effect(
        sd, n, alpha,
        se=location_se(logr, used, ci=(lo, hi) if used in ("median", "welsch") else None, confidence=confidence)
        if used != "mean" else None)
    test = {"median": "sign test", "welsch": "randomization test"}.get(used, "signed-rank test")
    thr_log = threshold_log(threshold)

    ci_excludes_zero = math.isfinite(lo) and math.isfinite(hi) and (lo > 0 or hi < 0)
    # Equivalence is judged in % (what the report shows): the CI inside ±threshold.
    within = math.isfinite(lo) and math.isfinite(hi) and -threshold * 100 < _pct(lo) and _pct(hi) < threshold * 100
    significant = p < alpha
    span = _range_text(lo, hi)
    reason = ""
    needed: int | None = None
    if n < min_rounds_for_alpha(alpha):
        verdict: Verdict = "inconclusive"
        reason = f"{n} usable rounds: the {test} needs at least {min_rounds_for_alpha(alpha)}"
        needed = min_rounds_for_alpha(alpha)
    elif ci_excludes_zero != significant:
        verdict = "inconclusive"
        ci_kind = {"median": "exact", "welsch": "test-inversion"}.get(used, "bootstrap")
        reason = f"the {ci_kind} CI and the {test} disagree; the change {span}"
        needed = rounds_to_settle(n, mean, lo, hi, thr_log)
    elif significant and beyond(mean, threshold):
        better = mean < 0 if goal == "minimize" else mean > 0
        verdict = "faster" if better else "slower"
    elif within:
        verdict = "equivalent"
        reason = f"the whole CI lies within ±{threshold:.1%}"
    else:
        verdict = "inconclusive"
        what = f"significant but below the {threshold:.1%} threshold" if significant else "not significant"
        reason = f"{what}: the change {span}"
        needed = rounds_to_settle(n, mean, lo, hi, thr_log)
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
        rounds_needed=needed,
        **common,
    )


def _range_text(lo: float, hi: float) -> str:
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "could not be bounded with these rounds"
    return f"could be anywhere from {_pct(lo):+.2f}% to {_pct(hi):+.2f}%"


def threshold_log(threshold: float) -> float:
    """The |log ratio| a threshold-sized change in % is, in either direction (inf from 100% on)."""
    return min(abs(math.log1p(threshold)), abs(math.log1p(-threshold))) if threshold < 1 else math.inf


def beyond(shift: float, threshold: float) -> bool:
    """Is a log-ratio ``shift`` a change of at least ``threshold`` in % (the figure reports show,
    and the one equivalence is judged in): ≥ +threshold up or ≤ −threshold down."""
    return threshold < 1 and (shift >= math.log1p(threshold) or shift <= math.log1p(-threshold))


def rounds_to_settle(n: int, centre: float, lo: float, hi: float, thr_log: float) -> int | None:
    """About how many rounds in all would make an inconclusive comparison decisive, if the
    effect stays ``centre`` (log) and the CI narrows like 1/√n: to show a difference (the
    CI excludes 0, when |centre| reaches the threshold) or equivalence (the CI inside
    ±threshold, when it does not). None when no number of rounds would (|centre| right at
    the threshold) or the CI is unbounded."""
    half = (hi - lo) / 2
    if not (math.isfinite(half) and half > 0 and n > 0):
        return None
    room = abs(centre) if abs(centre) >= thr_log else thr_log - abs(centre)
    if room <= 1e-12:
        return None
    return max(n + 1, math.ceil(n * (half / room) ** 2))


def opt_over_default_pct(default_mean: float, optimized_mean: float) -> float:
    """The "Opt/Default" column of the AutoFDO before/after table (docs/seed-formats.md): how
    much lower the optimized mean is, in %.

    (default − optimized) / default · 100; positive = the optimized variant is faster."""
    if default_mean == 0:
        return math.nan
    return (default_mean - optimized_mean) / default_mean * 100.0
