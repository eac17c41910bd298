"""perf stat -j parsing and derived metrics: nothing is derived from absent counters."""

from __future__ import annotations

from hone.diagnose.derived import derive
from hone.diagnose.perfstat import parse_perf_stat_json

NO_PMU = """
{"counter-value" : "1.536828", "unit" : "msec", "event" : "task-clock", "pcnt-running" : 100.00}
{"counter-value" : "<not supported>", "unit" : "", "event" : "instructions", "pcnt-running" : 100.00}
{"counter-value" : "<not supported>", "unit" : "", "event" : "cycles", "pcnt-running" : 100.00}
{"counter-value" : "<not counted>", "unit" : "", "event" : "branches", "pcnt-running" : 0.00}
{"counter-value" : "120.000000", "unit" : "", "event" : "context-switches", "pcnt-running" : 50.00}
not json at all
"""


def test_not_supported_and_not_counted_have_no_value() -> None:
    c = parse_perf_stat_json(NO_PMU)
    assert c["task-clock"].value == 1.536828 and c["task-clock"].unit == "msec"
    assert c["instructions"].value is None and c["instructions"].status == "not supported"
    assert c["branches"].status == "not counted"
    assert c["context-switches"].running_pct == 50.0


def test_ipc_is_not_derived_without_cycles_and_says_why() -> None:
    values = {"task-clock": 1000.0, "wall_s": 1.0, "user_s": 0.5, "sys_s": 0.5}
    why = {"instructions": "<not supported>: no hardware PMU", "cycles": "<not supported>: no hardware PMU"}
    d = {m.name: m for m in derive(values, why)}
    assert d["ipc"].value is None
    assert d["ipc"].missing == why
    assert d["sys_share_pct"].value == 50.0
    assert d["cpu_utilization"].value == 1.0


def test_ipc_is_derived_when_both_counters_are_present() -> None:
    d = {m.name: m for m in derive({"instructions": 3e9, "cycles": 2e9})}
    assert d["ipc"].value == 1.5 and not d["ipc"].missing


def test_zero_denominator_gives_no_value() -> None:
    d = {m.name: m for m in derive({"branches": 0.0, "branch-misses": 0.0})}
    assert d["branch_miss_pct"].value is None
