"""``hone verify``'s table: one row per knob, the ones not ok in red."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def render(data: dict[str, Any]) -> Table:
    table = Table(title=f"hone verify {data['source']}")
    for col in ("knob", "expected", "actual", "source", "status"):
        table.add_column(col)
    for c in data["checks"]:
        actual = c["actual"] if c["actual"] is not None else f"({c['detail'] or 'absent'})"
        table.add_row(c["knob"], c["expected"], actual, c["source"], c["status"],
                      style=None if c["status"] == "ok" else "red")
    return table
