"""Run a doctor experiment on the A/B engine (:mod:`hone.experiment`): interleaved rounds
and paired verdicts of every variant against the first (estimator ``auto``).

The metric is the target's: a built-in time (cpu_time, wall_time, …, :mod:`hone.core.metrics`) or
a spec metric read from the command's output (throughput of a fixed-time program such as fcopy).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hone.core.errors import BenchmarkError, HoneError
from hone.core.metrics import of_run
from hone.core.process import run_process
from hone.diagnose.rules.base import Experiment, ExperimentVariant, Target
from hone.experiment import ExperimentSettings, compare_arms, run_experiment
from hone.run.benchmark import Measurement
from hone.run.schedule import InterleavedResult, Variant
from hone.stats.paired import PairedComparison
from hone.stats.summary import Summary, summarize

#: Each comparison's error rate (a fixed number of rounds: one look).
ALPHA = 0.05


@dataclass
class DoctorExperimentResult:
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
                    "p_value": c.p_value, "verdict": c.verdict, "mde_pct": c.mde_pct, "improved": c.improved,
                    "reason": c.reason, "rounds_needed": c.rounds_needed, "estimator": c.estimator,
                    "alpha": c.alpha}
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
    """The target's metric of one run: extracted from its output, else built in."""
    return of_run(m, target.metric)


def compare_variants(runs: dict[str, list[Measurement]], reference: str, target: Target, *, threshold: float,
                     alpha: float = ALPHA, seed: int = 0) -> dict[str, PairedComparison]:
    """Every variant against ``reference`` on the target's metric, round by round at ``alpha``
    (a round where either run failed is dropped); a variant with fewer than two usable rounds
    has no comparison (its failures say why)."""
    def figure(m: Measurement) -> float:
        return metric_of(m, target)

    comps = compare_arms(runs, reference, figure, goal=target.goal,  # type: ignore[arg-type]
                         threshold=threshold, alpha=alpha, seed=seed)
    return {name: c for name, c in comps.items() if c.n >= 2}


def run_doctor_experiment(experiment: Experiment, target: Target, *, rounds: int = 10, warmup: int = 1,
                          seed: int = 0, threshold: float = 0.01,
                          on_run: Callable[[int, str, Measurement], None] | None = None) -> DoctorExperimentResult:
    """Run every variant ``rounds`` times interleaved on the A/B engine; compare each with the first.

    Variant ``prepare``/``cleanup`` run once around the whole experiment (a tmpfs
    directory, for instance), ``cleanup`` also on failure.
    """
    if len(experiment.variants) < 2:
        raise HoneError(f"experiment {experiment.title!r} needs at least two variants")
    reference = experiment.variants[0].name
    settings = ExperimentSettings(rounds=rounds, warmup=warmup, seed=seed, threshold=threshold, alpha=ALPHA,
                                  estimator="auto")
    comparisons: dict[str, PairedComparison] = {}

    def analyse(result: InterleavedResult, alpha: float) -> bool:
        comparisons.clear()
        comparisons.update(compare_variants(result.runs, reference, target, threshold=threshold, alpha=alpha,
                                            seed=seed))
        return all(c.decisive for c in comparisons.values())

    prepared: list[ExperimentVariant] = []
    try:
        for v in experiment.variants:
            if v.prepare:
                v.prepare()
            prepared.append(v)
        schedule = [Variant(v.name, _measure(v, target)) for v in experiment.variants]
        result = run_experiment(schedule, settings, analyse=analyse, on_run=on_run).runs
    finally:
        for v in prepared:
            if v.cleanup:
                v.cleanup()
    summaries: dict[str, Summary] = {}
    sys_share: dict[str, float] = {}
    failures: dict[str, str] = {}
    for name, runs in result.runs.items():
        bad = [m for m in runs if not m.ok]
        if bad:
            failures[name] = f"{len(bad)} of {len(runs)} runs failed: {bad[0].error}"
        ok = [x for x in (metric_of(m, target) for m in runs if m.ok) if x == x]
        if ok:
            summaries[name] = summarize(ok)
        cpu = sum(m.cpu_s for m in runs if m.ok)
        sys_share[name] = sum(m.sys_s for m in runs if m.ok) / cpu * 100 if cpu > 0 else float("nan")
    return DoctorExperimentResult(experiment, target.metric, target.goal, target.unit, len(result.order), result.seed,
                            summaries, sys_share, dict(comparisons), failures)
