"""Synthetic runs for the A/B callers' statistics tests (confirmation, pgo evaluation, doctor)."""

from __future__ import annotations

import numpy as np

from hone.run.benchmark import Measurement


def cpu_run(cpu: float, **metrics: float) -> Measurement:
    """A successful run that took ``cpu`` seconds of CPU (and of wall time), with ``metrics``."""
    return Measurement(wall_s=cpu, cpu_s=cpu, user_s=cpu, sys_s=0.0, max_rss_kb=1, returncode=0, timed_out=False,
                       metrics=dict(metrics))


def aa_cpu_times(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two arms of 6-10 rounds drawn from one distribution (an A/A pair): noise from tiny to
    the heavy tails of this VM's rounds (a few rounds straddle a host speed change)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 11))
    spread = float(rng.choice([0.0005, 0.01, 0.08]))
    base = 0.02 * rng.lognormal(0, 0.05, n)
    jump = np.where(rng.random(n) < 0.2, rng.choice([-0.2, 0.2], n), 0.0)
    return base, base * np.exp(rng.normal(0, spread, n) + jump)
