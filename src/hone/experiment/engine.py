"""The A/B engine every verb uses: interleaved rounds, looks until decisive, one analysis.

``hone compare``, the tuner's confirmation and ablation, ``hone pgo``'s evaluation and the
doctor's experiments all hand their arms (:class:`~hone.run.schedule.Variant`: prepare,
run, cleanup) to :func:`run_experiment`. It runs the warm-up, then interleaved randomized
rounds (:mod:`hone.run.schedule`), and — when the plan allows more rounds — looks at the
comparisons after each doubling and stops at the first look where every verdict is
decisive, or when the budget (rounds, time) ends (:mod:`hone.experiment.sequential` says
why the verdicts stay honest). :func:`compare_arms` is the one analysis: each arm against the
reference on one figure per run, with the robust estimator choice (``auto``) everywhere.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hone.core.errors import HoneError
from hone.experiment.sequential import LookPlan
from hone.run.benchmark import Measurement
from hone.run.schedule import InterleavedResult, Variant, extend_interleaved, run_interleaved
from hone.stats.paired import Estimator, Goal, PairedComparison, compare_paired

#: A figure per run: the metric value (NaN for a failed run).
Figure = Callable[[Measurement], float]


@dataclass
class ExperimentSettings:
    """How many rounds, how to judge them. ``threshold``/``alpha`` are fractions; times in s.

    ``rounds`` is the first look. ``max_rounds`` and ``max_time`` (the whole experiment,
    warm-up included) allow more looks, each doubling the rounds, until every comparison
    is decisive; with neither the experiment has exactly ``rounds`` rounds."""

    rounds: int = 20
    warmup: int = 1
    seed: int = 0
    threshold: float = 0.01
    alpha: float = 0.05
    estimator: Estimator = "auto"
    max_rounds: int | None = None
    max_time: float | None = None

    def check(self) -> None:
        if self.rounds < 1:
            raise HoneError(f"rounds must be at least 1, got {self.rounds}")
        if self.max_rounds is not None and self.max_rounds < self.rounds:
            raise HoneError(f"--max-rounds ({self.max_rounds}) must be at least --rounds ({self.rounds})")
        if not 0 < self.alpha < 1:
            raise HoneError(f"--alpha must be between 0 and 1, got {self.alpha}")


@dataclass
class Look:
    """One analysis of the rounds so far: how many, at what α, and whether it settled."""

    rounds: int
    alpha: float
    decisive: bool
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "alpha": self.alpha, "decisive": self.decisive, "seconds": self.seconds}


@dataclass
class ExperimentResult:
    """The runs, the looks, and why the experiment stopped."""

    runs: InterleavedResult
    looks: list[Look] = field(default_factory=list)
    stopped: str = "fixed"  # fixed | decisive | max rounds | time
    planned_rounds: int = 0

    @property
    def alpha(self) -> float:
        """The α of the last look (the level its verdicts and CIs are at)."""
        return self.looks[-1].alpha if self.looks else math.nan


#: Without ``max_rounds``, a time budget plans at most this many times the first look's rounds
#: (four doublings): a longer plan would leave the first looks too little α to stop on.
DEFAULT_GROWTH = 16


def plan_for(settings: ExperimentSettings, seconds_per_round: float | None) -> LookPlan:
    """The looks of an experiment: its maximum from ``max_rounds`` (default
    :data:`DEFAULT_GROWTH` × ``rounds`` when a time budget is set) and from ``max_time`` over
    the measured time of one round, whichever is smaller."""
    if settings.max_rounds is not None:
        maximum = settings.max_rounds
    else:
        maximum = DEFAULT_GROWTH * settings.rounds if settings.max_time is not None else settings.rounds
    if settings.max_time is not None and seconds_per_round and seconds_per_round > 0:
        maximum = min(maximum, int(settings.max_time / seconds_per_round))
    return LookPlan(settings.rounds, max(settings.rounds, maximum), settings.alpha)


def run_experiment(
    variants: Sequence[Variant],
    settings: ExperimentSettings,
    *,
    analyse: Callable[[InterleavedResult, float], bool],
    on_run: Callable[[int, str, Measurement], None] | None = None,
    on_look: Callable[[Look, InterleavedResult], None] | None = None,
) -> ExperimentResult:
    """Run ``variants`` in interleaved rounds, looking after the first ``settings.rounds``
    and after each doubling. ``analyse(runs, alpha)`` judges the rounds so far at ``alpha``
    and says whether every verdict is decisive; the caller keeps what it computed. The last
    call of ``analyse`` is at the experiment's final state."""
    settings.check()
    started = time.monotonic()
    rng = random.Random(settings.seed)
    runs = run_interleaved(variants, rounds=settings.rounds, warmup=settings.warmup, seed=settings.seed,
                           on_run=on_run)
    # Real time per round (runs, prepares, restarts): it sizes the plan. It depends on both
    # arms' times alike, not on which is faster, so it cannot bias the verdicts.
    per_round: float | None = (time.monotonic() - started) / (settings.warmup + settings.rounds)
    plan = plan_for(settings, per_round)
    result = ExperimentResult(runs, planned_rounds=plan.maximum)
    done = settings.rounds
    while True:
        budget_left = None if settings.max_time is None else settings.max_time - (time.monotonic() - started)
        nxt = plan.next_rounds(done)
        fits = nxt is not None and (budget_left is None or per_round is None
                                    or (nxt - done) * per_round <= budget_left)
        last = not plan.sequential or nxt is None or not fits
        alpha = plan.alpha_at(done, last=last)
        decisive = analyse(runs, alpha)
        look = Look(done, alpha, decisive, time.monotonic() - started)
        result.looks.append(look)
        if on_look:
            on_look(look, runs)
        if not plan.sequential:
            result.stopped = "fixed"
            break
        if decisive:
            result.stopped = "decisive"
            break
        if last:
            result.stopped = "max rounds" if nxt is None else "time"
            break
        assert nxt is not None
        extend_interleaved(runs, variants, rounds=nxt - done, rng=rng, on_run=on_run)
        # The time per round measured so far, for the next decision to extend.
        per_round = (time.monotonic() - started) / max(1, done + (nxt - done) + settings.warmup)
        done = nxt
    return result


def compare_arms(runs: dict[str, list[Measurement]], reference: str, figure: Figure, *, goal: Goal,
                 threshold: float, alpha: float, seed: int = 0,
                 estimator: Estimator = "auto") -> dict[str, PairedComparison]:
    """Every arm against ``reference`` round by round on ``figure`` (a failed run is NaN and
    drops its round from that pair), at ``alpha``: the verdicts and CIs of one look."""
    ref = [figure(m) if m.ok else math.nan for m in runs[reference]]
    out: dict[str, PairedComparison] = {}
    for name, ms in runs.items():
        if name == reference:
            continue
        cand = [figure(m) if m.ok else math.nan for m in ms]
        out[name] = compare_paired(ref, cand, goal=goal, threshold=threshold, alpha=alpha, confidence=1 - alpha,
                                   seed=seed, estimator=estimator)
    return out


__all__ = ["ExperimentResult", "ExperimentSettings", "Figure", "Look", "compare_arms", "plan_for", "run_experiment"]
