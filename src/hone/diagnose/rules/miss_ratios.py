"""Cache, branch and TLB miss ratios past perf's own colour bands.

Threshold: perf stat colours a miss ratio yellow above 5%, red above 10% and
bright red above 20% (tools/perf/util/stat-shadow.c, ``get_ratio_color``: GRC_CACHE_MISSES
bands 20/10/5). We report ≥ 10%. Needs hardware counters; without a PMU the rule is not
evaluated and the doctor lists the missing counters.
"""

from __future__ import annotations

from hone.diagnose.rules.base import DoctorContext, Finding, Rule

BAND_PCT = (5.0, 10.0, 20.0)
RATIOS = {
    "branch_miss_pct": "branch mispredictions",
    "l1d_miss_pct": "L1 data-cache load misses",
    "llc_miss_pct": "last-level-cache load misses",
    "cache_miss_pct": "cache misses",
    "dtlb_miss_pct": "data-TLB misses",
}


class MissRatioRule(Rule):
    name = "miss-ratios"
    signal = "branch/L1d/LLC/dTLB miss ratios"
    threshold = ">= 10% (perf's red band; yellow from 5%, bright red from 20%)"
    source = "perf tools/perf/util/stat-shadow.c get_ratio_color (5/10/20%)"
    remedy = "branches: PGO, branchless code; caches/TLB: data layout, huge pages (THP), smaller working set"
    experiment = "hone pgo for branches; THP madvise vs always for dTLB"
    inputs = tuple(RATIOS)

    def check(self, ctx: DoctorContext) -> Finding | None:
        hits = []
        for name, label in RATIOS.items():
            v = ctx.value(name)
            if v is not None and v >= BAND_PCT[1]:
                band = "bright red" if v >= BAND_PCT[2] else "red"
                hits.append((v, f"{label}: {v:.1f}% ({band} in perf's bands)"))
        if not hits:
            return None
        worst = max(v for v, _ in hits)
        return Finding(self.name, "High miss ratios", min(1.0, worst / 40 + 0.25), [t for _, t in hits],
                       self.threshold, self.source, self.remedy)
