"""io-sequential: storage read or written in long runs (scans, copies, backups, log appends)."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class IoSequential(ClassRule):
    name = "io-sequential"
    group = "resource"
    conclusion = "reads or writes storage in long sequential runs: read-ahead and large requests pay off"
    requires = ("sequential-blocks",)
    requires_any = ("reads-storage", "writes-storage")
    supports = ("large-blocks", "blocks-on-io", "kernel-heavy")
    excludes = ("scattered-blocks",)
    source = "A-Tune's readahead_tune judges a file sequential by its reads' share that follow the previous one"
