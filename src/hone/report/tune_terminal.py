"""Terminal view of a ``hone-tune/1`` result: baseline vs recommendation, candidates."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text


def _num(v: Any) -> str:
    if not isinstance(v, int | float) or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    return f"{v:.4g}" if abs(v) < 1000 else f"{v:,.1f}"


def render(data: dict[str, Any]) -> Group:
    """A rich renderable for ``hone report RESULT.json`` (no re-running)."""
    best = data.get("best_candidate") or {}
    table = Table(title=f"hone tune {data.get('spec_name', '')}: study {data.get('study')} "
                        "(means of the interleaved confirmation rounds)")
    for col in ("metric", "baseline", "recommendation" if data.get("recommended") else "best candidate",
                "change", "95% CI", "p", "verdict"):
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right")
    for name, comp in (best.get("metrics") or {}).items():
        ci = comp.get("ci_pct") or [None, None]
        base, cand = (best.get("baseline_means") or {}).get(name), (best.get("means") or {}).get(name)
        table.add_row(name, _num(base), _num(cand),
                      f"{comp['change_pct']:+.2f}%" if comp.get("change_pct") is not None else "–",
                      f"{ci[0]:+.2f}% … {ci[1]:+.2f}%" if None not in ci else "–",
                      _num(comp.get("p_value")), str(comp.get("verdict")))
    lines = [table]
    rec = data.get("recommended")
    if rec:
        lines.append(Text("Recommendation (confirmed): " + " ".join(f"{k}={v}" for k, v in rec.items())))
        if data.get("apply_command"):
            lines.append(Text(f"apply it: {data['apply_command']}"))
    else:
        lines.append(Text("Recommendation: keep the current configuration"))
    lines.append(Text(f"trials: {data.get('trials')} ({data.get('failed_trials')} failed), seed {data.get('seed')}, "
                      f"sampler {data.get('sampler')}, storage {data.get('storage')}"))
    return Group(*lines)
