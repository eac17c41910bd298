"""A preset bound to this machine: each setting as a knob of hone's own kinds (sysctl, sysfs,
file) with the text to write, or the reason it is left out.

What the user binds: each config file the preset declares (``--config NAME=PATH``, optionally
``--restart NAME=CMD``; or a ``--spec`` whose ``file`` knobs point at a file of that name, with
their restart), the block devices ``{device}`` stands for (``--device DEV``), and the risk
classes or settings they accept (``--opt-in``). Binding reads the machine and changes nothing.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hone.core.errors import HoneError, KnobError
from hone.knobs import danger_of, driver_for
from hone.knobs.base import KnobDriver, same_text
from hone.knobs.risk import risk_of
from hone.presets.model import RISKS, FileDecl, Preset, RamShare, Setting
from hone.spec.loader import LoadedSpec
from hone.spec.models import FileKnobSpec, SysctlKnobSpec, SysfsKnobSpec

Status = Literal["apply", "already", "held", "skipped"]


@dataclass
class FileBind:
    """Where a preset's config file is on this machine and how its server restarts."""

    path: str
    restart: list[str] | Literal["service"] | None = None
    origin: str = ""  # how it was bound, for messages


@dataclass
class Binding:
    files: dict[str, FileBind] = field(default_factory=dict)
    devices: list[str] = field(default_factory=list)
    opt_in: set[str] = field(default_factory=set)


@dataclass
class Planned:
    """One setting on this machine: its knob (None when it cannot be made), the text to write,
    what the machine holds now, and what happens: ``apply``; ``already`` (holds it, or
    ``at_least`` and higher); ``held`` (a risk not opted in); ``skipped`` (not on this kernel,
    file not bound, no device given)."""

    setting: Setting
    name: str
    model: Any | None
    text: str | None
    current: str | None
    status: Status
    why: str = ""

    @property
    def driver(self) -> KnobDriver:
        assert self.model is not None
        return driver_for(self.model)

    def to_dict(self) -> dict[str, Any]:
        return {**self.setting.to_dict(), "name": self.name, "value": self.text or self.setting.value_text(),
                "current": self.current, "status": self.status, "why_status": self.why}


# ---------------------------------------------------------------- user input


def _pairs(items: tuple[str, ...] | list[str], flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name.strip() or not value.strip():
            raise HoneError(f"{flag} {item}: expected NAME=VALUE")
        if name.strip() in out:
            raise HoneError(f"{flag} {item}: {name.strip()} given twice")
        out[name.strip()] = value.strip()
    return out


def _file_decl(preset: Preset, name: str, flag: str, item: str) -> FileDecl:
    if name not in preset.files:
        files = ", ".join(preset.files) or "none"
        raise HoneError(f"{flag} {item}: preset {preset.name} has no config file {name!r} (its files: {files})")
    return preset.files[name]


def bind(preset: Preset, *, configs: tuple[str, ...] | list[str] = (), restarts: tuple[str, ...] | list[str] = (),
         devices: tuple[str, ...] | list[str] = (), opt_in: tuple[str, ...] | list[str] = (),
         spec: LoadedSpec | None = None) -> Binding:
    """Check the user's bindings against ``preset`` and this machine; a HoneError naming the
    option and what was expected otherwise. Changes nothing."""
    binding = Binding()
    for name, decl in preset.files.items():
        if decl.path is not None:
            binding.files[name] = FileBind(decl.path, decl.restart, "the preset's default path")
    if spec is not None:
        binding.files.update(_from_spec(preset, spec))
    for name, path in _pairs(configs, "--config").items():
        _file_decl(preset, name, "--config", f"{name}={path}")
        p = Path(path)
        if not p.is_file():
            raise HoneError(f"--config {name}={path}: no such file" if not p.exists() else
                            f"--config {name}={path}: not a regular file")
        # with a spec whose service hone runs, a changed file restarts that service
        restart = "service" if spec is not None and spec.spec.service is not None else None
        binding.files[name] = FileBind(str(p.resolve()), restart, "--config")
    for name, cmd in _pairs(restarts, "--restart").items():
        _file_decl(preset, name, "--restart", f"{name}={cmd}")
        if name not in binding.files:
            raise HoneError(f"--restart {name}={cmd}: the file {name} is not bound; give --config {name}=PATH")
        try:
            argv = shlex.split(cmd)
        except ValueError as exc:
            raise HoneError(f"--restart {name}={cmd}: {exc}") from None
        if not argv:
            raise HoneError(f"--restart {name}=: expected a command")
        binding.files[name].restart = argv
    for dev in devices:
        if "/" in dev or dev in (".", "..") or not Path("/sys/block", dev).is_dir():
            sysblock = Path("/sys/block")
            known = ", ".join(sorted(p.name for p in sysblock.iterdir())) if sysblock.is_dir() else ""
            raise HoneError(f"--device {dev}: no block device of that name in /sys/block (here: {known or 'none'})")
        if dev not in binding.devices:
            binding.devices.append(dev)
    names = {s.name for s in preset.settings}
    for item in opt_in:
        for word in (w.strip() for w in item.split(",")):
            if word in RISKS[1:] or word in names:
                binding.opt_in.add(word)
            elif word:
                raise HoneError(f"--opt-in {word}: expected a risk class ({', '.join(RISKS[1:])}) or a setting"
                                f" of {preset.name}")
    return binding


def _from_spec(preset: Preset, loaded: LoadedSpec) -> dict[str, FileBind]:
    """The preset's files that the spec's local ``file`` knobs edit (matched by file name),
    with their restart (a command, or ``service``: the spec's service)."""
    out: dict[str, FileBind] = {}
    for name, decl in preset.files.items():
        hits = {}
        for k in loaded.spec.knobs:
            if k.kind == "file" and not k.hosts and Path(k.path).name in decl.match:
                hits.setdefault(str(Path(k.path)), k)
        if len(hits) > 1:
            raise HoneError(f"{loaded.path}: file knobs edit {len(hits)} files named like {preset.name}'s {name}"
                            f" ({', '.join(hits)})", hint=f"choose one with --config {name}=PATH")
        if hits:
            path, knob = next(iter(hits.items()))
            restart = knob.restart if knob.restart is not None else (
                "service" if loaded.spec.service is not None else None)
            out[name] = FileBind(path, restart, f"the spec's knob {knob.name}")
    return out


# ---------------------------------------------------------------- planning


def mem_total_bytes() -> int:
    """MemTotal of /proc/meminfo, in bytes."""
    with open("/proc/meminfo") as fh:
        for line in fh:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    raise HoneError("/proc/meminfo has no MemTotal line")


def _text(setting: Setting) -> str:
    v = setting.spec.value
    return v.render(mem_total_bytes()) if isinstance(v, RamShare) else str(v)


def _models(setting: Setting, binding: Binding) -> list[tuple[str, Any | None, str]]:
    """(knob name, knob model or None, why not) for a setting: one per device for a
    ``{device}`` path."""
    s = setting.spec
    if s.sysctl:
        return [(s.sysctl, SysctlKnobSpec(name=s.sysctl, kind="sysctl", key=s.sysctl, description=s.why), "")]
    if s.sysfs:
        if "{device}" not in s.sysfs:
            return [(s.sysfs, SysfsKnobSpec(name=s.sysfs, kind="sysfs", path=f"/sys/{s.sysfs}"), "")]
        if not binding.devices:
            return [(s.sysfs, None, "names a block device: give --device DEV")]
        return [(n, SysfsKnobSpec(name=n, kind="sysfs", path=f"/sys/{n}"), "")
                for n in (s.sysfs.replace("{device}", d) for d in binding.devices)]
    assert s.file is not None and s.key is not None
    bound = binding.files.get(s.file)
    if bound is None:
        decl = setting.file
        about = f" ({decl.about})" if decl is not None and decl.about else ""
        return [(s.name, None, f"file {s.file} is not bound: give --config {s.file}=PATH{about}")]
    decl = setting.file
    assert decl is not None
    model = FileKnobSpec(name=s.name, kind="file", path=bound.path, key=s.key, section=s.section,
                         format=decl.format, restart=bound.restart)  # type: ignore[arg-type]
    return [(s.name, model, "")]


def plan(preset: Preset, binding: Binding) -> list[Planned]:
    """Every setting of ``preset`` on this machine (reads, changes nothing)."""
    out: list[Planned] = []
    for setting in preset.settings:
        for name, model, why in _models(setting, binding):
            if model is None:
                out.append(Planned(setting, name, None, None, None, "skipped", why))
                continue
            driver = driver_for(model)
            try:
                driver.check()
                current = driver.read()
            except KnobError as exc:
                reason = "not on this kernel" if setting.kind in ("sysctl", "sysfs") else "cannot be read"
                out.append(Planned(setting, name, model, None, None, "skipped", f"{reason}: {exc.message}"))
                continue
            text = _text(setting)
            danger = danger_of(driver)
            if danger:  # never from a preset; the catalogue test keeps them out
                out.append(Planned(setting, name, model, text, current, "skipped", f"dangerous: {danger}"))
                continue
            out.append(_judge(setting, name, model, text, current, binding))
    return out


def effective_risk(setting: Setting, model: Any, text: str) -> str:
    """The setting's risk class; a value hone's risk table marks (durability) counts as
    durability even where a preset file says safe."""
    if setting.risk == "safe" and risk_of(model, text):
        return "durability"
    return setting.risk


def _judge(setting: Setting, name: str, model: Any, text: str, current: str | None, binding: Binding) -> Planned:
    risk = effective_risk(setting, model, text)
    if current is not None and same_text(current, text):
        return Planned(setting, name, model, text, current, "already", "holds this value")
    if setting.spec.at_least and current is not None:
        try:
            if float(current.split()[0]) >= float(text):
                return Planned(setting, name, model, text, current, "already", f"{current} is at least {text}")
        except (ValueError, IndexError):
            pass
    if risk != "safe" and risk not in binding.opt_in and setting.name not in binding.opt_in:
        why = risk_of(model, text) or f"{risk} risk"
        return Planned(setting, name, model, text, current, "held", f"{why}; needs --opt-in {risk}")
    note = ""
    if setting.kind == "file" and setting.spec.restart and getattr(model, "restart", None) is None:
        note = f"takes effect when the server restarts; --restart {setting.spec.file}=CMD has hone do it"
    return Planned(setting, name, model, text, current, "apply", note)


__all__ = ["Binding", "FileBind", "Planned", "bind", "effective_risk", "mem_total_bytes", "plan"]
