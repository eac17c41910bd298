"""The formats other tools read (Bencher BMF, github-action-benchmark, benchstat text, the CI
summary, hyperfine's JSON) carry a compare result's numbers; hyperfine's layout is checked
against a real ``hyperfine --export-json`` in tests/cli/test_compare_gate.py."""

from __future__ import annotations

import json
import statistics
from typing import Any

import pytest

from hone.experiment.compare import Arm, CompareSettings, run_compare
from hone.report import benchstat, bmf, gab, hyperfine, summary
from hone.run.benchmark import Measurement
from hone.run.schedule import Variant
from tests.report.test_exports import seed000_result

REF_CPU = [0.100, 0.102, 0.098, 0.101, 0.099, 0.100, 0.103, 0.097]


def cpu_result(factor: float, goal: str = "minimize", sweep: list[str] | None = None) -> dict[str, Any]:
    """Two arms, cpu_time in seconds: "new" takes ``factor`` × "old"'s CPU time each round."""
    arms = [Arm(name="old", description="old"), Arm(name="new", description="new")]

    def make(_sweep: Any) -> list[Variant]:
        out = []
        for arm, scale in ((arms[0], 1.0), (arms[1], factor)):
            it = iter(REF_CPU)

            def run(scale: float = scale, it: Any = it) -> Measurement:
                cpu = next(it) * scale
                return Measurement(wall_s=cpu + 0.001, cpu_s=cpu, user_s=cpu * 0.9, sys_s=cpu * 0.1,
                                   max_rss_kb=1000, returncode=0, timed_out=False)

            out.append(Variant(name=arm.name, run=run))
        return out

    settings = CompareSettings(rounds=len(REF_CPU), warmup=0, seed=1, metric="cpu_time", goal=goal,
                               max_rounds=len(REF_CPU), estimator="mean")
    return run_compare(arms, settings, make_variants=make, kind="commands", metric_unit="s",
                       sweep=("n", sweep) if sweep else None)


def test_bmf_has_one_benchmark_per_variant_with_mean_and_spread() -> None:
    data = seed000_result()
    doc = json.loads(bmf.render(data))
    assert set(doc) == {"Default Binary", "AutoFDO"}
    m = doc["AutoFDO"]["latency"]  # a spec metric's slug is its name
    s = data["rows"][0]["summaries"]["AutoFDO"]
    assert m["value"] == pytest.approx(7239.434)
    assert m["lower_value"] == pytest.approx(s["mean"] - s["stddev"])
    assert m["upper_value"] == pytest.approx(s["mean"] + s["stddev"])


def test_bmf_writes_cpu_time_in_nanoseconds_under_cpu_time_and_one_benchmark_per_sweep_value() -> None:
    doc = json.loads(bmf.render(cpu_result(1.2, sweep=["1", "2"])))
    assert sorted(doc) == ["new (n=1)", "new (n=2)", "old (n=1)", "old (n=2)"]
    assert doc["old (n=1)"]["cpu-time"]["value"] == pytest.approx(statistics.fmean(REF_CPU) * 1e9)
    assert doc["new (n=2)"]["cpu-time"]["value"] == pytest.approx(statistics.fmean(REF_CPU) * 1.2e9)


def test_gab_entries_carry_mean_range_and_the_comparison_and_the_flavour_follows_the_goal() -> None:
    data = seed000_result()
    entries = json.loads(gab.render(data))
    assert [e["name"] for e in entries] == ["Default Binary", "AutoFDO"]
    assert all(set(e) == {"name", "unit", "value", "range", "extra"} for e in entries)
    assert entries[0]["unit"] == "us" and entries[0]["value"] == pytest.approx(8063.708)
    assert entries[0]["range"] == "± 20.6"  # population stddev 20.571, three digits
    c = data["rows"][0]["comparisons"]["AutoFDO"]
    assert f"vs Default Binary: {c['change_pct']:+.2f}%" in entries[1]["extra"]
    assert entries[1]["extra"].endswith(c["verdict"])
    assert gab.tool(data) == "customSmallerIsBetter"
    assert gab.tool(cpu_result(1.0, goal="maximize")) == "customBiggerIsBetter"


def test_benchstat_text_has_each_variant_and_the_comparison_line() -> None:
    data = cpu_result(1.2)
    text = benchstat.render(data)
    c = data["rows"][0]["comparisons"]["new"]
    assert c["verdict"] == "slower"
    assert f"old vs new: +20.00% (p={c['p_value']:.3f}, n=8)" in text
    lines = text.splitlines()
    assert any(line.startswith("old ") and "100.000 ms ±" in line for line in lines), text
    assert any(line.startswith("new ") and "120.000 ms ±" in line for line in lines), text


def test_hyperfine_times_are_the_compared_seconds_with_sample_stddev_and_mean_cpu_split() -> None:
    doc = json.loads(hyperfine.render(cpu_result(1.2)))
    old, new = doc["results"]
    assert old["command"] == "old" and "parameters" not in old  # hyperfine leaves it out without -P/-L
    assert old["times"] == pytest.approx(REF_CPU)
    assert new["times"] == pytest.approx([x * 1.2 for x in REF_CPU])
    assert old["stddev"] == pytest.approx(statistics.stdev(REF_CPU))  # hyperfine's: n − 1
    assert old["user"] == pytest.approx(0.9 * statistics.fmean(REF_CPU))
    assert old["exit_codes"] == [0] * len(REF_CPU)


def test_hyperfine_times_are_wall_times_for_a_metric_that_is_not_a_time() -> None:
    data = seed000_result(fail={1})
    assert hyperfine.times_metric(data) == "wall_time"
    auto = json.loads(hyperfine.render(data))["results"][1]
    assert auto["times"] == [1.0] * 4  # the four runs that did not fail
    assert len(auto["exit_codes"]) == 4


def test_summary_has_a_verdict_line_per_candidate_the_gate_and_the_tables() -> None:
    data = cpu_result(1.2, sweep=["1", "2"])
    text = summary.render(data, fail_on={"slower"})
    assert text.startswith("### hone compare: cpu_time, lower is better, reference old")
    assert "- n=1: **new** vs old: **slower**, +20.00% (95% CI [" in text
    assert "- n=2: **new** vs old: **slower**" in text
    assert "**Gate `--fail-on slower`: failed** — n=1: new is slower than old: +20.00%" in text
    assert "|n|Variant|n|Mean (ms)|± stddev|stddev/mean|" in text and "|2|new|8|120.000|" in text
    assert "|n=2|new|1.2000|+20.00%|" in text  # markdown.py's verdict table
    passed = summary.render(cpu_result(1.0), fail_on={"slower"})
    assert "**Gate `--fail-on slower`: passed**" in passed and "**slower**" not in passed
    assert "Gate" not in summary.render(data)


def test_summary_escapes_pipes_in_names() -> None:
    data = cpu_result(1.0)
    data["rows"][0]["variants"][1]["name"] = "a | b"
    data["rows"][0]["summaries"]["a | b"] = data["rows"][0]["summaries"].pop("new")
    data["rows"][0]["comparisons"]["a | b"] = data["rows"][0]["comparisons"].pop("new")
    text = summary.render(data)
    assert "|a \\| b|8|" in text and "**a \\| b**" in text


def test_a_metric_that_is_not_a_time_or_a_rate_is_worse_not_slower_in_every_view() -> None:
    from rich.console import Console

    from hone.report import markdown, terminal
    from hone.report.gate import gate_failures

    data = cpu_result(1.2)
    data["metric"], data["unit"] = "bytes", "B"  # a size grew by 20%: "slower" would be wrong
    assert data["rows"][0]["comparisons"]["new"]["verdict"] == "slower"  # the result's word stays
    text = summary.render(data, fail_on={"slower"})  # the gate still takes the result's words
    assert "**new** vs old: **worse**, +20.00%" in text and "new is worse than old: +20.00%" in text
    assert "slower" not in text.replace("--fail-on slower", "")
    assert "**worse**" in markdown.render(data)
    assert gate_failures(data, {"slower"})[0].startswith("new is worse than old")
    console = Console(width=300, record=True)
    console.print(terminal.render(data))
    shown = console.export_text()
    assert "worse" in shown and "slower" not in shown
    data["unit"] = "ms"
    assert "new is slower than old" in summary.render(data, fail_on={"slower"})
