"""Self-contained HTML report of a tuning study (plotly JS inline, no network).

Plots are Optuna's own plotly visualizations (history, parallel coordinates, importances,
slices, Pareto front); hone adds the baseline-vs-winner confirmation table with its CI and
the per-trial table. Input: a study (storage URL + name) or a ``hone-tune`` result file (any
version ``hone report`` reads, shown in today's words), which names its study.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

import optuna
import plotly.graph_objects as go
from optuna.trial import TrialState
from sqlalchemy.exc import SQLAlchemyError

from hone.core.errors import HoneError
from hone.core.metrics import verdict_word
from hone.core.paths import default_storage_url
from hone.report import formats
from hone.report.base import (
    ablation_recommendation,
    ablation_rounds,
    ci_name,
    detectable_note,
    judged_figure,
    pct,
    settle_plan,
)
from hone.tune.gp import ATTR_START
from hone.tune.importance import importance_caveat
from hone.tune.storage import require_driver
from hone.tune.study import finished_trials

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1300px}
h1{font-size:1.5em} h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em} td,th{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f4f4f4} td.l,th.l{text-align:left} .fail{color:#a00} .win{background:#e8f6e8}
.verdict{font-size:1.1em;font-weight:bold} .note{color:#666;font-size:.85em}
"""


def resolve_study(target: str, storage: str | None = None) -> tuple[optuna.Study | None, dict[str, Any] | None]:
    """``target`` is a ``hone-tune`` result file or a study name in ``storage`` (default:
    the state directory's store). Returns the study and the result document (if any); the
    study is None when a result file names one that is not there (another machine's store)."""
    path = Path(target)
    if path.is_file():
        try:
            doc = json.loads(path.read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise HoneError(f"{target}: not a hone result file ({exc})") from None
        if not isinstance(doc, dict) or not str(doc.get("format", "")).startswith("hone-tune/"):
            got = doc.get("format") if isinstance(doc, dict) else None
            raise HoneError(f"{target}: --html needs a tuning result ({formats.supported('tune')}), got {got!r}")
        formats.validate(doc, target)
        return _stored_study(doc["storage"], doc["study"]), formats.in_todays_words(doc)
    storage, name = storage or default_storage_url(), target
    require_driver(storage)
    try:
        study = optuna.load_study(study_name=name, storage=storage)
    except KeyError:
        raise HoneError(f"no study {name!r} in {storage}", hint="hone tune prints the study name and storage") from None
    return study, formats.in_todays_words(study.user_attrs.get("hone_result"))


def _stored_study(storage: str, name: str) -> optuna.Study | None:
    """The study a result file names, or None when its store or the study is not here (a
    SQLite file is not created just to look)."""
    if storage.startswith("sqlite:///") and not Path(storage[len("sqlite:///"):]).is_file():
        return None
    require_driver(storage)  # PostgreSQL without the fleet extra: say so, not "not here"
    try:
        return optuna.load_study(study_name=name, storage=storage)
    except (KeyError, ValueError, ImportError, SQLAlchemyError):
        return None


def _fig_html(fig: go.Figure, first: bool, div_id: str) -> str:
    # plot_slice sets a fixed width per knob; let every figure fit the page instead
    fig.update_layout(height=420, width=None, autosize=True, margin={"l": 60, "r": 30, "t": 50, "b": 50})
    return fig.to_html(full_html=False, include_plotlyjs=bool(first), div_id=div_id)


class _Stored(optuna.importance.BaseImportanceEvaluator):
    """The importances ``hone tune`` computed over these very trials (fANOVA takes a second
    or so; the terminal and the report show the same figures)."""

    def __init__(self, values: dict[str, float]) -> None:
        self.values = values

    def evaluate(self, study: optuna.Study, params: list[str] | None = None, *,
                 target: Any = None) -> dict[str, float]:
        return dict(self.values)


def _figures(study: optuna.Study, doc: dict[str, Any] | None = None) -> list[tuple[str, go.Figure]]:
    vis = optuna.visualization
    complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    out: list[tuple[str, go.Figure]] = []
    multi = len(study.directions) > 1
    target = (lambda t: t.values[0]) if multi else None
    tname = "objective 0" if multi else "objective"
    if not complete:
        return out
    if multi:
        out.append(("Pareto front", vis.plot_pareto_front(study)))
    out.append(("History and convergence", vis.plot_optimization_history(study, target=target, target_name=tname)))
    if len(complete) >= 2:
        out.append(("Parallel coordinates", vis.plot_parallel_coordinate(study, target=target, target_name=tname)))
        out.append(("Slices", vis.plot_slice(study, target=target, target_name=tname)))
    if len(complete) >= 3:
        try:
            # fANOVA like the terminal output (Optuna 5's default, PED-ANOVA, assumes minimization)
            # the stored figures only if they were computed over these very trials
            stored = doc.get("importances") if doc and doc.get("trials") == len(finished_trials(study)) else None
            evaluator = _Stored(stored) if stored else optuna.importance.FanovaImportanceEvaluator(seed=0)
            fig = vis.plot_param_importances(study, evaluator=evaluator, target=target, target_name=tname)
            # the knobs counted as the terminal counts them: those the importances rank (the bars)
            caveat = importance_caveat(len(complete), len(fig.data[0].y) if fig.data else 0)
            out.append((f"Knob importances ({caveat})", fig))
        except (ValueError, RuntimeError):
            pass
    return out


def _ci_figure(doc: dict[str, Any]) -> go.Figure | None:
    confs = doc.get("confirmations") or []
    if not confs:
        return None
    names, change, lo, hi, levels = [], [], [], [], set()
    for c in confs:
        comp = c["comparison"]
        if comp.get("change_pct") is None or comp["ci_pct"][0] is None:
            continue
        levels.add(ci_name(comp.get("confidence")))
        names.append(c["name"])
        change.append(comp["change_pct"])
        lo.append(comp["change_pct"] - comp["ci_pct"][0])
        hi.append(comp["ci_pct"][1] - comp["change_pct"])
    if not names:
        return None
    fig = go.Figure(go.Bar(x=names, y=change, error_y={"type": "data", "symmetric": False, "array": hi,
                                                       "arrayminus": lo}))
    shown = " (exact)" if levels == {"exact"} else f" with {levels.pop()} (%)" if len(levels) == 1 else " with CIs (%)"
    fig.update_layout(title=f"Confirmation: change vs baseline{shown}", yaxis_title="% change")
    fig.add_hline(y=0, line_dash="dot")
    return fig


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        if not math.isfinite(v):
            return "–"
        return f"{v:.4g}"
    return html.escape(str(v))


def _summary_html(doc: dict[str, Any] | None) -> str:
    if not doc:
        return "<p class=note>No result stored for this study yet (still running, or interrupted).</p>"
    rows = []
    # Both columns from the same interleaved confirmation rounds (the search-phase baseline
    # was measured at another time and is not comparable run for run).
    best = doc.get("best_candidate") or {}
    base = best.get("baseline_means") or doc.get("baseline") or {}
    rec = doc.get("recommended_metrics") or best.get("means") or {}
    for name, b in base.items():
        r = rec.get(name)
        rows.append(f"<tr><td class=l>{html.escape(name)}</td><td>{_fmt(b)}</td><td>{_fmt(r) if r is not None else '–'}"
                    "</td></tr>")
    verdict = html.escape(verdict_word(str(doc.get("verdict")), *(doc.get("units") or {}).values()))
    ci = doc.get("ci_pct")
    change = doc.get("improvement_pct")
    level = ci_name((best.get("comparison") or {}).get("confidence"))
    of = judged_figure(str((doc.get("objective") or {}).get("mode")), len(best.get("metrics") or {}),
                       best.get("judged_alone"))
    ci_text = (f"{change:+.2f}%{f' in {of}' if of else ''} ({level} {ci[0]:+.2f}% … {ci[1]:+.2f}%, "
               f"p = {doc.get('p_value'):.3g})" if ci and change is not None and None not in ci else "")
    recommended = doc.get("recommended")
    same = set(doc.get("unchanged") or ())  # knobs at the baseline's value: no change to apply
    rec_text = ("<br>".join(f"{html.escape(k)} = {html.escape(str(v))}" + (" (as now)" if k in same else "")
                            for k, v in recommended.items())
                if recommended else "keep the current configuration")
    cmd = doc.get("apply_command")
    settle = doc.get("settle")
    plan = settle_plan(settle)  # None unless settle is a dict with a command
    return (
        f"<p class=verdict>Verdict: {verdict} {html.escape(ci_text)}</p>"
        f"<p>Recommendation:<br>{rec_text}</p>"
        + (f"<p>Apply with: <code>{html.escape(cmd)}</code></p>" if cmd else "")
        + (f"<p id=settle>Settle it ({html.escape(plan)}): <code>{html.escape(str(settle['command']))}</code>"
           + (f"<br>({html.escape(note)})" if (note := detectable_note(doc)) else "") + "</p>"
           if plan else "")
        + "<table id=baseline-vs-winner><tr><th class=l>metric</th><th>baseline</th>"
        f"<th>{'recommendation' if recommended else 'best candidate'}</th></tr>" + "".join(rows) + "</table>"
        "<p class=note>means over the interleaved confirmation rounds</p>"
        f"<p class=note>objective: {html.escape(str((doc.get('objective') or {}).get('label', '')))}; "
        f"trials: {doc.get('trials')} ({doc.get('failed_trials')} failed"
        + "".join(f"; {html.escape(str(k))}: {int(n)}" for k, n in list((doc.get("failed_knobs") or {}).items())[:5])
        + f"); seed {doc.get('seed')}; "
        f"sampler {html.escape(str(doc.get('sampler')))}</p>"
    )


def _ablation_html(doc: dict[str, Any] | None) -> str:
    """Each change of the winner with its own effect (the winner vs the winner with that change
    undone), kept or dropped, and which configuration the ablation recommends and why."""
    ablation = (doc or {}).get("ablation")
    if not isinstance(ablation, dict) or not isinstance(ablation.get("changes"), list):
        skipped = (doc or {}).get("not_ablated")
        later = (doc or {}).get("ablate_later")
        later_p = (f"<p id=ablate-later>The ablation later, on this study (no new trials): "
                   f"<code>{html.escape(str(later))}</code></p>" if later else "")
        return (f"<h2>Minimal change</h2><p id=not-ablated>Not ablated: {html.escape(str(skipped))}</p>{later_p}"
                if skipped else "")
    if ablation.get("method") == "by importance":
        return _pruned_html(ablation)
    rows = []
    for c in ablation["changes"]:
        ci = c.get("ci_pct") or [None, None]
        effect = (f"{c['effect_pct']:+.2f}% ({ci[0]:+.2f}% … {ci[1]:+.2f}%)"
                  if isinstance(c.get("effect_pct"), int | float) and None not in ci else "–")
        status = "kept" if c.get("kept") else f"dropped: {c.get('note') or 'no measurable effect'}"
        rows.append(f"<tr{' class=win' if c.get('kept') else ''}><td class=l>{html.escape(str(c.get('knob')))}</td>"
                    f"<td>{_fmt(c.get('baseline'))}</td><td>{_fmt(c.get('winner'))}</td><td>{html.escape(effect)}"
                    f"</td><td>{_fmt(c.get('p_value'))}</td><td class=l>{html.escape(status)}</td></tr>")
    first = (ablation["changes"] or [{}])[0].get("comparison") or {}
    return (f"<h2>Minimal change (ablation, {html.escape(ablation_rounds(ablation))})</h2>"
            "<table id=ablation><tr><th class=l>knob</th><th>baseline</th><th>winner</th>"
            f"<th>effect ({ci_name(first.get('confidence'))})</th><th>p</th><th class=l></th></tr>"
            + "".join(rows) + "</table>"
            "<p class=note>effect: the winner vs the winner with that change undone</p>"
            f"<p>Recommended: {html.escape(ablation_recommendation(ablation))}</p>")


def _pct_html(c: Any) -> str:
    """A comparison as ``+x% (lo … hi), p …``."""
    if not isinstance(c, dict) or not isinstance(c.get("change_pct"), int | float):
        return "–"
    lo, hi = c.get("ci_pct") or (None, None)
    text = f"{pct(c['change_pct'], sign=True)} ({pct(lo, sign=True)} … {pct(hi, sign=True)})"
    return html.escape(text) + f", p {_fmt(c.get('p_value'))}"


def _pruned_html(ablation: dict[str, Any]) -> str:
    """The ablation by importance: the pruned configurations against the baseline and the winner."""
    order = ablation.get("order") or []
    rows = []
    for arm in ablation.get("pruned") or []:
        kept = arm.get("kept") or []
        status = html.escape(str(arm.get("status") or ("chosen" if arm.get("chosen") else "")))
        rows.append(f"<tr{' class=win' if arm.get('chosen') else ''}><td class=l>top {len(kept)} of {len(order)}: "
                    f"{html.escape(', '.join(map(str, kept)))}</td><td>{_pct_html(arm.get('vs_baseline'))}</td>"
                    f"<td>{_pct_html(arm.get('vs_winner'))}</td><td class=l>{status}</td></tr>")
    return (f"<h2>Minimal change (ablation by importance, {html.escape(ablation_rounds(ablation))})</h2>"
            "<table id=ablation><tr><th class=l>the winner's most important changes only</th><th>vs the baseline"
            "</th><th>vs the winner</th><th class=l></th></tr>" + "".join(rows) + "</table>"
            f"<p class=note>importance order: {html.escape(', '.join(map(str, order)))}; the other changes put "
            "back at their starting values</p>"
            f"<p>Recommended: {html.escape(ablation_recommendation(ablation))}</p>")


def _trials_html(study: optuna.Study) -> str:
    trials = study.get_trials(deepcopy=False)
    knobs: list[str] = []
    metrics: list[str] = []
    for t in trials:
        for k in t.user_attrs.get("config", {}):
            if k not in knobs:
                knobs.append(k)
        for m in t.user_attrs.get("means", {}):
            if m not in metrics:
                metrics.append(m)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["#", "state", "objective", *knobs, *metrics, "s"])
    rows = []
    for t in trials:
        cfg, means = t.user_attrs.get("config", {}), t.user_attrs.get("means", {})
        obj = ", ".join(_fmt(v) for v in (t.values or []))
        state = t.state.name.lower()
        if t.state == TrialState.FAIL:
            state = f"failed: {t.user_attrs.get('fail_reason', '')}"
        number = str(t.number) + (f" (start {t.user_attrs[ATTR_START]})" if ATTR_START in t.user_attrs else "")
        cells = [number, f"<span class={'fail' if t.state == TrialState.FAIL else 'ok'}>"
                 f"{html.escape(state[:90])}</span>", obj]
        cells += [_fmt(cfg.get(k, "")) for k in knobs] + [_fmt(means.get(m, "")) for m in metrics]
        cells.append(_fmt(t.user_attrs.get("elapsed_s", "")))
        rows.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return f"<table id=trials><tr>{head}</tr>{''.join(rows)}</table>"


def render_study_html(study: optuna.Study | None, doc: dict[str, Any] | None = None) -> str:
    """The whole report as one HTML string (plotly.js embedded once). Without the study
    (only its result file is here) the search's plots and the trial table are left out."""
    name = study.study_name if study is not None else str((doc or {}).get("study"))
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>hone tune: {html.escape(name)}"
             f"</title><style>{_CSS}</style></head><body>",
             f"<h1>hone tune — study {html.escape(name)}</h1>",
             "<h2>Baseline vs recommendation</h2>", _summary_html(doc), _ablation_html(doc)]
    figs = _figures(study, doc) if study is not None else []
    ci = _ci_figure(doc or {})
    if ci is not None:
        figs.insert(0, ("Confirmation", ci))
    for i, (title, fig) in enumerate(figs):
        parts.append(f"<h2>{html.escape(title)}</h2>")
        parts.append(_fig_html(fig, i == 0, f"plot-{i}"))
    if study is None:
        parts.append(f"<p class=note>Study {html.escape(name)} is not in {html.escape(str((doc or {}).get('storage')))}"
                     " here: the search's plots and the trial table need it.</p></body></html>")
        return "\n".join(parts)
    if not figs:
        parts.append("<p class=note>No completed trials: nothing to plot.</p>")
    parts.append("<h2>Trials</h2>")
    parts.append("<p class=note>Ordered knobs given as a value list are searched (and plotted) as the index "
                 "into that list; the table shows the real values.</p>")
    parts.append(_trials_html(study))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_study_html(target: str, out: str | Path, storage: str | None = None) -> Path:
    """Render ``target`` (result file or study name) to ``out``; returns the path."""
    study, doc = resolve_study(target, storage)
    path = Path(out)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_study_html(study, doc))
    return path
