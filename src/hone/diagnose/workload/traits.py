"""Traits: one signal against one threshold, a fact about the workload in words.

The classes (``classes/``) are built from traits, so a class's evidence is the list of traits
that held with their figures, and when classes cannot be told apart the traits that held are
still what is known ("a request/response server, fsync-heavy"). A trait holds, does not hold,
or is unknown: its signal was not measured, or a guard says there is too little data to judge
(a sequential share from three block requests).

Thresholds were set on this machine from the workloads in benchmarks/workload_classes.py, between
the values seen for workloads that have the trait and those that do not; each says so in its
``source``. Measurements: docs/decisions/0030-workload-classes.md.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from hone.diagnose.workload.signals import SIGNALS, Signals

Op = Literal[">=", "<=", "<", ">"]
_OPS: dict[str, Callable[[float, float], bool]] = {">=": operator.ge, "<=": operator.le, "<": operator.lt,
                                                   ">": operator.gt}
CALIBRATED = "calibrated on this machine (decision 0030)"


@dataclass(frozen=True)
class Trait:
    """``signal op threshold``, judged only when ``guard`` (another signal op threshold) holds."""

    name: str
    phrase: str  # what it says about the workload, for "what is known"
    signal: str
    op: Op
    threshold: float
    source: str
    guard: tuple[str, Op, float] | None = None
    # What a failed guard means: None, too little data to judge; False, the trait does not hold
    # (a program that seldom wakes up does not "wake often and run briefly").
    below_guard: bool | None = None

    def judge(self, signals: Signals) -> tuple[bool | None, str]:
        """(holds, the evidence line); holds is None when it cannot be judged, with why."""
        unit = SIGNALS[self.signal].unit
        if self.guard is not None:
            g_name, g_op, g_value = self.guard
            g = signals.get(g_name)
            if g is None:
                return None, f"{g_name} not measured: {signals.why(g_name)}"
            if not _OPS[g_op](g, g_value):
                if self.below_guard is False:
                    return False, f"{g_name} = {fmt(g)} (needs {g_op} {fmt(g_value)})"
                return None, f"too little to judge: {g_name} = {fmt(g)} (needs {g_op} {fmt(g_value)})"
        value = signals.get(self.signal)
        if value is None:
            return None, f"{self.signal} not measured: {signals.why(self.signal)}"
        holds = _OPS[self.op](value, self.threshold)
        return holds, f"{self.signal} = {fmt(value)}{(' ' + unit) if unit else ''} ({self.op} {fmt(self.threshold)})"

    def describe(self) -> str:
        guard = f" when {self.guard[0]} {self.guard[1]} {fmt(self.guard[2])}" if self.guard else ""
        return f"{self.signal} {self.op} {fmt(self.threshold)} {SIGNALS[self.signal].unit}".rstrip() + guard


def fmt(v: float) -> str:
    if v == int(v) and abs(v) < 1e6:
        return f"{int(v):,}"
    return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.2g}"


_TRAITS = [
    Trait("cpu-hungry", "wants a CPU all the time", "cpu_demand", ">=", 0.8,
          f"{CALIBRATED}: compressors 0.95–1.0; servers under their benchmarks 0.3–0.7, readers < 0.5"),
    Trait("user-code", "spends its CPU time in its own code", "sys_share_pct", "<", 25.0,
          f"{CALIBRATED}: compressors 1–5%; servers and readers 30–90%"),
    Trait("kernel-heavy", "spends much of its CPU time in the kernel", "sys_share_pct", ">=", 40.0,
          "hone doctor's kernel-time rule (A/A calibration: healthy peak 28.4%)"),
    Trait("blocks-on-io", "mostly waits, blocked rather than preempted", "voluntary_switch_pct", ">=", 80.0,
          f"{CALIBRATED}", guard=("cpu_demand", "<", 0.8)),
    Trait("short-bursts", "wakes often and runs briefly: request/response", "cpu_us_per_wakeup", "<", 200.0,
          f"{CALIBRATED}", guard=("wakeups_per_s", ">=", 500.0), below_guard=False),
    Trait("long-bursts", "runs long stretches without blocking", "cpu_us_per_wakeup", ">=", 1000.0,
          f"{CALIBRATED}"),
    Trait("fsync-heavy", "forces data to stable storage often (commits)", "fsyncs_per_s", ">=", 10.0,
          f"{CALIBRATED}: PostgreSQL under pgbench hundreds/s; the others 0"),
    Trait("reads-storage", "reads from storage", "storage_read_mb_s", ">=", 2.0,
          f"{CALIBRATED}: cold readers tens to hundreds of MiB/s; cached workloads ~0"),
    Trait("writes-storage", "writes to storage", "storage_write_mb_s", ">=", 2.0,
          f"{CALIBRATED}"),
    Trait("sequential-blocks", "reads or writes the disk in long contiguous runs", "bio_run_kb", ">=", 1024.0,
          f"{CALIBRATED}: dd/cat of a cold file runs of many MiB; 4 KiB random reads 4–8 KiB",
          guard=("bio_count", ">=", 16.0)),
    Trait("scattered-blocks", "jumps around the disk between small pieces", "bio_run_kb", "<=", 64.0,
          f"{CALIBRATED}", guard=("bio_count", ">=", 16.0)),
    Trait("small-blocks", "small block requests", "bio_avg_kb", "<=", 16.0,
          "four pages, as hone doctor's small-io rule", guard=("bio_count", ">=", 16.0)),
    Trait("large-blocks", "large block requests", "bio_avg_kb", ">=", 64.0,
          "above the 128 KiB read-ahead window's half", guard=("bio_count", ">=", 16.0)),
    Trait("listens", "accepts connections (a server)", "listen_sockets", ">=", 1.0,
          "a listening socket held by the observed processes"),
    Trait("connected", "holds client connections", "connections", ">=", 2.0,
          "established TCP or connected unix stream sockets"),
    Trait("many-connections", "holds many connections at once", "connections", ">=", 16.0,
          f"{CALIBRATED}: benchmarks' defaults 10–50 clients"),
    Trait("event-loop", "waits for sockets in an event loop", "event_waits_per_s", ">=", 100.0,
          f"{CALIBRATED}: nginx and Redis thousands/s; PostgreSQL backends and compressors ~0"),
    Trait("small-messages", "exchanges small messages at a high rate", "net_bytes_per_packet", "<", 2048.0,
          f"{CALIBRATED}: request/response benchmarks 100–1,000 B per packet",
          guard=("net_packets_per_s", ">=", 200.0), below_guard=False),
    Trait("bulk-network", "moves bulk data over the network", "net_mb_s", ">=", 50.0, f"{CALIBRATED}"),
    Trait("large-packets", "sends large packets", "net_bytes_per_packet", ">=", 8192.0,
          "above two pages: bulk transfers fill loopback's 64 KiB MTU, request/response does not",
          guard=("net_packets_per_s", ">=", 100.0), below_guard=False),
    Trait("opens-files-often", "opens files at a high rate (one per request: a file server)", "file_opens_per_s",
          ">=", 200.0, f"{CALIBRATED}: nginx with its stock config thousands/s; Redis 0"),
    Trait("multi-process", "several cooperating processes", "processes", ">=", 3.0,
          "PostgreSQL's backends, nginx's workers; Redis is one process"),
    Trait("one-process", "a single process", "processes", "<=", 1.0, "Redis, memcached: one process, few threads"),
    Trait("reads-heavily", "reads a lot of data for the CPU it uses", "read_mb_per_cpu_s", ">=", 50.0,
          f"{CALIBRATED}: PostgreSQL scanning a table 500–900 MiB per CPU-second, under pgbench < 1"),
    Trait("large-memory", "holds a large share of the machine's memory", "memory_pct", ">=", 25.0,
          "hone's choice: a quarter of RAM"),
    Trait("fault-heavy", "touches new memory very often", "page_faults_per_cpu_s", ">=", 100_000.0,
          "hone doctor's page-faults rule (A/A calibration: healthy peak 55,000)"),
    Trait("memory-stalls", "stalls on memory (low instructions per cycle)", "ipc", "<", 0.7,
          "Gregg, 'CPU Utilization is Wrong': IPC < 1 likely stall-bound; hone's doctor uses 1"),
    Trait("cache-misses", "misses the last-level cache often", "llc_miss_pct", ">=", 10.0,
          "perf's colour bands 5/10/20%"),
]
TRAITS: dict[str, Trait] = {t.name: t for t in _TRAITS}


@dataclass(frozen=True)
class TraitResult:
    name: str
    holds: bool | None
    evidence: str
    phrase: str


def judge_all(signals: Signals) -> dict[str, TraitResult]:
    out = {}
    for t in TRAITS.values():
        holds, evidence = t.judge(signals)
        out[t.name] = TraitResult(t.name, holds, evidence, t.phrase)
    return out
