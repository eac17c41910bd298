"""Terminal view of a ``hone-tune`` result (version 2, or 1 in today's words): baseline vs
recommendation, candidates."""

from __future__ import annotations

import math
import shlex
from collections.abc import Iterable
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from hone.core.durations import format_duration
from hone.core.metrics import judged_metric, verdict_word
from hone.report.base import (
    ablation_recommendation,
    ablation_rounds,
    ci_name,
    ci_text,
    detectable_note,
    pct,
    settle_plan,
)


def _num(v: Any) -> str:
    if not isinstance(v, int | float) or (isinstance(v, float) and not math.isfinite(v)):
        return "–"
    return f"{v:.4g}" if abs(v) < 1000 else f"{v:,.1f}"


def knob_value(v: Any) -> str:
    """A knob value as the terminal shows it: a float with a fraction to 6 significant digits
    (``y=0.0892354``, not ``y=0.08923539861147475``); the result file keeps every digit."""
    if isinstance(v, float) and math.isfinite(v) and not v.is_integer():
        return str(round(v, max(0, 5 - math.floor(math.log10(abs(v))))))
    return str(v)


def result_table(data: dict[str, Any], title: str, goals: dict[str, str] | None = None) -> Table:
    """Baseline vs the recommendation (else the best confirmed candidate), one row per scored
    metric: the live ``hone tune`` output and ``hone report`` print this same table. ``goals``
    (known live, not stored in the result) label each metric with its direction."""
    best = data.get("best_candidate") or {}
    table = Table(title=title)
    for col in ("metric", "baseline", "recommendation" if data.get("recommended") else "best candidate",
                "change", ci_name((best.get("comparison") or {}).get("confidence")), "p", "verdict"):
        table.add_column(col, justify="left" if col in ("metric", "verdict") else "right")
    units = data.get("units") or {}  # results written before units were: "better"/"worse"
    comps = best.get("metrics") or {}
    for name in comps or units:
        label = f"{name} ({goals[name]})" if goals and name in goals else name
        comp = comps.get(name)
        if comp is None:  # nothing confirmed: the baseline's own means
            table.add_row(label, _num((data.get("baseline") or {}).get(name)), "–", "", "", "", "")
            continue
        base, cand = (best.get("baseline_means") or {}).get(name), (best.get("means") or {}).get(name)
        table.add_row(label, _num(base), _num(cand), *_change_cells(comp, units.get(name)))
    whole = best.get("comparison") or {}
    if (data.get("objective") or {}).get("mode") == "weighted" and comps and whole and not best.get("judged_alone"):
        # the figure the verdict is on, beside its parts (a weighted score's % is not theirs)
        table.add_row("weighted geometric mean (the verdict)", "", "", *_change_cells(whole, *units.values()))
    return table


def _change_cells(comp: dict[str, Any], *units: str | None) -> tuple[str, str, str, str]:
    """A comparison's change, CI, p and verdict as the result table shows them."""
    ci = comp.get("ci_pct") or [None, None]
    return (f"{comp['change_pct']:+.2f}%" if comp.get("change_pct") is not None else "–",
            f"{ci[0]:+.2f}% … {ci[1]:+.2f}%" if None not in ci else "–",
            _num(comp.get("p_value")), verdict_word(str(comp.get("verdict")), *units))


def failed_at(failed_knobs: dict[str, int]) -> str:
    """``failed at KNOB (N), …``: failed trials by the knob at fault, the five most first."""
    return "failed at " + ", ".join(f"{k} ({n})" for k, n in list(failed_knobs.items())[:5])


def render(data: dict[str, Any]) -> Group:
    """A rich renderable for ``hone report RESULT.json`` (no re-running)."""
    table = result_table(data, f"hone tune {data.get('spec_name', '')}: study {data.get('study')} "
                               "(means of the runs the confirmation compared)")
    lines: list[Table | Text] = [table]
    rec = data.get("recommended")
    if rec:
        lines.append(Text(f"Recommendation ({recommendation_kind(data)}): "
                          + recommendation_text(rec, data.get("unchanged") or ())))
        if data.get("apply_command"):
            lines.append(Text(f"apply it: {data['apply_command']}"))
        lines += risk_lines(data) + not_ablated_lines(data)
    else:
        lines.append(Text("Recommendation: keep the current configuration"))
        if data.get("keep_reason"):  # version 2 (and late version 1) documents
            lines.append(Text(f"  {data['keep_reason']}"))
        lines += settle_lines(data)
    lines += ablation_lines(data)
    lines.append(Text(f"trials: {data.get('trials')} ({data.get('failed_trials')} failed), seed {data.get('seed')}, "
                      f"sampler {data.get('sampler')}, storage {data.get('storage')}"))
    if data.get("failed_knobs"):
        lines.append(Text("  " + failed_at(data["failed_knobs"])))
    lines += budget_lines(data)
    return Group(*lines)


def recommendation_text(rec: dict[str, Any], unchanged: Iterable[str], limit: int | None = None) -> str:
    """``a=1 b=2 (as now: c=3)``: the recommended values, those at the baseline's value (the
    result's ``unchanged``) said apart so that they do not read as changes; ``limit``: at most
    that many changes shown."""
    same = set(unchanged)
    changes = [f"{k}={knob_value(v)}" for k, v in rec.items() if k not in same]
    if limit is not None and len(changes) > limit:
        changes = [*changes[:limit], "…"]
    kept = " ".join(f"{k}={knob_value(v)}" for k, v in rec.items() if k in same)
    return (" ".join(changes) or "(no change)") + (f" (as now: {kept})" if kept else "")


def recommendation_kind(data: dict[str, Any]) -> str:
    """The recommendation's label: "confirmed", or "confirmed, minimal change" when it is the
    ablation's minimal configuration."""
    ablation = data.get("ablation")
    minimal = isinstance(ablation, dict) and ablation.get("recommended") == "minimal"
    return "confirmed, minimal change" if minimal else "confirmed"


def _effect(change: dict[str, Any]) -> str:
    ci = change.get("ci_pct") or [None, None]
    if not isinstance(change.get("effect_pct"), int | float) or None in ci:
        return "–"
    return (f"{change['effect_pct']:+.2f}% [{ci[0]:+.2f}%, {ci[1]:+.2f}%] p={_num(change.get('p_value'))}")


def ablation_lines(data: dict[str, Any]) -> list[Text]:
    """The ablation of a result: each changed knob kept with its own effect (the winner vs
    the winner with that change undone) or dropped, and which configuration won and why."""
    ablation = data.get("ablation")
    if not isinstance(ablation, dict) or not isinstance(ablation.get("changes"), list):
        return []
    if ablation.get("method") == "by importance":
        return _pruned_lines(ablation)
    lines = [Text(f"Minimal change (ablation, {ablation_rounds(ablation)}; effect = the winner vs "
                  "the winner with that change undone):")]
    for change in ablation["changes"]:
        start = "(absent)" if change.get("baseline") is None else change.get("baseline")
        knob = f"{change.get('knob')}: {start} → {change.get('winner')}"
        if change.get("kept"):
            note = change.get("note") or ""
            lines.append(Text.assemble("  ", ("kept    ", "green"), f" {knob}  {_effect(change)}"
                                       + (f" ({note})" if note and note != "worse without it" else "")))
        else:
            note = change.get("note") or "no measurable effect"
            lines.append(Text.assemble("  ", ("dropped ", "yellow"), f" {knob}  {_effect(change)}  {note}"))
    lines.append(Text(f"  recommended: {ablation_recommendation(ablation)}"))
    return lines


def _pct(c: Any) -> str:
    """A comparison as ``+x% [lo, hi] p=…``."""
    if not isinstance(c, dict) or not isinstance(c.get("change_pct"), int | float):
        return "–"
    return f"{pct(c['change_pct'], sign=True)}{' ' + ci_text(c) if c.get('ci_pct') else ''} p={_num(c.get('p_value'))}"


def _pruned_lines(ablation: dict[str, Any]) -> list[Text]:
    """The ablation by importance: each pruned configuration against the baseline and the winner,
    the changes the chosen one keeps and those it puts back."""
    order = [str(k) for k in ablation.get("order") or []]
    lines = [Text(f"Minimal change (ablation by importance, {ablation_rounds(ablation)}: the "
                  f"winner's {len(order)} changes pruned to the most important, by the knob importances):")]
    for arm in ablation.get("pruned") or []:
        status = str(arm.get("status") or "")
        mark = (("chosen  ", "green") if arm.get("chosen") else ("held    ", "") if arm.get("passed") else
                ("unproven", "yellow") if status.startswith("not shown") else ("worse   ", "yellow"))
        lines.append(Text.assemble("  ", mark, f" top {len(arm.get('kept') or [])} of {len(order)}: "
                                   f"vs baseline {_pct(arm.get('vs_baseline'))}; "
                                   f"vs the winner {_pct(arm.get('vs_winner'))}"))
    winner = ablation.get("winner_config") or {}
    if ablation.get("recommended") == "minimal":
        kept = " ".join(f"{k}={knob_value(winner.get(k))}" for k in ablation.get("kept") or [])
        back = " ".join(str(k) for k in ablation.get("dropped") or [])
        lines.append(Text.assemble("  ", ("kept    ", "green"), f" {kept}"))
        lines.append(Text.assemble("  ", ("put back", "yellow"), f" {back} (not shown to matter: pruned together)"))
    lines.append(Text(f"  recommended: {ablation_recommendation(ablation)}"))
    return lines


def budget_lines(data: dict[str, Any]) -> list[Text]:
    """The session's time and benchmark runs: spent, estimated, the budgets; where a budget
    stopped the search and what it cut."""
    budget = data.get("budget")
    if not isinstance(budget, dict):
        return []
    spent, estimate, limit = budget.get("spent_s"), budget.get("estimate_s"), budget.get("max_time_s")
    head = f"time: {format_duration(spent)}" if isinstance(spent, int | float) else "time: –"
    extra = []
    if isinstance(estimate, int | float):
        ablation = budget.get("ablation_estimate_s")  # added within hone-tune/2
        low = f"{format_duration(estimate - ablation)}–" if isinstance(ablation, int | float) and ablation > 0 else ""
        extra.append(f"estimated ~{low}{format_duration(estimate)}")
    if isinstance(limit, int | float):
        extra.append(f"--max-time {format_duration(limit)}")
    lines = [Text(head + (f" ({', '.join(extra)})" if extra else ""))]
    spent = budget.get("runs_spent")
    if isinstance(spent, dict):  # added within hone-tune/2: older documents lack it
        cap, earlier = budget.get("max_runs"), budget.get("runs_earlier")
        lines.append(Text(f"benchmark runs: {sum(int(v) for v in spent.values())}"
                          + (f" of --max-runs {cap}" if isinstance(cap, int) else "")
                          + (f" with the interrupted session's {earlier}" if isinstance(earlier, int) and earlier
                             else "") + " ("
                          + ", ".join(f"{k} {v}" for k, v in spent.items()) + ")"))
    if budget.get("search_stopped"):
        lines.append(Text(f"  search stopped after {budget.get('trials_run')} of {budget.get('planned_trials')} "
                          f"trials: {budget['search_stopped']}"))
    lines += [Text(f"  cut: {cut}") for cut in budget.get("cuts") or []]
    return lines


def not_ablated_lines(data: dict[str, Any]) -> list[Text]:
    """Why a winner of several changes was not ablated, and the ``hone compare`` that measures its
    most important change (by the knob importances) alone against the machine as it is: a user
    who cannot afford the ablation's runs can still afford one comparison before applying them all."""
    why, rec = data.get("not_ablated"), data.get("recommended") or {}
    if not why or not rec:
        return []
    lines = [Text(f"  not ablated: {why}", style="yellow")]
    same = set(data.get("unchanged") or ())
    top = next((k for k in data.get("importances") or {} if k in rec and k not in same), None)
    if top is not None:
        variant = shlex.quote(f"alone:{top}={knob_value(rec[top])}")
        # the figure the confirmation judged, named: the result file does not say which metric
        # compare would take by default (a single objective's metric need not be the spec's first)
        mode = (data.get("objective") or {}).get("mode")
        units = list(data.get("units") or {})
        metric = ""
        if mode in ("single", "weighted") and units:
            judged = judged_metric(mode, units, (data.get("best_candidate") or {}).get("judged_alone"))
            metric = f" --metric {shlex.quote(judged)}"
        lines.append(Text(f"  its most important change alone (importances: a rough guide): hone compare "
                          f"{shlex.quote(str(data.get('spec', 'SPEC')))} --variant {variant}{metric}"))
    if data.get("ablate_later"):
        lines.append(Text(f"  the ablation later, on this study (no new trials): {data['ablate_later']}"))
    return lines


def settle_lines(data: dict[str, Any]) -> list[Text]:
    """Nothing recommended, a candidate inconclusive: the ``hone compare`` that settles it."""
    settle = data.get("settle")
    plan = settle_plan(settle)  # None unless settle is a dict with a command
    if not plan:
        return []
    note = detectable_note(data)
    return [Text(f"  settle it ({plan}): {settle['command']}"), *([Text(f"  ({note})")] if note else [])]


def risk_lines(data: dict[str, Any]) -> list[Text]:
    """One marked line per recommended value that trades durability or safety for speed."""
    return [Text(f"  ⚠ {r['knob']}={r['value']}: {r['risk']}", style="bold yellow") for r in data.get("risks") or []]
