"""``--sampler local``: TPE for exploration, interleaved with local moves around the incumbent.

From trial ``local_from`` on (``make_sampler`` uses 20, or half the budget; before it TPE
explores alone after its random startup), every ``period``-th trial is a *local* one: a
neighbour of the best finished trial so far, changed in one or a few knobs by a small move in each knob's
own geometry:

* ordered domains (numeric ``values`` searched as an index, int ranges by their step):
  ±1..k steps, small moves more likely, clipped to the domain;
* log-scaled ranges: the same in log space (a factor, not an offset);
* continuous float ranges: a Gaussian step of a few % of the range (log range: in log space);
* unordered categoricals and booleans: another choice, uniformly.

A neighbour already measured is skipped (a few redraws, then a larger move). The other
trials are TPE's, unchanged. Everything is a function of the study's finished trials and
``(seed, trial number)``, so the same seed and the same measurements give the same
suggestions, ``--resume`` reloads into the same schedule, and fleet workers sharing a study
each refine the study-wide incumbent. Multi-objective studies are left to TPE alone (there
is no single incumbent); with constraints the incumbent is the best feasible trial.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optuna
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from hone.tune.space import holds

ConstraintsFunc = Callable[[FrozenTrial], Sequence[float]]


def neighbour_value(dist: BaseDistribution, value: Any, rng: np.random.Generator, scale: int = 1) -> Any:
    """A value near ``value`` in ``dist`` (different from it whenever the domain allows).

    ``scale`` widens the move (1 = smallest moves most likely)."""
    if isinstance(dist, CategoricalDistribution):
        others = [c for c in dist.choices if c != value]
        return others[int(rng.integers(len(others)))] if others else value
    if isinstance(dist, IntDistribution):
        if dist.log:
            lo, hi = math.log(dist.low), math.log(dist.high)
            span = max(hi - lo, 1e-12)
            for _ in range(8):
                x = math.log(max(value, dist.low)) + rng.normal(0, 0.08 * scale * span)
                cand = round(math.exp(min(hi, max(lo, x))))
                cand = min(dist.high, max(dist.low, cand))
                if cand != value:
                    return cand
            return min(dist.high, value + 1) if value < dist.high else value - 1
        n_steps = (dist.high - dist.low) // dist.step
        if n_steps == 0:
            return value
        idx = (int(value) - dist.low) // dist.step
        # 1 step with p≈0.5, 2 with ≈0.25, …; scale multiplies the move
        k = int(rng.geometric(0.5)) * scale
        k = max(1, min(k, n_steps))
        sign = 1 if rng.random() < 0.5 else -1
        if not 0 <= idx + sign * k <= n_steps:
            sign = -sign
        new = min(n_steps, max(0, idx + sign * k))
        if new == idx:
            new = idx + 1 if idx < n_steps else idx - 1
        return dist.low + new * dist.step
    if isinstance(dist, FloatDistribution):
        if dist.log:
            lo, hi = math.log(dist.low), math.log(dist.high)
            x = math.log(value) + rng.normal(0, 0.05 * scale * (hi - lo))
            out = math.exp(min(hi, max(lo, x)))
        else:
            out = value + rng.normal(0, 0.05 * scale * (dist.high - dist.low))
            out = min(dist.high, max(dist.low, out))
        if dist.step:
            n = round((out - dist.low) / dist.step)
            out = min(dist.high, dist.low + n * dist.step)
        return float(out)
    raise TypeError(f"unsupported distribution {dist!r}")


def _steps(a: FrozenTrial, b: FrozenTrial) -> float:
    """Distance between two trials in neighbour moves (inf when a categorical differs)."""
    total = 0.0
    for name, dist in a.distributions.items():
        if name not in b.params:
            return math.inf
        x, y = a.params[name], b.params[name]
        if isinstance(dist, CategoricalDistribution):
            if x != y:
                return math.inf
        elif isinstance(dist, IntDistribution) and not dist.log:
            total += abs(x - y) / dist.step
        elif isinstance(dist, IntDistribution | FloatDistribution):
            lo, hi = (math.log(dist.low), math.log(dist.high)) if dist.log else (dist.low, dist.high)
            fx, fy = (math.log(x), math.log(y)) if dist.log else (x, y)
            total += abs(fx - fy) / (0.05 * max(hi - lo, 1e-12))
    return total


class LocalRefineSampler(BaseSampler):
    """TPE (the ``inner`` sampler) plus deterministic local moves around the incumbent."""

    def __init__(self, inner: BaseSampler, *, seed: int | None, n_startup_trials: int, period: int = 2,
                 constraints_func: ConstraintsFunc | None = None, smooth: bool = False,
                 local_from: int | None = None) -> None:
        self._inner = inner
        self._smooth = smooth
        self._local_from = n_startup_trials if local_from is None else max(n_startup_trials, local_from)
        self._seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy % 2**32)
        self._n_startup = n_startup_trials
        self._period = max(2, period)
        self._constraints_func = constraints_func
        self._plans: dict[int, dict[str, Any] | None] = {}

    # -- schedule -----------------------------------------------------------------------
    def is_local_turn(self, number: int) -> bool:
        """Local trials: from ``local_from`` on, every ``period``-th one (the rest are TPE's)."""
        start = self._local_from
        return number >= start and (number - start) % self._period == self._period - 1

    def _incumbent(self, study: optuna.Study) -> FrozenTrial | None:
        if len(study.directions) != 1:
            return None
        done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if self._constraints_func is not None:
            done = [t for t in done if all(c <= 0 for c in self._constraints_func(t))]
        if not done:
            return None
        sign = 1.0 if study.direction == StudyDirection.MINIMIZE else -1.0
        if not self._smooth:
            return min(done, key=lambda t: (sign * float(t.value), t.number))  # type: ignore[arg-type]
        # noise guard: rank trials by their value averaged with their close neighbours'
        # (weight 1/2 per step away, up to 2 steps; a lucky config among worse ones sinks)
        top = sorted(done, key=lambda t: (sign * float(t.value), t.number))[:8]  # type: ignore[arg-type]

        def smoothed(t: FrozenTrial) -> float:
            num, den = sign * float(t.value), 1.0  # type: ignore[arg-type]
            for o in done:
                if o.number == t.number:
                    continue
                d = _steps(t, o)
                if d <= 2:
                    w = 0.5 ** d
                    num += w * sign * float(o.value)  # type: ignore[arg-type]
                    den += w
            return num / den

        return min(top, key=lambda t: (smoothed(t), t.number))

    def _plan(self, study: optuna.Study, trial: FrozenTrial) -> dict[str, Any] | None:
        """The local trial's params (None: not a local trial). Cached per trial number."""
        if trial.number in self._plans:
            return self._plans[trial.number]
        plan: dict[str, Any] | None = None
        if self.is_local_turn(trial.number):
            inc = self._incumbent(study)
            if inc is not None:
                plan = self.propose(inc.params, inc.distributions, self._seen(study), trial.number)
        self._plans[trial.number] = plan
        return plan

    @staticmethod
    def _seen(study: optuna.Study) -> set[tuple[tuple[str, Any], ...]]:
        return {tuple(sorted(t.params.items())) for t in study.get_trials(deepcopy=False)}

    def propose(self, params: dict[str, Any], distributions: dict[str, BaseDistribution],
                seen: set[tuple[tuple[str, Any], ...]], number: int) -> dict[str, Any]:
        """A neighbour of ``params`` not in ``seen`` (when one is found), deterministic in
        ``(seed, number)``: one knob moved with p≈0.6, two with ≈0.25, more otherwise."""
        rng = np.random.default_rng([self._seed & 0xFFFFFFFF, number, 0x10CA1])
        names = sorted(distributions)
        movable = [n for n in names if not distributions[n].single()]
        if not movable:
            return dict(params)
        cand = dict(params)
        for attempt in range(24):
            scale = 1 + attempt // 8  # widen the move after repeated duplicates
            n_move = min(len(movable), int(rng.geometric(0.6)))
            chosen = rng.choice(len(movable), size=n_move, replace=False)
            cand = dict(params)
            for i in sorted(int(c) for c in chosen):
                name = movable[i]
                cand[name] = neighbour_value(distributions[name], params[name], rng, scale)
            if tuple(sorted(cand.items())) not in seen:
                break
        return cand

    # -- BaseSampler ----------------------------------------------------------------------
    def infer_relative_search_space(self, study: optuna.Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        return self._inner.infer_relative_search_space(study, trial)

    def sample_relative(self, study: optuna.Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        plan = self._plan(study, trial)
        if plan is None:
            return self._inner.sample_relative(study, trial, search_space)
        return {k: v for k, v in plan.items() if k in search_space and holds(search_space[k], v)}

    def sample_independent(self, study: optuna.Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        plan = self._plan(study, trial)
        if plan is not None and param_name in plan:
            value = plan[param_name]
            if holds(param_distribution, value):
                return value
        return self._inner.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        self._inner.before_trial(study, trial)

    def after_trial(self, study: optuna.Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        self._plans.pop(trial.number, None)
        self._inner.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        self._inner.reseed_rng()
