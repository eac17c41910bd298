"""Conformance of the renderer registry (``hone.report.RENDERERS``): every result kind hone
reads has renderers, and every renderer turns each stored sample of its kind
(tests/report/formats/samples) into non-empty output."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from hone.report import RENDERERS
from hone.report.formats import BY_NAME, FORMATS, validate

SAMPLES = sorted(p for p in Path(__file__).resolve().parents[1].rglob("hone-*.json") if p.parent.name == "samples")


def _samples_of(kind: str) -> list[Path]:
    return [p for p in SAMPLES if BY_NAME[json.loads(p.read_text())["format"]].kind == kind]


def _cases() -> list[tuple[str, str, Path]]:
    return [(kind, output, path) for kind, outputs in RENDERERS.items() for output in outputs
            for path in _samples_of(kind)]


def _text(rendered: Any) -> str:
    if isinstance(rendered, str):
        return rendered
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(rendered)
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_every_kind_has_a_terminal_renderer_and_a_sample() -> None:
    kinds = {f.kind for f in FORMATS}
    assert set(RENDERERS) == kinds
    for kind, outputs in RENDERERS.items():
        assert "terminal" in outputs, kind
        assert all(callable(render) for render in outputs.values()), kind
        assert _samples_of(kind), f"no sample of a {kind} result under tests/"


@pytest.mark.parametrize(("kind", "output", "path"), _cases(), ids=lambda v: v.name if isinstance(v, Path) else v)
def test_renderer_renders_every_sample_of_its_kind(kind: str, output: str, path: Path) -> None:
    data = json.loads(path.read_text())
    fmt = validate(data, str(path))
    assert fmt.kind == kind
    shown = data if output == "json" or fmt.for_display is None else fmt.for_display(data)
    text = _text(RENDERERS[kind][output](shown))
    assert text.strip(), f"{output} of {path.name} is empty"
