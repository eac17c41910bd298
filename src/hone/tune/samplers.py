"""Optuna samplers by name, seeded, with constraints wired in.

``auto`` = ``gp``: hone's own Gaussian-process BO (``hone.tune.gp``, scikit-learn; Optuna's
``GPSampler`` needs PyTorch and is ``optuna-gp``): on the tuning benchmark it reaches 5% of
the optimum in fewer evaluations than multivariate TPE (``tpe``)
(docs/decisions/0004-gp-sampler-as-auto.md).
``tpe`` is multivariate TPE (grouped, so conditional/mixed spaces work) with a startup of
random trials proportional to the budget. ``cmaes`` needs the ``cmaes`` package and handles
only numeric knobs itself (categoricals fall back to independent random sampling inside
Optuna). ``local`` is TPE plus local moves around the incumbent (``hone.tune.local``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler

from hone.core.errors import HoneError
from hone.tune.gp import GPSettings, HoneGPSampler
from hone.tune.local import LocalRefineSampler

ConstraintsFunc = Callable[[optuna.trial.FrozenTrial], Sequence[float]]


def startup_trials(n_trials: int, random_starts: int | None = None) -> int:
    """Random trials before the model takes over: the user's number, else ~20% of the
    budget, at least 4 and at most 10."""
    if random_starts is not None:
        return max(1, random_starts)
    return max(4, min(10, n_trials // 5))


def gp_startup_trials(n_trials: int) -> int:
    """Latin-hypercube starts of hone's GP sampler: a fifth of the budget, 3 to 5
    (docs/decisions/0004-gp-sampler-as-auto.md)."""
    return max(3, min(5, n_trials // 5))


@dataclass(frozen=True)
class SamplerRequest:
    """What :func:`make_sampler` was asked for; every factory of :data:`SAMPLERS` takes one.
    ``n_startup`` is :func:`startup_trials` of the budget and ``random_starts``."""

    seed: int | None
    n_trials: int
    n_startup: int
    constraints_func: ConstraintsFunc | None = None
    random_starts: int | None = None
    distributions: dict[str, BaseDistribution] | None = None


def _tpe(r: SamplerRequest) -> BaseSampler:
    return optuna.samplers.TPESampler(seed=r.seed, n_startup_trials=r.n_startup, multivariate=True, group=True)


def _random(r: SamplerRequest) -> BaseSampler:
    return optuna.samplers.RandomSampler(seed=r.seed)


def _qmc(r: SamplerRequest) -> BaseSampler:
    return optuna.samplers.QMCSampler(seed=r.seed, scramble=True, warn_independent_sampling=False)


def _nsga2(r: SamplerRequest) -> BaseSampler:
    return optuna.samplers.NSGAIISampler(seed=r.seed)


def gp_factory(settings: GPSettings) -> Callable[[SamplerRequest], BaseSampler]:
    """A :data:`SAMPLERS` factory of hone's GP sampler with ``settings`` (the tuning suite
    registers its variants this way)."""

    def factory(r: SamplerRequest) -> BaseSampler:
        # 3-5 Latin-hypercube starts unless the user sets random_starts
        n_gp_startup = r.n_startup if r.random_starts is not None else gp_startup_trials(r.n_trials)
        return HoneGPSampler(
            seed=r.seed, n_startup_trials=n_gp_startup, constraints_func=r.constraints_func,
            fallback=make_sampler("tpe", seed=r.seed, n_trials=r.n_trials, random_starts=r.random_starts),
            settings=settings,
        )

    return factory


_gp = gp_factory(GPSettings())


def _optuna_gp(r: SamplerRequest) -> BaseSampler:
    try:
        import torch  # noqa: F401
    except ImportError:
        raise HoneError(
            "--sampler optuna-gp is Optuna's GPSampler, which needs PyTorch (not installed)",
            hint="use --sampler gp (hone's own GP on scikit-learn), or pip install torch",
        ) from None
    return optuna.samplers.GPSampler(seed=r.seed, n_startup_trials=r.n_startup)


def _cmaes(r: SamplerRequest) -> BaseSampler:
    try:
        import cmaes  # noqa: F401
    except ImportError:
        raise HoneError("--sampler cmaes needs the cmaes package", hint="pip install cmaes") from None
    return optuna.samplers.CmaEsSampler(
        seed=r.seed, n_startup_trials=r.n_startup, warn_independent_sampling=False,
        independent_sampler=optuna.samplers.RandomSampler(seed=r.seed),
    )


def _grid_sampler(r: SamplerRequest) -> BaseSampler:
    if not r.distributions:
        raise HoneError("--sampler grid needs the search space")
    return _AskTellGridSampler(_grid(r.distributions), seed=r.seed)


def _local(r: SamplerRequest) -> BaseSampler:
    # 5 random starts, TPE alone until trial 20 (or half the budget), then every 2nd trial a
    # local move around the incumbent (docs/decisions/0014-local-sampler-opt-in.md)
    n_local_startup = r.n_startup if r.random_starts is not None else max(4, min(5, r.n_trials // 5))
    return LocalRefineSampler(
        make_sampler("tpe", seed=r.seed, n_trials=r.n_trials, random_starts=n_local_startup),
        seed=r.seed, n_startup_trials=n_local_startup, constraints_func=r.constraints_func,
        local_from=min(20, r.n_trials // 2),
    )


#: Every sampler ``--sampler`` / ``tune.sampler`` names, in the order help lists them.
SAMPLERS: dict[str, Callable[[SamplerRequest], BaseSampler]] = {
    "auto": _gp,
    "tpe": _tpe,
    "local": _local,
    "gp": _gp,
    "optuna-gp": _optuna_gp,
    "cmaes": _cmaes,
    "qmc": _qmc,
    "random": _random,
    "grid": _grid_sampler,
    "nsga2": _nsga2,
}


def make_sampler(
    name: str,
    *,
    seed: int | None,
    n_trials: int,
    constraints_func: ConstraintsFunc | None = None,
    random_starts: int | None = None,
    distributions: dict[str, BaseDistribution] | None = None,
) -> BaseSampler:
    """An Optuna sampler for ``name`` (a key of :data:`SAMPLERS`). Raises HoneError for an
    unknown name or a missing optional dependency.

    Constraints: Optuna's samplers read each trial's constraint values, which
    :func:`hone.tune.study.run_trials` sets with ``Trial.set_constraint`` (their
    ``constraints_func`` is deprecated since Optuna 5); ``constraints_func`` goes to hone's own
    samplers (gp, local) only."""
    factory = SAMPLERS.get(name.lower())
    if factory is None:
        raise HoneError(f"unknown sampler {name.lower()!r} (expected one of {', '.join(SAMPLERS)})")
    return factory(SamplerRequest(seed, n_trials, startup_trials(n_trials, random_starts), constraints_func,
                                  random_starts, distributions))


class _AskTellGridSampler(optuna.samplers.GridSampler):
    """Optuna's GridSampler calls ``study.stop()`` once the grid is used up, which raises
    outside ``study.optimize``; hone's ask/tell loop stops at its own trial budget."""

    def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
        return None


def _grid(distributions: dict[str, BaseDistribution]) -> dict[str, list[Any]]:
    """Every value of each knob; continuous ranges get 5 evenly spaced points."""
    import numpy as np
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    grid: dict[str, list[Any]] = {}
    for name, dist in distributions.items():
        if isinstance(dist, CategoricalDistribution):
            grid[name] = list(dist.choices)
        elif isinstance(dist, IntDistribution):
            values = list(range(dist.low, dist.high + 1, dist.step))
            if len(values) > 10:
                pick = np.unique(np.round(np.geomspace(dist.low, dist.high, 10) if dist.log
                                          else np.linspace(dist.low, dist.high, 10)).astype(int))
                values = [int(v) for v in pick]
            grid[name] = values
        elif isinstance(dist, FloatDistribution):
            pts = np.geomspace(dist.low, dist.high, 5) if dist.log else np.linspace(dist.low, dist.high, 5)
            grid[name] = [float(v) for v in pts]
    return grid
