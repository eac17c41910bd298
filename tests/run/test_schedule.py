"""run_interleaved: seeded random order per round, warm-ups, prepare/cleanup, failures."""

from __future__ import annotations

import pytest

from hone.core.errors import HoneError
from hone.run.benchmark import Measurement
from hone.run.schedule import Variant, extend_interleaved, run_interleaved


def _m(value: float = 1.0, error: str | None = None) -> Measurement:
    return Measurement(wall_s=value, cpu_s=value, user_s=value, sys_s=0.0, max_rss_kb=1, returncode=0,
                       timed_out=False, error=error)


def _recording(names: list[str], log: list[str]) -> list[Variant]:
    def make(name: str) -> Variant:
        def run() -> Measurement:
            log.append(name)
            return _m(float(len(log)))

        return Variant(name=name, run=run)

    return [make(n) for n in names]


def test_each_round_runs_every_variant_once_in_recorded_order() -> None:
    log: list[str] = []
    res = run_interleaved(_recording(["a", "b", "c"], log), rounds=12, warmup=0, seed=7)
    assert len(res.order) == 12 and res.seed == 7
    assert all(sorted(o) == ["a", "b", "c"] for o in res.order)
    assert log == [n for o in res.order for n in o]  # the recorded order is the executed order
    assert {len(v) for v in res.runs.values()} == {12}
    # Random, not a fixed rotation: with 12 rounds of 3 variants more than one order occurs.
    assert len({tuple(o) for o in res.order}) > 1


def test_same_seed_same_orders_different_seed_different_orders() -> None:
    names = ["a", "b", "c", "d"]
    one = run_interleaved(_recording(names, []), rounds=10, warmup=1, seed=3)
    two = run_interleaved(_recording(names, []), rounds=10, warmup=1, seed=3)
    other = run_interleaved(_recording(names, []), rounds=10, warmup=1, seed=4)
    assert one.order == two.order and one.warmup_order == two.warmup_order
    assert one.order != other.order


def test_runs_are_paired_by_round_index() -> None:
    log: list[str] = []
    res = run_interleaved(_recording(["a", "b"], log), rounds=5, warmup=0, seed=1)
    for i, order in enumerate(res.order):
        # The value is the global run counter: each round's two runs are adjacent.
        values = sorted(res.runs[n][i].wall_s for n in order)
        assert values[1] - values[0] == 1.0


def test_warmup_runs_are_discarded_and_reported_with_negative_rounds() -> None:
    seen: list[tuple[int, str]] = []
    res = run_interleaved(_recording(["a", "b"], []), rounds=3, warmup=2, seed=0,
                          on_run=lambda r, n, m: seen.append((r, n)))
    assert [r for r, _ in seen[:4]] == [-2, -2, -1, -1]
    assert [r for r, _ in seen[4:]] == [0, 0, 1, 1, 2, 2]
    assert all(len(v) == 2 for v in res.warmup_runs.values())
    assert all(len(v) == 3 for v in res.runs.values())


def test_prepare_and_cleanup_wrap_every_run_of_their_variant() -> None:
    log: list[str] = []
    v = Variant(name="a", run=lambda: (log.append("run"), _m())[1],
                prepare=lambda: log.append("prep"), cleanup=lambda: log.append("clean"))
    run_interleaved([v], rounds=2, warmup=1, seed=0)
    assert log == ["prep", "run", "clean"] * 3


def test_failing_prepare_becomes_a_failed_run_and_cleanup_still_runs() -> None:
    log: list[str] = []

    def bad_prepare() -> None:
        raise HoneError("mount failed")

    v = Variant(name="a", run=lambda: _m(), prepare=bad_prepare, cleanup=lambda: log.append("clean"))
    res = run_interleaved([v, Variant(name="b", run=lambda: _m())], rounds=3, warmup=0, seed=0)
    assert all(not m.ok and "prepare failed: mount failed" in (m.error or "") for m in res.runs["a"])
    assert all(m.ok for m in res.runs["b"])
    assert log == ["clean"] * 3


def test_run_raising_honeerror_is_a_failed_run_not_an_abort() -> None:
    def boom() -> Measurement:
        raise HoneError("command not found: nope")

    res = run_interleaved([Variant(name="a", run=boom)], rounds=2, warmup=0)
    assert [m.error for m in res.runs["a"]] == ["command not found: nope"] * 2


def test_keyboard_interrupt_propagates_after_cleanup() -> None:
    log: list[str] = []

    def interrupted() -> Measurement:
        raise KeyboardInterrupt

    v = Variant(name="a", run=interrupted, cleanup=lambda: log.append("clean"))
    with pytest.raises(KeyboardInterrupt):
        run_interleaved([v], rounds=3, warmup=0)
    assert log == ["clean"]


def test_extend_appends_rounds_with_reproducible_orders() -> None:
    variants = _recording(["a", "b", "c"], [])
    res = run_interleaved(variants, rounds=4, warmup=0, seed=5)
    extend_interleaved(res, variants, rounds=3)
    assert len(res.order) == 7 and all(len(v) == 7 for v in res.runs.values())
    again = run_interleaved(_recording(["a", "b", "c"], []), rounds=4, warmup=0, seed=5)
    extend_interleaved(again, _recording(["a", "b", "c"], []), rounds=3)
    assert again.order == res.order


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"rounds": 0}, "rounds must be at least 1"),
    ({"rounds": 2, "warmup": -1}, "warm-up"),
])
def test_bad_arguments_raise_honeerror(kwargs: dict[str, int], match: str) -> None:
    with pytest.raises(HoneError, match=match):
        run_interleaved(_recording(["a"], []), **kwargs)


def test_duplicate_names_and_no_variants_raise() -> None:
    with pytest.raises(HoneError, match="unique"):
        run_interleaved(_recording(["a", "a"], []), rounds=1)
    with pytest.raises(HoneError, match="no variants"):
        run_interleaved([], rounds=1)
