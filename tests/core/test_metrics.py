"""The word a report shows for a verdict: faster/slower for times and rates, better/worse else."""

from __future__ import annotations

import pytest

from hone.core.metrics import BUILTIN, is_speed, verdict_word


@pytest.mark.parametrize("unit", ["s", "ms", "µs", "ns", "ops/s", "req/s", "tx/s", "MB/s", "KiB/s", "MB / s",
                                  "req/min", "tps", "QPS", "instructions"])
def test_times_and_rates_are_speeds(unit: str) -> None:
    assert is_speed(unit)
    assert verdict_word("faster", unit) == "faster" and verdict_word("slower", unit) == "slower"


@pytest.mark.parametrize("unit", ["B", "bytes", "KiB", "%", "score", "errors", "", None, "s/op/x"])
def test_sizes_scores_and_unnamed_units_are_better_or_worse(unit: str | None) -> None:
    assert not is_speed(unit)
    assert verdict_word("faster", unit) == "better" and verdict_word("slower", unit) == "worse"


def test_equivalent_inconclusive_and_tune_words_pass_through() -> None:
    for word in ("equivalent", "inconclusive", "keep the current configuration", "no candidate to confirm"):
        assert verdict_word(word, "B") == word and verdict_word(word, "s") == word


def test_a_verdict_on_several_metrics_is_faster_only_when_every_one_is_a_speed() -> None:
    assert verdict_word("faster", "req/s", "ms") == "faster"
    assert verdict_word("faster", "req/s", "KiB") == "better"
    assert verdict_word("faster") == "better"  # a result that names no unit


def test_builtin_metrics_get_their_words() -> None:
    words = {name: verdict_word("faster", m.unit) for name, m in BUILTIN.items()}
    assert words == {"cpu_time": "faster", "wall_time": "faster", "user_time": "faster", "sys_time": "faster",
                     "max_rss": "better", "instructions": "faster"}
