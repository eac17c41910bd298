"""The doctor's experiments on the A/B engine: verdicts in the engine's words, never a claim
of equivalence the CI does not support."""

from __future__ import annotations

import pytest

from hone.diagnose.experiment import compare_variants, run_doctor_experiment
from hone.diagnose.report_markdown import experiment_lines
from hone.diagnose.rules.base import Experiment, ExperimentVariant, Target
from tests.measurements import aa_cpu_times, cpu_run

CPU = Target(["prog"], metric="cpu_time", goal="minimize", unit="s")


@pytest.mark.parametrize("seed", range(30))
def test_identical_variants_in_few_rounds_are_equivalent_only_with_the_ci_inside_the_threshold(seed: int) -> None:
    # A/A at the doctor's 10 rounds and fewer, noise from tiny to this VM's heavy tails.
    base, other = aa_cpu_times(seed)
    comps = compare_variants({"disk": [cpu_run(x) for x in base], "tmpfs": [cpu_run(x) for x in other]}, "disk", CPU,
                             threshold=0.01, seed=seed)
    c = comps["tmpfs"]
    inside = c.ci_pct[0] > -1.0 and c.ci_pct[1] < 1.0
    assert c.verdict != "equivalent" or inside
    assert c.verdict in ("faster", "slower", "equivalent", "inconclusive")


def test_a_spec_metric_is_read_from_the_run_and_the_report_says_the_open_range() -> None:
    target = Target(["fcopy"], metric="mb_s", goal="maximize", unit="MB/s")
    base = [500.0, 510.0, 490.0, 505.0, 495.0, 500.0]
    wobble = [1.05, 0.93, 1.08, 0.96, 1.02, 0.95]
    runs = {"a": [cpu_run(0.1, mb_s=x) for x in base], "b": [cpu_run(0.1, mb_s=x * w) for x, w in zip(base, wobble,
                                                                                                 strict=True)]}
    c = compare_variants(runs, "a", target, threshold=0.01)["b"]
    assert c.verdict == "inconclusive" and c.goal == "maximize"
    doc = {"title": "t", "hypothesis": "h", "metric": "mb_s", "goal": "maximize", "unit": "MB/s", "rounds": 6,
           "seed": 0, "variants": [{"name": "a", "argv": ["fcopy"]}, {"name": "b", "argv": ["fcopy"]}],
           "summaries": {}, "sys_share_pct": {},
           "comparisons": {"b": {**c.to_dict(), "ci_pct": list(c.ci_pct)}}}
    text = "\n".join(experiment_lines(doc))
    assert "**inconclusive** (not significant: the change could be anywhere from" in text
    assert "no difference" not in text


def test_a_variant_without_two_usable_rounds_has_no_comparison() -> None:
    bad = cpu_run(0.02)
    bad.error = "exit 1"
    comps = compare_variants({"a": [cpu_run(0.02)] * 6, "b": [bad] * 5 + [cpu_run(0.02)]}, "a", CPU, threshold=0.01)
    assert comps == {}


def test_a_real_a_a_experiment_on_the_engine() -> None:
    same = ["sh", "-c", "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done"]
    exp = Experiment("a/a", "the same command twice", [ExperimentVariant("a", same), ExperimentVariant("b", same)])
    result = run_doctor_experiment(exp, Target(same, metric="cpu_time"), rounds=6, seed=3)
    assert result.rounds == 6 and set(result.summaries) == {"a", "b"}
    c = result.comparisons["b"]
    assert c.n == 6 and c.estimator in ("welsch", "trimmed")
    assert c.verdict in ("equivalent", "inconclusive", "faster", "slower")
    assert c.verdict != "equivalent" or (c.ci_pct[0] > -1.0 and c.ci_pct[1] < 1.0)
    doc = result.to_json()["comparisons"]["b"]
    assert doc["reason"] == c.reason and doc["alpha"] == 0.05
