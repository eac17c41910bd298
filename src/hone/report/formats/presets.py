"""``hone-preset-verify`` (``hone preset verify --json``): a preset measured against the current
configuration, each setting's own effect, and the settings kept."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

from hone.report.formats.common import Comparison, Fingerprint, Num, Pair
from hone.report.formats.tune import Ablation


class SettingEffect(TypedDict):
    """A measured setting's effect: the whole preset against the preset without it, in %."""

    effect_pct: Num
    ci_pct: Pair
    p_value: Num
    verdict: str
    note: str


#: One setting of the preset on this machine ("from", the preset that sets it, is a Python
#: keyword: hence the functional form).
PresetSetting = TypedDict("PresetSetting", {
    "name": str,
    "kind": Literal["sysctl", "sysfs", "file"],
    "value": str,
    "current": str | None,
    "status": Literal["apply", "already", "held", "skipped"],
    "why_status": str,
    "risk": Literal["safe", "durability", "machine", "security"],
    "source": str,
    "why": str,
    "from": str,
    "kept": bool,
    "effect": SettingEffect | None,
})


class Dropped(TypedDict):
    name: str
    reason: str
    note: str
    verdict: str
    effect_pct: Num
    ci_pct: Pair


class NotMeasured(TypedDict):
    name: str
    status: Literal["already", "held", "skipped"]
    why: str


class PresetVerifyV1(TypedDict):
    format: Literal["hone-preset-verify/1"]
    preset: str
    version: int
    spec: str
    verdict: Literal["kept", "nothing kept"]
    why: str
    kept: list[str]
    dropped: list[Dropped]
    not_measured: list[NotMeasured]
    settings: list[PresetSetting]
    preset_vs_current: Comparison
    kept_vs_current: Comparison | None
    means: dict[str, Num]
    current_means: dict[str, Num]
    ablation: Ablation
    rounds: int
    restore_problems: list[str]
    started: float
    finished: float
    fingerprint: Fingerprint
