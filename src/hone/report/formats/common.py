"""Pieces several result formats share: numbers that may be absent, a run, a summary, a
paired comparison, the machine fingerprint.

Every ``TypedDict`` here lists the fields a reader may rely on; a document may carry more
(fields are added within a version), and validation ignores them.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

# A number hone could not compute: strict JSON writes NaN and ±∞ as null, Python's json
# module as NaN/Infinity (both read back as floats); every statistic may be either.
Num = float | None
# [low, high] of a confidence interval; an end that is unbounded or unknown is null.
Pair = Annotated[list[Num], Field(min_length=2, max_length=2)]
# A knob value or a metric value as the spec gave it (string, number or boolean).
Value = Any


class Measurement(TypedDict):
    """One benchmark run (:class:`hone.run.benchmark.Measurement`); seconds and KiB."""

    wall_s: float
    cpu_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    returncode: int | None
    timed_out: bool
    metrics: dict[str, Num]
    error: str | None
    # Added within the current versions: "perf" or "valgrind" when the run was under the
    # instruction counter (under valgrind its times and RSS are valgrind's), else null.
    counted_by: NotRequired[str | None]


class Summary(TypedDict):
    """Summary of one sample (:class:`hone.stats.summary.Summary`), in the metric's unit;
    ``cv`` is stddev/mean as a fraction."""

    n: int
    mean: Num
    median: Num
    stddev: Num
    cv: Num
    min: Num
    max: Num
    p95: Num
    p99: Num


class ComparisonBase(TypedDict):
    """Candidate vs reference over paired rounds (:class:`hone.stats.paired.PairedComparison`),
    without the verdict, whose words each format version fixes. ``ratio`` is
    candidate/reference; ``change_pct``, ``ci_pct`` and ``mde_pct`` are % changes."""

    n: int
    ratio: Num
    change_pct: Num
    ci_pct: Pair
    p_value: Num
    mde_pct: Num
    improved: bool
    goal: NotRequired[str]
    threshold: NotRequired[float]
    alpha: NotRequired[float]
    confidence: NotRequired[float]
    dropped: NotRequired[int]
    reason: NotRequired[str]
    estimator: NotRequired[str]
    tail_ratio: NotRequired[Num]


class Comparison(ComparisonBase):
    """A comparison inside a tune or doctor result: ``verdict`` is one of the words of
    :data:`hone.stats.paired.Verdict` (older documents: "no difference" too)."""

    verdict: str
    rounds_needed: NotRequired[int | None]


class Conflict(TypedDict):
    """A daemon that can change settings underneath a measurement (:mod:`hone.core.conflicts`)."""

    daemon: str
    found: list[str]
    pids: list[int]
    what: str
    changes: list[str]


class Fingerprint(TypedDict):
    """The machine a measurement was taken on (:func:`hone.core.fingerprint.fingerprint`)."""

    hostname: str
    kernel: str
    machine: str
    cpu_model: str | None
    cpus: int | None
    governor: str | None
    thp: str | None
    loadavg: list[float]
    python: str
    hone: str
    tools: dict[str, str | None]
    spec_sha256: NotRequired[str]
    # Added within the current versions (older documents lack them).
    conflicts: NotRequired[list[Conflict]]
    conflict_notes: NotRequired[list[str]]


def today_verdicts(doc: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``doc`` with every verdict "no difference" (what hone said before the
    verdicts became faster/slower/equivalent/inconclusive) shown as "inconclusive": it only
    said the test was not significant, or the change below the threshold, and never ruled a
    change out, which is what inconclusive says now. The old words stay in the reason."""
    out = copy.deepcopy(doc)
    stack: list[Any] = [out]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("verdict") == "no difference":
                node["verdict"] = "inconclusive"
                node["reason"] = f"written as 'no difference': {node.get('reason') or 'not significant'}"
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return out
