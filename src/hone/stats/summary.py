"""Per-sample summary: the columns engineers publish (the AutoFDO before/after table,
docs/seed-formats.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class Summary:
    """n, mean, median, population stddev (STDDEVP), stddev/mean, min, max, P95, P99.

    ``cv`` is stddev/mean as a fraction (0.0026 = 0.26%); NaN when the mean is 0.
    Percentiles use linear interpolation between order statistics (numpy's default).
    """

    n: int
    mean: float
    median: float
    stddev: float
    cv: float
    min: float
    max: float
    p95: float
    p99: float

    def to_dict(self) -> dict[str, float]:
        return asdict(self)


def sample_cv(values: Sequence[float]) -> float:
    """Sample stddev (n − 1; 0 for one value) over |mean|: the noise hone estimates from a few
    runs of one configuration. NaN when the mean is 0 (or a value is NaN)."""
    n = len(values)
    mean = sum(values) / n
    sd = (sum((v - mean) ** 2 for v in values) / max(1, n - 1)) ** 0.5
    return sd / abs(mean) if mean else math.nan


def summarize(values: Sequence[float]) -> Summary:
    """Summary of ``values`` (any unit). Raises ValueError on an empty sample."""
    if len(values) == 0:
        raise ValueError("cannot summarize an empty sample")
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    std = float(arr.std(ddof=0))
    return Summary(
        n=int(arr.size),
        mean=mean,
        median=float(np.median(arr)),
        stddev=std,
        cv=std / abs(mean) if mean != 0 else math.nan,
        min=float(arr.min()),
        max=float(arr.max()),
        p95=float(np.percentile(arr, 95)),
        p99=float(np.percentile(arr, 99)),
    )
