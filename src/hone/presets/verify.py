"""``hone preset verify``: a preset measured against the current configuration, and cut down
to the settings that hold the gain.

The preset's applicable settings become knobs of the user's spec (a spec knob editing the same
sysctl, sysfs file or config key gives way to the preset's). Two arms — the current
configuration and the whole preset — run in interleaved rounds on the A/B engine (the tune
confirmation, :func:`hone.tune.confirm.confirm_candidates`); then the minimal-change step
(:func:`hone.tune.ablation.ablate`: the preset with each setting undone, one at a time) says
which settings hold the gain. Kept: what the ablation recommends — its minimal configuration
when that beats the current one, the whole preset when the settings only hold the gain together
— and nothing when the preset was not shown better. Every dropped setting says why: no
measurable effect, not shown to matter, or slower with it. Everything is restored at the end.
Measured: docs/decisions/0020-presets-kept-only-when-measured.md.
"""

from __future__ import annotations

import datetime as dt
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hone.core.errors import HoneError
from hone.core.fingerprint import fingerprint
from hone.core.metrics import verdict_word
from hone.knobs import driver_for
from hone.presets.bind import Planned
from hone.presets.model import Preset
from hone.run.benchmark import Measurement
from hone.run.configure import Configurator, changes_machine
from hone.run.journal import machine_lock_if
from hone.spec.loader import LoadedSpec
from hone.stats.paired import PairedComparison
from hone.tune.ablation import Ablation, ablate
from hone.tune.confirm import Candidate, Confirmation, confirm_candidates
from hone.tune.objective import build_objective

FORMAT = "hone-preset-verify/1"
PRESET_ARM = "preset"


def derive_spec(loaded: LoadedSpec, planned: list[Planned]) -> LoadedSpec:
    """The spec with the preset's settings as knobs (a spec knob on the same resource and key
    is replaced). Raises HoneError when a setting's name is taken by another spec knob."""
    spec = loaded.spec.model_copy(deep=True)
    ours = {p.driver.ident() for p in planned}
    knobs = [k for k in spec.knobs if driver_for(k).ident() not in ours]
    taken = {k.name for k in knobs}
    for p in planned:
        if p.name in taken:
            raise HoneError(f"{loaded.path}: a knob is named {p.name!r} like the preset's setting; rename it")
    spec.knobs = [*knobs, *(p.model for p in planned)]
    return LoadedSpec(spec=spec, path=loaded.path, source=loaded.source)


@dataclass
class Outcome:
    """What ``preset verify`` measured and kept."""

    preset: Preset
    spec: str
    planned: list[Planned]
    measured: list[Planned]
    confirmation: Confirmation
    ablation: Ablation
    kept: list[str]
    why: str
    rounds: int
    started: float
    finished: float
    restore_problems: list[str] = field(default_factory=list)
    fingerprint: dict[str, Any] = field(default_factory=dict)

    @property
    def kept_vs_baseline(self) -> PairedComparison | None:
        """The comparison that stands behind the kept set against the current configuration."""
        if not self.kept:
            return None
        if self.ablation.recommended == "minimal" and self.ablation.minimal_vs_baseline is not None:
            return self.ablation.minimal_vs_baseline
        return self.confirmation.comparison

    def dropped(self) -> list[dict[str, Any]]:
        out = []
        for e in self.ablation.effects:
            if e.knob in self.kept:
                continue
            c = e.comparison
            if e.kept:  # its own comparison held, but the kept set was not shown better than the current one
                reason = "its gain did not hold: the kept settings did not beat the current configuration"
            elif c.verdict == "slower":
                reason = "slower with it"
            elif c.verdict == "equivalent":
                reason = "no effect"
            else:
                reason = "not shown to matter"
            out.append({"name": e.knob, "reason": reason, "note": e.note, "verdict": c.verdict,
                        "effect_pct": c.change_pct, "ci_pct": list(c.ci_pct)})
        return out

    def to_json(self) -> dict[str, Any]:
        kvb = self.kept_vs_baseline
        effects = {e.knob: e for e in self.ablation.effects}
        settings = []
        for p in self.planned:
            row = p.to_dict()
            e = effects.get(p.name)
            row["kept"] = p.name in self.kept
            row["effect"] = None if e is None else {
                "effect_pct": e.comparison.change_pct, "ci_pct": list(e.comparison.ci_pct),
                "p_value": e.comparison.p_value, "verdict": e.comparison.verdict, "note": e.note}
            settings.append(row)
        return {
            "format": FORMAT,
            "preset": self.preset.name,
            "version": self.preset.version,
            "spec": self.spec,
            "verdict": "kept" if self.kept else "nothing kept",
            "why": self.why,
            "kept": list(self.kept),
            "dropped": self.dropped(),
            "not_measured": [{"name": p.name, "status": p.status, "why": p.why}
                             for p in self.planned if p.status != "apply"],
            "settings": settings,
            "preset_vs_current": self.confirmation.comparison.to_dict(),
            "kept_vs_current": kvb.to_dict() if kvb is not None else None,
            "means": self.confirmation.means,
            "current_means": self.confirmation.baseline_means,
            "ablation": self.ablation.to_dict(),
            "rounds": self.rounds,
            "restore_problems": self.restore_problems,
            "started": self.started,
            "finished": self.finished,
            "fingerprint": self.fingerprint,
        }


def verify_preset(preset: Preset, loaded: LoadedSpec, planned: list[Planned], *, rounds: int, warmup: int = 1,
                  seed: int = 0, threshold: float = 0.01,
                  on_phase: Callable[[str, str], None] | None = None,
                  on_run: Callable[[int, str, Measurement], None] | None = None) -> Outcome:
    """Measure the preset's ``apply`` settings against the current configuration, ablate,
    restore. Raises HoneError when no setting is left to measure."""
    phase = on_phase or (lambda p, m: None)
    measured = [p for p in planned if p.status == "apply"]
    if not measured:
        raise HoneError(f"preset {preset.name}: no setting to measure here (every setting is already set, held back"
                        " for a risk, or skipped)", hint="`hone preset show` says why for each")
    derived = derive_spec(loaded, measured)
    objective = build_objective(derived.spec.metrics, derived.spec.tune.objective)
    if objective.mode == "pareto":  # one figure decides here: the weighted geometric mean
        objective.mode = "weighted"
    config = {p.name: p.model.coerce(p.text) for p in measured}
    started = time.time()
    with machine_lock_if(changes_machine(derived), f"hone preset verify {preset.name}"):
        configurator = Configurator(derived)
        problems: list[str] = []
        try:
            baseline_config = {p.name: p.current for p in measured}
            phase("confirm", f"the current configuration and preset {preset.name} ({len(measured)} settings),"
                  f" {rounds} interleaved rounds")
            [conf] = confirm_candidates(derived, configurator, objective, [Candidate(PRESET_ARM, 0, config, {})],
                                        rounds=rounds, warmup=warmup, seed=seed, threshold=threshold, on_run=on_run)
            phase("ablation", f"each of the {len(measured)} settings undone in turn (leave-one-out)")
            abl = ablate(derived, configurator, objective, conf, baseline_config, rounds=rounds, warmup=warmup,
                         seed=seed + 100, threshold=threshold, on_run=on_run)
        finally:
            problems = configurator.restore()
    kept, why = _decide(conf, abl, objective.units)
    return Outcome(preset, str(loaded.path), planned, measured, conf, abl, kept, why, abl.rounds, started,
                   time.time(), problems, fingerprint(loaded.path.read_text()))


def _decide(conf: Confirmation, abl: Ablation, units: list[str | None]) -> tuple[list[str], str]:
    """What to keep from the confirmation and the ablation (module docstring)."""
    comp = conf.comparison
    whole = f"the preset vs the current configuration: {verdict_word(comp.verdict, *units)}, {_pct(comp)}"
    if abl.recommended == "minimal":
        return list(abl.minimal), f"the kept settings beat the current configuration ({abl.why}); {whole}"
    if comp.improved:
        return list(abl.winner_config), f"{abl.why}; {whole}"
    return [], f"the preset was not shown better than the current configuration ({whole}); {abl.why}"


def _pct(c: PairedComparison) -> str:
    return f"{c.change_pct:+.2f}% [{c.ci_pct[0]:+.2f}%, {c.ci_pct[1]:+.2f}%]"


def provenance(outcome: Outcome) -> str:
    """One line saying where and how the kept settings were measured."""
    c = outcome.kept_vs_baseline
    figure = f": {_pct(c)}" if c is not None else ""
    day = dt.date.fromtimestamp(outcome.finished).isoformat()
    return (f"hone preset verify {outcome.preset.name} v{outcome.preset.version} with {outcome.spec}"
            f" on {socket.gethostname()}, {day}{figure}")


__all__ = ["FORMAT", "Outcome", "derive_spec", "provenance", "verify_preset"]
