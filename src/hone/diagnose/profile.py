"""``hone profile``: repeated ``perf stat`` runs, per-quantity variation, derived metrics.

The result is a versioned JSON document (``hone-profile/1``, docs/formats.md) that ``hone doctor`` and the
reports read, so a report can be regenerated without re-running anything.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from hone.core.errors import CapabilityError, HoneError
from hone.diagnose.capabilities import Capabilities
from hone.diagnose.derived import DerivedMetric, derive
from hone.diagnose.perfstat import StatRun, perf_stat_command, perf_stat_pid
from hone.stats.summary import Summary, summarize

PROFILE_FORMAT = "hone-profile/1"


@dataclass
class DerivedSummary:
    """A derived metric over all runs: ``summary`` is None when its sources are missing."""

    name: str
    unit: str
    formula: str
    sources: list[str]
    summary: Summary | None
    missing: dict[str, str] = field(default_factory=dict)
    note: str = ""

    @property
    def mean(self) -> float | None:
        return self.summary.mean if self.summary else None


@dataclass
class ProfileResult:
    """What ``hone profile`` measured. ``missing`` maps each unusable event to why."""

    command: list[str]
    pid: int | None
    events: list[str]
    missing: dict[str, str]
    runs: list[StatRun]
    quantities: dict[str, Summary]
    derived: dict[str, DerivedSummary]
    notes: list[str] = field(default_factory=list)

    def value(self, name: str) -> float | None:
        """Mean of a derived metric or a raw quantity; None when absent."""
        if name in self.derived:
            return self.derived[name].mean
        s = self.quantities.get(name)
        return s.mean if s else None

    @property
    def command_text(self) -> str:
        return shlex.join(self.command) if self.command else f"pid {self.pid}"

    def to_json(self) -> dict[str, Any]:
        return {
            "format": PROFILE_FORMAT,
            "command": self.command,
            "pid": self.pid,
            "events": self.events,
            "missing": self.missing,
            "runs": [r.to_json() for r in self.runs],
            "quantities": {k: s.to_dict() for k, s in self.quantities.items()},
            "derived": {
                k: {**{f: v for f, v in asdict(d).items() if f != "summary"},
                    "summary": d.summary.to_dict() if d.summary else None}
                for k, d in self.derived.items()
            },
            "notes": self.notes,
        }


def choose_events(caps: Capabilities) -> tuple[list[str], dict[str, str]]:
    """(events to count, unusable events → why). Hardware events missing because there is
    no PMU get the probe's explanation, not just perf's "<not supported>"."""
    if caps.perf is None:
        raise CapabilityError("perf is not installed", hint="make setup (Debian package linux-perf)")
    events = caps.supported_events
    missing = {}
    for ev, status in caps.missing_events().items():
        if status == "not supported" and not caps.pmu:
            missing[ev] = f"<not supported>: {caps.pmu_why}"
        else:
            missing[ev] = status
    return events, missing


def summarize_runs(runs: Sequence[StatRun], missing: Mapping[str, str]) -> tuple[dict[str, Summary],
                                                                                dict[str, DerivedSummary]]:
    """Per-quantity summaries and per-derived-metric summaries over ``runs``."""
    per_run = [r.values() for r in runs]
    names = sorted({k for v in per_run for k in v})
    quantities = {n: summarize([v[n] for v in per_run if n in v]) for n in names if all(n in v for v in per_run)}
    derived_runs: list[list[DerivedMetric]] = [derive(v, missing) for v in per_run]
    derived: dict[str, DerivedSummary] = {}
    for i, first in enumerate(derived_runs[0]):
        vals = [d[i].value for d in derived_runs]
        ok = [v for v in vals if v is not None and not math.isnan(v)]
        summary = summarize(ok) if ok and len(ok) == len(vals) else None
        missing_here = first.missing if first.missing else ({} if summary else {"(values)": "zero denominator"})
        derived[first.name] = DerivedSummary(first.name, first.unit, first.formula, first.sources, summary,
                                             missing_here, first.note)
    return quantities, derived


def profile_command(
    argv: Sequence[str],
    caps: Capabilities,
    *,
    repeats: int = 3,
    timeout: float = 300.0,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    on_run: Callable[[int, StatRun], None] | None = None,
) -> ProfileResult:
    """Run ``argv`` ``repeats`` times under ``perf stat`` with every supported event.

    Raises :class:`HoneError` if the command fails (exit status ≠ 0) on any run.
    """
    if repeats < 1:
        raise HoneError("--repeats must be at least 1")
    events, missing = choose_events(caps)
    runs = []
    for i in range(repeats):
        run = perf_stat_command(argv, events, timeout=timeout, perf=caps.perf or "perf", env=env, cwd=cwd)
        if run.returncode != 0:
            tail = " | ".join(run.stderr.strip().splitlines()[-3:])
            raise HoneError(f"{argv[0]} exited with code {run.returncode} under perf stat"
                            + (f"; stderr: {tail}" if tail else ""))
        runs.append(run)
        if on_run:
            on_run(i, run)
    quantities, derived = summarize_runs(runs, missing)
    notes = list(caps.notes)
    notes.append("I/O counts and context-switch splits come from the parent that reaps the command "
                 "(wait4, /proc/self/io) and include perf's own small share")
    return ProfileResult(list(argv), None, events, missing, runs, quantities, derived, notes)


def profile_pid(pid: int, caps: Capabilities, *, duration: float = 5.0, repeats: int = 1) -> ProfileResult:
    """Watch a running process ``repeats`` windows of ``duration`` seconds each."""
    events, missing = choose_events(caps)
    runs = [perf_stat_pid(pid, events, duration=duration, perf=caps.perf or "perf") for _ in range(repeats)]
    quantities, derived = summarize_runs(runs, missing)
    return ProfileResult([], pid, events, missing, runs, quantities, derived, list(caps.notes))
