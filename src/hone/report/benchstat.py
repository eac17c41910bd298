"""Plain text in the manner of Go's benchstat, for logs and review comments.

Per sweep value: a line per variant (name, mean ± stddev as % of the mean), then one
comparison line per candidate, ``old vs new: +15.12% (p=0.000, n=40)``, followed by its CI
and verdict. Unlike benchstat's unpaired test, p and the CI are hone's paired ones.
"""

from __future__ import annotations

import math
from typing import Any

from hone.report.base import ci_label, ci_text, display_scale, num, pct, row_label


def render(data: dict[str, Any]) -> str:
    metric, unit, ref = data["metric"], data.get("unit") or "", data["reference"]
    better = "lower" if data["goal"] == "minimize" else "higher"
    means = [s["mean"] for row in data["rows"] for s in row["summaries"].values() if s.get("mean") is not None]
    factor, shown = display_scale(unit, means)
    out = [f"{metric}: {better} is better; reference {ref}"]
    for row in data["rows"]:
        label = row_label(data, row)
        out.append("")
        if label:
            out.append(label)
        names = [v["name"] for v in row["variants"]]
        width = max(len("name"), *(len(n) for n in names))
        out.append(f"{'name':<{width}}  mean ± stddev")
        for name in names:
            s = row["summaries"].get(name)
            if not s:
                out.append(f"{name:<{width}}  (no successful run)")
                continue
            cv = s.get("cv")
            spread = pct(cv * 100) if cv is not None else "nan"
            out.append(f"{name:<{width}}  {num(s['mean'] * factor, 3)}{shown and ' ' + shown} ± {spread}")
        out.append("")
        for name, c in row["comparisons"].items():
            p = c["p_value"] if c["p_value"] is not None else math.nan
            out.append(f"{ref} vs {name}: {pct(c['change_pct'], sign=True)} (p={num(p, 3)}, n={c['n']})  "
                       f"{ci_label(data, row)} {ci_text(c)}: {c['verdict']}")
    return "\n".join(out) + "\n"
