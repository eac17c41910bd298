"""Every setting of hone's GP sampler in one frozen object (defaults = what ``hone tune`` uses).

The tuning suite's variants are settings (``HoneGPSampler(seed=…, line_probes=False)``), never
subclasses or rewritten module globals. Where a default was chosen by measurement, the
decision record says how (docs/decisions/).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GPSettings:
    # encoding and candidates
    enumerate_limit: int = 20_000  # discrete spaces up to this size: EI over every configuration
    random_candidates: int = 1000  # larger spaces: uniform EI candidates per suggestion
    refine_continuous: bool = False  # ... EI's best then refined along its float knobs by L-BFGS-B (0075)
    # the model
    warp: str = "log-rank"  # EI's model of y: log when every value is positive, else ranks (model.WARPS; 0041;
    # "evidence": log or y itself, whichever the GP finds likelier, 0099, 0112)
    thompson_warp: str = "rank"  # the Thompson half's (0008, 0041)
    stored_space: bool = True  # trial 0 from the space hone tune stores: a Latin-hypercube start, not a random draw
    baseline_observed: bool = True  # the measured baseline (hone tune's) is the model's first observation (0053)
    failed_as_worst: bool = True  # failed trials enter the model just beyond the worst value seen
    noise_floor: float = 1e-6  # WhiteKernel lower bound on standardised y: exact measurements stay exact
    known_noise: float = 0.0  # noisy runs, log-warped y: the bound is at least this share of the measured noise (0065)
    matern_nu: float = 2.5  # the kernel's smoothness (1.5: rougher fits, 0066)
    length_scale_max: float = 1e2  # Matérn length scales, in units of each knob's [0, 1] range
    table_length_scale: float | None = 1.0  # ... in enumerable spaces (0009); None = length_scale_max
    length_scale_prior: float | None = 1.0  # larger spaces: log ℓ ~ N(0, sd²) (0010); None = maximum likelihood
    prior_after: int = 30  # ... from this many observations on
    prior_mean: float = 0.0  # ... centred on log ℓ = prior_mean + prior_mean_per_log_dim · ln(encoded inputs)
    prior_mean_per_log_dim: float = 0.0  # (0063: a dimension-scaled prior, √2 + ½ ln d, sd √3)
    refit_every_until: int = 30  # kernel hyperparameters refitted at every n up to this,
    refit_period: int = 5  # ... then at every 5th n
    fit_max: int = 100  # ... on at most this many of them (model.hyper_rows)
    fit_restarts: int = 0  # ... from this many more starting points (scikit-learn's seeded draws within the bounds)
    random_share: float = 0.0  # this share of the model's suggestions (a seeded coin) are uniform random instead (0068)
    tpe_share: float = 0.0  # ... are Optuna's multivariate TPE's instead, unless already measured (0059)
    # trust region (0006)
    trust_region: bool = True
    tr_candidates: int = 500
    tr_length_init: float = 0.25  # share of each ordered knob's range
    tr_length_min: float = 1 / 64
    tr_length_max: float = 0.5
    tr_shrink_after: int = 3  # trials in a row without a new best; 0 = max(4, knobs), TuRBO's (0067)
    tr_restart: bool = False  # a halving below tr_length_min starts again at tr_length_init (TuRBO's restart, 0067)
    tr_grow_after: int = 2  # trials in a row with one
    # noise (0007, 0008)
    noisy_cv: float = 0.01  # relative sd of a trial's value at or above which measurements count as noisy
    thompson_share: float = 0.5  # this share of the suggestions (a seeded coin) are Thompson samples (0042, 0051, 0069)
    lcb_share: float = 0.0  # ... this share of the others maximise a lower confidence bound instead of EI (0061)
    lcb_kappa: float = 1.96  # ... μ − κσ (scikit-optimize's default κ)
    thompson_hyper: bool = False  # the Thompson sample's kernel hyperparameters drawn from their posterior too (0073)
    hyper_step: float = 1.0  # ... by a random walk of this total step on log θ
    ts_max: int = 2000  # a Thompson sample over at most this many candidates (a Cholesky of ts_max²)
    # line probes (0011; measured again on the suite: 0070)
    line_probes: bool = True
    probe_every: int = 6  # from prior_after trials, every 6th suggestion is a line probe
    probe_gap: float = 0.125  # ... into an unmeasured gap wider than this share of a knob's range
    probe_line: float = 0.1  # ... on the line through the incumbent: other ordered knobs within this share
    probe_length_scale: float = 1.0  # ... along a knob whose fitted length scale exceeds its range
    # recommendation
    rerank_top: int = 5  # rank_trials re-ranks the best-observed few by posterior mean
    model_candidate: bool = True  # noisy large spaces: the model names the last candidate (0013)
