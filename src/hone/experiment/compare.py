"""``hone compare``: build the variants, run interleaved rounds, compute the verdicts.

Two kinds of variants:

* commands (hyperfine-style): each argument is a command line; ``{name}`` placeholders
  take the ``--sweep`` value (one argv element, or a quoted variable in ``--shell`` text:
  never pasted in as shell code).
* spec variants: ``NAME:KNOB=V,KNOB=V`` on one spec; each run first applies the variant's
  knobs through the journal, and every knob is restored at the end (Ctrl-C included).

The result is a plain dict in the versioned ``hone-compare/2`` format (every raw run, the
orders, the fingerprint, summaries and comparisons); ``hone report`` renders it again.

Rounds until decisive: after ``rounds`` the comparison looks at its verdicts and, while one is
not decisive (faster, slower or equivalent), doubles its rounds, up to ``--max-rounds`` and
the ``--max-time`` budget, spending α over the looks so the false-verdict rate stays ≤ α
(:mod:`hone.experiment.sequential`). The experiment itself is :mod:`hone.experiment`; this
module builds the arms and the ``hone-compare`` document.
"""

from __future__ import annotations

import math
import os
import shlex
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hone import __version__
from hone.core.errors import HoneError
from hone.core.fingerprint import fingerprint
from hone.core.metrics import BUILTIN, metric_value
from hone.core.metrics import value as builtin_value
from hone.core.process import run_process
from hone.core.shell_text import bind_argv
from hone.experiment import ExperimentSettings, Look, run_experiment
from hone.run.benchmark import Measurement, run_measured, run_once
from hone.run.instructions import instruction_counter
from hone.run.schedule import InterleavedResult, Variant
from hone.stats.paired import DECISIVE, compare_paired, opt_over_default_pct
from hone.stats.summary import summarize

COMPARE_FORMAT = "hone-compare/2"
# Built-in metrics every run can have (hone.core.metrics), with their unit; lower is better for all.
# Counted ones (instructions) run the command under a counter when they are the metric.
RUN_METRICS = {m.name: m.unit for m in BUILTIN.values()}
# A command whose CPU time is below this share of its wall time mostly waits (sleep, I/O,
# network): its CPU time says little about how long users wait, so compare wall time.
CPU_BOUND_SHARE = 0.5


@dataclass
class CompareSettings:
    """How to run and judge a comparison. ``threshold`` and ``cv_warn`` are fractions."""

    rounds: int = 20
    warmup: int = 1
    seed: int = 0
    metric: str | None = None
    goal: str | None = None
    threshold: float = 0.01
    alpha: float = 0.05
    max_rounds: int | None = None
    max_time: float | None = None
    pin: str | None = None
    no_aslr: bool = False
    timeout: float = 600.0
    shell: bool = False
    cv_warn: float = 0.05
    n_resamples: int = 2000
    estimator: str = "auto"

    def experiment(self, seed: int) -> ExperimentSettings:
        return ExperimentSettings(rounds=self.rounds, warmup=self.warmup, seed=seed, threshold=self.threshold,
                                  alpha=self.alpha, estimator=self.estimator,  # type: ignore[arg-type]
                                  max_rounds=self.max_rounds, max_time=self.max_time)


@dataclass
class Arm:
    """A variant before it is bound to a sweep value: its name, what it is (command line
    or knob assignments) and optional untimed prepare/cleanup commands."""

    name: str
    description: str
    command: str | None = None
    knobs: dict[str, Any] = field(default_factory=dict)
    prepare: str | None = None
    cleanup: str | None = None


# ---------------------------------------------------------------- argument parsing


def parse_sweep(text: str | None) -> tuple[str, list[str]] | None:
    """``"threads=1,20,40"`` → ``("threads", ["1", "20", "40"])``."""
    if text is None:
        return None
    name, sep, values = text.partition("=")
    vals = [v.strip() for v in values.split(",") if v.strip()]
    if not sep or not name.strip() or not vals:
        raise HoneError(f"--sweep {text}: expected NAME=v1,v2,…")
    return name.strip(), vals


def parse_variant(text: str) -> tuple[str, list[str]]:
    """``"fast:cache=2000,sync=off"`` → ``("fast", ["cache=2000", "sync=off"])``.
    ``"base:"`` is a variant that sets nothing (the machine as it is)."""
    name, sep, rest = text.partition(":")
    if not sep or not name.strip():
        raise HoneError(f"--variant {text}: expected NAME:KNOB=VALUE[,KNOB=VALUE…]")
    items = [i.strip() for i in rest.split(",") if i.strip()]
    return name.strip(), items


def per_variant(values: Sequence[str], count: int, flag: str) -> list[str | None]:
    """One value for all variants, or exactly one per variant (hyperfine's rule)."""
    if not values:
        return [None] * count
    if len(values) == 1:
        return [values[0]] * count
    if len(values) != count:
        raise HoneError(f"{flag} given {len(values)} times for {count} variants: give it once or once per variant")
    return list(values)


def command_arms(
    commands: Sequence[str], names: Sequence[str], prepare: Sequence[str], cleanup: Sequence[str]
) -> list[Arm]:
    if len(commands) < 2:
        raise HoneError("hone compare needs at least two commands (or SPEC --variant …)")
    if names and len(names) != len(commands):
        raise HoneError(f"--name given {len(names)} times for {len(commands)} commands")
    labels = list(names) if names else [_short_label(c) for c in commands]
    if len(set(labels)) != len(labels):
        labels = [f"{chr(ord('A') + i) if i < 26 else i}: {lbl}" for i, lbl in enumerate(labels)]
    preps = per_variant(prepare, len(commands), "--prepare")
    cleans = per_variant(cleanup, len(commands), "--cleanup")
    return [
        Arm(name=labels[i], description=c, command=c, prepare=preps[i], cleanup=cleans[i])
        for i, c in enumerate(commands)
    ]


def _short_label(command: str) -> str:
    return command if len(command) <= 40 else command[:37] + "…"


# ---------------------------------------------------------------- running


def wrapper_argv(settings: CompareSettings) -> list[str]:
    """taskset/setarch prefix; both exec the command, so wait4 still measures it alone."""
    out: list[str] = []
    if settings.pin:
        out += ["taskset", "-c", settings.pin]
    if settings.no_aslr:
        out += ["setarch", os.uname().machine, "-R"]
    return out


def _argv(command: str, shell: bool, sweep: tuple[str, str] | None = None,
          what: str = "command") -> tuple[list[str], dict[str, str] | None]:
    """(argv, environment or None for hone's own) of a command line with ``{sweep}`` bound.

    The line is split (or given to ``sh -c`` with ``--shell``) before the value is bound:
    in shell text the value arrives in the variable ``HONE_SWEEP_<name>``, elsewhere it
    fills its argv element, so it is never parsed as shell code (:mod:`hone.core.shell_text`)."""
    if shell:
        argv = ["sh", "-c", command]
    else:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise HoneError(f"cannot split command {command!r}: {exc}", hint="quote it, or use --shell") from None
        if not argv:
            raise HoneError("empty command")
    values = {sweep[0]: sweep[1]} if sweep else {}
    argv, bound = bind_argv(argv, values, prefix="HONE_SWEEP_", what=f"{what} {command!r}")
    return argv, ({**os.environ, **bound} if bound else None)


def _hook(command: str | None, settings: CompareSettings, what: str,
          sweep: tuple[str, str] | None = None) -> Callable[[], None] | None:
    if command is None:
        return None
    argv, env = _argv(command, settings.shell, sweep, what)

    def run() -> None:
        res = run_process(argv, timeout=settings.timeout, env=env)
        if not res.ok:
            raise HoneError(f"{what} {command!r}: {res.describe_failure()}")

    return run


def counts_instructions(settings: CompareSettings) -> bool:
    """True when the compared metric is counted (instructions): every run then goes under the
    one counter of this machine, probed here so a machine that has none refuses up front."""
    metric = BUILTIN.get(settings.metric or "")
    if metric is None or not metric.counted:
        return False
    instruction_counter()
    return True


def with_counter(reason: str, metric: str | None) -> str:
    """``reason`` for choosing ``metric``, plus how it was counted when it is a counted one."""
    if metric is None or metric not in BUILTIN or not BUILTIN[metric].counted:
        return reason
    return f"{reason}; {instruction_counter().describe()}"


def command_variants(arms: Sequence[Arm], settings: CompareSettings, sweep: tuple[str, str] | None) -> list[Variant]:
    """Variants that run each arm's command line (``{sweep}`` substituted)."""
    wrap = wrapper_argv(settings)
    count = counts_instructions(settings)
    variants = []
    for arm in arms:
        assert arm.command is not None
        argv, env = _argv(arm.command, settings.shell, sweep)

        def run(argv: list[str] = argv, env: dict[str, str] | None = env) -> Measurement:
            return run_measured(argv, timeout=settings.timeout, count=count, wrapper=wrap, env=env)[0]

        variants.append(Variant(
            name=arm.name, run=run,
            prepare=_hook(arm.prepare, settings, "--prepare", sweep),
            cleanup=_hook(arm.cleanup, settings, "--cleanup", sweep),
        ))
    return variants


def spec_variants(
    loaded: Any, configurator: Any, arms: Sequence[Arm], settings: CompareSettings,
    baseline: dict[str, Any], sweep: tuple[str, Any] | None,
) -> list[Variant]:
    """Variants of one spec: before each run, apply that variant's knobs (journaled).

    Knobs another variant sets are at their session-start state in variants that do not
    set them (the configurator renders every arm from the starting state), so no variant
    inherits its neighbour's settings; param/env knobs take their ``baseline`` value."""
    touched = {k for arm in arms for k in arm.knobs}
    if sweep:
        touched.add(sweep[0])
    wrap = wrapper_argv(settings) or None
    count = counts_instructions(settings)
    variants = []
    for arm in arms:
        values = {k: baseline[k] for k in touched if k not in arm.knobs
                  and not configurator.drivers[k].changes_system}
        values.update(arm.knobs)
        if sweep:
            values[sweep[0]] = sweep[1]
        ctx_box: dict[str, Any] = {}
        user_prep = _hook(arm.prepare, settings, "--prepare")

        def prepare(values: dict[str, Any] = values, box: dict[str, Any] = ctx_box,
                    user_prep: Callable[[], None] | None = user_prep) -> None:
            box["ctx"] = configurator.apply(values)
            if user_prep:
                user_prep()

        def run(box: dict[str, Any] = ctx_box) -> Measurement:
            return run_once(loaded, box["ctx"], wrapper=wrap, count=count)

        variants.append(Variant(name=arm.name, run=run, prepare=prepare,
                                cleanup=_hook(arm.cleanup, settings, "--cleanup")))
    return variants


def available_cpu_share(duration_s: float = 0.03) -> float:
    """Share of one CPU a busy loop gets right now (1.0 on an idle machine, ~0.3 when
    other work shares the CPUs): spin ``duration_s`` seconds of wall time, return
    thread CPU time / wall time."""
    w0, c0 = time.perf_counter(), time.thread_time()
    x = 0
    while time.perf_counter() - w0 < duration_s:
        x += 1
    return min(1.0, (time.thread_time() - c0) / max(time.perf_counter() - w0, 1e-9))


def _cpu_share_now() -> float:
    return statistics.median(available_cpu_share() for _ in range(3))


def choose_command_metric(runs: Sequence[Measurement], available: float = 1.0) -> tuple[str, str]:
    """cpu_time when the commands keep a CPU busy, wall_time when they mostly wait.

    A command's CPU/wall share is judged against ``available`` (what a busy loop gets
    now, :func:`available_cpu_share`): on a loaded machine a CPU-bound program gets only
    part of a CPU and must not be mistaken for one that sleeps. Returns (metric, reason)."""
    shares = [m.cpu_s / m.wall_s for m in runs if m.ok and m.wall_s > 0]
    if not shares:
        return "cpu_time", "default for commands"
    share = statistics.median(shares)
    rel = share / max(available, 1e-3)
    how = f"CPU time is {share:.0%} of wall time" + (
        f", {rel:.0%} of the {available:.0%} CPU share available now" if available < 0.95 else "")
    if rel >= CPU_BOUND_SHARE:
        return "cpu_time", f"CPU-bound: {how}"
    return "wall_time", f"not CPU-bound ({how}): comparing wall time"


# ---------------------------------------------------------------- statistics of one row


def analyse_row(row: dict[str, Any], meta: dict[str, Any], alpha: float) -> None:
    """Fill ``row["summaries"]``, ``row["comparisons"]`` and ``row["warnings"]`` from the
    raw runs (reference = first variant). Pure: same input, same output."""
    metric, goal, threshold = meta["metric"], meta["goal"], meta["threshold"]
    variants = row["variants"]
    ref = variants[0]
    values = {v["name"]: [metric_value(r, metric) for r in v["runs"]] for v in variants}
    row["summaries"] = {}
    row["comparisons"] = {}
    row["failed"] = {}
    warnings: list[str] = []
    for v in variants:
        name = v["name"]
        ok = [x for x in values[name] if math.isfinite(x)]
        failed = [r for r in v["runs"] if r.get("error") is not None]
        row["failed"][name] = len(failed)
        if failed:
            warnings.append(f"{name}: {len(failed)} of {len(v['runs'])} runs failed: {failed[0]['error']}")
        if ok:
            s = summarize(ok)
            d = s.to_dict()
            walls = [builtin_value(r, "wall_time") for r in v["runs"] if r.get("error") is None]
            # None under valgrind: those were valgrind's times, not the program's.
            d["wall_mean"] = statistics.fmean(walls) if all(math.isfinite(w) for w in walls) else None
            row["summaries"][name] = d
            if math.isfinite(s.cv) and s.cv > meta["cv_warn"]:
                warnings.append(f"{name}: high noise, {metric} stddev/mean {s.cv:.1%} "
                                f"(> {meta['cv_warn']:.0%})")
    for v in variants[1:]:
        cmp = compare_paired(values[ref["name"]], values[v["name"]], goal=goal, threshold=threshold,
                             alpha=alpha, confidence=1 - alpha, n_resamples=meta.get("n_resamples", 2000),
                             seed=meta["seed"], estimator=meta.get("estimator", "mean"))
        d = cmp.to_dict()
        rs, vs = row["summaries"].get(ref["name"]), row["summaries"].get(v["name"])
        d["opt_over_default_pct"] = (
            opt_over_default_pct(rs["mean"], vs["mean"]) if rs and vs else math.nan)
        row["comparisons"][v["name"]] = d
        if cmp.n > 0 and cmp.verdict == "inconclusive":
            need = f"; about {cmp.rounds_needed} rounds in all would settle it" if cmp.rounds_needed else ""
            warnings.append(f"{v['name']}: inconclusive after {cmp.n} rounds — {cmp.reason}{need}")
    if meta.get("sweep"):
        warnings = [f"{meta['sweep']['name']}={row['sweep_value']}: {w}" for w in warnings]
    row["warnings"] = warnings


def decisive(row: dict[str, Any]) -> bool:
    """True when every comparison of the row is faster, slower or equivalent — or has no
    usable round at all (a variant that fails every run: more rounds would not help)."""
    return all(c["verdict"] in DECISIVE or c["n"] == 0 for c in row["comparisons"].values())


def _measurements_json(runs: Sequence[Measurement]) -> list[dict[str, Any]]:
    return [m.to_dict() for m in runs]


# ---------------------------------------------------------------- the experiment


def run_compare(
    arms: Sequence[Arm],
    settings: CompareSettings,
    *,
    make_variants: Callable[[tuple[str, Any] | None], list[Variant]],
    kind: str,
    sweep: tuple[str, list[str]] | None = None,
    spec: dict[str, Any] | None = None,
    spec_text: str | None = None,
    metric_unit: str | None = None,
    on_run: Callable[[int, str, Measurement], None] | None = None,
    on_row: Callable[[dict[str, Any]], None] | None = None,
    on_look: Callable[[Look, dict[str, Any]], None] | None = None,
    rejudge: Callable[[dict[str, Any], InterleavedResult], None] | None = None,
) -> dict[str, Any]:
    """Run the whole comparison (every sweep value) and return the ``hone-compare/2`` dict.

    ``make_variants(sweep_value)`` binds the arms to one sweep value (None without a sweep).
    ``rejudge(meta, result)``, before each analysis, may move ``meta``'s metric, goal and unit
    to another figure every run has (all rounds are analysed again from the raw runs).
    The caller is responsible for restoring knobs (it owns the Configurator)."""
    settings.experiment(settings.seed).check()
    meta: dict[str, Any] = {
        "format": COMPARE_FORMAT,
        "hone_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "command_line": sys.argv[:],
        "kind": kind,
        "spec": spec,
        "metric": settings.metric,
        "metric_reason": with_counter("chosen with --metric", settings.metric) if settings.metric else None,
        "unit": metric_unit,
        "goal": settings.goal or "minimize",
        "threshold": settings.threshold,
        "alpha": settings.alpha,
        "cv_warn": settings.cv_warn,
        "rounds": settings.rounds,
        "max_rounds": settings.max_rounds,
        "max_time": settings.max_time,
        "alpha_spending": "Lan-DeMets, Pocock type: alpha * ln(1 + (e - 1) * t)",
        "warmup": settings.warmup,
        "seed": settings.seed,
        "n_resamples": settings.n_resamples,
        "estimator": settings.estimator,
        "pin": settings.pin,
        "no_aslr": settings.no_aslr,
        "shell": settings.shell,
        "variants": [{"name": a.name, "description": a.description, "command": a.command,
                      "knobs": {k: v for k, v in a.knobs.items()}, "prepare": a.prepare,
                      "cleanup": a.cleanup} for a in arms],
        "reference": arms[0].name,
        "sweep": {"name": sweep[0], "values": sweep[1]} if sweep else None,
        "fingerprint": fingerprint(spec_text, tools=tuple(
            t for t, used in (("taskset", settings.pin), ("setarch", settings.no_aslr)) if used)),
        "rows": [],
        "warnings": [],
    }
    values: list[str | None] = list(sweep[1]) if sweep else [None]
    # the CPU share before the runs too: a burst of other work while one is measured must
    # not make sleeping commands look CPU-bound
    avail_before = _cpu_share_now() if kind == "commands" and meta["metric"] is None else 0.0
    for i, value in enumerate(values):
        bound = (sweep[0], value) if sweep and value is not None else None
        variants = make_variants(bound)
        box: dict[str, Any] = {}

        def analyse(result: InterleavedResult, alpha: float, value: str | None = value,
                    box: dict[str, Any] = box) -> bool:
            if meta["metric"] is None:
                if kind == "commands":
                    sample = [m for runs in result.warmup_runs.values() for m in runs] or [
                        m for runs in result.runs.values() for m in runs]
                    avail = max(avail_before, _cpu_share_now())
                    meta["metric"], meta["metric_reason"] = choose_command_metric(sample, avail)
                else:
                    meta["metric"], meta["metric_reason"] = "cpu_time", "default"
            if rejudge is not None:
                rejudge(meta, result)
            if meta["unit"] is None:
                meta["unit"] = BUILTIN[meta["metric"]].unit if meta["metric"] in BUILTIN else ""
            row = _row(value, result)
            analyse_row(row, meta, alpha)
            box["row"] = row
            return decisive(row)

        def look(lk: Look, result: InterleavedResult, box: dict[str, Any] = box) -> None:
            if on_look:
                on_look(lk, box["row"])

        experiment = run_experiment(variants, settings.experiment(settings.seed + i), analyse=analyse,
                                    on_run=on_run, on_look=look)
        row = box["row"]
        row["looks"] = [lk.to_dict() for lk in experiment.looks]
        row["stopped"] = experiment.stopped
        row["planned_rounds"] = experiment.planned_rounds
        meta["rows"].append(row)
        if on_row:
            on_row(row)
    meta["fingerprint_end"] = {"loadavg": list(os.getloadavg()), "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    meta["warnings"] = machine_warnings(meta)
    return meta


def _row(value: str | None, result: InterleavedResult) -> dict[str, Any]:
    return {
        "sweep_value": value,
        "order": result.order,
        "warmup_order": result.warmup_order,
        "seed": result.seed,
        "variants": [
            {"name": name, "runs": _measurements_json(runs),
             "warmup_runs": _measurements_json(result.warmup_runs.get(name, []))}
            for name, runs in result.runs.items()
        ],
    }


def machine_warnings(meta: dict[str, Any]) -> list[str]:
    """Load on the machine at start or end (1-minute load average above half the CPUs)."""
    cpus = meta["fingerprint"].get("cpus") or 1
    out = []
    start = meta["fingerprint"].get("loadavg", [0])[0]
    end = meta.get("fingerprint_end", {}).get("loadavg", [0])[0]
    worst = max(start, end)
    if worst > 0.5 * cpus:
        out.append(f"machine load: 1-min load average {start:.2f} at start, {end:.2f} at end on {cpus} CPUs — "
                   "other work shares this machine; interleaving protects the ratios, but expect more noise")
    return out
