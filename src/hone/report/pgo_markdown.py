"""Markdown of a ``hone-pgo/1`` result in the layout of the AutoFDO before/after table
(docs/seed-formats.md): per evaluate scenario and figure, one column per build with every
round's value, then STDDEVP, Mean, STDDEVP/Mean and Opt/Default; below it the paired change
vs the default with its CI and the verdict (the table alone cannot say whether a gap is real).

Figures: a program run as the service has the spec's metrics and the server's CPU time; a
command has its CPU time. Results written before per-round values were kept get the
summary rows only.
"""

from __future__ import annotations

import math
from typing import Any

from hone.report.base import num, pct
from hone.stats.paired import opt_over_default_pct
from hone.stats.summary import summarize

CPU = "cpu_s"


def _num(value: float) -> str:
    """Two decimals, four for sub-unit figures (CPU seconds of a short run)."""
    return num(value, 2 if abs(value) >= 1 else 4)


#: Figures hone adds to a service's metrics, by their labels.
LABELS = {"server_cpu_us_per_op": "server CPU µs per op"}


def _figures(rows: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(key, label, goal) of every figure the scenario's rows carry; CPU time last."""
    out: list[tuple[str, str, str]] = []
    first = rows[0]
    for name, fig in (first.get("metrics") or {}).items():
        out.append((name, LABELS.get(name, name), fig.get("goal", "maximize")))
    label = "server CPU s" if first.get("metrics") is not None else "CPU s"
    out.append((CPU, label, "minimize"))
    return out


def _values(row: dict[str, Any], key: str) -> list[float] | None:
    raw = row.get("cpu_s_values") if key == CPU else (row.get("metrics") or {}).get(key, {}).get("values")
    if raw is None:
        return None
    return [math.nan if v is None else float(v) for v in raw]


def _comparison(row: dict[str, Any], key: str) -> tuple[float | None, list[float] | None, str]:
    """(change %, CI in %, verdict) of ``row`` vs the default on figure ``key``."""
    change, ci, verdict = _paired(row, key)
    return change, ci, "noise probe" if row.get("verdict") == "noise probe" else verdict


def _paired(row: dict[str, Any], key: str) -> tuple[float | None, list[float] | None, str]:
    if key == CPU:
        ci = row.get("time_ci")
        ci_pct = [(ci[0] - 1) * 100, (ci[1] - 1) * 100] if ci else None
        verdict = row.get("verdict", "")
        if row.get("metrics") is not None and verdict != "reference":
            verdict = row.get("cpu_verdict") or ""  # a service's verdict is its first metric's
        return row.get("change_pct"), ci_pct, verdict
    fig = (row.get("metrics") or {}).get(key, {})
    verdict = row.get("verdict", "") if key == row.get("metric") else fig.get("verdict", "")
    return fig.get("change_pct"), fig.get("ci_pct"), verdict


def _table(rows: list[dict[str, Any]], key: str, label: str, goal: str) -> list[str]:
    names = [r["variant"] for r in rows]
    values = {r["variant"]: _values(r, key) for r in rows}
    good = {n: [v for v in vals if math.isfinite(v)] for n, vals in values.items() if vals is not None}
    summ = {n: summarize(v) for n, v in good.items() if v}
    out = [f"**{label}** ({'higher' if goal == 'maximize' else 'lower'} is better)", "",
           "|Run|" + "|".join(names) + "|", "|:---:|" + "|".join("---:" for _ in names) + "|"]
    nrounds = max((len(v) for v in values.values() if v is not None), default=0)
    for i in range(nrounds):
        cells = []
        for n in names:
            vals = values.get(n)
            v = vals[i] if vals is not None and i < len(vals) else math.nan
            cells.append(_num(v) if math.isfinite(v) else "FAILED" if vals is not None and i < len(vals) else "-")
        out.append(f"|**{i + 1}**|" + "|".join(cells) + "|")

    def stat(attr: str) -> list[str]:
        return [_num(getattr(summ[n], attr)) if n in summ else "–" for n in names]

    out.append("|**STDDEVP**|" + "|".join(stat("stddev")) + "|")
    out.append("|**Mean**|" + "|".join(stat("mean")) + "|")
    out.append("|**STDDEVP/Mean**|" + "|".join(
        pct(summ[n].cv * 100) if n in summ and math.isfinite(summ[n].cv) else "–" for n in names) + "|")
    ref = summ.get(names[0])
    opt = []
    for i, n in enumerate(names):
        if i == 0:
            opt.append("100.00%")
        elif ref is None or n not in summ:
            opt.append("–")
        else:
            # Opt/Default says how much better the mean is: lower for times, higher for throughput.
            gain = opt_over_default_pct(ref.mean, summ[n].mean)
            opt.append(f"***{pct(gain if goal == 'minimize' else -gain)}***")
    out.append("|**Opt/Default**|" + "|".join(opt) + "|")
    out.append("|**Change vs default [95% CI]**|" + "|".join(_change(r, key) for r in rows) + "|")
    out.append("|**Verdict**|" + "|".join(_comparison(r, key)[2] or "–" for r in rows) + "|")
    return out


def _change(row: dict[str, Any], key: str) -> str:
    change, ci, _ = _comparison(row, key)
    if row.get("verdict") == "reference":
        return "—"
    if change is None:
        return "–"
    span = f" [{ci[0]:+.1f}%, {ci[1]:+.1f}%]" if ci and None not in ci else ""
    return f"{change:+.1f}%{span}"


def render(result: dict[str, Any]) -> str:
    """Markdown text: one section per evaluate scenario, one table per figure, the pick."""
    name = result.get("name") or "pgo"
    out = [f"## hone pgo: {name}", ""]
    for scn in (s["name"] for s in result["scenarios"]["evaluate"]):
        rows = [r for r in result["variants"] if r["scenario"] == scn]
        if not rows:
            continue
        floor = result.get("noise_floor_pct", {}).get(scn)
        how = "as the service" if rows[0].get("metrics") is not None else "CPU time of the command"
        floor_txt = f"; layout-noise floor ±{floor:.1f}%" if floor is not None else ""
        out += [f"### {scn} ({how}, {result['rounds']} interleaved rounds{floor_txt})", ""]
        for key, label, goal in _figures(rows):
            out += [*_table(rows, key, label, goal), ""]
    best = result.get("best", {})
    out.append(f"Best: **{best['variant']}** — {best.get('reason', '')}" if best.get("variant")
               else f"Best: none — {best.get('reason', '')}")
    out += ["", "Opt/Default: how much better the variant's mean is than the default's (positive = better)."
                " The change and its CI are paired by round (ratio of the variant's run to the default's"
                " in the same round); the verdict is floored by the layout-noise probes."]
    return "\n".join(out) + "\n"
