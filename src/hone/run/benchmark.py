"""Run a spec's benchmark once under a configuration and measure it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hone.core.errors import BenchmarkError, KnobError
from hone.core.metrics import BUILTIN
from hone.core.process import ProcessResult, run_process
from hone.core.shell_text import bind_argv
from hone.run.configure import BenchContext
from hone.run.instructions import InstructionsUnavailable, counted_command, instruction_counter
from hone.run.metrics import extract
from hone.spec.loader import LoadedSpec
from hone.spec.models import to_argv


@dataclass
class Measurement:
    """One run: times in seconds, RSS in KiB, metric values by name. ``counted_by`` names the
    instruction counter the run ran under (``perf``/``valgrind``; None when not counted)."""

    wall_s: float
    cpu_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    returncode: int
    timed_out: bool
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    counted_by: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def timed(self) -> bool:
        """False when the run's times and RSS are valgrind's, not the program's."""
        return self.counted_by != "valgrind"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_process(cls, result: ProcessResult) -> Measurement:
        return cls(
            wall_s=result.wall_s,
            cpu_s=result.cpu_s,
            user_s=result.user_s,
            sys_s=result.sys_s,
            max_rss_kb=result.max_rss_kb,
            returncode=result.returncode,
            timed_out=result.timed_out,
        )


def bind_command(argv: list[str], params: dict[str, str], what: str = "benchmark.command"
                 ) -> tuple[list[str], dict[str, str]]:
    """``{name}`` placeholders bound to the params: (argv, environment additions).

    An argv element gets the value in place (one element stays one); the script of a shell
    ``-c`` (``shell: true``, or an argv like ``[sh, -c, …]``) reads it from an environment
    variable instead, so the value is never parsed as shell code (:mod:`hone.core.shell_text`)."""
    return bind_argv(argv, params, what=what)


def benchmark_cwd(loaded: LoadedSpec) -> Path:
    cwd = loaded.spec.benchmark.cwd
    base = loaded.base_dir
    return (base / cwd) if cwd else base


def benchmark_env(loaded: LoadedSpec, ctx: BenchContext) -> dict[str, str]:
    return {**os.environ, **loaded.spec.benchmark.env, **ctx.env}


def run_hook(loaded: LoadedSpec, which: str, ctx: BenchContext) -> None:
    """Run the spec's ``prepare`` or ``cleanup`` command (untimed)."""
    command = getattr(loaded.spec.benchmark, which)
    if command is None:
        return
    argv, bound = bind_command(to_argv(command, loaded.spec.benchmark.shell), ctx.params, f"benchmark.{which}")
    res = run_process(argv, timeout=loaded.spec.benchmark.timeout, env={**benchmark_env(loaded, ctx), **bound},
                      cwd=benchmark_cwd(loaded), label=f"benchmark.{which}")
    if not res.ok:
        raise BenchmarkError(f"benchmark.{which} failed: {res.describe_failure()}")


def run_measured(argv: list[str], *, timeout: float, count: bool = False, wrapper: Sequence[str] = (),
                 **kwargs: Any) -> tuple[Measurement, ProcessResult]:
    """Run ``argv`` once (:func:`run_process`, ``kwargs`` passed on) behind ``wrapper``
    (taskset, setarch); with ``count``, under the instruction counter, the count in
    ``metrics["instructions"]``. A failed run, or one whose count could not be read, has
    ``error`` set."""
    if not count:
        result = run_process([*wrapper, *argv], timeout=timeout, **kwargs)
        m = Measurement.from_process(result)
        if not result.ok:
            m.error = result.describe_failure()
        return m, result
    with counted_command(argv, timeout) as cmd:
        result = run_process([*wrapper, *cmd.argv], timeout=cmd.timeout, **kwargs)
        m = Measurement.from_process(result)
        m.counted_by = cmd.counter.name
        instructions, m.error = cmd.finish(result)
    if instructions is not None:
        m.metrics["instructions"] = instructions
    return m, result


def _counted(name: str) -> bool:
    return name in BUILTIN and BUILTIN[name].counted


def run_once(loaded: LoadedSpec, ctx: BenchContext, wrapper: list[str] | None = None,
             count: bool | None = None) -> Measurement:
    """Run the benchmark once (prepare → command → cleanup) and extract every metric.

    A failed, timed-out or unparsable run returns a Measurement with ``error`` set; it
    does not raise, so schedulers can count failures. A system knob that no longer holds
    the configuration's value (``ctx.check``) fails the run before it starts; a service that
    dies during it (``ctx.abort``) stops it at once.

    ``count`` runs the command under the instruction counter (:mod:`hone.run.instructions`);
    None counts when the spec lists ``instructions``. Under valgrind the run has no times of
    its own: a spec that also lists a timed built-in (cpu_time …) is not run; with an
    explicit ``count`` (``hone compare --metric instructions``) those metrics are left out.
    """
    if ctx.check is not None:
        try:
            ctx.check()
        except KnobError as exc:
            return Measurement(0.0, 0.0, 0.0, 0.0, 0, -1, False, error=f"not run: {exc.message}")
    counting = any(_counted(m.name) for m in loaded.spec.metrics if m.is_builtin) if count is None else count
    timed = [m.name for m in loaded.spec.metrics if m.is_builtin and not _counted(m.name)]
    if counting:
        try:
            counter = instruction_counter()
        except InstructionsUnavailable as exc:
            return Measurement(0.0, 0.0, 0.0, 0.0, 0, -1, False, error=f"not run: {exc.message}")
        if not counter.timed and timed and count is None:
            return Measurement(0.0, 0.0, 0.0, 0.0, 0, -1, False, error=(
                f"not run: instructions are counted by valgrind here ({counter.why}), so {', '.join(timed)} would "
                "be valgrind's; measure them in a spec without instructions"))
    bench = loaded.spec.benchmark
    argv, bound = bind_command(bench.argv(), ctx.params)
    run_hook(loaded, "prepare", ctx)
    try:
        m, result = run_measured(argv, timeout=bench.timeout, count=counting, wrapper=wrapper or (),
                                 env={**benchmark_env(loaded, ctx), **bound}, cwd=benchmark_cwd(loaded),
                                 label="benchmark", abort_if=ctx.abort)
    finally:
        run_hook(loaded, "cleanup", ctx)
    if not result.ok:
        # A failed run against a service that died says so (a client often only sees a refusal).
        died = ctx.abort() if ctx.abort is not None and result.aborted is None else None
        m.error = died or m.error
        return m
    if not m.ok:
        return m
    counted = m.metrics
    m.metrics = {}
    for metric in loaded.spec.metrics:
        if metric.is_builtin and (_counted(metric.name) or not m.timed):
            if metric.name in counted:  # counted above; a timed built-in under valgrind is no figure
                m.metrics[metric.name] = counted[metric.name]
            continue
        try:
            m.metrics[metric.name] = extract(metric, result)
        except BenchmarkError as exc:
            m.error = exc.message
            return m
    m.metrics.update(counted)  # compared without being a spec metric (hone compare --metric instructions)
    return m
