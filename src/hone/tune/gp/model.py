"""The Gaussian process: observations → y, the kernel, and fitting it (scikit-learn).

Why our own and not Optuna's ``GPSampler``: Optuna's needs PyTorch (gigabytes from PyPI, too
heavy for hone's set-up); this one stands on scikit-learn's ``GaussianProcessRegressor``.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from optuna.trial import FrozenTrial, TrialState

from hone.tune.gp.encoding import Column, encode, enumerable, width
from hone.tune.gp.settings import GPSettings

Data = tuple[np.ndarray, np.ndarray]  # rows of levels, y (minimised, standardised)
ATTR_INTERRUPTED = "hone_interrupted"  # = hone.tune.study.ATTR_INTERRUPTED: a trial that did not fail on its own


WARPS = ("log", "linear", "yeo-johnson", "rank", "log-rank", "linear-rank", "evidence")


def warp_values(raw: np.ndarray, sign: float, warp: str) -> np.ndarray:
    """Objective values → the model's y (minimised, standardised). ``log``: log y when every
    value is positive, else linear; ``linear``: y itself; ``yeo-johnson``: a Yeo-Johnson power
    transform fitted to the values (as HEBO does), which pulls a long tail of catastrophic
    values in; ``rank``: normal scores of the ranks (only the order counts); ``log-rank``: log
    when every value is positive, else ranks; ``linear-rank``: y itself when every value is
    positive, else ranks; ``evidence``: here as ``log-rank`` (the sampler chooses between
    ``log-rank`` and ``linear-rank`` by :func:`log_jacobian` and the GP's likelihood)."""
    if warp not in WARPS:
        raise ValueError(f"unknown output warp {warp!r} (expected one of {', '.join(WARPS)})")
    positive = bool(np.all(raw > 0))
    y = sign * np.log(raw) if warp in ("log", "log-rank", "evidence") and positive else sign * raw
    if warp == "rank" or (warp in ("log-rank", "linear-rank", "evidence") and not positive):
        from scipy.stats import norm, rankdata

        y = norm.ppf((rankdata(y) - 0.5) / len(y))
    elif warp == "yeo-johnson" and len(y) > 2 and y.std() > 0:
        from scipy.stats import yeojohnson

        z = (y - y.mean()) / y.std()  # scale first: the transform's λ search is stable on unit scale
        y = yeojohnson(z)[0]
    return (y - y.mean()) / (y.std() if y.std() > 0 else 1.0)


def log_jacobian(raw: np.ndarray, log: bool) -> float:
    """Σ log |dz/dy| over positive values ``raw`` for z = (g(y) − mean)/sd, g = log or identity.
    Added to the GP's log marginal likelihood of z, it makes the two warps' likelihoods comparable
    on the same y (how Box and Cox choose their λ). −inf when g(y) does not vary."""
    g = np.log(raw) if log else raw
    sd = float(g.std())
    if sd <= 0:
        return -math.inf
    return (-float(g.sum()) if log else 0.0) - len(raw) * math.log(sd)


def noise_variance(raw: np.ndarray, warp: str, cv: float | None) -> float:
    """The measurements' noise as a variance of the model's standardised y: a relative sd ``cv``
    is an sd of about ``cv`` in log y, over the sd of log y. 0 when unknown or y is not logged."""
    if not cv or not math.isfinite(cv) or warp not in ("log", "log-rank", "evidence") or not bool(np.all(raw > 0)):
        return 0.0
    spread = float(np.log(raw).std())
    return (cv / spread) ** 2 if spread > 0 else 0.0


def observations(trials: Sequence[FrozenTrial], cols: list[Column], *, sign: float, warp: str,
                 feasible: Callable[[FrozenTrial], bool], with_running: bool, exclude: int = -1,
                 extra: Sequence[tuple[dict[str, Any], float]] = (),
                 failed_as_worst: bool = True, noise_cv: float | None = None,
                 ) -> tuple[np.ndarray, np.ndarray, int, float] | None:
    """(levels, y, n_done) for the model: y minimised (``sign`` −1 for a maximised objective),
    warped (:func:`warp_values`) and standardised; the first ``n_done`` rows are the completed
    feasible trials in trial order, then the ``extra`` observations (params, value); then
    infeasible trials — and failed ones (a crash, a timeout: ``failed_as_worst``; not those
    interrupted by the user) — just beyond the worst feasible y, and running ones (fleet workers)
    at the best y so far — a constant liar: no second worker picks the same point. The fourth
    element is :func:`noise_variance` for a relative sd ``noise_cv``. None without a completed
    feasible trial."""
    done, bad, running = _partition(trials, cols, feasible=feasible, with_running=with_running, exclude=exclude,
                                    failed_as_worst=failed_as_worst)
    if not done:
        return None
    raw = np.array([float(t.values[0]) for t in done] + [float(v) for _, v in extra])
    y = warp_values(raw, sign, warp)
    lies = [float(y.max()) + 0.5] * len(bad) + [float(y.min())] * len(running)
    params = [t.params for t in done] + [p for p, _ in extra] + [t.params for t in bad + running]
    rows = [[c.to_level(p[c.name]) for c in cols] for p in params]
    return (np.array(rows, dtype=float), np.concatenate([y, np.array(lies)]), len(done) + len(extra),
            noise_variance(raw, warp, noise_cv))


def observed_values(trials: Sequence[FrozenTrial], cols: list[Column], *, feasible: Callable[[FrozenTrial], bool],
                    exclude: int = -1, extra: Sequence[tuple[dict[str, Any], float]] = ()) -> np.ndarray:
    """The raw objective values :func:`observations` warps: the completed feasible trials', then
    the ``extra`` observations'."""
    done, _, _ = _partition(trials, cols, feasible=feasible, with_running=False, exclude=exclude,
                            failed_as_worst=False)
    return np.array([float(t.values[0]) for t in done] + [float(v) for _, v in extra])


def _partition(trials: Sequence[FrozenTrial], cols: list[Column], *, feasible: Callable[[FrozenTrial], bool],
               with_running: bool, exclude: int, failed_as_worst: bool,
               ) -> tuple[list[FrozenTrial], list[FrozenTrial], list[FrozenTrial]]:
    """The trials that have every column's knob: completed feasible ones, the bad ones (infeasible,
    and failed when ``failed_as_worst``, not those the user interrupted), and running ones."""
    done, bad, running = [], [], []
    for t in trials:
        if t.number == exclude or not all(c.name in t.params for c in cols):
            continue
        if t.state == TrialState.COMPLETE and t.values and math.isfinite(t.values[0]):
            (done if feasible(t) else bad).append(t)
        elif t.state == TrialState.RUNNING and with_running:
            running.append(t)
        elif t.state == TrialState.FAIL and failed_as_worst and not t.user_attrs.get(ATTR_INTERRUPTED):
            bad.append(t)
    return done, bad, running


def refit_rows(n: int, settings: GPSettings) -> int:
    """How many of ``n`` observations the kernel hyperparameters are fitted on: all up to
    ``refit_every_until``, then the count at the last multiple of ``refit_period``."""
    until, period = settings.refit_every_until, settings.refit_period
    return n if n <= until else n - (n - until) % period


def hyper_rows(m: int, most: int) -> np.ndarray:
    """Which of the first ``m`` rows the kernel's hyperparameters are fitted on: all, or ``most``
    spread evenly over them. Why: the fit costs ~n²·d per step and dominates a suggestion's
    time at hundreds of trials and dozens of knobs; length scales settle long before that."""
    if m <= most:
        return np.arange(m)
    return np.unique(np.linspace(0, m - 1, most).round().astype(int))


def map_optimizer(sd: float, mean: float = 0.0) -> Callable[..., tuple[np.ndarray, float]]:
    """A ``GaussianProcessRegressor`` optimizer: L-BFGS-B (as scikit-learn's default) on the
    negative log marginal likelihood plus a log-normal prior, log ℓ ~ N(mean, sd²), on the Matérn
    length scales of hone's kernel ((Constant × Matérn) + White: theta[1:-1]). Ours because
    scikit-learn's GP has no hyperprior; its ``optimizer`` callable is the documented way in."""
    from scipy.optimize import minimize

    def optimizer(obj_func: Callable[..., Any], initial_theta: np.ndarray,
                  bounds: np.ndarray) -> tuple[np.ndarray, float]:
        def penalised(theta: np.ndarray) -> tuple[float, np.ndarray]:
            value, grad = obj_func(theta, eval_gradient=True)
            grad = np.array(grad, dtype=float)
            grad[1:-1] += (theta[1:-1] - mean) / sd**2
            return float(value) + 0.5 * float(np.sum((theta[1:-1] - mean) ** 2)) / sd**2, grad

        res = minimize(penalised, initial_theta, method="L-BFGS-B", jac=True, bounds=bounds)
        return res.x, float(res.fun)

    return optimizer


def length_scales(gp: Any) -> np.ndarray:
    """The fitted Matérn length scales, one per encoded input ((C × Matérn) + White)."""
    return np.atleast_1d(np.asarray(gp.kernel_.k1.k2.length_scale, dtype=float))


def noise_level(gp: Any) -> float:
    """The fitted white-noise variance (standardised y)."""
    return float(gp.kernel_.k2.noise_level)


class GPModel:
    """Fits hone's GP to data; fits are cached on the data (a suggestion fits the same data
    several times: EI, a line probe, the model's ranking)."""

    def __init__(self, settings: GPSettings) -> None:
        self.settings = settings
        self._cache: dict[Any, Any] = {}

    def fit(self, cols: list[Column], data: Data, noise: float = 0.0) -> Any:
        """The GP on ``data``. Kernel hyperparameters are fitted (marginal likelihood) on the
        first m rows, m = n up to 30, then every 5th n: a function of the observations alone
        (deterministic, resumable), at a third of the cost of refitting every time. ``noise``:
        the measurements' known noise variance (standardised y); the white-noise term is kept
        at or above ``known_noise`` × it."""
        levels, y = data
        floor = max(self.settings.noise_floor, min(0.5, self.settings.known_noise * noise))
        key = (levels.tobytes(), y.tobytes(), levels.shape, floor)
        if key in self._cache:
            return self._cache[key]
        n = len(y)
        m = refit_rows(n, self.settings)
        rows = hyper_rows(m, self.settings.fit_max)
        if m < n or len(rows) < m:
            head = y[rows]  # re-standardised and rounded: the same input whatever n is
            head = np.round((head - head.mean()) / (head.std() if head.std() > 0 else 1.0), 10)
            kernel = self._regressor(cols, (levels[rows], head), self.kernel(cols, floor)).kernel_
            gp = self._regressor(cols, data, kernel, optimize=False)
        else:
            gp = self._regressor(cols, data, self.kernel(cols, floor))
        if len(self._cache) > 16:
            self._cache.clear()
        self._cache[key] = gp
        return gp

    def length_scale_prior(self, cols: list[Column], n: int) -> tuple[float, float] | None:
        """(mean, sd) of the log-normal prior on the length scales when a fit on ``n`` observations
        uses it (``length_scale_prior``: spaces too large to enumerate, from ``prior_after`` on)."""
        s = self.settings
        if s.length_scale_prior is None or n < s.prior_after or enumerable(cols, s.enumerate_limit):
            return None
        return s.prior_mean + s.prior_mean_per_log_dim * math.log(width(cols)), s.length_scale_prior

    def hyper_sample(self, cols: list[Column], gp: Any, rng: np.random.Generator, steps: int = 60) -> Any:
        """The GP on ``gp``'s data with kernel hyperparameters drawn from their posterior (a short
        random-walk Metropolis chain on log θ from the fitted θ: the marginal likelihood, the
        length-scale prior where the fit uses it, flat within the bounds). Ours: scikit-learn
        samples no hyperparameters, and a chain of ~60 likelihoods costs milliseconds."""
        from sklearn.gaussian_process import GaussianProcessRegressor

        s = self.settings
        theta = np.array(gp.kernel_.theta, dtype=float)
        lo, hi = gp.kernel_.bounds[:, 0], gp.kernel_.bounds[:, 1]
        prior = self.length_scale_prior(cols, len(gp.y_train_))

        def logp(th: np.ndarray) -> float:
            if np.any(th < lo) or np.any(th > hi):
                return -math.inf
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = float(gp.log_marginal_likelihood(th))
            if prior is not None:
                value -= 0.5 * float(np.sum((th[1:-1] - prior[0]) ** 2)) / prior[1] ** 2
            return value if math.isfinite(value) else -math.inf

        cur, cur_p = theta, logp(theta)
        step = s.hyper_step / math.sqrt(len(theta))
        for _ in range(steps):
            prop = cur + rng.normal(0.0, step, len(cur))
            p = logp(prop)
            if p - cur_p > math.log(max(rng.random(), 1e-300)):
                cur, cur_p = prop, p
        out = GaussianProcessRegressor(gp.kernel_.clone_with_theta(cur), normalize_y=False, optimizer=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return out.fit(gp.X_train_, gp.y_train_)

    def kernel(self, cols: list[Column], noise_floor: float | None = None) -> Any:
        """Constant × Matérn 5/2 (``matern_nu``; one length scale per encoded input) + a white noise term.

        In a space small enough to enumerate no length scale may exceed the knob's whole range
        (``table_length_scale``). Why: a longer one says "this knob is smooth from end to end, or
        inert", which a GP under noise concludes from a few levels too early — and then neither EI
        nor a Thompson sample goes back to the levels it wrote off. Not in large spaces, where long
        length scales are how a smooth bowl is learnt (docs/decisions/0009-table-length-scale-cap.md)."""
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

        s = self.settings
        floor = s.noise_floor if noise_floor is None else noise_floor
        longest = s.length_scale_max
        if s.table_length_scale is not None and enumerable(cols, s.enumerate_limit):
            longest = s.table_length_scale
        return ConstantKernel(1.0, (1e-2, 1e2)) * Matern(
            length_scale=np.full(width(cols), min(0.5, longest)), length_scale_bounds=(1e-2, longest), nu=s.matern_nu,
        ) + WhiteKernel(max(1e-2, floor), (floor, 1.0))

    def _regressor(self, cols: list[Column], data: Data, kernel: Any, optimize: bool = True) -> Any:
        """The regressor on ``data``; ``optimize``: fit the kernel's hyperparameters. By maximum
        likelihood, except in spaces too large to enumerate once ``prior_after`` observations are
        in: then by maximum a posteriori with log ℓ ~ N(0, sd²) on every length scale
        (``length_scale_prior``, :func:`map_optimizer`; ℓ in units of the knob's range).

        Why: under noise a weak knob's length scale can run to many times its range once the
        early trials show a trend; the posterior turns confidently monotone along it and the
        search stays at the range's edge. The prior keeps some curvature possible there. Why
        late: from the first trial on it also slows searches with many inert knobs down
        (docs/decisions/0010-length-scale-prior.md)."""
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.gaussian_process import GaussianProcessRegressor

        s = self.settings
        levels, y = data
        key = ("fit", levels.tobytes(), y.tobytes(), levels.shape) if optimize else None
        if key is not None and key in self._cache:
            return self._cache[key]
        optimizer: Any = "fmin_l_bfgs_b" if optimize else None
        prior = self.length_scale_prior(cols, len(y)) if optimize else None
        if prior is not None:
            optimizer = map_optimizer(prior[1], prior[0])
        restarts = s.fit_restarts if optimize else 0
        gp = GaussianProcessRegressor(kernel, normalize_y=False, n_restarts_optimizer=restarts, random_state=0,
                                      optimizer=optimizer)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            warnings.simplefilter("ignore", UserWarning)
            gp.fit(encode(cols, levels), y)
        if key is not None:
            self._cache[key] = gp
        return gp
