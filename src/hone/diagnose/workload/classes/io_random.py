"""io-random: storage read or written at scattered places in small requests."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class IoRandom(ClassRule):
    name = "io-random"
    group = "resource"
    conclusion = "reads or writes storage at scattered places in small requests: read-ahead wastes bandwidth"
    requires = ("scattered-blocks",)
    requires_any = ("reads-storage", "writes-storage")
    supports = ("small-blocks", "blocks-on-io")
    excludes = ("sequential-blocks",)
    source = "A-Tune's readahead_tune lowers read-ahead for files read at random"
