"""``perf stat -j``: run a command (or watch a pid) with every supported counter, parse it.

Parsing is pure (:func:`parse_perf_stat_json`) and separate from running
(:func:`perf_stat_command`, :func:`perf_stat_pid`) so tests can pin the edge cases:
``<not supported>`` (no PMU), ``<not counted>`` (multiplexed away), tracepoint units.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from hone.core.errors import CapabilityError, HoneError
from hone.core.process import require_command, run_process


@dataclass
class Counter:
    """One perf counter. ``value`` is None when ``status`` is not "ok".

    ``unit`` is perf's (msec for task-clock, empty for counts); ``running_pct`` is the
    share of time the counter was scheduled (below 100 means it was multiplexed and
    perf scaled it).
    """

    event: str
    value: float | None
    unit: str = ""
    status: str = "ok"
    running_pct: float = 100.0


def parse_perf_stat_json(text: str) -> dict[str, Counter]:
    """Counters from ``perf stat -j`` output (one JSON object a line; other lines ignored).

    A value that is not a number (``<not supported>``, ``<not counted>``) becomes
    ``value=None`` with that text, without the brackets, as ``status``.
    """
    counters: dict[str, Counter] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        event = obj.get("event")
        if not event:
            continue
        # perf appends modifiers (":u") to some names; keep the name we asked for.
        event = str(event)
        raw = str(obj.get("counter-value", ""))
        try:
            value: float | None = float(raw)
            status = "ok"
        except ValueError:
            value, status = None, raw.strip("<>") or "no value"
        try:
            running = float(obj.get("pcnt-running", 100.0))
        except (TypeError, ValueError):
            running = 100.0
        counters[event] = Counter(event, value, str(obj.get("unit", "")), status, running)
    return counters


@dataclass
class StatRun:
    """One run under ``perf stat``: counters plus what the parent saw at reaping.

    Times in seconds, RSS in KiB, I/O in bytes and syscalls (from /proc/self/io of the
    launcher, i.e. the workload and perf together). ``max_rss_kb`` is an upper bound: it
    includes the Python launcher's resident set (~11 MB) that the child inherits until exec.
    """

    counters: dict[str, Counter]
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    voluntary_ctxt_switches: int | None = None
    involuntary_ctxt_switches: int | None = None
    io: dict[str, int] = field(default_factory=dict)
    returncode: int = 0
    stdout: str = ""
    stderr: str = ""

    def values(self) -> dict[str, float]:
        """Every numeric quantity of this run by name (counters with status ok only)."""
        out: dict[str, float] = {e: c.value for e, c in self.counters.items() if c.value is not None}
        out.update(wall_s=self.wall_s, user_s=self.user_s, sys_s=self.sys_s, max_rss_kb=float(self.max_rss_kb))
        if self.voluntary_ctxt_switches is not None:
            out["voluntary_ctxt_switches"] = float(self.voluntary_ctxt_switches)
        if self.involuntary_ctxt_switches is not None:
            out["involuntary_ctxt_switches"] = float(self.involuntary_ctxt_switches)
        for key in ("rchar", "wchar", "syscr", "syscw", "read_bytes", "write_bytes"):
            if key in self.io:
                out[f"io_{key}"] = float(self.io[key])
        return out

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["counters"] = {e: asdict(c) for e, c in self.counters.items()}
        data["stdout"] = self.stdout[-2000:]
        data["stderr"] = self.stderr[-2000:]
        return data


def perf_stat_command(
    argv: Sequence[str],
    events: Sequence[str],
    *,
    timeout: float,
    perf: str = "perf",
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> StatRun:
    """Run ``argv`` once under ``perf stat -j -e EVENTS`` and the usage launcher.

    Raises :class:`HoneError` when the command times out or cannot start; a non-zero
    exit is kept in ``returncode`` (the caller decides whether it matters).
    """
    if not argv:
        raise HoneError("no command to profile", hint="hone profile -- CMD ARGS…")
    require_command(argv[0], cwd)
    with tempfile.TemporaryDirectory(prefix="hone-stat-") as tmp:
        stat_out = Path(tmp) / "stat.json"
        usage_out = Path(tmp) / "usage.json"
        cmd = [sys.executable, "-m", "hone.diagnose._child_usage", str(usage_out), "--",
               perf, "stat", "-j", "-o", str(stat_out), "-e", ",".join(events), "--", *argv]
        res = run_process(cmd, timeout=timeout, env=env, cwd=cwd)
        if res.timed_out:
            raise HoneError(f"{argv[0]} timed out after {timeout:.0f} s under perf stat",
                            hint="raise --timeout or shorten the workload")
        if not stat_out.exists():
            raise CapabilityError(f"perf stat produced no result: {res.describe_failure()}")
        counters = parse_perf_stat_json(stat_out.read_text())
        usage = json.loads(usage_out.read_text()) if usage_out.exists() else {}
    # perf's own clocks cover the workload alone (no launcher or perf start-up): prefer them.
    for key, event in (("wall_s", "duration_time"), ("user_s", "user_time"), ("sys_s", "system_time")):
        c = counters.get(event)
        if c is not None and c.value is not None:
            usage[key] = c.value / 1e9
    return StatRun(
        counters=counters,
        wall_s=float(usage.get("wall_s", res.wall_s)),
        user_s=float(usage.get("user_s", res.user_s)),
        sys_s=float(usage.get("sys_s", res.sys_s)),
        max_rss_kb=int(usage.get("max_rss_kb", res.max_rss_kb)),
        voluntary_ctxt_switches=usage.get("voluntary_ctxt_switches"),
        involuntary_ctxt_switches=usage.get("involuntary_ctxt_switches"),
        io=usage.get("io", {}),
        returncode=res.returncode,
        stdout=res.stdout,
        stderr=res.stderr,
    )


def _proc_times(pid: int) -> tuple[float, float]:
    """(user, sys) CPU seconds of a live process from /proc/PID/stat."""
    import os

    text = Path(f"/proc/{pid}/stat").read_text()
    fields = text.rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


def _proc_status_ctxt(pid: int) -> tuple[int | None, int | None]:
    vol = invol = None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("voluntary_ctxt_switches:"):
                vol = int(line.split()[1])
            elif line.startswith("nonvoluntary_ctxt_switches:"):
                invol = int(line.split()[1])
    except OSError:
        pass
    return vol, invol


def perf_stat_pid(pid: int, events: Sequence[str], *, duration: float, perf: str = "perf") -> StatRun:
    """Count ``events`` on a running process for ``duration`` seconds (``perf stat -p``).

    User/sys time and context switches are the /proc deltas over the same window.
    """
    if not Path(f"/proc/{pid}").exists():
        raise HoneError(f"no process with pid {pid}")
    with tempfile.TemporaryDirectory(prefix="hone-stat-") as tmp:
        stat_out = Path(tmp) / "stat.json"
        u0, s0 = _proc_times(pid)
        v0, i0 = _proc_status_ctxt(pid)
        start = time.perf_counter()
        res = run_process([perf, "stat", "-j", "-o", str(stat_out), "-e", ",".join(events), "-p", str(pid),
                           "--", "sleep", f"{duration:g}"], timeout=duration + 30)
        wall = time.perf_counter() - start
        if not stat_out.exists():
            raise CapabilityError(f"perf stat -p {pid} produced no result: {res.describe_failure()}")
        counters = parse_perf_stat_json(stat_out.read_text())
    try:
        u1, s1 = _proc_times(pid)
        v1, i1 = _proc_status_ctxt(pid)
    except OSError:
        u1, s1, v1, i1 = u0, s0, v0, i0
    return StatRun(
        counters=counters, wall_s=wall, user_s=u1 - u0, sys_s=s1 - s0, max_rss_kb=0,
        voluntary_ctxt_switches=(v1 - v0) if v0 is not None and v1 is not None else None,
        involuntary_ctxt_switches=(i1 - i0) if i0 is not None and i1 is not None else None,
        returncode=res.returncode,
    )
