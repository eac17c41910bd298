"""Load a spec file into :class:`~hone.spec.models.Spec`, with ``FILE:LINE`` errors.

A bad spec raises one :class:`SpecError` whose message is the first problem in file
order: ``hone.yaml:12: knobs[2].range: expected [low, high] with low < high, got [5, 1]``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from hone.core.errors import SpecError
from hone.core.metrics import spec_default_metric
from hone.spec import models
from hone.spec._yaml import Loc, LocatedYaml, format_loc, load_located
from hone.spec.models import KNOB_KINDS, Spec, _show

_TYPE_WORDS = {
    "int": "an integer",
    "float": "a number",
    "bool": "true or false",
    "string": "a string",
    "list": "a list",
    "dict": "a mapping",
    "model": "a mapping",
    "tuple": "a list",
}


@dataclass
class LoadedSpec:
    """A validated spec and where it came from (for relative paths and error lines)."""

    spec: Spec
    path: Path
    source: LocatedYaml
    knob_source: LocatedYaml | None = None  # an A-Tune pair: knobs[i] is object[i] of this server file

    @property
    def base_dir(self) -> Path:
        return self.path.parent

    @property
    def compared_metric(self) -> str:
        """The metric ``hone compare`` judges this spec on without ``--metric``
        (:func:`hone.core.metrics.spec_default_metric`)."""
        ms = self.spec.metrics
        return spec_default_metric([m.name for m in ms], [m.weight for m in ms], self.spec.tune.objective)

    def line_of(self, loc: Loc) -> int:
        return self.source.line_of(loc)

    def error(self, loc: Loc, message: str) -> SpecError:
        """A :class:`SpecError` pointing at ``loc`` of this spec file (a knob of an A-Tune pair:
        at its object in the server file)."""
        if self.knob_source is not None and len(loc) >= 2 and loc[0] == "knobs":
            where = ("object", loc[1])
            return SpecError(f"{self.knob_source.path}:{self.knob_source.line_of(where)}: {format_loc(where)}: "
                             f"{message}")
        return SpecError(f"{self.path}:{self.line_of(loc)}: {format_loc(loc)}: {message}")


def _clean_loc(loc: tuple[Any, ...]) -> Loc:
    """Drop pydantic's discriminator tags and union branch names from an error location."""
    out: list[str | int] = []
    for i, part in enumerate(loc):
        if isinstance(part, str) and part in KNOB_KINDS and i >= 2 and loc[i - 2] == "knobs":
            continue
        if isinstance(part, str) and (part.startswith(("list[", "str", "function-")) or "[" in part):
            continue
        out.append(part)
    return tuple(out)


def _message(err: dict[str, Any], source: LocatedYaml, loc: Loc) -> str:
    kind = err["type"]
    given = err.get("input")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "required key missing"
    if kind == "union_tag_invalid":
        tag = err.get("ctx", {}).get("tag", given)
        return f"expected one of {', '.join(KNOB_KINDS)}, got {_show(tag)}"
    if kind == "union_tag_not_found":
        return f"required key missing (one of {', '.join(KNOB_KINDS)})"
    if kind == "value_error":
        text = str(err.get("ctx", {}).get("error", err["msg"]))
        return text
    if kind == "literal_error":
        expected = err.get("ctx", {}).get("expected", "")
        return f"expected one of {expected}, got {_show(given)}"
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        ctx = err.get("ctx", {})
        sym = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
        bound = next(iter(ctx.values()), "")
        return f"expected a number {sym[kind]} {bound}, got {_show(given)}"
    if kind == "too_short":
        return f"expected a non-empty value, got {_show(given)}"
    base = kind.split("_")[0]
    if base in _TYPE_WORDS:
        return f"expected {_TYPE_WORDS[base]}, got {_show(given)}"
    return f"{err['msg']}, got {_show(given)}"


def _unknown_key_hint(source: LocatedYaml, loc: Loc, model_fields: list[str]) -> str:
    return f"unknown key (expected one of: {', '.join(model_fields)})" if model_fields else "unknown key"


def _fields_at(spec_data: Any, loc: Loc) -> list[str]:
    """The keys allowed in the mapping that holds ``loc`` (for unknown-key messages)."""
    parent = loc[:-1]
    if not parent:
        return list(models.Spec.model_fields)
    head = parent[0]
    if head == "benchmark":
        return list(models.Benchmark.model_fields)
    if head == "tune":
        return list(models.Tune.model_fields)
    if head == "metrics":
        return list(models.Extract.model_fields) if "extract" in parent else list(models.Metric.model_fields)
    if head == "knobs" and len(parent) >= 2:
        try:
            kind = spec_data["knobs"][parent[1]]["kind"]
        except (KeyError, IndexError, TypeError):
            return []
        cls = models.KNOB_SPECS.get(kind) if isinstance(kind, str) else None
        return list(cls.model_fields) if cls else []
    return []


def spec_error_from_validation(exc: ValidationError, source: LocatedYaml) -> SpecError:
    """The first error of ``exc`` in file order, as one ``FILE:LINE: path: what`` line."""
    errors = []
    for err in exc.errors(include_url=False):
        loc = _clean_loc(tuple(err["loc"]))
        if err["type"] in ("union_tag_invalid", "union_tag_not_found") and loc[:1] == ("knobs",):
            loc = (*loc, "kind")
        # "Value error" from a model validator sits on the mapping: keep its location.
        errors.append((source.line_of(loc), loc, err))
    errors.sort(key=lambda e: e[0])
    line, loc, err = errors[0]
    message = _message(err, source, loc)
    if err["type"] == "extra_forbidden":
        message = _unknown_key_hint(source, loc, _fields_at(source.data, loc))
    # Model validators may name the field themselves: "benchmark.command: placeholder …".
    if err["type"] == "value_error" and not loc and ": " in message and message.split(": ")[0].count(" ") == 0:
        return SpecError(f"{source.path}:{line}: {message}")
    return SpecError(f"{source.path}:{line}: {format_loc(loc)}: {message}")


def validate_data(data: Any, source: LocatedYaml) -> Spec:
    """Validate already-parsed YAML ``data`` (the same shape as a hone.yaml)."""
    if not isinstance(data, dict):
        raise SpecError(f"{source.path}:1: (top level): expected a mapping, got {_show(data)}")
    try:
        return Spec.model_validate(data)
    except ValidationError as exc:
        raise spec_error_from_validation(exc, source) from None


def load_spec(path: str | Path) -> LoadedSpec:
    """Read and validate a spec; nothing on the system is read or changed. Whether its knobs
    exist here is :func:`hone.knobs.check_spec`'s question (the verbs ask it)."""
    path = Path(path)
    if path.is_dir():
        raise SpecError(f"{path}: cannot read: is a directory", hint="give the spec file, e.g. hone.yaml")
    source = load_located(path)
    if source.data is None:
        raise SpecError(f"{path}:1: (top level): expected a mapping, got an empty file")
    if isinstance(source.data, dict) and "benchmark" in source.data and "evaluations" in source.data:
        raise SpecError(
            f"{path}:1: this looks like an A-Tune client file",
            hint="use: hone tune CLIENT.yaml --atune-server SERVER.yaml",
        )
    spec = validate_data(source.data, source)
    if spec.name is None:
        spec.name = path.stem if path.stem not in ("hone", "spec") else path.parent.resolve().name
    anchor_paths(spec, path.parent)
    return LoadedSpec(spec=spec, path=path, source=source)


def check_cwd(loaded: LoadedSpec) -> None:
    """SpecError unless ``benchmark.cwd`` (relative to the spec file) is a directory here:
    a missing one would otherwise surface as "command not found" from the first run."""
    cwd = loaded.spec.benchmark.cwd
    if cwd is not None and not (loaded.base_dir / cwd).is_dir():
        raise loaded.error(("benchmark", "cwd"), f"expected an existing directory (relative to the spec file), "
                                                 f"got {_show(cwd)}: {loaded.base_dir / cwd} is not one")


def anchor_paths(spec: Spec, base: Path) -> None:
    """Relative paths of local ``file`` knobs are relative to the spec's directory (as
    ``cwd`` is), not to wherever hone runs: made absolute here, once."""
    for knob in spec.knobs:
        if knob.kind == "file" and not knob.hosts and not Path(knob.path).is_absolute():
            knob.path = str((base / knob.path).resolve())


def dump_json(spec: Spec) -> str:
    """The validated spec as canonical JSON (for fingerprints and result files)."""
    return json.dumps(spec.model_dump(mode="json"), sort_keys=True)
