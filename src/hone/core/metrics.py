"""The built-in metrics: one table of what every run measures without an ``extract``.

Name, unit, goal and where a run holds it (a field of a run: ``cpu_s`` …, or a key of its
``metrics`` for counted ones such as ``instructions``). The spec language, the runner, the
A/B engine and every report read this table; nothing else lists built-in metrics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BuiltinMetric:
    """A figure every run can have. ``source`` is a field of the run (``cpu_s``) or, for
    ``counted`` metrics, a key of its ``metrics`` (filled only when asked for)."""

    name: str
    unit: str
    goal: str
    source: str
    description: str
    counted: bool = False


BUILTIN: dict[str, BuiltinMetric] = {m.name: m for m in (
    BuiltinMetric("cpu_time", "s", "minimize", "cpu_s",
                  "user + system CPU time of the command and the children it waited for (wait4)"),
    BuiltinMetric("wall_time", "s", "minimize", "wall_s", "elapsed time from start to exit"),
    BuiltinMetric("user_time", "s", "minimize", "user_s", "user CPU time"),
    BuiltinMetric("sys_time", "s", "minimize", "sys_s", "system (kernel) CPU time"),
    BuiltinMetric("max_rss", "KiB", "minimize", "max_rss_kb", "largest resident set size"),
    BuiltinMetric("instructions", "instructions", "minimize", "instructions",
                  "instructions retired (perf when the PMU counts them, else valgrind's cachegrind): "
                  "repeatable where time is noisy", counted=True),
)}


def value(run: Any, name: str) -> float:
    """The built-in metric ``name`` of a run (a Measurement, a ProcessResult or a stored run's
    dict); NaN when the run does not have it. A run under valgrind (``counted_by``) has no
    time or RSS of its own: those were valgrind's, 5–50× the program's."""
    metric = BUILTIN[name]
    by = run.get("counted_by") if isinstance(run, dict) else getattr(run, "counted_by", None)
    if by == "valgrind" and not metric.counted:
        return math.nan
    if isinstance(run, dict):
        got = (run.get("metrics") or {}).get(name) if metric.counted else run.get(metric.source)
    elif metric.counted:
        got = getattr(run, "metrics", {}).get(name)
    else:
        got = getattr(run, metric.source, None)
    return math.nan if got is None else float(got)


def metric_value(run: dict[str, Any], metric: str) -> float:
    """One stored run's value of ``metric`` (NaN for a failed run or a missing metric)."""
    if run.get("error") is not None:
        return math.nan
    if metric in (run.get("metrics") or {}):
        got = run["metrics"][metric]
        return math.nan if got is None else float(got)  # JSON stores NaN as null
    return value(run, metric) if metric in BUILTIN else math.nan


#: The built-in metrics every summary of runs shows beside the spec's own: what a run cost in time.
SUMMARY: tuple[str, ...] = ("cpu_time", "wall_time")


def _extracted(run: Any) -> dict[str, Any]:
    got = run.get("metrics") if isinstance(run, dict) else getattr(run, "metrics", None)
    return dict(got or {})


def of_run(run: Any, name: str) -> float:
    """Metric ``name`` of one run: the value it extracted under that name (a spec metric, a
    counted one), else the built-in of that name; NaN when it has neither."""
    got = _extracted(run).get(name)
    if got is not None:
        return float(got)
    return value(run, name) if name in BUILTIN else math.nan


def figures(run: Any, builtins: tuple[str, ...] = SUMMARY) -> dict[str, float]:
    """Every metric one run extracted, plus the built-ins ``builtins`` it did not extract itself."""
    out = {k: math.nan if v is None else float(v) for k, v in _extracted(run).items()}
    for name in builtins:
        if name not in out and not math.isnan(got := value(run, name)):  # none under valgrind
            out[name] = got
    return out


def means(runs: list[Any]) -> dict[str, float]:
    """The mean of each of :func:`figures` over the runs that succeeded (``{}`` when none did)."""
    ok = [figures(r) for r in runs if _succeeded(r)]
    if not ok:
        return {}
    return {k: sum(f.get(k, math.nan) for f in ok) / len(ok) for k in ok[0]}


def _succeeded(run: Any) -> bool:
    return (run.get("error") if isinstance(run, dict) else getattr(run, "error", None)) is None


__all__ = ["BUILTIN", "SUMMARY", "BuiltinMetric", "figures", "means", "of_run", "value"]


#: Units of time, and of work that stands for it: a metric in one of these, or in a rate (a unit
#: per second, minute or hour), gets faster or slower.
TIME_UNITS = frozenset({"s", "sec", "ms", "us", "µs", "ns", "min", "h", "cycles", "instructions"})
RATE_UNITS = frozenset({"qps", "tps", "rps", "iops", "hz", "fps"})
_PER = ("/s", "/sec", "/second", "/min", "/minute", "/h", "/hour")


def is_speed(unit: str | None) -> bool:
    """Is a metric in ``unit`` a time or a rate (so "faster" is the word for better)?"""
    u = (unit or "").strip().lower()
    return u in TIME_UNITS or u in RATE_UNITS or u.replace(" ", "").endswith(_PER)


def verdict_word(verdict: str, *units: str | None) -> str:
    """A verdict as reports show it. Results say "faster"/"slower" for better/worse along the
    goal; that is the word when every metric the verdict is about is a time or a rate, and
    "better"/"worse" otherwise (a size, a score, an error rate, a unit nobody named)."""
    if units and all(is_speed(u) for u in units):
        return verdict
    return {"faster": "better", "slower": "worse"}.get(verdict, verdict)


def judged_metric(mode: str, scored: list[str], alone: str | None) -> str:
    """What ``hone compare --metric`` takes to judge what a confirmation judged: the one scored
    metric, else the metric judged alone (a run had one ≤ 0), else ``objective`` (the weighted
    geometric mean)."""
    return scored[0] if mode == "single" else alone or "objective"


def spec_default_metric(names: list[str], weights: list[float], mode: str | None) -> str:
    """The metric ``hone compare SPEC`` judges without ``--metric``: the figure ``hone tune``
    judges where the spec names it — ``objective`` for ``tune.objective: weighted`` (A-Tune's pairs
    say so), the one metric with a non-zero weight — else the spec's first metric."""
    scored = [n for n, w in zip(names, weights, strict=True) if w != 0]
    if mode == "weighted" and len(scored) > 1 and "objective" not in names:
        return "objective"
    if mode in (None, "single") and len(scored) == 1:
        return scored[0]
    return names[0]
