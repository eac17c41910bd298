"""cpu-bound-compute: a program that wants a CPU all the time and spends it in its own code."""

from __future__ import annotations

from hone.diagnose.workload.classes.base import ClassRule


class CpuBoundCompute(ClassRule):
    name = "cpu-bound-compute"
    group = "resource"
    conclusion = "on a CPU (or waiting for one) all the time, in its own code: compression, encoding, solvers"
    requires = ("cpu-hungry", "user-code")
    supports = ("long-bursts",)
    excludes = ("blocks-on-io", "fsync-heavy")
    source = "CPU demand from schedstat (run + run-queue time), so other work on the machine does not hide it"
