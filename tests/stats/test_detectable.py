"""The smallest change a planned comparison detects: the simulated power of the exact rank
tests against cases solved by hand (only the most extreme arrangement is significant)."""

from __future__ import annotations

import math

import pytest
from scipy import integrate
from scipy.stats import norm

from hone.stats.detectable import detectable_gain_pct, detectable_shift


def test_six_paired_rounds_need_every_difference_positive() -> None:
    # n = 6 at p < 0.05: only all six differences of one sign (2/64); a difference of two runs has sd √2,
    # so power Φ(δ/√2)^6 = 0.8 solves to δ = √2 · Φ⁻¹(0.8^(1/6))
    exact = math.sqrt(2) * norm.ppf(0.8 ** (1 / 6))
    assert detectable_shift("paired", 6) == pytest.approx(exact, rel=0.03)


def test_three_against_six_runs_need_the_three_above_all_six() -> None:
    # 3 against 6 at p < 0.025: only complete separation (2/84); power = P(min of 3 shifted > max of 6)
    shift = detectable_shift("pooled", 3, 6, alpha=0.025)

    def power(d: float) -> float:
        dens = lambda x: 3 * norm.sf(x - d) ** 2 * norm.pdf(x - d) * norm.cdf(x) ** 6  # noqa: E731
        return integrate.quad(dens, -12, 12 + d)[0]

    assert power(shift) == pytest.approx(0.8, abs=0.03)
    assert power(shift * 0.8) < 0.7  # and a smaller shift is clearly below it


def test_a_test_that_cannot_reach_alpha_detects_nothing() -> None:
    assert detectable_shift("paired", 5) == math.inf  # 2/32 > 0.05
    assert detectable_shift("pooled", 2, 8, alpha=0.025) == math.inf  # 2/45 > 0.025
    assert detectable_gain_pct(0.05, "paired", 5) == math.inf


def test_more_rounds_detect_less_and_the_gain_scales_with_the_noise() -> None:
    shifts = [detectable_shift("paired", n) for n in (6, 8, 12, 20)]
    assert shifts == sorted(shifts, reverse=True) and shifts[-1] < 0.5 * shifts[0]
    assert detectable_shift("pooled", 4, 7, alpha=0.025) < detectable_shift("pooled", 3, 6, alpha=0.025)
    small, large = detectable_gain_pct(0.01, "paired", 6), detectable_gain_pct(0.05, "paired", 6)
    assert small == pytest.approx((1.01 ** detectable_shift("paired", 6) - 1) * 100)
    assert 4.5 * small < large < 5.5 * small
    assert math.isnan(detectable_gain_pct(0.0, "paired", 6)) and math.isnan(detectable_gain_pct(math.nan, "paired", 6))
    with pytest.raises(ValueError, match="design"):
        detectable_shift("unpaired", 6)  # type: ignore[arg-type]


@pytest.mark.parametrize("runs", [2, 3, 5])
def test_the_noise_bound_of_a_few_runs_covers_the_true_noise_nine_times_in_ten(runs: int) -> None:
    import numpy as np

    from hone.stats.detectable import noise_upper_bound

    # normal runs of sd 0.1 around 1: the bound from each draw's sample sd lies at or above 0.1 in 90% of draws
    rng = np.random.default_rng(7)
    sd = rng.normal(1.0, 0.1, size=(20_000, runs)).std(axis=1, ddof=1)
    covered = np.mean([noise_upper_bound(float(s), runs) >= 0.1 for s in sd])
    assert covered == pytest.approx(0.9, abs=0.01)
    assert noise_upper_bound(0.1, 3) == pytest.approx(0.1 * 3.08, rel=0.01)  # the line's "3.1×"
    assert math.isnan(noise_upper_bound(0.1, 1)) and math.isnan(noise_upper_bound(0.0, 3))
