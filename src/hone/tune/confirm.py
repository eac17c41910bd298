"""Confirmation: re-measure the top candidates against the baseline, interleaved.

Why: the best *observed* trial of a noisy search is biased upwards (it won partly by luck
— the winner's curse); A-Tune reports and applies it anyway. hone re-measures the top-k
distinct configurations and the baseline in interleaved, randomly ordered rounds on the A/B
engine (:func:`hone.experiment.run_experiment`: ``--confirm`` rounds, fixed) and compares each
candidate with the baseline round by round (:func:`hone.experiment.compare_arms`, estimator
``auto``: a round the host's speed switches wreck cannot carry a verdict). Only a candidate
whose verdict is "faster" (= better along the goal) can be recommended; if there is none, the
answer is "keep the current configuration", with each candidate's verdict in its own words
(:func:`keep_reason`). Among several, the sampler's model decides when it has one
(hone's GP: its posterior mean over the search trials *and* the confirmation rounds, see
:func:`model_observations`), else the best mean change of the confirmation rounds.

Why the model: six rounds cannot tell candidates 1–2% apart under a few % of noise (the
standard error of a 6-round mean is noise/√6), while the model pools every measurement near
each candidate (docs/decisions/0012-model-picks-among-winners.md).

Which candidates: the ``top_k`` best *observed*, except that in noisy searches of spaces too
large to enumerate the last of them is the configuration hone's GP ranks first among the rest
(:meth:`HoneGPSampler.model_candidate`): there the best observed are single lucky measurements
scattered around the optimum (docs/decisions/0013-model-candidate.md).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from hone.core.metrics import figures, means, of_run
from hone.experiment import ExperimentResult, ExperimentSettings, Figure, compare_arms, run_experiment
from hone.run.benchmark import Measurement, run_once
from hone.run.configure import BenchContext, Configurator
from hone.run.schedule import InterleavedResult, Variant
from hone.spec.loader import LoadedSpec
from hone.spec.models import Scalar
from hone.stats.paired import Goal, PairedComparison, min_rounds_for_alpha
from hone.stats.ranksum import compare_identical, compare_runs_unpaired, min_p
from hone.stats.summary import sample_cv
from hone.tune.gp import HoneGPSampler
from hone.tune.objective import Objective

BASELINE = "baseline"
#: The confirmation's and the ablation's error rate (each comparison's, over all its looks).
ALPHA = 0.05
#: The fewest rounds with which their tests can reach p < :data:`ALPHA`.
MIN_ROUNDS = min_rounds_for_alpha(ALPHA)
#: Runs within 1% of each other (their CV) repeat exactly: counted instructions, a simulator, a table.
EXACT_CV = 0.01
#: The pooled confirmation's level for noisy runs: half of ALPHA, so that a step between the
#: baseline's runs before the search and during the confirmation (which pooling them assumes
#: away) leaves a false "better" at most about as likely as ALPHA allows (docs/decisions/0046).
POOLED_ALPHA = ALPHA / 2
ATTR_RACE = "hone_race"  # trial attr: the trial whose configuration this one measures again (the race)
ATTR_RACED = "hone_raced"  # study attr: the finished trials the study had when the race was last queued


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
    judged_alone: str | None = None  # a weighted verdict on this one metric (a run had a metric ≤ 0), else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.candidate.name,
            "trial": self.candidate.trial_number,
            "config": self.candidate.config,
            "comparison": self.comparison.to_dict(),
            "means": self.means,
            "baseline_means": self.baseline_means,
            "metrics": {k: v.to_dict() for k, v in self.metric_comparisons.items()},
            "judged_alone": self.judged_alone,
        }


def pick_candidates(study: optuna.Study, objective: Objective, top_k: int,
                    model: HoneGPSampler | None = None) -> list[Candidate]:
    """The ``top_k`` best feasible completed trials with distinct configurations.

    Single objective: by objective value; with hone's GP as ``model``, the last of them is
    the configuration the model ranks first among the others when it offers one (noisy
    searches of spaces too large to enumerate, :meth:`HoneGPSampler.model_candidate`).
    Pareto: the front, ordered by the confirmation figure (weighted geometric mean of the
    metrics)."""
    trials = _feasible(study)
    if objective.mode == "pareto":
        front = {t.number for t in study.best_trials}
        trials = [t for t in trials if t.number in front]
        trials.sort(key=lambda t: _figure_key(objective, t))
    else:
        sign = -1.0 if objective.directions[0].name == "MAXIMIZE" else 1.0
        trials = _by_mean(trials, sign)
        # after the race, its configurations first: measured twice, the second time together (a drift
        # lowers them alike); another's single run would beat them by its luck alone
        raced = {_key(t) for t in trials if ATTR_RACE in t.user_attrs}
        trials.sort(key=lambda t: _key(t) not in raced)
    out: list[Candidate] = []
    seen: set[str] = set()
    for t in trials:
        key = _key(t)
        if key in seen:
            continue
        seen.add(key)
        out.append(_candidate(t))
        if len(out) >= top_k:
            break
    if model is not None and objective.mode != "pareto" and top_k >= 2 and len(out) == top_k:
        taken = {_config_key(c.config) for c in out[:-1]}
        pool = [t for t in trials if _key(t) not in taken]
        alt = model.model_candidate(study, pool)
        if alt is not None:
            out[-1] = _candidate(alt, " (the model's)")
    return out


def _candidate(t: FrozenTrial, note: str = "") -> Candidate:
    return Candidate(f"trial {t.number}{note}", t.number, dict(t.user_attrs.get("config", {})),
                     dict(t.user_attrs.get("means", {})))


def _by_mean(trials: list[FrozenTrial], sign: float) -> list[FrozenTrial]:
    """Single-objective trials best first by the mean value of their configuration (a
    configuration measured again is judged on all its runs, not its luckiest); ties by value."""
    values: dict[str, list[float]] = {}
    for t in trials:
        values.setdefault(_key(t), []).append(float(t.values[0]))

    def order(t: FrozenTrial) -> tuple[float, float]:
        runs = values[_key(t)]
        return sign * sum(runs) / len(runs), sign * float(t.values[0])
    return sorted(trials, key=order)


def best_observed(study: optuna.Study, k: int) -> list[FrozenTrial]:
    """The ``k`` best distinct feasible configurations by their mean observed value (one
    objective), a trial of each; for the race at the end of a noisy search."""
    if len(study.directions) != 1:
        return []
    sign = -1.0 if study.direction.name == "MAXIMIZE" else 1.0
    out: dict[str, FrozenTrial] = {}
    for t in _by_mean(_feasible(study), sign):
        out.setdefault(_key(t), t)
    return list(out.values())[:k]


def _feasible(study: optuna.Study) -> list[FrozenTrial]:
    """The completed trials that meet every constraint."""
    return [t for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
            if all(c <= 0 for c in t.user_attrs.get("hone_constraints", []))]


def _config_key(config: dict[str, Scalar]) -> str:
    """One string per distinct configuration (a trial's ``config`` user attribute)."""
    return repr(sorted(config.items()))


def _key(t: FrozenTrial) -> str:
    """:func:`_config_key` of a trial's configuration."""
    return _config_key(t.user_attrs.get("config", {}))


def _figure_key(objective: Objective, t: FrozenTrial) -> float:
    fig, goal = objective.figure(t.user_attrs.get("means", {}))
    return -fig if goal == "maximize" else fig


def experiment_settings(rounds: int, *, warmup: int = 1, seed: int = 0, threshold: float = 0.01,
                        least: int = MIN_ROUNDS) -> ExperimentSettings:
    """The engine's settings for a confirmation or an ablation block: exactly ``rounds``
    rounds (raised to ``least``: the paired tests' :data:`MIN_ROUNDS`, 1 for runs compared
    exactly), ``auto`` estimator, α = :data:`ALPHA`."""
    return ExperimentSettings(rounds=max(rounds, least), warmup=warmup, seed=seed, threshold=threshold,
                              alpha=ALPHA, estimator="auto")


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
    """Interleave baseline and candidates for ``rounds`` rounds (at least :data:`MIN_ROUNDS`)
    and compare each candidate with the baseline. The baseline arm is the session's starting
    state (no values: every resource back to it), not the values read at the start — a key
    that was absent is absent again."""
    arms = {BASELINE: {}} | {c.name: c.config for c in candidates}
    settings = experiment_settings(rounds, warmup=warmup, seed=seed, threshold=threshold)
    result, judged = measure_arms(loaded, configurator, objective, arms, [(BASELINE, c.name) for c in candidates],
                                  settings, on_run=on_run)
    runs = result.runs.runs
    out = []
    for c in candidates:
        comparison, per_metric = judged[BASELINE, c.name]
        values = ([objective.values(figures(r))[0] for r in runs[c.name] if r.ok]
                  if objective.mode != "pareto" else [])
        out.append(Confirmation(c, comparison, means(runs[c.name]), means(runs[BASELINE]), per_metric, values,
                                judged_alone(objective, runs[BASELINE] + runs[c.name])))
    return out


#: Comparisons of one experiment: (reference arm, candidate arm) → the verdict on the
#: objective's figure and the per-metric comparisons.
Judged = dict[tuple[str, str], tuple[PairedComparison, dict[str, PairedComparison]]]


def measure_arms(loaded: LoadedSpec, configurator: Configurator, objective: Objective,
                 arms: dict[str, dict[str, Scalar]], pairs: list[tuple[str, str]], settings: ExperimentSettings, *,
                 on_run: Callable[[int, str, Measurement], None] | None = None,
                 identical: bool = False) -> tuple[ExperimentResult, Judged]:
    """Measure named configurations on the A/B engine (each run first applies its arm: the
    session's starting state with the arm's values on top) and compare each (reference,
    candidate) pair of ``pairs`` round by round, at the α of the experiment's last look;
    ``identical``: exactly instead (:func:`compare_exactly`: the caller checks the runs repeat)."""
    contexts: dict[str, BenchContext] = {}

    def variant(name: str, config: dict[str, Scalar]) -> Variant:
        def prepare() -> None:
            contexts[name] = configurator.apply(config)

        return Variant(name, run=lambda: run_once(loaded, contexts[name]), prepare=prepare)

    judged: Judged = {}

    def analyse(result: InterleavedResult, alpha: float) -> bool:
        for ref, cand in pairs:
            judged[ref, cand] = (compare_exactly(objective, result.runs[ref], result.runs[cand],
                                                 threshold=settings.threshold) if identical else
                                 compare_runs(objective, result.runs[ref], result.runs[cand],
                                              threshold=settings.threshold, alpha=alpha, seed=settings.seed))
        return all(comparison.decisive for comparison, _ in judged.values())

    variants = [variant(name, config) for name, config in arms.items()]
    return run_experiment(variants, settings, analyse=analyse, on_run=on_run), judged


def stored_runs(runs: list[dict[str, Any]]) -> list[Measurement]:
    """Runs as a study stores them (the baseline's, a trial's ``runs`` attribute), as Measurements."""
    fields = set(Measurement.__dataclass_fields__)
    return [Measurement(**{k: v for k, v in r.items() if k in fields}) for r in runs]


def confirm_pooled(
    loaded: LoadedSpec,
    configurator: Configurator,
    objective: Objective,
    candidate: Candidate,
    baseline_runs: list[Measurement],
    *,
    rounds: int,
    exact: bool,
    identical: bool = False,
    warmup: int = 1,
    seed: int = 0,
    threshold: float = 0.01,
    on_run: Callable[[int, str, Measurement], None] | None = None,
    paired_fits: Callable[[], bool] = lambda: True,
) -> tuple[Confirmation, str]:
    """The pooled confirmation (docs/decisions/0045-exact-confirmation.md, 0046-pooled-confirmation.md):
    ``rounds`` interleaved rounds of the baseline and ``candidate``, then the candidate's new runs
    against every baseline run — ``baseline_runs`` (measured before the search) and the new ones —
    in the exact rank-sum test (:mod:`hone.stats.ranksum`): at :data:`ALPHA` when the runs repeat
    exactly (``exact``), else at :data:`POOLED_ALPHA`. The search's run of the candidate is left
    out: it was picked as the best, so it is biased upwards. Returns the confirmation and how it
    was judged: ``"pooled"``; or, when the baseline's runs show that the first runs and the new
    ones do not compare (:func:`baseline_held`), ``"paired"`` — these rounds' paired verdict, the
    caller goes on to the paired confirmation — unless ``paired_fits()`` says the runs left do
    not allow it: then ``"beside"``, the candidate's runs against the baseline's runs of the same
    rounds only, at :data:`ALPHA` (a drift between the phases cannot favour either), when that
    test can reach it (4 rounds or more). ``identical``: the baseline's runs were identical (a
    deterministic benchmark); if the new runs give the same figures again — the baseline's and the
    candidate's search run's — the comparison is exact (``"identical"``, no test needed), else the
    runs no longer repeat and the paired confirmation follows as above."""
    arms = {BASELINE: {}, candidate.name: candidate.config}
    settings = experiment_settings(rounds, warmup=warmup, seed=seed, threshold=threshold, least=1)
    result, _ = measure_arms(loaded, configurator, objective, arms, [], settings, on_run=on_run)
    runs = result.runs.runs
    before, during = [r for r in baseline_runs if r.ok], [r for r in runs[BASELINE] if r.ok]
    reference = before + during
    mine = [r for r in runs[candidate.name] if r.ok]
    figure, goal = objective_figure(objective, reference + mine)
    alone = judged_alone(objective, reference + mine)  # the figure's choice, before a "beside" narrows reference
    values = [objective.values(figures(r))[0] for r in mine] if objective.mode != "pareto" else []
    how, alpha = "pooled", ALPHA if exact else POOLED_ALPHA
    exactly = identical and repeats_identically(objective, reference) \
        and reproduces(objective, runs[candidate.name], candidate.search_means)
    if not exactly and (identical or not baseline_held([figure(r) for r in before], [figure(r) for r in during],
                                                       goal, exact=exact)):
        if paired_fits() or min_p(len(during), len(mine)) >= ALPHA:
            comparison, per_metric = compare_runs(objective, runs[BASELINE], runs[candidate.name],
                                                  threshold=threshold, seed=seed)
            return Confirmation(candidate, comparison, means(mine), means(runs[BASELINE]), per_metric, values,
                                judged_alone(objective, runs[BASELINE] + runs[candidate.name])), "paired"
        how, alpha, reference = "beside", ALPHA, during
    if exactly:
        how, compare = "identical", functools.partial(compare_identical, threshold=threshold)
    else:
        compare = functools.partial(compare_runs_unpaired, threshold=threshold, alpha=alpha, confidence=1 - alpha)
    comparison, per_metric = _compare_each(objective, reference, mine, compare, figure, goal)
    return Confirmation(candidate, comparison, means(mine), means(reference), per_metric, values, alone), how


def baseline_held(before: list[float], during: list[float], goal: Goal, *, exact: bool) -> bool:
    """May the baseline's runs from before the search and from the confirmation be pooled? Runs
    that repeat exactly must still all repeat within :data:`EXACT_CV`; noisy runs must not all
    be better than every run before the search — a step that would favour the candidate, which
    runs beside the new ones (the test at :data:`POOLED_ALPHA` covers a step too small to show)."""
    if exact:
        return repeats_exactly(before + during)
    if not before or not during:
        return False
    better = min(during) > max(before) if goal == "maximize" else max(during) < min(before)
    return not better


def repeats_exactly(values: list[float]) -> bool:
    """Do these runs lie within :data:`EXACT_CV` of each other (their coefficient of variation)?"""
    finite = [v for v in values if math.isfinite(v)]
    return len(finite) >= 2 and sample_cv(finite) < EXACT_CV  # the baseline's CV, as in hone.tune.study


def repeats_identically(objective: Objective, runs: list[Measurement]) -> bool:
    """Did these runs (two or more, all successful) give the same value of every scored metric —
    a deterministic benchmark (a cost model, a simulator, a replayed table), not merely a quiet one?"""
    if len(runs) < 2 or not all(r.ok for r in runs):
        return False
    for m in objective.metrics:
        values = [of_run(r, m.name) for r in runs]
        if not all(math.isfinite(v) for v in values) or len(set(values)) != 1:
            return False
    return True


def reproduces(objective: Objective, runs: list[Measurement], search_means: dict[str, float]) -> bool:
    """Did ``runs`` (all successful) give the scored metrics the search measured for the candidate
    (to float rounding)?"""
    return bool(runs) and all(r.ok for r in runs) and all(
        m.name in search_means and math.isclose(of_run(r, m.name), float(search_means[m.name]), rel_tol=1e-9)
        for r in runs for m in objective.metrics)


def judged_alone(objective: Objective, runs: list[Measurement]) -> str | None:
    """The one metric a weighted objective is judged on over ``runs`` when some successful run
    has a scored metric ≤ 0 (no geometric mean): the heaviest; None when its own figure serves."""
    ok = [figures(m) for m in runs if m.ok]
    if objective.mode == "single" or all(f.get(m.name, math.nan) > 0 for f in ok for m in objective.metrics):
        return None
    return objective.primary.name


def objective_figure(objective: Objective, runs: list[Measurement]) -> tuple[Figure, Goal]:
    """The objective as one positive figure per run, and its goal, chosen once for all
    ``runs`` so every round is judged on the same scale: the objective's own figure
    (:meth:`Objective.figure`), unless some successful run has a scored metric ≤ 0 (no
    geometric mean) — then the heaviest metric alone."""
    if judged_alone(objective, runs) is None:
        first = next((figures(m) for m in runs if m.ok), None)
        if first is not None:
            goal = objective.figure(first)[1]
        else:
            goal = str(objective.metrics[0].goal) if objective.mode == "single" else "maximize"
        return (lambda m: objective.figure(figures(m))[0]), _goal(goal)
    primary = objective.primary
    return (lambda m: of_run(m, primary.name)), _goal(str(primary.goal))


def _goal(text: str) -> Goal:
    return "maximize" if text == "maximize" else "minimize"


def compare_runs(objective: Objective, reference: list[Measurement], candidate: list[Measurement], *,
                 threshold: float, seed: int, alpha: float = ALPHA) -> tuple[PairedComparison,
                                                                             dict[str, PairedComparison]]:
    """Two arms of one interleaved block compared round by round at ``alpha`` (estimator
    ``auto``): on the objective's figure (the verdict) and on each scored metric. A round
    where either run failed is dropped."""
    arms = {"reference": reference, "candidate": candidate}
    figure, goal = objective_figure(objective, reference + candidate)
    comparison = compare_arms(arms, "reference", figure, goal=goal, threshold=threshold, alpha=alpha,
                              seed=seed)["candidate"]
    per_metric = {
        m.name: compare_arms(arms, "reference", _metric_figure(m.name), goal=_goal(str(m.goal or "maximize")),
                             threshold=threshold, alpha=alpha, seed=seed)["candidate"]
        for m in objective.metrics
    }
    return comparison, per_metric


def compare_exactly(objective: Objective, reference: list[Measurement], candidate: list[Measurement], *,
                    threshold: float) -> tuple[PairedComparison, dict[str, PairedComparison]]:
    """Two arms whose runs repeat identically (:func:`repeats_identically`, the caller's check)
    compared exactly (:func:`hone.stats.ranksum.compare_identical`): on the objective's figure
    and on each scored metric."""
    ref, cand = [r for r in reference if r.ok], [r for r in candidate if r.ok]

    def compare(a: list[float], b: list[float], *, goal: Goal) -> PairedComparison:  # failed: "no positive figure"
        return compare_identical(a or [math.nan], b or [math.nan], goal=goal, threshold=threshold)

    return _compare_each(objective, ref, cand, compare, *objective_figure(objective, ref + cand))


def _compare_each(objective: Objective, reference: list[Measurement], candidate: list[Measurement],
                  compare: Callable[..., PairedComparison], figure: Figure,
                  goal: Goal) -> tuple[PairedComparison, dict[str, PairedComparison]]:
    """``compare(reference values, candidate values, goal=…)`` on the objective's ``figure`` (the
    verdict) and on each scored metric, for the comparisons of all runs at once (not round by round)."""
    return compare([figure(r) for r in reference], [figure(r) for r in candidate], goal=goal), {
        m.name: compare([of_run(r, m.name) for r in reference], [of_run(r, m.name) for r in candidate],
                        goal=_goal(str(m.goal or "maximize")))
        for m in objective.metrics}


def _metric_figure(name: str) -> Figure:
    return lambda m: of_run(m, name)


def keep_reason(confirmations: list[Confirmation]) -> str:
    """Why no candidate is recommended, each candidate's verdict in its own words: within
    the threshold of the baseline (equivalent), worse, or not shown either way (the range
    its rounds could not rule out)."""
    if not confirmations:
        return "no candidate was confirmed (no completed feasible trial, or --confirm 0)"
    parts = []
    for c in confirmations:
        comp = c.comparison
        if comp.verdict == "equivalent":
            what = f"equivalent to the baseline ({comp.reason})"
        elif comp.verdict == "slower":
            what = f"worse than the baseline ({comp.change_pct:+.2f}%)"
        else:
            need = f"; about {comp.rounds_needed} rounds would settle it" if comp.rounds_needed else ""
            what = f"inconclusive after {comp.n} rounds ({comp.reason}{need})"
        parts.append(f"{c.candidate.name} {what}")
    return "no candidate was shown better than the baseline: " + "; ".join(parts)


def model_observations(values: list[float], repeats: int) -> list[float]:
    """A candidate's confirmation rounds as observations on a trial's footing: a trial's value
    is the mean of ``repeats`` runs, so consecutive rounds are averaged in len // repeats groups
    of near-equal size (one group at least)."""
    groups = max(1, len(values) // max(1, repeats))
    if not values:
        return []
    edges = [round(i * len(values) / groups) for i in range(groups + 1)]
    return [sum(values[a:b]) / (b - a) for a, b in itertools.pairwise(edges)]


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
    return max(winners, key=gain_pct)


def gain_pct(c: Confirmation) -> float:
    """A candidate's estimated change along its goal, in % (positive: better than the baseline)."""
    return c.comparison.change_pct if c.comparison.goal == "maximize" else -c.comparison.change_pct
