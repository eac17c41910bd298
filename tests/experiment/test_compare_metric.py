"""How `hone compare` picks its default metric for commands."""

from __future__ import annotations

from hone.experiment.compare import choose_command_metric
from hone.run.benchmark import Measurement


def _m(cpu: float, wall: float) -> Measurement:
    return Measurement(wall_s=wall, cpu_s=cpu, user_s=cpu, sys_s=0.0, max_rss_kb=1, returncode=0, timed_out=False)


def test_cpu_bound_command_compares_cpu_time() -> None:
    assert choose_command_metric([_m(0.019, 0.020)] * 3)[0] == "cpu_time"


def test_sleeping_command_compares_wall_time() -> None:
    metric, reason = choose_command_metric([_m(0.001, 0.011)] * 3)
    assert metric == "wall_time" and "not CPU-bound" in reason


def test_cpu_bound_command_on_a_loaded_machine_is_still_cpu_bound() -> None:
    # Another build leaves 30% of a CPU: a busy program shows cpu/wall 0.28, not a sleeper.
    assert choose_command_metric([_m(0.028, 0.100)] * 3, available=0.3)[0] == "cpu_time"
    assert choose_command_metric([_m(0.028, 0.100)] * 3, available=1.0)[0] == "wall_time"


def test_failed_runs_are_ignored_and_no_runs_default_to_cpu_time() -> None:
    bad = _m(0.0, 0.01)
    bad.error = "exit 1"
    assert choose_command_metric([bad])[0] == "cpu_time"
