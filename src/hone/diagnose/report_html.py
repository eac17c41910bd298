"""HTML report of a doctor session: the Markdown report's content with every flame graph
embedded (an ``<object>`` holding the SVG as a data URL, so it stays interactive — click
to zoom, Ctrl-F to search — and the page is one self-contained file)."""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path
from typing import Any

from hone.diagnose.report_markdown import (
    derived_rows,
    missing_counter_lines,
    num,
    pct,
    profile_rows,
    render_markdown,
    verdict_note,
)

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1250px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.6em 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
td:first-child,th:first-child,td:last-child{text-align:left}code{background:#f3f3f3;padding:1px 3px}
.verdict-faster{color:#070;font-weight:bold}.verdict-slower{color:#a00;font-weight:bold}
.finding{border-left:4px solid #c60;padding:.2em 1em;margin:1em 0;background:#fffaf3}
object{width:100%;border:1px solid #ddd}.muted{color:#777}
"""


def _e(text: Any) -> str:
    return html.escape(str(text))


def _table(header: list[str], rows: list[list[str]], raw: bool = False) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{c if raw else _e(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _embed_svg(out_dir: Path, rel: str) -> str:
    path = out_dir / rel
    if not path.exists():
        return f"<p class=muted>{_e(rel)} is missing</p>"
    raw = path.read_bytes()
    # The box takes the SVG's own height (inferno sizes it by stack depth), so no blank band.
    m = re.search(rb'<svg[^>]*\sheight="(\d+)"', raw[:4000])
    height = int(m.group(1)) + 4 if m else 520
    data = base64.b64encode(raw).decode()
    return (f'<object type="image/svg+xml" data="data:image/svg+xml;base64,{data}" style="height:{height}px">'
            f'</object><p class=muted>file: <a href="{_e(rel)}">{_e(rel)}</a></p>')


def render_html(doc: dict[str, Any], out_dir: Path) -> str:
    """The report as one HTML page; SVG files are read from ``out_dir``."""
    caps = doc["capabilities"]
    cmd = " ".join(doc["command"])
    parts = [f"<!doctype html><meta charset=utf-8><title>hone doctor: {_e(cmd)}</title><style>{STYLE}</style>",
             f"<h1>hone doctor: <code>{_e(cmd)}</code></h1>",
             f"<p>Machine: {_e(caps['cpu_model'])}, {caps['cpus']} CPUs, kernel {_e(caps['kernel'])}; "
             f"{_e(caps.get('perf_version'))}. Finished in {doc['elapsed_s']:.0f} s.</p>", "<h2>Findings</h2>"]
    if not doc["findings"]:
        parts.append("<p>No rule fired.</p>")
    for i, f in enumerate(doc["findings"], 1):
        items = [_e(e) for e in f["evidence"]] + [
            f"threshold: {_e(f['threshold'])}", f"source: {_e(f['source'])}", f"remedy: {_e(f['remedy'])}"]
        items += [f"experiment <b>{_e(e['title'])}</b>: <code>{_e(e.get('command', ''))}</code>"
                  for e in f["experiments"]]
        items += [f"next: <code>{_e(s)}</code>" for s in f["suggestions"]]
        parts.append(f"<div class=finding><h3>{i}. {_e(f['title'])} <span class=muted>({_e(f['rule'])}, score "
                     f"{f['score']:.2f})</span></h3><ul>" + "".join(f"<li>{x}</li>" for x in items) + "</ul></div>")
    if doc["experiments"]:
        parts.append("<h2>Experiments</h2>")
    for exp in doc["experiments"]:
        parts.append(f"<h3>{_e(exp['title'])}</h3><p>Hypothesis: {_e(exp['hypothesis'])}. Metric "
                     f"<code>{_e(exp['metric'])}</code> ({_e(exp['unit'])}, "
                     f"{'higher' if exp['goal'] == 'maximize' else 'lower'} is better); {exp['rounds']} interleaved "
                     f"rounds, seed {exp['seed']}.</p>")
        rows = []
        for v in exp["variants"]:
            s = exp["summaries"].get(v["name"])
            rows.append([v["name"], str(s["n"]) if s else "0", num(s["mean"]) if s else "—",
                         num(s["stddev"]) if s else "—", pct(s["cv"] * 100) if s else "—",
                         pct(exp["sys_share_pct"].get(v["name"])), " ".join(v["argv"])])
        parts.append(_table(["variant", "n", f"mean ({exp['unit']})", "stddev", "stddev/mean", "kernel time",
                             "command"], rows))
        ref = exp["variants"][0]["name"]
        crow = [[_e(f"{n} vs {ref}"), f"{c['change_pct']:+.1f}%",
                 f"[{c['ci_pct'][0]:+.1f}%, {c['ci_pct'][1]:+.1f}%]", f"{c['p_value']:.3g}", f"±{c['mde_pct']:.1f}%",
                 f"<span class='verdict-{_e(c['verdict'])}'>{_e(c['verdict'])}</span>{_e(verdict_note(c))}"]
                for n, c in exp["comparisons"].items()]
        if crow:
            parts.append(_table(["comparison", "change", "95% CI", "p", "detectable", "verdict"], crow,
                                raw=True))
    parts.append("<h2>Flame graphs</h2>")
    flames = ([("profile", doc["flame"])] if doc.get("flame") else []) + list(doc.get("variant_flames", {}).items())
    for name, fl in flames:
        share = fl.get("kernel_share")
        parts.append(f"<h3>{_e(name)}: {fl['samples']:.0f} samples, "
                     f"{pct(share * 100 if share is not None else None)} in the kernel</h3>")
        parts.append(_embed_svg(out_dir, fl["svg"]))
    for name, d in doc.get("diffs", {}).items():
        parts.append(f"<h3>Differential: {_e(name)}</h3><p>Red: more samples after the change; blue: fewer "
                     "(normalised).</p>")
        parts.append(_embed_svg(out_dir, d["svg"]))
        parts.append(_table(["function", "self share before", "after", "change"],
                            [[f, pct(b * 100), pct(a * 100), f"{(a - b) * 100:+.1f} pt"]
                             for f, b, a in d["deltas"][:6]]))
    for probe in doc.get("probes", []):
        parts.append(f"<h2>bpftrace probe: {_e(probe['name'])} ({probe['seconds']:.0f} s)</h2>"
                     f"<pre>{_e((probe['output'] or '(no output)')[:6000])}</pre>")
    parts.append(f"<h2>Profile (perf stat, {len(doc['profile']['runs'])} runs)</h2>")
    parts.append(_table(["quantity", "mean", "stddev", "stddev/mean", "min", "max", "unit"], profile_rows(doc)))
    parts.append("<h3>Derived metrics</h3>")
    parts.append(_table(["metric", "mean", "stddev/mean", "unit", "formula", "note"], derived_rows(doc)))
    parts.append("<h3>Counters not collected</h3><ul>" + "".join(
        f"<li>{_e(line[2:])}</li>" for line in missing_counter_lines(doc)) + "</ul>")
    parts.append("<h2>Capabilities</h2><ul>" + "".join(f"<li>{_e(n)}</li>" for n in [
        f"hardware counters (PMU): {'yes' if caps['pmu'] else 'no — ' + caps['pmu_why']}",
        f"LBR: {'yes' if caps['lbr'] else 'no — ' + caps['lbr_why']}",
        f"tracefs: {'mounted' if caps['tracefs_mounted'] else 'not mounted'}",
        f"bpftrace: {caps['bpftrace'] or 'unusable — ' + caps['bpftrace_why']}",
        *caps.get("notes", [])]) + "</ul>")
    return "\n".join(parts)


def write_reports(doc: dict[str, Any], out_dir: Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``out_dir``; returns both paths."""
    md = out_dir / "report.md"
    md.write_text(render_markdown(doc))
    page = out_dir / "report.html"
    page.write_text(render_html(doc, out_dir))
    return md, page
