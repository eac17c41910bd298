"""The catalogue: built-in preset files shipped with hone and the user's own (the
``presets/`` directory of the state directory), includes resolved.

Includes work like tuned's ``include=``: the included presets' settings first (in the order
listed, each resolved the same way), then the preset's own settings, a setting of the same
name replacing the inherited one; ``exclude:`` drops inherited settings by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError

from hone.core.errors import HoneError, SpecError
from hone.core.paths import state_dir
from hone.presets.model import CLASSES, Preset, PresetFile, Setting
from hone.spec._yaml import load_located
from hone.spec.loader import spec_error_from_validation

BUILTIN_DIR = Path(__file__).parent / "catalogue"
SUFFIX = ".yaml"


def user_dir() -> Path:
    """Where ``hone preset define`` puts user presets: ``STATE_DIR/presets``."""
    return state_dir() / "presets"


def read_preset_file(path: str | Path) -> PresetFile:
    """One preset file, validated; a SpecError naming ``FILE:LINE: field: what`` otherwise."""
    source = load_located(path)
    if not isinstance(source.data, dict):
        raise SpecError(f"{path}:1: (top level): expected a mapping with preset:, version:, settings: …")
    try:
        return PresetFile.model_validate(source.data)
    except ValidationError as exc:
        raise spec_error_from_validation(exc, source) from None


def is_preset_file(path: str | Path) -> bool:
    """A YAML file whose top level names a ``preset:`` (a spec has ``benchmark:``)."""
    p = Path(path)
    if p.suffix not in (".yaml", ".yml") or not p.is_file():
        return False
    try:
        with open(p, encoding="utf-8", errors="replace") as fh:
            return any(line.startswith("preset:") for line in fh)
    except OSError:
        return False


def _files(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"*{SUFFIX}")) if directory.is_dir() else []


def _read_all(user: bool, extra: Iterable[Path] = ()) -> dict[str, tuple[PresetFile, Path, bool]]:
    found: dict[str, tuple[PresetFile, Path, bool]] = {}
    sources = [(p, False) for p in _files(BUILTIN_DIR)]
    if user:
        sources += [(p, True) for p in _files(user_dir())]
    sources += [(Path(p), True) for p in extra]
    for path, is_user in sources:
        doc = read_preset_file(path)
        if doc.preset in found:
            other = found[doc.preset][1]
            raise HoneError(f"{path}: preset {doc.preset!r} is already defined by {other}",
                            hint="give a user preset its own name (it may include the other)")
        found[doc.preset] = (doc, path, is_user)
    return found


def _resolve(name: str, docs: dict[str, tuple[PresetFile, Path, bool]], chain: tuple[str, ...],
             cache: dict[str, Preset]) -> Preset:
    if name in cache:
        return cache[name]
    doc, path, is_user = docs[name]
    settings: dict[str, Setting] = {}
    files = {}
    for base in doc.include:
        if base in chain or base == name:
            raise HoneError(f"{path}: include: {base!r} includes {name!r} again (a cycle: "
                            f"{' -> '.join((*chain, name, base))})")
        if base not in docs:
            raise HoneError(f"{path}: include: no preset named {base!r}",
                            hint=f"known presets: {', '.join(sorted(docs))}")
        parent = _resolve(base, docs, (*chain, name), cache)
        files.update(parent.files)
        for s in parent.settings:
            settings.pop(s.name, None)
            settings[s.name] = s
    for ex in doc.exclude:
        if ex not in settings:
            raise HoneError(f"{path}: exclude: {ex!r} is not a setting of {', '.join(doc.include) or 'any include'}")
        del settings[ex]
    files.update(doc.files)
    for s in doc.settings:
        if s.file is not None and s.file not in files:
            raise HoneError(f"{path}: setting {s.name}: file {s.file!r} is not declared under files:"
                            + (f" (declared: {', '.join(files)})" if files else ""))
        settings.pop(s.name, None)
        settings[s.name] = Setting(s, name)
    for s in settings.values():
        s.file = files.get(s.spec.file) if s.spec.file else None
    preset = Preset(doc.preset, doc.version, doc.description, list(doc.classes), list(settings.values()),
                    list(doc.include), files, doc.tuned, str(path), is_user)
    if preset.tuned is None:  # the tuned profile of the nearest include that names one
        preset.tuned = next((cache[b].tuned for b in doc.include if cache[b].tuned), None)
    cache[name] = preset
    return preset


def load_catalogue(user: bool = True, extra: Iterable[str | Path] = ()) -> dict[str, Preset]:
    """Every preset by name, includes resolved: the built-in ones, the user's (``user``), and
    the preset files in ``extra``. Raises HoneError/SpecError naming a bad file."""
    docs = _read_all(user, [Path(p) for p in extra])
    cache: dict[str, Preset] = {}
    return {name: _resolve(name, docs, (), cache) for name in sorted(docs)}


def get_preset(name_or_file: str) -> Preset:
    """A preset by name, or the preset in a preset file (which may include catalogue presets)."""
    if is_preset_file(name_or_file):
        doc = read_preset_file(name_or_file)
        catalogue = load_catalogue(extra=[] if _in_user_dir(name_or_file) else [name_or_file])
        return catalogue[doc.preset]
    catalogue = load_catalogue()
    if name_or_file not in catalogue:
        raise HoneError(f"no preset named {name_or_file!r} (and no preset file of that name)",
                        hint=f"`hone preset list` shows them: {', '.join(catalogue)}")
    return catalogue[name_or_file]


def _in_user_dir(path: str | Path) -> bool:
    return Path(path).resolve().parent == user_dir().resolve()


def for_classes(classes: Iterable[str], catalogue: dict[str, Preset] | None = None) -> list[Preset]:
    """The presets that fit any of ``classes`` (names from :data:`CLASSES`), those fitting
    the most of them first, then by name. Raises HoneError for an unknown class."""
    wanted = list(dict.fromkeys(classes))
    bad = [c for c in wanted if c not in CLASSES]
    if bad:
        raise HoneError(f"unknown workload class {', '.join(map(repr, bad))}; expected one of {', '.join(CLASSES)}")
    catalogue = load_catalogue() if catalogue is None else catalogue
    scored = [(len(set(p.classes) & set(wanted)), p) for p in catalogue.values()]
    return [p for n, p in sorted(scored, key=lambda x: (-x[0], x[1].name)) if n]


__all__ = ["BUILTIN_DIR", "for_classes", "get_preset", "is_preset_file", "load_catalogue", "read_preset_file",
           "user_dir"]
