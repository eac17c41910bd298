"""Every variant against the default, per evaluate scenario: interleaved rounds of CPU
time on the A/B engine (:func:`hone.experiment.run_experiment`, ``--rounds`` rounds, the
``auto`` estimator), beside deterministic cachegrind counts; a gain is called only beyond the
layout-noise floor.

The noise floor: defaults rebuilt with alignment perturbations are measured like any
variant; the largest |change| among them (in %) is what layout alone does to this
program here. A 16-byte shift alone can move a loop's time by 1.7× (docs/machine-facts.md), so
a variant whose gain stays within that floor is reported as "within noise floor", not
"faster" (docs/decisions/0016-layout-noise-floor.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hone.build.correctness import Reference
from hone.build.counts import Counts
from hone.build.scenario import Scenario, run_scenario
from hone.build.service import SERVER_CPU, SERVER_CPU_PER_OP, ServiceLoad
from hone.core.errors import BenchmarkError
from hone.core.metrics import value
from hone.experiment import ExperimentSettings, compare_arms, run_experiment
from hone.run.benchmark import Measurement
from hone.run.metrics import extract
from hone.run.schedule import InterleavedResult, Variant
from hone.spec.models import Metric
from hone.stats.paired import PairedComparison

NOISE_PREFIX = "noise-"
DEFAULT = "default"
#: Each comparison's error rate (a fixed number of rounds: one look).
ALPHA = 0.05


def cpu_time(m: Measurement) -> float:
    """The figure compared: the run's CPU time (user + system, :mod:`hone.core.metrics`)."""
    return value(m, "cpu_time")


@dataclass
class ScenarioTiming:
    """Every binary's runs on one evaluate scenario (index = round) and each one's comparison
    with the default at the experiment's final α."""

    scenario: str
    runs: dict[str, list[Measurement]]
    comparisons: dict[str, PairedComparison]
    failures: dict[str, list[str]] = field(default_factory=dict)

    @property
    def cpu_s(self) -> dict[str, list[float]]:
        """CPU seconds per round for each binary (NaN for a failed run)."""
        return {n: [cpu_time(m) if m.ok else math.nan for m in runs] for n, runs in self.runs.items()}


def compare_to_default(runs: dict[str, list[Measurement]], *, threshold: float, alpha: float = ALPHA,
                       seed: int = 0) -> dict[str, PairedComparison]:
    """Every binary's CPU time against the default's, round by round, at ``alpha``."""
    return compare_arms(runs, DEFAULT, cpu_time, goal="minimize", threshold=threshold, alpha=alpha, seed=seed)


def judge_timing(scenario: str, runs: dict[str, list[Measurement]], *, threshold: float, alpha: float = ALPHA,
                 seed: int = 0) -> ScenarioTiming:
    """A :class:`ScenarioTiming` of measured ``runs``: comparisons and failed runs."""
    fails = {n: [m.error or "" for m in rs if not m.ok] for n, rs in runs.items()}
    return ScenarioTiming(scenario, runs, compare_to_default(runs, threshold=threshold, alpha=alpha, seed=seed),
                          {k: v for k, v in fails.items() if v})


def time_scenario(scenario: Scenario, binaries: dict[str, Path], reference: Reference, *, rounds: int,
                  warmup: int, seed: int, timeout: float, cwd: Path | None, threshold: float = 0.01,
                  on_run: Callable[[int, str, Measurement], None] | None = None) -> ScenarioTiming:
    """Interleave every binary on ``scenario`` for ``rounds`` rounds (+ ``warmup``) on the
    A/B engine. A run whose exit code differs from the default's counts as failed (NaN)."""

    def runner(binary: Path) -> Callable[[], Measurement]:
        def _run() -> Measurement:
            res = run_scenario(scenario, binary, timeout=timeout, cwd=cwd)
            m = Measurement.from_process(res)
            if res.timed_out or res.returncode != reference.returncode:
                m.error = res.describe_failure()
            return m
        return _run

    variants = [Variant(name, runner(path)) for name, path in binaries.items()]
    judged: dict[str, ScenarioTiming] = {}

    def analyse(result: InterleavedResult, alpha: float) -> bool:
        judged["last"] = judge_timing(scenario.name, result.runs, threshold=threshold, alpha=alpha, seed=seed)
        return all(c.decisive for n, c in judged["last"].comparisons.items() if not n.startswith(NOISE_PREFIX))

    run_experiment(variants, ExperimentSettings(rounds=rounds, warmup=warmup, seed=seed, threshold=threshold,
                                                alpha=ALPHA, estimator="auto"), analyse=analyse, on_run=on_run)
    return judged["last"]


@dataclass
class ServiceTiming:
    """Every binary's runs as the service on one evaluate scenario (index = round) and, per
    figure (the spec's metrics, then :data:`SERVER_CPU` when every run has it), each
    binary's comparison with the default."""

    scenario: str
    runs: dict[str, list[Measurement]]
    comparisons: dict[str, dict[str, PairedComparison]]
    goals: dict[str, str]
    failures: dict[str, list[str]] = field(default_factory=dict)


def _figure(name: str) -> Callable[[Measurement], float]:
    return lambda m: m.metrics.get(name, math.nan)


def judge_service(scenario: str, runs: dict[str, list[Measurement]], metrics: list[Metric], *, threshold: float,
                  alpha: float = ALPHA, seed: int = 0) -> ServiceTiming:
    """Compare every binary with the default on each metric (its goal) and on the server's
    CPU time (minimize) when every successful run has it."""
    goals = {m.name: m.goal or "maximize" for m in metrics}
    ok = [m for rs in runs.values() for m in rs if m.ok]
    for figure in (SERVER_CPU_PER_OP, SERVER_CPU):
        if ok and all(figure in m.metrics for m in ok):
            goals[figure] = "minimize"
    comps = {name: compare_arms(runs, DEFAULT, _figure(name), goal=goal,  # type: ignore[arg-type]
                                threshold=threshold, alpha=alpha, seed=seed)
             for name, goal in goals.items()}
    fails = {n: [m.error or "" for m in rs if not m.ok] for n, rs in runs.items()}
    return ServiceTiming(scenario, runs, comps, goals, {k: v for k, v in fails.items() if v})


def time_service_scenario(scenario: Scenario, binaries: dict[str, Path], reference: Reference, service: ServiceLoad,
                          *, rounds: int, warmup: int, seed: int, timeout: float, cwd: Path | None,
                          threshold: float = 0.01, cpu_per: str | None = None) -> ServiceTiming:
    """One arm per binary on the A/B engine: each run starts that binary as the service,
    runs ``scenario`` as the load, extracts the spec's metrics from its output, reads the
    server's CPU time and stops it. A run whose load fails, whose server dies, or whose
    metric is missing counts as failed (NaN). ``cpu_per``: a throughput metric (per second);
    the server's CPU µs per unit of it (``server_cpu_us_per_op``: CPU ÷ (metric × the load's
    wall seconds)) is judged too — under a fixed-duration load a faster server spends more CPU."""
    metrics = service.metrics

    def runner(binary: Path) -> Callable[[], Measurement]:
        def _run() -> Measurement:
            srun = service.run(scenario, binary, timeout=timeout, cwd=cwd)
            res = srun.result
            m = Measurement.from_process(res)
            if srun.died:
                m.error = srun.died
            elif res.timed_out or res.returncode != reference.returncode:
                m.error = res.describe_failure()
            else:
                try:
                    for metric in metrics:
                        m.metrics[metric.name] = extract(metric, res)
                except BenchmarkError as exc:
                    m.error = exc.message
            if srun.server_cpu_s is not None:
                m.metrics[SERVER_CPU] = srun.server_cpu_s
                work = m.metrics.get(cpu_per, 0.0) * res.wall_s if cpu_per else 0.0
                if work > 0:
                    m.metrics[SERVER_CPU_PER_OP] = srun.server_cpu_s * 1e6 / work
            return m
        return _run

    primary = metrics[0].name
    variants = [Variant(name, runner(path)) for name, path in binaries.items()]
    judged: dict[str, ServiceTiming] = {}

    def analyse(result: InterleavedResult, alpha: float) -> bool:
        judged["last"] = judge_service(scenario.name, result.runs, metrics, threshold=threshold, alpha=alpha,
                                       seed=seed)
        return all(c.decisive for n, c in judged["last"].comparisons[primary].items()
                   if not n.startswith(NOISE_PREFIX))

    run_experiment(variants, ExperimentSettings(rounds=rounds, warmup=warmup, seed=seed, threshold=threshold,
                                                alpha=ALPHA, estimator="auto"), analyse=analyse)
    return judged["last"]


def _values(values: list[float]) -> list[float | None]:
    """Per-round values as JSON (a failed run is null): the seed-000 table's runs."""
    return [v if math.isfinite(v) else None for v in values]


def _comparison_dict(comp: PairedComparison | None, values: list[float], goal: str) -> dict[str, Any]:
    out: dict[str, Any] = {"goal": goal, "median": _median(values), "values": _values(values)}
    if comp is None:
        out.update(ratio=1.0, change_pct=0.0, verdict="reference")
    else:
        out.update(ratio=comp.ratio, change_pct=comp.change_pct, ci_pct=list(comp.ci_pct), p_value=comp.p_value,
                   n=comp.n, verdict=comp.verdict, reason=comp.reason, rounds_needed=comp.rounds_needed)
    return out


def service_rows(timing: ServiceTiming, binaries: dict[str, Path], modes: dict[str, str]
                 ) -> tuple[list[dict[str, Any]], float]:
    """One JSON row per variant of a service scenario and the scenario's noise floor in %
    (on the first metric). ``verdict`` is the first metric's (floored, "faster" = better
    along its goal); the ``time`` fields are the server's CPU time; ``metrics`` has every
    figure's median, ratio (variant / default), CI and verdict."""
    primary = next(iter(timing.goals))
    floor = noise_floor_pct(timing.comparisons[primary])
    cpu_comps = timing.comparisons.get(SERVER_CPU, {})
    rows: list[dict[str, Any]] = []
    for name, path in binaries.items():
        runs = timing.runs[name]
        figures = {fig: _comparison_dict(timing.comparisons[fig].get(name), [
            m.metrics.get(fig, math.nan) if m.ok else math.nan for m in runs], goal)
            for fig, goal in timing.goals.items()}
        cpu = [m.metrics.get(SERVER_CPU, math.nan) if m.ok else math.nan for m in runs]
        row: dict[str, Any] = {
            "variant": name, "mode": modes.get(name, name), "binary": str(path), "scenario": timing.scenario,
            "cpu_s_median": _median(cpu), "cpu_s_values": _values(cpu), "instructions": None,
            "instructions_ratio": None, "branch_mispredicts_ratio": None, "cache_misses_ratio": None,
            "noise_floor_pct": floor,
            "failed_runs": len(timing.failures.get(name, [])), "metric": primary,
            "metrics": {k: v for k, v in figures.items() if k != SERVER_CPU},
        }
        if name == DEFAULT:
            row.update(time_ratio=1.0 if cpu_comps else None, time_ci=[1.0, 1.0] if cpu_comps else None,
                       change_pct=0.0, p_value=None, n=len(runs), verdict="reference", metric_score=1.0)
        else:
            comp = timing.comparisons[primary][name]
            c = cpu_comps.get(name)
            score = comp.ratio if timing.goals[primary] == "minimize" else (1 / comp.ratio if comp.ratio else None)
            row.update(
                time_ratio=c.ratio if c else None,
                time_ci=[1 + c.ci_pct[0] / 100, 1 + c.ci_pct[1] / 100] if c else None,
                change_pct=c.change_pct if c else None, p_value=c.p_value if c else None, n=comp.n,
                cpu_verdict=c.verdict if c else None,
                verdict="noise probe" if name.startswith(NOISE_PREFIX) else verdict_with_floor(comp, floor),
                paired_verdict=comp.verdict, ci_pct=list(comp.ci_pct), reason=comp.reason,
                rounds_needed=comp.rounds_needed, estimator=comp.estimator, alpha=comp.alpha,
                metric_score=score,
            )
        rows.append(row)
    return rows, floor


def noise_floor_pct(comparisons: dict[str, PairedComparison]) -> float:
    """Largest |change| in % among the noise probes (0 without probes)."""
    probes = [abs(c.change_pct) for n, c in comparisons.items() if n.startswith(NOISE_PREFIX)
              and math.isfinite(c.change_pct)]
    return max(probes, default=0.0)


def verdict_with_floor(comp: PairedComparison, floor_pct: float) -> str:
    """The paired verdict, except "within noise floor" for a faster/slower change no larger
    than the floor and for an inconclusive one whose whole CI lies within ±floor (any change
    it leaves open is one layout alone makes)."""
    if comp.verdict in ("faster", "slower") and abs(comp.change_pct) <= floor_pct:
        return "within noise floor"
    lo, hi = comp.ci_pct
    if comp.verdict == "inconclusive" and floor_pct > 0 and -floor_pct <= lo and hi <= floor_pct:
        return "within noise floor"
    return comp.verdict


def ratio(value: float | None, reference: float | None) -> float | None:
    if value is None or reference is None or reference == 0:
        return None
    return value / reference


def scenario_rows(timing: ScenarioTiming, counts: dict[str, Counts | None], binaries: dict[str, Path],
                  modes: dict[str, str]) -> tuple[list[dict[str, Any]], float]:
    """One JSON row per variant for this scenario (ratios are variant / default) and
    the scenario's noise floor in %."""
    cpu = timing.cpu_s
    ref = cpu[DEFAULT]
    comps = timing.comparisons
    floor = noise_floor_pct(comps)
    ref_counts = counts.get("default")
    rows: list[dict[str, Any]] = []
    for name, path in binaries.items():
        c = counts.get(name)
        row: dict[str, Any] = {
            "variant": name,
            "mode": modes.get(name, name),
            "binary": str(path),
            "scenario": timing.scenario,
            "cpu_s_median": _median(cpu[name]),
            "cpu_s_values": _values(cpu[name]),
            "instructions": c.instructions if c else None,
            "instructions_ratio": ratio(c.instructions, ref_counts.instructions) if c and ref_counts else None,
            "branch_mispredicts_ratio": (ratio(c.branch_mispredicts, ref_counts.branch_mispredicts)
                                         if c and ref_counts else None),
            "cache_misses_ratio": ratio(c.cache_misses, ref_counts.cache_misses) if c and ref_counts else None,
            "noise_floor_pct": floor,
            "failed_runs": len(timing.failures.get(name, [])),
        }
        if name == DEFAULT:
            row.update(time_ratio=1.0, time_ci=[1.0, 1.0], change_pct=0.0, p_value=None, n=len(ref),
                       verdict="reference")
        else:
            comp = comps[name]
            row.update(
                time_ratio=comp.ratio,
                time_ci=[1 + comp.ci_pct[0] / 100, 1 + comp.ci_pct[1] / 100],
                change_pct=comp.change_pct,
                ci_pct=list(comp.ci_pct),
                p_value=comp.p_value,
                n=comp.n,
                mde_pct=comp.mde_pct,
                verdict="noise probe" if name.startswith(NOISE_PREFIX) else verdict_with_floor(comp, floor),
                paired_verdict=comp.verdict,
                reason=comp.reason,
                rounds_needed=comp.rounds_needed,
                estimator=comp.estimator,
                alpha=comp.alpha,
            )
        rows.append(row)
    return rows, floor


def _median(values: list[float]) -> float | None:
    good = sorted(v for v in values if math.isfinite(v))
    if not good:
        return None
    mid = len(good) // 2
    return good[mid] if len(good) % 2 else (good[mid - 1] + good[mid]) / 2


def geomean(values: list[float]) -> float | None:
    good = [v for v in values if v is not None and math.isfinite(v) and v > 0]
    if not good or len(good) != len(values):
        return None
    return math.exp(sum(math.log(v) for v in good) / len(good))


def pick_best(rows: list[dict[str, Any]], variants: list[str], rank: str = "time_ratio",
              figure: str = "CPU-time") -> dict[str, Any]:
    """The variant to use: faster than the default beyond the noise floor on at least one
    evaluate scenario, slower on none, lowest geometric-mean time ratio. Also names the
    variant with the lowest instruction count (deterministic), whatever time says.

    "Slower on none" is not "shown no slower everywhere": a scenario where the pick's
    comparison is inconclusive could hide a loss of the size its CI leaves open. The pick
    then says so (``settled`` false, ``unsettled`` with each such scenario's range and the
    rounds that would settle it) instead of counting that scenario as no loss.

    ``rank``: the row field ranked on, lower is better (services: ``metric_score``, the first
    metric's ratio turned so that lower is better); ``figure`` names it in the reason."""
    by_variant: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    for r in rows:
        if r["variant"] in by_variant:
            by_variant[r["variant"]].append(r)
    scored = []
    for name, rs in by_variant.items():
        if not rs:
            continue
        t = geomean([r[rank] for r in rs])
        i = geomean([r["instructions_ratio"] for r in rs]) if all(r["instructions_ratio"] for r in rs) else None
        verdicts = [r["verdict"] for r in rs]
        eligible = "faster" in verdicts and "slower" not in verdicts
        scored.append((name, t, i, eligible))
    winners = sorted((s for s in scored if s[3] and s[1] is not None), key=lambda s: s[1])
    by_instr = sorted((s for s in scored if s[2] is not None), key=lambda s: s[2])
    out: dict[str, Any] = {"variant": None, "time_ratio_geomean": None, "instructions_ratio_geomean": None,
                           "reason": "no variant was faster than the default beyond the layout-noise floor"
                                     " on any evaluate scenario without being slower on another"}
    if winners:
        name, t, i, _ = winners[0]
        open_rows = [r for r in by_variant[name] if r["verdict"] == "inconclusive"]
        unsettled = [{"scenario": r["scenario"], "ci_pct": r.get("ci_pct"), "reason": r.get("reason", ""),
                      "rounds_needed": r.get("rounds_needed")} for r in open_rows]
        reason = f"lowest geometric-mean {figure} ratio among variants faster beyond the noise floor"
        if unsettled:
            reason += "; not shown no slower on " + "; ".join(_open_text(u) for u in unsettled)
        out = {"variant": name, "time_ratio_geomean": t, "instructions_ratio_geomean": i, "reason": reason,
               "settled": not unsettled, "unsettled": unsettled}
    if by_instr:
        out["fewest_instructions"] = {"variant": by_instr[0][0], "instructions_ratio_geomean": by_instr[0][2]}
    return out


def _open_text(unsettled: dict[str, Any]) -> str:
    ci = unsettled.get("ci_pct")
    span = (f"could be anywhere from {ci[0]:+.1f}% to {ci[1]:+.1f}%" if ci and all(math.isfinite(x) for x in ci)
            else "could not be bounded")
    need = f", about {unsettled['rounds_needed']} rounds would settle it" if unsettled.get("rounds_needed") else ""
    return f"{unsettled['scenario']} (inconclusive: {span}{need})"
