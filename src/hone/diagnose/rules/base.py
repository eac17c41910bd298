"""The doctor's rule interface: one rule a file, each with its signal, threshold, source,
remedy and the experiment that tests it (Optuna-style "one base, one file per kind").

A rule reads a :class:`DoctorContext` (the profile, the flame graph when there is one,
the capabilities, the target command) and returns a :class:`Finding` or None. A rule
whose counters are absent returns None and reports them through ``missing_inputs`` so the
doctor can say what it could not judge.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from hone.core.metrics import BUILTIN
from hone.diagnose.capabilities import Capabilities
from hone.diagnose.flame import FlameResult
from hone.diagnose.profile import ProfileResult


@dataclass
class Target:
    """What the doctor examines: argv, environment additions, working directory, and the
    metric experiments compare (a built-in time or a spec metric read from output)."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    metric: str = "cpu_time"
    goal: str = "minimize"
    unit: str = "s"
    extract: Callable[[Any], float] | None = None  # ProcessResult → value, for spec metrics
    spec_path: str | None = None
    spec_compares: str | None = None  # the metric ``hone compare`` takes for the spec without --metric
    template: list[str] | None = None  # the spec's argv before {param} substitution
    param_values: dict[str, list[str]] = field(default_factory=dict)  # a spec param knob's allowed values
    timeout: float = 300.0

    @property
    def command_text(self) -> str:
        return shlex.join(self.argv)


@dataclass
class ExperimentVariant:
    """One arm of an experiment. ``prepare``/``cleanup`` run once, around all rounds."""

    name: str
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    prepare: Callable[[], None] | None = None
    cleanup: Callable[[], None] | None = None
    cwd: str | None = None


@dataclass
class Experiment:
    """An A/B(/C) test of a finding. The first variant is the reference."""

    title: str
    hypothesis: str
    variants: list[ExperimentVariant]
    setup: list[str] = field(default_factory=list)  # shell lines to run once before `hone compare`

    def spec_variants(self, target: Target) -> list[str] | None:
        """``NAME:knob=value`` for each candidate when every difference from the reference is
        a whole ``{param}`` argument of the spec's command; None otherwise."""
        if not target.spec_path or not target.template:
            return None
        ref = self.variants[0].argv
        out = []
        for v in self.variants[1:]:
            if v.env or v.cwd or len(v.argv) != len(ref) or len(ref) != len(target.template):
                return None
            sets = []
            for i, (a, b) in enumerate(zip(ref, v.argv, strict=True)):
                if a == b:
                    continue
                slot = target.template[i]
                if not (slot.startswith("{") and slot.endswith("}")):
                    return None
                sets.append(f"{slot[1:-1]}={b}")
            out.append(f"{v.name}:{','.join(sets)}")
        return out

    def compare_command(self, target: Target, rounds: int) -> str:
        """The `hone compare` line that runs this experiment by hand."""
        prefix = "".join(f"{line} && " for line in self.setup)
        spec_variants = self.spec_variants(target)
        if spec_variants is not None:
            args = " ".join(f"--variant {shlex.quote(v)}" for v in spec_variants)
            if target.spec_compares not in (None, target.metric):  # compare would judge another figure
                args += f" --metric {shlex.quote(target.metric)}"
            return f"{prefix}hone compare {shlex.quote(target.spec_path or '')} {args} -r {rounds}"
        parts = ["hone", "compare"]
        for v in self.variants:
            env = " ".join(f"{k}={shlex.quote(val)}" for k, val in v.env.items())
            cmd = shlex.join(v.argv)
            parts.append(shlex.quote(f"env {env} {cmd}" if env else cmd))
        for v in self.variants:
            parts += ["-n", shlex.quote(v.name)]
        builtin = BUILTIN.get(target.metric)
        metric = target.metric if builtin is not None and not builtin.counted else None
        parts += ["-r", str(rounds)]
        if metric:
            parts += ["--metric", metric]
        return prefix + " ".join(parts)


@dataclass
class Finding:
    """A rule that fired. ``score`` (0–1) ranks findings: how far past the threshold."""

    rule: str
    title: str
    score: float
    evidence: list[str]
    threshold: str
    source: str
    remedy: str
    experiments: list[Experiment] = field(default_factory=list)
    suggestions: list[str] = field(default_factory=list)

    def to_json(self, target: Target | None = None, rounds: int = 10) -> dict[str, Any]:
        return {
            "rule": self.rule, "title": self.title, "score": round(self.score, 3), "evidence": self.evidence,
            "threshold": self.threshold, "source": self.source, "remedy": self.remedy,
            "experiments": [
                {"title": e.title, "hypothesis": e.hypothesis, "variants": [
                    {"name": v.name, "argv": v.argv, "env": v.env} for v in e.variants],
                 **({"command": e.compare_command(target, rounds)} if target else {})}
                for e in self.experiments
            ],
            "suggestions": self.suggestions,
        }


@dataclass
class DoctorContext:
    profile: ProfileResult
    caps: Capabilities
    target: Target
    flame: FlameResult | None = None
    out_dir: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def value(self, name: str) -> float | None:
        return self.profile.value(name)


class Rule:
    """Base class. Subclasses fill the class attributes (they are the rule's documentation,
    printed by `hone doctor --rules`) and implement :meth:`check`."""

    name: ClassVar[str] = ""
    signal: ClassVar[str] = ""
    threshold: ClassVar[str] = ""
    source: ClassVar[str] = ""
    remedy: ClassVar[str] = ""
    experiment: ClassVar[str] = ""
    inputs: ClassVar[tuple[str, ...]] = ()  # derived metrics or quantities the rule needs

    def missing_inputs(self, ctx: DoctorContext) -> dict[str, str]:
        """Inputs without a value, each with why (e.g. "<not supported>: no hardware PMU")."""
        out: dict[str, str] = {}
        for name in self.inputs:
            d = ctx.profile.derived.get(name)
            if d is not None and d.summary is None:
                out.update(d.missing or {name: "no value"})
            elif d is None and ctx.profile.quantities.get(name) is None:
                out[name] = ctx.profile.missing.get(name, "not collected")
        return out

    def unavailable(self, ctx: DoctorContext) -> bool:
        """True when none of the rule's inputs has a value: it cannot be judged here."""
        return bool(self.inputs) and all(ctx.value(name) is None for name in self.inputs)

    def check(self, ctx: DoctorContext) -> Finding | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> Mapping[str, str]:
        return {"name": self.name, "signal": self.signal, "threshold": self.threshold, "source": self.source,
                "remedy": self.remedy, "experiment": self.experiment}


def score_over(value: float, threshold: float, cap: float = 4.0) -> float:
    """0–1: how many times past ``threshold`` ``value`` is, saturating at ``cap``×."""
    if threshold <= 0:
        return 1.0
    return max(0.0, min(1.0, (value / threshold - 1.0) / (cap - 1.0) + 0.25))
