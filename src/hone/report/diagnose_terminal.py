"""Terminal views of ``hone-doctor/1`` (the doctor's own Markdown report, drawn by rich),
``hone-profile/1`` (quantities and derived metrics) and ``hone-capabilities/1``."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from hone.diagnose.report_markdown import missing_counter_lines, num, pct, render_markdown


def render_doctor(doc: dict[str, Any]) -> Markdown:
    """The same report as OUT/report.md (findings, experiments, profile, flame graphs)."""
    return Markdown(render_markdown(doc))


def render_profile(doc: dict[str, Any]) -> Group:
    """As ``hone profile`` prints it: every quantity's mean and variation over the runs, the
    derived metrics that have data, why the others are not computed, what was not counted."""
    command = " ".join(doc["command"]) if doc["command"] else f"pid {doc['pid']}"
    quantities = Table(title=f"hone profile: {command} ({len(doc['runs'])} runs)")
    for col in ("quantity", "mean", "stddev/mean", "min", "max"):
        quantities.add_column(col, justify="left" if col == "quantity" else "right")
    for name, s in doc["quantities"].items():
        quantities.add_row(name, num(s["mean"]), pct(s["cv"] * 100 if s["mean"] and s["cv"] is not None else None),
                           num(s["min"]), num(s["max"]))
    derived = Table(title="derived metrics (only from counters that have data)")
    for col in ("metric", "mean", "stddev/mean", "unit", "formula"):
        derived.add_column(col, justify="right" if col in ("mean", "stddev/mean") else "left")
    skipped: list[RenderableType] = []
    for d in doc["derived"].values():
        s = d["summary"]
        if s is None:
            reasons = sorted(set(d["missing"].values()))
            skipped.append(Text(f"{d['name']}: not computed — missing {', '.join(d['missing'])}"
                                + (f" ({reasons[0]})" if reasons else "")))
            continue
        derived.add_row(d["name"], num(s["mean"]), pct(s["cv"] * 100 if s["mean"] and s["cv"] is not None else None),
                        d["unit"], d["formula"])
    parts: list[RenderableType] = [quantities, derived, *skipped]
    parts += [Text(f"not collected: {line[2:]}") for line in missing_counter_lines({"profile": doc})]
    return Group(*parts)


def render_capabilities(caps: dict[str, Any]) -> Group:
    """What this machine can measure, as ``hone doctor --capabilities`` prints it."""
    table = Table(title="hone doctor --capabilities")
    table.add_column("what")
    table.add_column("status")
    table.add_row("CPU", f"{caps['cpu_model']} ({caps['cpus']} CPUs), kernel {caps['kernel']}")
    table.add_row("perf", caps["perf_version"] or "missing")
    table.add_row("hardware counters (PMU)", "yes" if caps["pmu"] else f"no — {caps['pmu_why']}")
    table.add_row("cpu-clock sampling", "yes" if caps["cpu_clock_sampling"] else "no")
    table.add_row("--call-graph dwarf", "yes" if caps["call_graph_dwarf"] else "no")
    table.add_row("LBR (perf record -b)", "yes" if caps["lbr"] else f"no — {caps['lbr_why']}")
    table.add_row("tracefs", ("mounted" + (" (by hone)" if caps["tracefs_mounted_by_hone"] else ""))
                  if caps["tracefs_mounted"] else "not mounted")
    table.add_row("debugfs", "mounted" if caps["debugfs_mounted"] else "not mounted")
    table.add_row("bpftrace", caps["bpftrace"] or f"unusable — {caps['bpftrace_why']}")
    kprobes = {True: "yes", False: "no (kernel built without CONFIG_KPROBES)", None: "unknown"}[caps["kprobes"]]
    table.add_row("kprobes", kprobes)
    table.add_row("audit", f"kernel: {caps['audit_kernel']}, auditctl: {caps['auditctl'] or 'not installed'}")
    table.add_row("THP", f"enabled={caps['thp_enabled']} defrag={caps['thp_defrag']}")
    table.add_row("governor", caps["governor"] or "none (no cpufreq)")
    table.add_row("perf_event_paranoid", str(caps["perf_event_paranoid"]))
    table.add_row("inferno", ", ".join(f"{k}: {'ok' if v else 'missing'}" for k, v in caps["inferno"].items()))
    events = caps["events"]
    lines: list[RenderableType] = [table,
                                   Text(f"events that count: {', '.join(e for e, s in events.items() if s == 'ok')}")]
    by_reason: dict[str, list[str]] = {}
    for ev, status in events.items():
        if status != "ok":
            why = f"<not supported>: {caps['pmu_why']}" if status == "not supported" and not caps["pmu"] else status
            by_reason.setdefault(why, []).append(ev)
    lines += [Text(f"not collected: {', '.join(evs)} — {why}") for why, evs in by_reason.items()]
    lines += [Text(f"note: {n}") for n in caps["notes"]]
    return Group(*lines)
