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
    dict); NaN when the run does not have it."""
    metric = BUILTIN[name]
    if isinstance(run, dict):
        got = (run.get("metrics") or {}).get(name) if metric.counted else run.get(metric.source)
    elif metric.counted:
        got = getattr(run, "metrics", {}).get(name)
    else:
        got = getattr(run, metric.source, None)
    return math.nan if got is None else float(got)


__all__ = ["BUILTIN", "BuiltinMetric", "value"]
