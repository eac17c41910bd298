"""``hone-tune`` (``hone tune --json``) and ``hone-worker`` (``hone worker --json``)."""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from hone.report.formats.common import Comparison, Num, Pair, Value


class Confirmation(TypedDict):
    """A candidate re-measured against the baseline in interleaved rounds: the objective's
    comparison, each metric's mean for both, and each metric's own comparison."""

    name: str
    trial: int | None
    config: dict[str, Value]
    comparison: Comparison
    means: dict[str, Num]
    baseline_means: NotRequired[dict[str, Num]]
    metrics: NotRequired[dict[str, Comparison]]


class Objective(TypedDict):
    mode: str
    label: str


class Risk(TypedDict):
    knob: str
    value: Value
    risk: str


class AblationChange(TypedDict):
    """One changed knob of the winner: its own effect (winner vs winner without it), in %."""

    knob: str
    baseline: Value
    winner: Value
    kept: bool
    note: str
    effect_pct: Num
    ci_pct: Pair
    p_value: Num
    verdict: str
    comparison: Comparison


class Ablation(TypedDict):
    winner: str
    winner_trial: int | None
    winner_config: dict[str, Value]
    rounds: int
    method: str
    changes: list[AblationChange]
    kept: list[str]
    dropped: list[str]
    minimal: dict[str, Value]
    recommended: Literal["minimal", "winner"]
    why: str
    minimal_vs_baseline: Comparison | None
    minimal_vs_winner: Comparison | None


class Budget(TypedDict):
    """The session's time in seconds: the --max-time budget, the estimate, what was spent."""

    max_time_s: Num
    estimate_s: Num
    spent_s: Num
    planned_trials: NotRequired[int]
    trials_run: NotRequired[int]
    search_stopped: NotRequired[str | None]
    cuts: NotRequired[list[str]]


class TuneV1(TypedDict):
    format: Literal["hone-tune/1"]
    spec: str
    spec_name: str
    recommended: dict[str, Value] | None
    recommended_trial: int | None
    baseline_config: dict[str, Value]
    baseline: dict[str, Num]
    baseline_cv: dict[str, Num]
    recommended_metrics: dict[str, Num] | None
    improvement_pct: Num
    ci_pct: Pair | None
    p_value: Num
    verdict: str
    best_candidate: Confirmation | None
    confirmations: list[Confirmation]
    objective: Objective
    importances: dict[str, float]
    trials: int
    failed_trials: int
    seed: int | None
    sampler: str
    storage: str
    study: str
    applied: bool
    apply_command: str | None
    run_settings: dict[str, Value]
    restore_problems: list[str]
    started: float
    finished: float
    # Added within version 1 (older documents lack them).
    risks: NotRequired[list[Risk]]
    chosen_by: NotRequired[str | None]
    ablation: NotRequired[Ablation | None]
    budget: NotRequired[Budget | None]


class WorkerV1(TypedDict):
    """What one ``hone worker`` ran on a shared study (trial numbers) and the study's state."""

    format: Literal["hone-worker/1"]
    study: str
    storage: str
    budget: int
    ran: list[int]
    failed: list[int]
    requeued: list[int]
    finished_in_study: int
    restore_problems: list[str]
