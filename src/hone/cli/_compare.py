"""``hone compare``: interleaved A/B(/C…) rounds of commands or of spec variants."""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from hone.cli import main
from hone.cli._common import console, duration_arg, err_console, stdout_for_data
from hone.core.errors import HoneError, RestoreError
from hone.core.metrics import verdict_word
from hone.experiment import Look
from hone.experiment.compare import (
    RUN_METRICS,
    Arm,
    CompareSettings,
    command_arms,
    command_variants,
    parse_sweep,
    parse_variant,
    per_variant,
    run_compare,
    spec_variants,
    with_counter,
)
from hone.report import benchstat as benchstat_report
from hone.report import bmf as bmf_report
from hone.report import csv as csv_report
from hone.report import gab as gab_report
from hone.report import hyperfine as hyperfine_report
from hone.report import json as json_report
from hone.report import markdown as md_report
from hone.report import summary as summary_report
from hone.report import terminal
from hone.report.base import write_text
from hone.report.gate import check_gate, parse_fail_on
from hone.run.benchmark import Measurement
from hone.run.configure import Configurator, changes_machine, parse_assignments
from hone.run.conflicts import check_conflicts
from hone.run.journal import machine_lock_if
from hone.spec.models import MAX_TIMEOUT_S

if TYPE_CHECKING:  # hone.tune pulls in Optuna and SQLAlchemy, which compare does without
    from hone.run.schedule import InterleavedResult
    from hone.tune.objective import Objective


def _is_spec(path: str) -> bool:
    return path.endswith((".yaml", ".yml")) and Path(path).is_file()


@main.command("compare")
@click.argument("args", nargs=-1, required=True)
@click.option("--variant", "variants", multiple=True, metavar="NAME:KNOB=V[,KNOB=V]",
              help="A knob variant of SPEC (repeatable). One variant is compared against the machine as it is.")
@click.option("-n", "--name", "names", multiple=True, help="Name of each command, in order (repeatable).")
@click.option("-r", "--rounds", type=click.IntRange(min=1), default=20, show_default=True,
              help="Measured rounds before the first look; each runs every variant once, in a fresh random "
                   "order.")
@click.option("-w", "--warmup", type=click.IntRange(min=0), default=1, show_default=True,
              help="Discarded warm-up rounds.")
@click.option("--max-rounds", type=click.IntRange(min=1), default=None,
              help="While a verdict is not decisive (faster, slower or equivalent), double the rounds up to "
                   "this many (default: as many as --max-time allows). α is spent over the looks "
                   "(docs/statistics.md).")
@click.option("--max-time", default="3m", show_default=True, metavar="DURATION",
              help="Time the whole comparison may take while it is not decisive (90s, 10m, 1h); 0 runs exactly "
                   "--rounds rounds.")
@click.option("--metric", default=None,
              help="Metric to compare: cpu_time, wall_time, user_time, sys_time, max_rss, instructions (counted "
                   "by perf where the PMU counts them, else valgrind: repeatable, 5-50x slower), a spec metric, "
                   "or objective: the spec's scored metrics as hone tune confirms them (weighted: their weighted "
                   "geometric mean) (default: cpu_time for CPU-bound commands, else wall_time; for a spec, the figure "
                   "hone tune judges where the spec names it (objective for tune.objective: weighted, the one "
                   "metric with a non-zero weight), else its first metric).")
@click.option("--threshold", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Smallest change that matters, in %: faster/slower need at least this much; equivalent means "
                   "the whole CI lies within ±this.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level.")
@click.option("--seed", type=int, default=None, help="Seed of the run order (default: random, recorded).")
@click.option("--prepare", "prepares", multiple=True,
              help="Untimed command before every run of a variant (once for all, or once per variant).")
@click.option("--cleanup", "cleanups", multiple=True,
              help="Untimed command after every run of a variant (once for all, or once per variant).")
@click.option("--sweep", default=None, metavar="NAME=v1,v2,…",
              help="Run the comparison at each value: a {NAME} placeholder in the commands, or a spec knob.")
@click.option("--pin", default=None, metavar="CPUS", help="Pin every run to these CPUs (taskset -c CPUS).")
@click.option("--no-aslr", is_flag=True, help="Run every command under `setarch -R` (no address randomization).")
@click.option("--shell", is_flag=True, help="Run commands through `sh -c` (default: split like a shell, no shell).")
@click.option("--timeout", type=click.FloatRange(0, MAX_TIMEOUT_S, min_open=True), default=600.0, show_default=True,
              help="Seconds before a run is killed.")
@click.option("--estimator", type=click.Choice(["auto", "welsch", "median", "trimmed", "mean"]), default="auto",
              show_default=True,
              help="Location of the per-round log ratios: Welsch M-estimate + sign-flip randomization test + "
                   "its inverted CI (heavy-tailed rounds), median + exact CI + sign test, 20% trimmed mean + "
                   "BCa CI + Wilcoxon, plain mean (geometric mean ratio), or auto: welsch when the rounds' "
                   "tails are heavy, else trimmed (docs/CONTRACTS.md).")
@click.option("--cv-warn", type=click.FloatRange(min=0), default=5.0, show_default=True,
              help="Warn when a variant's stddev/mean exceeds this, in %.")
@click.option("--export-markdown", metavar="FILE",
              help="The AutoFDO before/after table (NebulaGraph style) and a verdict table (- = stdout).")
@click.option("--export-csv", metavar="FILE", help="One line per variant: summary, ratio, CI, p, verdict.")
@click.option("--export-json", metavar="FILE", help="Versioned result with every raw run (hone report reads it).")
@click.option("--export-hyperfine", metavar="FILE",
              help="hyperfine's --export-json layout; times in s: the metric when it is a time, else wall time.")
@click.option("--export-bmf", metavar="FILE",
              help="Bencher Metric Format (bencher run --adapter json): each variant's mean ± stddev.")
@click.option("--export-gab", metavar="FILE",
              help="github-action-benchmark JSON, customSmallerIsBetter or customBiggerIsBetter by the metric's "
                   "goal (printed).")
@click.option("--export-benchstat", metavar="FILE",
              help="benchstat-like text: each variant's mean ± stddev, then 'old vs new: +x% (p=…, n=…)'.")
@click.option("--summary", "summary_path", metavar="FILE",
              help="Markdown summary (verdicts, gate, means, table) for CI pages; it is also appended to "
                   "$GITHUB_STEP_SUMMARY when that is set.")
@click.option("--fail-on", metavar="VERDICT[,VERDICT]",
              help="After reporting, exit 4 when a candidate's verdict against the first variant (at any sweep "
                   "value) is one of these: slower, or slower,inconclusive for a strict gate.")
@click.option("--strict", is_flag=True,
              help="Refuse (exit 2, nothing changed) when a daemon that changes settings on its own runs (tuned, "
                   "irqbalance, power daemons …); without it spec variants only warn.")
def compare_cmd(args: tuple[str, ...], variants: tuple[str, ...], names: tuple[str, ...], rounds: int,
                warmup: int, max_rounds: int | None, max_time: str, metric: str | None, threshold: float,
                alpha: float,
                seed: int | None, prepares: tuple[str, ...], cleanups: tuple[str, ...], sweep: str | None,
                pin: str | None, no_aslr: bool, shell: bool, timeout: float, estimator: str, cv_warn: float,
                export_markdown: str | None, export_csv: str | None, export_json: str | None,
                export_hyperfine: str | None, export_bmf: str | None, export_gab: str | None,
                export_benchstat: str | None, summary_path: str | None, fail_on: str | None, strict: bool) -> None:
    """Compare commands, or knob variants of a spec, in interleaved rounds.

    \b
      hone compare 'sort -S 1M big.txt' 'sort -S 64M big.txt'
      hone compare hone.yaml --variant off:sync=off --variant full:sync=full
      hone compare './q {n}' './q-new {n}' --sweep n=1,20,40

    Prints each variant's summary, the paired ratio against the first variant with its
    CI and p-value (Welsch M-estimate + randomization test when the rounds are heavy-tailed,
    else BCa bootstrap + Wilcoxon; see --estimator), and a verdict: faster/slower only when the CI
    excludes 0, p < alpha and the change is at least --threshold. Knobs are restored at
    the end, also on failure or Ctrl-C. Exit 1 when a variant failed every run; exit 4 when
    --fail-on names a verdict a candidate got.
    """
    gate = parse_fail_on(fail_on)
    stdout_for_data(export_markdown, export_csv, export_json, export_hyperfine, export_bmf, export_gab,
                    export_benchstat, summary_path)
    budget = None if max_time.strip() in ("0", "0s") else duration_arg(max_time, "--max-time")
    if budget is None and max_rounds is None:
        max_rounds = rounds  # exactly --rounds
    settings = CompareSettings(
        rounds=rounds, warmup=warmup, seed=secrets.randbelow(2**31) if seed is None else seed, metric=metric,
        threshold=threshold / 100.0, alpha=alpha, max_rounds=max_rounds, max_time=budget, pin=pin,
        no_aslr=no_aslr, timeout=timeout, shell=shell, cv_warn=cv_warn / 100.0, estimator=estimator,
    )
    sweep_spec = parse_sweep(sweep)
    nsweep = len(sweep_spec[1]) if sweep_spec else 1

    with _progress() as progress:
        task = progress.add_task("rounds", total=None)

        def on_run(rnd: int, name: str, m: Measurement) -> None:
            progress.advance(task)
            if not m.ok:
                where = f"round {rnd + 1}" if rnd >= 0 else "warm-up"
                progress.console.print(f"{where} {name}: FAILED: {m.error}", style="red", soft_wrap=True)

        if variants or _is_spec(args[0]):
            result = _compare_spec(args, variants, names, settings, sweep_spec, prepares, cleanups,
                                   progress, task, nsweep, on_run, strict)
        else:
            if strict:
                check_conflicts(None, strict=True, verb="hone compare", warn=err_console.print)
            if metric is not None and metric not in RUN_METRICS:
                raise HoneError(f"--metric {metric}: commands have only {', '.join(RUN_METRICS)}")
            arms = command_arms(args, names, prepares, cleanups)
            if sweep_spec and not any("{" + sweep_spec[0] + "}" in a.command for a in arms if a.command):
                raise HoneError(f"--sweep {sweep_spec[0]}: no command contains {{{sweep_spec[0]}}}")
            progress.update(task, total=(warmup + rounds) * len(arms) * nsweep)
            unit = RUN_METRICS.get(settings.metric or "wall_time")  # cpu or wall time when not chosen
            result = run_compare(arms, settings, kind="commands", sweep=sweep_spec,
                                 make_variants=lambda sv: command_variants(arms, settings, sv), on_run=on_run,
                                 on_look=_look_printer(progress, task, len(arms), unit))
    console.print(terminal.render(result))
    if export_json:
        write_text(export_json, json_report.render(result))
    if export_markdown:
        write_text(export_markdown, md_report.render(result))
    if export_csv:
        write_text(export_csv, csv_report.render(result))
    for path, exporter in ((export_hyperfine, hyperfine_report), (export_bmf, bmf_report), (export_gab, gab_report),
                           (export_benchstat, benchstat_report)):
        if path:
            write_text(path, exporter.render(result))
    if export_gab:
        console.print(f"github-action-benchmark export: use tool: {gab_report.tool(result)}", style="dim")
    if summary_path or os.environ.get("GITHUB_STEP_SUMMARY"):
        for warning in summary_report.publish(summary_report.render(result, gate), summary_path):
            err_console.print(f"warning: {warning}", style="yellow")
    dead = sorted({v["name"] for row in result["rows"] for v in row["variants"]
                   if not row["summaries"].get(v["name"])})
    if dead:
        raise VariantFailedError(f"{', '.join(dead)} failed every run (see the table above)")
    if result.get("restore_problems"):
        raise RestoreError(f"{len(result['restore_problems'])} change(s) could not be restored; they stay in the"
                           " journal", hint="fix the cause and run `hone rollback`")
    check_gate(result, gate)


#: ``--metric objective``: what ``hone tune`` confirms on, so a tune result's candidate can be compared on it
OBJECTIVE = "objective"


def _heaviest_alone(objective: Objective) -> Callable[[dict[str, Any], InterleavedResult], None]:
    """Once a successful run has a scored metric ≤ 0 (no geometric mean), the comparison judges
    the objective's heaviest metric alone, every round of it: what ``hone tune``'s confirmation
    does (``judged_alone``), rather than a comparison with no usable round."""

    def rejudge(meta: dict[str, Any], result: InterleavedResult) -> None:
        if meta.get("judged_alone"):
            return
        ok = [m for runs in result.runs.values() for m in runs if m.ok]
        if all(m.metrics.get(x.name, math.nan) > 0 for m in ok for x in objective.metrics):
            return
        heaviest = objective.primary
        meta["metric"], meta["goal"], meta["unit"] = heaviest.name, str(heaviest.goal), heaviest.unit or ""
        meta["judged_alone"] = heaviest.name

    return rejudge


def _with_objective(run: Callable[[], Measurement], objective: Objective) -> Callable[[], Measurement]:
    """``run``, its measurement carrying the objective's figure as the metric ``objective``."""

    def measured() -> Measurement:
        m = run()
        if m.ok:
            m.metrics[OBJECTIVE] = objective.geometric(m.metrics)
        return m

    return measured


class VariantFailedError(HoneError):
    """A variant produced no successful run: the comparison is reported, then exit 1."""

    exit_code = 1


def _look_printer(progress: Progress, task: Any, nvariants: int, unit: str | None) -> Any:
    """Each look's running CIs; when it goes on, the progress bar grows by the new rounds."""

    def on_look(look: Look, row: dict[str, Any]) -> None:
        parts = []
        for name, c in row["comparisons"].items():
            lo, hi = c["ci_pct"]
            parts.append(f"{name} {c['change_pct']:+.2f}% [{lo:+.2f}%, {hi:+.2f}%] {verdict_word(c['verdict'], unit)}")
        progress.console.print(f"look at {look.rounds} rounds ({100 * (1 - look.alpha):.2f}% CI): "
                               + "; ".join(parts), style="dim", soft_wrap=True)
        if not look.decisive:
            t = progress.tasks[task].total or 0
            progress.update(task, total=t + look.rounds * nvariants)

    return on_look


def _progress() -> Progress:
    return Progress(TextColumn("[dim]measuring[/dim]"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                    console=err_console, transient=True)


def _compare_spec(args: tuple[str, ...], variants: tuple[str, ...], names: tuple[str, ...],
                  settings: CompareSettings, sweep_spec: tuple[str, list[str]] | None,
                  prepares: tuple[str, ...], cleanups: tuple[str, ...], progress: Progress, task: Any,
                  nsweep: int, on_run: Any, strict: bool = False) -> dict[str, Any]:
    from hone.cli._common import load_checked

    if len(args) != 1:
        raise HoneError("hone compare SPEC takes one spec file and --variant options, not commands",
                        hint="compare commands without --variant, e.g. hone compare 'cmd a' 'cmd b'")
    if names:
        raise HoneError("--name names commands; spec variants are named in --variant NAME:…")
    if not variants:
        raise HoneError(f"hone compare {args[0]}: give at least one --variant NAME:KNOB=VALUE")
    loaded = load_checked(args[0])
    arms: list[Arm] = []
    for text in variants:
        name, items = parse_variant(text)
        knobs = parse_assignments(loaded, items, flag="--variant")
        arms.append(Arm(name=name, description=", ".join(items) or "(machine as it is)", knobs=knobs))
    if len(arms) == 1:
        arms.insert(0, Arm(name="baseline", description="(machine as it is)"))
    if len({a.name for a in arms}) != len(arms):
        raise HoneError(f"--variant names must be unique, got {[a.name for a in arms]}")
    preps = per_variant(prepares, len(arms), "--prepare")
    cleans = per_variant(cleanups, len(arms), "--cleanup")
    check_conflicts(loaded, strict=strict, verb="hone compare",
                    warn=lambda m: progress.console.print(m, style="yellow"))
    for arm, p, c in zip(arms, preps, cleans, strict=True):
        arm.prepare, arm.cleanup = p, c
    sweep_values: list[Any] = []
    if sweep_spec:
        sweep_values = [parse_assignments(loaded, [f"{sweep_spec[0]}={v}"], flag="--sweep")[sweep_spec[0]]
                        for v in sweep_spec[1]]
    spec_metric = loaded.spec.metrics[0]
    chosen = settings.metric is not None
    if not chosen:
        settings.metric = loaded.compared_metric
    objective = None
    if settings.metric == OBJECTIVE and OBJECTIVE not in {m.name for m in loaded.spec.metrics}:
        from hone.tune.objective import build_objective  # only here: see TYPE_CHECKING above

        objective = build_objective(list(loaded.spec.metrics), loaded.spec.tune.objective)
        if objective.mode == "single":  # the one scored metric itself
            settings.metric, objective = objective.metrics[0].name, None
    if objective is not None:
        settings.goal, unit = "maximize", None
    else:
        try:
            m = loaded.spec.metric(settings.metric)
            settings.goal, unit = m.goal, m.unit
        except KeyError:
            if settings.metric not in RUN_METRICS:
                known = ", ".join([*(m.name for m in loaded.spec.metrics), *RUN_METRICS])
                raise HoneError(f"--metric {settings.metric}: not a metric of this spec ({known})") from None
            settings.goal, unit = "minimize", RUN_METRICS[settings.metric]
    progress.update(task, total=(settings.warmup + settings.rounds) * len(arms) * nsweep)
    with machine_lock_if(changes_machine(loaded), f"hone compare {loaded.path}"):
        configurator = Configurator(loaded)
        problems: list[str] = []
        try:
            baseline = configurator.current_values()
            touched = {k for a in arms for k in a.knobs} | ({sweep_spec[0]} if sweep_spec else set())
            # A system knob absent at the start is absent again in variants that do not set
            # it; a param/env knob without a value cannot be left out.
            unreadable = [k for k in sorted(touched) if baseline.get(k) is None
                          and not configurator.drivers[k].changes_system]
            if unreadable:
                raise HoneError(f"{', '.join(unreadable)} has no default value: every variant must set it",
                                hint="add it to each --variant")
            value_map = dict(zip(sweep_spec[1], sweep_values, strict=True)) if sweep_spec else {}

            def make(sv: tuple[str, str] | None) -> list[Any]:
                bound = (sv[0], value_map[sv[1]]) if sv else None
                variants = spec_variants(loaded, configurator, arms, settings, baseline, bound)
                if objective is not None:
                    for v in variants:
                        v.run = _with_objective(v.run, objective)
                return variants

            result = run_compare(arms, settings, kind="spec", sweep=sweep_spec, make_variants=make,
                                 spec={"path": str(loaded.path), "name": loaded.spec.name},
                                 spec_text=loaded.path.read_text(), metric_unit=unit, on_run=on_run,
                                 on_look=_look_printer(progress, task, len(arms), unit),
                                 rejudge=_heaviest_alone(objective) if objective is not None else None)
            if result.get("judged_alone"):
                why = ("the spec's objective has no geometric mean (a run had a scored metric ≤ 0): "
                       f"{result['judged_alone']} alone, its heaviest metric, as hone tune judges it")
            elif objective is not None:
                why = "the spec's objective, as hone tune confirms it: the weighted geometric mean of " + ", ".join(
                    f"{m.name}{'' if m.goal == 'maximize' else '⁻¹'}×{abs(m.weight):g}" for m in objective.metrics)
            elif chosen:
                why = "chosen with --metric"
            elif settings.metric != spec_metric.name:
                why = "the spec's one scored metric (the others have weight 0), as hone tune judges it"
            else:
                why = "the spec's first metric"
                scored = [m for m in loaded.spec.metrics if m.weight != 0]
                if len(scored) > 1 and loaded.spec.tune.objective != "pareto":
                    why += (f"; hone tune judges the weighted geometric mean of its {len(scored)} metrics "
                            "(--metric objective)")
            result["metric_reason"] = with_counter(why, settings.metric)
        finally:
            problems = configurator.restore()
            for problem in problems:
                err_console.print(f"restore problem: {problem} (run `hone rollback`)", style="red")
    result["restore_problems"] = problems
    return result
