"""``hone run``: apply a configuration, run warm-ups and repeats, restore, summarise."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from hone.core.errors import BenchmarkError, HoneError
from hone.core.fingerprint import fingerprint
from hone.core.metrics import figures
from hone.run.benchmark import Measurement, run_once
from hone.run.configure import Configurator, changes_machine
from hone.run.instructions import instruction_counter
from hone.run.journal import machine_lock_if
from hone.spec.loader import LoadedSpec
from hone.spec.models import Scalar
from hone.stats.summary import Summary, summarize

RUN_FORMAT = "hone-run/1"


@dataclass
class RunResult:
    """Every repeat of one configuration, with per-metric summaries."""

    spec_name: str
    config: dict[str, Any]
    runs: list[Measurement]
    warmup: int
    started: float
    finished: float
    fingerprint: dict[str, Any] = field(default_factory=dict)
    restore_problems: list[str] = field(default_factory=list)

    @property
    def ok_runs(self) -> list[Measurement]:
        return [r for r in self.runs if r.ok]

    def summaries(self) -> dict[str, Summary]:
        ok = [figures(r) for r in self.ok_runs]
        if not ok:
            return {}
        return {name: summarize([f[name] for f in ok]) for name in ok[0]}

    @property
    def notes(self) -> list[str]:
        """How instructions were counted (under valgrind: why no times are shown)."""
        return [f"instructions {instruction_counter().describe()}"] if any(r.counted_by for r in self.runs) else []

    def to_json(self) -> dict[str, Any]:
        return {
            "format": RUN_FORMAT,
            "spec": self.spec_name,
            "config": self.config,
            "warmup": self.warmup,
            "started": self.started,
            "finished": self.finished,
            "runs": [r.to_dict() for r in self.runs],
            "summary": {k: v.to_dict() for k, v in self.summaries().items()},
            "failed_runs": sum(1 for r in self.runs if not r.ok),
            "notes": self.notes,
            "restore_problems": self.restore_problems,
            "fingerprint": self.fingerprint,
        }


def run_spec(
    loaded: LoadedSpec,
    values: dict[str, Scalar],
    *,
    repeats: int | None = None,
    warmup: int | None = None,
    on_run: Any = None,
) -> RunResult:
    """Apply ``values`` (journaled), run warm-ups then repeats, restore everything.

    Raises BenchmarkError when every repeat failed (after restoring)."""
    bench = loaded.spec.benchmark
    repeats = bench.repeats if repeats is None else repeats
    warmup = bench.warmup if warmup is None else warmup
    if repeats < 1:
        raise HoneError(f"--repeats must be at least 1, got {repeats}")
    started = time.time()
    runs: list[Measurement] = []
    with machine_lock_if(changes_machine(loaded), f"hone run {loaded.path}"):
        configurator = Configurator(loaded)
        problems: list[str] = []
        try:
            config = {**configurator.current_values(), **values}
            ctx = configurator.apply(values)
            for i in range(warmup):
                m = run_once(loaded, ctx)
                if on_run:
                    on_run("warmup", i, m)
            for i in range(repeats):
                m = run_once(loaded, ctx)
                runs.append(m)
                if on_run:
                    on_run("run", i, m)
        finally:
            problems = configurator.restore()
    result = RunResult(
        spec_name=loaded.spec.name or "",
        config=config,
        runs=runs,
        warmup=warmup,
        started=started,
        finished=time.time(),
        fingerprint=fingerprint(loaded.path.read_text()),
        restore_problems=problems,
    )
    if not result.ok_runs:
        raise BenchmarkError(f"benchmark failed in all {repeats} runs: {runs[0].error}")
    return result
