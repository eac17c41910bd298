"""memory-bound: a program whose time goes to waiting for memory."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class MemoryBound(ClassRule):
    name = "memory-bound"
    group = "resource"
    conclusion = "stalls on memory: low instructions per cycle or many last-level cache misses"
    requires = ("cpu-hungry",)
    requires_any = ("memory-stalls", "cache-misses")
    supports = ("large-memory", "fault-heavy")
    source = "needs hardware counters (IPC, LLC misses): without a PMU it can only be a candidate"
