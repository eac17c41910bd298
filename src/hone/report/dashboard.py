"""``hone dashboard``: optuna-dashboard over a study storage, with hone's evidence in it.

optuna-dashboard already shows every trial's params, values and user attrs (hone's
``runs``, ``means``, ``fingerprint``, ``machine_id``, ``fail_reason``). On top of that hone
writes Markdown *notes* (optuna-dashboard's note feature, kept in study system attrs):

* per trial: the machine it ran on and a table of every raw repeat (wall/CPU seconds,
  metrics, errors) — what a mean hides;
* per study: the baseline (means and CV per metric, machine) and, once ``hone tune`` has
  confirmed, the verdict with its CI and p-value.

Notes are written when a worker finishes a trial and, for studies run elsewhere, by
``hone dashboard`` itself when it starts and every :data:`REFRESH_S` seconds.
"""

from __future__ import annotations

import threading
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from hone.core.errors import import_extra
from hone.core.metrics import verdict_word
from hone.report.formats import in_todays_words

REFRESH_S = 10.0


def _num(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return "" if v is None else str(v)


def trial_note(trial: FrozenTrial) -> str:
    """Markdown for one finished trial: machine, config, every raw repeat."""
    ua = trial.user_attrs
    fp = ua.get("fingerprint") or {}
    lines = [f"### hone trial {trial.number}: {trial.state.name.lower()}", ""]
    machine = ua.get("host") or fp.get("hostname") or "?"
    lines.append(f"**machine** {machine} (id {ua.get('machine_id', '?')}, kernel {fp.get('kernel', '?')}, "
                 f"{fp.get('cpus', '?')} CPUs {fp.get('cpu_model', '')})")
    if ua.get("config"):
        lines.append("**config** " + ", ".join(f"`{k}={v}`" for k, v in ua["config"].items()))
    if ua.get("requeued_from") is not None:
        lines.append(f"**retry of trial {ua['requeued_from']}** (its worker died)")
    if ua.get("fail_reason"):
        lines.append(f"**failed:** {ua['fail_reason']}")
    runs = ua.get("runs") or []
    if runs:
        names = sorted({k for r in runs for k in (r.get("metrics") or {})})
        lines += ["", "| repeat | wall s | cpu s | " + " | ".join(names) + " | error |",
                  "|---:|---:|---:|" + "---:|" * len(names) + "---|"]
        for i, r in enumerate(runs, 1):
            cells = [str(i), _num(r.get("wall_s")), _num(r.get("cpu_s"))]
            cells += [_num((r.get("metrics") or {}).get(n)) for n in names]
            cells.append((r.get("error") or "").replace("|", "/")[:120])
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def study_note(study: optuna.Study) -> str:
    """Markdown for the study: budget, baseline, and the confirmation verdict if any."""
    ua = study.user_attrs
    lines = [f"## hone study {study.study_name}", ""]
    spec = ua.get("hone_spec") or {}
    if spec:
        lines.append(f"**spec** {spec.get('name', '')} — objective: {spec.get('label', spec.get('objective', ''))}")
    fleet = ua.get("hone_fleet")
    if fleet:
        lines.append(f"**fleet budget** {fleet.get('budget')} trials, sampler {fleet.get('sampler')}")
    base = ua.get("hone_baseline")
    if base:
        fp = base.get("fingerprint") or {}
        lines += ["", f"### baseline (measured once, on {fp.get('hostname', '?')})", "",
                  "| metric | mean | CV |", "|---|---:|---:|"]
        for name, mean in (base.get("means") or {}).items():
            cv = (base.get("cv") or {}).get(name)
            lines.append(f"| {name} | {_num(mean)} | {'' if cv is None else f'{cv * 100:.1f}%'} |")
    result = in_todays_words(ua.get("hone_result"))  # any hone-tune version (a study outlives hones)
    if result:
        verdict = verdict_word(str(result.get("verdict")), *(result.get("units") or {}).values())
        lines += ["", "### confirmation", "", f"**verdict: {verdict}**"]
        if result.get("improvement_pct") is not None:
            ci = result.get("ci_pct") or [None, None]
            lines.append(f"change {_num(result['improvement_pct'])}% (95% CI {_num(ci[0])} … {_num(ci[1])}), "
                         f"p = {_num(result.get('p_value'))}")
        if result.get("recommended"):
            same = set(result.get("unchanged") or ())
            lines.append("recommended: " + ", ".join(f"`{k}={v}`" + (" (as now)" if k in same else "")
                                                     for k, v in result["recommended"].items()))
    else:
        lines += ["", "_not confirmed yet: `hone tune --resume --study NAME` confirms after the budget is spent_"]
    return "\n".join(lines) + "\n"


def _save(storage: Any, study_id: int, trial_id: int | None, body: str, attrs: dict[str, Any]) -> bool:
    # optuna-dashboard is hone's ``dashboard`` extra: imported here, never at module level
    # (a worker without it skips its notes; `hone dashboard` writes them when it starts).
    import_extra("optuna_dashboard", "dashboard", "hone dashboard")
    from optuna_dashboard._note import get_note_from_system_attrs, note_ver_key, save_note_with_version

    if get_note_from_system_attrs(attrs, trial_id)["body"] == body:
        return False
    save_note_with_version(storage, study_id, trial_id, attrs.get(note_ver_key(trial_id), 0) + 1, body)
    return True


def annotate_trial(study: optuna.Study, trial: FrozenTrial) -> None:
    """Write (or refresh) the note of one finished trial."""
    storage = study._storage
    attrs = storage.get_study_system_attrs(study._study_id)
    _save(storage, study._study_id, trial._trial_id, trial_note(trial), attrs)


def annotate(study: optuna.Study) -> int:
    """Write the study note and every finished trial's note that is missing or stale.
    Returns the number of notes written."""
    storage = study._storage
    attrs = storage.get_study_system_attrs(study._study_id)
    written = int(_save(storage, study._study_id, None, study_note(study), attrs))
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED)):
        written += _save(storage, study._study_id, t._trial_id, trial_note(t), attrs)
    return written


def annotate_all(storage: optuna.storages.BaseStorage) -> int:
    """:func:`annotate` every study in ``storage``."""
    total = 0
    for summary in optuna.get_all_study_summaries(storage, include_best_trial=False):
        total += annotate(optuna.load_study(study_name=summary.study_name, storage=storage))
    return total


def serve(storage: optuna.storages.BaseStorage, host: str, port: int, refresh_s: float = REFRESH_S) -> None:
    """Annotate, then serve optuna-dashboard on ``host:port`` until interrupted, refreshing
    notes every ``refresh_s`` seconds in a background thread."""
    optuna_dashboard = import_extra("optuna_dashboard", "dashboard", "hone dashboard")

    annotate_all(storage)
    stop = threading.Event()

    def _refresh() -> None:
        while not stop.wait(refresh_s):
            try:
                annotate_all(storage)
            except Exception:  # the view must stay up while a study is being written
                pass

    threading.Thread(target=_refresh, name="hone-notes", daemon=True).start()
    try:
        optuna_dashboard.run_server(storage, host=host, port=port)
    finally:
        stop.set()
