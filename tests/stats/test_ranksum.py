"""The unpaired rank-sum comparison used to confirm runs that repeat exactly: its null
distribution against brute force and scipy, its CI's level, and its verdicts."""

from __future__ import annotations

import itertools
import math
from math import comb

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import mannwhitneyu

from hone.stats.ranksum import _ci_rank, _u_counts, compare_identical, compare_runs_unpaired, min_p, rounds_for_alpha


@pytest.mark.parametrize(("m", "n"), [(1, 1), (3, 2), (4, 4), (6, 3), (5, 1)])
def test_the_u_distribution_is_every_arrangement_counted(m: int, n: int) -> None:
    counts = [0] * (m * n + 1)
    for ranks in itertools.combinations(range(m + n), n):  # the candidate's ranks among m + n values
        counts[sum(r - i for i, r in enumerate(ranks))] += 1  # U = reference values below each candidate value
    assert tuple(counts) == _u_counts(m, n) and sum(counts) == comb(m + n, n)


def test_complete_separation_gives_scipys_exact_p_and_the_fewest_rounds() -> None:
    ref, cand = [10.0, 10.1, 10.05, 10.02, 10.03, 10.04], [8.0, 8.1, 8.05]
    assert mannwhitneyu(cand, ref, method="exact").pvalue == pytest.approx(min_p(6, 3)) == pytest.approx(2 / 84)
    # 3 baseline runs before: 2 rounds (5 against 2 runs) reach only 2/21, 3 rounds (6 against 3) 2/84
    assert min_p(5, 2) > 0.05 > min_p(6, 3)
    assert rounds_for_alpha(3, 0.05) == 3 and rounds_for_alpha(2, 0.05) == 3 and rounds_for_alpha(10, 0.05) == 2


def test_the_ci_rank_matches_the_published_critical_value() -> None:
    # two-sided 5% critical U for 10 against 10 is 23 (Mann–Whitney tables): the 24th differences
    assert _ci_rank(10, 10, 0.95) == 24
    assert _ci_rank(6, 3, 0.95) == 2  # P(U ≤ 1) = 2/84 ≤ 0.025
    assert _ci_rank(3, 2, 0.95) == 0  # 2/10 > 0.05: no bound at 95%


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=3, max_value=8), st.integers(min_value=2, max_value=6),
       st.floats(min_value=0.0, max_value=0.5), st.integers(min_value=0, max_value=10_000))
def test_the_ci_brackets_the_shift_and_a_faster_verdict_needs_p_and_the_ci(m: int, n: int, shift: float,
                                                                         seed: int) -> None:
    rng = np.random.default_rng(seed)
    ref = list(np.exp(rng.normal(0, 0.005, m)))
    cand = list(np.exp(rng.normal(-shift, 0.005, n)))
    c = compare_runs_unpaired(ref, cand, goal="minimize")
    lo, hi = c.ci_pct
    assert lo <= c.change_pct <= hi
    if c.verdict == "faster":
        assert c.p_value < 0.05 and hi < 0 and c.change_pct <= -1.0
    if c.verdict == "equivalent":
        assert lo > -1.0 and hi < 1.0


def test_a_shift_no_run_overlaps_is_faster_and_bounded_by_the_extreme_differences() -> None:
    ref = [100.0, 100.2, 99.9, 100.1, 100.0, 99.95]  # the baseline's 3 runs and 3 interleaved ones
    cand = [80.0, 80.1, 79.9]
    c = compare_runs_unpaired(ref, cand, goal="minimize")
    assert c.verdict == "faster" and c.improved and c.n == 3
    assert c.p_value == pytest.approx(2 / 84)
    assert c.reason == "rank-sum test of 3 against 6 runs"
    # the 2nd smallest and 2nd largest of the 18 differences (level 1 − 4/84 ≥ 95%)
    diffs = sorted(math.log(x) - math.log(y) for x in cand for y in ref)
    assert c.ci_pct == pytest.approx(((math.exp(diffs[1]) - 1) * 100, (math.exp(diffs[-2]) - 1) * 100))
    assert compare_runs_unpaired(ref, cand, goal="maximize").verdict == "slower"


def test_identical_runs_are_equivalent_and_overlapping_ones_inconclusive_with_their_range() -> None:
    same = compare_runs_unpaired([5.0] * 6, [5.0] * 3, goal="maximize")
    assert same.verdict == "equivalent" and same.p_value == 1.0 and same.ci_pct == (0.0, 0.0)
    mixed = compare_runs_unpaired([1.0, 1.02, 0.99, 1.01, 1.0, 1.0], [1.05, 0.97, 1.0], goal="minimize")
    assert mixed.verdict == "inconclusive" and "not significant" in mixed.reason
    assert "could be anywhere from -3.96% to +5.00%" in mixed.reason
    assert same.rounds_needed is None


def test_an_inconclusive_shift_says_about_how_many_paired_rounds_would_settle_it() -> None:
    ref = [100.0, 108.0, 93.0, 104.0, 97.0, 101.0, 95.0]  # ±5%
    cand = [106.0, 99.0, 110.0, 103.0]  # about +4%
    c = compare_runs_unpaired(ref, cand, goal="maximize")
    assert c.verdict == "inconclusive" and c.change_pct > 0
    # the shift's variance is a mean over 2·7·4/11 ≈ 5 rounds': the CI's half-width over the shift, squared
    lo, hi = (math.log1p(x / 100) for x in c.ci_pct)
    assert c.rounds_needed == math.ceil(5 * ((hi - lo) / 2 / math.log1p(c.change_pct / 100)) ** 2) > 5
    assert compare_runs_unpaired(ref, [130.0, 131.0, 129.0, 132.0], goal="maximize").rounds_needed is None


def test_too_few_runs_for_the_test_are_inconclusive_and_bad_values_dropped() -> None:
    few = compare_runs_unpaired([1.0, 1.0, 1.0], [0.5], goal="minimize")  # 2/4 = 0.5 at best
    assert few.verdict == "inconclusive" and "cannot reach p < 0.05" in few.reason
    assert math.isinf(few.ci_pct[0]) or few.ci_pct[0] == -100.0
    dropped = compare_runs_unpaired([1.0, math.nan, 0.0], [0.5, -1.0], goal="minimize")
    assert dropped.dropped == 3
    empty = compare_runs_unpaired([], [1.0])
    assert empty.verdict == "inconclusive" and empty.reason == "no usable runs in one of the two groups"


def test_a_significant_change_just_under_the_threshold_in_percent_is_not_faster() -> None:
    # −0.99%: 1/1.01 as a ratio, a 1% change only when read the other way; reports show −0.99%
    rng = np.random.default_rng(884)
    ref = list(np.exp(rng.normal(0, 0.005, 7)))
    cand = list(np.exp(rng.normal(-0.011142405089613951, 0.005, 4)))
    c = compare_runs_unpaired(ref, cand, goal="minimize")
    assert c.p_value < 0.05 and -1.0 < c.change_pct < -0.99
    assert c.verdict == "inconclusive" and "below the 1.0% threshold" in c.reason


@given(ref=st.floats(0.01, 1e6), ratio=st.floats(0.2, 5.0), goal=st.sampled_from(["minimize", "maximize"]),
       threshold=st.sampled_from([0.01, 0.03, 0.1]))
@settings(max_examples=200, deadline=None)
def test_identical_runs_compare_exactly_the_threshold_alone_decides(ref: float, ratio: float, goal: str,
                                                                    threshold: float) -> None:
    cand = ref * ratio
    c = compare_identical([ref] * 4, [cand], goal=goal, threshold=threshold)  # type: ignore[arg-type]
    assert c.estimator == "exact" and c.confidence == 1.0 and c.n == 1
    assert c.ci_pct[0] == c.ci_pct[1] == c.change_pct == pytest.approx((cand / ref - 1) * 100)
    assert c.p_value == (0.0 if cand != ref else 1.0)
    better = cand > ref if goal == "maximize" else cand < ref
    if abs(c.change_pct) >= 100 * threshold * 1.001:
        assert c.verdict == ("faster" if better else "slower") and c.improved == better
    elif abs(c.change_pct) < 100 * threshold * 0.99:
        assert c.verdict == "equivalent" and not c.improved
    assert "runs repeat identically (4 of the reference, 1 of the candidate)" in c.reason


def test_identical_runs_without_a_positive_figure_are_inconclusive() -> None:
    c = compare_identical([0.0, 0.0], [5.0], goal="maximize")
    assert c.verdict == "inconclusive" and math.isnan(c.change_pct) and not c.improved
