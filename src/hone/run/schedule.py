"""Interleaved rounds: every variant once per round, in a fresh seeded random order.

Running all A then all B lets slow drifts of a shared machine (another build starting,
thermal state, page cache) land on one variant only: on a shared machine that gives false
"differences" far more often than interleaving (docs/decisions/0001-interleaved-rounds.md). Randomizing the order within
a round stops a fixed "B always runs right after A" from biasing B.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hone.core.errors import HoneError
from hone.core.faults import crash_point
from hone.run.benchmark import Measurement


@dataclass
class Variant:
    """One arm of a comparison.

    ``run`` measures once and must not raise for a failing benchmark (it sets
    ``Measurement.error``). ``prepare``/``cleanup`` run untimed around every run of this
    variant (warm-ups included), e.g. apply its knobs, mount a tmpfs.
    """

    name: str
    run: Callable[[], Measurement]
    prepare: Callable[[], None] | None = None
    cleanup: Callable[[], None] | None = None


@dataclass
class InterleavedResult:
    """``runs[name][i]`` is that variant's measurement in round ``i``; ``order[i]`` is
    the order the variants ran in round ``i``; ``seed`` reproduces the orders.
    ``warmup_order`` records the warm-up rounds the same way (their runs are discarded)."""

    runs: dict[str, list[Measurement]]
    order: list[list[str]]
    seed: int
    warmup_order: list[list[str]] = field(default_factory=list)
    warmup_runs: dict[str, list[Measurement]] = field(default_factory=dict)


def failed_measurement(error: str) -> Measurement:
    """A run that never produced numbers (its prepare step failed, or it raised)."""
    nan = math.nan
    return Measurement(
        wall_s=nan, cpu_s=nan, user_s=nan, sys_s=nan, max_rss_kb=0, returncode=-1, timed_out=False,
        error=error,
    )


def measure_variant(variant: Variant) -> Measurement:
    """prepare → run → cleanup for one variant; a HoneError in any step becomes a failed
    Measurement (reported as a failed run, never hidden). Cleanup runs even if the run fails.
    KeyboardInterrupt propagates so callers restore the machine and stop."""
    try:
        if variant.prepare is not None:
            variant.prepare()
    except HoneError as exc:
        m = failed_measurement(f"prepare failed: {exc.message}")
        _cleanup(variant, m)
        return m
    try:
        m = variant.run()
    except HoneError as exc:
        m = failed_measurement(exc.message)
    finally:
        cleanup_error = _cleanup_error(variant)
    if cleanup_error and m.ok:
        m.error = f"cleanup failed: {cleanup_error}"
    return m


def _cleanup_error(variant: Variant) -> str | None:
    if variant.cleanup is None:
        return None
    try:
        variant.cleanup()
    except HoneError as exc:
        return exc.message
    return None


def _cleanup(variant: Variant, m: Measurement) -> None:
    err = _cleanup_error(variant)
    if err:
        m.error = f"{m.error}; cleanup failed: {err}"


def round_orders(names: Sequence[str], rounds: int, rng: random.Random) -> list[list[str]]:
    """``rounds`` independent random permutations of ``names``."""
    return [rng.sample(list(names), len(names)) for _ in range(rounds)]


def run_interleaved(
    variants: Sequence[Variant],
    *,
    rounds: int,
    warmup: int = 1,
    seed: int = 0,
    on_run: Callable[[int, str, Measurement], None] | None = None,
) -> InterleavedResult:
    """Run ``warmup`` discarded rounds, then ``rounds`` measured rounds, each variant once
    per round in a seeded random order.

    ``on_run(round, name, measurement)`` is called after every run; warm-up rounds are
    reported with negative round numbers (−warmup … −1), measured ones with 0 … rounds−1.
    Raises HoneError for duplicate names, no variants or rounds < 1.
    """
    names = [v.name for v in variants]
    if not variants:
        raise HoneError("nothing to compare: no variants")
    if len(set(names)) != len(names):
        raise HoneError(f"variant names must be unique, got {names}")
    if rounds < 1:
        raise HoneError(f"rounds must be at least 1, got {rounds}")
    if warmup < 0:
        raise HoneError(f"warm-up must be 0 or more, got {warmup}")
    by_name = {v.name: v for v in variants}
    rng = random.Random(seed)
    result = InterleavedResult(
        runs={n: [] for n in names},
        order=[],
        seed=seed,
        warmup_order=round_orders(names, warmup, rng),
        warmup_runs={n: [] for n in names},
    )
    for w, order in enumerate(result.warmup_order):
        for name in order:
            m = measure_variant(by_name[name])
            result.warmup_runs[name].append(m)
            if on_run:
                on_run(w - warmup, name, m)
    extend_interleaved(result, variants, rounds=rounds, rng=rng, on_run=on_run)
    return result


def extend_interleaved(
    result: InterleavedResult,
    variants: Sequence[Variant],
    *,
    rounds: int,
    rng: random.Random | None = None,
    on_run: Callable[[int, str, Measurement], None] | None = None,
) -> InterleavedResult:
    """Append ``rounds`` more measured rounds to ``result`` (a planned extension, e.g.
    ``--max-rounds``). Without ``rng`` the orders continue from a generator seeded with
    ``result.seed`` and the number of rounds already run, so they stay reproducible."""
    by_name = {v.name: v for v in variants}
    names = [v.name for v in variants]
    if rng is None:
        rng = random.Random(f"{result.seed}:{len(result.order)}")
    start = len(result.order)
    for i, order in enumerate(round_orders(names, rounds, rng)):
        result.order.append(order)
        for name in order:
            m = measure_variant(by_name[name])
            result.runs[name].append(m)
            if on_run:
                on_run(start + i, name, m)
            crash_point("schedule.round")
    return result
