"""Doctor rules on synthetic profiles: thresholds fire where documented, hardware rules are
skipped (with the missing counters named) when there is no PMU, next commands are exact."""

from __future__ import annotations

from hone.diagnose.capabilities import Capabilities
from hone.diagnose.doctor import evaluate_rules
from hone.diagnose.perfstat import Counter, StatRun
from hone.diagnose.profile import ProfileResult, summarize_runs
from hone.diagnose.rules import DoctorContext, Target
from hone.diagnose.rules.kernel_time import THRESHOLD_PCT
from hone.diagnose.rules.small_io import find_buffer_option

NO_PMU = {"instructions": "<not supported>: no hardware PMU", "cycles": "<not supported>: no hardware PMU",
          "iTLB-loads": "<not supported>: no hardware PMU", "iTLB-load-misses": "<not supported>: no hardware PMU"}


def profile(user_s: float, sys_s: float, *, syscalls: float = 100.0, rw: float = 0.0, bytes_per_call: float = 0.0,
            extra: dict[str, float] | None = None, wall_s: float | None = None, vol: int = 5,
            invol: int = 5) -> ProfileResult:
    counters = {"task-clock": (user_s + sys_s) * 1000, "context-switches": 10.0, "cpu-migrations": 1.0,
                "page-faults": 100.0, "raw_syscalls:sys_enter": syscalls, "syscalls:sys_enter_write": rw,
                **(extra or {})}
    calls = max(rw, 1.0)
    run = StatRun({k: Counter(k, v) for k, v in counters.items()}, wall_s=wall_s or user_s + sys_s, user_s=user_s,
                  sys_s=sys_s, max_rss_kb=1000, voluntary_ctxt_switches=vol, involuntary_ctxt_switches=invol,
                  io={"rchar": 0, "wchar": int(bytes_per_call * calls), "syscr": 0, "syscw": int(calls)})
    quantities, derived = summarize_runs([run, run], NO_PMU)
    return ProfileResult(["prog"], None, list(counters), NO_PMU, [run, run], quantities, derived)


def ctx_for(p: ProfileResult, argv: list[str] | None = None) -> DoctorContext:
    return DoctorContext(p, Capabilities(pmu=False, pmu_why="no hardware PMU"), Target(argv or ["prog"]))


def test_kernel_time_fires_above_the_calibrated_threshold_only() -> None:
    high, _ = evaluate_rules(ctx_for(profile(0.2, 0.8)))
    low, _ = evaluate_rules(ctx_for(profile(0.8, 0.2)))
    assert "kernel-time" in [f.rule for f in high]
    assert "kernel-time" not in [f.rule for f in low]
    assert THRESHOLD_PCT == 40.0


def test_hardware_rules_are_not_evaluated_without_counters_and_say_why() -> None:
    _, skipped = evaluate_rules(ctx_for(profile(0.5, 0.5)))
    assert "ipc" in skipped and "frontend" in skipped
    assert skipped["ipc"]["instructions"].startswith("<not supported>")


def test_small_io_proposes_larger_buffers_with_the_exact_command(tmp_path) -> None:  # type: ignore[no-untyped-def]
    argv = ["./fcopy", "-d", str(tmp_path), "-b", "256"]
    findings, _ = evaluate_rules(ctx_for(profile(0.1, 0.9, syscalls=1000, rw=1000, bytes_per_call=256), argv))
    small = next(f for f in findings if f.rule == "small-io")
    exp = small.experiments[0]
    assert [v.argv[-1] for v in exp.variants] == ["256", "1024", "4096"]
    cmd = exp.compare_command(Target(argv), 10)
    assert cmd.startswith("hone compare ") and "-b 4096" in cmd and "-r 10" in cmd


def test_filesystem_rule_proposes_tmpfs_for_a_disk_directory(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from hone.diagnose.rules.filesystem import filesystem_of

    if filesystem_of(str(tmp_path))[1] in {"tmpfs", "ramfs"}:
        import pytest

        pytest.skip("the test directory is already on tmpfs")
    argv = ["./fcopy", "-d", str(tmp_path)]
    findings, _ = evaluate_rules(ctx_for(profile(0.1, 0.9, syscalls=1000, rw=1000, bytes_per_call=256), argv))
    fs = next(f for f in findings if f.rule == "filesystem")
    variants = fs.experiments[0].variants
    assert variants[1].name == "tmpfs" and variants[1].argv[2].startswith("/dev/shm/")


def test_spec_experiments_become_spec_variants() -> None:
    from hone.diagnose.rules import Experiment, ExperimentVariant

    target = Target(["./x", "-b", "256"], spec_path="hone.yaml", template=["./x", "-b", "{bufsize}"])
    exp = Experiment("buffer size", "h", [ExperimentVariant("a", ["./x", "-b", "256"]),
                                          ExperimentVariant("b", ["./x", "-b", "1024"])])
    assert exp.compare_command(target, 8) == "hone compare hone.yaml --variant b:bufsize=1024 -r 8"
    # a spec compare judges on another figure (tune.objective: weighted): the metric the doctor measured, named
    target.metric, target.spec_compares = "tps", "objective"
    assert exp.compare_command(target, 8) == "hone compare hone.yaml --variant b:bufsize=1024 --metric tps -r 8"


def test_buffer_option_forms() -> None:
    assert find_buffer_option(["dd", "bs=512"]) == (1, "bs=", 512)
    assert find_buffer_option(["x", "--bs", "64"]) == (2, "", 64)
    assert find_buffer_option(["x", "-q"]) is None


def test_off_cpu_tells_blocking_from_cpu_contention() -> None:
    blocked, _ = evaluate_rules(ctx_for(profile(0.1, 0.1, wall_s=2.0, vol=500, invol=3)))
    starved, _ = evaluate_rules(ctx_for(profile(0.1, 0.1, wall_s=2.0, vol=3, invol=500)))
    busy, _ = evaluate_rules(ctx_for(profile(0.5, 0.5, wall_s=1.1)))
    assert next(f for f in blocked if f.rule == "off-cpu").title.startswith("The program spends most")
    assert "contention" in next(f for f in starved if f.rule == "off-cpu").title
    assert "off-cpu" not in [f.rule for f in busy]
