"""Frequent CPU migrations: the scheduler moves the program between CPUs (cold caches).

Threshold: no published value. Calibrated here from A/A runs (calibration-aa.json):
healthy workloads showed at most 62 migrations per CPU-second (sort; the CPU-bound loop
8.7). We flag ≥ 200 per CPU-second. Experiment: pinning with taskset.
"""

from __future__ import annotations

from hone.diagnose.rules.base import DoctorContext, Experiment, ExperimentVariant, Finding, Rule, score_over

THRESHOLD_PER_CPU_S = 200.0


class MigrationRule(Rule):
    name = "migrations"
    signal = "cpu-migrations per CPU-second (perf software event)"
    threshold = f">= {THRESHOLD_PER_CPU_S:.0f}/CPU-s (calibrated from A/A data here: healthy peak 62)"
    source = "hone A/A calibration on this machine (calibration-aa.json)"
    remedy = "pin the process (taskset, cgroup cpusets) or reduce thread count"
    experiment = "same command under taskset -c 1 vs unpinned"
    inputs = ("migrations_per_cpu_s",)

    def check(self, ctx: DoctorContext) -> Finding | None:
        rate = ctx.value("migrations_per_cpu_s")
        if rate is None or rate < THRESHOLD_PER_CPU_S:
            return None
        argv = ctx.target.argv
        return Finding(self.name, "Frequent CPU migrations", score_over(rate, THRESHOLD_PER_CPU_S) * 0.6,
                       [f"{rate:,.0f} CPU migrations per CPU-second"], self.threshold, self.source, self.remedy,
                       [Experiment("pinning", "migrations cost cache warmth; pinning stops them", [
                           ExperimentVariant("unpinned", list(argv)),
                           ExperimentVariant("taskset-1", ["taskset", "-c", "1", *argv])])])
