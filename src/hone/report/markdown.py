"""Markdown export in the layout engineers publish (the AutoFDO before/after table,
docs/seed-formats.md).

Per sweep value: one line per run, then STDDEVP, Mean, STDDEVP/Mean, P95 and
Opt/Default (the reference shows 100.00%; another variant shows how much lower its mean
is, (ref − mean)/ref). A second table gives what the per-run table cannot: the paired
ratio, its confidence interval, the p-value and the verdict.
"""

from __future__ import annotations

import math
from typing import Any

from hone.core.metrics import metric_value, verdict_word
from hone.report.base import (
    ci_label_rows,
    ci_text,
    display_scale,
    mde_text,
    num,
    p_text,
    pct,
    ratio_method_text,
    row_label,
    sweep_rows,
)


def _value(run: dict[str, Any], metric: str) -> float:
    v = metric_value(run, metric)
    return math.nan if v is None else v


def render(data: dict[str, Any]) -> str:
    """Markdown text: a title line, the per-run table, the verdict table, warnings."""
    metric, names = data["metric"], [v["name"] for v in data["variants"]]
    all_values = [_value(r, metric) for row in data["rows"] for v in row["variants"] for r in v["runs"]]
    factor, unit = display_scale(data.get("unit") or "", all_values)
    unit_txt = f" ({unit})" if unit else ""
    sweep = data.get("sweep")
    first = sweep["name"] if sweep else "Scenario"
    out = [f"## hone compare: {metric}{unit_txt}, {data['goal']}, reference {data['reference']}", ""]
    out.append(f"|{first}|Run|" + "|".join(f"{n}{unit_txt}" for n in names) + "|")
    out.append("|:---|:---:|" + "|".join("---:" for _ in names) + "|")
    for row in data["rows"]:
        label = row_label(data, row) or metric
        runs = {v["name"]: v["runs"] for v in row["variants"]}
        nrounds = max(len(r) for r in runs.values())
        for i in range(nrounds):
            cells = []
            for n in names:
                r = runs[n][i] if i < len(runs[n]) else None
                if r is None:
                    cells.append("-")
                elif r.get("error") is not None:
                    cells.append("FAILED")
                else:
                    cells.append(num(_value(r, metric) * factor))
            lead = f"***{label}***" if i == 0 else ""
            out.append(f"|{lead}|**{i + 1}**|" + "|".join(cells) + "|")
        summ = row["summaries"]
        comps = row["comparisons"]

        def stat(key: str, names: list[str] = names, summ: dict[str, Any] = summ) -> list[str]:
            return [num(summ[n][key] * factor) if n in summ else "nan" for n in names]

        out.append("||**STDDEVP**|" + "|".join(stat("stddev")) + "|")
        out.append("||**Mean**|" + "|".join(stat("mean")) + "|")
        out.append("||**STDDEVP/Mean**|" + "|".join(
            pct(summ[n]["cv"] * 100) if n in summ and summ[n]["cv"] is not None else "nan" for n in names) + "|")
        out.append("||**P95**|" + "|".join(stat("p95")) + "|")
        opt = ["100.00%"] + [
            f"***{pct(comps[n]['opt_over_default_pct'])}***" if n in comps else "nan" for n in names[1:]]
        out.append("||**Opt/Default**|" + "|".join(opt) + "|")
    out += ["", "Opt/Default: how much lower the mean is than the reference's (positive = lower).", ""]
    out += verdict_table(data)
    if sweep:
        out += ["", f"|{sweep['name']}|Variant|{data['reference']}{unit_txt}|Variant{unit_txt}|Speed-up|Change|"
                    f"{ci_label_rows(data)}|Verdict|", "|:---|:---|---:|---:|---:|---:|:---:|:---|"]
        for r in sweep_rows(data):
            c = r["comparison"]
            out.append(f"|{r['value']}|{r['variant']}|{num(_scaled(r['ref_mean'], factor))}|"
                       f"{num(_scaled(r['mean'], factor))}|{num(r['speedup'])}|{pct(c['change_pct'], sign=True)}|"
                       f"{ci_text(c)}|**{verdict_word(c['verdict'], data.get('unit'))}**|")
    warnings = [w for row in data["rows"] for w in row.get("warnings", [])] + data.get("warnings", [])
    if warnings:
        out += ["", *[f"- warning: {w}" for w in warnings]]
    fp = data.get("fingerprint", {})
    out += ["", f"{rounds_text(data)}; seed {data['seed']}; {fp.get('cpu_model')}, kernel {fp.get('kernel')}."]
    return "\n".join(out) + "\n"


def verdict_table(data: dict[str, Any]) -> list[str]:
    """The lines of the second table: per candidate (and sweep value) the paired ratio,
    change, CI, p, verdict and detectable effect."""
    metric, names = data["metric"], [v["name"] for v in data["variants"]]
    first = data["sweep"]["name"] if data.get("sweep") else "Scenario"
    out = [f"|{first}|Variant|Ratio vs {data['reference']}|Change|{ci_label_rows(data)}|p|Verdict|Detectable effect|",
           "|:---|:---|---:|---:|:---:|---:|:---|---:|"]
    for row in data["rows"]:
        label = row_label(data, row) or metric
        for n in names[1:]:
            c = row["comparisons"].get(n)
            if c is None:
                continue
            verdict = verdict_word(c["verdict"], data.get("unit"))
            out.append(f"|{label}|{n}|{num(c['ratio'], 4)}|{pct(c['change_pct'], sign=True)}|{ci_text(c)}|"
                       f"{p_text(c['p_value'] if c['p_value'] is not None else math.nan)}|**{verdict}**|"
                       f"{mde_text(c['mde_pct'])}|")
    return out


def _scaled(value: float | None, factor: float) -> float | None:
    return None if value is None else value * factor


def rounds_text(data: dict[str, Any]) -> str:
    n = max(len(v["runs"]) for row in data["rows"] for v in row["variants"])
    return (f"{n} interleaved rounds (random order per round), {data['warmup']} warm-up; "
            f"ratio = {ratio_method_text(data)}")
