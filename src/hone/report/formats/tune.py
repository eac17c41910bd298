"""``hone-tune`` (``hone tune --json``; versions 1 and 2) and ``hone-worker`` (``hone worker --json``)."""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from hone.report.formats.common import Comparison, Num, Pair, Value
from hone.report.formats.compare import VerdictV2


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
    full_estimate_s: NotRequired[Num]
    expected_trials: NotRequired[int | None]
    per_run_s: NotRequired[Num]
    planned_trials: NotRequired[int | None]
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
    keep_reason: NotRequired[str | None]


# ---------------------------------------------------------------- version 2
# What changed from version 1: every verdict is one of faster/slower/equivalent/inconclusive
# (no "no difference"), every comparison carries all of its fields (reason, rounds_needed,
# estimator, alpha, …), and the fields version 1 added along the way (risks, chosen_by,
# keep_reason, ablation, budget, a confirmation's baseline_means and metrics) are always
# written. A verdict is hone.stats.paired.Verdict (VerdictV2, as in hone-compare/2).


class ComparisonV2(TypedDict):
    """A paired comparison as :meth:`hone.stats.paired.PairedComparison.to_dict` writes it:
    every field of the shared Comparison, none optional."""

    n: int
    ratio: Num
    change_pct: Num
    ci_pct: Pair
    p_value: Num
    verdict: VerdictV2
    mde_pct: Num
    improved: bool
    goal: Literal["minimize", "maximize"]
    threshold: float
    alpha: float
    confidence: float
    dropped: int
    reason: str
    estimator: str
    tail_ratio: Num
    rounds_needed: int | None


class ConfirmationV2(TypedDict):
    """A candidate re-measured against the baseline in interleaved rounds."""

    name: str
    trial: int
    config: dict[str, Value]
    comparison: ComparisonV2
    means: dict[str, Num]
    baseline_means: dict[str, Num]
    metrics: dict[str, ComparisonV2]
    judged_alone: NotRequired[str | None]  # added within version 2


class RiskV2(TypedDict):
    knob: str
    value: str  # the value as written to the system
    risk: str


class AblationChangeV2(TypedDict):
    knob: str
    baseline: Value  # null: the knob had no starting value
    winner: Value
    kept: bool
    note: str
    effect_pct: Num
    ci_pct: Pair
    p_value: Num
    verdict: VerdictV2
    comparison: ComparisonV2


class AblationV2(TypedDict):
    winner: str
    winner_trial: int
    winner_config: dict[str, Value]
    rounds: int
    method: Literal["leave-one-out", "by importance"]
    changes: list[AblationChangeV2]  # by importance: [] (no change is measured on its own)
    kept: list[str]
    dropped: list[str]
    minimal: dict[str, Value]
    recommended: Literal["minimal", "winner"]
    why: str
    minimal_vs_baseline: ComparisonV2 | None
    minimal_vs_winner: ComparisonV2 | None
    # added within version 2, by importance only
    order: NotRequired[list[str]]  # the changes, most important first
    pruned: NotRequired[list[PrunedArmV2]]


class PrunedArmV2(TypedDict):
    """A configuration of the winner's ``kept`` most important changes (the others at their start)."""

    kept: list[str]
    vs_baseline: ComparisonV2
    vs_winner: ComparisonV2
    passed: bool  # beats the baseline, not (measurably or probably) worse than the winner
    chosen: bool
    status: str  # chosen, held the gain, not shown to beat the baseline, worse than the winner


class BudgetV2(TypedDict):
    """:meth:`hone.tune.timebudget.TimeBudget.to_dict`: seconds and trials; and, added within
    version 2, :meth:`hone.tune.runbudget.RunBudget.to_dict`: benchmark runs by phase."""

    max_time_s: float | None
    estimate_s: Num
    full_estimate_s: Num
    ablation_estimate_s: NotRequired[Num]  # added within version 2: the ablation's part of estimate_s
    expected_trials: int | None
    per_run_s: Num
    spent_s: float
    planned_trials: int | None
    trials_run: int
    search_stopped: str | None
    cuts: list[str]
    max_runs: NotRequired[int | None]
    runs_spent: NotRequired[dict[str, int]]
    runs_total: NotRequired[int]
    runs_planned: NotRequired[dict[str, int] | None]
    runs_earlier: NotRequired[int]  # spent by the interrupted session a --resume continued


class ObjectiveV2(TypedDict):
    mode: Literal["single", "weighted", "pareto"]
    label: str


class SettleV2(TypedDict):
    """The ``hone compare`` that settles a candidate whose confirmation was inconclusive."""

    candidate: str
    trial: int | None
    config: dict[str, str]  # its changes, as the --variant gives them
    rounds: int  # the first look
    max_rounds: int
    first_look_s: NotRequired[float | None]  # added within version 2: the first look's runs at the session's pace
    max_s: NotRequired[float | None]  # ... and the max_rounds'
    command: str


class TuneV2(TypedDict):
    format: Literal["hone-tune/2"]
    spec: str
    spec_name: str
    recommended: dict[str, Value] | None
    recommended_trial: int | None
    unchanged: NotRequired[list[str]]  # added within version 2: recommended knobs at the baseline's value
    risks: list[RiskV2]
    chosen_by: Literal["model", "confirmation mean"] | None
    baseline_config: dict[str, Value]
    baseline: dict[str, Num]
    baseline_cv: dict[str, Num]
    recommended_metrics: dict[str, Num] | None
    improvement_pct: Num
    ci_pct: Pair | None
    p_value: Num
    verdict: Literal["faster", "keep the current configuration", "no candidate to confirm"]
    keep_reason: str | None
    best_candidate: ConfirmationV2 | None
    confirmations: list[ConfirmationV2]
    objective: ObjectiveV2
    units: NotRequired[dict[str, str]]  # added within version 2: each scored metric's unit ("" = none given)
    importances: dict[str, float]
    trials: int
    failed_trials: int
    failed_knobs: NotRequired[dict[str, int]]  # added within version 2: failed trials by the knob at fault
    seed: int | None
    sampler: str
    storage: str
    study: str
    applied: bool
    apply_command: str | None
    run_settings: dict[str, Value]
    restore_problems: list[str]
    ablation: AblationV2 | None
    not_ablated: NotRequired[str | None]  # added within version 2: why a winner of 2+ changes was not ablated
    ablate_later: NotRequired[str | None]  # added within version 2: the --resume that ablates it without new trials
    settle: NotRequired[SettleV2 | None]  # added within version 2: the hone compare that settles an inconclusive one
    detectable_pct: NotRequired[Num | None]  # added within version 2: the smallest gain the planned confirmation shows
    detectable_pct_upper: NotRequired[Num | None]  # added within version 2: detectable_pct at the most noise the
    # baseline's runs do not rule out (90% bound); null when unknown or when that noise would hide any gain
    budget: BudgetV2 | None
    started: float
    finished: float


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
