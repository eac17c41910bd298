"""``hone analyse``'s view of a ``hone-analyse/1`` result: the verdict per group with its
evidence, what is known, every class's score, the signals, and what could not be measured."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text


def _what(doc: dict[str, Any]) -> str:
    if doc["mode"] == "command":
        return " ".join(doc["command"])
    if doc["mode"] == "pids":
        return "pid " + ", ".join(str(p) for p in doc["pids"])
    return "the whole machine"


def render(doc: dict[str, Any]) -> Group:
    parts: list[RenderableType] = [
        Text.assemble(("hone analyse: ", "bold"), f"{_what(doc)} ({doc['window_s']:.1f} s observed)"),
        Text.assemble(("workload: ", "bold"), (doc["summary"], "bold green" if doc["decided"] else "bold yellow")),
    ]
    by_name = {c["name"]: c for c in doc["classes"]}
    for g in doc["groups"]:
        if g["decided"]:
            c = by_name[g["decided"]]
            parts.append(Text(f"{g['group']}: {c['name']} (score {c['score']:.2f}) — {c['conclusion']}"))
            parts += [Text(f"   - {e}") for e in c["evidence"]]
        elif g["candidates"]:
            parts.append(Text(f"{g['group']}: cannot tell between {', '.join(g['candidates'])}", style="yellow"))
            for name in g["candidates"]:
                c = by_name[name]
                parts.append(Text(f"   {name} ({c['status']}, {c['score']:.2f}): " + "; ".join(c["evidence"])))
                parts += [Text(f"     cannot judge {u}") for u in c["unknown"]]
            if g["tells_apart"]:
                parts.append(Text("   what would tell them apart: " + "; ".join(g["tells_apart"])))
        for name in g["unconfirmed"]:
            c = by_name[name]
            parts.append(Text(f"{g['group']}: {name} cannot be judged here — " + "; ".join(c["unknown"]),
                              style="dim"))
    if doc["known"]:
        parts.append(Text("known: " + "; ".join(doc["known"])))
    for p in doc.get("presets", []):
        parts.append(Text(f"preset that fits: {p['name']} ({', '.join(p['classes'])})"))
    table = Table(title="classes")
    for col in ("class", "group", "score", "status", "why not"):
        table.add_column(col, justify="right" if col == "score" else "left")
    for c in doc["classes"]:
        why = "; ".join(c["against"] or c["unknown"]) if c["status"] != "fits" else ""
        table.add_row(c["name"], c["group"], f"{c['score']:.2f}", c["status"], why)
    parts.append(table)
    signals = Table(title="signals")
    for col in ("signal", "value"):
        signals.add_column(col, justify="right" if col == "value" else "left")
    for name, value in doc["signals"]["values"].items():
        signals.add_row(name, f"{value:,.4g}")
    parts.append(signals)
    by_reason: dict[str, list[str]] = {}
    for name, why in doc["signals"]["missing"].items():
        by_reason.setdefault(why, []).append(name)
    parts += [Text(f"not measured: {', '.join(names)} — {why}") for why, names in by_reason.items()]
    parts += [Text(f"note: {n}", style="dim") for n in doc["notes"]]
    return Group(*parts)
