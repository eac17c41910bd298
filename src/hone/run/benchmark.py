"""Run a spec's benchmark once under a configuration and measure it."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hone.errors import BenchmarkError, KnobError
from hone.run.configure import BenchContext
from hone.run.metrics import extract
from hone.run.process import ProcessResult, run_process
from hone.shell_text import bind_argv
from hone.spec.loader import LoadedSpec
from hone.spec.models import to_argv


@dataclass
class Measurement:
    """One run: times in seconds, RSS in KiB, metric values by name."""

    wall_s: float
    cpu_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    returncode: int
    timed_out: bool
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

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
    variable instead, so the value is never parsed as shell code (:mod:`hone.shell_text`)."""
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


def run_once(loaded: LoadedSpec, ctx: BenchContext, wrapper: list[str] | None = None) -> Measurement:
    """Run the benchmark once (prepare → command → cleanup) and extract every metric.

    A failed, timed-out or unparsable run returns a Measurement with ``error`` set; it
    does not raise, so schedulers can count failures. A system knob that no longer holds
    the configuration's value (``ctx.check``) fails the run before it starts; a service that
    dies during it (``ctx.abort``) stops it at once.
    """
    if ctx.check is not None:
        try:
            ctx.check()
        except KnobError as exc:
            return Measurement(0.0, 0.0, 0.0, 0.0, 0, -1, False, error=f"not run: {exc.message}")
    bench = loaded.spec.benchmark
    argv, bound = bind_command(bench.argv(), ctx.params)
    run_hook(loaded, "prepare", ctx)
    try:
        result = run_process(
            [*(wrapper or []), *argv], timeout=bench.timeout, env={**benchmark_env(loaded, ctx), **bound},
            cwd=benchmark_cwd(loaded), label="benchmark", abort_if=ctx.abort,
        )
    finally:
        run_hook(loaded, "cleanup", ctx)
    m = Measurement.from_process(result)
    if not result.ok:
        # A failed run against a service that died says so (a client often only sees a refusal).
        died = ctx.abort() if ctx.abort is not None and result.aborted is None else None
        m.error = died or result.describe_failure()
        return m
    for metric in loaded.spec.metrics:
        try:
            m.metrics[metric.name] = extract(metric, result)
        except BenchmarkError as exc:
            m.error = exc.message
            return m
    return m
