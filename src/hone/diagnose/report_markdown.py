"""Markdown report of a doctor session, rendered from ``doctor.json`` (``hone-doctor/1``) so
it can be regenerated without re-running anything (``hone doctor --report DIR``)."""

from __future__ import annotations

import math
from typing import Any

# Quantities shown in the profile table, in this order, with their units.
PROFILE_ROWS = [
    ("wall_s", "wall time", "s", 1.0),
    ("user_s", "user CPU", "s", 1.0),
    ("sys_s", "system CPU", "s", 1.0),
    ("task-clock", "task-clock", "ms", 1.0),
    ("context-switches", "context switches", "", 1.0),
    ("voluntary_ctxt_switches", "  voluntary", "", 1.0),
    ("involuntary_ctxt_switches", "  involuntary", "", 1.0),
    ("cpu-migrations", "CPU migrations", "", 1.0),
    ("minor-faults", "page faults, minor", "", 1.0),
    ("major-faults", "page faults, major", "", 1.0),
    ("max_rss_kb", "max RSS (upper bound)", "KiB", 1.0),
    ("raw_syscalls:sys_enter", "system calls", "", 1.0),
    ("syscalls:sys_enter_read", "  read", "", 1.0),
    ("syscalls:sys_enter_write", "  write", "", 1.0),
    ("syscalls:sys_enter_lseek", "  lseek", "", 1.0),
    ("syscalls:sys_enter_openat", "  openat", "", 1.0),
    ("syscalls:sys_enter_futex", "  futex", "", 1.0),
    ("syscalls:sys_enter_mmap", "  mmap", "", 1.0),
    ("io_rchar", "bytes read (rchar)", "B", 1.0),
    ("io_wchar", "bytes written (wchar)", "B", 1.0),
    ("cycles", "cycles", "", 1.0),
    ("instructions", "instructions", "", 1.0),
]


def num(value: float | None, digits: int = 4) -> str:
    """A number for a table: thousands separators, ``digits`` significant digits."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    mag = abs(value)
    if mag == 0:
        return "0"
    if mag >= 1000:
        return f"{value:,.0f}"
    if mag < 1e-3:
        return f"{value:.2e}"
    return f"{value:.{digits}g}"


def pct(value: float | None, digits: int = 1) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.{digits}f}%"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return out


def profile_rows(doc: dict[str, Any]) -> list[list[str]]:
    q = doc["profile"]["quantities"]
    rows = []
    for key, label, unit, _ in PROFILE_ROWS:
        s = q.get(key)
        if s is None:
            continue
        cv = pct(s["cv"] * 100 if s["mean"] else None)
        rows.append([label.replace("  ", "↳ "), num(s["mean"]), num(s["stddev"]), cv, num(s["min"]), num(s["max"]),
                     unit])
    return rows


def derived_rows(doc: dict[str, Any]) -> list[list[str]]:
    rows = []
    for name, d in doc["profile"]["derived"].items():
        s = d["summary"]
        if s is not None:
            rows.append([name, num(s["mean"]), pct(s["cv"] * 100 if s["mean"] else None), d["unit"], d["formula"], ""])
        else:
            missing = d.get("missing") or {}
            why = "; ".join(sorted({f"{k}" for k in missing}))
            reasons = sorted(set(missing.values()))
            rows.append([name, "not computed", "", d["unit"], d["formula"],
                         f"missing {why}: {reasons[0] if reasons else 'no data'}"])
    return rows


def missing_counter_lines(doc: dict[str, Any]) -> list[str]:
    """One line per distinct reason, naming the counters that lack data for it."""
    by_reason: dict[str, list[str]] = {}
    for ev, why in doc["profile"]["missing"].items():
        by_reason.setdefault(why, []).append(ev)
    return [f"- {', '.join(evs)}: {why}" for why, evs in by_reason.items()]


def verdict_note(c: dict[str, Any]) -> str:
    """Why an equivalent or inconclusive verdict is what it is: the range not ruled out and
    about how many rounds would settle it (empty for faster/slower and older results)."""
    if c.get("verdict") not in ("equivalent", "inconclusive") or not c.get("reason"):
        return ""
    need = f"; about {c['rounds_needed']} rounds would settle it" if c.get("rounds_needed") else ""
    return f" ({c['reason']}{need})"


def experiment_lines(exp: dict[str, Any]) -> list[str]:
    unit = exp["unit"]
    lines = [f"### Experiment: {exp['title']}", "", f"Hypothesis: {exp['hypothesis']}. Metric: `{exp['metric']}` "
             f"({unit}, {'higher' if exp['goal'] == 'maximize' else 'lower'} is better), {exp['rounds']} interleaved "
             f"rounds in random order (seed {exp['seed']}) after one warm-up round.", ""]
    rows = []
    for v in exp["variants"]:
        s = exp["summaries"].get(v["name"])
        share = exp["sys_share_pct"].get(v["name"])
        if s is None:
            rows.append([v["name"], "0", "—", "—", "—", "—", "—", "`" + " ".join(v["argv"]) + "`"])
            continue
        rows.append([v["name"], str(s["n"]), num(s["mean"]), num(s["stddev"]), pct(s["cv"] * 100), num(s["min"]),
                     pct(share), "`" + " ".join(v["argv"]) + "`"])
    lines += _table(["variant", "n", f"mean ({unit})", "stddev", "stddev/mean", "min", "kernel time", "command"], rows)
    lines.append("")
    ref = exp["variants"][0]["name"]
    crow = []
    for name, c in exp["comparisons"].items():
        ci = f"[{c['ci_pct'][0]:+.1f}%, {c['ci_pct'][1]:+.1f}%]"
        crow.append([f"{name} vs {ref}", f"{c['change_pct']:+.1f}%", ci, f"{c['p_value']:.3g}",
                     f"±{c['mde_pct']:.1f}%", f"**{c['verdict']}**" + verdict_note(c)])
    if crow:
        lines += _table(["comparison", "change", "95% CI", "p", "detectable", "verdict"], crow)
        lines.append("")
    for name, why in exp.get("failures", {}).items():
        lines.append(f"- {name}: {why}")
    return lines


def render_markdown(doc: dict[str, Any]) -> str:
    """The whole report as Markdown (flame graphs as linked SVG images)."""
    caps = doc["capabilities"]
    cmd = " ".join(doc["command"])
    lines = [f"# hone doctor: `{cmd}`", ""]
    if doc.get("spec"):
        lines += [f"Spec: `{doc['spec']}`. Experiment metric: `{doc['metric']['name']}` ({doc['metric']['unit']}).", ""]
    lines += [f"Machine: {caps['cpu_model']}, {caps['cpus']} CPUs, kernel {caps['kernel']}; {caps.get('perf_version')}."
              f" Finished in {doc['elapsed_s']:.0f} s.", ""]
    lines += ["## Findings", ""]
    if not doc["findings"]:
        lines += ["No rule fired.", ""]
    for i, f in enumerate(doc["findings"], 1):
        lines += [f"### {i}. {f['title']} (`{f['rule']}`, score {f['score']:.2f})", ""]
        lines += [f"- {e}" for e in f["evidence"]]
        lines += [f"- threshold: {f['threshold']}", f"- source: {f['source']}", f"- remedy: {f['remedy']}"]
        for e in f["experiments"]:
            lines.append(f"- experiment **{e['title']}**: `{e.get('command', '')}`")
        lines += [f"- next: `{s}`" if s.startswith("hone ") else f"- next: {s}" for s in f["suggestions"]]
        lines.append("")
    if doc["experiments"]:
        lines += ["## Experiments", ""]
        for exp in doc["experiments"]:
            lines += experiment_lines(exp)
    lines += ["## Profile (perf stat)", "", f"{len(doc['profile']['runs'])} runs; mean per run.", ""]
    lines += _table(["quantity", "mean", "stddev", "stddev/mean", "min", "max", "unit"], profile_rows(doc))
    lines += ["", "### Derived metrics", ""]
    lines += _table(["metric", "mean", "stddev/mean", "unit", "formula", "note"], derived_rows(doc))
    lines += ["", "### Counters not collected", ""]
    lines += missing_counter_lines(doc) or ["- none"]
    if doc["not_evaluated"]:
        lines += ["", "Rules not evaluated for lack of counters: " + ", ".join(f"`{r}`" for r in doc["not_evaluated"])
                  + "."]
    lines += ["", "## Flame graphs", ""]
    flames = ([("profile", doc["flame"])] if doc.get("flame") else []) + list(doc.get("variant_flames", {}).items())
    for name, fl in flames:
        share = fl.get("kernel_share")
        lines += [f"### {name}: {fl['samples']:.0f} samples, {pct(share * 100 if share is not None else None)} in the"
                  " kernel", "", f"![{name}]({fl['svg']})", "",
                  f"Files: [{fl['svg']}]({fl['svg']}), [{fl['folded']}]({fl['folded']}), "
                  f"[{fl['speedscope']}]({fl['speedscope']}) (open in speedscope).", ""]
        total = fl["samples"] or 1
        lines += _table(["hottest (self)", "samples", "share"],
                        [[h[0], f"{h[1]:.0f}", pct(h[1] / total * 100)] for h in fl["hottest"][:8]])
        lines.append("")
    for name, d in doc.get("diffs", {}).items():
        lines += [f"### Differential: {name}", "", "Red: more samples after the change, blue: fewer (normalised).", "",
                  f"![diff {name}]({d['svg']})", ""]
        lines += _table(["function", "self share before", "after", "change"],
                        [[f, pct(b * 100), pct(a * 100), f"{(a - b) * 100:+.1f} pt"] for f, b, a in d["deltas"][:6]])
        lines.append("")
    for probe in doc.get("probes", []):
        lines += [f"## bpftrace probe: {probe['name']} ({probe['seconds']:.0f} s)", "", "```",
                  (probe["output"] or "(no output)")[:6000], "```", ""]
        if probe.get("error"):
            lines += [f"Probe problem: {probe['error']}", ""]
    lines += ["## Capabilities", ""]
    lines += [f"- hardware counters (PMU): {'yes' if caps['pmu'] else 'no — ' + caps['pmu_why']}",
              f"- LBR (perf record -b): {'yes' if caps['lbr'] else 'no — ' + caps['lbr_why']}",
              f"- tracefs: {'mounted' if caps['tracefs_mounted'] else 'not mounted'}"
              + (" (mounted by hone)" if caps.get("tracefs_mounted_by_hone") else ""),
              f"- bpftrace: {caps['bpftrace'] or 'unusable — ' + caps['bpftrace_why']}",
              f"- kprobes: {caps['kprobes']}, audit in kernel: {caps['audit_kernel']}, THP: {caps['thp_enabled']}",
              ]
    lines += [f"- {n}" for n in caps.get("notes", [])]
    lines.append("")
    return "\n".join(lines)
