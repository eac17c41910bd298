"""A short Markdown summary of a comparison for CI pages.

GitHub shows ``$GITHUB_STEP_SUMMARY`` on the run's page (``hone compare`` appends to it
when it is set); ``--summary FILE`` writes the same text anywhere (a GitLab artifact, a
review comment). A verdict line per candidate with its change and CI, whether the
``--fail-on`` gate passed, each variant's mean, then :mod:`hone.report.markdown`'s verdict
table, warnings and how it was run.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

from hone.core.metrics import verdict_word
from hone.report.base import ci_label, ci_text, display_scale, num, p_text, pct, row_label, write_text
from hone.report.gate import VERDICTS, gate_failures
from hone.report.markdown import rounds_text, verdict_table


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def verdict_line(data: dict[str, Any], row: dict[str, Any], name: str) -> str:
    """``- **new** vs old: **slower**, +15.12% (95% CI [+12.01%, +18.30%], p=0.000, 40 rounds)``."""
    c = row["comparisons"][name]
    label = row_label(data, row)
    p = c["p_value"] if c["p_value"] is not None else math.nan
    verdict = verdict_word(c["verdict"], data.get("unit"))
    line = (f"- {label + ': ' if label else ''}**{_cell(name)}** vs {_cell(data['reference'])}: "
            f"**{verdict}**, {pct(c['change_pct'], sign=True)} ({ci_label(data, row)} {ci_text(c)}, "
            f"p={p_text(p)}, {c['n']} rounds)")
    if c.get("reason") and c["verdict"] in ("equivalent", "inconclusive"):
        line += f" — {c['reason']}"
    if c["verdict"] == "inconclusive" and c.get("rounds_needed"):
        line += f"; about {c['rounds_needed']} rounds in all would settle it"
    return line


def render(data: dict[str, Any], fail_on: Collection[str] = ()) -> str:
    unit = data.get("unit") or ""
    better = "lower" if data["goal"] == "minimize" else "higher"
    out = [f"### hone compare: {data['metric']}, {better} is better, reference {_cell(data['reference'])}", ""]
    out += [verdict_line(data, row, name) for row in data["rows"] for name in row["comparisons"]]
    if fail_on:
        flag = ",".join(v for v in VERDICTS if v in fail_on)
        failures = gate_failures(data, fail_on)
        out += ["", f"**Gate `--fail-on {flag}`: failed** — {'; '.join(failures)}" if failures
                else f"**Gate `--fail-on {flag}`: passed**"]
    means = [s["mean"] for row in data["rows"] for s in row["summaries"].values() if s.get("mean") is not None]
    factor, shown = display_scale(unit, means)
    sweep = data.get("sweep")
    lead, align = (f"|{sweep['name']}", "|---:") if sweep else ("", "")
    out += ["", f"{lead}|Variant|n|Mean{f' ({shown})' if shown else ''}|± stddev|stddev/mean|",
            f"{align}|:---|---:|---:|---:|---:|"]
    for row in data["rows"]:
        first = f"|{row['sweep_value']}" if sweep else ""
        for v in row["variants"]:
            s = row["summaries"].get(v["name"])
            cells = ([str(s["n"]), num(s["mean"] * factor, 3), num(s["stddev"] * factor, 3),
                      pct(s["cv"] * 100) if s.get("cv") is not None else "nan"] if s
                     else ["0", "—", "—", "—"])
            out.append(f"{first}|{_cell(v['name'])}|" + "|".join(cells) + "|")
    out += ["", *verdict_table(data)]
    warnings = [w for row in data["rows"] for w in row.get("warnings", [])] + data.get("warnings", [])
    if warnings:
        out += ["", *[f"- warning: {w}" for w in warnings]]
    out += ["", f"{rounds_text(data)}; seed {data['seed']}."]
    return "\n".join(out) + "\n"


def publish(text: str, path: str | None, environ: Mapping[str, str] = os.environ) -> list[str]:
    """Write ``text`` to ``path`` (``--summary``; ``-`` = stdout) and append it to
    ``$GITHUB_STEP_SUMMARY`` when that is set and is not the same file. A step summary that
    cannot be written is returned as a warning: the comparison and its gate still stand."""
    if path:
        write_text(path, text)
    step = environ.get("GITHUB_STEP_SUMMARY")
    if not step or (path and path != "-" and _same_file(path, step)):
        return []
    try:
        with open(step, "a", encoding="utf-8") as fh:
            fh.write(text + "\n")  # a blank line keeps the next step's Markdown apart
    except OSError as exc:
        return [f"cannot append to $GITHUB_STEP_SUMMARY ({step}): {exc.strerror}"]
    return []


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return False
