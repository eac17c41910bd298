"""Tuning benchmark: problems with known optima, judged by the TRUE value of the config each
method would RECOMMEND (not its luckiest observation).

Problems (all minimize; see ``problems.py``): tables measured once on this machine
(``data/sqlite.csv``, ``data/zlib.csv``, from ``measure_tables.py``) and synthetic
mixed-integer functions. Each runs noise-free and with 5% multiplicative Gaussian noise on
every observation (the truth stays noise-free).

Methods:
* ``random`` — uniform random search; recommends its best observation.
* ``tpe`` — Optuna's TPESampler with its defaults, given hone's ordered encoding (in Optuna
  5 the default TPE is already multivariate, so it equals ``hone``'s search here).
* ``tpe-cat`` — the same TPE as a user would call it on value lists (page sizes, levels):
  ``suggest_categorical``, i.e. unordered; integer ranges stay ``suggest_int``.
* ``atune`` — A-Tune's engine as its source uses it: scikit-optimize ``Optimizer`` with a
  GP (noise 1e-9), 20 random starts, discrete ints as categoricals; best observation.
* ``hone`` — what ``hone tune --sampler auto`` searches with: hone's GP sampler
  (``hone.tune.gp``: scikit-learn GP, ordered/log encoding, estimated noise, 5 Latin-hypercube
  starts, log-EI; in spaces too large to enumerate, EI candidates include 500 trust-region
  points around the best observation since 2026-11-23); recommends its best observation (the
  real ``hone tune`` then confirms the top candidates against the baseline, which is not
  modelled here). ``hone-notr`` = the same without the trust-region points (``hone`` until
  2026-11-23; its rows on the synthetic problems were measured as ``hone``). ``hone-tr`` /
  ``hone-tra`` rows: the trust-region variants as first measured, a subclass trick in this
  file (git history before 2026-11-23); ``hone-tra`` is what ``hone.tune.gp`` does now (same
  suggestions, checked trial by trial). ``hone-s3``: 3 starts instead of 5. The same runs also judge
  two posterior-mean recommendations, ``hone-gp-pm5`` (best posterior mean among the 5
  best-observed) and ``hone-gp-pm`` (among all): measured, not kept (worse on the tables).
  Rows from before the switch (results-s20/fast/fresh.json, 2026-11-22) were TPE: they are
  ``hone-tpe`` now.
* ``hone-rep`` — ``hone`` + the usual noisy-BO remedy, measured and NOT kept (see README):
  when the GP's fitted noise is well above its floor (then: while replicates disagree),
  every 3rd trial re-measures the incumbent while it has < 4 measurements; the
  recommendation is the lowest mean·(1 + cv/√n) over configurations (cv = pooled relative
  sd of the replicates), so a single lucky measurement does not beat a re-measured one.
* ``hone-tpe`` — what ``auto`` was before: Optuna TPE, multivariate + grouped, 10 random
  starts, ordered ints; best observation.
* ``hone+race`` — a candidate layer of ours, measured and NOT kept (it lost): while
  replicates show noise, every 4th evaluation re-measures the incumbent (enqueued, so the
  sampler sees it too); the recommendation is the best *pessimistic* mean
  (mean·(1 + cv/√k)), so a config measured once and lucky does not beat a re-measured one.
* ``hone-local`` — ``hone tune --sampler local`` (``hone.tune.local``, built by
  ``make_sampler``): 5 random starts, TPE alone until trial 20, then every 2nd trial a
  neighbour of the incumbent (±1..k steps in each knob's order, factors on log ranges,
  another choice for categoricals). Opt-in, NOT the default: chosen among the variants
  below on seeds 0–19, it did not hold up on fresh seeds 20–39 (``--seed0 20``; see
  results.md). Variants measured on the way: ``hone-s5`` (TPE with 5 random starts, no
  local moves), ``hone-local-s10`` / ``hone-local3`` (local moves from the end of 10 random
  starts, every 2nd/3rd trial), ``hone-local-s5`` / ``hone-local3-s5`` (5 starts, local from trial 5),
  ``-sm`` (incumbent ranked by its value averaged with its close neighbours', a noise
  guard), ``hone-local-late`` (= ``hone-local``).

Reported per problem: evaluations until the recommended config is within 5% of the optimum
(median over seeds; "–" when fewer than half the seeds got there within the budget) and the
mean regret (% above the optimum) of the recommendation at 30/60/120 evaluations.

Run: ``python benchmarks/tuning/run.py [--seeds 10] [--budget 120] [--jobs 2]``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from multiprocessing import Pool
from pathlib import Path
from typing import Any

import numpy as np
import optuna

sys.path.insert(0, str(Path(__file__).resolve().parent))
from problems import PROBLEMS, Problem

from hone.tune.gp import ATTR_NOISE_CV, TABLE_LENGTH_SCALE_MAX
from hone.tune.samplers import gp_startup_trials, make_sampler

optuna.logging.set_verbosity(optuna.logging.ERROR)
warnings.filterwarnings("ignore")
HERE = Path(__file__).resolve().parent
CHECKPOINTS = (30, 60, 120)
NOISE = 0.05


def noisy(problem: Problem, cfg: dict[str, Any], rng: np.random.Generator, noise: float) -> float:
    return problem.value(cfg) * (1.0 + noise * rng.standard_normal()) if noise else problem.value(cfg)


def _distributions(problem: Problem,
                   lists_as_categories: bool = False) -> dict[str, optuna.distributions.BaseDistribution]:
    out: dict[str, optuna.distributions.BaseDistribution] = {}
    for name, (kind, values) in problem.space.items():
        if kind == "categorical" or (lists_as_categories and kind == "ordinal"):
            out[name] = optuna.distributions.CategoricalDistribution(values)
        else:  # ordinal or int: searched as an ordered index (what hone.tune.space does)
            out[name] = optuna.distributions.IntDistribution(0, len(values) - 1)
    return out


def _decode(problem: Problem, params: dict[str, Any], lists_as_categories: bool = False) -> dict[str, Any]:
    return {n: (params[n] if kind == "categorical" or (lists_as_categories and kind == "ordinal")
                else values[params[n]])
            for n, (kind, values) in problem.space.items()}


def run_random(problem: Problem, seed: int, budget: int, noise: float) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    obs_rng = np.random.default_rng(seed + 10_000)
    recs, best = [], (math.inf, None)
    for _ in range(budget):
        cfg = {n: values[int(rng.integers(len(values)))] for n, (_, values) in problem.space.items()}
        y = noisy(problem, cfg, obs_rng, noise)
        if y < best[0]:
            best = (y, cfg)
        recs.append(best[1])
    return recs


def _run_optuna(problem: Problem, seed: int, budget: int, noise: float, sampler: optuna.samplers.BaseSampler,
                race: bool, lists_as_categories: bool = False) -> list[dict[str, Any]]:
    obs_rng = np.random.default_rng(seed + 10_000)
    study = optuna.create_study(sampler=sampler)
    dists = _distributions(problem, lists_as_categories)
    history: dict[str, list[float]] = {}
    cfgs: dict[str, dict[str, Any]] = {}
    recs: list[dict[str, Any]] = []
    study_params: dict[str, dict[str, Any]] = {}
    best_obs = (math.inf, None)
    noise_seen = True  # until replicates say otherwise
    for i in range(budget):
        if race and noise_seen and i >= 12 and i % 4 == 0 and history:
            inc = _pessimistic_best(history, _pooled_cv(history))
            if len(history[inc]) < 6:
                study.enqueue_trial(study_params[inc])
        trial = study.ask(dists)
        cfg = _decode(problem, trial.params, lists_as_categories)
        key = json.dumps(cfg, sort_keys=True, default=str)
        y = noisy(problem, cfg, obs_rng, noise)
        study.tell(trial, y)
        history.setdefault(key, []).append(y)
        cfgs[key] = cfg
        study_params[key] = trial.params
        if y < best_obs[0]:
            best_obs = (y, cfg)
        if race:
            cv = _pooled_cv(history)
            reps = [v for v in history.values() if len(v) > 1]
            if reps and cv is not None and cv < 0.002:
                noise_seen = False  # replicates agree: measurements are exact, stop re-measuring
            recs.append(cfgs[_pessimistic_best(history, cv or 0.0)])
        else:
            recs.append(best_obs[1])
    return recs


def _pooled_cv(history: dict[str, list[float]]) -> float | None:
    """Pooled relative standard deviation of replicated configs (None without replicates)."""
    num, den = 0.0, 0
    for v in history.values():
        if len(v) > 1:
            m = statistics.fmean(v)
            num += sum(((x - m) / m) ** 2 for x in v)
            den += len(v) - 1
    return math.sqrt(num / den) if den else None


def _pessimistic_best(history: dict[str, list[float]], cv: float | None) -> str:
    cv = 0.05 if cv is None else cv  # before any replicate: assume hone's typical CPU-time noise
    return min(history, key=lambda k: statistics.fmean(history[k]) * (1 + cv / math.sqrt(len(history[k]))))


def run_tpe(problem: Problem, seed: int, budget: int, noise: float) -> list[dict[str, Any]]:
    return _run_optuna(problem, seed, budget, noise, optuna.samplers.TPESampler(seed=seed), race=False)


def run_tpe_cat(problem: Problem, seed: int, budget: int, noise: float) -> list[dict[str, Any]]:
    """Optuna's TPE as a user would call it: value lists via suggest_categorical."""
    return _run_optuna(problem, seed, budget, noise, optuna.samplers.TPESampler(seed=seed), race=False,
                       lists_as_categories=True)


def _hone_sampler(seed: int) -> optuna.samplers.BaseSampler:
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=10, multivariate=True, group=True,
                                      warn_independent_sampling=False)


def run_hone_race(problem: Problem, seed: int, budget: int, noise: float) -> list[dict[str, Any]]:
    return _run_optuna(problem, seed, budget, noise, _hone_sampler(seed), race=True)


def run_hone_local(problem: Problem, seed: int, budget: int, noise: float, period: int = 2,
                   startup: int = 10, smooth: bool = False, local_from: int | None = None) -> list[dict[str, Any]]:
    from hone.tune.local import LocalRefineSampler

    tpe = optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup, multivariate=True, group=True,
                                     warn_independent_sampling=False)
    sampler = LocalRefineSampler(tpe, seed=seed, n_startup_trials=startup, period=period, smooth=smooth,
                                 local_from=local_from)
    return _run_optuna(problem, seed, budget, noise, sampler, race=False)


def run_hone(problem: Problem, seed: int, budget: int, noise: float) -> dict[str, list[dict[str, Any]]]:
    """What ``hone tune --sampler auto`` searches with: ``make_sampler("auto")`` = hone's GP
    sampler (``hone.tune.gp``, 5 Latin-hypercube starts at this budget). One search, three
    recommendation rules judged on it: ``hone`` = the best observation (what ``hone tune``
    takes to confirmation), ``hone-gp-pm5`` = the best posterior mean among the 5 best-observed
    (``HoneGPSampler.rank_trials``), ``hone-gp-pm`` = the best posterior mean of all."""
    obs_rng = np.random.default_rng(seed + 10_000)
    sampler = make_sampler("auto", seed=seed, n_trials=budget)
    study = optuna.create_study(sampler=sampler)
    # what `hone tune` stores from its baseline repeats: the relative noise of one evaluation
    study.set_user_attr(ATTR_NOISE_CV, noise)
    dists = _distributions(problem)
    out: dict[str, list[dict[str, Any]]] = {"hone": [], "hone-gp-pm5": [], "hone-gp-pm": []}
    for _ in range(budget):
        trial = study.ask(dists)
        cfg = _decode(problem, trial.params)
        study.tell(trial, noisy(problem, cfg, obs_rng, noise))
        ranked = sampler.rank_trials(study)  # type: ignore[attr-defined]
        out["hone"].append(_decode(problem, min(ranked, key=lambda t: t.value).params))
        out["hone-gp-pm5"].append(_decode(problem, ranked[0].params))
        out["hone-gp-pm"].append(_decode(problem, sampler.rank_trials(study, top=len(ranked))[0].params))  # type: ignore[attr-defined]
    return out


REP_PERIOD, REP_K, REP_NOISE_GATE = 3, 4, 1e-3  # hone-rep: every 3rd trial, up to 4 measurements


def _rep_groups(study: optuna.Study) -> dict[tuple[Any, ...], list[Any]]:
    """Completed trials grouped by their params (a configuration measured several times)."""
    from optuna.trial import TrialState

    groups: dict[tuple[Any, ...], list[Any]] = {}
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        if t.values and math.isfinite(t.values[0]):
            groups.setdefault(tuple(sorted(t.params.items())), []).append(t)
    return groups


def _rep_cv(groups: dict[tuple[Any, ...], list[Any]]) -> float | None:
    """Pooled relative spread (sd of log y) of replicated configurations; None without any."""
    num, den = 0.0, 0
    for ts in groups.values():
        ys = [float(t.values[0]) for t in ts]
        if len(ys) > 1 and all(y > 0 for y in ys):
            logs = [math.log(y) for y in ys]
            m = statistics.fmean(logs)
            num += sum((x - m) ** 2 for x in logs)
            den += len(logs) - 1
    return math.sqrt(num / den) if den else None


def _rep_best(groups: dict[tuple[Any, ...], list[Any]], cv: float | None) -> tuple[Any, ...]:
    """The recommendation: the lowest mean·(1 + cv/√n) — a configuration's mean inflated by one
    standard error, so one lucky measurement does not beat a re-measured configuration whose
    mean is within noise of it. No replicates (cv None) or exact ones (cv 0): best observation."""
    c = cv or 0.0
    return min(groups, key=lambda k: (statistics.fmean(float(t.values[0]) for t in groups[k])
                                      * (1 + c / math.sqrt(len(groups[k]))), groups[k][0].number))


class _RepGPSampler:
    """hone-rep: hone's GP sampler + re-measurement of the incumbent when noise is detected.

    Noise is detected by the GP's fitted noise term (WhiteKernel variance on standardised y
    above 1e-3, 1000× its floor) until a configuration has been measured twice; from then on
    by the replicates themselves (pooled relative sd > 1e-3; exact replicates switch it off for
    good). With noise, every 3rd trial re-measures the incumbent (lowest mean + 1 standard
    error, see ``_rep_best``) while it has fewer than 4 measurements; other trials are the
    GP's usual log-EI suggestion (never a measured configuration)."""

    def __new__(cls, seed: int, budget: int) -> Any:
        from hone.tune.gp import HoneGPSampler, _columns

        base = make_sampler("auto", seed=seed, n_trials=budget)

        class Rep(HoneGPSampler):
            def _sample_relative(self, study, trial, search_space):  # type: ignore[no-untyped-def]
                if (search_space and len(study.directions) == 1 and trial.number >= self._n_startup
                        and trial.number % REP_PERIOD == 0):
                    groups = _rep_groups(study)
                    cv = _rep_cv(groups)
                    if cv is None and groups:
                        cols = _columns(search_space)
                        data = self._observations(study, study.get_trials(deepcopy=False), cols,
                                                  with_running=False)
                        noisy_ = False
                        if data is not None and len(data[1]) >= 2:
                            gp = self._fit(cols, data[:2])
                            noisy_ = float(gp.kernel_.k2.noise_level) > REP_NOISE_GATE
                    else:
                        noisy_ = cv is not None and cv > 1e-3
                    if noisy_:
                        inc = _rep_best(groups, cv if cv is not None else 0.05)
                        if len(groups[inc]) < REP_K and all(n in search_space for n, _ in inc):
                            return dict(inc)
                return super()._sample_relative(study, trial, search_space)

        rep = Rep.__new__(Rep)
        rep.__dict__.update(base.__dict__)
        return rep


def run_hone_rep(problem: Problem, seed: int, budget: int, noise: float) -> list[dict[str, Any]]:
    """``hone`` + re-measuring the incumbent under detected noise (``_RepGPSampler``);
    recommends by ``_rep_best`` (mean of repeated observations + one standard error)."""
    obs_rng = np.random.default_rng(seed + 10_000)
    study = optuna.create_study(sampler=_RepGPSampler(seed, budget))
    dists = _distributions(problem)
    recs: list[dict[str, Any]] = []
    for _ in range(budget):
        trial = study.ask(dists)
        study.tell(trial, noisy(problem, _decode(problem, trial.params), obs_rng, noise))
        groups = _rep_groups(study)
        best = _rep_best(groups, _rep_cv(groups))
        recs.append(_decode(problem, dict(best)))
    return recs


CONF_R = 3  # hone-conf: a leading configuration is measured up to 3 times


class _ConfGPSampler:
    """hone-conf: hone's GP sampler + confirmation of the leader under detected noise.

    Noise gate as ``hone-rep``: the GP's fitted noise (standardised) above 1e-3 until some
    configuration has been measured twice, then the replicates (pooled relative sd > 1e-3;
    exact replicates close it for good). With noise, the configuration with the lowest mean
    is measured again (the next trial) while it has fewer than ``CONF_R`` measurements — a
    lucky single measurement that takes the lead is checked at once instead of every 3rd
    trial; otherwise the usual log-EI suggestion."""

    def __new__(cls, seed: int, budget: int, r: int = CONF_R) -> Any:
        from hone.tune.gp import HoneGPSampler, _columns

        base = make_sampler("auto", seed=seed, n_trials=budget)

        class Conf(HoneGPSampler):
            def _sample_relative(self, study, trial, search_space):  # type: ignore[no-untyped-def]
                if search_space and len(study.directions) == 1 and trial.number >= self._n_startup:
                    groups = _rep_groups(study)
                    cv = _rep_cv(groups)
                    noisy_ = False
                    if cv is None and groups:
                        cols = _columns(search_space)
                        data = self._observations(study, study.get_trials(deepcopy=False), cols,
                                                  with_running=False)
                        if data is not None and len(data[1]) >= 2:
                            noisy_ = float(self._fit(cols, data[:2]).kernel_.k2.noise_level) > REP_NOISE_GATE
                    elif cv is not None:
                        noisy_ = cv > 1e-3
                    if noisy_:
                        lead = min(groups, key=lambda k: (statistics.fmean(float(t.values[0]) for t in groups[k]),
                                                          groups[k][0].number))
                        if len(groups[lead]) < r and all(n in search_space for n, _ in lead):
                            return dict(lead)
                return super()._sample_relative(study, trial, search_space)

        conf = Conf.__new__(Conf)
        conf.__dict__.update(base.__dict__)
        return conf


def run_hone_conf(problem: Problem, seed: int, budget: int, noise: float, r: int = CONF_R) -> dict[str, Recs]:
    """``hone`` + confirming the leader under detected noise (``_ConfGPSampler``). Judged by
    two rules on the same search: ``hone-conf`` = the lowest mean among configurations
    measured more than once when the replicates disagree (else the best observation),
    ``hone-conf-se`` = the lowest mean·(1 + cv/√n) (``_rep_best``)."""
    obs_rng = np.random.default_rng(seed + 10_000)
    study = optuna.create_study(sampler=_ConfGPSampler(seed, budget, r))
    dists = _distributions(problem)
    tag = "hone-conf" if r == CONF_R else f"hone-conf{r}"
    out: dict[str, Recs] = {tag: [], f"{tag}-se": []}
    for _ in range(budget):
        trial = study.ask(dists)
        study.tell(trial, noisy(problem, _decode(problem, trial.params), obs_rng, noise))
        groups = _rep_groups(study)
        cv = _rep_cv(groups)
        pool = {k: v for k, v in groups.items() if len(v) > 1} if cv else {}
        pool = pool or groups
        means = {k: (statistics.fmean(float(t.values[0]) for t in v), v[0].number) for k, v in groups.items()}
        out[tag].append(_decode(problem, dict(min(pool, key=means.__getitem__))))
        out[f"{tag}-se"].append(_decode(problem, dict(_rep_best(groups, cv))))
    return out


def run_hone_gp(problem: Problem, seed: int, budget: int, noise: float, *, trust_region: bool = True,
                startups: int | None = None, nu: float | None = None, noise_aware: bool = False,
                table_length_scale: float | None = None) -> Recs:
    """hone's GP sampler with one setting changed, recommending its best observation:
    ``hone-notr`` = without the trust-region candidates (what ``hone`` was until 2026-11-23),
    ``hone-s3`` = 3 Latin-hypercube starts instead of 5, ``hone-m32`` = Matérn 3/2 (rougher)
    instead of 5/2. ``table_length_scale`` defaults to None (no cap on the tables): the variants
    were measured before the cap (2026-11-24) and their stored rows reproduce so."""
    from hone.tune.gp import HoneGPSampler

    n_startup = startups if startups is not None else gp_startup_trials(budget)
    sampler = HoneGPSampler(seed=seed, n_startup_trials=n_startup, trust_region=trust_region,
                            noise_cv=noise if noise_aware else None, table_length_scale=table_length_scale)
    if nu is not None:
        kernel = sampler._kernel

        def rough(cols: Any) -> Any:
            k = kernel(cols)
            k.k1.k2.nu = nu  # (Constant × Matern) + White
            return k

        sampler._kernel = rough  # type: ignore[method-assign]
    return _run_optuna(problem, seed, budget, noise, sampler, race=False)


def run_hone_tpe(problem: Problem, seed: int, budget: int, noise: float) -> list[dict[str, Any]]:
    return _run_optuna(problem, seed, budget, noise, _hone_sampler(seed), race=False)


def run_atune(problem: Problem, seed: int, budget: int, noise: float) -> list[dict[str, Any]]:
    """A-Tune's engine as ``analysis/optimizer/optimizer.py`` (engine "bayes") calls it:
    ``normalize_dimensions`` of the knob space, ``cook_estimator("GP", noise=0.00001 ** 2)``,
    ``Optimizer(n_random_starts=20, base_estimator=...)`` with skopt's defaults (gp_hedge,
    10,000 candidate points, 2 kernel-fit restarts); every discrete knob, ints included, an
    unordered ``Categorical``. Seeded per run (A-Tune fixes ``random_state=1``). skopt's
    categorical GP is made fast with exact matrix forms (``atune_fast``), nothing else changes."""
    import atune_fast
    from skopt import Optimizer
    from skopt.space import Categorical
    from skopt.utils import cook_estimator, normalize_dimensions
    from threadpoolctl import threadpool_limits

    atune_fast.patch()
    obs_rng = np.random.default_rng(seed + 10_000)
    names = list(problem.space)
    space = normalize_dimensions([Categorical(list(values), name=n) for n, (_, values) in problem.space.items()])
    est = cook_estimator("GP", space=space, noise=0.00001 ** 2, random_state=seed)
    opt = Optimizer(dimensions=space, n_random_starts=20, random_state=seed, base_estimator=est)
    recs, best = [], (math.inf, None)
    with threadpool_limits(1):
        for _ in range(budget):
            x = opt.ask()
            cfg = dict(zip(names, x, strict=True))
            y = noisy(problem, cfg, obs_rng, noise)
            opt.tell(x, y)
            if y < best[0]:
                best = (y, cfg)
            recs.append(best[1])
    return recs


# a method returns its recommendation after each evaluation, or several (rule name → list)
Recs = list[dict[str, Any]]
METHODS: dict[str, Callable[[Problem, int, int, float], Recs | dict[str, Recs]]] = {
    "hone": run_hone, "hone-rep": run_hone_rep, "hone-conf": run_hone_conf,
    "hone-conf2": lambda p, s, b, n: run_hone_conf(p, s, b, n, r=2),
    "hone-notr": lambda p, s, b, n: run_hone_gp(p, s, b, n, trust_region=False),
    "hone-s3": lambda p, s, b, n: run_hone_gp(p, s, b, n, startups=3),
    "hone-m32": lambda p, s, b, n: run_hone_gp(p, s, b, n, nu=1.5),
    # today's sampler, given the noise as hone tune gives it
    "hone-ts": lambda p, s, b, n: run_hone_gp(p, s, b, n, noise_aware=True,
                                              table_length_scale=TABLE_LENGTH_SCALE_MAX),
    "hone-tpe": run_hone_tpe, "hone+race": run_hone_race, "tpe": run_tpe,
    "tpe-cat": run_tpe_cat, "atune": run_atune,
    "random": run_random,
    "hone-local": lambda p, s, b, n: _run_optuna(p, s, b, n, make_sampler("local", seed=s, n_trials=b), race=False),
    "hone-local3": lambda p, s, b, n: run_hone_local(p, s, b, n, period=3),
    "hone-local-s5": lambda p, s, b, n: run_hone_local(p, s, b, n, startup=5),
    "hone-local-s10": run_hone_local,
    "hone-local-late": lambda p, s, b, n: run_hone_local(p, s, b, n, startup=5, local_from=20),
    "hone-s5": lambda p, s, b, n: _run_optuna(p, s, b, n, optuna.samplers.TPESampler(
        seed=s, n_startup_trials=5, multivariate=True, group=True, warn_independent_sampling=False), race=False),
    "hone-local3-s5": lambda p, s, b, n: run_hone_local(p, s, b, n, period=3, startup=5),
    "hone-local-s5-sm": lambda p, s, b, n: run_hone_local(p, s, b, n, startup=5, smooth=True),
    "hone-local3-s5-sm": lambda p, s, b, n: run_hone_local(p, s, b, n, period=3, startup=5, smooth=True),
}


def one(job: tuple[str, str, float, int, int]) -> list[dict[str, Any]]:
    """Rows of one run: one per recommendation rule (most methods have one)."""
    method, pname, noise, seed, budget = job
    problem = PROBLEMS[pname]()
    t0 = time.perf_counter()
    got = METHODS[method](problem, seed, budget, noise)
    seconds = time.perf_counter() - t0
    rows = []
    for name, recs in (got.items() if isinstance(got, dict) else [(method, got)]):
        true = [problem.value(c) for c in recs]
        opt = problem.optimum
        regret = [(v - opt) / abs(opt) * 100 for v in true]
        reach = next((i + 1 for i, r in enumerate(regret) if r <= 5.0), None)
        rows.append({"method": name, "problem": pname, "noise": noise, "seed": seed, "reach": reach,
                     "budget": budget, "regret": {str(c): regret[c - 1] for c in CHECKPOINTS if c <= budget},
                     "seconds": seconds})
    return rows


def summarize(rows: list[dict[str, Any]], budget: int) -> list[dict[str, Any]]:
    out = []
    keys = sorted({(r["problem"], r["noise"], r["method"]) for r in rows})
    for pname, noise, method in keys:
        sel = [r for r in rows if (r["problem"], r["noise"], r["method"]) == (pname, noise, method)]
        reaches = [r["reach"] if r["reach"] is not None else math.inf for r in sel]
        med = statistics.median(reaches)
        out.append({
            "problem": pname, "noise": noise, "method": method, "seeds": len(sel),
            "evals_to_5pct": None if math.isinf(med) else med,
            "reached": sum(1 for r in sel if r["reach"] is not None),
            "budget": min(r.get("budget", budget) for r in sel),
            **{f"regret@{c}": (statistics.fmean(r["regret"][str(c)] for r in sel)
                               if all(str(c) in r["regret"] for r in sel) else None) for c in CHECKPOINTS},
            # rows measured by noise_variants.py before it timed its runs have no seconds
            "seconds": statistics.fmean(secs) if (secs := [r["seconds"] for r in sel if "seconds" in r]) else math.nan,
        })
    return out


def markdown(summary: list[dict[str, Any]], budget: int) -> str:
    cps = [c for c in CHECKPOINTS if c <= budget]
    lines = ["| problem | noise | method | evals to 5% (median) | reached | " + " | ".join(
        f"regret@{c} %" for c in cps) + " | s/run |", "|" + "---|" * (6 + len(cps))]
    for s in summary:
        ev = f"> {s['budget']}" if s["evals_to_5pct"] is None else f"{s['evals_to_5pct']:g}"
        reg = [("–" if s.get(f"regret@{c}") is None else f"{s[f'regret@{c}']:.2f}") for c in cps]
        lines.append(f"| {s['problem']} | {s['noise']:.0%} | {s['method']} | {ev} | {s['reached']}/{s['seeds']} | "
                     + " | ".join(reg) + (" | – |" if math.isnan(s["seconds"]) else f" | {s['seconds']:.1f} |"))
    return "\n".join(lines)


LIBRARIES = ("atune", "opentuner", "tpe", "tpe-cat", "random")  # "the best single library"


def verdicts(summary: list[dict[str, Any]], budget: int, method: str = "hone") -> str:
    """The issue's goals for ``method``, case by case: ≤ 0.5× the evaluations of A-Tune's
    engine and of OpenTuner; ≤ 0.8× the best single library's; noisy regret within 1 point
    of the noise-free run. A method that never got to 5% counts as its budget + 1, a lower
    bound: so a ratio against it is only proven when ``method``'s own figure is small enough
    (e.g. A-Tune ran to 30: "> 30" vs ≤ 15 is ≤ 0.5×; vs 20 it is unproven)."""
    by = {(x["problem"], x["noise"], x["method"]): x for x in summary}

    def ev(p: str, n: float, m: str) -> tuple[float, bool] | None:
        """(median evaluations to 5%, exact?) — not exact = not reached, budget + 1 a lower bound."""
        s = by.get((p, n, m))
        if s is None:
            return None
        return (s["budget"] + 1.0, False) if s["evals_to_5pct"] is None else (float(s["evals_to_5pct"]), True)

    def ratio_ok(mine: tuple[float, bool], other: tuple[float, bool], k: float) -> str:
        """'yes' / 'no' / 'unproven' for mine ≤ k × other."""
        if not mine[1]:
            return "no"
        if mine[0] <= k * other[0]:
            return "yes"
        return "no" if other[1] else "unproven"

    cases = sorted({(x["problem"], x["noise"]) for x in summary if x["method"] == method})
    if not cases:
        return f"(no rows for {method})"
    head = (f"| problem | noise | {method} | atune | opentuner | best library | vs atune | vs opentuner "
            "| ≤0.5× both | ≤0.8× best |")
    lines = [head, "|" + "---|" * 10]
    counts = {"both": 0, "both_unproven": 0, "best": 0, "best_unproven": 0}
    fmt = lambda e: "–" if e is None else (f"{e[0]:g}" if e[1] else f"> {e[0] - 1:g}")  # noqa: E731
    for p, n in cases:
        mine = ev(p, n, method)
        assert mine is not None
        at, ot = ev(p, n, "atune"), ev(p, n, "opentuner")
        libs = {m: e for m in LIBRARIES if (e := ev(p, n, m)) is not None}
        exact = {m: e for m, e in libs.items() if e[1]}
        # the best library: the fewest evaluations among those that got there (else the
        # smallest lower bound); a smaller lower bound of another (A-Tune's "> 30") may still hide a better one
        best_name = min(exact or libs, key=lambda m: (exact or libs)[m][0]) if libs else None
        r_at = ratio_ok(mine, at, 0.5) if at else "–"
        r_ot = ratio_ok(mine, ot, 0.5) if ot else "–"
        both = "yes" if r_at == r_ot == "yes" else ("no" if "no" in (r_at, r_ot) else "unproven")
        if not libs:
            best = "–"
        elif not mine[1]:
            best = "no"
        elif mine[0] <= 0.8 * min(e[0] for e in libs.values()):
            best = "yes"
        elif exact and mine[0] > 0.8 * min(e[0] for e in exact.values()):
            best = "no"
        else:
            best = "unproven"
        counts["both"] += both == "yes"
        counts["both_unproven"] += both == "unproven"
        counts["best"] += best == "yes"
        counts["best_unproven"] += best == "unproven"
        best_txt = f"{best_name} {fmt(libs[best_name])}" if best_name else "–"
        lines.append(f"| {p} | {n:.0%} | {fmt(mine)} | {fmt(at)} | {fmt(ot)} | {best_txt} | {r_at} | {r_ot} "
                     f"| {both} | {best} |")
    lines += ["", f"- {method} ≤ 0.5× A-Tune engine's and OpenTuner's evaluations: {counts['both']}/{len(cases)}"
              f" cases (unproven: {counts['both_unproven']})",
              f"- {method} ≤ 0.8× the best single library's evaluations: {counts['best']}/{len(cases)} cases"
              f" (unproven: {counts['best_unproven']})"]
    last = f"regret@{max(c for c in CHECKPOINTS if c <= budget)}"
    for p in sorted({c[0] for c in cases}):
        r = {s["noise"]: s[last] for s in summary if s["problem"] == p and s["method"] == method}
        if len(r) == 2 and None not in r.values():
            lines.append(f"- {p}: {method} {last} noise-free {r[0.0]:.2f}% vs 5% noise {r[NOISE]:.2f}%"
                         f" ({'within' if r[NOISE] - r[0.0] <= 1 else 'NOT within'} 1 point)")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--budget", type=int, default=120)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed0", type=int, default=0, help="first seed (fresh seeds to check a tuned variant)")
    ap.add_argument("--problems", nargs="*", default=list(PROBLEMS))
    ap.add_argument("--noise", nargs="*", type=float, default=[0.0, NOISE], help="noise levels to run")
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    ap.add_argument("--tag", default="", help="write results-TAG.json/md (for runs split by method)")
    ap.add_argument("--exclude", nargs="*", help="methods to leave out of --merge")
    ap.add_argument("--merge", nargs="*", help="combine earlier results-*.json files into results.md")
    ap.add_argument("--out", default="results.md", help="--merge: the Markdown file to write (in this folder)")
    ap.add_argument("--verdict", nargs="*", default=["hone"], help="--merge: methods whose goals to check")
    ap.add_argument("--seed-range", nargs=2, type=int, metavar=("LO", "HI"),
                    help="--merge: only seeds LO..HI of each method's cases that have any (others: stored seeds)")
    args = ap.parse_args()
    if args.merge:
        # one row per (method, problem, noise, seed): files may overlap (10- and 20-seed runs)
        uniq = {(r["method"], r["problem"], r["noise"], r["seed"]): r
                for f in args.merge for r in json.loads(Path(f).read_text())["rows"]
                if r["method"] not in (args.exclude or [])}
        rows = list(uniq.values())
        if args.seed_range:  # per (method, problem, noise): A-Tune has 0-39 on sqlite, 0-9 elsewhere
            lo, hi = args.seed_range
            inside = {(r["method"], r["problem"], r["noise"]) for r in rows if lo <= r["seed"] <= hi}
            rows = [r for r in rows if (r["method"], r["problem"], r["noise"]) not in inside or lo <= r["seed"] <= hi]
        summary = summarize(rows, args.budget)
        md = markdown(summary, args.budget)
        ver = "\n\n".join(verdicts(summary, args.budget, m) for m in args.verdict)
        print(md + "\n\n" + ver)
        (HERE / args.out).write_text(f"# Tuning benchmark results\n\n{md}\n\n{ver}\n")
        return
    jobs = [(m, p, n, s, args.budget) for p in args.problems for n in args.noise for m in args.methods
            for s in range(args.seed0, args.seed0 + args.seeds)]
    t0 = time.perf_counter()
    with Pool(args.jobs) as pool:
        rows = [r for rs in pool.map(one, jobs, chunksize=1) for r in rs]
    tag = f"-{args.tag}" if args.tag else ""
    (HERE / f"results{tag}.json").write_text(json.dumps({"rows": rows}, indent=1))
    summary = summarize(rows, args.budget)
    md = markdown(summary, args.budget)
    ver = "\n\n".join(verdicts(summary, args.budget, m) for m in args.methods)
    print(md)
    print()
    print(ver)
    print(f"\n({len(jobs)} runs in {time.perf_counter() - t0:.0f} s)")
    (HERE / f"results{tag}.json").write_text(json.dumps({"summary": summary, "rows": rows}, indent=1))
    (HERE / f"results{tag}.md").write_text(f"# Tuning benchmark results\n\n{md}\n\n{ver}\n")


if __name__ == "__main__":
    main()
