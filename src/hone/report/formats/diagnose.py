"""``hone-capabilities`` (``hone doctor --capabilities --json``), ``hone-profile``
(``hone profile --json``) and ``hone-doctor`` (OUT/doctor.json, ``hone doctor --json``),
which holds one of each of the other two."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from hone.report.formats.common import Num, Pair, Summary

CapabilitiesName = Literal["hone-capabilities/1", "hone.capabilities/1"]
ProfileName = Literal["hone-profile/1", "hone.profile/1"]


class _Capabilities(TypedDict):
    """What this machine can measure; ``events``: event name → "ok" or why it is unusable."""

    perf: str | None
    perf_version: str | None
    events: dict[str, str]
    pmu: bool
    pmu_why: str
    lbr: bool
    lbr_why: str
    cpu_clock_sampling: bool
    call_graph_dwarf: bool
    tracefs_mounted: bool
    tracefs_mounted_by_hone: bool
    debugfs_mounted: bool
    bpftrace: str | None
    bpftrace_why: str
    inferno: dict[str, str | None]
    kprobes: bool | None
    audit_kernel: bool | None
    auditctl: str | None
    thp_enabled: str | None
    thp_defrag: str | None
    cpu_model: str
    cpus: int
    governor: str | None
    kernel: str
    perf_event_paranoid: int | None
    notes: list[str]


class CapabilitiesV1(_Capabilities):
    format: CapabilitiesName


class Counter(TypedDict):
    """One ``perf stat`` counter of one run; ``value`` is null when ``status`` is not "ok"."""

    event: str
    value: Num
    unit: str
    status: str
    running_pct: Num


class StatRun(TypedDict):
    """One run under ``perf stat``, with what the parent saw when it reaped the command."""

    counters: dict[str, Counter]
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    voluntary_ctxt_switches: int | None
    involuntary_ctxt_switches: int | None
    io: dict[str, int]
    returncode: int
    stdout: str
    stderr: str


class Derived(TypedDict):
    """A figure computed from counters (IPC, miss ratios, …); ``summary`` is null when a
    source counter is missing (``missing``: counter → why)."""

    name: str
    unit: str
    formula: str
    sources: list[str]
    missing: dict[str, str]
    note: str
    summary: Summary | None


class _Profile(TypedDict):
    command: list[str]
    pid: int | None
    events: list[str]
    missing: dict[str, str]
    runs: list[StatRun]
    quantities: dict[str, Summary]
    derived: dict[str, Derived]
    notes: list[str]


class ProfileV1(_Profile):
    format: ProfileName


class ExperimentSpec(TypedDict):
    """An experiment a finding proposes: variants of the command and the `hone compare` line."""

    title: str
    hypothesis: str
    variants: list[dict[str, Any]]
    command: NotRequired[str]


class Finding(TypedDict):
    rule: str
    title: str
    score: float
    evidence: list[str]
    threshold: str
    source: str
    remedy: str
    experiments: list[ExperimentSpec]
    suggestions: list[str]


class ExperimentComparison(TypedDict):
    """A variant against the experiment's first variant, in % of the metric (a subset of the
    shared Comparison's fields, as :meth:`hone.diagnose.experiment.DoctorExperimentResult.to_json`
    writes them)."""

    n: int
    ratio: Num
    change_pct: Num
    ci_pct: Pair
    p_value: Num
    verdict: str  # faster, slower, equivalent, inconclusive (older documents: "no difference")
    mde_pct: Num
    improved: bool
    # Added within version 1 (older documents lack them).
    reason: NotRequired[str]
    rounds_needed: NotRequired[int | None]
    estimator: NotRequired[str]
    alpha: NotRequired[float]


class ExperimentVariant(TypedDict):
    name: str
    argv: list[str]
    env: dict[str, str]  # set on top of the target's environment


class Experiment(TypedDict):
    """One experiment as run: interleaved rounds of its variants, summaries and verdicts."""

    title: str
    hypothesis: str
    metric: str
    goal: str
    unit: str
    rounds: int
    seed: int
    variants: list[ExperimentVariant]
    summaries: dict[str, Summary]
    sys_share_pct: dict[str, Num]
    comparisons: dict[str, ExperimentComparison]
    failures: NotRequired[dict[str, str]]


class Flame(TypedDict):
    """A flame graph's files (relative to the doctor directory) and what its samples say."""

    name: str
    kind: str
    svg: str
    folded: str
    speedscope: str
    samples: float
    kernel_share: Num
    hottest: list[list[Any]]  # [function, samples] pairs, hottest first


class FlameDiff(TypedDict):
    svg: str
    svg_reverse: str
    folded: str
    deltas: list[list[Any]]  # [function, self share before, after] (shares 0–1)


class Metric(TypedDict):
    name: str
    goal: str
    unit: str


class Probe(TypedDict):
    name: str
    seconds: float
    ok: bool
    output: str | None
    error: str | None


class DoctorV1(TypedDict):
    format: Literal["hone-doctor/1", "hone.doctor/1"]
    command: list[str]
    spec: str | None
    metric: Metric
    started: float
    elapsed_s: float
    capabilities: CapabilitiesV1
    profile: ProfileV1
    findings: list[Finding]
    not_evaluated: dict[str, dict[str, str]]
    flame: Flame | None
    variant_flames: dict[str, Flame]
    diffs: dict[str, FlameDiff]
    experiments: list[Experiment]
    files: dict[str, str]
    probes: NotRequired[list[Probe]]
