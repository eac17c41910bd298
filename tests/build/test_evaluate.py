"""Verdicts against the layout-noise floor and the automatic pick."""

from __future__ import annotations

from hone.build.evaluate import noise_floor_pct, pick_best, verdict_with_floor
from hone.stats.paired import PairedComparison


def _comp(change_pct: float, verdict: str) -> PairedComparison:
    return PairedComparison(n=8, ratio=1 + change_pct / 100, change_pct=change_pct,
                            ci_pct=(change_pct - 1, change_pct + 1), p_value=0.01,
                            verdict=verdict, mde_pct=2.0, improved=verdict == "faster")  # type: ignore[arg-type]


def test_a_gain_inside_the_noise_floor_is_not_called_faster() -> None:
    assert verdict_with_floor(_comp(-4.0, "faster"), 5.0) == "within noise floor"
    assert verdict_with_floor(_comp(-6.0, "faster"), 5.0) == "faster"
    assert verdict_with_floor(_comp(3.0, "slower"), 5.0) == "within noise floor"
    assert verdict_with_floor(_comp(-0.5, "no difference"), 5.0) == "no difference"


def test_noise_floor_is_the_largest_probe_change() -> None:
    comps = {"noise-1": _comp(-3.0, "faster"), "noise-2": _comp(7.5, "slower"), "instr-gcc": _comp(-20, "faster")}
    assert noise_floor_pct(comps) == 7.5
    assert noise_floor_pct({"instr-gcc": _comp(-20, "faster")}) == 0.0


def _row(variant: str, scenario: str, t: float, i: float, verdict: str) -> dict:
    return {"variant": variant, "scenario": scenario, "time_ratio": t, "instructions_ratio": i, "verdict": verdict}


def test_pick_best_needs_a_real_gain_and_no_loss() -> None:
    rows = [
        _row("a", "s1", 0.80, 0.90, "faster"), _row("a", "s2", 1.10, 0.95, "slower"),   # faster once, slower once
        _row("b", "s1", 0.90, 0.97, "faster"), _row("b", "s2", 0.99, 0.99, "no difference"),
        _row("c", "s1", 0.85, 0.80, "within noise floor"), _row("c", "s2", 0.95, 0.85, "no difference"),
    ]
    best = pick_best(rows, ["a", "b", "c"])
    assert best["variant"] == "b"
    assert best["fewest_instructions"]["variant"] == "c"


def test_pick_best_says_none_when_nothing_beats_the_floor() -> None:
    rows = [_row("a", "s1", 0.9, 0.9, "within noise floor")]
    best = pick_best(rows, ["a"])
    assert best["variant"] is None and "noise floor" in best["reason"]
