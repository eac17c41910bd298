"""Frequent context switches: the program blocks (voluntary) or is preempted (involuntary).

Threshold: no published value. Calibrated here from A/A runs (calibration-aa.json):
healthy workloads showed at most 925 switches per CPU-second (sort; the CPU-bound loop
568, Python start-up 890) on this shared 2-core VM. We flag ≥ 2000 per CPU-second.
Voluntary switches point at blocking (I/O, locks, sleeps: see the off-CPU graph);
involuntary ones at CPU contention, where pinning can help.
"""

from __future__ import annotations

import shlex

from hone.diagnose.rules.base import DoctorContext, Experiment, ExperimentVariant, Finding, Rule, score_over

THRESHOLD_PER_CPU_S = 2000.0


class ContextSwitchRule(Rule):
    name = "context-switches"
    signal = "context-switches per CPU-second (perf), voluntary share (wait4 rusage)"
    threshold = f">= {THRESHOLD_PER_CPU_S:.0f}/CPU-s (calibrated from A/A data here: healthy peak 925)"
    source = "hone A/A calibration on this machine (calibration-aa.json)"
    remedy = "voluntary: batch I/O, fewer lock hand-offs; involuntary: fewer threads than CPUs, pinning"
    experiment = "involuntary: same command under taskset -c 1 vs unpinned"
    inputs = ("context_switches_per_cpu_s",)

    def check(self, ctx: DoctorContext) -> Finding | None:
        rate = ctx.value("context_switches_per_cpu_s")
        if rate is None or rate < THRESHOLD_PER_CPU_S:
            return None
        evidence = [f"{rate:,.0f} context switches per CPU-second"]
        voluntary = ctx.value("voluntary_switch_pct")
        experiments = []
        suggestions = []
        if voluntary is not None:
            evidence.append(f"{voluntary:.0f}% voluntary (blocked), {100 - voluntary:.0f}% involuntary (preempted)")
        if voluntary is not None and voluntary < 50:
            argv = ctx.target.argv
            experiments.append(Experiment("pinning", "preemption/migration costs; one CPU avoids it", [
                ExperimentVariant("unpinned", list(argv)),
                ExperimentVariant("taskset-1", ["taskset", "-c", "1", *argv])]))
        else:
            suggestions.append("it blocks: record an off-CPU graph — hone flame --off-cpu -- "
                               + shlex.join(ctx.target.argv))
        return Finding(self.name, "Frequent context switches", score_over(rate, THRESHOLD_PER_CPU_S) * 0.7,
                       evidence, self.threshold, self.source, self.remedy, experiments, suggestions)
