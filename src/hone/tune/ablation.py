"""Ablation: which of the confirmed winner's changes hold its gain.

Operators want the smallest diff that keeps the gain. After the confirmation picks a winner
W that changes two or more knobs from the baseline, the winner and, for each changed knob k,
W with k put back to its starting value (W−k: ``Configurator.apply`` renders a knob left out
of the values at its start) run in interleaved, randomly ordered rounds on the A/B engine
(``--ablation-rounds`` rounds). The effect of k is W vs W−k round by round
(:func:`hone.tune.confirm.compare_runs`: the confirmation's test and estimator, ``auto``).
A change is kept when W is measurably better than W−k ("faster" along the goal)
or when the benchmark fails without it; the others are dropped: "no measurable effect" when the
comparison shows them equivalent (the CI within ±threshold), "not shown to matter" when it
is inconclusive, "better without it" when the winner is better without them.

The minimal configuration M (the baseline plus the kept changes) then runs against the
baseline and against W in the same interleaved rounds. M is recommended when it beats the
baseline and is not measurably worse than W; otherwise W, and the result says why — changes
that each look inert can hold the gain together (two that stand in for each other), which
leave-one-out cannot see one at a time.

Why leave-one-out and not an ablation path (baseline → W adding changes in the order of the
model's importances): for the same k + 1 arms per round, leave-one-out measures exactly the
decision taken — is W worse without k? — for every k in the context of all the others; a
path's step for k depends on the order and on the changes already added, so an interacting
change gets credited to whichever comes second.

When the run budget cannot pay for leave-one-out (k + 4 arms), :func:`ablate_by_importance`
measures in one block the baseline, W, and W pruned to its few most important changes by the
knob importances (the others put back at their starting values), and recommends the smallest
pruned configuration that passes the same test as M: a few arms instead of k + 4, the
importances only proposing what the block then measures.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from hone.core.metrics import means, verdict_word
from hone.knobs.base import same_text
from hone.run.benchmark import Measurement
from hone.run.configure import Configurator
from hone.spec.loader import LoadedSpec
from hone.spec.models import Scalar
from hone.stats.paired import PairedComparison
from hone.tune.confirm import (
    BASELINE,
    MIN_ROUNDS,
    Candidate,
    Confirmation,
    experiment_settings,
    measure_arms,
    repeats_identically,
    reproduces,
)
from hone.tune.objective import Objective

WINNER = "winner"
MINIMAL = "minimal"
NO_EFFECT = "no measurable effect"
LEAVE_ONE_OUT = "leave-one-out"
BY_IMPORTANCE = "by importance"


@dataclass
class KnobEffect:
    """One changed knob: W vs W with this knob at its starting value."""

    knob: str
    baseline: Scalar | None
    winner: Scalar
    comparison: PairedComparison  # reference: W without this change; candidate: W
    kept: bool
    note: str

    def to_dict(self) -> dict[str, Any]:
        c = self.comparison
        return {"knob": self.knob, "baseline": self.baseline, "winner": self.winner, "kept": self.kept,
                "note": self.note, "effect_pct": c.change_pct, "ci_pct": list(c.ci_pct), "p_value": c.p_value,
                "verdict": c.verdict, "comparison": c.to_dict()}


@dataclass
class PrunedArm:
    """The winner pruned to its ``len(kept)`` most important changes, against the baseline and W."""

    kept: list[str]
    vs_baseline: PairedComparison  # reference: the baseline; candidate: this arm
    vs_winner: PairedComparison  # reference: W; candidate: this arm
    passed: bool  # beats the baseline and is not (measurably or probably) worse than W
    why: str  # judge_minimal's reason
    chosen: bool = False

    @property
    def status(self) -> str:
        if self.passed:
            return "chosen" if self.chosen else "held the gain"
        return "not shown to beat the baseline" if not self.vs_baseline.improved else "worse than the winner"

    def to_dict(self) -> dict[str, Any]:
        return {"kept": self.kept, "vs_baseline": self.vs_baseline.to_dict(), "vs_winner": self.vs_winner.to_dict(),
                "passed": self.passed, "chosen": self.chosen, "status": self.status}


@dataclass
class Ablation:
    """What the ablation measured and which configuration it recommends."""

    winner: str  # the confirmed winner's candidate name
    winner_trial: int
    winner_config: dict[str, Scalar]
    rounds: int
    effects: list[KnobEffect]
    minimal: dict[str, Scalar]  # the kept changes (the baseline supplies every other knob)
    recommended: Literal["minimal", "winner"]
    why: str
    minimal_vs_baseline: PairedComparison | None = None
    minimal_vs_winner: PairedComparison | None = None
    #: M's confirmation against the baseline (its means and per-metric tests), when M is recommended.
    confirmation: Confirmation | None = None
    notes: list[str] = field(default_factory=list)
    method: str = LEAVE_ONE_OUT
    order: list[str] = field(default_factory=list)  # by importance: the changes, most important first
    pruned: list[PrunedArm] = field(default_factory=list)  # by importance: the arms measured, fewest changes first

    def to_dict(self) -> dict[str, Any]:
        def comp(c: PairedComparison | None) -> dict[str, Any] | None:
            return c.to_dict() if c is not None else None

        if self.method == BY_IMPORTANCE:
            kept = [k for k in self.order if k in self.minimal]
            dropped = [k for k in self.order if k not in self.minimal]
        else:
            kept = [e.knob for e in self.effects if e.kept]
            dropped = [e.knob for e in self.effects if not e.kept]
        doc = {"winner": self.winner, "winner_trial": self.winner_trial, "winner_config": self.winner_config,
               "rounds": self.rounds, "method": self.method, "changes": [e.to_dict() for e in self.effects],
               "kept": kept, "dropped": dropped,
               "minimal": self.minimal, "recommended": self.recommended, "why": self.why,
               "minimal_vs_baseline": comp(self.minimal_vs_baseline),
               "minimal_vs_winner": comp(self.minimal_vs_winner)}
        if self.method == BY_IMPORTANCE:
            doc |= {"order": self.order, "pruned": [a.to_dict() for a in self.pruned]}
        return doc


def changed_knobs(loaded: LoadedSpec, config: dict[str, Scalar], baseline: dict[str, Any]) -> list[str]:
    """The knobs whose value in ``config`` differs from the baseline's (as the system sees
    the text: ``0.50`` and ``0.5`` are one value); a knob the baseline could not read counts
    as changed, one the spec no longer has does not."""
    out = []
    for name, value in config.items():
        try:
            model = loaded.spec.knob(name)
        except KeyError:
            continue
        start = baseline.get(name)
        if start is None or not same_text(model.format_value(value), model.format_value(start)):
            out.append(name)
    return out


def ablate(
    loaded: LoadedSpec,
    configurator: Configurator,
    objective: Objective,
    winner: Confirmation,
    baseline_config: dict[str, Any],
    *,
    rounds: int,
    warmup: int = 1,
    seed: int = 0,
    threshold: float = 0.01,
    on_run: Callable[[int, str, Measurement], None] | None = None,
    identical: bool = False,
) -> Ablation:
    """Leave-one-out over the winner's changes, then M vs the baseline and W (module
    docstring). ``rounds`` is raised to the minimum the tests need for p < 0.05, unless
    ``identical``: the winner's runs repeat identically, one round enough and compared exactly."""
    settings = experiment_settings(rounds, warmup=warmup, seed=seed, threshold=threshold,
                                   least=1 if identical else MIN_ROUNDS)
    rounds = settings.rounds
    config = dict(winner.candidate.config)
    changed = changed_knobs(loaded, config, baseline_config)
    without = {k: f"without {k}" for k in changed}
    arms = {WINNER: config} | {without[k]: {n: v for n, v in config.items() if n != k} for k in changed}
    # The effect of k: W (the candidate) against W−k (the reference).
    loo, judged = measure_arms(loaded, configurator, objective, arms, [(without[k], WINNER) for k in changed],
                               settings, on_run=on_run, identical=identical)
    loo_runs = loo.runs.runs
    if identical and (why := _not_repeating(objective, winner, loo_runs)):
        return Ablation(winner.candidate.name, winner.candidate.trial_number, config, rounds, [], {}, "winner", why)
    effects = []
    for k in changed:
        comp, _ = judged[without[k], WINNER]
        breaks = not any(m.ok for m in loo_runs[without[k]]) and any(m.ok for m in loo_runs[WINNER])
        if comp.improved:
            kept, note = True, "worse without it"
        elif leans(comp, "better"):  # the CI says W needs k, the rank test is one round short
            kept, note = True, f"probably worse without it ({comp.reason})"
        elif breaks:
            kept, note = True, "the benchmark fails without it"
        elif comp.verdict == "slower":
            kept, note = False, "better without it: this change costs"
        elif comp.verdict == "equivalent" and comp.estimator == "exact":
            kept, note = False, f"{NO_EFFECT} beyond ±{100 * threshold:g}% ({comp.change_pct:+.2f}%, exactly)"
        elif comp.verdict == "equivalent":
            kept, note = False, f"{NO_EFFECT} ({comp.reason})"
        else:
            kept, note = False, f"not shown to matter ({comp.reason})" if comp.reason else "not shown to matter"
        effects.append(KnobEffect(k, baseline_config.get(k), config[k], comp, kept, note))
    minimal = {e.knob: e.winner for e in effects if e.kept}
    result = Ablation(winner.candidate.name, winner.candidate.trial_number, config, rounds, effects, minimal,
                      "winner", "")
    if len(minimal) == len(effects):
        result.why = "every change has a measurable effect: the winner is already minimal"
        return result
    if not minimal:
        result.why = ("no change was shown to matter on its own in these rounds, yet together they beat the "
                      "baseline (too few rounds to tell, or they stand in for each other)")
        return result
    arms = {BASELINE: {}, MINIMAL: minimal, WINNER: config}
    final, judged = measure_arms(loaded, configurator, objective, arms, [(BASELINE, MINIMAL), (WINNER, MINIMAL)],
                                 experiment_settings(rounds, warmup=warmup, seed=seed + 1, threshold=threshold,
                                                     least=1 if identical else MIN_ROUNDS),
                                 on_run=on_run, identical=identical)
    if identical and (why := _not_repeating(objective, winner, final.runs.runs)):
        result.why = why
        return result
    vs_base, per_metric = judged[BASELINE, MINIMAL]
    vs_winner, _ = judged[WINNER, MINIMAL]
    result.minimal_vs_baseline, result.minimal_vs_winner = vs_base, vs_winner
    result.recommended, result.why = judge_minimal(vs_base, vs_winner, objective.units)
    if result.recommended == "minimal":
        name = f"{winner.candidate.name} minimal"
        result.confirmation = Confirmation(
            Candidate(name, winner.candidate.trial_number, minimal, {}), vs_base,
            means(final.runs.runs[MINIMAL]), means(final.runs.runs[BASELINE]), per_metric)
    return result


#: The ablation by importance's rounds on noisy runs: the signed-rank test passes 6 rounds only when
#: every round agrees, and on the real MariaDB pair one round in 6 went the other way for every
#: arm, each +89% or more (docs/decisions/0096). Exact runs keep the asked rounds.
PRUNED_ROUNDS = 12


def prune_sizes(changes: int, arms: int) -> list[int]:
    """How many of ``changes`` changes each of ``arms`` pruned arms keeps, fewest first: one arm
    keeps half of them (the safest cut), a second only the most important one (the smallest
    diff: one dominant knob is common, docs/decisions/0085), more arms a quarter, an eighth, …"""
    halves: list[int] = []
    n = changes
    while n > 1:
        n = -(-n // 2)
        halves.append(n)
    if arms >= len(halves):
        return sorted(halves)
    if arms <= 1:
        return halves[:arms]
    return sorted({halves[0], 1, *halves[1:arms - 1]})


def ablate_by_importance(
    loaded: LoadedSpec,
    configurator: Configurator,
    objective: Objective,
    winner: Confirmation,
    baseline_config: dict[str, Any],
    importances: dict[str, float],
    *,
    arms: int,
    rounds: int,
    warmup: int = 1,
    seed: int = 0,
    threshold: float = 0.01,
    on_run: Callable[[int, str, Measurement], None] | None = None,
    identical: bool = False,
) -> Ablation:
    """The baseline, W and ``arms`` pruned configurations (:func:`prune_sizes`) in one block of
    interleaved rounds; the smallest that beats the baseline and is not worse than W
    (:func:`judge_minimal`) is recommended, else W (module docstring). ``identical``: as in
    :func:`ablate`."""
    settings = experiment_settings(rounds, warmup=warmup, seed=seed, threshold=threshold,
                                   least=1 if identical else MIN_ROUNDS)
    config = dict(winner.candidate.config)
    changed = changed_knobs(loaded, config, baseline_config)
    # most important first; a knob the importances do not rank (too few trials) after those they do
    order = sorted(changed, key=lambda k: (-importances.get(k, -1.0), changed.index(k)))
    sizes = prune_sizes(len(order), arms)
    names = {j: f"top {j}" for j in sizes}
    block = {BASELINE: {}, WINNER: config} | {names[j]: {k: config[k] for k in order[:j]} for j in sizes}
    pairs = [p for j in sizes for p in ((BASELINE, names[j]), (WINNER, names[j]))]
    final, judged = measure_arms(loaded, configurator, objective, block, pairs, settings, on_run=on_run,
                                 identical=identical)
    if identical and (why := _not_repeating(objective, winner, final.runs.runs)):
        return Ablation(winner.candidate.name, winner.candidate.trial_number, config, settings.rounds, [], {},
                        "winner", why, method=BY_IMPORTANCE, order=order)
    measured = []
    for j in sizes:
        vs_base, vs_winner = judged[BASELINE, names[j]][0], judged[WINNER, names[j]][0]
        choice, why = judge_minimal(vs_base, vs_winner, objective.units)
        measured.append(PrunedArm(order[:j], vs_base, vs_winner, choice == "minimal", why))
    result = Ablation(winner.candidate.name, winner.candidate.trial_number, config, settings.rounds, [], {}, "winner",
                      "", method=BY_IMPORTANCE, order=order, pruned=measured)
    chosen = next((a for a in measured if a.passed), None)
    if chosen is None:
        smallest = measured[0]  # the one a user would most like to apply: why it was not
        result.minimal = {k: config[k] for k in smallest.kept}
        result.minimal_vs_baseline, result.minimal_vs_winner = smallest.vs_baseline, smallest.vs_winner
        result.why = (f"no pruned configuration passed; the smallest, the {len(smallest.kept)} most important of the "
                      f"{len(order)} changes: {smallest.why}")
        return result
    chosen.chosen = True
    result.minimal = {k: config[k] for k in chosen.kept}
    result.minimal_vs_baseline, result.minimal_vs_winner = chosen.vs_baseline, chosen.vs_winner
    result.recommended = "minimal"
    result.why = f"the {len(chosen.kept)} most important of the {len(order)} changes: {chosen.why}"
    name = f"{winner.candidate.name} minimal"
    result.confirmation = Confirmation(
        Candidate(name, winner.candidate.trial_number, result.minimal, {}), chosen.vs_baseline,
        means(final.runs.runs[names[len(chosen.kept)]]), means(final.runs.runs[BASELINE]),
        judged[BASELINE, names[len(chosen.kept)]][1])
    return result


def _not_repeating(objective: Objective, winner: Confirmation, runs: dict[str, list[Measurement]]) -> str:
    """Why an exact ablation block cannot be judged exactly ("" when it can): an arm's runs
    differ, or the winner (the baseline) no longer gives the figures it gave before."""
    varied = [name for name, rs in runs.items()  # an arm that always fails is a finding, not a variation
              if len(rs) > 1 and any(r.ok for r in rs) and not repeats_identically(objective, rs)]
    moved = [f"the {name}" for name, means in ((WINNER, winner.means), (BASELINE, winner.baseline_means))
             if name in runs and not reproduces(objective, runs[name], means)]
    if not varied and not moved:
        return ""
    what = " and ".join(moved) + " gave other figures than before" if moved else f"the {varied[0]} arm's runs differ"
    return f"the runs no longer repeat identically ({what}): the winner is kept whole, not ablated"


def judge_minimal(vs_base: PairedComparison, vs_winner: PairedComparison,
                  units: Sequence[str | None]) -> tuple[Literal["minimal", "winner"], str]:
    """Which configuration to recommend, "minimal" or "winner", and why: the minimal one when
    it beats the baseline and is not measurably worse than the winner."""
    if not vs_base.improved:
        return "winner", (f"the minimal configuration did not beat the baseline "
                          f"({verdict_word(vs_base.verdict, *units)}, {_pct_ci(vs_base)})")
    if vs_winner.verdict == "slower":
        return "winner", (f"the minimal configuration is measurably worse than the winner ({_pct_ci(vs_winner)}): "
                          "the dropped changes hold part of the gain together")
    if leans(vs_winner, "worse"):
        return "winner", (f"the minimal configuration is probably worse than the winner ({_pct_ci(vs_winner)}: "
                          f"{vs_winner.reason}): the winner is kept whole rather than risk the loss")
    # an inconclusive comparison says why (a CI clear of 0 with the test short of α reads as a contradiction)
    why = f": {vs_winner.reason}" if vs_winner.verdict == "inconclusive" and vs_winner.reason else ""
    return "minimal", (f"it beats the baseline ({_pct_ci(vs_base)}) and is not measurably worse than the winner "
                       f"({_pct_ci(vs_winner)}, {verdict_word(vs_winner.verdict, *units)}{why})")


def leans(c: PairedComparison, side: Literal["better", "worse"]) -> bool:
    """An inconclusive comparison whose CI lies wholly on the candidate's ``side`` beyond the
    threshold: the CI and the test disagree (few rounds: one round the other way keeps a rank
    test from α), and what is known points that way."""
    lo, hi = c.ci_pct
    up, down = lo > c.threshold * 100, hi < -c.threshold * 100
    better = up if c.goal == "maximize" else down
    worse = down if c.goal == "maximize" else up
    return c.verdict == "inconclusive" and (better if side == "better" else worse)


def _pct_ci(c: PairedComparison) -> str:
    return f"{c.change_pct:+.2f}% [{c.ci_pct[0]:+.2f}%, {c.ci_pct[1]:+.2f}%], p = {c.p_value:.3g}"
