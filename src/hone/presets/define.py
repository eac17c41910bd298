"""``hone preset define``: a confirmed ``hone tune`` result turned into a user preset.

The recommendation's system knobs become settings of the same kinds (sysctl, sysfs, file; a
file keeps its path and restart command as the preset's default binding). Knobs that exist
only inside a benchmark run (param, env, library) and script/binary knobs are left out, named.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hone.knobs.file import FileDriver
from hone.knobs.risk import risk_of
from hone.presets.write import file_entry
from hone.spec.loader import LoadedSpec
from hone.spec.models import sysctl_name, to_argv


def _binding_name(path: str, taken: dict[str, str]) -> str:
    """``/etc/postgresql/15/main/postgresql.conf`` → ``postgresql`` (unique among ``taken``)."""
    base = re.sub(r"[^a-z0-9_-]+", "-", Path(path).name.split(".")[0].lower()).strip("-_") or "config"
    if not base[0].isalpha():
        base = f"f{base}"
    name, n = base, 2
    while name in taken and taken[name] != path:
        name, n = f"{base}{n}", n + 1
    return name


def preset_from_tune(name: str, result: str, data: dict[str, Any], loaded: LoadedSpec, values: dict[str, Any], *,
                     classes: list[str], description: str | None, include: list[str]) -> tuple[dict[str, Any],
                                                                                               list[str]]:
    """The preset document of a tune result's recommendation, and the knobs left out (with why)."""
    ci = data.get("ci_pct") or [None, None]
    gain = data.get("improvement_pct")
    figure = (f"{gain:+.2f}% [{ci[0]:+.2f}%, {ci[1]:+.2f}%]" if isinstance(gain, int | float)
              and all(isinstance(c, int | float) for c in ci) else str(data.get("verdict")))
    trial = data.get("recommended_trial")
    source = f"hone tune {result} (spec {data.get('spec')}, trial {trial})"
    verified = f"hone tune, confirmed against the baseline: {figure}"
    effects = {c["knob"]: c for c in ((data.get("ablation") or {}).get("changes") or [])}
    files: dict[str, dict[str, Any]] = {}
    paths: dict[str, str] = {}
    settings: list[dict[str, Any]] = []
    skipped: list[str] = []
    service = loaded.spec.service
    for knob, value in values.items():
        model = loaded.spec.knob(knob)
        text = model.format_value(value)
        if getattr(model, "hosts", None):
            skipped.append(f"{knob}: a knob on remote hosts (presets are for this machine)")
            continue
        if model.kind == "sysctl":
            entry: dict[str, Any] = {"sysctl": sysctl_name(model.key or model.name)}
        elif model.kind == "sysfs":
            entry = {"sysfs": model.path.removeprefix("/sys/")}
        elif model.kind == "file":
            bname = _binding_name(model.path, paths)
            paths[bname] = model.path
            restart = None
            if model.restart == "service":
                if service is not None and service.restart is not None:
                    restart = to_argv(service.restart, service.shell)
            elif model.restart is not None:
                restart = to_argv(model.restart)
            fmt = FileDriver(model).fmt
            files[bname] = file_entry(fmt, [Path(model.path).name], "", None)
            files[bname]["path"] = model.path
            if restart:
                files[bname]["restart"] = restart
            entry = {"file": bname, **({"section": model.section} if model.section else {}), "key": model.key}
            if model.restart is not None:
                entry["restart"] = True
        else:
            skipped.append(f"{knob}: a {model.kind} knob (presets hold sysctl, sysfs and file settings)")
            continue
        entry["value"] = text
        risk = risk_of(model, value)
        if risk or model.safety == "dangerous":
            entry["risk"] = "durability" if risk else "machine"
        effect = effects.get(knob)
        why = model.description or f"part of the configuration hone tune confirmed ({figure})"
        if effect is not None and isinstance(effect.get("effect_pct"), int | float):
            why += f"; worth {effect['effect_pct']:+.2f}% on its own ({effect.get('note')})"
        entry.update({"source": source, "why": why, "verified": verified})
        settings.append(entry)
    doc: dict[str, Any] = {
        "preset": name,
        "version": 1,
        "description": description or f"Settings hone tune confirmed for {data.get('spec_name') or data.get('spec')}",
        "classes": list(classes),
    }
    if include:
        doc["include"] = list(include)
    if files:
        doc["files"] = files
    doc["settings"] = settings
    return doc, skipped


__all__ = ["preset_from_tune"]
