"""``hone-run``: what ``hone run SPEC --json`` writes."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

from hone.report.formats.common import Fingerprint, Measurement, Summary, Value


class RunV1(TypedDict):
    format: Literal["hone-run/1"]
    spec: str
    config: dict[str, Value]
    warmup: int
    started: float
    finished: float
    runs: list[Measurement]
    summary: dict[str, Summary]
    failed_runs: int
    restore_problems: list[str]
    fingerprint: Fingerprint
