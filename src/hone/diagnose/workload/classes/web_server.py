"""web-server: an HTTP server answering many small requests, typically from files."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class WebServer(ClassRule):
    name = "web-server"
    group = "service"
    conclusion = "a request/response server that opens files per request, usually with several workers"
    requires = ("listens", "connected", "small-messages")
    supports = ("event-loop", "opens-files-often", "multi-process", "short-bursts")
    excludes = ("fsync-heavy",)
    source = "nginx and Apache serve files per request (open, sendfile) from worker processes"
