"""``hone-compare``: what ``hone compare --export-json`` writes (versions 1 and 2)."""

from __future__ import annotations

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from hone.report.formats.common import ComparisonBase, Fingerprint, Measurement, Num, Summary, Value, today_verdicts
from hone.stats.paired import opt_over_default_pct

VerdictV1 = Literal["faster", "slower", "no difference", "inconclusive"]
VerdictV2 = Literal["faster", "slower", "equivalent", "inconclusive"]


class VariantDescription(TypedDict):
    """A variant as given: a command line (commands) or knob assignments (spec variants)."""

    name: str
    description: str
    command: str | None
    knobs: dict[str, Value]
    prepare: str | None
    cleanup: str | None


class Sweep(TypedDict):
    name: str
    values: list[str]


class VariantRuns(TypedDict):
    """One variant's measured runs of a row, index = round (``warmup_runs`` discarded)."""

    name: str
    runs: list[Measurement]
    warmup_runs: list[Measurement]


class CompareSummary(Summary):
    wall_mean: NotRequired[Num]  # seconds: mean wall time of the successful runs


class ComparisonV1(ComparisonBase):
    verdict: VerdictV1
    opt_over_default_pct: NotRequired[Num]  # % the mean is below the reference's


class ComparisonV2(ComparisonBase):
    verdict: VerdictV2
    rounds_needed: int | None  # inconclusive: about how many rounds in all would settle it
    opt_over_default_pct: Num


class LookV1(TypedDict):
    rounds: int
    alpha: float
    decisive: NotRequired[bool]


class LookV2(TypedDict):
    """One look at the verdicts: after ``rounds`` rounds, tested at ``alpha``."""

    rounds: int
    alpha: float
    decisive: bool
    seconds: float


class _Row(TypedDict):
    sweep_value: str | None
    order: list[list[str]]
    warmup_order: list[list[str]]
    seed: int
    variants: list[VariantRuns]
    summaries: dict[str, CompareSummary]
    failed: dict[str, int]
    warnings: list[str]


class RowV1(_Row):
    comparisons: dict[str, ComparisonV1]
    looks: NotRequired[list[LookV1]]


class RowV2(_Row):
    comparisons: dict[str, ComparisonV2]
    looks: list[LookV2]
    stopped: Literal["fixed", "decisive", "max rounds", "time"]
    planned_rounds: int


class FingerprintEnd(TypedDict):
    loadavg: list[float]
    finished: str


class AlphaSplit(TypedDict):
    first_look: float
    second_look: float


class _Compare(TypedDict):
    hone_version: str
    created: str
    command_line: list[str]
    kind: Literal["commands", "spec"]
    spec: Any
    metric: str
    metric_reason: str | None
    unit: str
    goal: Literal["minimize", "maximize"]
    threshold: float
    alpha: float
    cv_warn: float
    rounds: int
    max_rounds: int | None
    warmup: int
    seed: int
    n_resamples: int
    pin: str | None
    no_aslr: bool
    shell: bool
    variants: list[VariantDescription]
    reference: str
    sweep: Sweep | None
    fingerprint: Fingerprint
    warnings: list[str]
    fingerprint_end: FingerprintEnd


class CompareV1(_Compare):
    format: Literal["hone-compare/1"]
    estimator: NotRequired[str]
    alpha_split: AlphaSplit | None
    rows: list[RowV1]


class CompareV2(_Compare):
    format: Literal["hone-compare/2"]
    estimator: str
    max_time: float | None
    alpha_spending: str
    rows: list[RowV2]


def v1_for_display(data: dict[str, Any]) -> dict[str, Any]:
    """A version 1 document in today's words, for the human renderings (the JSON export keeps
    the document as written): "no difference" shown as inconclusive (:func:`today_verdicts`),
    and what version 2 records but version 1 did not, derived from what it did."""
    out = today_verdicts(data)
    for row in out["rows"]:
        # Version 1 looked at most twice: after --rounds, and at --max-rounds when the first
        # look was not decisive; it recorded no reason for stopping, so derive it.
        looks = row.get("looks") or []
        if "stopped" not in row:
            last = looks[-1] if looks else {}
            row["stopped"] = ("fixed" if not data.get("max_rounds") else
                              "decisive" if last.get("decisive") else "max rounds")
        row.setdefault("planned_rounds", data.get("max_rounds") or data["rounds"])
        ref = (row["variants"] or [{}])[0].get("name")
        for name, c in row["comparisons"].items():
            if "opt_over_default_pct" not in c:
                rs, vs = row["summaries"].get(ref), row["summaries"].get(name)
                c["opt_over_default_pct"] = opt_over_default_pct(rs["mean"], vs["mean"]) if rs and vs else None
    return out
