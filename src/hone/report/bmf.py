"""Bencher Metric Format (BMF): ``bencher run --adapter json`` reads it.

``{"<benchmark>": {"<measure>": {"value": mean, "lower_value": mean − stddev,
"upper_value": mean + stddev}}}``: one benchmark per variant (per sweep value:
``new (n=20)``), one measure, the compared metric. The bounds are the variant's own spread
(population stddev of its rounds, as the tables show), not a confidence interval: the
reference has no CI of its own (hone's CIs are of paired ratios), and Bencher's
thresholds judge the values across runs themselves.

Measure slugs: wall_time → ``latency`` (Bencher's built-in measure), cpu_time →
``cpu-time``, user_time → ``user-time``, sys_time → ``sys-time``, max_rss → ``max-rss``
(KiB), a spec metric → its name in lower case with ``-`` for anything but letters and
digits. Times in seconds are written in nanoseconds, the unit of Bencher's ``latency``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hone.report.base import bench_name

SLUGS = {"wall_time": "latency", "cpu_time": "cpu-time", "user_time": "user-time", "sys_time": "sys-time",
         "max_rss": "max-rss"}


def measure(data: dict[str, Any]) -> tuple[str, float]:
    """(measure slug, factor from the metric's unit to the written one)."""
    metric = data["metric"]
    slug = SLUGS.get(metric) or re.sub(r"[^a-z0-9]+", "-", metric.lower()).strip("-") or "metric"
    return slug, 1e9 if data.get("unit") == "s" else 1.0


def metrics(data: dict[str, Any]) -> dict[str, dict[str, dict[str, float]]]:
    """The BMF object; variants without a successful run are left out (no value exists)."""
    slug, factor = measure(data)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for row in data["rows"]:
        for v in row["variants"]:
            s = row["summaries"].get(v["name"])
            if not s or s.get("mean") is None:
                continue
            mean, spread = s["mean"] * factor, (s.get("stddev") or 0.0) * factor
            out[bench_name(data, row, v["name"])] = {
                slug: {"value": mean, "lower_value": mean - spread, "upper_value": mean + spread}}
    return out


def render(data: dict[str, Any]) -> str:
    return json.dumps(metrics(data), indent=2, allow_nan=False) + "\n"
