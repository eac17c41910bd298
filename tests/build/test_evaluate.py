"""Verdicts against the layout-noise floor, the analysis of timed rounds and the automatic pick."""

from __future__ import annotations

import math

import pytest

from hone.build.evaluate import judge_timing, noise_floor_pct, pick_best, scenario_rows, verdict_with_floor
from hone.stats.paired import PairedComparison
from tests.measurements import aa_cpu_times, cpu_run


def _comp(change_pct: float, verdict: str, ci: tuple[float, float] | None = None) -> PairedComparison:
    return PairedComparison(n=8, ratio=1 + change_pct / 100, change_pct=change_pct,
                            ci_pct=ci or (change_pct - 1, change_pct + 1), p_value=0.01,
                            verdict=verdict, mde_pct=2.0, improved=verdict == "faster")  # type: ignore[arg-type]


def test_a_gain_inside_the_noise_floor_is_not_called_faster() -> None:
    assert verdict_with_floor(_comp(-4.0, "faster"), 5.0) == "within noise floor"
    assert verdict_with_floor(_comp(-6.0, "faster"), 5.0) == "faster"
    assert verdict_with_floor(_comp(3.0, "slower"), 5.0) == "within noise floor"
    assert verdict_with_floor(_comp(-0.5, "equivalent"), 5.0) == "equivalent"


def test_an_inconclusive_change_is_within_the_floor_only_when_its_whole_ci_is() -> None:
    assert verdict_with_floor(_comp(-1.0, "inconclusive", (-4.0, 2.0)), 5.0) == "within noise floor"
    assert verdict_with_floor(_comp(-1.0, "inconclusive", (-7.0, 2.0)), 5.0) == "inconclusive"
    assert verdict_with_floor(_comp(-1.0, "inconclusive", (-4.0, 2.0)), 0.0) == "inconclusive"  # no probes
    assert verdict_with_floor(_comp(0.0, "inconclusive", (-math.inf, math.inf)), 5.0) == "inconclusive"


def test_noise_floor_is_the_largest_probe_change() -> None:
    comps = {"noise-1": _comp(-3.0, "faster"), "noise-2": _comp(7.5, "slower"), "instr-gcc": _comp(-20, "faster")}
    assert noise_floor_pct(comps) == 7.5
    assert noise_floor_pct({"instr-gcc": _comp(-20, "faster")}) == 0.0


@pytest.mark.parametrize("seed", range(30))
def test_identical_binaries_in_few_rounds_are_equivalent_only_with_the_ci_inside_the_threshold(seed: int) -> None:
    # A/A: both arms draw CPU times from one distribution, some with the heavy tails of this
    # VM's rounds (a few rounds straddle a host speed change), 6-10 rounds like --rounds 7.
    base, other = aa_cpu_times(seed)
    runs = {"default": [cpu_run(x) for x in base], "lto": [cpu_run(x) for x in other]}
    timing = judge_timing("s", runs, threshold=0.01, seed=seed)
    c = timing.comparisons["lto"]
    inside = c.ci_pct[0] > -1.0 and c.ci_pct[1] < 1.0
    assert c.verdict != "equivalent" or inside
    if c.verdict == "inconclusive":
        assert "could" in c.reason
    rows, _ = scenario_rows(timing, {}, {"default": None, "lto": None}, {})  # type: ignore[dict-item]
    assert rows[1]["paired_verdict"] == c.verdict and rows[1]["reason"] == c.reason


def test_few_rounds_of_identical_runs_are_equivalent_and_noisy_ones_inconclusive() -> None:
    base = [0.020, 0.021, 0.019, 0.020, 0.022, 0.020, 0.021]
    same = judge_timing("s", {"default": [cpu_run(x) for x in base], "b": [cpu_run(x * 1.0001) for x in base]},
                        threshold=0.01).comparisons["b"]
    assert same.verdict == "equivalent" and -1 < same.ci_pct[0] <= same.ci_pct[1] < 1
    wobble = [1.05, 0.93, 1.08, 0.96, 1.02, 0.95, 1.04]
    noisy = judge_timing("s", {"default": [cpu_run(x) for x in base],
                               "b": [cpu_run(x * w) for x, w in zip(base, wobble, strict=True)]},
                         threshold=0.01).comparisons["b"]
    assert noisy.verdict == "inconclusive" and "could be anywhere from" in noisy.reason
    assert noisy.ci_pct[0] < -1 or noisy.ci_pct[1] > 1


def _row(variant: str, scenario: str, t: float, i: float, verdict: str, **extra: object) -> dict:
    return {"variant": variant, "scenario": scenario, "time_ratio": t, "instructions_ratio": i, "verdict": verdict,
            **extra}


def test_pick_best_needs_a_real_gain_and_no_loss() -> None:
    rows = [
        _row("a", "s1", 0.80, 0.90, "faster"), _row("a", "s2", 1.10, 0.95, "slower"),   # faster once, slower once
        _row("b", "s1", 0.90, 0.97, "faster"), _row("b", "s2", 0.99, 0.99, "equivalent"),
        _row("c", "s1", 0.85, 0.80, "within noise floor"), _row("c", "s2", 0.95, 0.85, "equivalent"),
    ]
    best = pick_best(rows, ["a", "b", "c"])
    assert best["variant"] == "b" and best["settled"] and best["unsettled"] == []
    assert best["fewest_instructions"]["variant"] == "c"


def test_pick_best_says_which_scenarios_could_still_hide_a_loss() -> None:
    rows = [_row("b", "s1", 0.90, 0.97, "faster"),
            _row("b", "s2", 1.01, 0.99, "inconclusive", ci_pct=[-3.0, 6.0], rounds_needed=40, reason="not significant")]
    best = pick_best(rows, ["b"])
    assert best["variant"] == "b" and not best["settled"]
    assert best["unsettled"] == [{"scenario": "s2", "ci_pct": [-3.0, 6.0], "reason": "not significant",
                                  "rounds_needed": 40}]
    assert "not shown no slower on s2 (inconclusive: could be anywhere from -3.0% to +6.0%, about 40 rounds" \
        in best["reason"]


def test_pick_best_says_none_when_nothing_beats_the_floor() -> None:
    rows = [_row("a", "s1", 0.9, 0.9, "within noise floor"), _row("a", "s2", 0.9, 0.9, "inconclusive")]
    best = pick_best(rows, ["a"])
    assert best["variant"] is None and "noise floor" in best["reason"]
