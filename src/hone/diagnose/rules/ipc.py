"""Instructions per cycle: below 1 the core mostly waits (memory, front end); above 1 it
retires work and only fewer instructions help.

Threshold: IPC < 1.0 → stall-bound, the common rule of thumb (Brendan Gregg, "CPU
Utilization is Wrong", 2017; the TiKV PGO figures in docs/seed-formats.md: 0.58–0.70). Needs the hardware counters
``cycles`` and ``instructions``: on a machine without a PMU this rule is not evaluated
and the doctor says which counters are missing and why.
"""

from __future__ import annotations

import shlex

from hone.diagnose.rules.base import DoctorContext, Finding, Rule

LOW_IPC = 1.0


class IpcRule(Rule):
    name = "ipc"
    signal = "IPC = instructions / cycles"
    threshold = f"< {LOW_IPC} stall-bound (memory or front end); > {LOW_IPC} instruction-bound"
    source = "Brendan Gregg, 'CPU Utilization is Wrong' (2017); TiKV/TiDB IPC 0.58–0.70 (docs/seed-formats.md)"
    remedy = "stall-bound: data layout, prefetch, huge pages, PGO/BOLT for code layout; else fewer instructions"
    experiment = "hone pgo (instrumented PGO, LTO, BOLT) against the current build"
    inputs = ("ipc",)

    def check(self, ctx: DoctorContext) -> Finding | None:
        ipc = ctx.value("ipc")
        if ipc is None or ipc >= LOW_IPC:
            return None
        return Finding(self.name, "Low IPC: the core mostly stalls", min(1.0, (LOW_IPC - ipc) / LOW_IPC + 0.3),
                       [f"IPC {ipc:.2f} instructions per cycle"], self.threshold, self.source, self.remedy,
                       suggestions=[f"hone pgo -- {shlex.join(ctx.target.argv)}  (PGO/LTO/BOLT for code layout)"])
