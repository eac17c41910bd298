"""Exporters: one file per format (terminal, markdown, csv, json; for other tools hyperfine,
bmf, gab, benchstat and the CI summary) over one small base.

Each exporter turns a result dict (a versioned JSON format such as ``hone-compare/2``, typed
in :mod:`hone.report.formats`) into text; ``hone report`` picks one from :data:`RENDERERS`
by the result's kind and the output asked for, and never re-runs anything.
"""

import importlib
from typing import Any

from hone.report.base import format_family, load_result


class _Renderer:
    """``module.function``, imported on first call: ``hone report`` loads only the exporter it
    runs (the doctor's markdown alone pulls in the whole diagnose package, ~0.5 s a start)."""

    def __init__(self, target: str) -> None:
        self.module, self.function = target.rsplit(".", 1)

    def __call__(self, data: dict[str, Any]) -> Any:
        return getattr(importlib.import_module(self.module), self.function)(data)


def _kind(**outputs: str) -> dict[str, _Renderer]:
    return {out: _Renderer(target) for out, target in outputs.items()}


_R = "hone.report."
# kind (hone.report.formats.Format.kind) → {output → render(data)}; "terminal" returns a rich
# renderable, every other output text. Every kind also has "json" (the document itself).
RENDERERS: dict[str, dict[str, _Renderer]] = {
    "compare": _kind(terminal=_R + "terminal.render", markdown=_R + "markdown.render", csv=_R + "csv.render",
                     json=_R + "json.render", hyperfine=_R + "hyperfine.render", bmf=_R + "bmf.render",
                     gab=_R + "gab.render", benchstat=_R + "benchstat.render", summary=_R + "summary.render"),
    "tune": _kind(terminal=_R + "tune_terminal.render"),
    "worker": _kind(terminal=_R + "run_terminal.render_worker"),
    "run": _kind(terminal=_R + "run_terminal.render"),
    "pgo": _kind(terminal=_R + "pgo_terminal.render", markdown=_R + "pgo_markdown.render"),
    "pgo-manifest": _kind(terminal=_R + "pgo_terminal.render_manifest"),
    "doctor": _kind(terminal=_R + "diagnose_terminal.render_doctor",
                    markdown="hone.diagnose.report_markdown.render_markdown"),
    "profile": _kind(terminal=_R + "diagnose_terminal.render_profile"),
    "capabilities": _kind(terminal=_R + "diagnose_terminal.render_capabilities"),
    "libswap": _kind(terminal=_R + "libswap_terminal.render"),
    "libswap-show": _kind(terminal=_R + "libswap_terminal.render_show"),
    "verify": _kind(terminal=_R + "verify_terminal.render"),
    "analyse": _kind(terminal=_R + "analyse_terminal.render"),
    "preset-verify": _kind(terminal=_R + "preset_terminal.render_verify"),
}

__all__ = ["RENDERERS", "format_family", "load_result"]
