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
from hone.tune.confirm import BASELINE, Candidate, Confirmation, experiment_settings, measure_arms
from hone.tune.objective import Objective

WINNER = "winner"
MINIMAL = "minimal"
NO_EFFECT = "no measurable effect"


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

    def to_dict(self) -> dict[str, Any]:
        def comp(c: PairedComparison | None) -> dict[str, Any] | None:
            return c.to_dict() if c is not None else None

        return {"winner": self.winner, "winner_trial": self.winner_trial, "winner_config": self.winner_config,
                "rounds": self.rounds, "method": "leave-one-out", "changes": [e.to_dict() for e in self.effects],
                "kept": [e.knob for e in self.effects if e.kept],
                "dropped": [e.knob for e in self.effects if not e.kept],
                "minimal": self.minimal, "recommended": self.recommended, "why": self.why,
                "minimal_vs_baseline": comp(self.minimal_vs_baseline),
                "minimal_vs_winner": comp(self.minimal_vs_winner)}


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
) -> Ablation:
    """Leave-one-out over the winner's changes, then M vs the baseline and W (module
    docstring). ``rounds`` is raised to the minimum the tests need for p < 0.05."""
    settings = experiment_settings(rounds, warmup=warmup, seed=seed, threshold=threshold)
    rounds = settings.rounds
    config = dict(winner.candidate.config)
    changed = changed_knobs(loaded, config, baseline_config)
    without = {k: f"without {k}" for k in changed}
    arms = {WINNER: config} | {without[k]: {n: v for n, v in config.items() if n != k} for k in changed}
    # The effect of k: W (the candidate) against W−k (the reference).
    loo, judged = measure_arms(loaded, configurator, objective, arms, [(without[k], WINNER) for k in changed],
                               settings, on_run=on_run)
    effects = []
    loo_runs = loo.runs.runs
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
                                 experiment_settings(rounds, warmup=warmup, seed=seed + 1, threshold=threshold),
                                 on_run=on_run)
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
