"""The ablation's last decision (``hone.tune.ablation.judge_minimal``): the minimal configuration
or the winner whole, judged on real paired comparisons of 6 rounds."""

from __future__ import annotations

from hone.stats.paired import compare_paired
from hone.tune.ablation import judge_minimal, leans

BEATS_BASELINE = compare_paired([50] * 6, [80, 82, 85, 78, 84, 90], goal="maximize", estimator="auto")


def test_equivalent_to_the_winner_recommends_the_minimal_configuration() -> None:
    vs_winner = compare_paired([100] * 6, [101, 99, 100.5, 99.5, 100.2, 99.8], goal="maximize", estimator="auto")
    assert vs_winner.verdict == "equivalent"
    assert judge_minimal(BEATS_BASELINE, vs_winner, ["ops/s"])[0] == "minimal"


def test_a_ci_wholly_worse_with_the_test_short_of_alpha_keeps_the_winner_and_says_why() -> None:
    # five rounds ~17% worse, one round a hair better: the signed-rank p is 0.0625, the CI is all below 0
    for goal, winner, minimal in (("maximize", 100, [80, 82, 85, 78, 84, 101]),
                                  ("minimize", 10, [12, 12.2, 11.8, 12.5, 12.1, 9.9])):
        vs_winner = compare_paired([winner] * 6, minimal, goal=goal, estimator="auto")  # type: ignore[arg-type]
        assert vs_winner.verdict == "inconclusive" and vs_winner.p_value > 0.05 and leans(vs_winner, "worse")
        choice, why = judge_minimal(BEATS_BASELINE, vs_winner, ["s"])
        assert choice == "winner" and "probably worse than the winner" in why and "disagree" in why


def test_an_open_range_on_both_sides_recommends_the_minimal_configuration_with_its_reason() -> None:
    vs_winner = compare_paired([100] * 6, [80, 120, 95, 110, 70, 105], goal="maximize", estimator="auto")
    assert vs_winner.verdict == "inconclusive" and not leans(vs_winner, "worse") and not leans(vs_winner, "better")
    choice, why = judge_minimal(BEATS_BASELINE, vs_winner, ["ops/s"])
    assert choice == "minimal" and why.endswith(f"inconclusive: {vs_winner.reason})")


def test_measurably_worse_or_not_beating_the_baseline_keeps_the_winner() -> None:
    slower = compare_paired([100] * 8, [80, 82, 85, 78, 84, 81, 83, 79], goal="maximize", estimator="auto")
    assert slower.verdict == "slower"
    assert judge_minimal(BEATS_BASELINE, slower, ["ops/s"])[0] == "winner"
    flat = compare_paired([50] * 6, [50, 51, 49, 50.5, 49.5, 50], goal="maximize", estimator="auto")
    choice, why = judge_minimal(flat, slower, ["ops/s"])
    assert choice == "winner" and why.startswith("the minimal configuration did not beat the baseline")


def test_a_lean_is_read_along_the_goal() -> None:
    # the same 6 rounds, a ~17% rise with one round a hair lower: better for a rate, worse for a time
    up = [120, 118, 115, 122, 116, 99]
    rate = compare_paired([100] * 6, up, goal="maximize", estimator="auto")
    time = compare_paired([100] * 6, up, goal="minimize", estimator="auto")
    assert rate.verdict == time.verdict == "inconclusive"
    assert leans(rate, "better") and not leans(rate, "worse")
    assert leans(time, "worse") and not leans(time, "better")
