"""Run a spec's benchmark once under a configuration and measure it."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hone.errors import BenchmarkError
from hone.run.configure import BenchContext
from hone.run.metrics import extract
from hone.run.process import ProcessResult, run_process
from hone.spec.loader import LoadedSpec
from hone.spec.models import PLACEHOLDER, to_argv


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


def substitute(argv: list[str], params: dict[str, str]) -> list[str]:
    """Replace ``{name}`` in each argv element by the param's value (one element stays one)."""
    return [PLACEHOLDER.sub(lambda m: params.get(m.group(1), m.group(0)), arg) for arg in argv]


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
    argv = substitute(to_argv(command, loaded.spec.benchmark.shell), ctx.params)
    res = run_process(argv, timeout=loaded.spec.benchmark.timeout, env=benchmark_env(loaded, ctx),
                      cwd=benchmark_cwd(loaded))
    if not res.ok:
        raise BenchmarkError(f"benchmark.{which} failed: {res.describe_failure()}")


def run_once(loaded: LoadedSpec, ctx: BenchContext, wrapper: list[str] | None = None) -> Measurement:
    """Run the benchmark once (prepare → command → cleanup) and extract every metric.

    A failed, timed-out or unparsable run returns a Measurement with ``error`` set; it
    does not raise, so schedulers can count failures.
    """
    bench = loaded.spec.benchmark
    argv = substitute(bench.argv(), ctx.params)
    run_hook(loaded, "prepare", ctx)
    try:
        result = run_process(
            [*(wrapper or []), *argv], timeout=bench.timeout, env=benchmark_env(loaded, ctx), cwd=benchmark_cwd(loaded)
        )
    finally:
        run_hook(loaded, "cleanup", ctx)
    m = Measurement.from_process(result)
    if not result.ok:
        m.error = result.describe_failure()
        return m
    for metric in loaded.spec.metrics:
        try:
            m.metrics[metric.name] = extract(metric, result)
        except BenchmarkError as exc:
            m.error = exc.message
            return m
    return m
