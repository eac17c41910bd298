"""network-throughput: bulk data over the network (transfers, replication, streaming)."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class NetworkThroughput(ClassRule):
    name = "network-throughput"
    group = "resource"
    conclusion = "moves bulk data over the network in large packets: buffer sizes and offloads matter"
    requires = ("bulk-network", "large-packets")
    supports = ("connected", "kernel-heavy")
    excludes = ("small-messages",)
    source = "tuned's network-throughput profile (larger socket buffers)"
