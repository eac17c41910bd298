"""Terminal rendering of a compare result (rich): summary, ratios with CIs, verdicts."""

from __future__ import annotations

import math
from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from hone.core.metrics import verdict_word
from hone.report.base import (
    ci_label,
    ci_label_rows,
    ci_text,
    display_scale,
    num,
    p_text,
    pct,
    ratio_method_text,
    row_label,
    sweep_rows,
)

_VERDICT_STYLE = {"faster": "bold green", "slower": "bold red", "equivalent": "bold", "inconclusive": "yellow"}


def _verdict_text(c: dict[str, Any], unit: str | None) -> Text:
    verdict = c["verdict"]
    text = Text(verdict_word(verdict, unit), style=_VERDICT_STYLE.get(verdict, ""))
    if c.get("reason") and verdict in ("equivalent", "inconclusive"):
        text.append(f" ({c['reason']})", style="dim")
    return text


def render_row(data: dict[str, Any], row: dict[str, Any]) -> Table:
    """One table for one sweep value: a line per variant, reference first."""
    metric = data["metric"]
    means = [s["mean"] for s in row["summaries"].values() if s.get("mean") is not None]
    factor, unit = display_scale(data.get("unit") or "", means)
    label = row_label(data, row)
    better = f"{'lower' if data['goal'] == 'minimize' else 'higher'} is better"
    title = f"{metric} ({unit + ', ' if unit else ''}{better})"
    table = Table(title=f"{label}  {title}" if label else title, title_justify="left")
    for col in ("variant", "n", "failed", "mean", "± stddev", "stddev/mean", "P95", "wall mean",
                f"vs {data['reference']}", ci_label(data, row), "p", "verdict"):
        table.add_column(col, justify="left" if col in ("variant", "verdict") else "right")
    for v in row["variants"]:
        name = v["name"]
        s = row["summaries"].get(name)
        c = row["comparisons"].get(name)
        failed = row["failed"].get(name, 0)
        failed_txt = Text(str(failed), style="bold red") if failed else Text("0")
        stats = (
            [num(s["mean"] * factor, 3), num(s["stddev"] * factor, 3),
             pct(s["cv"] * 100 if s["cv"] is not None else math.nan), num(s["p95"] * factor, 3),
             f"{num(s['wall_mean'] * 1000, 1)} ms" if s.get("wall_mean") is not None else "-"]
            if s else ["—"] * 5
        )
        if c is None:
            cmp_cells: list[RenderableType] = [Text("reference", style="dim"), "", "", ""]
        else:
            cmp_cells = [f"×{num(c['ratio'], 4)} ({pct(c['change_pct'], sign=True)})", ci_text(c),
                         p_text(c["p_value"] if c["p_value"] is not None else math.nan),
                         _verdict_text(c, data.get("unit"))]
        n = str(s["n"]) if s else "0"
        table.add_row(name, n, failed_txt, *stats, *cmp_cells)
    return table


def render_sweep(data: dict[str, Any]) -> Table:
    """The glibc concurrency sweep table (docs/seed-formats.md): one line per sweep value (and
    variant), speed-up and verdict."""
    means = [r[k] for r in sweep_rows(data) for k in ("ref_mean", "mean") if r[k] is not None]
    factor, unit = display_scale(data.get("unit") or "", means)
    table = Table(title=f"sweep over {data['sweep']['name']}: {data['metric']} ({unit})", title_justify="left")
    for col in (data["sweep"]["name"], "variant", data["reference"], "variant mean", "speed-up", "change",
                ci_label_rows(data), "verdict"):
        table.add_column(col, justify="left" if col in ("variant", "verdict") else "right")
    for r in sweep_rows(data):
        c = r["comparison"]
        table.add_row(str(r["value"]), r["variant"],
                      num(r["ref_mean"] * factor if r["ref_mean"] is not None else None, 3),
                      num(r["mean"] * factor if r["mean"] is not None else None, 3), f"×{num(r['speedup'])}",
                      pct(c["change_pct"], sign=True), ci_text(c), _verdict_text(c, data.get("unit")))
    return table


def render(data: dict[str, Any]) -> RenderableType:
    """Every row's table, the detectable effects, the warnings and how it was run."""
    parts: list[RenderableType] = []
    for row in data["rows"]:
        parts.append(render_row(data, row))
        looks = row.get("looks") or []
        if len(looks) > 1 or row.get("stopped") in ("time", "max rounds"):
            why = {"decisive": "decisive", "time": "the --max-time budget ended",
                   "max rounds": "--max-rounds reached"}.get(row.get("stopped", ""), row.get("stopped", ""))
            parts.append(Text(f"  {len(looks)} look(s) at " + ", ".join(str(lk["rounds"]) for lk in looks)
                              + f" rounds ({why}); the last at α = {looks[-1]['alpha']:.4g}, its CIs at "
                              f"{100 * (1 - looks[-1]['alpha']):.2f}%", style="dim"))
        for w in row.get("warnings", []):
            parts.append(Text(f"warning: {w}", style="yellow"))
    if data.get("sweep"):
        parts.append(render_sweep(data))
    for w in data.get("warnings", []):
        parts.append(Text(f"warning: {w}", style="yellow"))
    n = max((len(v["runs"]) for row in data["rows"] for v in row["variants"]), default=0)
    how = (f"{n} interleaved rounds (random order per round, seed {data['seed']}), {data['warmup']} warm-up; "
           f"metric {data['metric']}: {data.get('metric_reason') or ''}; ratio = {ratio_method_text(data)}")
    if data.get("alpha_split"):
        split = data["alpha_split"]
        how += f"; planned extension to {data['max_rounds']} rounds, α split {split['first_look']:.3g} + " \
               f"{split['second_look']:.3g}"
    parts.append(Text(how, style="dim"))
    return Group(*parts)
