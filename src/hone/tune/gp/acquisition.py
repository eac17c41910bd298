"""Acquisition: expected improvement in log form, and one joint posterior (Thompson) sample."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from hone.tune.gp.encoding import Column, encode
from hone.tune.gp.model import noise_level


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


def thompson_argmin(gp: Any, cols: list[Column], cands: np.ndarray, rng: np.random.Generator) -> int:
    """The index of the candidate where one joint sample of the GP's latent function (the
    measurement noise left out) is lowest. Cholesky with jitter, not ``sample_y`` (an SVD:
    seconds for 2000 candidates)."""
    mu, cov = gp.predict(encode(cols, cands), return_cov=True)
    cov = cov - noise_level(gp) * np.eye(len(cands))  # predict's covariance includes the WhiteKernel
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
    return int(np.argmin(f))
