"""``hone-pgo`` (``hone pgo --json`` and WORKDIR/result.json) and ``hone-pgo-manifest``
(WORKDIR/variants/NAME/manifest.json: how one variant was built)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from hone.report.formats.common import Num, Pair


class Scenario(TypedDict):
    """A training or evaluate command line (``{binary}`` = the variant) and its weight."""

    name: str
    command: str
    weight: float


class Scenarios(TypedDict):
    train: list[Scenario]
    evaluate: list[Scenario]


class ScenarioProfile(TypedDict):
    """The profile one training scenario wrote, before the weighted merge."""

    scenario: str
    path: str
    sha256: str
    total_count: int
    weight: float
    train_cpu_s: Num
    # Added within version 1: a server's exit status after hone stopped it (training as the
    # service; negative: the signal that ended it), null otherwise.
    server_exit: NotRequired[int | None]
    # Added within version 1: processes that wrote a profile (gcc: the .gcda run count; null for
    # LLVM profiles) and, training as the service, the program's processes hone saw in it.
    profile_writers: NotRequired[int | None]
    server_processes: NotRequired[int | None]
    # Added within version 1: distinct profiling-runtime error lines in the server's log (training
    # as the service), null otherwise.
    profile_errors: NotRequired[int | None]


class MergedProfile(TypedDict):
    """The merged profile a use-build read; ``contributions``: each scenario's share (0–1)."""

    kind: str
    path: str
    sha256: str
    tool: str
    scenarios: list[ScenarioProfile]
    contributions: dict[str, float]


class Build(TypedDict):
    variant: str
    mode: str
    kind: Literal["reference", "noise", "variant"]
    status: Literal["ok", "failed", "rejected"]
    binary: str | None
    manifest: str | None
    error: str | None
    profile_problems: list[str]
    build_seconds: float


class ServiceFigure(TypedDict):
    """One metric of a server variant on one evaluate scenario: its median over the rounds
    and, beside the default, its ratio (variant / default), CI in % and verdict ("faster" =
    better along ``goal``)."""

    goal: str
    median: Num
    ratio: Num
    change_pct: Num
    verdict: str
    ci_pct: NotRequired[Pair]
    p_value: NotRequired[Num]
    n: NotRequired[int]
    reason: NotRequired[str]
    rounds_needed: NotRequired[int | None]


class VariantRow(TypedDict):
    """One binary on one evaluate scenario; every ``*_ratio`` (and ``time_ci``) is
    variant / default, 1.0 = the same."""

    variant: str
    mode: str
    binary: str
    scenario: str
    cpu_s_median: Num
    instructions: int | None
    instructions_ratio: Num
    branch_mispredicts_ratio: Num
    cache_misses_ratio: Num
    noise_floor_pct: Num
    failed_runs: int
    time_ratio: Num
    time_ci: Pair | None
    change_pct: Num
    p_value: Num
    n: int
    verdict: str
    # Added within version 1 (older documents lack them): the paired comparison's own words.
    ci_pct: NotRequired[Pair]
    mde_pct: NotRequired[Num]
    paired_verdict: NotRequired[str]
    reason: NotRequired[str]
    rounds_needed: NotRequired[int | None]
    estimator: NotRequired[str]
    alpha: NotRequired[float]
    # Added within version 1, a program run as the service: ``verdict`` is then the first
    # metric's, the time fields are the server's CPU time.
    metric: NotRequired[str]
    metrics: NotRequired[dict[str, ServiceFigure]]
    metric_score: NotRequired[Num]
    cpu_verdict: NotRequired[str | None]


class FewestInstructions(TypedDict):
    variant: str
    instructions_ratio_geomean: Num


class Best(TypedDict):
    variant: str | None
    time_ratio_geomean: Num
    instructions_ratio_geomean: Num
    reason: str
    fewest_instructions: NotRequired[FewestInstructions]
    # Added within version 1: whether the pick is settled on every evaluate scenario, and the
    # scenarios where it is not (each with its CI in %, reason and rounds that would settle it).
    settled: NotRequired[bool]
    unsettled: NotRequired[list[dict[str, Any]]]
    # Added within version 1, a program run as the service: the metric ranked on and the
    # pick's geometric-mean ratio of it (``time_ratio_geomean`` is then the server's CPU time).
    metric: NotRequired[str]
    metric_ratio_geomean: NotRequired[Num]
    # Added within version 1, with build.cpu_per: the pick's server CPU per unit of that metric.
    cpu_per_op_ratio_geomean: NotRequired[Num]


class ServiceInfo(TypedDict):
    """The service each variant ran as (added within version 1)."""

    name: str
    metrics: list[dict[str, Any]]
    stop_signal: str | None
    starts: int


class PgoV1(TypedDict):
    format: Literal["hone-pgo/1"]
    created: str
    name: str
    project: str
    system: str
    binary: str
    workdir: str
    rounds: int
    scenarios: Scenarios
    tools: dict[str, str | None]
    builds: list[Build]
    profiles: dict[str, MergedProfile]
    noise_floor_pct: dict[str, float]
    counts_note: str | None
    warnings: list[str]
    variants: list[VariantRow]
    best: Best
    seconds: float
    service: NotRequired[ServiceInfo]


class Stage(TypedDict):
    """One build of the variant: its flags (compiler, CFLAGS, …), argv and seconds."""

    name: str
    flags: dict[str, Any]
    command: list[str]
    seconds: float
    profile_problems: list[str]
    #: hone's check that the binary carries its mode: "ok: …", "not verifiable: …", "" (not checked).
    verification: NotRequired[str]


class Host(TypedDict):
    machine: str
    kernel: str


class PgoManifestV1(TypedDict):
    format: Literal["hone-pgo-manifest/1"]
    variant: str
    mode: str
    family: str
    system: str
    project: str
    binary: str
    binary_sha256: str
    tools: dict[str, str | None]
    stages: list[Stage]
    profiles: list[MergedProfile]
    scenarios: dict[str, list[Scenario]]
    created: str
    host: Host
