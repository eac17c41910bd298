"""Terminal view of a ``hone-run/1`` result (one configuration's metrics) and of a
``hone-worker/1`` result (what one worker ran on a shared study)."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hone.core.metrics import BUILTIN


def _num(value: float | None, digits: int = 4) -> str:
    """``hone run``'s number style: 4 significant digits, exponent for very large/small."""
    if value is None or math.isnan(value):
        return "nan"
    if value == 0:
        return "0"
    mag = abs(value)
    if mag >= 1e6 or mag < 1e-3:
        return f"{value:.{digits - 1}e}"
    return f"{value:.{digits}g}" if mag < 1000 else f"{value:,.1f}"


def render(data: dict[str, Any]) -> Group:
    """Each metric's summary over the runs, the configuration, failed runs, restore problems.
    Units are known for hone's built-in metrics only (a spec metric's unit is in its spec)."""
    config = " ".join(f"{k}={v}" for k, v in data["config"].items())
    table = Table(title=f"hone run {data['spec']}" + (f"  ({config})" if config else ""))
    for col in ("metric", "n", "mean", "stddev", "stddev/mean", "min", "max", "unit"):
        table.add_column(col, justify="left" if col in ("metric", "unit") else "right")
    for name, s in data["summary"].items():
        cv = f"{s['cv'] * 100:.2f}%" if s["cv"] is not None and math.isfinite(s["cv"]) else "nan"
        table.add_row(name, str(s["n"]), _num(s["mean"]), _num(s["stddev"]), cv, _num(s["min"]), _num(s["max"]),
                      BUILTIN[name].unit if name in BUILTIN else "")
    lines: list[Table | Text] = [table]
    runs = data["runs"]
    if data["failed_runs"]:
        first = next((r["error"] for r in runs if r.get("error") is not None), "")
        lines.append(Text(f"warning: {data['failed_runs']} of {len(runs)} runs failed: {first}", style="yellow"))
    lines += [Text(f"restore problem: {p} (run `hone rollback`)", style="red") for p in data["restore_problems"]]
    fp = data["fingerprint"]
    lines.append(Text(f"{len(runs)} runs after {data['warmup']} warm-up; {fp.get('cpu_model')}, {fp.get('cpus')} CPUs,"
                      f" kernel {fp.get('kernel')}", style="dim"))
    return Group(*lines)


def render_worker(data: dict[str, Any]) -> Group:
    """The trials this worker ran, failed and re-enqueued, and the study's progress."""
    ran = ", ".join(map(str, data["ran"])) or "none"
    lines = [Text(f"worker on study {data['study']!r} in {data['storage']}: ran {len(data['ran'])} trial(s) ({ran}), "
                  f"{len(data['failed'])} failed; the study has {data['finished_in_study']}/{data['budget']} finished")]
    if data["failed"]:
        lines.append(Text(f"failed trials: {', '.join(map(str, data['failed']))}", style="yellow"))
    if data["requeued"]:
        lines.append(Text(f"re-enqueued interrupted trials: {', '.join(map(str, data['requeued']))}"))
    lines += [Text(f"not restored: {p}", style="red") for p in data["restore_problems"]]
    return Group(*lines)
