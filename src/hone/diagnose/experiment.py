"""Run a doctor experiment: interleaved rounds (run.schedule) and paired verdicts
(stats.paired) of every variant against the first.

The metric is the target's: a built-in time (cpu_time, wall_time, …) or a spec metric
read from the command's output (throughput of a fixed-time program such as fcopy).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hone.diagnose.rules.base import Experiment, ExperimentVariant, Target
from hone.errors import BenchmarkError, HoneError
from hone.run.benchmark import Measurement
from hone.run.process import run_process
from hone.run.schedule import Variant, run_interleaved
from hone.stats.paired import PairedComparison, compare_paired
from hone.stats.summary import Summary, summarize

BUILTIN = {
    "cpu_time": lambda m: m.cpu_s,
    "wall_time": lambda m: m.wall_s,
    "user_time": lambda m: m.user_s,
    "sys_time": lambda m: m.sys_s,
}


@dataclass
class ExperimentResult:
    """Per-variant summaries of the metric and each candidate's comparison with the first."""

    experiment: Experiment
    metric: str
    goal: str
    unit: str
    rounds: int
    seed: int
    summaries: dict[str, Summary]
    sys_share: dict[str, float]
    comparisons: dict[str, PairedComparison] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.experiment.title,
            "hypothesis": self.experiment.hypothesis,
            "metric": self.metric, "goal": self.goal, "unit": self.unit, "rounds": self.rounds, "seed": self.seed,
            "variants": [{"name": v.name, "argv": v.argv, "env": v.env} for v in self.experiment.variants],
            "summaries": {k: s.to_dict() for k, s in self.summaries.items()},
            "sys_share_pct": self.sys_share,
            "comparisons": {
                k: {"n": c.n, "ratio": c.ratio, "change_pct": c.change_pct, "ci_pct": list(c.ci_pct),
                    "p_value": c.p_value, "verdict": c.verdict, "mde_pct": c.mde_pct, "improved": c.improved}
                for k, c in self.comparisons.items()
            },
            "failures": self.failures,
        }


def _measure(variant: ExperimentVariant, target: Target) -> Callable[[], Measurement]:
    env = {**os.environ, **target.env, **variant.env}
    cwd = variant.cwd or target.cwd

    def run() -> Measurement:
        res = run_process(variant.argv, timeout=target.timeout, env=env, cwd=cwd)
        m = Measurement.from_process(res)
        if not res.ok:
            m.error = res.describe_failure()
            return m
        if target.extract is not None:
            try:
                m.metrics[target.metric] = target.extract(res)
            except BenchmarkError as exc:
                m.error = exc.message
        return m

    return run


def metric_of(m: Measurement, target: Target) -> float:
    if target.metric in BUILTIN:
        return float(BUILTIN[target.metric](m))
    return m.metrics[target.metric]


def run_experiment(experiment: Experiment, target: Target, *, rounds: int = 10, warmup: int = 1, seed: int = 0,
                   threshold: float = 0.01,
                   on_run: Callable[[int, str, Measurement], None] | None = None) -> ExperimentResult:
    """Run every variant ``rounds`` times interleaved; compare each with the first.

    Variant ``prepare``/``cleanup`` run once around the whole experiment (a tmpfs
    directory, for instance), ``cleanup`` also on failure.
    """
    if len(experiment.variants) < 2:
        raise HoneError(f"experiment {experiment.title!r} needs at least two variants")
    prepared: list[ExperimentVariant] = []
    try:
        for v in experiment.variants:
            if v.prepare:
                v.prepare()
            prepared.append(v)
        schedule = [Variant(v.name, _measure(v, target)) for v in experiment.variants]
        result = run_interleaved(schedule, rounds=rounds, warmup=warmup, seed=seed, on_run=on_run)
    finally:
        for v in prepared:
            if v.cleanup:
                v.cleanup()
    summaries: dict[str, Summary] = {}
    sys_share: dict[str, float] = {}
    failures: dict[str, str] = {}
    values: dict[str, list[float]] = {}
    for name, runs in result.runs.items():
        bad = [m for m in runs if not m.ok]
        if bad:
            failures[name] = f"{len(bad)} of {len(runs)} runs failed: {bad[0].error}"
        # Paired by round: a failed run drops the round for every variant (NaN is skipped below).
        values[name] = [metric_of(m, target) if m.ok else float("nan") for m in runs]
        ok = [v for v in values[name] if v == v]
        if ok:
            summaries[name] = summarize(ok)
        cpu = sum(m.cpu_s for m in runs if m.ok)
        sys_share[name] = sum(m.sys_s for m in runs if m.ok) / cpu * 100 if cpu > 0 else float("nan")
    out = ExperimentResult(experiment, target.metric, target.goal, target.unit, rounds, result.seed, summaries,
                           sys_share, failures=failures)
    reference = experiment.variants[0].name
    for v in experiment.variants[1:]:
        pairs = [(a, b) for a, b in zip(values[reference], values[v.name], strict=True) if a == a and b == b]
        if len(pairs) < 2:
            continue
        out.comparisons[v.name] = compare_paired([a for a, _ in pairs], [b for _, b in pairs],
                                                 goal=target.goal,  # type: ignore[arg-type]
                                                 threshold=threshold, seed=seed)
    return out
