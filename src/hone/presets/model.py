"""A preset file (YAML) validated into models, and a resolved :class:`Preset`.

A preset names knobs of the kinds hone already has — ``sysctl``, ``sysfs`` (a path under
/sys, ``{device}`` standing for a block device the user names) and ``file`` (one key of a
config file the preset declares under ``files:`` and the user binds to a path) — each with
its value, the published profile it comes from, a one-line rationale and a risk class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from hone.spec.models import Argv, sysctl_name

#: The workload classes a preset fits (the names a workload classifier emits).
CLASSES = ("database-oltp", "database-analytics", "kv-cache", "web-server", "message-queue", "cpu-bound-compute",
           "io-sequential", "io-random", "network-throughput", "latency-sensitive", "memory-bound")
#: Risk classes: ``safe`` settings apply as they are; the others need ``--opt-in CLASS`` (or
#: the setting's name). durability: a crash can lose acknowledged data; machine: can hurt the
#: machine or its other work (memory, CPU, connections); security: weakens a protection.
RISKS = ("safe", "durability", "machine", "security")
RiskClass = Literal["safe", "durability", "machine", "security"]
FORMATS = ("conf", "ini", "env", "yaml", "json", "toml", "nginx", "properties")
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")
_BINDING = re.compile(r"[a-z][a-z0-9_-]*")
_UNITS = {"B": 1, "kB": 1 << 10, "KB": 1 << 10, "K": 1 << 10, "MB": 1 << 20, "M": 1 << 20, "GB": 1 << 30,
          "G": 1 << 30}


def check_preset_name(value: str) -> str:
    """A preset name: lower case, digits, ``.``, ``_``, ``-`` (it names a file)."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise ValueError(f"expected a name of a-z, 0-9, '.', '_', '-' (starting with a letter or digit), got {value!r}")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class RamShare(_Strict):
    """A value computed from this machine's memory: ``percent`` of MemTotal in ``unit``
    (written as the number and the unit, e.g. ``1024MB``; ``unit: B`` writes bytes alone),
    clamped to ``[min, max]`` in that unit."""

    percent_of_ram: float = Field(gt=0, le=100)
    unit: Literal["B", "kB", "KB", "K", "MB", "M", "GB", "G"] = "MB"
    min: int | None = Field(None, ge=0)
    max: int | None = Field(None, ge=1)

    def render(self, mem_total_bytes: int) -> str:
        n = int(mem_total_bytes * self.percent_of_ram / 100 // _UNITS[self.unit])
        if self.min is not None:
            n = max(n, self.min)
        if self.max is not None:
            n = min(n, self.max)
        return str(n) if self.unit == "B" else f"{n}{self.unit}"

    def describe(self) -> str:
        return f"{self.percent_of_ram:g}% of RAM in {self.unit}"


class FileDecl(_Strict):
    """A config file the preset edits: its format, the file names a spec's ``file`` knob may
    bind it by, and (user presets) a default path and restart command."""

    format: Literal["conf", "ini", "env", "yaml", "json", "toml", "nginx", "properties"]
    match: list[str] = Field(default_factory=list)  # file names, e.g. [postgresql.conf]
    about: str = ""  # where it usually lives
    path: str | None = None
    restart: Argv | None = None


class SettingSpec(_Strict):
    """One setting: exactly one of ``sysctl``, ``sysfs``, ``file`` (+ ``key``)."""

    sysctl: str | None = None
    sysfs: str | None = None  # relative to /sys; {device}: a block device the user names
    file: str | None = None  # a name under ``files:``
    key: str | None = None
    section: str | None = None  # ini files
    value: str | int | float | RamShare
    #: tuned's ``>``: only raise the current value (a number), never lower it.
    at_least: bool = False
    #: the file key takes effect only after the server restarts (else a reload or a new session).
    restart: bool = False
    risk: RiskClass = "safe"
    source: str = Field(min_length=1)
    why: str = Field(min_length=1)
    #: where and how this value was measured better (``hone preset verify``, ``define``)
    verified: str | None = None

    @field_validator("value", mode="before")
    @classmethod
    def _value(cls, value: Any) -> Any:
        if isinstance(value, bool):
            raise ValueError(f"expected text or a number, got {value!r}: quote it ('off', 'yes'): "
                             "YAML reads on/off/yes/no unquoted as true/false")
        if value is None:
            raise ValueError("expected a value, got nothing")
        return value

    @field_validator("sysctl")
    @classmethod
    def _sysctl(cls, value: str | None) -> str | None:
        return None if value is None else sysctl_name(value)

    @field_validator("sysfs")
    @classmethod
    def _sysfs(cls, value: str | None) -> str | None:
        if value is None:
            return value
        path = value.removeprefix("/sys/").strip("/")
        if not path or ".." in path.split("/") or "{" in path.replace("{device}", ""):
            raise ValueError(f"expected a path under /sys (e.g. block/{{device}}/queue/scheduler), got {value!r}")
        return path

    @field_validator("file")
    @classmethod
    def _file(cls, value: str | None) -> str | None:
        if value is not None and not _BINDING.fullmatch(value):
            raise ValueError(f"expected the name of a file under files: (a-z, 0-9, _, -), got {value!r}")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> SettingSpec:
        kinds = [k for k in ("sysctl", "sysfs", "file") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(f"expected exactly one of sysctl, sysfs, file; got {', '.join(kinds) or 'none'}")
        if (self.file is None) != (self.key is None):
            raise ValueError("key: goes with file: (and a file setting needs its key)")
        if self.section is not None and self.file is None:
            raise ValueError("section: goes with file:")
        if self.restart and self.file is None:
            raise ValueError("restart: goes with file:")
        if self.at_least and (isinstance(self.value, bool) or not isinstance(self.value, int | float)):
            raise ValueError(f"at_least: needs a number value, got {self.value!r}")
        return self

    @property
    def kind(self) -> str:
        return "sysctl" if self.sysctl else "sysfs" if self.sysfs else "file"

    @property
    def name(self) -> str:
        """The setting's identity in its preset and its children: the sysctl's dotted name,
        the sysfs path under /sys, or ``FILE.KEY`` (``FILE.SECTION.KEY`` in an ini file)."""
        if self.sysctl:
            return self.sysctl
        if self.sysfs:
            return self.sysfs
        return ".".join(p for p in (self.file, self.section, self.key) if p)


class PresetFile(_Strict):
    """A preset file as written."""

    preset: str
    version: int = Field(ge=1)
    description: str = Field(min_length=1)
    classes: list[str] = Field(min_length=1)
    include: list[str] = Field(default_factory=list)
    #: inherited settings (by name) this preset leaves out
    exclude: list[str] = Field(default_factory=list)
    #: the tuned profile this one corresponds to (``include=`` of an exported tuned profile)
    tuned: str | None = None
    files: dict[str, FileDecl] = Field(default_factory=dict)
    settings: list[SettingSpec] = Field(default_factory=list)

    @field_validator("preset")
    @classmethod
    def _name(cls, value: str) -> str:
        return check_preset_name(value)

    @field_validator("include", mode="before")
    @classmethod
    def _include(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @field_validator("classes")
    @classmethod
    def _classes(cls, value: list[str]) -> list[str]:
        bad = [c for c in value if c not in CLASSES]
        if bad:
            raise ValueError(f"expected classes from {', '.join(CLASSES)}; got {', '.join(map(repr, bad))}")
        return value

    @field_validator("files")
    @classmethod
    def _files(cls, value: dict[str, FileDecl]) -> dict[str, FileDecl]:
        for name in value:
            if not _BINDING.fullmatch(name):
                raise ValueError(f"expected file names of a-z, 0-9, _, -; got {name!r}")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> PresetFile:
        seen: set[str] = set()
        for s in self.settings:
            if s.name in seen:
                raise ValueError(f"setting {s.name} given twice")
            seen.add(s.name)
        return self


@dataclass
class Setting:
    """One setting of a resolved preset: the model and the preset it comes from."""

    spec: SettingSpec
    origin: str  # the preset that sets it (itself, or one it includes)
    file: FileDecl | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def risk(self) -> str:
        return self.spec.risk

    def value_text(self) -> str:
        v = self.spec.value
        return v.describe() if isinstance(v, RamShare) else str(v)

    def to_dict(self) -> dict[str, Any]:
        s = self.spec
        return {"name": self.name, "kind": self.kind, "value": self.value_text(), "risk": s.risk,
                "source": s.source, "why": s.why, "from": self.origin}


@dataclass
class Preset:
    """A preset with its includes resolved: every setting, each with where it comes from."""

    name: str
    version: int
    description: str
    classes: list[str]
    settings: list[Setting]
    include: list[str] = field(default_factory=list)
    files: dict[str, FileDecl] = field(default_factory=dict)
    tuned: str | None = None
    path: str = ""  # the file it was read from
    user: bool = False  # from the user preset directory

    @property
    def risky(self) -> list[Setting]:
        return [s for s in self.settings if s.risk != "safe"]

    def setting(self, name: str) -> Setting:
        for s in self.settings:
            if s.name == name:
                return s
        raise KeyError(f"preset {self.name} has no setting {name!r}")


__all__ = ["CLASSES", "FORMATS", "RISKS", "FileDecl", "Preset", "PresetFile", "RamShare", "Setting", "SettingSpec",
           "check_preset_name"]
