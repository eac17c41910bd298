"""``HoneGPSampler``: the Optuna sampler that puts the pieces together (see the package doc)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import optuna
from optuna.distributions import BaseDistribution, json_to_distribution
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.study import StudyDirection
from optuna.trial import FrozenTrial, TrialState

from hone.tune.gp import candidates as cand
from hone.tune.gp.acquisition import log_expected_improvement, thompson_argmin
from hone.tune.gp.encoding import (
    Column,
    columns,
    encode,
    enumerable,
    grid,
    model_columns,
    random_levels,
    to_params,
    unmeasured,
)
from hone.tune.gp.model import ATTR_INTERRUPTED, Data, GPModel, log_jacobian, observations, observed_values
from hone.tune.gp.ranking import order_by_model
from hone.tune.gp.settings import GPSettings

ConstraintsFunc = Callable[[FrozenTrial], Sequence[float]]
ATTR_NOISE_CV = "hone_noise_cv"  # study attr: relative sd of one trial's objective value (hone tune sets it)
ATTR_BASELINE_POINT = "hone_baseline_point"  # study attr: {"params", "value"} of the measured baseline, or None
ATTR_SPACE = "hone_space"  # study attr: {knob: Optuna distribution as JSON} of every searched knob (hone tune sets it)
ATTR_START = "hone_start"  # trial attr: a configuration the user gave (1-based; hone.tune.start), not a suggestion


class HoneGPSampler(BaseSampler):
    """Gaussian-process BO (scikit-learn) over the whole search space; see the package doc.

    ``settings`` (or keyword overrides of its fields: ``HoneGPSampler(seed=1, line_probes=False)``)
    switch each mechanism; ``noise_cv`` overrides the study's noise estimate."""

    def __init__(self, *, seed: int | None, n_startup_trials: int = 5,
                 constraints_func: ConstraintsFunc | None = None, fallback: BaseSampler | None = None,
                 noise_cv: float | None = None, settings: GPSettings | None = None, **overrides: Any) -> None:
        self.settings = dataclasses.replace(settings or GPSettings(), **overrides)
        self._seed = int(seed) if seed is not None else int(np.random.SeedSequence().entropy % 2**32)
        self._n_startup = max(1, n_startup_trials)
        self._constraints_func = constraints_func
        self._random = RandomSampler(seed=seed)
        self._fallback = fallback
        self._noise_cv = noise_cv
        self.model = GPModel(self.settings)
        self._space = IntersectionSearchSpace(include_pruned=True)
        self._failed: set[tuple[float, ...]] = set()  # levels of the failed trials, for the current suggestion

    # -- BaseSampler ----------------------------------------------------------------------
    def infer_relative_search_space(self, study: optuna.Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        if len(study.directions) != 1:
            return self._fallback.infer_relative_search_space(study, trial) if self._fallback else {}
        space = self._space.calculate(study)
        if not space and self.settings.stored_space and study.user_attrs.get(ATTR_SPACE):
            # No completed trial yet: Optuna's intersection is empty and trial 0 would be an
            # independent random draw, which can repeat the baseline. The space hone tune stored
            # makes it the first Latin-hypercube start, never a measured configuration.
            space = {n: json_to_distribution(d) for n, d in sorted(study.user_attrs[ATTR_SPACE].items())}
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
        s = self.settings
        cols = columns(search_space)
        rng = np.random.default_rng([self._seed & 0xFFFFFFFF, trial.number, 0x6B0])
        trials = study.get_trials(deepcopy=False)
        base = self._baseline_point(study, cols)
        obs = self._observations(study, trials, cols, with_running=True, exclude=trial.number, base=base)
        seen = {tuple(row) for row in _levels_of(trials, cols, exclude=trial.number)}
        if base is not None:
            seen.add(tuple(c.to_level(base[0][c.name]) for c in cols))
        self._failed = {tuple(row) for row in _levels_of(
            [t for t in trials if t.state == TrialState.FAIL and not t.user_attrs.get(ATTR_INTERRUPTED)], cols)}
        # the user's start configurations come first and leave the Latin-hypercube starts whole
        given = sum(1 for t in trials if ATTR_START in t.user_attrs and t.number < trial.number)
        if trial.number - given < self._n_startup or obs is None or len(obs[1]) < 2:
            levels = cand.startup_point(cols, trial.number - given, self._n_startup, self._seed, rng, seen,
                                        self._failed, s)
            return to_params(cols, levels)
        if self._coin(trial.number, 0x5EA, s.random_share):  # interleaved random configurations
            levels = cand.startup_point(cols, self._n_startup, self._n_startup, self._seed, rng, seen, self._failed, s)
            return to_params(cols, levels)
        if self._coin(trial.number, 0x7E5, s.tpe_share):  # interleaved TPE suggestions
            params = self._tpe(study, trial, search_space)
            if len(params) == len(cols) and tuple(c.to_level(params[c.name]) for c in cols) not in seen:
                return params
        if s.line_probes and self._probe_turn(study, trial.number, cols, obs[2]):
            probe = self._line_probe(cols, obs[:2], obs[2], seen, noise=obs[3])
            if probe is not None:
                return to_params(cols, probe)
        thompson = bool(s.thompson_share) and bool(rng.random() < s.thompson_share)
        if thompson and s.thompson_warp != s.warp:  # the Thompson half has an output model of its own
            obs = self._observations(study, trials, cols, with_running=True, exclude=trial.number,
                                     warp=s.thompson_warp, base=base)
        lcb = not thompson and self._coin(trial.number, 0x1CB, s.lcb_share)
        levels = self._ei_argmax(cols, obs[:2], rng, seen, n_done=obs[2], thompson=thompson,
                                 start=self._n_startup + (base is not None), lcb=lcb, noise=obs[3])
        return to_params(cols, levels)

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
        """Completed feasible trials, best first. The best-observed few (``rerank_top`` or the top
        10%; ``top``) come first, ordered by the GP's posterior mean at their configuration (a lucky
        single measurement sinks when its neighbours say otherwise); the rest follow by observed
        value. Only the best-observed are re-ranked because where the model misfits a rough
        response, its smoothed mean would otherwise promote configurations far from the best
        measured. Without a model (multi-objective, < 2 trials): by observed value."""
        trials = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        trials = [t for t in trials if self._feasible(t)]
        if len(study.directions) != 1:
            return trials
        sign = 1.0 if study.direction == StudyDirection.MINIMIZE else -1.0
        trials.sort(key=lambda t: (sign * float(t.values[0]), t.number))
        if len(trials) < 2:
            return trials
        k = max(self.settings.rerank_top, math.ceil(len(trials) / 10)) if top is None else top
        head, tail = sorted(trials[:k], key=lambda t: t.number), trials[k:]  # equal means: by number
        order = self.order_by_model(study, [t.params for t in head])
        return trials if order is None else [head[i] for i in order] + tail

    def order_by_model(self, study: optuna.Study, candidates: Sequence[dict[str, Any]],
                       extra: Sequence[tuple[dict[str, Any], float]] = ()) -> list[int] | None:
        """Indices of ``candidates`` best first by the GP's posterior mean (see
        :func:`hone.tune.gp.ranking.order_by_model`); ``hone tune`` passes its confirmation rounds
        as ``extra``."""
        return order_by_model(self.model, study, candidates, feasible=self._feasible, extra=extra,
                              noise_cv=self._noise_of(study))

    def model_candidate(self, study: optuna.Study, among: Sequence[FrozenTrial]) -> FrozenTrial | None:
        """The trial of ``among`` (completed ones: those not yet chosen for confirmation) with the
        lowest posterior mean, fitted on every completed feasible trial — when the measurements
        are noisy and the space too large to enumerate; None otherwise (and without a model).

        Why: ``hone tune`` confirms its best *observed* configurations, and in a large space the
        best observed are single lucky measurements scattered around the optimum; the model pools
        every trial near a configuration. Enumerable spaces keep the best observed: there every
        configuration can be measured often enough to speak for itself
        (docs/decisions/0013-model-candidate.md)."""
        if not (self.settings.model_candidate and self.noisy(study)) or len(study.directions) != 1:
            return None
        if enumerable(model_columns(study), self.settings.enumerate_limit):
            return None
        order = self.order_by_model(study, [t.params for t in among]) if among else None
        return None if order is None else among[order[0]]

    def noisy(self, study: optuna.Study) -> bool:
        """Are the measurements noisy (relative sd of a trial's value ≥ ``noisy_cv``)? From
        ``noise_cv``, else the study's :data:`ATTR_NOISE_CV` (``hone tune`` stores it from the
        baseline's repeats, so fleet workers and ``--resume`` see the same value); unknown = no."""
        cv = self._cv(study)
        return cv is not None and math.isfinite(cv) and cv >= self.settings.noisy_cv

    def _cv(self, study: optuna.Study) -> float | None:
        """The relative sd of a trial's value: ``noise_cv``, else the study's :data:`ATTR_NOISE_CV`."""
        cv = self._noise_cv if self._noise_cv is not None else study.user_attrs.get(ATTR_NOISE_CV)
        return None if cv is None else float(cv)

    def _noise_of(self, study: optuna.Study) -> float | None:
        """The relative sd of a trial's value when ``known_noise`` is on and the measurements are
        :meth:`noisy`, else None."""
        return self._cv(study) if self.settings.known_noise and self.noisy(study) else None

    # -- one suggestion ---------------------------------------------------------------------
    def _coin(self, number: int, stream: int, share: float) -> bool:
        """A seeded coin of its own ``stream`` for trial ``number``: True with probability ``share``
        (no draw at share 0), so switching one mechanism on leaves the others' draws as they were."""
        return bool(share) and bool(np.random.default_rng([self._seed & 0xFFFFFFFF, number, stream]).random() < share)

    def _tpe(self, study: optuna.Study, trial: FrozenTrial,
             search_space: dict[str, BaseDistribution]) -> dict[str, Any]:
        """Optuna's multivariate TPE's suggestion on the same study, seeded by (seed, trial number)
        like everything else here (``tpe_share``; not hone's default: on 20 fresh seeds it did not
        help, docs/decisions/0059-a-quarter-of-the-suggestions-by-tpe.md)."""
        import warnings

        from optuna.exceptions import ExperimentalWarning
        from optuna.samplers import TPESampler

        seed = int(np.random.default_rng([self._seed & 0xFFFFFFFF, trial.number, 0x7E6]).integers(2**31))
        with warnings.catch_warnings():  # multivariate is "experimental" in Optuna
            warnings.simplefilter("ignore", ExperimentalWarning)
            # constraints: TPE reads the ones run_trials sets on each trial (Trial.set_constraint)
            tpe = TPESampler(seed=seed, multivariate=True, n_startup_trials=self._n_startup)
        return tpe.sample_relative(study, trial, search_space)

    def _feasible(self, t: FrozenTrial) -> bool:
        return self._constraints_func is None or all(c <= 0 for c in self._constraints_func(t))

    def _baseline_point(self, study: optuna.Study, cols: list[Column]) -> tuple[dict[str, Any], float] | None:
        """The measured baseline (:data:`ATTR_BASELINE_POINT`) as an observation, when
        ``baseline_observed`` and it has every column's knob; else None."""
        point = study.user_attrs.get(ATTR_BASELINE_POINT) if self.settings.baseline_observed else None
        if not point or any(c.name not in point["params"] for c in cols):
            return None
        return dict(point["params"]), float(point["value"])

    def _observations(self, study: optuna.Study, trials: list[FrozenTrial], cols: list[Column], *,
                      with_running: bool, exclude: int = -1, warp: str | None = None,
                      base: tuple[dict[str, Any], float] | None = None,
                      ) -> tuple[np.ndarray, np.ndarray, int, float] | None:
        """The model's data (:func:`observations`); ``base``, the measured baseline, is the first
        row — an observation from before the first trial (the trust region's history starts there)."""
        sign = 1.0 if study.direction == StudyDirection.MINIMIZE else -1.0
        warp = self.settings.warp if warp is None else warp
        if warp == "evidence":
            return self._by_evidence(study, trials, cols, with_running=with_running, exclude=exclude, base=base)
        obs = observations(trials, cols, sign=sign, warp=warp,
                           feasible=self._feasible, with_running=with_running, exclude=exclude,
                           failed_as_worst=self.settings.failed_as_worst, extra=[base] if base else (),
                           noise_cv=self._noise_of(study))
        if obs is None or base is None:
            return obs
        levels, y, n_done, noise = obs
        order = np.r_[n_done - 1, np.arange(n_done - 1), np.arange(n_done, len(y))]
        return levels[order], y[order], n_done, noise

    def _by_evidence(self, study: optuna.Study, trials: list[FrozenTrial], cols: list[Column], *,
                     with_running: bool, exclude: int,
                     base: tuple[dict[str, Any], float] | None) -> tuple[np.ndarray, np.ndarray, int, float] | None:
        """The observations under log y or y itself, whichever the data make likelier: the GP's
        log marginal likelihood of each plus its :func:`log_jacobian`; ranks when a value is not
        positive (``warp="evidence"``; not the default: neutral on the suite's development half,
        docs/decisions/0099-log-or-linear-y-by-evidence.md, 0112)."""
        log = self._observations(study, trials, cols, with_running=with_running, exclude=exclude,
                                 warp="log-rank", base=base)
        raw = observed_values(trials, cols, feasible=self._feasible, exclude=exclude, extra=[base] if base else ())
        if log is None or len(raw) < 3 or not np.all(raw > 0):
            return log
        lin = self._observations(study, trials, cols, with_running=with_running, exclude=exclude,
                                 warp="linear-rank", base=base)
        if lin is None:
            return log
        ev_log = self.model.fit(cols, log[:2], log[3]).log_marginal_likelihood_value_ + log_jacobian(raw, True)
        ev_lin = self.model.fit(cols, lin[:2], lin[3]).log_marginal_likelihood_value_ + log_jacobian(raw, False)
        return lin if ev_lin > ev_log else log

    def _probe_turn(self, study: optuna.Study, number: int, cols: list[Column], n_done: int) -> bool:
        """Is trial ``number`` a line probe's turn? Under noise, in spaces too large to enumerate,
        once ``prior_after`` trials are complete: every ``probe_every``-th trial number."""
        s = self.settings
        return (n_done >= s.prior_after and number % s.probe_every == 0
                and not enumerable(cols, s.enumerate_limit) and self.noisy(study))

    def _line_probe(self, cols: list[Column], data: Data, n_done: int,
                    seen: set[tuple[float, ...]], noise: float = 0.0) -> list[float] | None:
        gp = self.model.fit(cols, data, noise)
        levels = data[0][:n_done]
        incumbent = levels[int(np.argmin(gp.predict(encode(cols, levels))))]
        return cand.line_probe(gp, cols, levels, incumbent, seen, self.settings)

    def _ei_argmax(self, cols: list[Column], data: Data, rng: np.random.Generator,
                   seen: set[tuple[float, ...]], n_done: int, thompson: bool = False, *,
                   start: int, lcb: bool = False, noise: float = 0.0) -> list[float]:
        """The candidate with the largest log EI (``thompson``: the smallest value of one joint
        posterior sample; ``lcb``: the smallest lower confidence bound μ − κσ); ``data``'s first
        ``n_done`` rows are completed trials in trial order
        (the trust region's history; its first ``start`` rows are the starts)."""
        s = self.settings
        gp = self.model.fit(cols, data, noise)
        levels = data[0]
        mu_obs = gp.predict(encode(cols, levels))
        best = float(np.min(mu_obs))

        def score(cands: np.ndarray) -> np.ndarray:
            mu, sd = gp.predict(encode(cols, cands), return_std=True)
            out = -(mu - s.lcb_kappa * sd) if lcb else log_expected_improvement(mu, sd, best)
            return np.where(unmeasured(cands, seen), out, -np.inf)

        if enumerable(cols, s.enumerate_limit):
            cands = grid(cols)
            if thompson:
                return self._thompson(gp, cols, cands, seen, rng)
            sc = score(cands)
            if np.isfinite(sc).any():
                return cands[int(np.argmax(sc))].tolist()
            return cand.remeasure(cands, self._failed, rng)  # every point measured: re-measure one
        top = levels[np.argsort(mu_obs)[:5]]
        # drawn before the random points: this order fixes the seeded stream, so suggestions repeat
        local = cand.trust_region_points(cols, levels[:n_done], data[1][:n_done],
                                         start, rng, s) \
            if s.trust_region else np.empty((0, len(cols)))
        cands = np.vstack([random_levels(cols, rng, s.random_candidates), local, cand.neighbours(cols, top)])
        if thompson:
            return self._thompson(gp, cols, cands, seen, rng)
        sc = score(cands)
        # hill-climb on EI from the 3 best candidates, single-knob moves, a few rounds
        starts = cands[np.argsort(-sc)[:3]]
        best_row, best_s = cands[int(np.argmax(sc))], float(np.max(sc))
        for row in starts:
            cur, cur_s = row[None, :], float(score(row[None, :])[0])
            for _ in range(8):
                nb = cand.neighbours(cols, cur)
                ns = score(nb)
                j = int(np.argmax(ns))
                if ns[j] <= cur_s:
                    break
                cur, cur_s = nb[j][None, :], float(ns[j])
            if cur_s > best_s:
                best_row, best_s = cur[0], cur_s
        if not math.isfinite(best_s):
            return random_levels(cols, rng, 1)[0].tolist()
        if s.refine_continuous:
            best_row = cand.refine_continuous(cols, best_row, best_s, score)
        return best_row.tolist()

    def _thompson(self, gp: Any, cols: list[Column], cands: np.ndarray, seen: set[tuple[float, ...]],
                  rng: np.random.Generator) -> list[float]:
        """The unmeasured candidate where one joint posterior sample is lowest. Why: EI keeps
        spending trials next to its incumbent where the posterior is confidently wrong (a knob held
        at the edge of its range, a categorical never switched, one basin of a rugged response);
        a posterior sample moves in proportion to what the model does not know
        (docs/decisions/0007-thompson-half-under-noise.md, 0042-thompson-without-noise.md). The
        sample is drawn from a GP of the ranks of y, not log y (EI stays on log y): two output
        models, each wrong somewhere else (0008, 0041)."""
        cands = np.unique(cands, axis=0)
        fresh = unmeasured(cands, seen)
        if not fresh.any():
            return cand.remeasure(cands, self._failed, rng)
        cands = cands[fresh]
        if len(cands) > self.settings.ts_max:  # large enumerable spaces: a seeded subset
            cands = cands[np.sort(rng.choice(len(cands), self.settings.ts_max, replace=False))]
        if self.settings.thompson_hyper:  # its kernel drawn from the hyperparameters' posterior (0073: off)
            gp = self.model.hyper_sample(cols, gp, rng)
        return cands[thompson_argmin(gp, cols, cands, rng)].tolist()


def _levels_of(trials: list[FrozenTrial], cols: list[Column], exclude: int = -1) -> list[list[float]]:
    """Levels of every trial that has all knobs (complete, running, failed): not to repeat."""
    out = []
    for t in trials:
        if t.number == exclude or t.state == TrialState.WAITING:
            continue
        if all(c.name in t.params for c in cols):
            out.append([c.to_level(t.params[c.name]) for c in cols])
    return out
