"""``hone-analyse`` (``hone analyse --json``): how a workload was observed, its signals, the
traits judged from them, every class with its score and evidence, and the verdict."""

from __future__ import annotations

from typing import Literal, NotRequired

from typing_extensions import TypedDict


class AnalyseSignals(TypedDict):
    values: dict[str, float]
    missing: dict[str, str]


class AnalyseTrait(TypedDict):
    name: str
    holds: bool | None
    evidence: str
    phrase: str
    rule: str
    source: str


class AnalyseClass(TypedDict):
    name: str
    group: Literal["service", "resource", "behaviour"]
    score: float
    status: Literal["fits", "candidate", "does not fit", "ruled out"]
    conclusion: str
    evidence: list[str]
    against: list[str]
    unknown: list[str]


class AnalyseGroup(TypedDict):
    group: Literal["service", "resource", "behaviour"]
    decided: str | None
    candidates: list[str]
    tells_apart: list[str]
    unconfirmed: list[str]


class AnalysePreset(TypedDict):
    name: str
    classes: list[str]


class AnalyseV1(TypedDict):
    format: Literal["hone-analyse/1"]
    mode: Literal["command", "pids", "system"]
    command: list[str]
    pids: list[int]
    window_s: float
    started: float
    returncode: int | None
    signals: AnalyseSignals
    notes: list[str]
    summary: str
    primary: str | None
    decided: list[str]
    groups: list[AnalyseGroup]
    known: list[str]
    classes: list[AnalyseClass]
    traits: list[AnalyseTrait]
    presets: NotRequired[list[AnalysePreset]]
