"""Exporters: one file per format (terminal, markdown, csv, json; for other tools hyperfine,
bmf, gab, benchstat and the CI summary) over one small base.

Each exporter turns a result dict (a versioned JSON format such as ``hone-compare/2``, typed
in :mod:`hone.report.formats`) into text; ``hone report`` picks one from :data:`RENDERERS`
by the result's kind and the output asked for, and never re-runs anything.
"""

from collections.abc import Callable
from typing import Any

from hone.diagnose.report_markdown import render_markdown
from hone.report import (
    analyse_terminal,
    diagnose_terminal,
    libswap_terminal,
    pgo_markdown,
    pgo_terminal,
    preset_terminal,
    run_terminal,
    terminal,
    tune_terminal,
    verify_terminal,
)
from hone.report import benchstat as benchstat_report
from hone.report import bmf as bmf_report
from hone.report import csv as csv_report
from hone.report import gab as gab_report
from hone.report import hyperfine as hyperfine_report
from hone.report import json as json_report
from hone.report import markdown as md_report
from hone.report import summary as summary_report
from hone.report.base import format_family, load_result

# kind (hone.report.formats.Format.kind) → {output → render(data)}; "terminal" returns a rich
# renderable, every other output text. Every kind also has "json" (the document itself).
RENDERERS: dict[str, dict[str, Callable[[dict[str, Any]], Any]]] = {
    "compare": {
        "terminal": terminal.render,
        "markdown": md_report.render,
        "csv": csv_report.render,
        "json": json_report.render,
        "hyperfine": hyperfine_report.render,
        "bmf": bmf_report.render,
        "gab": gab_report.render,
        "benchstat": benchstat_report.render,
        "summary": summary_report.render,
    },
    "tune": {"terminal": tune_terminal.render},
    "worker": {"terminal": run_terminal.render_worker},
    "run": {"terminal": run_terminal.render},
    "pgo": {"terminal": pgo_terminal.render, "markdown": pgo_markdown.render},
    "pgo-manifest": {"terminal": pgo_terminal.render_manifest},
    "doctor": {"terminal": diagnose_terminal.render_doctor, "markdown": render_markdown},
    "profile": {"terminal": diagnose_terminal.render_profile},
    "capabilities": {"terminal": diagnose_terminal.render_capabilities},
    "libswap": {"terminal": libswap_terminal.render},
    "libswap-show": {"terminal": libswap_terminal.render_show},
    "verify": {"terminal": verify_terminal.render},
    "analyse": {"terminal": analyse_terminal.render},
    "preset-verify": {"terminal": preset_terminal.render_verify},
}

__all__ = ["RENDERERS", "format_family", "load_result"]
