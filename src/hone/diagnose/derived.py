"""Derived metrics (IPC, miss ratios, kernel-time share, rates) — only from present counters.

Each :class:`DerivedMetric` names its sources. When one is absent the value is None and
``missing`` lists which counters and why, so no figure is ever printed from absent data.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field


@dataclass
class DerivedMetric:
    """``value`` in ``unit``; None when a source is missing (see ``missing``)."""

    name: str
    value: float | None
    unit: str
    formula: str
    sources: list[str]
    missing: dict[str, str] = field(default_factory=dict)
    note: str = ""


def _ratio(num: str, den: str, scale: float = 1.0) -> Callable[[Mapping[str, float]], float | None]:
    def f(v: Mapping[str, float]) -> float | None:
        d = v.get(den)
        return None if not d else v[num] / d * scale

    return f


def _cpu_s(v: Mapping[str, float]) -> float:
    """CPU seconds: perf's task-clock (msec) when present, else user+sys from wait4."""
    if "task-clock" in v:
        return v["task-clock"] / 1000.0
    return v.get("user_s", 0.0) + v.get("sys_s", 0.0)


def _per_cpu_s(event: str) -> Callable[[Mapping[str, float]], float | None]:
    def f(v: Mapping[str, float]) -> float | None:
        cpu = _cpu_s(v)
        return v[event] / cpu if cpu > 0 else None

    return f


def _sys_share(v: Mapping[str, float]) -> float | None:
    total = v["user_s"] + v["sys_s"]
    return v["sys_s"] / total * 100 if total > 0 else None


def _bytes_per_io(v: Mapping[str, float]) -> float | None:
    calls = v["io_syscr"] + v["io_syscw"]
    return (v["io_rchar"] + v["io_wchar"]) / calls if calls else None


def _voluntary_share(v: Mapping[str, float]) -> float | None:
    total = v["voluntary_ctxt_switches"] + v["involuntary_ctxt_switches"]
    return v["voluntary_ctxt_switches"] / total * 100 if total else None


# name, unit, formula, sources, function, note
_DEFINITIONS: list[tuple[str, str, str, list[str], Callable[[Mapping[str, float]], float | None], str]] = [
    ("ipc", "insn/cycle", "instructions / cycles", ["instructions", "cycles"], _ratio("instructions", "cycles"),
     "< 1: stalls dominate (memory-bound); > 1: instruction-bound"),
    ("branch_miss_pct", "%", "branch-misses / branches", ["branch-misses", "branches"],
     _ratio("branch-misses", "branches", 100), "perf colours 5/10/20%"),
    ("cache_miss_pct", "%", "cache-misses / cache-references", ["cache-misses", "cache-references"],
     _ratio("cache-misses", "cache-references", 100), ""),
    ("l1d_miss_pct", "%", "L1-dcache-load-misses / L1-dcache-loads", ["L1-dcache-load-misses", "L1-dcache-loads"],
     _ratio("L1-dcache-load-misses", "L1-dcache-loads", 100), "perf colours 5/10/20%"),
    ("llc_miss_pct", "%", "LLC-load-misses / LLC-loads", ["LLC-load-misses", "LLC-loads"],
     _ratio("LLC-load-misses", "LLC-loads", 100), "perf colours 5/10/20%"),
    ("itlb_miss_pct", "%", "iTLB-load-misses / iTLB-loads", ["iTLB-load-misses", "iTLB-loads"],
     _ratio("iTLB-load-misses", "iTLB-loads", 100), "perf colours 5/10/20% (61–80% on TiKV/TiDB)"),
    ("dtlb_miss_pct", "%", "dTLB-load-misses / dTLB-loads", ["dTLB-load-misses", "dTLB-loads"],
     _ratio("dTLB-load-misses", "dTLB-loads", 100), "perf colours 5/10/20%"),
    ("l1i_mpki", "misses/kinsn", "L1-icache-load-misses / instructions × 1000",
     ["L1-icache-load-misses", "instructions"], _ratio("L1-icache-load-misses", "instructions", 1000), ""),
    ("cpu_utilization", "CPUs", "task-clock / wall time", ["task-clock", "wall_s"],
     lambda v: (v["task-clock"] / 1000.0) / v["wall_s"] if v["wall_s"] > 0 else None,
     "< 1 on a single-threaded program: it waits (I/O, locks, sleep)"),
    ("sys_share_pct", "%", "sys / (user + sys) CPU time", ["user_s", "sys_s"], _sys_share,
     "share of CPU time spent in the kernel"),
    ("context_switches_per_cpu_s", "/CPU-s", "context-switches / CPU seconds", ["context-switches"],
     _per_cpu_s("context-switches"), ""),
    ("voluntary_switch_pct", "%", "voluntary / (voluntary + involuntary) context switches",
     ["voluntary_ctxt_switches", "involuntary_ctxt_switches"], _voluntary_share,
     "voluntary = the program blocked; involuntary = it was preempted"),
    ("migrations_per_cpu_s", "/CPU-s", "cpu-migrations / CPU seconds", ["cpu-migrations"],
     _per_cpu_s("cpu-migrations"), ""),
    ("page_faults_per_cpu_s", "/CPU-s", "page-faults / CPU seconds", ["page-faults"], _per_cpu_s("page-faults"), ""),
    ("major_faults", "faults", "major-faults", ["major-faults"], lambda v: v["major-faults"], "faults that read disk"),
    ("syscalls_per_cpu_s", "/CPU-s", "raw_syscalls:sys_enter / CPU seconds", ["raw_syscalls:sys_enter"],
     _per_cpu_s("raw_syscalls:sys_enter"), ""),
    ("bytes_per_io_syscall", "B", "(rchar + wchar) / (syscr + syscw)", ["io_rchar", "io_wchar", "io_syscr", "io_syscw"],
     _bytes_per_io, "small values: many small read/write calls"),
]

DERIVED_NAMES = [d[0] for d in _DEFINITIONS]


def derive(values: Mapping[str, float], why_missing: Mapping[str, str] | None = None) -> list[DerivedMetric]:
    """Every derived metric for one run's ``values`` (event/quantity → number).

    ``why_missing`` maps an event to the reason it has no value (from the capability
    probe or perf's status); sources absent from both get "not collected".
    """
    why_missing = why_missing or {}
    out = []
    for name, unit, formula, sources, fn, note in _DEFINITIONS:
        absent = {s: why_missing.get(s, "not collected") for s in sources if s not in values}
        value = None if absent else fn(values)
        out.append(DerivedMetric(name, value, unit, formula, sources, absent, note))
    return out
