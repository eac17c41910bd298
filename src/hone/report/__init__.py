"""Exporters: one file per format (terminal, markdown, csv, json; for other tools hyperfine,
bmf, gab, benchstat and the CI summary) over one small base.

Each exporter turns a result dict (a versioned JSON format such as ``hone-compare/2``, typed
in :mod:`hone.report.formats`) into text; ``hone report`` picks one by flag and never re-runs
anything.
"""

from hone.report.base import format_family, load_result

__all__ = ["format_family", "load_result"]
