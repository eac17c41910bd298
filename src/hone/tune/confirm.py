"""Confirmation: re-measure the top candidates against the baseline, interleaved.

Why: the best *observed* trial of a noisy search is biased upwards (it won partly by luck
— the winner's curse); A-Tune reports and applies it anyway. hone re-measures the top-k
distinct configurations and the baseline in interleaved, randomly ordered rounds
(:func:`hone.run.schedule.run_interleaved`) and compares each candidate with the baseline
round by round (:func:`hone.stats.paired.compare_paired`). Only a candidate whose verdict is
"faster" (= better along the goal) can be recommended; if there is none, the answer is "keep
the current configuration". Among several, the sampler's model decides when it has one
(hone's GP: its posterior mean over the search trials *and* the confirmation rounds, see
:func:`model_observations`), else the best mean change of the confirmation rounds.

Why the model: six rounds cannot tell candidates 1–2% apart under a few % of noise (the
standard error of a 6-round mean is noise/√6), while the model pools every measurement near
each candidate. Measured in ``benchmarks/tuning`` (confirm_model.py; 5% noise, the top 3 ×
6 rounds, 40 seeds, paired on the same searches and re-measurements; results.md,
"Recommendation by the model"): true regret sqlite 0.44 → 0.35%, zlib 0.66 → 0.52%, sparse
2.52 → 2.38%; worse where the model is confidently wrong (the ellipsoid's stuck runs, 6.43 →
6.78%).

Which candidates: the ``top_k`` best *observed*, except that in noisy searches of spaces too
large to enumerate the last of them is the configuration hone's GP ranks first among the rest
(:meth:`HoneGPSampler.model_candidate`): there the best observed are single lucky measurements
scattered around the optimum (measured there: the ellipsoid's recommendation 0.95 → 0.72% off,
sparse-8of2 2.58 → 2.43%, rosenbrock-int 81.75 → 83.10%; 40 seeds, 5% noise).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from hone.run.benchmark import Measurement, run_once
from hone.run.configure import BenchContext, Configurator
from hone.run.schedule import InterleavedResult, Variant, run_interleaved
from hone.spec.loader import LoadedSpec
from hone.spec.models import Scalar
from hone.stats.paired import PairedComparison, compare_paired, min_rounds_for_alpha
from hone.tune.gp import HoneGPSampler
from hone.tune.objective import Objective

BASELINE = "baseline"


@dataclass
class Candidate:
    """A configuration worth confirming: the trial it came from and its knob values."""

    name: str
    trial_number: int
    config: dict[str, Scalar]
    search_means: dict[str, float]


@dataclass
class Confirmation:
    """The verdict on one candidate and the per-metric means of its confirmation rounds."""

    candidate: Candidate
    comparison: PairedComparison
    means: dict[str, float] = field(default_factory=dict)
    baseline_means: dict[str, float] = field(default_factory=dict)
    metric_comparisons: dict[str, PairedComparison] = field(default_factory=dict)
    values: list[float] = field(default_factory=list)  # objective value of each successful round (study scale)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.candidate.name,
            "trial": self.candidate.trial_number,
            "config": self.candidate.config,
            "comparison": self.comparison.to_dict(),
            "means": self.means,
            "baseline_means": self.baseline_means,
            "metrics": {k: v.to_dict() for k, v in self.metric_comparisons.items()},
        }


def pick_candidates(study: optuna.Study, objective: Objective, top_k: int,
                    model: HoneGPSampler | None = None) -> list[Candidate]:
    """The ``top_k`` best feasible completed trials with distinct configurations.

    Single objective: by objective value; with hone's GP as ``model``, the last of them is
    the configuration the model ranks first among the others when it offers one (noisy
    searches of spaces too large to enumerate, :meth:`HoneGPSampler.model_candidate`).
    Pareto: the front, ordered by the confirmation figure (weighted geometric mean of the
    metrics)."""
    trials = [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
              if all(c <= 0 for c in t.user_attrs.get("hone_constraints", []))]
    if objective.mode == "pareto":
        front = {t.number for t in study.best_trials}
        trials = [t for t in trials if t.number in front]
        trials.sort(key=lambda t: _figure_key(objective, t))
    else:
        sign = -1.0 if objective.directions[0].name == "MAXIMIZE" else 1.0
        trials.sort(key=lambda t: sign * float(t.values[0]))
    out: list[Candidate] = []
    seen: set[str] = set()
    for t in trials:
        key = _config_key(t.user_attrs.get("config", {}))
        if key in seen:
            continue
        seen.add(key)
        out.append(_candidate(t))
        if len(out) >= top_k:
            break
    if model is not None and objective.mode != "pareto" and top_k >= 2 and len(out) == top_k:
        taken = {_config_key(c.config) for c in out[:-1]}
        pool = [t for t in trials if _config_key(t.user_attrs.get("config", {})) not in taken]
        alt = model.model_candidate(study, pool)
        if alt is not None:
            out[-1] = _candidate(alt, " (the model's)")
    return out


def _candidate(t: FrozenTrial, note: str = "") -> Candidate:
    return Candidate(f"trial {t.number}{note}", t.number, dict(t.user_attrs.get("config", {})),
                     dict(t.user_attrs.get("means", {})))


def _config_key(config: dict[str, Scalar]) -> str:
    """One string per distinct configuration (a trial's ``config`` user attribute)."""
    return repr(sorted(config.items()))


def _figure_key(objective: Objective, t: FrozenTrial) -> float:
    fig, goal = objective.figure(t.user_attrs.get("means", {}))
    return -fig if goal == "maximize" else fig


def confirm_candidates(
    loaded: LoadedSpec,
    configurator: Configurator,
    objective: Objective,
    candidates: list[Candidate],
    *,
    rounds: int,
    warmup: int = 1,
    seed: int = 0,
    threshold: float = 0.01,
    on_run: Callable[[int, str, Measurement], None] | None = None,
) -> list[Confirmation]:
    """Interleave baseline and candidates for ``rounds`` rounds (at least the number the
    signed-rank test needs for p < 0.05) and compare each candidate with the baseline.
    The baseline arm is the session's starting state (no values: every resource back to
    it), not the values read at the start — a key that was absent is absent again."""
    rounds = max(rounds, min_rounds_for_alpha(0.05))
    arms = {BASELINE: {}} | {c.name: c.config for c in candidates}
    result = measure_arms(loaded, configurator, arms, rounds=rounds, warmup=warmup, seed=seed, on_run=on_run)
    base_runs = result.runs[BASELINE]
    out = []
    for c in candidates:
        cand_runs = result.runs[c.name]
        comparison, per_metric = compare_runs(objective, base_runs, cand_runs, threshold=threshold, seed=seed)
        values = [objective.values(_means_of(r))[0] for r in cand_runs if r.ok] if objective.mode != "pareto" else []
        out.append(Confirmation(c, comparison, _mean_metrics(cand_runs), _mean_metrics(base_runs), per_metric,
                                values))
    return out


def measure_arms(loaded: LoadedSpec, configurator: Configurator, arms: dict[str, dict[str, Scalar]], *,
                 rounds: int, warmup: int, seed: int,
                 on_run: Callable[[int, str, Measurement], None] | None = None) -> InterleavedResult:
    """Measure named configurations in interleaved, randomly ordered rounds; each run first
    applies its arm (the session's starting state with the arm's values on top)."""
    contexts: dict[str, BenchContext] = {}

    def variant(name: str, config: dict[str, Scalar]) -> Variant:
        def prepare() -> None:
            contexts[name] = configurator.apply(config)

        return Variant(name, run=lambda: run_once(loaded, contexts[name]), prepare=prepare)

    variants = [variant(name, config) for name, config in arms.items()]
    return run_interleaved(variants, rounds=rounds, warmup=warmup, seed=seed, on_run=on_run)


def compare_runs(objective: Objective, reference: list[Measurement], candidate: list[Measurement], *,
                 threshold: float, seed: int) -> tuple[PairedComparison, dict[str, PairedComparison]]:
    """Two arms of one interleaved block compared round by round: on the objective's figure
    (the verdict) and on each scored metric. A round where either run failed is dropped."""
    ref_fig, cand_fig, goal = [], [], "maximize"
    for b, r in zip(reference, candidate, strict=True):
        if b.ok and r.ok:
            fb, goal = objective.figure(_means_of(b))
            fc, _ = objective.figure(_means_of(r))
            ref_fig.append(fb)
            cand_fig.append(fc)
        else:
            ref_fig.append(math.nan)
            cand_fig.append(math.nan)
    comparison = compare_paired(ref_fig, cand_fig, goal=goal, threshold=threshold, seed=seed)  # type: ignore[arg-type]
    per_metric = {}
    for m in objective.metrics:
        ref = [b.metrics.get(m.name, math.nan) if b.ok else math.nan for b in reference]
        cand = [r.metrics.get(m.name, math.nan) if r.ok else math.nan for r in candidate]
        per_metric[m.name] = compare_paired(ref, cand, goal=m.goal or "maximize",  # type: ignore[arg-type]
                                            threshold=threshold, seed=seed)
    return comparison, per_metric


def model_observations(values: list[float], repeats: int) -> list[float]:
    """A candidate's confirmation rounds as observations on a trial's footing: a trial's value
    is the mean of ``repeats`` runs, so consecutive rounds are averaged in len // repeats groups
    of near-equal size (one group at least)."""
    groups = max(1, len(values) // max(1, repeats))
    if not values:
        return []
    edges = [round(i * len(values) / groups) for i in range(groups + 1)]
    return [sum(values[a:b]) / (b - a) for a, b in itertools.pairwise(edges)]


def _means_of(m: Measurement) -> dict[str, float]:
    return {**m.metrics, "cpu_time": m.metrics.get("cpu_time", m.cpu_s),
            "wall_time": m.metrics.get("wall_time", m.wall_s)}


def _mean_metrics(runs: list[Measurement]) -> dict[str, float]:
    ok = [r for r in runs if r.ok]
    if not ok:
        return {}
    return {k: sum(_means_of(r)[k] for r in ok) / len(ok) for k in _means_of(ok[0])}


def recommend(confirmations: list[Confirmation], order: list[int] | None = None) -> Confirmation | None:
    """The confirmed winner among the candidates whose verdict is "faster" (better along the
    goal): the first of them in ``order`` (indices into ``confirmations``, best first — the
    sampler model's ranking) when given, else the largest mean improvement. None means keep
    the current configuration."""
    winners = [c for c in confirmations if c.comparison.improved]
    if not winners:
        return None
    if order is not None:
        rank = {i: k for k, i in enumerate(order)}
        return min(winners, key=lambda c: rank.get(confirmations.index(c), len(rank)))
    goal = winners[0].comparison.goal
    return max(winners, key=lambda c: c.comparison.change_pct if goal == "maximize" else -c.comparison.change_pct)
