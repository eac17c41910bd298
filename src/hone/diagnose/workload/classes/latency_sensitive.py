"""latency-sensitive: a request/response service whose clients wait on each answer."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class LatencySensitive(ClassRule):
    name = "latency-sensitive"
    group = "behaviour"
    conclusion = "answers small requests in short bursts of CPU: wake-up and network latency dominate response time"
    requires = ("short-bursts", "small-messages")
    supports = ("listens", "event-loop", "connected")
    excludes = ("bulk-network",)
    source = "tuned's latency-performance and network-latency profiles target such services"
