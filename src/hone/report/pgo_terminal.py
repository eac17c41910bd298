"""Terminal view of a ``hone-pgo/1`` result (the AutoFDO-style before/after table per evaluate
scenario, the profiles, the pick) and of a ``hone-pgo-manifest/1`` (how one variant was built)."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from hone.report.pgo_markdown import LABELS


def _pct(ratio: float | None) -> str:
    """A variant/default ratio as a % change."""
    return "–" if ratio is None else f"{(ratio - 1) * 100:+.1f}%"


def _ci(ci: list[float | None] | None) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return "–"
    return f"[{(ci[0] - 1) * 100:+.1f}, {(ci[1] - 1) * 100:+.1f}]%"


def notes(result: dict[str, Any]) -> list[Text]:
    """Builds rejected or failed, warnings, why counts are missing (``hone pgo`` prints
    these on stderr)."""
    out = []
    for b in result["builds"]:
        if b["status"] == "rejected":
            out.append(Text(f"REJECTED {b['variant']}: wrong output — {b['error']}", style="bold red"))
    for b in result["builds"]:
        if b["status"] == "failed":
            out.append(Text(f"build failed {b['variant']}: {b['error']}", style="red"))
    out += [Text(f"warning: {w}", style="yellow") for w in result.get("warnings", [])]
    if result.get("counts_note"):
        out.append(Text(result["counts_note"], style="yellow"))
    return out


def tables(result: dict[str, Any]) -> list[RenderableType]:
    """One table per evaluate scenario, then the profiles, the best variant and where the
    binaries are."""
    out: list[RenderableType] = []
    for scn in (s["name"] for s in result["scenarios"]["evaluate"]):
        floor = result["noise_floor_pct"].get(scn, 0.0)
        scn_rows = [r for r in result["variants"] if r["scenario"] == scn]
        if any("metrics" in r for r in scn_rows):
            out.append(_service_table(result, scn, scn_rows, floor))
            continue
        table = Table(title=f"{result.get('name') or 'pgo'} — {scn}  (CPU time vs default, {result['rounds']} rounds;"
                            f" layout-noise floor ±{floor:.1f}%)")
        for col in ("variant", "CPU s (median)", "time", "95% CI", "instructions", "branch misp.", "cache misses",
                    "verdict"):
            table.add_column(col, justify="left" if col in ("variant", "verdict") else "right")
        for r in (r for r in result["variants"] if r["scenario"] == scn):
            med = r.get("cpu_s_median")
            table.add_row(r["variant"], "–" if med is None else f"{med:.3f}", _pct(r["time_ratio"]), _ci(r["time_ci"]),
                          _pct(r["instructions_ratio"]), _pct(r["branch_mispredicts_ratio"]),
                          _pct(r["cache_misses_ratio"]), r["verdict"])
        out.append(table)
    for kind, prof in result.get("profiles", {}).items():
        shares = prof.get("contributions", {})
        parts = ", ".join(f"{s['scenario']} (weight {s['weight']:g}, {s['total_count']:,} counts,"
                          f" {shares.get(s['scenario'], 0) * 100:.0f}%)" for s in prof["scenarios"])
        out.append(Text(f"profile {kind}: {parts}; merged sha256 {prof['sha256'][:12]}"))
    best = result["best"]
    if best.get("variant"):
        if best.get("metric"):  # a server: its metric, and its CPU per op (build.cpu_per) or per run
            per_op = best.get("cpu_per_op_ratio_geomean")
            figures = (f"{best['metric']} {_pct(best.get('metric_ratio_geomean'))}, server CPU "
                       + (f"per op {_pct(per_op)}" if per_op is not None else
                          f"time {_pct(best['time_ratio_geomean'])}"))
        else:
            figures = (f"time {_pct(best['time_ratio_geomean'])}, instructions"
                       f" {_pct(best['instructions_ratio_geomean'])}")
        out.append(Text.assemble((f"best: {best['variant']}", "bold"),
                                 f" ({figures} geometric mean) — {best['reason']}"))
    else:
        out.append(Text(f"best: none — {best['reason']}"))
    if best.get("fewest_instructions"):
        fi = best["fewest_instructions"]
        out.append(Text(f"fewest instructions: {fi['variant']} ({_pct(fi['instructions_ratio_geomean'])})"))
    out.append(Text(f"binaries and manifests: {result['workdir']}/variants/", style="dim"))
    return out


def _service_table(result: dict[str, Any], scn: str, rows: list[dict[str, Any]], floor: float) -> Table:
    """A server's evaluate scenario: each metric's median and change vs default (its CI), the
    server's CPU time; the verdict is the first metric's."""
    names = list(rows[0]["metrics"]) if rows else []
    table = Table(title=f"{result.get('name') or 'pgo'} — {scn}  (as the service, {result['rounds']} rounds;"
                        f" verdict on {rows[0].get('metric') if rows else '?'}, layout-noise floor ±{floor:.1f}%)")
    for col in ("variant", *(LABELS.get(n, n) for n in names), "server CPU s", "CPU", "verdict"):
        table.add_column(col, justify="left" if col in ("variant", "verdict") else "right")
    for r in rows:
        cells = []
        for name in names:
            m = r["metrics"].get(name, {})
            med = m.get("median")
            ci = m.get("ci_pct")
            span = f" [{ci[0]:+.1f}, {ci[1]:+.1f}]" if ci and None not in ci else ""
            cells.append(("–" if med is None else _median(med)) + f" {_pct(m.get('ratio'))}{span}")
        med = r.get("cpu_s_median")
        table.add_row(r["variant"], *cells, "–" if med is None else f"{med:.3f}", _pct(r.get("time_ratio")),
                      r["verdict"])
    return table


def render(result: dict[str, Any]) -> Group:
    """The whole result for ``hone report``: notes first, then the tables."""
    return Group(*notes(result), *tables(result))


def render_manifest(doc: dict[str, Any]) -> Group:
    """A variant's manifest: the binary, each build stage with its flags, the profiles."""
    out: list[RenderableType] = [
        Text(f"{doc['variant']} ({doc['mode']}, {doc['family']}, {doc['system']} project {doc['project']})",
             style="bold"),
        Text(f"binary {doc['binary']}  sha256 {doc['binary_sha256'][:16] or '–'}"),
    ]
    stages = Table(title="build stages")
    for col in ("stage", "seconds", "command", "flags"):
        stages.add_column(col, justify="right" if col == "seconds" else "left")
    for st in doc["stages"]:
        flags = " ".join(f"{k}={' '.join(v) if isinstance(v, list) else v}" for k, v in st["flags"].items()
                         if v not in (None, "", [], {}))
        stages.add_row(st["name"], f"{st['seconds']:.2f}", " ".join(st["command"]), flags)
        out_problems = st.get("profile_problems") or []
        for p in out_problems:
            stages.add_row("", "", f"profile problem: {p}", "")
        if st.get("verification"):
            stages.add_row("", "", f"check: {st['verification']}", "")
    out.append(stages)
    for prof in doc["profiles"]:
        parts = ", ".join(f"{s['scenario']} (weight {s['weight']:g}, {s['total_count']:,} counts)"
                          for s in prof["scenarios"])
        out.append(Text(f"profile {prof['kind']}: {parts}; merged sha256 {prof['sha256'][:12]}"))
    out.append(Text("tools: " + ", ".join(f"{k} {v}" for k, v in doc["tools"].items()), style="dim"))
    out.append(Text(f"built {doc['created']} on {doc['host'].get('machine')}, kernel {doc['host'].get('kernel')}",
                    style="dim"))
    return Group(*out)


def _median(value: float) -> str:
    """Four significant digits, without an exponent for the figures servers report (28,170 req/s)."""
    return f"{value:,.0f}" if abs(value) >= 10_000 else f"{value:.4g}"
