"""Front-end (instruction-fetch) bound: iTLB and L1-icache misses from a large code footprint.

Threshold: Intel's top-down method flags frontend-bound above 15% of slots, and an
iTLB overhead above 5% of cycles, as worth fixing with code layout (PGO, BOLT) or huge
pages for text (Intel Top-down Microarchitecture Analysis; the TiKV PGO figures in
docs/seed-formats.md: iTLB-load-misses 61–80% of iTLB loads, a 30 MB text segment). perf's generic events give iTLB miss
*ratio*, not cycles, so we use iTLB misses ≥ 5% of iTLB loads. Needs hardware counters.
"""

from __future__ import annotations

import shlex

from hone.diagnose.rules.base import DoctorContext, Finding, Rule

ITLB_PCT = 5.0


class FrontendRule(Rule):
    name = "frontend"
    signal = "iTLB-load-misses / iTLB-loads; L1-icache misses per 1000 instructions"
    threshold = f"iTLB miss ratio >= {ITLB_PCT:.0f}% (Intel top-down: iTLB > 5% of cycles, frontend-bound > 15%)"
    source = "Intel top-down analysis thresholds; TiKV/TiDB iTLB misses 61–80%, PGO helped (docs/seed-formats.md)"
    remedy = "PGO + LTO, BOLT (function/block reordering), huge pages for text"
    experiment = "hone pgo against the current build"
    inputs = ("itlb_miss_pct",)

    def check(self, ctx: DoctorContext) -> Finding | None:
        itlb = ctx.value("itlb_miss_pct")
        if itlb is None or itlb < ITLB_PCT:
            return None
        evidence = [f"iTLB misses {itlb:.1f}% of iTLB loads"]
        mpki = ctx.value("l1i_mpki")
        if mpki is not None:
            evidence.append(f"L1-icache misses {mpki:.1f} per 1000 instructions")
        return Finding(self.name, "Front-end bound: code does not fit the iTLB/i-cache", min(1.0, itlb / 20 + 0.3),
                       evidence, self.threshold, self.source, self.remedy,
                       suggestions=[f"hone pgo -- {shlex.join(ctx.target.argv)}  (PGO, LTO, BOLT)"])
