"""kv-cache: an in-memory key-value server (Redis, memcached) answering small requests."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class KvCache(ClassRule):
    name = "kv-cache"
    group = "service"
    conclusion = "an in-memory request/response server: small messages, an event loop, no commits, no files"
    requires = ("listens", "connected", "small-messages")
    supports = ("event-loop", "short-bursts", "one-process")
    excludes = ("fsync-heavy", "opens-files-often", "reads-storage")
    source = "Redis and memcached serve from memory in an event loop (one process, few threads)"
