"""hone's result formats, in one place: every JSON document a verb writes, typed and versioned.

A result is a JSON object whose ``format`` field names it ``hone-<kind>/<version>``
(``hone-compare/2``). Within a version fields are only added, so a reader ignores fields
it does not know; removing or renaming a field, changing its type, unit or meaning, or
adding a word to a closed vocabulary (a verdict) makes a new version, and ``hone report``
keeps reading the old ones. docs/formats.md describes every field of every version;
tests/report/formats holds a real sample of each.

The types are ``TypedDict``s validated with pydantic's ``TypeAdapter`` (strict: a number
written as a string is an error), not pydantic models: the documents are plain dicts from
writer to renderer (every exporter and ``--json`` take the dict as it is, key order and
unknown fields included), and a TypedDict describes exactly that dict — no second object
model to convert to and from, and the same types serve as static types of those dicts.
Validation only checks; renderers get the document as loaded.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from hone.core.errors import HoneError
from hone.report.formats.analyse import AnalyseV1
from hone.report.formats.common import today_verdicts
from hone.report.formats.compare import CompareV1, CompareV2, v1_for_display
from hone.report.formats.diagnose import CapabilitiesV1, DoctorV1, ProfileV1
from hone.report.formats.libswap import LibswapShowV1, LibswapV1
from hone.report.formats.persist import VerifyV1
from hone.report.formats.pgo import PgoManifestV1, PgoV1
from hone.report.formats.presets import PresetVerifyV1
from hone.report.formats.run import RunV1
from hone.report.formats.tune import TuneV1, TuneV2, WorkerV1


@dataclass(frozen=True)
class Format:
    """One version of one kind of result: its type, the verb that writes it, and whether
    this hone still writes it (``current``) or only reads it."""

    kind: str
    version: int
    schema: Any  # a TypedDict
    writer: str
    current: bool = True
    # The document in today's words, for the human renderings (None: as it is).
    for_display: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    @property
    def name(self) -> str:
        return f"hone-{self.kind}/{self.version}"


FORMATS: tuple[Format, ...] = (
    Format("compare", 1, CompareV1, "hone compare --export-json (older hones)", current=False,
           for_display=v1_for_display),
    Format("compare", 2, CompareV2, "hone compare --export-json"),
    Format("tune", 1, TuneV1, "hone tune --json (older hones)", current=False, for_display=today_verdicts),
    Format("tune", 2, TuneV2, "hone tune --json"),
    Format("worker", 1, WorkerV1, "hone worker --json"),
    Format("run", 1, RunV1, "hone run --json"),
    Format("pgo", 1, PgoV1, "hone pgo --json, WORKDIR/result.json", for_display=today_verdicts),
    Format("pgo-manifest", 1, PgoManifestV1, "hone pgo: WORKDIR/variants/NAME/manifest.json"),
    Format("doctor", 1, DoctorV1, "hone doctor: OUT/doctor.json, --json", for_display=today_verdicts),
    Format("profile", 1, ProfileV1, "hone profile --json"),
    Format("capabilities", 1, CapabilitiesV1, "hone doctor --capabilities --json"),
    Format("libswap", 1, LibswapV1, "hone libswap glibc|alloc --json, VARIANT_DIR/variant.json"),
    Format("libswap-show", 1, LibswapShowV1, "hone libswap show --json"),
    Format("verify", 1, VerifyV1, "hone verify --json"),
    Format("analyse", 1, AnalyseV1, "hone analyse --json"),
    Format("preset-verify", 1, PresetVerifyV1, "hone preset verify --json"),
)
BY_NAME: dict[str, Format] = {f.name: f for f in FORMATS}
# Spellings hone wrote before every format was hone-<kind>/<version>: read as the format named.
OLD_SPELLINGS: dict[str, str] = {
    "hone.doctor/1": "hone-doctor/1",
    "hone.profile/1": "hone-profile/1",
    "hone.capabilities/1": "hone-capabilities/1",
}
_NAME = re.compile(r"hone[-.]([a-z][a-z0-9-]*)/([0-9]+)")


def supported(kind: str | None = None) -> str:
    """The formats this hone reads (of ``kind`` only, when given), for messages."""
    return ", ".join(f.name for f in FORMATS if kind is None or f.kind == kind)


def identify(data: dict[str, Any], source: str) -> Format:
    """The format ``data["format"]`` names; HoneError naming what this hone reads when it
    names none of them (``source``: the file, for the message)."""
    written = str(data.get("format"))
    fmt = BY_NAME.get(OLD_SPELLINGS.get(written, written))
    if fmt is not None:
        return fmt
    m = _NAME.fullmatch(written)
    kind = m.group(1) if m else None
    if kind is not None and any(f.kind == kind for f in FORMATS):
        newer = int(m.group(2)) > max(f.version for f in FORMATS if f.kind == kind)  # type: ignore[union-attr]
        raise HoneError(f"{source}: format {written} is not one this hone reads (it reads {supported(kind)}"
                        + ("; a newer hone wrote it: upgrade hone)" if newer else ")"))
    raise HoneError(f"{source}: cannot render format {written!r}: not a hone result (this hone reads {supported()})")


@cache
def _adapter(schema: Any) -> TypeAdapter[Any]:
    return TypeAdapter(schema)


def in_todays_words(data: Any) -> Any:
    """A result read in passing (a study's stored ``hone_result``) in today's words: a copy
    through its format's ``for_display`` when it names a format that has one, else ``data``
    as it is (never an error: nothing is validated here)."""
    if not isinstance(data, dict):
        return data
    written = str(data.get("format"))
    fmt = BY_NAME.get(OLD_SPELLINGS.get(written, written))
    return fmt.for_display(data) if fmt is not None and fmt.for_display else data


def validate(data: dict[str, Any], source: str) -> Format:
    """Check ``data`` against the format it names: HoneError in one line naming ``source``
    and the first field that is missing or of the wrong type."""
    fmt = identify(data, source)
    try:
        _adapter(fmt.schema).validate_python(data, strict=True)
    except ValidationError as exc:
        raise HoneError(problem(exc, source, fmt.name)) from None
    return fmt


def load_tune_result(path: str) -> dict[str, Any]:
    """A ``hone tune --json`` result file, read and validated: HoneError naming the file when it
    is missing, not JSON, of another kind or of a wrong shape."""
    from hone.report.base import load_result

    data = load_result(path)
    fmt = validate(data, path)
    if fmt.kind != "tune":
        raise HoneError(f"{path}: expected a hone tune result ({supported('tune')}), got {fmt.name}")
    return data


def problem(exc: ValidationError, source: str, name: str) -> str:
    """One line for a failed validation: the file, the format and the first bad field."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    where = field_path(first["loc"])
    if first["type"] == "missing":
        return f"{source}: not a complete {name} result: field {where} missing{more}"
    msg = first["msg"][:1].lower() + first["msg"][1:]
    got = repr(first.get("input"))
    got = got if len(got) <= 60 else got[:57] + "…"
    return f"{source}: not a valid {name} result: field {where}: {msg}, got {got}{more}"


def field_path(loc: tuple[int | str, ...]) -> str:
    """``("rows", 0, "comparisons", "B", "verdict")`` → ``rows[0].comparisons.B.verdict``;
    a key that is not a plain word is quoted: ``summaries['A: gzip -1']``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_:-]*", part):
            out += f".{part}" if out else part
        else:
            out += f"[{part!r}]"
    return f"'{out}'" if out else "(the document)"


__all__ = ["BY_NAME", "FORMATS", "OLD_SPELLINGS", "Format", "identify", "in_todays_words", "problem", "supported",
           "validate"]
