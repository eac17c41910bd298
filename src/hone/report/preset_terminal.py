"""``hone preset verify``'s result in the terminal: the verdict, then one row per setting
(kept, dropped and why, or not measured), with each setting's effect and CI."""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text


def _pct(c: dict[str, Any] | None) -> str:
    if not c or c.get("change_pct") is None:
        return "-"
    lo, hi = c.get("ci_pct") or (None, None)
    ci = f" [{lo:+.2f}%, {hi:+.2f}%]" if lo is not None and hi is not None else ""
    return f"{c['change_pct']:+.2f}%{ci}"


def render_verify(data: dict[str, Any]) -> Group:
    table = Table(title=f"preset {data['preset']} v{data['version']} on {data['spec']} ({data['rounds']} rounds)")
    for col in ("setting", "value", "was", "effect (preset vs without it)", "verdict", "result"):
        table.add_column(col)
    dropped = {d["name"]: d for d in data["dropped"]}
    for s in data["settings"]:
        e = s.get("effect")
        effect = "-" if e is None else _pct({"change_pct": e["effect_pct"], "ci_pct": e["ci_pct"]})
        if s["kept"]:
            result, style = "kept", "green"
        elif s["name"] in dropped:
            result, style = f"dropped: {dropped[s['name']]['reason']}", "yellow"
        else:
            result, style = f"not measured: {s['status']} ({s['why_status']})", "dim"
        table.add_row(s["name"], str(s["value"]), "(not set)" if s["current"] is None else str(s["current"]), effect,
                      "-" if e is None else e["verdict"], result, style=style)
    whole = data["preset_vs_current"]
    lines = [table,
             Text(f"whole preset vs the current configuration: {_pct(whole)} ({whole['verdict']})")]
    if data["kept_vs_current"] is not None:
        lines.append(Text(f"kept settings vs the current configuration: {_pct(data['kept_vs_current'])}"
                          f" ({data['kept_vs_current']['verdict']})"))
    verdict = (f"kept {len(data['kept'])} of {len(data['kept']) + len(data['dropped'])} measured setting(s): "
               + ", ".join(data["kept"])) if data["kept"] else "nothing kept"
    lines.append(Text(verdict, style="bold green" if data["kept"] else "bold yellow"))
    lines.append(Text(data["why"], style="dim"))
    return Group(*lines)


__all__ = ["render_verify"]
