"""hone's GP sampler (``--sampler gp`` = ``auto``, hone.tune.gp): domains, determinism,
direction, constraints, running trials, and its posterior-mean ranking."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution, distribution_to_json
from optuna.trial import TrialState, create_trial

from hone.spec.models import Metric
from hone.tune.confirm import pick_candidates
from hone.tune.gp import (
    ATTR_BASELINE_POINT,
    ATTR_NOISE_CV,
    ATTR_SPACE,
    ATTR_START,
    GPSettings,
    HoneGPSampler,
    columns,
    log_expected_improvement,
    trust_region_length,
)
from hone.tune.gp import candidates as gp_candidates
from hone.tune.gp.encoding import encode
from hone.tune.gp.model import log_jacobian
from hone.tune.objective import Objective
from hone.tune.samplers import make_sampler

optuna.logging.set_verbosity(optuna.logging.ERROR)
DEFAULTS = GPSettings()
ENUMERATE_LIMIT = DEFAULTS.enumerate_limit
LENGTH_SCALE_MAX = DEFAULTS.length_scale_max
LENGTH_SCALE_PRIOR_SD = DEFAULTS.length_scale_prior
NOISY_CV = DEFAULTS.noisy_cv
PRIOR_AFTER = DEFAULTS.prior_after
PROBE_EVERY = DEFAULTS.probe_every
TABLE_LENGTH_SCALE_MAX = DEFAULTS.table_length_scale
TR_CANDIDATES = DEFAULTS.tr_candidates
TS_MAX = DEFAULTS.ts_max

MIXED = {
    "idx": IntDistribution(0, 6),  # an ordinal list searched as its index
    "stepped": IntDistribution(8, 64, step=8),
    "logint": IntDistribution(1, 4096, log=True),
    "f": FloatDistribution(0.0, 1.0),
    "logf": FloatDistribution(1e-4, 1.0, log=True),
    "cat": CategoricalDistribution(["a", "b", "c"]),
    "flag": CategoricalDistribution([False, True]),
}


def _mixed_value(p: dict) -> float:
    # best: idx 4, stepped 40, logint ~64, f 0.3, logf ~1e-2, cat "c", flag True
    return (1.0 + (p["idx"] - 4) ** 2 / 36 + ((p["stepped"] - 40) / 56) ** 2
            + (math.log2(p["logint"]) - 6) ** 2 / 36 + (p["f"] - 0.3) ** 2
            + (math.log10(p["logf"]) + 2) ** 2 / 16 + {"a": 0.5, "b": 0.3, "c": 0.0}[p["cat"]]
            + (0.0 if p["flag"] else 0.2))


def _run(seed: int, trials: int = 20, direction: str = "minimize", fn=_mixed_value, dists=MIXED) -> optuna.Study:
    study = optuna.create_study(sampler=make_sampler("gp", seed=seed, n_trials=trials), direction=direction)
    for _ in range(trials):
        t = study.ask(dists)
        study.tell(t, fn(t.params))
    return study


def test_suggestions_stay_in_every_kind_of_domain():
    study = _run(seed=4, trials=16)
    assert len(study.trials) == 16
    for t in study.trials:
        for name, dist in MIXED.items():
            assert dist._contains(dist.to_internal_repr(t.params[name])), (name, t.params[name])
    # log ranges are searched in log space: the GP's picks are not all crowded at the top decade
    assert min(t.params["logint"] for t in study.trials) < 400


def test_same_seed_same_suggestions_other_seed_others():
    a, b, c = (_run(seed=s, trials=14) for s in (7, 7, 8))
    assert [t.params for t in a.trials] == [t.params for t in b.trials]
    assert [t.params for t in a.trials] != [t.params for t in c.trials]


def test_gp_beats_random_search_on_a_mixed_space():
    gp_best, random_best = [], []
    for seed in range(3):
        study = _run(seed=seed, trials=30)
        best = HoneGPSampler(seed=seed).rank_trials(study)[0]
        assert best.params["cat"] == "c"
        gp_best.append(_mixed_value(best.params))
        rnd = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
        for _ in range(30):
            t = rnd.ask(MIXED)
            rnd.tell(t, _mixed_value(t.params))
        random_best.append(rnd.best_value)
    # the optimum is 1.0; measured: GP ~1.17, random ~1.38 (mean best of 30 over seeds 0-2)
    assert np.mean(gp_best) < np.mean(random_best) - 0.1, (gp_best, random_best)


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_direction_is_respected(direction):
    dists = {"x": IntDistribution(0, 40)}
    study = _run(seed=2, trials=16, direction=direction, fn=lambda p: 10.0 + p["x"], dists=dists)
    late = [t.params["x"] for t in study.trials[8:]]
    best = HoneGPSampler(seed=2).rank_trials(study)[0].params["x"]
    # the late trials lean to the better half (the rest of a noise-free 1-D line is exploration)
    if direction == "maximize":
        assert np.median(late) > 20 and best >= 37, (late, best)
    else:
        assert np.median(late) < 20 and best <= 3, (late, best)


def test_no_configuration_is_suggested_twice_in_a_small_space():
    dists = {"x": IntDistribution(0, 3), "mode": CategoricalDistribution(["p", "q", "r"])}  # 12 configs
    study = _run(seed=0, trials=12, fn=lambda p: 1.0 + p["x"] + (p["mode"] == "q"), dists=dists)
    seen = [(t.params["x"], t.params["mode"]) for t in study.trials]
    assert len(set(seen)) == 12


def test_two_running_trials_get_different_points():
    dists = {"x": IntDistribution(0, 50), "y": IntDistribution(0, 50)}
    study = optuna.create_study(sampler=HoneGPSampler(seed=5, n_startup_trials=4))

    def f(p: dict) -> float:
        return 1.0 + ((p["x"] - 30) / 50) ** 2 + ((p["y"] - 12) / 50) ** 2

    for _ in range(8):
        t = study.ask(dists)
        study.tell(t, f(t.params))
    for _ in range(5):  # two fleet workers: both asked before either reports back
        t1, t2 = study.ask(dists), study.ask(dists)
        assert t1.params != t2.params
        done = [c.params for c in study.get_trials(states=(TrialState.COMPLETE,))]
        assert t1.params not in done and t2.params not in done
        study.tell(t1, f(t1.params))
        study.tell(t2, f(t2.params))


def test_infeasible_region_is_avoided_and_never_recommended():
    # the objective rewards large x, the constraint forbids x > 20
    dists = {"x": IntDistribution(0, 40), "y": IntDistribution(0, 10)}

    def constraints(t: optuna.trial.FrozenTrial) -> list[float]:
        return [float(t.params["x"] - 20)]

    sampler = make_sampler("gp", seed=3, n_trials=24, constraints_func=constraints)
    study = optuna.create_study(sampler=sampler)
    for _ in range(24):
        t = study.ask(dists)
        t.set_user_attr("hone_constraints", [float(t.params["x"] - 20)])
        study.tell(t, 100.0 - t.params["x"] + 0.1 * t.params["y"])
    late = [t.params["x"] for t in study.trials[10:]]
    assert sum(x > 20 for x in late) <= len(late) // 3, late  # the Thompson half still explores (0042)
    ranked = sampler.rank_trials(study)
    assert all(t.params["x"] <= 20 for t in ranked)
    assert ranked[0].params["x"] >= 17


def _noisy_study() -> optuna.Study:
    """A 1-D bowl (optimum x = 5) measured with 5% noise, plus one lucky reading at x = 18
    whose neighbours say it is bad: the best *observation* is a fluke."""
    rng = np.random.default_rng(0)
    study = optuna.create_study()
    dist = {"x": IntDistribution(0, 20)}
    for x in range(0, 21):
        true = 1.0 + ((x - 5) / 10) ** 2
        value = 0.8 if x == 18 else true * (1 + 0.05 * rng.standard_normal())
        study.add_trial(create_trial(params={"x": x}, distributions=dist, value=value))
    return study


def test_posterior_mean_ranking_sinks_a_lucky_single_measurement():
    study = _noisy_study()
    assert study.best_trial.params["x"] == 18  # the luckiest observation
    ranked = HoneGPSampler(seed=0).rank_trials(study)
    assert ranked[0].params["x"] in (3, 4, 5, 6, 7)
    assert {t.number for t in ranked} == {t.number for t in study.trials}


def test_log_ei_is_finite_and_ordered_far_in_the_tail():
    mu = np.array([0.0, 5.0, 20.0, 60.0])
    sd = np.ones(4)
    lei = log_expected_improvement(mu, sd, best=0.0)
    assert np.all(np.isfinite(lei))
    assert np.all(np.diff(lei) < 0)  # worse means, less improvement expected
    # matches the closed form where EI does not underflow
    z = -5.0
    ei = math.exp(-z * z / 2) / math.sqrt(2 * math.pi) + z * 0.5 * math.erfc(-z / math.sqrt(2))
    assert lei[1] == pytest.approx(math.log(ei), rel=1e-6)


def test_multi_objective_studies_go_to_the_fallback_sampler():
    sampler = make_sampler("gp", seed=0, n_trials=10)
    study = optuna.create_study(sampler=sampler, directions=["minimize", "maximize"])
    for _ in range(10):
        t = study.ask({"x": IntDistribution(0, 9)})
        study.tell(t, [t.params["x"], t.params["x"] ** 2])
    assert len(study.trials) == 10 and all(t.state == TrialState.COMPLETE for t in study.trials)


def test_trust_region_length_shrinks_when_stalled_and_grows_on_a_streak():
    assert trust_region_length(np.array([5.0, 4.0]), start=2) == 0.25  # no history after the starts
    stalled = np.array([1.0] + [2.0] * 6)  # 6 trials without a new best: halved twice
    assert trust_region_length(stalled, start=1) == pytest.approx(0.0625)
    assert trust_region_length(np.array([1.0] + [2.0] * 60), start=1) == pytest.approx(1 / 64)  # the floor
    streak = np.array([10.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0])  # 6 new bests in a row: doubled 3x, capped
    assert trust_region_length(streak, start=1) == 0.5
    assert trust_region_length(np.array([1.0, 0.99999]), start=1) == 0.25  # a 1e-5 gain is no new best
    turbo = GPSettings(tr_shrink_after=0)  # TuRBO's patience: max(4, knobs) trials
    assert trust_region_length(stalled, start=1, settings=turbo, knobs=2) == pytest.approx(0.125)  # 6 // 4
    assert trust_region_length(stalled, start=1, settings=turbo, knobs=6) == pytest.approx(0.125)  # 6 // 6
    assert trust_region_length(stalled, start=1, settings=turbo, knobs=7) == 0.25
    restart = GPSettings(tr_restart=True)  # 0.25 → 1/64 in 12 stalled trials, the 15th starts again
    assert trust_region_length(np.array([1.0] + [2.0] * 14), start=1, settings=restart) == pytest.approx(1 / 64)
    assert trust_region_length(np.array([1.0] + [2.0] * 15), start=1, settings=restart) == 0.25
    assert trust_region_length(np.array([1.0] + [2.0] * 18), start=1, settings=restart) == 0.125


def _big_int_study(seed: int) -> optuna.Study:
    """Observations on a space too large to enumerate (64^4 × 3): the trust-region path."""
    dists = {f"x{i}": IntDistribution(0, 63) for i in range(4)} | {"c": CategoricalDistribution(["a", "b", "c"])}
    rng = np.random.default_rng(seed)
    study = optuna.create_study()
    for _ in range(12):
        p = {f"x{i}": int(rng.integers(64)) for i in range(4)} | {"c": str(rng.choice(["a", "b", "c"]))}
        value = 1.0 + sum((p[f"x{i}"] - 20) ** 2 for i in range(4)) / 1e3 + (p["c"] != "b")
        study.add_trial(create_trial(params=p, distributions=dists, value=value))
    return study


def test_same_seed_and_observations_give_the_same_suggestion_with_the_trust_region(monkeypatch):
    study = _big_int_study(0)
    dists = study.trials[0].distributions
    calls = []
    original = gp_candidates.trust_region_points
    monkeypatch.setattr(gp_candidates, "trust_region_points", lambda *a: calls.append(1) or original(*a))
    picks = []
    for _ in range(2):  # fresh samplers: the suggestion depends on (seed, observations) alone
        clone = optuna.create_study(sampler=HoneGPSampler(seed=3))
        clone.add_trials(study.trials)
        picks.append(clone.ask(dists).params)
    assert picks[0] == picks[1]
    assert len(calls) == 2  # the path with trust-region candidates


def test_trust_region_points_stay_in_the_domain_around_the_best_observation():
    study = _big_int_study(1)
    sampler = HoneGPSampler(seed=0)
    cols = columns(study.trials[0].distributions)
    levels, y, n_done, _ = sampler._observations(study, study.trials, cols, with_running=False)
    assert n_done == len(y) == 12
    pts = gp_candidates.trust_region_points(cols, levels, y, 5, np.random.default_rng(0), sampler.settings)
    assert pts.shape == (TR_CANDIDATES, len(cols))
    for i, c in enumerate(cols):
        assert pts[:, i].min() >= 0 and pts[:, i].max() <= c.size - 1
        assert np.all(pts[:, i] == np.round(pts[:, i]))
    inc = levels[int(np.argmin(y))]
    # 5 knobs, ordered ones moved with probability 2/5 by N(0, 0.25 × 63): most points stay close
    ordered = [i for i, c in enumerate(cols) if not c.categorical]
    dist = np.abs(pts[:, ordered] - inc[ordered]).max(axis=1)
    assert np.median(dist) < 0.25 * 63 and (dist > 0).mean() > 0.5


# -- noisy measurements: every other suggestion a Thompson sample --------------------------------

def _noisy_bowl_study(seed: int, noise_cv: float | None, trials: int = 16, attr: bool = False) -> optuna.Study:
    """A noisy 2-knob bowl (5% multiplicative noise), the noise given to the sampler or the study."""
    dists = {"x": IntDistribution(0, 30), "mode": CategoricalDistribution(["p", "q", "r"])}
    sampler = HoneGPSampler(seed=seed, n_startup_trials=4, noise_cv=None if attr else noise_cv)
    study = optuna.create_study(sampler=sampler)
    if attr:
        study.set_user_attr(ATTR_NOISE_CV, noise_cv)
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        t = study.ask(dists)
        true = 1.0 + ((t.params["x"] - 21) / 30) ** 2 + 0.3 * (t.params["mode"] != "q")
        study.tell(t, true * (1 + 0.05 * rng.standard_normal()))
    return study


def test_thompson_samples_are_a_seeded_share_of_the_suggestions_and_stay_deterministic(monkeypatch):
    calls: list[int] = []
    original = HoneGPSampler._thompson
    monkeypatch.setattr(HoneGPSampler, "_thompson", lambda self, *a: calls.append(1) or original(self, *a))
    noisy = _noisy_bowl_study(2, 0.05)
    # 12 model-based suggestions, a seeded coin each: some Thompson, some EI — with or without noise
    assert 0 < len(calls) < 12, calls
    calls.clear()
    quiet = _noisy_bowl_study(2, None)
    assert 0 < len(calls) < 12, calls
    calls.clear()
    again = _noisy_bowl_study(2, 0.05, attr=True)  # the noise from the study (what hone tune stores)
    assert [t.params for t in again.trials] == [t.params for t in noisy.trials]
    seen = [(t.params["x"], t.params["mode"]) for t in noisy.trials]
    assert len(set(seen)) == len(seen)  # Thompson samples never repeat a measured configuration
    calls.clear()
    study = optuna.create_study(sampler=HoneGPSampler(seed=2, n_startup_trials=4, thompson_share=0.0))
    for _ in range(8):
        t = study.ask({"x": IntDistribution(0, 30)})
        study.tell(t, 1.0 + t.params["x"])
    assert calls == [] and len(quiet.trials) == 16  # share 0: EI only


def _tpe_share_study(share: float, trials: int = 24) -> optuna.Study:
    dists = {"x": IntDistribution(0, 30), "mode": CategoricalDistribution(["p", "q", "r"])}
    study = optuna.create_study(sampler=HoneGPSampler(seed=2, n_startup_trials=4, tpe_share=share))
    for _ in range(trials):
        t = study.ask(dists)
        study.tell(t, 1.0 + ((t.params["x"] - 21) / 30) ** 2 + 0.3 * (t.params["mode"] != "q"))
    return study


def test_the_tpe_share_is_a_seeded_share_of_the_suggestions(monkeypatch):
    from optuna.samplers import TPESampler

    calls: list[int] = []
    original = TPESampler.sample_relative

    def counted(self, study, trial, space):
        calls.append(trial.number)
        return original(self, study, trial, space)

    monkeypatch.setattr(TPESampler, "sample_relative", counted)
    study = _tpe_share_study(0.25)
    # 20 model-based suggestions, a seeded coin each (0059): some TPE's, most the GP's; none repeats
    assert 0 < len(calls) < 10 and all(n >= 4 for n in calls), calls
    assert [t.params for t in _tpe_share_study(0.25).trials] == [t.params for t in study.trials]
    seen = [(t.params["x"], t.params["mode"]) for t in study.trials]
    assert len(set(seen)) == len(seen)
    calls.clear()
    _tpe_share_study(0.0)
    assert calls == []  # hone's default: the GP only


def test_a_tpe_suggestion_of_a_measured_configuration_goes_to_the_gp(monkeypatch):
    from optuna.samplers import TPESampler

    # TPE proposes the first trial's configuration every time; the GP suggests instead
    monkeypatch.setattr(TPESampler, "sample_relative", lambda self, study, trial, space: dict(study.trials[0].params))
    dists = {"x": IntDistribution(0, 5), "y": IntDistribution(0, 3)}
    study = optuna.create_study(sampler=HoneGPSampler(seed=1, n_startup_trials=3, tpe_share=1.0))
    for _ in range(12):
        t = study.ask(dists)
        study.tell(t, float((t.params["x"] - 3) ** 2 + t.params["y"]))
    configs = [(t.params["x"], t.params["y"]) for t in study.trials]
    assert len(set(configs)) == len(configs)


def test_thompson_sample_on_a_large_enumerable_space_uses_a_bounded_subset(monkeypatch):
    # 3 × 21 × 21 × 11 = 14 553 configurations (enumerated for EI): the sample takes TS_MAX of them
    dists = {"a": IntDistribution(0, 20), "b": IntDistribution(0, 20), "c": IntDistribution(0, 10),
             "m": CategoricalDistribution(["u", "v", "w"])}
    study = optuna.create_study(sampler=HoneGPSampler(seed=1, n_startup_trials=5, noise_cv=0.05))
    rng = np.random.default_rng(0)
    for _ in range(14):
        t = study.ask(dists)
        p = t.params
        study.tell(t, (1 + (p["a"] - 5) ** 2 / 400 + (p["b"] - 15) ** 2 / 400 + p["c"] / 20)
                   * (1 + 0.05 * rng.standard_normal()))
    sampler = study.sampler
    cols = columns(dists)
    levels, y, _, _ = sampler._observations(study, study.trials, cols, with_running=False)
    gp = sampler.model.fit(cols, (levels, y))
    grids = np.meshgrid(*[np.arange(c.size, dtype=float) for c in cols], indexing="ij")
    cands = np.column_stack([g.ravel() for g in grids])
    assert len(cands) > TS_MAX
    seen = {tuple(r) for r in levels.tolist()}
    sizes: list[int] = []
    cholesky = np.linalg.cholesky
    monkeypatch.setattr(np.linalg, "cholesky", lambda m: sizes.append(len(m)) or cholesky(m))
    pick = sampler._thompson(gp, cols, cands, seen, np.random.default_rng(3))
    assert sizes and max(sizes) == TS_MAX
    assert tuple(pick) not in seen
    assert all(0 <= v <= c.size - 1 for v, c in zip(pick, cols, strict=True))


def test_thompson_samples_model_the_ranks_and_ei_log_y(monkeypatch):
    from scipy.stats import norm, rankdata

    seen_y: list[tuple[bool, np.ndarray]] = []
    original = HoneGPSampler._ei_argmax

    def spy(self, cols, data, rng, seen, n_done, thompson=False, start=None, lcb=False, noise=0.0):  # type: ignore[no-untyped-def]
        seen_y.append((thompson, data[1][:n_done].copy()))
        return original(self, cols, data, rng, seen, n_done, thompson=thompson, start=start, lcb=lcb, noise=noise)

    monkeypatch.setattr(HoneGPSampler, "_ei_argmax", spy)
    study = _noisy_bowl_study(2, 0.05)
    raw = np.array([t.value for t in study.trials], dtype=float)
    kinds = set()
    for thompson, y in seen_y:
        values = raw[:len(y)]
        expect = norm.ppf((rankdata(values) - 0.5) / len(values)) if thompson else np.log(values)
        assert np.allclose(y, (expect - expect.mean()) / expect.std()), thompson
        kinds.add(thompson)
    assert kinds == {True, False}


PLANE = {"x": FloatDistribution(0.0, 1.0), "z": FloatDistribution(0.0, 1.0)}
SHAPES = {  # a cost over PLANE whose log is a smooth bowl, and two that are smooth or sharp in y itself
    "exponential": lambda p: math.exp(8 * ((p["x"] - 0.3) ** 2 + (p["z"] - 0.6) ** 2)),
    "bowl": lambda p: 1 + 100 * ((p["x"] - 0.3) ** 2 + (p["z"] - 0.6) ** 2),
    "ridge": lambda p: 1 + 100 * (abs(p["x"] - 0.3) + abs(p["z"] - 0.6)),
}


@pytest.mark.parametrize(("shape", "modelled"), [("exponential", "log"), ("bowl", "y"), ("ridge", "y")])
def test_the_evidence_warp_models_log_y_or_y_whichever_the_data_make_likelier(shape, modelled):
    fn = SHAPES[shape]
    for seed in range(3):  # 15 configurations spread over the plane
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
        study.optimize(lambda t: fn({k: t.suggest_float(k, 0.0, 1.0) for k in PLANE}), n_trials=15)
        raw = np.array([t.value for t in study.trials])
        y = HoneGPSampler(seed=seed, warp="evidence")._observations(study, study.trials, columns(PLANE),
                                                                    with_running=False)[1]
        expect = np.log(raw) if modelled == "log" else raw
        assert np.allclose(y, (expect - expect.mean()) / expect.std()), seed
        # the default keeps log y
        fixed = HoneGPSampler(seed=seed)._observations(study, study.trials, columns(PLANE), with_running=False)[1]
        assert np.allclose(fixed, (np.log(raw) - np.log(raw).mean()) / np.log(raw).std())


def test_the_log_jacobian_is_the_density_correction_of_the_standardised_warp():
    raw = np.array([1.0, 2.0, 5.0, 40.0, 300.0])
    for log in (True, False):
        g = np.log if log else (lambda v: v)

        def z(values: np.ndarray, g=g) -> np.ndarray:  # the standardisation's mean and sd held at raw's
            return (g(values) - g(raw).mean()) / g(raw).std()

        h = 1e-6 * raw
        numeric = np.sum(np.log((z(raw + h) - z(raw - h)) / (2 * h)))
        assert log_jacobian(raw, log) == pytest.approx(numeric, rel=1e-6)
    assert log_jacobian(np.array([3.0, 3.0, 3.0]), True) == -math.inf


def _searched(sampler: HoneGPSampler, dists: dict, fn, trials: int) -> optuna.Study:
    study = optuna.create_study(sampler=sampler)
    for _ in range(trials):
        t = study.ask(dists)
        study.tell(t, fn(t.params))
    return study


def _length_scales(fitter: HoneGPSampler, study: optuna.Study, dists: dict) -> np.ndarray:
    """The Matérn length scales of ``fitter``'s GP on ``study``'s observations."""
    cols = columns(dists)
    levels, y, _, _ = fitter._observations(study, study.trials, cols, with_running=False)
    return np.atleast_1d(fitter.model.fit(cols, (levels, y)).kernel_.k1.k2.length_scale)


def _fitted_length_scales(sampler: HoneGPSampler, dists: dict, fn, trials: int = 20) -> np.ndarray:
    return _length_scales(sampler, _searched(sampler, dists, fn, trials), dists)


def test_length_scales_stay_within_a_knobs_range_only_in_enumerable_spaces():
    # "inert" barely matters: left free, its length scale runs far past its whole range
    def fn(p: dict) -> float:
        return 1.0 + ((p["x"] - 5) / 9) ** 2 + 1e-4 * p["inert"]

    small = {"x": IntDistribution(0, 9), "inert": IntDistribution(0, 9)}
    capped = _fitted_length_scales(HoneGPSampler(seed=3, n_startup_trials=5), small, fn)
    free = _fitted_length_scales(HoneGPSampler(seed=3, n_startup_trials=5, table_length_scale=None), small, fn)
    assert capped.max() <= TABLE_LENGTH_SCALE_MAX + 1e-9
    assert free.max() > 2 * TABLE_LENGTH_SCALE_MAX  # the cap is what holds it, not the data
    large = {"x": IntDistribution(0, 9), "inert": IntDistribution(0, 2 * ENUMERATE_LIMIT)}
    wide = _fitted_length_scales(HoneGPSampler(seed=3, n_startup_trials=5), large,
                                 lambda p: fn({"x": p["x"], "inert": p["inert"] / (2 * ENUMERATE_LIMIT)}))
    assert TABLE_LENGTH_SCALE_MAX < wide.max() <= LENGTH_SCALE_MAX * (1 + 1e-9)


def test_larger_spaces_fit_length_scales_under_a_prior_once_there_are_enough_observations():
    # the same observations fitted twice: with hone's length-scale prior and by maximum likelihood
    def fn(p: dict) -> float:
        return 1.0 + ((p["x"] - 5) / 9) ** 2 + 1e-4 * p["inert"] / (2 * ENUMERATE_LIMIT)

    def fits(dists: dict, n: int) -> tuple[np.ndarray, np.ndarray]:
        study = _searched(HoneGPSampler(seed=3, n_startup_trials=5, thompson_share=0.0), dists, fn, n)
        prior, free = (_length_scales(HoneGPSampler(seed=3, length_scale_prior=sd), study, dists)
                       for sd in (LENGTH_SCALE_PRIOR_SD, None))
        return prior, free

    large = {"x": IntDistribution(0, 9), "inert": IntDistribution(0, 2 * ENUMERATE_LIMIT)}
    early_prior, early_free = fits(large, PRIOR_AFTER - 1)
    assert np.allclose(early_prior, early_free)  # before PRIOR_AFTER: maximum likelihood
    prior, free = fits(large, PRIOR_AFTER + 2)
    assert free.max() > 10  # the inert knob, left free: far past its whole range
    assert prior.max() < free.max() / 3  # the prior holds it nearer its range
    study = _searched(HoneGPSampler(seed=3, n_startup_trials=5, thompson_share=0.0), large, fn, PRIOR_AFTER + 2)
    longer = _length_scales(HoneGPSampler(seed=3, prior_mean=2.0), study, large)
    assert longer.max() > 2 * prior.max()  # a prior centred on e² pulls the inert knob's scale out with it
    small = {"x": IntDistribution(0, 9), "inert": IntDistribution(0, 9)}
    table_prior, table_free = fits(small, PRIOR_AFTER + 2)
    assert np.allclose(table_prior, table_free)  # the tables: capped, no prior


STUCK = {"w": IntDistribution(0, 63), "s": IntDistribution(0, 63), "t": IntDistribution(0, 63)}  # 262 144 configs


def _stuck_study(sampler: HoneGPSampler, noisy: bool = True, extra: int = 0) -> optuna.Study:
    """The ellipsoid's stuck runs in small: a weak knob ``w`` (optimum 41) measured only at 60–63
    near the optimum of ``s`` and ``t``, and at 0–11 in a few bad far-off trials; 5% noise."""
    def f(p: dict) -> float:
        return 1 + ((p["w"] - 41) / 63) ** 2 + 16 * ((p["s"] - 20) / 63) ** 2 + 16 * ((p["t"] - 40) / 63) ** 2

    rng = np.random.default_rng(0)
    far = zip(rng.integers(0, 12, 6), rng.integers(40, 64, 6), rng.integers(0, 15, 6), strict=True)
    near = zip(rng.integers(60, 64, 24 + extra), rng.integers(18, 23, 24 + extra), rng.integers(38, 43, 24 + extra),
               strict=True)
    study = optuna.create_study(sampler=sampler)
    if noisy:
        study.set_user_attr(ATTR_NOISE_CV, 0.05)
    for w, s, t in [*far, *near]:
        p = {"w": int(w), "s": int(s), "t": int(t)}
        study.add_trial(create_trial(params=p, distributions=STUCK, value=f(p) * (1 + 0.05 * rng.standard_normal())))
    return study


def test_line_probe_moves_a_knob_held_at_its_edge_into_the_unmeasured_stretch():
    def probed(study: optuna.Study) -> bool:
        """Is the next suggestion a near trial's s and t with w half-way into 0..60, the stretch
        no trial near the optimum measured?"""
        p = study.ask(STUCK).params
        return p["w"] == 30 and any((t.params["s"], t.params["t"]) == (p["s"], p["t"]) and t.params["w"] >= 60
                                    for t in study.get_trials(states=(TrialState.COMPLETE,)))

    assert PRIOR_AFTER % PROBE_EVERY == 0  # trial PRIOR_AFTER is a probe's turn
    assert probed(_stuck_study(HoneGPSampler(seed=0)))
    # not a probe: without the probes, without noise, off turn, or when no knob looks smooth end to end
    assert not probed(_stuck_study(HoneGPSampler(seed=0, line_probes=False)))
    assert not probed(_stuck_study(HoneGPSampler(seed=0), noisy=False))
    assert not probed(_stuck_study(HoneGPSampler(seed=0), extra=1))
    assert not probed(_stuck_study(HoneGPSampler(seed=0, probe_length_scale=1e3)))


# -- the model's ranking of confirmed candidates --------------------------------------------------

def _line_study(values: dict[int, float]) -> optuna.Study:
    dists = {"x": IntDistribution(0, 20)}
    study = optuna.create_study(sampler=HoneGPSampler(seed=0), direction="maximize")
    for x, v in values.items():
        study.add_trial(create_trial(params={"x": x}, distributions=dists, value=v))
    return study


def test_model_order_follows_every_measurement_not_one_lucky_one():
    # a smooth hill with its top at x = 10; x = 7 (truly 91) was measured once, luckily, above
    # x = 11 (truly 99)
    truth = {x: 100.0 - (x - 10) ** 2 for x in range(0, 21, 2) if x != 10}
    study = _line_study({**truth, 7: 99.5, 11: 98.0})
    assert study.best_trial.params["x"] == 7
    cands = [{"x": 7}, {"x": 11}]
    assert HoneGPSampler(seed=0).order_by_model(study, cands) == [1, 0]  # its neighbours outvote the luck
    # confirmation rounds that say otherwise move the order: x = 7 measured high six more times
    extra = [({"x": 7}, 101.0)] * 6 + [({"x": 11}, 90.0)] * 6
    assert HoneGPSampler(seed=0).order_by_model(study, cands, extra) == [0, 1]


def test_model_order_is_none_without_a_model():
    sampler = HoneGPSampler(seed=0)
    assert sampler.order_by_model(_line_study({5: 1.0}), [{"x": 5}]) is None  # one trial
    assert sampler.order_by_model(_line_study({1: 1.0, 5: 2.0}), [{"y": 5}]) is None  # not a knob of the study
    multi = optuna.create_study(directions=["minimize", "maximize"])
    multi.add_trial(create_trial(params={"x": 1}, distributions={"x": IntDistribution(0, 9)}, values=[1.0, 2.0]))
    assert sampler.order_by_model(multi, [{"x": 1}]) is None


# -- the model's candidate for confirmation ---------------------------------------------------------

def _bowl(p: dict) -> float:
    return 1 + 0.4 * (((p["w"] - 41) / 63) ** 2 + ((p["s"] - 20) / 63) ** 2 + ((p["t"] - 40) / 63) ** 2)


def _lucky_study(noisy: bool = True) -> optuna.Study:
    """A shallow bowl around (41, 20, 40) in STUCK: the optimum measured four times and its
    neighbours once; three far-off configurations measured once each, luckily (40% low: below
    anything near the optimum), and their neighbours once, honestly (1% noise)."""
    rng = np.random.default_rng(1)
    study = optuna.create_study(sampler=HoneGPSampler(seed=0))
    if noisy:
        study.set_user_attr(ATTR_NOISE_CV, 0.05)
    near = [(41 + dw, 20 + ds, 40 + dt) for dw in (-6, 0, 6) for ds in (-6, 0, 6) for dt in (-6, 0, 6)]
    points = [(p, 1 + 0.01 * rng.standard_normal()) for p in [*near, *[(41, 20, 40)] * 3]]
    for far in [(3, 60, 3), (60, 3, 60), (5, 55, 10)]:
        points.append((far, 0.6))
        for i in range(3):
            for step in (-3, 3):
                q = list(far)
                q[i] = min(63, max(0, q[i] + step))
                points.append((tuple(q), 1 + 0.01 * rng.standard_normal()))
    for (w, s, t), factor in points:
        p = {"w": w, "s": s, "t": t}
        study.add_trial(create_trial(params=p, distributions=STUCK, value=_bowl(p) * factor, user_attrs={"config": p}))
    return study


def test_the_model_names_the_last_candidate_in_noisy_large_spaces():
    wall = Metric(name="wall_time", goal="minimize")
    objective = Objective(mode="single", metrics=[wall], constrained=[], baseline={})

    def picked(study: optuna.Study, model: HoneGPSampler | None) -> list[dict]:
        return [c.config for c in pick_candidates(study, objective, 3, model)]

    study = _lucky_study()
    by_value = picked(study, None)
    assert {tuple(c.values()) for c in by_value} == {(3, 60, 3), (60, 3, 60), (5, 55, 10)}  # the lucky ones
    assert min(_bowl(c) for c in by_value) > 1.1  # each truly 10% or more off the optimum
    # the model outvotes each lucky measurement by its neighbours': its pick is near the optimum
    with_model = picked(study, HoneGPSampler(seed=0))
    assert with_model[:2] == by_value[:2]
    assert with_model[2] not in by_value and _bowl(with_model[2]) < 1.02  # within 2%
    # no model's candidate: without noise, switched off, or in a space small enough to enumerate
    assert picked(_lucky_study(noisy=False), HoneGPSampler(seed=0)) == by_value
    assert picked(study, HoneGPSampler(seed=0, model_candidate=False)) == by_value
    assert picked(study, HoneGPSampler(seed=0, enumerate_limit=64**3)) == by_value


# -- the objective's scale: a few catastrophic values ----------------------------------------------

CLIFF = {"x": IntDistribution(0, 40), "y": IntDistribution(0, 40)}


def _cliff_score(p: dict) -> float:
    """A weighted %-change score (maximised; negative values, so no log): a smooth hill with its
    top at (27, 17), and a corner where every configuration is catastrophic, 1000× worse."""
    if p["x"] + p["y"] >= 50:
        return -50000.0
    return 20 - ((p["x"] - 27) ** 2 + (p["y"] - 17) ** 2) / 10


def _best_after(sampler: HoneGPSampler, trials: int = 30) -> float:
    study = optuna.create_study(direction="maximize", sampler=sampler)
    for _ in range(trials):
        t = study.ask(CLIFF)
        study.tell(t, _cliff_score(t.params))
        if study.best_value == 20.0:  # the top: the best after all the trials is known, the rest would not change it
            break
    return study.best_value


def test_a_few_catastrophic_values_do_not_flatten_the_model():
    # hone's defaults find the top in 30 trials on every seed ...
    assert [_best_after(HoneGPSampler(seed=s)) for s in range(6)] == [20.0] * 6
    # ... and EI alone does too on the ranks, where on the values themselves, flattened by the
    # catastrophes, it mostly does not
    ranked = [_best_after(HoneGPSampler(seed=s, thompson_share=0.0)) for s in range(6)]
    linear = [_best_after(HoneGPSampler(seed=s, thompson_share=0.0, warp="linear")) for s in range(6)]
    assert ranked == [20.0] * 6 and sum(v < 20.0 for v in linear) >= 3


def test_failed_trials_enter_the_model_beyond_the_worst_value():
    study = optuna.create_study(sampler=HoneGPSampler(seed=0))
    dists = {"x": IntDistribution(0, 9)}
    for x, v in [(1, 3.0), (2, 2.0), (3, 1.0)]:
        study.add_trial(create_trial(params={"x": x}, distributions=dists, value=v))
    study.add_trial(create_trial(params={"x": 9}, distributions=dists, state=TrialState.FAIL))
    sampler = study.sampler
    cols = columns(dists)
    levels, y, n_done, _ = sampler._observations(study, study.trials, cols, with_running=False)
    assert n_done == 3 and len(y) == 4 and levels[-1][0] == 9 and y[-1] > y[:3].max()
    off = HoneGPSampler(seed=0, failed_as_worst=False)
    assert len(off._observations(study, study.trials, cols, with_running=False)[1]) == 3


SIX = {f"k{i}": IntDistribution(0, 20) for i in range(6)}  # 21⁶ configurations: too many to enumerate


def _centre_bowl(p: dict) -> float:
    return 1.0 + sum((v - 10) ** 2 for v in p.values())


def _after_starts(observed: bool, seed: int) -> optuna.Study:
    """Five Latin-hypercube starts around a baseline at the centre of a bowl, then 6 suggestions."""
    study = optuna.create_study(sampler=HoneGPSampler(seed=seed, baseline_observed=observed))
    study.set_user_attr(ATTR_BASELINE_POINT, {"params": {k: 10 for k in SIX}, "value": 1.0})
    for _ in range(11):
        t = study.ask(SIX)
        study.tell(t, _centre_bowl(t.params))
    return study


def test_the_measured_baseline_is_the_models_first_observation_and_never_suggested():
    study = _after_starts(True, 0)
    cols = columns(SIX)
    levels, y, n_done, _ = study.sampler._observations(
        study, study.trials, cols, with_running=False, base=study.sampler._baseline_point(study, cols))
    assert n_done == 12 and levels[0].tolist() == [10.0] * 6 and y[0] == y.min()
    assert all(t.params != {k: 10 for k in SIX} for t in study.trials)
    # no attribute (another tuner's study), or the setting off: trials only
    off = HoneGPSampler(seed=0, baseline_observed=False)
    assert off._baseline_point(study, cols) is None


def test_the_search_starts_from_a_baseline_better_than_its_random_starts():
    # every start is far worse than the baseline at the centre: observed, it draws the next
    # suggestions towards it; unobserved, the search knows only the starts
    def best_suggested(observed: bool) -> float:
        total = 0.0
        for seed in range(4):
            trials = sorted(_after_starts(observed, seed).trials, key=lambda t: t.number)[5:]
            total += min(_centre_bowl(t.params) for t in trials)
        return total

    assert best_suggested(True) < 0.5 * best_suggested(False)


def _first_trial(stored: bool, seed: int) -> dict:
    """The first trial of a study of 3 × 3 configurations whose baseline (0, 0) was measured."""
    dists = {"a": IntDistribution(0, 2), "b": CategoricalDistribution(["p", "q", "r"])}
    study = optuna.create_study(sampler=HoneGPSampler(seed=seed, stored_space=stored))
    study.set_user_attr(ATTR_BASELINE_POINT, {"params": {"a": 0, "b": "p"}, "value": 1.0})
    study.set_user_attr(ATTR_SPACE, {n: distribution_to_json(d) for n, d in dists.items()})
    t = study.ask(dists)
    study.tell(t, 2.0)
    return t.params


def test_the_first_trial_is_a_start_from_the_stored_space_never_the_baseline():
    # without a completed trial Optuna's intersection space is empty: the stored space makes trial
    # 0 the first Latin-hypercube row, which skips the baseline; a random draw repeats it 1 in 9
    firsts = [_first_trial(True, seed) for seed in range(30)]
    assert {"a": 0, "b": "p"} not in firsts
    assert len({tuple(p.values()) for p in firsts}) >= 4  # still spread over the space by the seed
    randoms = [_first_trial(False, seed) for seed in range(30)]
    assert {"a": 0, "b": "p"} in randoms


def test_fit_restarts_never_end_at_a_lower_likelihood_than_the_single_start():
    def fn(p: dict) -> float:
        return 1.0 + math.sin(p["x"] / 2) ** 2 + ((p["y"] - 30) / 40) ** 2

    dists = {"x": IntDistribution(0, 60), "y": IntDistribution(0, 60)}
    study = _searched(HoneGPSampler(seed=5), dists, fn, 15)
    cols = columns(dists)
    one, three = HoneGPSampler(seed=5), HoneGPSampler(seed=5, fit_restarts=2)
    data = one._observations(study, study.trials, cols, with_running=False)[:2]
    single, restarted = one.model.fit(cols, data), three.model.fit(cols, data)
    assert restarted.log_marginal_likelihood_value_ >= single.log_marginal_likelihood_value_ - 1e-9
    assert restarted.n_restarts_optimizer == 2 and single.n_restarts_optimizer == 0


def test_an_lcb_suggestion_is_the_lowest_confidence_bound_among_the_unmeasured():
    # a table small enough to enumerate: with every suggestion by LCB (0061) the pick is the
    # unmeasured configuration with the lowest μ − κσ of the GP the sampler fitted
    dists = {"x": IntDistribution(0, 30), "y": IntDistribution(0, 5)}

    def fn(p: dict) -> float:
        return 1.0 + ((p["x"] - 21) / 10) ** 2 + 0.3 * abs(p["y"] - 2)

    sampler = HoneGPSampler(seed=2, thompson_share=0.0, lcb_share=1.0, lcb_kappa=3.0)
    study = _searched(sampler, dists, fn, 12)
    cols = columns(dists)
    levels, y, _, _ = sampler._observations(study, study.trials, cols, with_running=False)
    gp = sampler.model.fit(cols, (levels, y))
    grid = np.array([[x, yy] for x in range(31) for yy in range(6)], dtype=float)
    mu, sd = gp.predict(encode(cols, grid), return_std=True)
    bound = mu - 3.0 * sd
    measured = {(t.params["x"], t.params["y"]) for t in study.trials}
    bound[[(int(x), int(yy)) in measured for x, yy in grid]] = np.inf
    nxt = study.ask(dists)
    assert (nxt.params["x"], nxt.params["y"]) == tuple(int(v) for v in grid[int(np.argmin(bound))])
    ei = HoneGPSampler(seed=2, thompson_share=0.0)  # the default (EI) picks elsewhere here
    ei_study = optuna.create_study(sampler=ei)
    for t in study.trials[:-1]:
        ei_study.add_trial(t)
    assert ei_study.ask(dists).params != nxt.params


def test_known_noise_keeps_the_white_noise_term_at_the_measured_noise():
    # a smooth bowl measured exactly but said to be 5% noisy: left free, the fit interpolates
    from hone.tune.gp.model import noise_level, noise_variance

    dists = {"x": IntDistribution(0, 30), "mode": CategoricalDistribution(["p", "q", "r"])}
    study = _searched(HoneGPSampler(seed=2, n_startup_trials=4), dists,
                      lambda p: 1.0 + ((p["x"] - 21) / 30) ** 2 + 0.3 * (p["mode"] != "q"), 14)
    cols = columns(dists)
    raw = np.array([t.value for t in study.trials], dtype=float)
    known = noise_variance(raw, "log", 0.05)
    assert known == pytest.approx((0.05 / np.log(raw).std()) ** 2)
    assert noise_variance(raw, "rank", 0.05) == 0.0 and noise_variance(-raw, "log", 0.05) == 0.0

    def fitted(sampler: HoneGPSampler) -> float:
        levels, y, _, noise = sampler._observations(study, study.trials, cols, with_running=False)
        return noise_level(sampler.model.fit(cols, (levels, y), noise))

    free = fitted(HoneGPSampler(seed=2, noise_cv=0.05))
    assert free < known / 10
    assert fitted(HoneGPSampler(seed=2, noise_cv=0.05, known_noise=1.0)) >= known * (1 - 1e-9)
    assert fitted(HoneGPSampler(seed=2, noise_cv=None, known_noise=1.0)) < known / 10  # not noisy: as before


def test_matern_smoothness_is_a_setting():
    from hone.tune.gp.model import GPModel

    cols = columns({"x": IntDistribution(0, 30)})
    assert GPModel(DEFAULTS).kernel(cols).k1.k2.nu == 2.5
    assert GPModel(GPSettings(matern_nu=1.5)).kernel(cols).k1.k2.nu == 1.5


def test_a_random_share_of_one_makes_every_suggestion_after_the_starts_uniform():
    # random_share (0068): the model's turns become uniform draws; EI's own turns close in on
    # the bowl's bottom at x = 700 instead
    dists = {"x": IntDistribution(0, 1000)}

    def fn(p: dict) -> float:
        return 1.0 + ((p["x"] - 700) / 100) ** 2

    def off(sampler: HoneGPSampler) -> float:  # median distance of the last 15 suggestions from the bottom
        study = _searched(sampler, dists, fn, 25)
        return float(np.median([abs(t.params["x"] - 700) for t in study.trials[10:]]))

    assert off(HoneGPSampler(seed=4, n_startup_trials=5, thompson_share=0.0, random_share=1.0)) > 100
    assert off(HoneGPSampler(seed=4, n_startup_trials=5, thompson_share=0.0)) < 20


def test_a_hyperparameter_sample_moves_the_length_scales_within_their_bounds():
    # thompson_hyper (0073): the Thompson sample's kernel is drawn from the hyperparameters'
    # posterior; with 8 observations the likelihood is flat enough for the chain to move, and
    # every draw stays within the kernel's bounds
    dists = {"x": FloatDistribution(0.0, 1.0), "z": FloatDistribution(0.0, 1.0)}
    sampler = HoneGPSampler(seed=0, n_startup_trials=8)
    study = _searched(sampler, dists, lambda p: 1.0 + (p["x"] - 0.3) ** 2 + 0.1 * p["z"], 8)
    cols = columns(dists)
    levels, y, _, _ = sampler._observations(study, study.trials, cols, with_running=False)
    gp = sampler.model.fit(cols, (levels, y))
    rng = np.random.default_rng(0)
    draws = np.array([sampler.model.hyper_sample(cols, gp, rng).kernel_.theta for _ in range(20)])
    bounds = gp.kernel_.bounds
    assert np.all(draws >= bounds[:, 0] - 1e-12) and np.all(draws <= bounds[:, 1] + 1e-12)
    assert len({tuple(np.round(d, 9)) for d in draws}) > 10  # the chain moved in most draws
    assert np.median(np.abs(draws - gp.kernel_.theta)) < 2.0  # ... around the fitted kernel


def test_refining_continuous_knobs_moves_only_the_floats_to_the_scores_maximum():
    # refine_continuous (0075): L-BFGS-B along the float knobs from EI's best candidate
    cols = columns({"n": IntDistribution(0, 4), "x": FloatDistribution(0.0, 10.0)})

    def score(rows: np.ndarray) -> np.ndarray:
        return -((rows[:, 1] - 0.4231) ** 2) - 0.1 * rows[:, 0]

    def refined(cols: list, row: np.ndarray) -> np.ndarray:
        return gp_candidates.refine_continuous(cols, row, float(score(row[None, :])[0]), score)

    out = refined(cols, np.array([2.0, 0.3]))
    assert out[0] == 2.0 and abs(out[1] - 0.4231) < 1e-3
    start = np.array([3.0, 0.4231])  # already at the maximum along x: nothing to gain
    assert np.array_equal(refined(cols, start), start)
    ints = columns({"n": IntDistribution(0, 4)})
    assert np.array_equal(gp_candidates.refine_continuous(ints, np.array([1.0]), 0.0, score), np.array([1.0]))


def _lhs_after(starts: list[dict], seed: int) -> list[dict]:
    """The suggestions of a study whose first trials are ``starts`` the user gave (hone.tune.start)."""
    dists = {"x": FloatDistribution(0.0, 1.0), "y": FloatDistribution(0.0, 1.0)}
    study = optuna.create_study(sampler=HoneGPSampler(seed=seed, n_startup_trials=4))
    study.set_user_attr(ATTR_SPACE, {n: distribution_to_json(d) for n, d in dists.items()})
    for i, params in enumerate(starts, 1):
        study.enqueue_trial(params, user_attrs={ATTR_START: i})
    for _ in range(len(starts) + 4):
        t = study.ask(dists)
        study.tell(t, (t.params["x"] - 0.3) ** 2 + t.params["y"])
    return [t.params for t in sorted(study.trials, key=lambda t: t.number)]


def test_the_users_starts_come_first_and_leave_the_latin_hypercube_starts_whole():
    for seed in range(3):
        given = [{"x": 0.5, "y": 0.5}, {"x": 0.51, "y": 0.49}]
        with_starts, alone = _lhs_after(given, seed), _lhs_after([], seed)
        assert with_starts[:2] == given
        assert with_starts[2:] == alone  # the same 4 Latin-hypercube rows, not 2 of them
