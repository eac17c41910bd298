"""Where the sampler looks: starts, neighbours, trust-region points and line probes (rows of levels)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from hone.tune.gp.encoding import Column, enumerable, grid, random_levels, unmeasured
from hone.tune.gp.model import length_scales
from hone.tune.gp.settings import GPSettings

Seen = set[tuple[float, ...]]


def remeasure(cands: np.ndarray, failed: Seen, rng: np.random.Generator) -> list[float]:
    """Every candidate is measured or running: a random one to measure again, but not one whose
    trial failed (it would fail again) unless every one did."""
    ok = unmeasured(cands, failed)
    pool = cands[ok] if ok.any() else cands
    return pool[int(rng.integers(len(pool)))].tolist()


def startup_point(cols: list[Column], number: int, n_startup: int, seed: int, rng: np.random.Generator,
                  seen: Seen, failed: Seen, settings: GPSettings) -> list[float]:
    """Row ``number`` of a seeded Latin hypercube of ``n_startup`` points; random after."""
    from scipy.stats import qmc

    if number < n_startup:
        u = qmc.LatinHypercube(d=len(cols), seed=seed & 0xFFFFFFFF).random(n_startup)[number]
    else:
        u = rng.random(len(cols))
    levels = [min(c.size - 1, int(x * c.size)) if c.size else float(x) for c, x in zip(cols, u, strict=True)]
    for _ in range(50):
        if tuple(levels) not in seen:
            return levels
        levels = random_levels(cols, rng, 1)[0].tolist()
    if enumerable(cols, settings.enumerate_limit):  # a nearly full small space: draw among what is left
        cands = grid(cols)
        fresh = cands[unmeasured(cands, seen)]
        if len(fresh):
            return fresh[int(rng.integers(len(fresh)))].tolist()
        return remeasure(cands, failed, rng)
    return levels


def neighbours(cols: list[Column], levels: np.ndarray) -> np.ndarray:
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


def trust_region_length(y: np.ndarray, start: int, settings: GPSettings | None = None, knobs: int = 0) -> float:
    """TuRBO-style trust-region length (share of each ordered knob's range) from the history
    ``y`` (minimised, in trial order) after the first ``start`` trials: halved after 3 trials in
    a row without a new best (better by more than 1e-3 of its magnitude; y as the model sees it,
    standardised log values), doubled after 2 new bests in a row, within [1/64, 1/2]
    (``tr_shrink_after`` 0: after max(4, ``knobs``) trials; ``tr_restart``: back to the start
    instead of below 1/64)."""
    s = settings or GPSettings()
    patience = s.tr_shrink_after or max(4, knobs)
    length, wins, fails = s.tr_length_init, 0, 0
    best = float(np.min(y[:start])) if start else math.inf
    for v in y[start:]:
        if v < best - 1e-3 * abs(best):
            best, wins, fails = float(v), wins + 1, 0
        else:
            best, wins, fails = min(best, float(v)), 0, fails + 1
        if fails >= patience:
            restart = s.tr_restart and length / 2 < s.tr_length_min
            length, fails = s.tr_length_init if restart else max(length / 2, s.tr_length_min), 0
        if wins >= s.tr_grow_after:
            length, wins = min(length * 2, s.tr_length_max), 0
    return length


def trust_region_points(cols: list[Column], levels: np.ndarray, y: np.ndarray, start: int,
                        rng: np.random.Generator, settings: GPSettings) -> np.ndarray:
    """``tr_candidates`` points around the best of ``levels`` (completed trials, ``y`` in trial
    order): each ordered knob moved with probability min(1, 2/d) by a Gaussian step of
    :func:`trust_region_length` × its range, each categorical re-drawn with probability 1/d.

    Why: in spaces too large to enumerate, 1000 uniform points rarely land near the incumbent,
    and its single-knob neighbours cannot move an ill-conditioned pair of knobs together; these
    multi-knob moves at a step that shrinks as progress stalls (TuRBO's rule) can
    (docs/decisions/0006-trust-region-candidates.md)."""
    inc = levels[int(np.argmin(y))]
    length = trust_region_length(y, start, settings, len(cols))
    d, n = len(cols), settings.tr_candidates
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


def refine_continuous(cols: list[Column], row: np.ndarray, base: float, score: Callable[[np.ndarray], np.ndarray],
                      maxiter: int = 30) -> np.ndarray:
    """``row`` (scored ``base``) with its continuous knobs moved to a local maximum of ``score``
    (L-BFGS-B on finite differences, the other knobs held), or ``row`` when that scores no higher. Why: the
    candidates move a float by 1% of its range at the finest, where scikit-optimize's EI (A-Tune's
    engine) is refined by L-BFGS-B (``refine_continuous``, docs/decisions/0075)."""
    from scipy.optimize import minimize

    idx = [i for i, c in enumerate(cols) if not c.size]  # size 0: a float
    if not idx or not math.isfinite(base):
        return row

    def neg(x: np.ndarray) -> float:
        moved = row.copy()
        moved[idx] = x
        value = float(score(moved[None, :])[0])
        return -value if math.isfinite(value) else 1e300

    res = minimize(neg, row[idx], method="L-BFGS-B", bounds=[(0.0, 1.0)] * len(idx),
                   options={"maxiter": maxiter, "eps": 1e-4})
    if -float(res.fun) <= base:
        return row
    out = row.copy()
    out[idx] = np.clip(res.x, 0.0, 1.0)
    return out


def line_probe(gp: object, cols: list[Column], levels: np.ndarray, incumbent: np.ndarray, seen: Seen,
               settings: GPSettings) -> list[float] | None:
    """``incumbent`` (the completed trial with the lowest posterior mean) with one ordered knob
    moved to the middle of the widest unmeasured gap along the line through it, or None.

    The line of knob k: the completed trials (``levels``) whose other ordered knobs are within
    ``probe_line`` of the incumbent's (share of each range) and whose categoricals equal its; a
    gap is the distance between neighbouring levels of k among them (the range's ends bound the
    outer two), and counts when wider than ``probe_gap`` of the range. Only knobs whose fitted
    length scale exceeds ``probe_length_scale`` are probed — the ones the model calls smooth, or
    monotone, from end to end.

    Why: under noise the GP can fit a weak knob's effect from early, far-off trials as a trend
    over the whole range; its posterior along the knob turns confident, and neither EI nor a
    Thompson sample leaves the range's edge though the optimum lies inside. A probe measures the
    incumbent half-way into the stretch the model extrapolated over
    (docs/decisions/0011-line-probes.md)."""
    s = settings
    scales = length_scales(gp)
    offsets = np.cumsum([0] + [c.width() for c in cols])
    near_other = [levels[:, j] == incumbent[j] if c.categorical
                  else np.abs(levels[:, j] - incumbent[j]) <= s.probe_line * c.top for j, c in enumerate(cols)]
    gaps = []
    for i, c in enumerate(cols):
        if c.categorical or scales[offsets[i]] <= s.probe_length_scale:
            continue
        on_line = np.ones(len(levels), dtype=bool)
        for j, m in enumerate(near_other):
            if j != i:
                on_line &= m
        line = sorted(set(levels[on_line, i].tolist()) | {float(incumbent[i])})
        for lo, hi in zip([0.0, *line], [*line, c.top], strict=True):
            if (hi - lo) / c.top > s.probe_gap:
                mid = (lo + hi) / 2
                gaps.append((-(hi - lo) / c.top, i, float(round(mid)) if c.size else mid))
    for _width, i, level in sorted(gaps):
        row = incumbent.copy()
        row[i] = level
        if tuple(row.tolist()) not in seen:
            return row.tolist()
    return None
