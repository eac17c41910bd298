"""User preset files: the kept settings of ``preset verify``, or a confirmed ``hone tune``
result (``preset define``), written as a preset file that ``hone preset list`` shows and
others can include."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

from hone.core.errors import HoneError
from hone.presets.bind import FileBind, Planned
from hone.presets.catalogue import SUFFIX, read_preset_file, user_dir
from hone.presets.model import PresetFile, check_preset_name


def setting_entry(p: Planned, verified: str | None) -> dict[str, Any]:
    """A bound setting as a preset entry with the concrete value and path it was measured with."""
    s = p.setting.spec
    entry: dict[str, Any] = {}
    if s.sysctl:
        entry["sysctl"] = s.sysctl
    elif s.sysfs:
        entry["sysfs"] = p.name  # the device filled in
    else:
        entry.update({"file": s.file, **({"section": s.section} if s.section else {}), "key": s.key})
    entry["value"] = p.text
    if s.restart:
        entry["restart"] = True
    if p.setting.risk != "safe":
        entry["risk"] = p.setting.risk
    entry["source"] = s.source
    entry["why"] = s.why
    if verified:
        entry["verified"] = verified
    return entry


def file_entry(decl_format: str, match: list[str], about: str, bound: FileBind | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"format": decl_format, "match": list(match)}
    if about:
        entry["about"] = about
    if bound is not None:
        entry["path"] = bound.path
        if isinstance(bound.restart, list):
            entry["restart"] = bound.restart
    return entry


def preset_text(doc: dict[str, Any], header: str) -> str:
    """The YAML of a preset document, validated first (a HoneError if hone made a bad one)."""
    try:
        PresetFile.model_validate(doc)
    except ValueError as exc:
        raise HoneError(f"the preset to write does not validate: {exc}") from None
    comment = "".join(f"# {line}\n" for line in header.splitlines())
    return comment + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1000)


def output_path(name: str, out: str | None) -> Path:
    """``out``, or NAME.yaml in the user preset directory."""
    check_preset_name(name)
    if out is not None:
        return Path(out)
    directory = user_dir()
    directory.mkdir(parents=True, exist_ok=True)
    return directory / f"{name}{SUFFIX}"


def write_preset(path: Path, text: str, *, force: bool = False) -> None:
    """Write a preset file atomically; an existing file only with ``force``."""
    if path.exists() and not force:
        raise HoneError(f"{path}: exists; give --force to replace it")
    if not path.parent.is_dir():
        raise HoneError(f"{path}: the directory {path.parent} does not exist")
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    read_preset_file(path)  # what hone writes, hone reads


__all__ = ["file_entry", "output_path", "preset_text", "setting_entry", "write_preset"]
