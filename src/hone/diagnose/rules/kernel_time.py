"""High kernel-time share: the program spends its CPU time in system calls and the kernel.

Threshold: no published value. Calibrated on this machine (2-core AMD EPYC VM, kernel
6.18) from A/A runs of healthy workloads (``benchmarks/diagnose_calibration.py``, 8 runs
each, numbers in ``calibration-aa.json``): sys/(user+sys) was at most 8.1% for a CPU-bound
C loop, 20.3% for gzip, 18.0% for sort and 28.4% for Python start-up. We flag ≥ 40%,
clear of that range; a syscall-bound program (tests/diagnose/programs/syscall_heavy.c)
measures ~80%.
"""

from __future__ import annotations

from hone.diagnose.rules.base import DoctorContext, Finding, Rule, score_over

THRESHOLD_PCT = 40.0


class KernelTimeRule(Rule):
    name = "kernel-time"
    signal = "sys_share_pct = sys / (user + sys) CPU time (perf user_time/system_time)"
    threshold = f">= {THRESHOLD_PCT:.0f}% (calibrated from A/A data here: healthy workloads peaked at 28.4%)"
    source = ("hone A/A calibration on this machine (calibration-aa.json); UnixBench file-copy profile"
              " (kernel time dominated, docs/seed-formats.md)")
    remedy = "fewer or cheaper system calls: larger buffers, a faster filesystem path (tmpfs), fewer audit rules"
    experiment = "see the filesystem and small-I/O rules: tmpfs vs disk, larger buffers"
    inputs = ("sys_share_pct",)

    def check(self, ctx: DoctorContext) -> Finding | None:
        share = ctx.value("sys_share_pct")
        if share is None or share < THRESHOLD_PCT:
            return None
        evidence = [f"kernel time is {share:.1f}% of CPU time (user {ctx.value('user_s') or 0:.3f} s, "
                    f"sys {ctx.value('sys_s') or 0:.3f} s per run)"]
        syscalls = ctx.value("syscalls_per_cpu_s")
        if syscalls is not None:
            evidence.append(f"{syscalls:,.0f} system calls per CPU-second")
        if ctx.flame is not None:
            kernel = [(f, w) for f, w in ctx.flame.hottest if f.endswith("_[k]")][:3]
            if kernel:
                total = ctx.flame.samples or 1
                evidence.append("hottest kernel frames (self): " + ", ".join(
                    f"{f.removesuffix('_[k]')} {w / total * 100:.0f}%" for f, w in kernel))
        return Finding(self.name, "High kernel-time share", score_over(share, THRESHOLD_PCT, 2.5), evidence,
                       self.threshold, self.source, self.remedy)
