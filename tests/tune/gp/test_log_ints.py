"""Int knobs over log ranges (``log: true``): the sampler draws, steps and probes them on the log
scale its model sees, not uniformly over their step indices."""

from __future__ import annotations

import numpy as np
from optuna.distributions import IntDistribution

from hone.tune.gp import GPSettings, columns
from hone.tune.gp import candidates as gp_candidates
from hone.tune.gp.encoding import random_levels

SPACE = {"conns": IntDistribution(1, 100_000, log=True), "workers": IntDistribution(1, 64, log=True)}
ON = GPSettings(log_ints=True)


def values(levels: np.ndarray) -> np.ndarray:
    return levels + 1  # both knobs start at 1: value = level + 1


def test_random_candidates_cover_the_small_values_of_a_wide_log_range() -> None:
    cols = columns(SPACE)
    drawn = values(random_levels(cols, np.random.default_rng(0), 4000, ON.log_ints))[:, 0]
    # log-uniform over 1..100000: a fifth of the draws in each decade
    per_decade = [np.mean((drawn >= 10**k) & (drawn < 10 ** (k + 1))) for k in range(5)]
    assert all(0.15 < share < 0.25 for share in per_decade), per_decade
    assert drawn.min() >= 1 and drawn.max() <= 100_000


def test_the_starts_are_a_latin_hypercube_on_the_log_scale() -> None:
    cols = columns(SPACE)
    rng = np.random.default_rng(1)
    starts = [gp_candidates.startup_point(cols, i, 5, 7, rng, set(), set(), ON) for i in range(5)]
    fifths = sorted(int(np.log(values(np.array(s))[0]) / np.log(100_000) * 5) for s in starts)
    assert fifths == [0, 1, 2, 3, 4]  # one start in each fifth of the log range


def test_trust_region_steps_are_relative_around_a_small_incumbent() -> None:
    cols = columns(SPACE)
    levels = np.array([[49.0, 3.0], [5000.0, 30.0]])  # the incumbent: conns 50, workers 4
    pts = gp_candidates.trust_region_points(cols, levels, np.array([0.0, 1.0]), 0, np.random.default_rng(2), ON)
    moved = values(pts[:, 0])[pts[:, 0] != 49.0]
    assert len(moved) > 100
    # a quarter of the log range is a factor of ~18: most moves stay within a factor of 100,
    # and some go below the incumbent (a uniform step index would almost never)
    assert np.median(np.abs(np.log10(moved / 50))) < 1.0
    assert np.mean(moved < 50) > 0.25


def test_neighbours_move_a_log_int_by_shares_of_its_log_range_and_by_single_steps() -> None:
    cols = columns(SPACE)
    nb = values(gp_candidates.neighbours(cols, np.array([[49.0, 3.0]]), log_ints=True)[:, 0])
    assert {49, 51, 48, 52, 46, 54} <= set(nb.tolist())  # ±1, 2, 4 steps
    assert nb.min() < 10 and 200 < nb.max() < 1000  # ±25% of the log range: ÷/× ~18
    assert nb.min() >= 1


def test_a_space_without_log_ints_is_drawn_as_before() -> None:
    cols = columns({"x": IntDistribution(0, 100), "y": IntDistribution(1, 1000, step=3)})
    a = random_levels(cols, np.random.default_rng(3), 50, False)
    assert (a == random_levels(cols, np.random.default_rng(3), 50, True)).all()
    assert (gp_candidates.neighbours(cols, a[:2]) == gp_candidates.neighbours(cols, a[:2], log_ints=True)).all()
