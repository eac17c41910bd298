"""message-queue: a broker appending messages to logs on disk and passing them to consumers."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class MessageQueue(ClassRule):
    name = "message-queue"
    group = "service"
    conclusion = "a server appending what clients send to storage and streaming it back out"
    requires = ("listens", "connected", "writes-storage", "sequential-blocks")
    supports = ("large-blocks", "bulk-network", "many-connections")
    source = ("Kafka appends to segment files sequentially and serves consumers from the page cache; "
              "A-Tune's kafka profile")
