"""The program waits: CPU utilization well below one CPU for most of its wall time.

Threshold: task-clock / wall time < 0.5 CPUs. On this VM healthy single-threaded,
CPU-bound A/A runs measured 0.70–0.98 (calibration-aa.json: the CPU-bound loop, gzip),
and Python start-up 0.61, so 0.5 is below anything we saw from a program that does not
block. The voluntary share of context switches tells the two causes apart: mostly
voluntary → it blocks (I/O, locks, sleep): off-CPU flame graph, block-I/O latency probe;
mostly involuntary → it was runnable but other work held the CPUs (a loaded machine:
the 1-minute load average is shown), which no change to the program fixes.
"""

from __future__ import annotations

import os
import shlex

from hone.diagnose.rules.base import DoctorContext, Finding, Rule

THRESHOLD_CPUS = 0.5


class OffCpuRule(Rule):
    name = "off-cpu"
    signal = "cpu_utilization = task-clock / wall time (CPUs)"
    threshold = f"< {THRESHOLD_CPUS} CPUs (calibrated from A/A data here: healthy minimum 0.61)"
    source = "hone A/A calibration on this machine (calibration-aa.json)"
    remedy = "find what it waits for: off-CPU flame graph (blocking stacks), block I/O latency, locks"
    experiment = "none automatic: record hone flame --off-cpu and hone doctor --probe biolatency"
    inputs = ("cpu_utilization",)

    def check(self, ctx: DoctorContext) -> Finding | None:
        util = ctx.value("cpu_utilization")
        if util is None or util >= THRESHOLD_CPUS:
            return None
        evidence = [f"{util:.2f} CPUs used on average over the wall time"]
        vol = ctx.value("voluntary_ctxt_switches")
        invol = ctx.value("involuntary_ctxt_switches")
        cmd = shlex.join(ctx.target.argv)
        if vol is not None and invol is not None and invol > vol:
            load = _load_average()
            evidence.append(f"{invol:,.0f} involuntary vs {vol:,.0f} voluntary context switches per run: "
                            "it was preempted, not blocked")
            if load is not None:
                evidence.append(f"1-minute load average {load:.1f} on {ctx.caps.cpus or '?'} CPUs")
            return Finding(self.name, "The program waited for a CPU (contention, not blocking)",
                           min(1.0, (THRESHOLD_CPUS - util) / THRESHOLD_CPUS + 0.1), evidence, self.threshold,
                           self.source, "measure on a quieter machine, or pin it (taskset) away from other work;"
                           " compare CPU time, not wall time")
        if vol:
            evidence.append(f"{vol:,.0f} voluntary context switches per run (it blocked)")
        return Finding(self.name, "The program spends most of its time off the CPU",
                       min(1.0, (THRESHOLD_CPUS - util) / THRESHOLD_CPUS + 0.3), evidence, self.threshold,
                       self.source, self.remedy,
                       suggestions=[f"hone flame --off-cpu -- {cmd}", "hone doctor --probe biolatency -- " + cmd])


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]  # as hone.core.fingerprint reads it
    except OSError:
        return None
