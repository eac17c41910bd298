"""database-analytics: a database server scanning a lot of data for few clients."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class DatabaseAnalytics(ClassRule):
    name = "database-analytics"
    group = "service"
    conclusion = "a server busy scanning data for few clients: long queries, large reads, few commits"
    requires = ("listens", "cpu-hungry", "user-code")
    requires_any = ("reads-heavily", "reads-storage")
    supports = ("large-memory", "sequential-blocks", "large-blocks", "multi-process")
    excludes = ("fsync-heavy", "small-messages", "many-connections", "bulk-network")
    source = ("scans read table data in bulk and compute on it in user space (PostgreSQL sequential scans, "
              "column stores); few commits, small results: a file server sending data is kernel time and bulk "
              "network")
