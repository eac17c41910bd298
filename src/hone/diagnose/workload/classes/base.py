"""The class rule interface: a class is declared by the traits it requires, the traits that
support it, and the traits that rule it out, with its conclusion and sources. One class a file
(``classes/<name>.py``), all in :data:`hone.diagnose.workload.classes.CLASSES`.

Scoring, the same for every class (so a score reads the same everywhere):

- a trait in ``excludes`` holds → *ruled out*, score 0;
- a trait in ``requires`` does not hold, or none of ``requires_any`` does → *does not fit*, 0;
- a required trait is unknown (not measured, too little data) → *candidate*: at most
  :data:`CANDIDATE_CAP`, it cannot be confirmed;
- otherwise it *fits*: 0.6 + 0.4 × the share of its judged ``supports`` traits that hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from hone.diagnose.workload.traits import TraitResult

Group = Literal["service", "resource", "behaviour"]
Status = Literal["fits", "candidate", "does not fit", "ruled out"]
FIT_BASE = 0.6
CANDIDATE_CAP = 0.5


@dataclass
class ClassResult:
    name: str
    group: Group
    score: float
    status: Status
    conclusion: str
    evidence: list[str] = field(default_factory=list)  # traits that held, with figures
    against: list[str] = field(default_factory=list)  # required traits that did not hold, excluding ones that did
    unknown: list[str] = field(default_factory=list)  # traits that could not be judged, with why

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "group": self.group, "score": round(self.score, 3), "status": self.status,
                "conclusion": self.conclusion, "evidence": self.evidence, "against": self.against,
                "unknown": self.unknown}


def _line(t: TraitResult) -> str:
    return f"{t.name}: {t.evidence}"


class ClassRule:
    """Base class; subclasses only fill the class attributes."""

    name: ClassVar[str] = ""
    group: ClassVar[Group] = "resource"
    conclusion: ClassVar[str] = ""
    requires: ClassVar[tuple[str, ...]] = ()
    requires_any: ClassVar[tuple[str, ...]] = ()  # at least one of these must hold
    supports: ClassVar[tuple[str, ...]] = ()
    excludes: ClassVar[tuple[str, ...]] = ()
    source: ClassVar[str] = ""

    def traits(self) -> set[str]:
        return {*self.requires, *self.requires_any, *self.supports, *self.excludes}

    def role(self, trait: str) -> str:
        """What ``trait`` is to this class: requires, requires_any, supports, excludes or "" (nothing)."""
        for role in ("requires", "requires_any", "supports", "excludes"):
            if trait in getattr(self, role):
                return role
        return ""

    def evaluate(self, traits: dict[str, TraitResult]) -> ClassResult:
        r = ClassResult(self.name, self.group, 0.0, "does not fit", self.conclusion)
        ruling = [traits[n] for n in self.excludes if traits[n].holds]
        if ruling:
            r.status = "ruled out"
            r.against = [_line(t) for t in ruling]
            return r
        required = [traits[n] for n in self.requires]
        r.evidence = [_line(t) for t in required if t.holds]
        r.against = [_line(t) for t in required if t.holds is False]
        r.unknown = [_line(t) for t in required if t.holds is None]
        if self.requires_any:
            alternatives = [traits[n] for n in self.requires_any]
            held = [t for t in alternatives if t.holds]
            r.evidence += [_line(t) for t in held]
            if not held:
                if any(t.holds is None for t in alternatives):
                    r.unknown += [_line(t) for t in alternatives if t.holds is None]
                else:
                    r.against.append("none of: " + "; ".join(_line(t) for t in alternatives))
        if r.against:
            return r
        support = [traits[n] for n in self.supports]
        judged = [t for t in support if t.holds is not None]
        held = [t for t in judged if t.holds]
        r.evidence += [_line(t) for t in held]
        share = len(held) / len(judged) if judged else 0.0
        if r.unknown:
            r.status = "candidate"
            r.score = CANDIDATE_CAP * (0.6 + 0.4 * share)
        else:
            r.status = "fits"
            r.score = FIT_BASE + (1 - FIT_BASE) * share
        return r

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "group": self.group, "conclusion": self.conclusion, "requires": list(self.requires),
                "requires_any": list(self.requires_any), "supports": list(self.supports),
                "excludes": list(self.excludes), "source": self.source}
