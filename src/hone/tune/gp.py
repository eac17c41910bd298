"""``--sampler gp`` (and ``auto``): Gaussian-process Bayesian optimisation on hone's encoding.

Why our own and not Optuna's ``GPSampler``: Optuna's needs PyTorch (gigabytes from PyPI, too
heavy for hone's set-up); this one stands on scikit-learn's ``GaussianProcessRegressor``. It
also searches the space the way hone declares it: ordered value lists and int ranges as an
index scaled to [0, 1] (neighbouring values are near each other), ``log`` ranges in log space,
categoricals one-hot; and it estimates the measurement noise (a ``WhiteKernel`` with a floor, so
exact measurements work too: A-Tune's GP assumes noise 1e-9).

The loop: a few seeded Latin-hypercube starts, then expected improvement (in log form, stable
far from the incumbent) maximised over candidates — every configuration when the discrete
space is small, else random points, trust-region points around the best observation (see
:meth:`HoneGPSampler._trust_region_points`), neighbours of the best few and a short hill-climb
on EI. When the measurements are noisy (``noise_cv``, or the study's :data:`ATTR_NOISE_CV` that
``hone tune`` stores from its baseline repeats, ≥ :data:`NOISY_CV`), a seeded coin makes every
other suggestion a Thompson sample over the same candidates instead (see
:meth:`HoneGPSampler._thompson`). Kernel hyperparameters are fitted by maximum likelihood; in
spaces too large to enumerate, from 30 observations on, under a log-normal length-scale prior
(see :meth:`HoneGPSampler._gp`). Configurations already measured, failed or running are never
suggested again (running trials of fleet workers enter the model as a constant liar as well).
Under noise in spaces too large to enumerate, from 30 observations on every 6th suggestion is a
line probe instead (see :meth:`HoneGPSampler._line_probe`).
Infeasible trials (Optuna constraints) enter the model at the worst feasible value. Everything
is a function of the study's trials and ``(seed, trial number)``: same seed, same observations,
same suggestion. Multi-objective studies are handed to the ``fallback`` sampler.

:meth:`HoneGPSampler.rank_trials` ranks evaluated configurations by the posterior mean; it is
*not* used to pick ``hone tune``'s candidates: on a rough response the GP's smooth mean promotes
worse configurations than the best observation does
(docs/decisions/0005-candidates-by-best-observation.md). ``hone tune`` confirms its
best-observed candidates in interleaved rounds, and only among those that beat the baseline
lets the model decide
(:meth:`HoneGPSampler.order_by_model`, fitted on the search *and* the confirmation rounds;
see :mod:`hone.tune.confirm`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

ConstraintsFunc = Callable[[FrozenTrial], Sequence[float]]
ENUMERATE_LIMIT = 20_000  # discrete spaces up to this size: EI over every configuration
N_RANDOM_CANDIDATES = 1000
NOISE_FLOOR = 1e-6  # WhiteKernel lower bound on standardised y: exact measurements stay exact
RERANK_TOP = 5  # rank_trials: re-rank the best-observed few by posterior mean
REFIT_EVERY_UNTIL, REFIT_PERIOD = 30, 5  # kernel hyperparameters: refitted at every n ≤ 30, then every 5th
LENGTH_SCALE_MAX = 1e2  # Matérn length scales, in units of each knob's [0, 1] range
TABLE_LENGTH_SCALE_MAX = 1.0  # ... in spaces small enough to enumerate (see HoneGPSampler._kernel)
LENGTH_SCALE_PRIOR_SD = 1.0  # larger spaces: log ℓ ~ N(0, sd²) once PRIOR_AFTER observations (see _gp)
PRIOR_AFTER = 30  # ... from this many observations on
TR_CANDIDATES = 500  # non-enumerable spaces: EI candidates drawn around the best observation
TR_LENGTH_INIT, TR_LENGTH_MIN, TR_LENGTH_MAX = 0.25, 1 / 64, 0.5  # share of each ordered knob's range
TR_SHRINK_AFTER, TR_GROW_AFTER = 3, 2  # trials in a row without / with a new best
ATTR_NOISE_CV = "hone_noise_cv"  # study attr: relative sd of one trial's objective value (hone tune sets it)
ATTR_INTERRUPTED = "hone_interrupted"  # = hone.tune.study.ATTR_INTERRUPTED: a trial that did not fail on its own
NOISY_CV = 0.01  # at or above: every other suggestion (by a seeded coin) is a Thompson sample
TS_MAX = 2000  # Thompson sample over at most this many candidates (a Cholesky of TS_MAX²)
PROBE_EVERY = 6  # noisy, non-enumerable spaces: from PRIOR_AFTER trials, every 6th suggestion is a line probe
PROBE_GAP = 0.125  # ... into an unmeasured gap wider than this share of a knob's range
PROBE_LINE = 0.1  # ... on the line through the incumbent: other ordered knobs within this share, categoricals equal
PROBE_LENGTH_SCALE = 1.0  # ... along a knob whose fitted length scale exceeds its range (smooth end to end)


@dataclass(frozen=True)
class _Column:
    """One knob in the model: ``size`` levels (0 = continuous) and how a level is encoded."""

    name: str
    dist: BaseDistribution
    size: int  # levels of a discrete knob; 0 for a continuous float

    @property
    def categorical(self) -> bool:
        return isinstance(self.dist, CategoricalDistribution)

    @property
    def top(self) -> float:
        """The highest level of an ordered knob: its last step index, or 1.0 for a float."""
        return float(self.size - 1) if self.size else 1.0

    def width(self) -> int:
        return len(self.dist.choices) if self.categorical else 1  # type: ignore[attr-defined]

    def to_level(self, value: Any) -> float:
        """Param value → level (category index, step index, or [0, 1] position of a float)."""
        d = self.dist
        if isinstance(d, CategoricalDistribution):
            return float(d.to_internal_repr(value))
        if isinstance(d, IntDistribution):
            return float((int(value) - d.low) // d.step)
        assert isinstance(d, FloatDistribution)
        if d.log:
            return (math.log(value) - math.log(d.low)) / max(math.log(d.high) - math.log(d.low), 1e-12)
        return (float(value) - d.low) / max(d.high - d.low, 1e-12)

    def from_level(self, level: float) -> Any:
        d = self.dist
        if isinstance(d, CategoricalDistribution):
            return d.choices[int(level)]
        if isinstance(d, IntDistribution):
            return d.low + int(level) * d.step
        assert isinstance(d, FloatDistribution)
        u = min(1.0, max(0.0, float(level)))
        out = math.exp(math.log(d.low) + u * (math.log(d.high) - math.log(d.low))) if d.log \
            else d.low + u * (d.high - d.low)
        if d.step:
            out = d.low + round((out - d.low) / d.step) * d.step
        return float(min(d.high, max(d.low, out)))

    def encode(self, levels: np.ndarray) -> np.ndarray:
        """Levels (n,) → model inputs (n, width): one-hot, or a position in [0, 1]."""
        d = self.dist
        if isinstance(d, CategoricalDistribution):
            return np.eye(len(d.choices))[levels.astype(int)]
        if isinstance(d, IntDistribution):
            if self.size <= 1:
                return np.zeros((len(levels), 1))
            if d.log:
                vals = d.low + levels * d.step
                return ((np.log(vals) - math.log(d.low)) / (math.log(d.high) - math.log(d.low)))[:, None]
            return (levels / (self.size - 1))[:, None]
        return levels[:, None].astype(float)


def _columns(space: dict[str, BaseDistribution]) -> list[_Column]:
    out = []
    for name in sorted(space):
        d = space[name]
        if isinstance(d, CategoricalDistribution):
            size = len(d.choices)
        elif isinstance(d, IntDistribution):
            size = (d.high - d.low) // d.step + 1
        else:
            size = 0  # floats, stepped ones too: searched as continuous, rounded on the way out
        out.append(_Column(name, d, size))
    return out


def _model_columns(study: optuna.Study) -> list[_Column]:
    """The columns of the knobs every trial of ``study`` has and that take more than one value:
    the space :meth:`HoneGPSampler.order_by_model` fits its model in."""
    return _columns({n: d for n, d in IntersectionSearchSpace().calculate(study).items() if not d.single()})


def _enumerable(cols: list[_Column]) -> bool:
    """Is the space small enough to enumerate (at most :data:`ENUMERATE_LIMIT` configurations, no
    continuous knob)? There EI runs over every configuration, length scales are capped at the
    knob's range, and neither the length-scale prior nor the line probes apply."""
    size = math.prod(c.size for c in cols) if all(c.size for c in cols) else math.inf
    return size <= ENUMERATE_LIMIT


def trust_region_length(y: np.ndarray, start: int) -> float:
    """TuRBO-style trust-region length (share of each ordered knob's range) from the history
    ``y`` (minimised, in trial order) after the first ``start`` trials: halved after 3 trials in
    a row without a new best (better by more than 1e-3 of its magnitude; y as the model sees it,
    standardised log values), doubled after 2 new bests in a row, within [1/64, 1/2]."""
    length, wins, fails = TR_LENGTH_INIT, 0, 0
    best = float(np.min(y[:start])) if start else math.inf
    for v in y[start:]:
        if v < best - 1e-3 * abs(best):
            best, wins, fails = float(v), wins + 1, 0
        else:
            best, wins, fails = min(best, float(v)), 0, fails + 1
        if fails >= TR_SHRINK_AFTER:
            length, fails = max(length / 2, TR_LENGTH_MIN), 0
        if wins >= TR_GROW_AFTER:
            length, wins = min(length * 2, TR_LENGTH_MAX), 0
    return length


def refit_rows(n: int) -> int:
    """How many of ``n`` observations the kernel hyperparameters are fitted on: all up to
    :data:`REFIT_EVERY_UNTIL`, then the count at the last multiple of :data:`REFIT_PERIOD`."""
    return n if n <= REFIT_EVERY_UNTIL else n - (n - REFIT_EVERY_UNTIL) % REFIT_PERIOD


def map_optimizer(sd: float) -> Callable[..., tuple[np.ndarray, float]]:
    """A ``GaussianProcessRegressor`` optimizer: L-BFGS-B (as scikit-learn's default) on the
    negative log marginal likelihood plus a log-normal prior, log ℓ ~ N(0, sd²), on the Matérn
    length scales of hone's kernel ((Constant × Matérn) + White: theta[1:-1]). Ours because
    scikit-learn's GP has no hyperprior; its ``optimizer`` callable is the documented way in."""
    from scipy.optimize import minimize

    def optimizer(obj_func: Callable[..., Any], initial_theta: np.ndarray,
                  bounds: np.ndarray) -> tuple[np.ndarray, float]:
        def penalised(theta: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = obj_func(theta, eval_gradient=True)
            grad = np.array(grad, dtype=float)
            grad[1:-1] += theta[1:-1] / sd**2
            return float(value) + 0.5 * float(np.sum(theta[1:-1] ** 2)) / sd**2, grad

        res = minimize(penalised, initial_theta, method="L-BFGS-B", jac=True, bounds=bounds)
        return res.x, float(res.fun)

    return optimizer


def log_expected_improvement(mu: np.ndarray, sigma: np.ndarray, best: float) -> np.ndarray:
    """log EI for minimisation (improvement = best − y), stable when EI underflows."""
    from scipy.special import erfcx, log_ndtr

    sigma = np.maximum(sigma, 1e-12)
    z = (best - mu) / sigma
    out = np.empty_like(z)
    hi = z > -6
    # h(z) = φ(z) + zΦ(z)
    zh = z[hi]
    h = np.exp(-0.5 * zh**2) / math.sqrt(2 * math.pi) + zh * np.exp(log_ndtr(zh))
    out[hi] = np.log(np.maximum(h, 1e-300))
    zl = z[~hi]
    # far tail: h(z) = φ(z)(1 + z·√(π/2)·erfcx(−z/√2)); the bracket ≈ 1/z² − 3/z⁴
    bracket = 1 + zl * math.sqrt(math.pi / 2) * erfcx(-zl / math.sqrt(2))
    bracket = np.where(bracket > 1e-12, bracket, 1 / zl**2)
    out[~hi] = -0.5 * zl**2 - 0.5 * math.log(2 * math.pi) + np.log(bracket)
    return out + np.log(sigma)


class HoneGPSampler(BaseSampler):
    """Gaussian-process BO (scikit-learn) over the whole search space; see the module doc.

    Each switch below turns one mechanism off (all on by default), so that the tuning benchmark
    can measure what it adds (docs/decisions/). ``trust_region``: EI candidates around the best
    observation in spaces too large to enumerate (:meth:`_trust_region_points`).
    ``table_length_scale``: the longest length scale in spaces small enough to enumerate (see
    :meth:`_kernel`); None = :data:`LENGTH_SCALE_MAX` everywhere. ``length_scale_prior``: the sd
    of the log-normal length-scale prior of larger spaces (see :meth:`_gp`); None = maximum
    likelihood throughout. ``line_probes``: under noise, in larger spaces, every
    :data:`PROBE_EVERY`-th suggestion from :data:`PRIOR_AFTER` observations on is a line probe
    (see :meth:`_line_probe`). ``model_candidate``: under noise, in larger spaces,
    :meth:`model_candidate` offers the configuration of lowest posterior mean for
    confirmation."""

    def __init__(self, *, seed: int | None, n_startup_trials: int = 5,
                 constraints_func: ConstraintsFunc | None = None,
                 fallback: BaseSampler | None = None, log_y: bool = True,
                 noise_floor: float = NOISE_FLOOR, trust_region: bool = True,
                 noise_cv: float | None = None,
                 table_length_scale: float | None = TABLE_LENGTH_SCALE_MAX,
                 length_scale_prior: float | None = LENGTH_SCALE_PRIOR_SD,
                 line_probes: bool = True, model_candidate: bool = True) -> None:
        self._seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy % 2**32)
        self._n_startup = max(1, n_startup_trials)
        self._constraints_func = constraints_func
        self._random = RandomSampler(seed=seed)
        self._fallback = fallback
        self._log_y = log_y
        self._noise_floor = noise_floor
        self._trust_region = trust_region
        self._noise_cv = noise_cv
        self._table_length_scale = table_length_scale
        self._length_scale_prior = length_scale_prior
        self._line_probes = line_probes
        self._model_candidate = model_candidate
        self._space = IntersectionSearchSpace(include_pruned=True)
        self._fit_cache: dict[Any, Any] = {}
        self._failed: set[tuple[float, ...]] = set()  # levels of the failed trials, for the current suggestion

    # -- BaseSampler ----------------------------------------------------------------------
    def infer_relative_search_space(self, study: optuna.Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        if len(study.directions) != 1:
            return self._fallback.infer_relative_search_space(study, trial) if self._fallback else {}
        space = self._space.calculate(study)
        if not space:
            # Only failed trials so far: Optuna's intersection (completed trials) is empty, and an
            # empty space would make every knob an independent random draw that can repeat a
            # configuration that just failed. The failed trials' knobs are the space then.
            for t in study.get_trials(deepcopy=False, states=(TrialState.FAIL,)):
                space = dict(t.distributions) if not space else {
                    n: d for n, d in space.items() if t.distributions.get(n) == d}
            space = dict(sorted(space.items()))
        return {n: d for n, d in space.items() if not d.single()}

    def sample_relative(self, study: optuna.Study, trial: FrozenTrial,
                        search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        from threadpoolctl import threadpool_limits

        # 100×100 matrices: threaded BLAS costs more than it gains (2-4× slower on 2 busy cores)
        with threadpool_limits(1):
            return self._sample_relative(study, trial, search_space)

    def _sample_relative(self, study: optuna.Study, trial: FrozenTrial,
                         search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        if len(study.directions) != 1:
            return self._fallback.sample_relative(study, trial, search_space) if self._fallback else {}
        if not search_space:
            return {}
        cols = _columns(search_space)
        rng = np.random.default_rng([self._seed & 0xFFFFFFFF, trial.number, 0x6B0])
        trials = study.get_trials(deepcopy=False)
        obs = self._observations(study, trials, cols, with_running=True, exclude=trial.number)
        seen = {tuple(row) for row in self._levels_of(trials, cols, exclude=trial.number)}
        self._failed = {tuple(row) for row in self._levels_of(
            [t for t in trials if t.state == TrialState.FAIL and not t.user_attrs.get(ATTR_INTERRUPTED)], cols)}
        if trial.number < self._n_startup or obs is None or len(obs[1]) < 2:
            levels = self._startup_point(cols, trial.number, rng, seen)
        else:
            if self._line_probes and self._probe_turn(study, trial.number, cols, obs[2]):
                probe = self._line_probe(cols, obs[:2], obs[2], seen)
                if probe is not None:
                    return {c.name: c.from_level(v) for c, v in zip(cols, probe, strict=True)}
            thompson = self.noisy(study) and bool(rng.random() < 0.5)
            if thompson and self._log_y:  # the Thompson half samples a model of y itself
                obs = self._observations(study, trials, cols, with_running=True, exclude=trial.number, log=False)
            levels = self._ei_argmax(cols, obs[:2], rng, seen, n_done=obs[2], thompson=thompson)
        return {c.name: c.from_level(v) for c, v in zip(cols, levels, strict=True)}

    def sample_independent(self, study: optuna.Study, trial: FrozenTrial, param_name: str,
                           param_distribution: BaseDistribution) -> Any:
        if len(study.directions) != 1 and self._fallback is not None:
            return self._fallback.sample_independent(study, trial, param_name, param_distribution)
        return self._random.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study: optuna.Study, trial: FrozenTrial) -> None:
        if self._fallback is not None:
            self._fallback.before_trial(study, trial)

    def after_trial(self, study: optuna.Study, trial: FrozenTrial, state: TrialState,
                    values: Sequence[float] | None) -> None:
        if self._fallback is not None:
            self._fallback.after_trial(study, trial, state, values)

    def reseed_rng(self) -> None:
        self._random.reseed_rng()

    # -- recommendation ---------------------------------------------------------------------
    def rank_trials(self, study: optuna.Study, top: int | None = None) -> list[FrozenTrial]:
        """Completed feasible trials, best first. The best-observed few (5 or the top 10%; ``top``)
        come first, ordered by the GP's posterior mean at their configuration (a lucky single
        measurement sinks when its neighbours say otherwise); the rest follow by observed
        value. Only the best-observed are re-ranked because where the model misfits a rough
        response, its smoothed mean would otherwise promote configurations far from the
        best measured. Without a model (multi-objective, < 2 trials): by observed value."""
        trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        trials = [t for t in trials if self._feasible(t)]
        if len(study.directions) != 1:
            return trials
        sign = 1.0 if study.direction == StudyDirection.MINIMIZE else -1.0
        trials.sort(key=lambda t: (sign * float(t.values[0]), t.number))
        if len(trials) < 2:
            return trials
        k = max(RERANK_TOP, math.ceil(len(trials) / 10)) if top is None else top
        head, tail = sorted(trials[:k], key=lambda t: t.number), trials[k:]  # equal means: by number
        order = self.order_by_model(study, [t.params for t in head])
        return trials if order is None else [head[i] for i in order] + tail

    def order_by_model(self, study: optuna.Study, candidates: Sequence[dict[str, Any]],
                       extra: Sequence[tuple[dict[str, Any], float]] = ()) -> list[int] | None:
        """Indices of ``candidates`` (Optuna params), best first by the GP's posterior mean,
        fitted on the completed feasible trials and the ``extra`` observations (params, objective
        value) — ``hone tune`` passes its confirmation rounds. None without a model
        (multi-objective, fewer than 2 trials, a candidate missing a knob)."""
        from threadpoolctl import threadpool_limits

        if len(study.directions) != 1 or not candidates:
            return None
        cols = _model_columns(study)
        if not cols or any(c.name not in p for p in [*candidates, *(p for p, _ in extra)] for c in cols):
            return None
        with threadpool_limits(1):
            obs = self._observations(study, study.get_trials(deepcopy=False), cols, with_running=False, extra=extra)
            if obs is None or len(obs[1]) < 2:
                return None
            gp = self._fit(cols, obs[:2])
            levels = np.array([[c.to_level(p[c.name]) for c in cols] for p in candidates], dtype=float)
            mu = gp.predict(self._encode(cols, levels))
        return sorted(range(len(candidates)), key=lambda i: (float(mu[i]), i))

    def model_candidate(self, study: optuna.Study, among: Sequence[FrozenTrial]) -> FrozenTrial | None:
        """The trial of ``among`` (completed ones: those not yet chosen for confirmation) with the
        lowest posterior mean, fitted on every completed feasible trial — when the measurements
        are noisy and the space too large to enumerate; None otherwise (and without a model).

        Why: ``hone tune`` confirms its best *observed* configurations, and in a large space the
        best observed are single lucky measurements scattered around the optimum; the model pools
        every trial near a configuration. Enumerable spaces keep the best observed: there every
        configuration can be measured often enough to speak for itself
        (docs/decisions/0013-model-candidate.md)."""
        if not (self._model_candidate and self.noisy(study)) or len(study.directions) != 1:
            return None
        if _enumerable(_model_columns(study)):
            return None
        order = self.order_by_model(study, [t.params for t in among]) if among else None
        return None if order is None else among[order[0]]

    # -- internals ------------------------------------------------------------------------
    def noisy(self, study: optuna.Study) -> bool:
        """Are the measurements noisy (relative sd of a trial's value ≥ :data:`NOISY_CV`)? From
        ``noise_cv``, else the study's :data:`ATTR_NOISE_CV` (``hone tune`` stores it from the
        baseline's repeats, so fleet workers and ``--resume`` see the same value); unknown = no."""
        cv = self._noise_cv if self._noise_cv is not None else study.user_attrs.get(ATTR_NOISE_CV)
        return cv is not None and math.isfinite(float(cv)) and float(cv) >= NOISY_CV

    def _feasible(self, t: FrozenTrial) -> bool:
        return self._constraints_func is None or all(c <= 0 for c in self._constraints_func(t))

    @staticmethod
    def _levels_of(trials: list[FrozenTrial], cols: list[_Column], exclude: int = -1) -> list[list[float]]:
        """Levels of every trial that has all knobs (complete, running, failed): not to repeat."""
        out = []
        for t in trials:
            if t.number == exclude or t.state == TrialState.WAITING:
                continue
            if all(c.name in t.params for c in cols):
                out.append([c.to_level(t.params[c.name]) for c in cols])
        return out

    def _observations(self, study: optuna.Study, trials: list[FrozenTrial], cols: list[_Column], *,
                      with_running: bool, exclude: int = -1, log: bool | None = None,
                      extra: Sequence[tuple[dict[str, Any], float]] = ()) -> tuple[np.ndarray, np.ndarray, int] | None:
        """(levels, y, n_done) for the model: y minimised and standardised (log first when every
        value is positive and ``log``, default the sampler's ``log_y``); the first ``n_done`` rows
        are the completed feasible trials in trial order, then the ``extra`` observations
        (params, value); then infeasible trials at the worst feasible y and running ones (fleet
        workers) at the best y so far — a constant liar: no second worker picks the same point."""
        sign = 1.0 if study.direction == StudyDirection.MINIMIZE else -1.0
        done, bad, running = [], [], []
        for t in trials:
            if t.number == exclude or not all(c.name in t.params for c in cols):
                continue
            if t.state == TrialState.COMPLETE and t.values and math.isfinite(t.values[0]):
                (done if self._feasible(t) else bad).append(t)
            elif t.state == TrialState.RUNNING and with_running:
                running.append(t)
        if not done:
            return None
        raw = np.array([float(t.values[0]) for t in done] + [float(v) for _, v in extra])
        y = np.log(raw) if (self._log_y if log is None else log) and np.all(raw > 0) else raw
        y = sign * y
        y = (y - y.mean()) / (y.std() if y.std() > 0 else 1.0)
        lies = [float(y.max()) + 0.5] * len(bad) + [float(y.min())] * len(running)
        params = [t.params for t in done] + [p for p, _ in extra] + [t.params for t in bad + running]
        rows = [[c.to_level(p[c.name]) for c in cols] for p in params]
        return np.array(rows, dtype=float), np.concatenate([y, np.array(lies)]), len(done) + len(extra)

    @staticmethod
    def _encode(cols: list[_Column], levels: np.ndarray) -> np.ndarray:
        return np.hstack([c.encode(levels[:, i]) for i, c in enumerate(cols)])

    def _fit(self, cols: list[_Column], data: tuple[np.ndarray, np.ndarray]) -> Any:
        """The GP on ``data``. Kernel hyperparameters are fitted (marginal likelihood) on the
        first m rows, m = n up to 30, then every 5th n: a function of the observations alone
        (deterministic, resumable), at a third of the cost of refitting every time."""
        levels, y = data
        key = (levels.tobytes(), y.tobytes(), levels.shape)
        if key in self._fit_cache:
            return self._fit_cache[key]
        n = len(y)
        m = refit_rows(n)
        if m < n:
            head = y[:m]  # re-standardised and rounded: the same input whatever n is
            head = np.round((head - head.mean()) / (head.std() if head.std() > 0 else 1.0), 10)
            kernel = self._gp(cols, (levels[:m], head), self._kernel(cols)).kernel_
            gp = self._gp(cols, data, kernel, optimize=False)
        else:
            gp = self._gp(cols, data, self._kernel(cols))
        if len(self._fit_cache) > 16:
            self._fit_cache.clear()
        self._fit_cache[key] = gp
        return gp

    def _kernel(self, cols: list[_Column]) -> Any:
        """Constant × Matérn 5/2 (one length scale per encoded input) + a white noise term.

        In a space small enough to enumerate (:data:`ENUMERATE_LIMIT`: a few categorical and
        ordered knobs of a handful of levels each, like the measured tables) no length scale may
        exceed the knob's whole range (``table_length_scale``, 1). Why: a longer one says "this
        knob is smooth from end to end, or inert", which a GP under noise concludes from a few
        levels too early — and then neither EI nor a Thompson sample goes back to the levels it
        wrote off. Capped, every level keeps some posterior uncertainty of its own. Not in large
        spaces, where long length scales are how a smooth bowl is learnt
        (docs/decisions/0009-table-length-scale-cap.md)."""
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

        width = sum(c.width() for c in cols)
        longest = LENGTH_SCALE_MAX
        if self._table_length_scale is not None and _enumerable(cols):
            longest = self._table_length_scale
        return ConstantKernel(1.0, (1e-2, 1e2)) * Matern(
            length_scale=np.full(width, min(0.5, longest)), length_scale_bounds=(1e-2, longest), nu=2.5,
        ) + WhiteKernel(1e-2, (self._noise_floor, 1.0))

    def _gp(self, cols: list[_Column], data: tuple[np.ndarray, np.ndarray], kernel: Any,
            optimize: bool = True) -> Any:
        """The regressor on ``data``; ``optimize``: fit the kernel's hyperparameters. By maximum
        likelihood, except in spaces too large to enumerate once :data:`PRIOR_AFTER` (30)
        observations are in: then by maximum a posteriori with log ℓ ~ N(0, 1) on every length
        scale (``length_scale_prior``, :func:`map_optimizer`; ℓ in units of the knob's range).

        Why: under noise a weak knob's length scale can run to many times its range once the
        early trials show a trend; the posterior turns confidently monotone along it and the
        search stays at the range's edge. The prior keeps some curvature possible there. Why
        late: from the first trial on it also slows searches with many inert knobs down, and by
        trial 30 those have found their basin (docs/decisions/0010-length-scale-prior.md). The
        tables keep maximum likelihood under their cap (see :meth:`_kernel`)."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.gaussian_process import GaussianProcessRegressor

        levels, y = data
        key = ("fit", levels.tobytes(), y.tobytes(), levels.shape) if optimize else None
        if key is not None and key in self._fit_cache:
            return self._fit_cache[key]
        optimizer: Any = "fmin_l_bfgs_b" if optimize else None
        if (optimize and self._length_scale_prior is not None and len(y) >= PRIOR_AFTER
                and not _enumerable(cols)):
            optimizer = map_optimizer(self._length_scale_prior)
        gp = GaussianProcessRegressor(kernel, normalize_y=False, n_restarts_optimizer=0, random_state=0,
                                      optimizer=optimizer)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", UserWarning)
            gp.fit(self._encode(cols, levels), y)
        if key is not None:
            self._fit_cache[key] = gp
        return gp

    def _startup_point(self, cols: list[_Column], number: int, rng: np.random.Generator,
                       seen: set[tuple[float, ...]]) -> list[float]:
        """Row ``number`` of a seeded Latin hypercube of ``n_startup`` points; random after."""
        from scipy.stats import qmc

        if number < self._n_startup:
            u = qmc.LatinHypercube(d=len(cols), seed=self._seed & 0xFFFFFFFF).random(self._n_startup)[number]
        else:
            u = rng.random(len(cols))
        levels = [min(c.size - 1, int(x * c.size)) if c.size else float(x) for c, x in zip(cols, u, strict=True)]
        for _ in range(50):
            if tuple(levels) not in seen:
                return levels
            levels = self._random_levels(cols, rng, 1)[0].tolist()
        if _enumerable(cols):  # a nearly full small space: draw among what is left
            grids = np.meshgrid(*[np.arange(c.size, dtype=float) for c in cols], indexing="ij")
            cands = np.column_stack([g.ravel() for g in grids])
            fresh = cands[self._unmeasured(cands, seen)]
            if len(fresh):
                return fresh[int(rng.integers(len(fresh)))].tolist()
            return self._remeasure(cands, rng)
        return levels

    @staticmethod
    def _random_levels(cols: list[_Column], rng: np.random.Generator, n: int) -> np.ndarray:
        return np.column_stack([rng.integers(c.size, size=n).astype(float) if c.size else rng.random(n)
                                for c in cols])

    def _remeasure(self, cands: np.ndarray, rng: np.random.Generator) -> list[float]:
        """Every candidate is measured or running: a random one to measure again, but not one
        whose trial failed (it would fail again) unless every one did."""
        ok = self._unmeasured(cands, self._failed)
        pool = cands[ok] if ok.any() else cands
        return pool[int(rng.integers(len(pool)))].tolist()

    @staticmethod
    def _unmeasured(cands: np.ndarray, seen: set[tuple[float, ...]]) -> np.ndarray:
        """Mask of the candidate rows not yet measured or running (EI and Thompson alike)."""
        return np.array([tuple(r) not in seen for r in cands.tolist()], dtype=bool)

    @staticmethod
    def _neighbours(cols: list[_Column], levels: np.ndarray) -> np.ndarray:
        """Every single-knob move of each row: ±1, 2, 4 steps and ~2/10/25% of the range for
        ordered knobs, every other choice of a categorical, ±1/5/15% for floats."""
        out = []
        for i, c in enumerate(cols):
            if c.categorical:
                for k in range(c.size):
                    moved = levels.copy()
                    moved[:, i] = k
                    out.append(moved)
                continue
            if c.size:
                steps = sorted({1, 2, 4} | {max(1, round(c.size * f)) for f in (0.02, 0.1, 0.25)})
                steps = [s for s in steps if s < c.size]
            else:
                steps = [0.01, 0.05, 0.15]
            for s in steps:
                for sgn in (-1, 1):
                    moved = levels.copy()
                    moved[:, i] = np.clip(moved[:, i] + sgn * s, 0, c.top)
                    out.append(moved)
        return np.vstack(out) if out else levels

    def _probe_turn(self, study: optuna.Study, number: int, cols: list[_Column], n_done: int) -> bool:
        """Is trial ``number`` a line probe's turn (when ``line_probes`` is on)? Under noise, in
        spaces too large to enumerate, once :data:`PRIOR_AFTER` trials are complete: every
        :data:`PROBE_EVERY`-th trial number."""
        return (n_done >= PRIOR_AFTER and number % PROBE_EVERY == 0 and not _enumerable(cols)
                and self.noisy(study))

    def _line_probe(self, cols: list[_Column], data: tuple[np.ndarray, np.ndarray], n_done: int,
                    seen: set[tuple[float, ...]]) -> list[float] | None:
        """The incumbent (the completed trial with the lowest posterior mean) with one ordered knob
        moved to the middle of the widest unmeasured gap along the line through it, or None.

        The line of knob k: the completed trials whose other ordered knobs are within
        :data:`PROBE_LINE` of the incumbent's (share of each range) and whose categoricals equal
        its; a gap is the distance between neighbouring levels of k among them (the range's ends
        bound the outer two), and counts when wider than :data:`PROBE_GAP` of the range. Only
        knobs whose fitted length scale exceeds their range (:data:`PROBE_LENGTH_SCALE`) are
        probed — the ones the model calls smooth, or monotone, from end to end.

        Why: under noise the GP can fit a weak knob's effect from early, far-off trials as a
        trend over the whole range; its posterior along the knob turns confident, and neither EI
        nor a Thompson sample leaves the range's edge though the optimum lies inside. A probe
        measures the incumbent half-way into the stretch the model extrapolated over; one clearly
        better measurement is enough for the model to bend. Knobs the model already sees curving
        (length scale below the range) are left to EI: probing them costs a curved valley's
        search more than it gains (docs/decisions/0011-line-probes.md)."""
        gp = self._fit(cols, data)
        levels = data[0][:n_done]
        inc = levels[int(np.argmin(gp.predict(self._encode(cols, levels))))]
        scales = np.atleast_1d(np.asarray(gp.kernel_.k1.k2.length_scale, dtype=float))  # (C × Matérn) + White
        offsets = np.cumsum([0] + [c.width() for c in cols])
        near_other = [levels[:, j] == inc[j] if c.categorical else np.abs(levels[:, j] - inc[j]) <= PROBE_LINE * c.top
                      for j, c in enumerate(cols)]
        gaps = []
        for i, c in enumerate(cols):
            if c.categorical or scales[offsets[i]] <= PROBE_LENGTH_SCALE:
                continue
            on_line = np.ones(len(levels), dtype=bool)
            for j, m in enumerate(near_other):
                if j != i:
                    on_line &= m
            line = sorted(set(levels[on_line, i].tolist()) | {float(inc[i])})
            for lo, hi in zip([0.0, *line], [*line, c.top], strict=True):
                if (hi - lo) / c.top > PROBE_GAP:
                    mid = (lo + hi) / 2
                    gaps.append((-(hi - lo) / c.top, i, float(round(mid)) if c.size else mid))
        for _width, i, level in sorted(gaps):
            row = inc.copy()
            row[i] = level
            if tuple(row.tolist()) not in seen:
                return row.tolist()
        return None

    def _trust_region_points(self, cols: list[_Column], levels: np.ndarray, y: np.ndarray,
                             rng: np.random.Generator) -> np.ndarray:
        """:data:`TR_CANDIDATES` points around the best of ``levels`` (completed trials, ``y`` in
        trial order): each ordered knob moved with probability min(1, 2/d) by a Gaussian step of
        :func:`trust_region_length` × its range, each categorical re-drawn with probability 1/d.

        Why: in spaces too large to enumerate, 1000 uniform points rarely land near the
        incumbent, and its single-knob neighbours cannot move an ill-conditioned pair of knobs
        together; these multi-knob moves at a step that shrinks as progress stalls (TuRBO's
        rule) can (docs/decisions/0006-trust-region-candidates.md)."""
        inc = levels[int(np.argmin(y))]
        length = trust_region_length(y, self._n_startup)
        d, n = len(cols), TR_CANDIDATES
        pts = np.repeat(inc[None, :], n, axis=0)
        for i, c in enumerate(cols):
            if c.categorical:
                move = rng.random(n) < 1 / d
                pts[move, i] = rng.integers(c.size, size=int(move.sum()))
            else:
                move = rng.random(n) < min(1.0, 2 / d)
                moved = pts[move, i] + rng.normal(0, length * c.top, size=int(move.sum()))
                pts[move, i] = np.clip(np.round(moved) if c.size else moved, 0, c.top)
        return pts

    def _ei_argmax(self, cols: list[_Column], data: tuple[np.ndarray, np.ndarray], rng: np.random.Generator,
                   seen: set[tuple[float, ...]], n_done: int, thompson: bool = False) -> list[float]:
        """The candidate with the largest log EI (``thompson``: the smallest value of one joint
        posterior sample); ``data``'s first ``n_done`` rows are completed trials in trial order
        (the trust region's history)."""
        gp = self._fit(cols, data)
        levels = data[0]
        mu_obs = gp.predict(self._encode(cols, levels))
        best = float(np.min(mu_obs))

        def score(cands: np.ndarray) -> np.ndarray:
            mu, sd = gp.predict(self._encode(cols, cands), return_std=True)
            s = log_expected_improvement(mu, sd, best)
            return np.where(self._unmeasured(cands, seen), s, -np.inf)

        if _enumerable(cols):
            grids = np.meshgrid(*[np.arange(c.size, dtype=float) for c in cols], indexing="ij")
            cands = np.column_stack([g.ravel() for g in grids])
            if thompson:
                return self._thompson(gp, cols, cands, seen, rng)
            s = score(cands)
            if np.isfinite(s).any():
                return cands[int(np.argmax(s))].tolist()
            return self._remeasure(cands, rng)  # every point measured: re-measure one
        top = levels[np.argsort(mu_obs)[:5]]
        # drawn before the random points: this order fixes the seeded stream, so suggestions repeat
        local = self._trust_region_points(cols, levels[:n_done], data[1][:n_done], rng) \
            if self._trust_region else np.empty((0, len(cols)))
        cands = np.vstack([self._random_levels(cols, rng, N_RANDOM_CANDIDATES), local, self._neighbours(cols, top)])
        if thompson:
            return self._thompson(gp, cols, cands, seen, rng)
        s = score(cands)
        # hill-climb on EI from the 3 best candidates, single-knob moves, a few rounds
        starts = cands[np.argsort(-s)[:3]]
        best_row, best_s = cands[int(np.argmax(s))], float(np.max(s))
        for row in starts:
            cur, cur_s = row[None, :], float(score(row[None, :])[0])
            for _ in range(8):
                nb = self._neighbours(cols, cur)
                ns = score(nb)
                j = int(np.argmax(ns))
                if ns[j] <= cur_s:
                    break
                cur, cur_s = nb[j][None, :], float(ns[j])
            if cur_s > best_s:
                best_row, best_s = cur[0], cur_s
        if not math.isfinite(best_s):
            return self._random_levels(cols, rng, 1)[0].tolist()
        return best_row.tolist()

    def _thompson(self, gp: Any, cols: list[_Column], cands: np.ndarray, seen: set[tuple[float, ...]],
                  rng: np.random.Generator) -> list[float]:
        """The unmeasured candidate where one joint sample of the GP's latent function (the
        measurement noise left out) is lowest. Why, under noise: EI's incumbent is a noisy
        estimate, and EI keeps spending trials next to it where the posterior is confidently
        wrong (a knob held at the edge of its range, a categorical never switched); a posterior
        sample moves in proportion to what the model does not know
        (docs/decisions/0007-thompson-half-under-noise.md). Cholesky with jitter, not
        ``sample_y`` (an SVD: seconds for 2000 candidates).

        The sample is drawn from a GP of y itself, not log y (EI stays on log y): two output
        models, each wrong somewhere else (docs/decisions/0008-thompson-on-linear-y.md)."""
        cands = np.unique(cands, axis=0)
        fresh = self._unmeasured(cands, seen)
        if not fresh.any():
            return self._remeasure(cands, rng)
        cands = cands[fresh]
        if len(cands) > TS_MAX:  # large enumerable spaces: a seeded subset
            cands = cands[np.sort(rng.choice(len(cands), TS_MAX, replace=False))]
        x = self._encode(cols, cands)
        mu, cov = gp.predict(x, return_cov=True)
        noise = float(gp.kernel_.k2.noise_level)  # (Constant × Matérn) + White
        cov = cov - noise * np.eye(len(cands))  # predict's covariance includes the WhiteKernel
        scale = float(np.mean(np.diag(cov)))
        for jitter in (1e-8, 1e-6, 1e-4, 1e-2):
            try:
                chol = np.linalg.cholesky(cov + jitter * max(scale, 1e-12) * np.eye(len(cands)))
                break
            except np.linalg.LinAlgError:
                continue
        else:  # not positive definite even with jitter: independent samples
            chol = np.diag(np.sqrt(np.maximum(np.diag(cov), 0.0)))
        f = mu + chol @ rng.standard_normal(len(cands))
        return cands[int(np.argmin(f))].tolist()
