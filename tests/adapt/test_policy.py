"""The read-ahead policy: A-Tune's thresholds applied to one device, with hysteresis."""

from __future__ import annotations

import pytest

from hone.adapt.policy import FileSample, ReadaheadPolicy, decide
from hone.core.errors import HoneError

POLICY = ReadaheadPolicy(lower_pct=30, upper_pct=70, min_file_kb=4096, min_reads=10)
BIG = 64 << 20


def f(reads: int, sequential: int, size: int | None = BIG, extent: int = 0) -> FileSample:
    return FileSample(reads, sequential, size, extent)


@pytest.mark.parametrize(("seq", "current", "expected"), [
    (0, None, "random"), (30, None, "random"),  # at the lower bound: random (A-Tune: <=)
    (31, None, None), (69, "random", "random"), (69, "sequential", "sequential"),  # between: keep
    (70, None, "sequential"), (100, "random", "sequential"),  # at the upper bound: sequential (>=)
])
def test_bounds_are_inclusive_and_the_band_between_keeps_the_current_mode(
        seq: int, current: str | None, expected: str | None) -> None:
    assert decide(POLICY, [f(100, seq)], current).mode == expected  # type: ignore[arg-type]


def test_no_qualifying_file_keeps_the_current_mode() -> None:
    d = decide(POLICY, [f(9, 0), f(100, 0, size=4096 * 1024 - 1)], "sequential")
    assert (d.mode, d.files, d.reads) == ("sequential", 0, 0)


def test_qualifying_files_pool_their_accesses() -> None:
    # 90 random accesses outweigh 20 sequential ones; the small file does not count
    d = decide(POLICY, [f(90, 0), f(20, 20), f(500, 500, size=1024)], None)
    assert d.mode == "random" and d.files == 2 and d.reads == 110
    assert d.share == pytest.approx(20 / 110)


def test_a_file_whose_size_is_unknown_counts_by_the_extent_read() -> None:
    assert decide(POLICY, [f(50, 50, size=None, extent=1 << 20)], None).files == 0
    assert decide(POLICY, [f(50, 50, size=None, extent=8 << 20)], None).mode == "sequential"


def test_a_report_that_splits_a_count_never_gives_a_share_above_one() -> None:
    assert decide(POLICY, [f(10, 12)], None).share == 1.0


@pytest.mark.parametrize(("kwargs", "flag"), [
    ({"lower_pct": 70, "upper_pct": 30}, "--lower"), ({"lower_pct": 0}, "--lower"), ({"upper_pct": 100}, "--lower"),
    ({"min_reads": 0}, "--min-reads"), ({"interval_s": 0}, "--interval"), ({"random_kb": 0}, "--random-kb"),
    ({"sequential_kb": 2 << 20}, "--sequential-kb"), ({"min_file_kb": -1}, "--min-file-kb"),
])
def test_parameters_out_of_their_domain_are_refused_naming_the_flag(kwargs: dict[str, float], flag: str) -> None:
    with pytest.raises(HoneError, match=flag):
        ReadaheadPolicy(**kwargs).check()  # type: ignore[arg-type]


def test_equal_sizes_mean_a_held_value() -> None:
    assert not ReadaheadPolicy(random_kb=128, sequential_kb=128).adaptive
    assert ReadaheadPolicy().adaptive
