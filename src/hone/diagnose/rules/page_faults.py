"""Many page faults: memory is touched for the first time or mapped and unmapped often.

Threshold: no published value. Calibrated here from A/A runs (calibration-aa.json):
healthy workloads showed at most 55,000 faults per CPU-second (Python start-up; sort
44,000; the CPU-bound loop 89). We flag ≥ 100,000 per CPU-second. Remedies to test:
transparent huge pages (fewer, larger faults) and a caching allocator (jemalloc,
mimalloc via LD_PRELOAD) that returns memory to the kernel less often.
"""

from __future__ import annotations

from pathlib import Path

from hone.diagnose.rules.base import DoctorContext, Experiment, ExperimentVariant, Finding, Rule, score_over

THRESHOLD_PER_CPU_S = 100_000.0
ALLOCATORS = {
    "jemalloc": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
    "mimalloc": "/usr/lib/x86_64-linux-gnu/libmimalloc.so.2",
    "tcmalloc": "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
}


class PageFaultRule(Rule):
    name = "page-faults"
    signal = "page-faults per CPU-second (perf software event), major faults"
    threshold = f">= {THRESHOLD_PER_CPU_S:,.0f}/CPU-s (calibrated from A/A data here: healthy peak 55,000)"
    source = ("hone A/A calibration on this machine (calibration-aa.json); allocators ran an allocation-heavy"
              " program 2.5–3.6× faster (docs/machine-facts.md)")
    remedy = "THP for large heaps, a caching allocator, pre-faulting (MAP_POPULATE), fewer mmap/munmap cycles"
    experiment = "allocator preload (LD_PRELOAD jemalloc/mimalloc) vs glibc malloc; THP madvise vs always"
    inputs = ("page_faults_per_cpu_s",)

    def check(self, ctx: DoctorContext) -> Finding | None:
        rate = ctx.value("page_faults_per_cpu_s")
        if rate is None or rate < THRESHOLD_PER_CPU_S:
            return None
        argv = ctx.target.argv
        evidence = [f"{rate:,.0f} page faults per CPU-second"]
        major = ctx.value("major_faults")
        if major:
            evidence.append(f"{major:,.0f} major faults per run (read from disk)")
        variants = [ExperimentVariant("glibc", list(argv))]
        variants += [ExperimentVariant(name, list(argv), env={"LD_PRELOAD": path})
                     for name, path in ALLOCATORS.items() if Path(path).exists()]
        experiments = []
        if len(variants) > 1:
            experiments.append(Experiment("allocator", "a caching allocator faults less", variants))
        suggestions = [f"THP is '{ctx.caps.thp_enabled}': compare with `hone compare` on a spec with a sysfs knob "
                       "/sys/kernel/mm/transparent_hugepage/enabled values [madvise, always]"]
        if len(variants) == 1:
            suggestions.append("install libjemalloc2 or libmimalloc2.0 to test an allocator preload")
        return Finding(self.name, "Many page faults", score_over(rate, THRESHOLD_PER_CPU_S) * 0.7, evidence,
                       self.threshold, self.source, self.remedy, experiments, suggestions)
