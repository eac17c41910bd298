"""Signals → traits → classes → a verdict that says what it knows and no more.

Classes come in groups: *service* (what kind of server: at most one is the answer),
*resource* (what limits it) and *behaviour* (latency-sensitive). Within a group a class is
named when it fits and no other fitting class of that group is within :data:`MARGIN` of its
score; otherwise the fitting ones are listed as candidates with the traits that would tell
them apart. What held is always reported in words ("listens; holds client connections;
forces data to stable storage often"), so an undecided result still says what is known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hone.diagnose.workload.classes import CLASSES, ClassResult
from hone.diagnose.workload.signals import Signals
from hone.diagnose.workload.traits import TRAITS, TraitResult, judge_all

MARGIN = 0.2
GROUPS = ("service", "resource", "behaviour")


@dataclass
class GroupVerdict:
    group: str
    decided: str | None
    candidates: list[str]  # fitting classes it could not tell apart
    tells_apart: list[str] = field(default_factory=list)
    unconfirmed: list[str] = field(default_factory=list)  # classes a missing figure kept from being judged

    def to_json(self) -> dict[str, Any]:
        return {"group": self.group, "decided": self.decided, "candidates": self.candidates,
                "tells_apart": self.tells_apart, "unconfirmed": self.unconfirmed}


@dataclass
class Analysis:
    traits: dict[str, TraitResult]
    classes: list[ClassResult]
    groups: list[GroupVerdict]
    known: list[str]

    @property
    def decided(self) -> list[str]:
        """The named classes, service first."""
        return [g.decided for g in self.groups if g.decided]

    @property
    def primary(self) -> str | None:
        """The one class to call the workload: the service when one is named, else the resource."""
        for g in self.groups:
            if g.group != "behaviour" and g.decided:
                return g.decided
        return None

    def fitting(self) -> list[str]:
        """Every class that fits or is a candidate, best first (what presets are matched on)."""
        return [c.name for c in self.classes if c.status in ("fits", "candidate")]

    def summary(self) -> str:
        parts = []
        for g in self.groups:
            if g.decided:
                parts.append(g.decided)
            elif g.candidates:
                parts.append("one of " + " / ".join(g.candidates))
        if parts:
            return ", ".join(parts)
        return "no class fits" + (f"; known: {'; '.join(self.known)}" if self.known else "")

    def to_json(self) -> dict[str, Any]:
        return {
            "summary": self.summary(),
            "primary": self.primary,
            "decided": self.decided,
            "groups": [g.to_json() for g in self.groups],
            "known": self.known,
            "classes": [c.to_json() for c in self.classes],
            "traits": [{"name": t.name, "holds": t.holds, "evidence": t.evidence, "phrase": t.phrase,
                        "rule": TRAITS[t.name].describe(), "source": TRAITS[t.name].source}
                       for t in self.traits.values()],
        }


def _group_verdict(group: str, results: list[ClassResult], traits: dict[str, TraitResult]) -> GroupVerdict:
    fits = [r for r in results if r.status == "fits"]
    unconfirmed = [r.name for r in results if r.status == "candidate"]
    if fits and (len(fits) == 1 or fits[0].score - fits[1].score >= MARGIN - 1e-9):
        return GroupVerdict(group, fits[0].name, [], unconfirmed=unconfirmed)
    if not fits:
        return GroupVerdict(group, None, [], unconfirmed=unconfirmed)
    close = [r for r in fits if fits[0].score - r.score < MARGIN]
    rules = [CLASSES[r.name] for r in close]
    union = set().union(*(rule.traits() for rule in rules))
    apart = []
    for name in sorted(n for n in union if len({rule.role(n) for rule in rules}) > 1):
        t = traits[name]
        state = {True: "holds", False: "does not hold", None: "unknown"}[t.holds]
        apart.append(f"{name} ({state}: {t.evidence})")
    return GroupVerdict(group, None, [r.name for r in close], apart, unconfirmed)


def classify(signals: Signals) -> Analysis:
    traits = judge_all(signals)
    results = sorted((rule.evaluate(traits) for rule in CLASSES.values()), key=lambda r: (-r.score, r.name))
    groups = [_group_verdict(g, [r for r in results if r.group == g], traits) for g in GROUPS]
    known = [t.phrase for t in traits.values() if t.holds]
    return Analysis(traits, results, groups, known)
