"""github-action-benchmark's custom JSON: ``[{"name", "unit", "value", "range", "extra"}]``.

The action reads it with ``tool: customSmallerIsBetter`` or ``tool: customBiggerIsBetter``;
which one follows the metric's goal (:func:`tool`, printed by ``hone compare`` and ``hone
report``). One entry per variant (per sweep value: ``new (n=20)``): ``value`` is the mean
in the metric's own unit (seconds stay seconds, so a series keeps one unit across
commits), ``range`` is ``± stddev``, ``extra`` the rounds and, for a candidate, its
change against the reference with the CI, p and verdict.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from hone.report.base import bench_name, ci_label, ci_text, p_text, pct


def tool(data: dict[str, Any]) -> str:
    """The action's ``tool:`` for this result: bigger is better only for a maximized metric."""
    return "customBiggerIsBetter" if data.get("goal") == "maximize" else "customSmallerIsBetter"


def entries(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries; variants without a successful run are left out (no value exists)."""
    out = []
    for row in data["rows"]:
        for v in row["variants"]:
            name = v["name"]
            s = row["summaries"].get(name)
            if not s or s.get("mean") is None:
                continue
            extra = [f"{data['metric']}: mean of {s['n']} interleaved rounds"]
            c = row["comparisons"].get(name)
            if c is None:
                extra.append("reference")
            else:
                p = c["p_value"] if c["p_value"] is not None else float("nan")
                extra.append(f"vs {data['reference']}: {pct(c['change_pct'], sign=True)}, "
                             f"{ci_label(data, row)} {ci_text(c)}, p={p_text(p)}: {c['verdict']}")
            out.append({"name": bench_name(data, row, name), "unit": data.get("unit") or "",
                        "value": s["mean"], "range": f"± {_plain(s.get('stddev') or 0.0)}", "extra": "\n".join(extra)})
    return out


def render(data: dict[str, Any]) -> str:
    return json.dumps(entries(data), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def _plain(value: float) -> str:
    """Three significant digits, never an exponent (``0.000088``): the action shows it as is."""
    return str(np.format_float_positional(value, precision=3, fractional=False, trim="-"))
