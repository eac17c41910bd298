"""``hone tune``."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click
import optuna
import yaml
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from hone.cli import main
from hone.cli._common import (
    console,
    duration_option,
    err_console,
    fmt_num,
    load_checked,
    safe_study_name,
    stdout_for_data,
    write_json,
)
from hone.core.errors import RestoreError
from hone.core.metrics import verdict_word
from hone.core.paths import state_dir
from hone.fleet.local import LocalWorkers
from hone.report.base import ci_name, judged_figure
from hone.report.formats import load_tune_result
from hone.report.tune_terminal import (
    ablation_lines,
    budget_lines,
    failed_at,
    knob_value,
    not_ablated_lines,
    recommendation_kind,
    recommendation_text,
    result_table,
    risk_lines,
    settle_lines,
)
from hone.run.conflicts import check_conflicts
from hone.tune import SAMPLERS, TrialOutcome, TuneEvents, TuneResult, TuneSettings, finished_trials, tune
from hone.tune.confirm import keep_reason
from hone.tune.importance import importance_caveat
from hone.tune.start import start_configs
from hone.tune.storage import mask_url


def _short(config: dict[str, Any], limit: int = 6) -> str:
    items = [f"{k}={knob_value(v)}" for k, v in config.items()]
    return " ".join(items[:limit]) + (" …" if len(items) > limit else "")


def _pct_vs_baseline(result_means: dict[str, float], baseline: dict[str, float], name: str, goal: str) -> str:
    b = baseline.get(name)
    if not b:
        return ""
    change = (result_means[name] - b) / abs(b) * 100
    return f"{change:+.1f}%"


@main.command("tune")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--atune-server", metavar="SERVER.yaml", help="SPEC is an A-Tune client YAML; this is its server YAML.")
@click.option("--trials", type=click.IntRange(min=1), default=None,
              help="Trials to run (default: the spec's tune.trials).")
@click.option("--seed", type=int, default=None, help="Sampler seed: same seed + same measurements → same suggestions.")
@click.option("--sampler", type=click.Choice(SAMPLERS, case_sensitive=False), default=None,
              help="Search algorithm (default: tune.sampler; auto = gp, hone's GP; tpe = multivariate TPE).")
@click.option("--storage", metavar="URL", default=None,
              help="Optuna storage URL (default: sqlite:///<state dir>/studies.db; postgresql://… for a fleet).")
@click.option("--study", "study_name", metavar="NAME", default=None, callback=safe_study_name,
              help="Study name (default: SPEC-NAME-DATE-TIME).")
@click.option("--resume", is_flag=True, help="Continue the study (default: the spec's latest) after a crash or Ctrl-C.")
@click.option("--apply-best", is_flag=True, help="Leave the confirmed winner applied (journaled; `hone rollback`).")
@click.option("--pareto", is_flag=True, help="Search the Pareto front of all weighted metrics.")
@click.option("--repeats", type=click.IntRange(min=1), default=None,
              help="Runs per configuration (default: benchmark.repeats).")
@click.option("--confirm", "confirm_rounds", type=click.IntRange(min=0), default=None,
              help="Interleaved confirmation rounds, at least (default: tune.confirm when written, else as few "
                   "as the test needs: 6 paired, 2-4 when runs repeat exactly or pool with the baseline's; 0 = skip).")
@click.option("--top-k", type=click.IntRange(min=1), default=None, help="Candidates to confirm (default: tune.top_k).")
@click.option("--ablation/--no-ablation", default=None,
              help="Measure which of a winner's changes hold its gain and recommend the smallest diff that does "
                   "(default: tune.ablation, on; only when the winner changes 2 or more knobs).")
@click.option("--ablation-rounds", type=click.IntRange(min=1), default=None,
              help="Interleaved ablation rounds (default: tune.ablation_rounds, else the confirmation's; at least 6).")
@click.option("--max-time", metavar="DURATION", callback=duration_option, default=None,
              help="Time for the whole job (90s, 45m, 2h; default: tune.max_time; a --resume has what the "
                   "interrupted session left): the search stops when the next trial would not fit, keeping time for "
                   "the confirmation (at most a fifth: fewer candidates, else one pooled with the baseline's "
                   "runs), and for the ablation when both fit in half of it.")
@click.option("--max-runs", type=click.IntRange(min=1), default=None, metavar="N",
              help="Benchmark runs for the whole session, every run counted: baseline, trials, confirmation, "
                   "ablation (default: tune.max_runs; A-Tune's iterations). Refused when too small to confirm.")
@click.option("--one-run/--fixed-repeats", "one_run", default=None,
              help="One run per trial, the model weighing the noise (default with --max-runs or --max-time), or "
                   "--repeats runs for every trial (the default without).")
@click.option("--start", "start", multiple=True, metavar="NAME=VALUE",
              help="A configuration to measure first, before the sampler's (repeatable: one knob each; the "
                   "others at their current values); after the spec's tune.start ones.")
@click.option("--start-from", "start_from", multiple=True, metavar="RESULT.json",
              help="Measure first what an earlier `hone tune --json` run recommended (repeatable).")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Run the trials in K local `hone worker` processes (no system knobs; see hone worker).")
@click.option("--strict", is_flag=True, help="Refuse (exit 2, nothing changed) when a daemon that changes settings "
              "on its own runs (tuned, bpftune, irqbalance, power daemons …); without it: a warning.")
@click.option("--json", "json_path", metavar="FILE", help="Write the result as JSON (- = stdout).")
@click.option("--html", "html_path", metavar="FILE",
              help="Write the HTML report here (default: <state dir>/reports/STUDY.html).")
def tune_cmd(spec: str, atune_server: str | None, trials: int | None, seed: int | None, sampler: str | None,
             storage: str | None, study_name: str | None, resume: bool, apply_best: bool, pareto: bool,
             repeats: int | None, confirm_rounds: int | None, top_k: int | None, ablation: bool | None,
             ablation_rounds: int | None, max_time: float | None, max_runs: int | None, one_run: bool | None,
             start: tuple[str, ...], start_from: tuple[str, ...], workers: int, strict: bool,
             json_path: str | None, html_path: str | None) -> None:
    """Search SPEC's knob space for a configuration that beats the current one.

    Baseline (current values, measured `repeats` times) → trials (apply, benchmark,
    score; failures are recorded and the study goes on) → the top candidates are
    re-measured against the baseline in interleaved rounds → a *confirmed* one is
    recommended (among several, the one hone's GP rates best over every measurement; the
    largest mean gain with other samplers), or "keep the current configuration"; when it changes several knobs,
    only the changes that measurably hold its gain are kept (ablation). Every knob is restored at the end,
    also on Ctrl-C/SIGTERM, unless --apply-best keeps the confirmed winner.
    """
    stdout_for_data(json_path)
    if atune_server:
        from hone.knobs import check_spec
        from hone.spec.atune import load_atune

        loaded = check_spec(load_atune(spec, atune_server))
        apply_spec = _save_translation(loaded)
        console.print(f"A-Tune pair translated to {apply_spec} (for `hone apply`/`hone run`)", style="dim")
    else:
        loaded = load_checked(spec)
    check_conflicts(loaded, strict=strict, verb="hone tune", warn=lambda m: err_console.print(m, style="yellow"))
    t = loaded.spec.tune
    source = "--max-runs"
    if max_runs is None and t.max_runs is not None:
        max_runs = t.max_runs
        if not atune_server:
            source = f"{loaded.path}:{loaded.source.line_of(('tune', 'max_runs'))}: tune.max_runs"
        elif loaded.source.lines.get(("iterations",)) is not None:
            source = f"{loaded.path}:{loaded.source.lines[('iterations',)]}: iterations"
        else:
            source = f"{atune_server}: maxiterations"
    if trials is None:
        # Under a run budget the runs decide how many trials; tune.trials caps them only when written.
        trials = max_runs if max_runs is not None and "trials" not in t.model_fields_set else t.trials
    settings = TuneSettings(
        trials=trials, seed=t.seed if seed is None else seed,
        sampler=sampler or t.sampler,
        storage=storage, study=study_name, resume=resume, apply_best=apply_best, pareto=pareto,
        random_starts=t.random_starts, repeats=repeats,
        confirm_rounds=t.confirm if confirm_rounds is None else confirm_rounds,
        confirm_asked=confirm_rounds is not None or "confirm" in t.model_fields_set,
        top_k=t.top_k if top_k is None else top_k,
        workers=LocalWorkers(workers) if workers > 1 else None,
        ablation=t.ablation if ablation is None else ablation,
        ablation_rounds=t.ablation_rounds if ablation_rounds is None else ablation_rounds,
        max_time=t.max_time if max_time is None else max_time,
        max_runs=max_runs, max_runs_source=source, one_run=one_run,
        starts=start_configs(loaded, start, [(r, load_tune_result(r)) for r in start_from]),
        # the commands a result prints take the translated spec: `hone apply` cannot read the pair alone
        spec_path=str(apply_spec) if atune_server else None,
    )
    metric_units = {m.name: m.unit or "" for m in loaded.spec.metrics}
    started = time.perf_counter()
    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TimeElapsedColumn(), console=console, transient=True)
    task = progress.add_task("trials", total=settings.trials)
    state: dict[str, Any] = {"baseline": {}, "best": None, "trials": settings.trials}

    def on_trials(total: int) -> None:
        state["trials"] = total
        progress.update(task, total=total)

    def on_phase(phase: str, message: str) -> None:
        progress.console.print(Text.assemble((phase, "cyan"), f": {message}"))

    def on_trial(o: TrialOutcome, study: optuna.Study) -> None:
        # Counted per report: workers' trials arrive in batches, the study's count is ahead of them.
        if "done" not in state:
            state["done"] = sum(1 for t in finished_trials(study) if t.number < o.number)
        state["done"] += 1
        done = state["done"]
        progress.update(task, completed=done)
        elapsed = time.perf_counter() - started
        head = f"trial {done}/{state['trials']} (#{o.number}) {elapsed:6.1f}s"
        if o.state == "failed":
            progress.console.print(Text.assemble(f"{head}  ", ("FAILED", "red"), f" {_short(o.config)} — {o.reason}"))
            return
        objective_value = o.values[0] if o.values else float("nan")
        directions = study.directions
        better = state["best"] is None or (
            len(directions) == 1 and (objective_value > state["best"] if directions[0].name == "MAXIMIZE"
                                      else objective_value < state["best"]))
        if better and o.feasible:
            state["best"] = objective_value
        base = study.user_attrs.get("hone_baseline", {}).get("means", {})
        metrics = " ".join(
            f"{n}={fmt_num(v)} ({_pct_vs_baseline(o.means, base, n, '')})"
            for n, v in o.means.items() if n in metric_units)
        infeasible = "" if o.feasible else " infeasible"
        best = f"best {fmt_num(state['best'])} (unconfirmed)" if state["best"] is not None else ""
        progress.console.print(Text.assemble(f"{head}  {best}  {_short(o.config)}  {metrics}", (infeasible, "yellow")))

    def on_confirm_run(rnd: int, name: str, m: Any) -> None:
        if rnd >= 0 and name == "baseline":
            progress.console.print(f"confirmation round {rnd + 1}", style="dim")

    def on_ablation_run(rnd: int, name: str, m: Any) -> None:
        if rnd >= 0 and name == "winner":
            progress.console.print(f"ablation round {rnd + 1}", style="dim")

    events = TuneEvents(on_phase=on_phase, on_trial=on_trial, on_confirm_run=on_confirm_run,
                        on_ablation_run=on_ablation_run, on_trials=on_trials)
    with progress:
        result = tune(loaded, settings, events)
    _print_result(result)
    html_out = html_path or str(state_dir() / "reports" / f"{result.study}.html")
    from hone.report.html import write_study_html

    path = write_study_html(result.study, html_out, storage=result.storage)
    console.print(f"HTML report: {path}")
    console.print(f"study {result.study!r} in {mask_url(result.storage)} "
                  f"({time.perf_counter() - started:.0f} s)", style="dim")
    if json_path:
        if json_path != "-":
            Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        write_json(json_path, result.to_json())
    if result.restore_problems:
        raise RestoreError(f"{len(result.restore_problems)} change(s) could not be restored; they stay in the"
                           " journal", hint="fix the cause and run `hone rollback`")


def _save_translation(loaded: Any) -> Path:
    """Write a translated A-Tune pair as a hone spec in the state directory."""
    out = state_dir() / "atune" / f"{loaded.spec.name}.yaml"
    out.parent.mkdir(parents=True, exist_ok=True)
    data = loaded.spec.model_dump(mode="json", by_alias=True, exclude_none=True)
    out.write_text(f"# translated by hone from {loaded.path}\n" + yaml.safe_dump(data, sort_keys=False))
    return out


def _print_result(result: TuneResult) -> None:
    doc = result.to_json()
    goals = {m.name: m.goal for m in result.objective.metrics}
    table = result_table(doc, f"hone tune {result.spec_name}: baseline vs recommendation (means of the runs "
                              "the confirmation compared)", goals)
    console.print(table)
    for c in result.confirmations:
        comp = c.comparison
        won = c is result.winner or (result.ablation is not None and c.candidate.name == result.ablation.winner)
        mark = "✔" if won else " "
        console.print(Text.assemble(" ", (mark, "green"), f" {c.candidate.name}: {comp.change_pct:+.2f}% "
                                    f"[{comp.ci_pct[0]:+.2f}%, {comp.ci_pct[1]:+.2f}%] p={comp.p_value:.3g} "
                                    f"n={comp.n} → {verdict_word(comp.verdict, *result.objective.units)}"
                                    f"{' (' + comp.reason + ')' if comp.reason else ''}  "
                                    f"{_short(c.candidate.config, 8)}"))
    if result.importances:
        caveat = importance_caveat(result.trials - result.failed_trials, len(result.importances))
        console.print(f"knob importances ({caveat}): " + ", ".join(
            f"{k} {v:.0%}" for k, v in list(result.importances.items())[:8]))
    console.print(f"trials: {result.trials} ({result.failed_trials} failed)"
                  + (f"; {failed_at(result.failed_knobs)}" if result.failed_knobs else ""))
    if result.winner is None:
        console.print(Text.assemble(("Recommendation: keep the current configuration", "bold yellow"),
                                    f" ({keep_reason(result.confirmations)})"))
        for line in settle_lines(doc):
            console.print(line)
    else:
        comp = result.winner.comparison
        of = judged_figure(result.objective.mode, len(result.objective.metrics), result.winner.judged_alone)
        console.print(Text.assemble(
            (f"Recommendation ({recommendation_kind(doc)}): "
             + recommendation_text(result.winner.candidate.config, result.unchanged, 20), "bold green"),
            f"\n  {comp.change_pct:+.2f}% vs baseline{f' ({of})' if of else ''}, {ci_name(comp.confidence)} "
            f"[{comp.ci_pct[0]:+.2f}%, "
            f"{comp.ci_pct[1]:+.2f}%], p = {comp.p_value:.3g}, {comp.n} interleaved round{'s' if comp.n != 1 else ''}"))
        if result.chosen_by == "model":
            console.print("  chosen among the confirmed candidates by the GP's posterior mean over every"
                          " measurement (search trials and confirmation rounds)")
        cmd = doc.get("apply_command")
        if cmd:
            console.print(f"  apply it: {cmd}" + ("  (applied: --apply-best)" if result.applied else ""))
        if doc.get("run_settings"):
            console.print("  benchmark settings (param/env knobs): " + _short(doc["run_settings"], 20))
        for line in risk_lines(doc) + not_ablated_lines(doc):
            console.print(line)
    for line in ablation_lines(doc) + budget_lines(doc):
        console.print(line)
    for problem in result.restore_problems:
        err_console.print(f"restore problem: {problem} (run `hone rollback`)", style="red")
