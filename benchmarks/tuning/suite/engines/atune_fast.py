"""Exact fast paths for A-Tune's GP (:func:`.library.atune`) on all-categorical spaces.

A-Tune's engine (``analysis/optimizer/optimizer.py``) calls scikit-optimize's ``Optimizer``
with defaults: ``gp_hedge`` over EI/PI/LCB, each over 10,000 random points then L-BFGS, and a
GP from ``cook_estimator("GP")`` (2 restarts of the kernel fit). When every knob is a value
list (the tables), the space is all-categorical and skopt's GP uses its ``HammingKernel`` with
one length scale per one-hot column (256 of them for 8 knobs of 32 values). skopt computes that
kernel and its gradient through (n, m, d) indicator arrays: one 120-evaluation run took > 10
minutes, the kernel fit's gradient (scikit-learn's ``Product`` kernel stacking (n, n, d)
arrays) and the 10,000-point predictions nearly all of it. Mixed spaces (a range among the
knobs) use skopt's Matérn kernel and are not touched.

On one-hot (0/1) inputs the same quantities are matrix products:
``Σ_d l_d·[x_d ≠ y_d] = x·l + y·l − 2 (x∘l)·y``, and the likelihood gradient
``½ tr((ααᵀ − K⁻¹) ∂K/∂θ_d)`` with ``∂K/∂log l_d = −l_d K_c∘I_d`` is
``−l_d (2 Xᵀ(M1) − 2 diag(XᵀMX))_d`` for ``M = ½(ααᵀ − K⁻¹)∘K_c``. ``patch()`` swaps these in
for exactly that kernel structure (ConstantKernel × HammingKernel + a fixed WhiteKernel, 0/1
inputs) and leaves everything else to the originals: the same model, acquisition, restarts and
random draws as A-Tune's settings; ``check()`` compares both paths (differences ~1e-12).
"""

from __future__ import annotations

from typing import Any

import numpy as np

_PATCHED: dict[str, Any] = {}


def _binary(a: np.ndarray) -> bool:
    return bool(np.all((a == 0) | (a == 1)))


def _ls(kernel: Any, d: int) -> np.ndarray:
    ls = kernel.length_scale
    return np.broadcast_to(np.asarray(ls, dtype=float).ravel() if np.iterable(ls) else float(ls), (d,)).copy()


def _hamming_call(self: Any, X: Any, Y: Any = None, eval_gradient: bool = False) -> Any:
    if eval_gradient:
        return _PATCHED["hamming"](self, X, Y, eval_gradient)
    X = np.atleast_2d(np.asarray(X, dtype=float))
    Yb = X if Y is None else np.atleast_2d(np.asarray(Y, dtype=float))
    if not (_binary(X) and _binary(Yb)):
        return _PATCHED["hamming"](self, X, Y, eval_gradient)
    ls = _ls(self, X.shape[1])
    dist = (X @ ls)[:, None] + (Yb @ ls)[None, :] - 2.0 * ((X * ls) @ Yb.T)
    return np.exp(-np.maximum(dist, 0.0))


def _structure(gpr: Any) -> tuple[Any, Any, float] | None:
    """(ConstantKernel, HammingKernel, fixed white noise) if gpr's kernel is skopt's
    all-categorical GP kernel with free constant and length scales, else None."""
    from sklearn.gaussian_process.kernels import ConstantKernel, Product, Sum, WhiteKernel
    from skopt.learning.gaussian_process.kernels import HammingKernel

    k = gpr.kernel_
    if not (isinstance(k, Sum) and isinstance(k.k1, Product) and isinstance(k.k2, WhiteKernel)):
        return None
    c, h = k.k1.k1, k.k1.k2
    if not (isinstance(c, ConstantKernel) and isinstance(h, HammingKernel)):
        return None
    if c.hyperparameter_constant_value.fixed or h.hyperparameter_length_scale.fixed \
            or not k.k2.hyperparameter_noise_level.fixed:
        return None
    return c, h, float(k.k2.noise_level)


def _lml(self: Any, theta: Any = None, eval_gradient: bool = False, clone_kernel: bool = True) -> Any:
    from scipy.linalg import cho_solve, cholesky

    st = _structure(self) if (eval_gradient and theta is not None) else None
    X = getattr(self, "X_train_", None)
    y = getattr(self, "y_train_", None)
    if st is None or X is None or y is None or np.ndim(y) != 1 or not _binary(np.asarray(X)):
        return _PATCHED["lml"](self, theta, eval_gradient, clone_kernel)
    # theta = log(constant, length scales) (the white noise is fixed); scikit-learn sets the
    # optimum on kernel_ itself after the fit, so the kernel is not touched here
    noise = st[2]
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    theta = np.asarray(theta, dtype=float)
    c = float(np.exp(theta[0]))
    ls = np.exp(theta[1:]) if len(theta) == 1 + d else np.full(d, float(np.exp(theta[1])))
    xl = X @ ls
    dist = xl[:, None] + xl[None, :] - 2.0 * ((X * ls) @ X.T)
    kc = c * np.exp(-np.maximum(dist, 0.0))
    K = kc + noise * np.eye(n)
    K[np.diag_indices_from(K)] += self.alpha
    try:
        L = cholesky(K, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return -np.inf, np.zeros_like(theta)
    alpha = cho_solve((L, True), y, check_finite=False)
    lml = -0.5 * float(y @ alpha) - float(np.log(np.diag(L)).sum()) - n / 2 * np.log(2 * np.pi)
    k_inv = cho_solve((L, True), np.eye(n), check_finite=False)
    W = 0.5 * (np.outer(alpha, alpha) - k_inv)
    M = W * kc
    g_c = float(M.sum())  # ∂K/∂log c = K_c
    g_ls = -ls * (2.0 * (X.T @ M.sum(axis=1)) - 2.0 * ((M @ X) * X).sum(axis=0))
    grad = np.concatenate([[g_c], g_ls if len(theta) == 1 + d else [g_ls.sum()]])
    return lml, grad


def patch() -> None:
    from sklearn.gaussian_process._gpr import GaussianProcessRegressor
    from skopt.learning.gaussian_process.kernels import HammingKernel

    if _PATCHED:
        return
    _PATCHED["hamming"] = HammingKernel.__call__
    _PATCHED["lml"] = GaussianProcessRegressor.log_marginal_likelihood
    HammingKernel.__call__ = _hamming_call
    GaussianProcessRegressor.log_marginal_likelihood = _lml


def check(seed: int = 0) -> float:
    """Largest difference between the fast and the original paths on random one-hot data
    (likelihood and gradient relative to their size, kernel values absolute)."""
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, WhiteKernel
    from skopt.learning.gaussian_process.kernels import HammingKernel

    patch()
    rng = np.random.default_rng(seed)
    levels = [4, 3, 32, 9]
    X = np.hstack([np.eye(k)[rng.integers(k, size=40)] for k in levels])
    kernel = ConstantKernel(1.0, (0.01, 1000.0)) * HammingKernel(np.ones(X.shape[1])) \
        + WhiteKernel(1e-10, "fixed")  # what skopt's GP fits: its noise as a fixed white kernel
    gp = GaussianProcessRegressor(kernel, normalize_y=True, optimizer=None).fit(X, rng.standard_normal(40))
    worst = 0.0
    for _ in range(5):
        th = gp.kernel_.theta + rng.normal(0, 1.0, len(gp.kernel_.theta))
        a = _lml(gp, th, True)
        b = _PATCHED["lml"](gp, th, True)
        assert len(a[1]) == len(b[1])
        worst = max(worst, abs(a[0] - b[0]) / max(1, abs(b[0])),
                    float(np.max(np.abs(a[1] - b[1]))) / max(1, float(np.max(np.abs(b[1])))))
        h = gp.kernel_.k1.k2.clone_with_theta(th[1:])
        Z = np.hstack([np.eye(k)[rng.integers(k, size=500)] for k in levels])
        worst = max(worst, float(np.max(np.abs(_hamming_call(h, Z, X) - _PATCHED["hamming"](h, Z, X)))))
    return worst


if __name__ == "__main__":
    print(f"largest difference fast vs skopt: {check():.2e}")
