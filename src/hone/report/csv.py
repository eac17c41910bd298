"""CSV export of a compare result: one line per variant per sweep value (summary and the
comparison against the reference). Raw runs live in the JSON export."""

from __future__ import annotations

import csv
import io
from typing import Any

COLUMNS = [
    "sweep_name", "sweep_value", "variant", "reference", "metric", "unit", "goal", "n", "failed_runs",
    "mean", "median", "stddev", "stddev_over_mean_pct", "min", "max", "p95", "p99", "wall_mean_s",
    "ratio", "change_pct", "ci_low_pct", "ci_high_pct", "p_value", "verdict", "mde_pct", "opt_over_default_pct",
    # Last, so older readers keep their column positions: what `auto` resolved to (welsch =
    # randomization test + inverted CI; median = exact CI + sign test; trimmed/mean = BCa
    # bootstrap + Wilcoxon).
    "estimator",
]


def _cell(value: Any) -> Any:
    return "" if value is None else value


def render(data: dict[str, Any]) -> str:
    """CSV text with a header line; numbers unscaled (unit column says which)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(COLUMNS)
    sweep = data.get("sweep") or {}
    for row in data["rows"]:
        for v in row["variants"]:
            name = v["name"]
            s = row["summaries"].get(name) or {}
            c = row["comparisons"].get(name) or {}
            cv = s.get("cv")
            ci = c.get("ci_pct") or [None, None]
            w.writerow([_cell(x) for x in [
                sweep.get("name"), row.get("sweep_value"), name, data["reference"], data["metric"], data["unit"],
                data["goal"], s.get("n", 0), row["failed"].get(name, 0),
                s.get("mean"), s.get("median"), s.get("stddev"), cv * 100 if cv is not None else None,
                s.get("min"), s.get("max"), s.get("p95"), s.get("p99"), s.get("wall_mean"),
                c.get("ratio", 1.0 if name == data["reference"] else None), c.get("change_pct"), ci[0], ci[1],
                c.get("p_value"), c.get("verdict", "reference" if name == data["reference"] else None),
                c.get("mde_pct"), c.get("opt_over_default_pct"), c.get("estimator"),
            ]])
    return buf.getvalue()
