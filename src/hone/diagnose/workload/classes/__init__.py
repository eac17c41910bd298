"""Workload classes, one a file. :data:`CLASSES` maps each name of the fixed vocabulary to its rule."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassResult, ClassRule
from hone.diagnose.workload.classes.cpu_bound_compute import CpuBoundCompute
from hone.diagnose.workload.classes.database_analytics import DatabaseAnalytics
from hone.diagnose.workload.classes.database_oltp import DatabaseOltp
from hone.diagnose.workload.classes.io_random import IoRandom
from hone.diagnose.workload.classes.io_sequential import IoSequential
from hone.diagnose.workload.classes.kv_cache import KvCache
from hone.diagnose.workload.classes.latency_sensitive import LatencySensitive
from hone.diagnose.workload.classes.memory_bound import MemoryBound
from hone.diagnose.workload.classes.message_queue import MessageQueue
from hone.diagnose.workload.classes.network_throughput import NetworkThroughput
from hone.diagnose.workload.classes.web_server import WebServer

CLASSES: dict[str, ClassRule] = {
    rule.name: rule
    for rule in (
        DatabaseOltp(), DatabaseAnalytics(), KvCache(), WebServer(), MessageQueue(), CpuBoundCompute(),
        IoSequential(), IoRandom(), NetworkThroughput(), LatencySensitive(), MemoryBound(),
    )
}
#: The vocabulary presets declare their fit in; fixed: a new name is a new result format version.
CLASS_NAMES: tuple[str, ...] = (
    "database-oltp", "database-analytics", "kv-cache", "web-server", "message-queue", "cpu-bound-compute",
    "io-sequential", "io-random", "network-throughput", "latency-sensitive", "memory-bound",
)

__all__ = ["CLASSES", "CLASS_NAMES", "ClassResult", "ClassRule"]
