"""``hone report RESULT.json``: render a saved result again, without re-running anything.

RESULT is any document a hone verb writes (docs/formats.md). Its ``format`` names the type
it is checked against first (:mod:`hone.report.formats`: a missing or mistyped field is one
line naming the file and the field) and picks the renderers in ``hone.report.RENDERERS``; an older
version is shown in today's words where they changed (``--json`` keeps it as written).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from hone.cli import main
from hone.cli._common import console, stdout_for_data
from hone.core.errors import HoneError
from hone.report import RENDERERS, formats
from hone.report import gab as gab_report
from hone.report import json as json_report
from hone.report.base import load_result, write_text

# --html is apart from RENDERERS: a tune study, a doctor directory.
HTML_KINDS = ("tune", "doctor")


@main.command("report")
@click.argument("result", type=click.Path(dir_okay=False))
@click.option("--markdown", "markdown_path", metavar="FILE", help="Markdown export (- = stdout).")
@click.option("--csv", "csv_path", metavar="FILE", help="CSV export (- = stdout).")
@click.option("--json", "json_path", metavar="FILE", help="JSON export (- = stdout).")
@click.option("--hyperfine", "hyperfine_path", metavar="FILE", help="hyperfine's --export-json layout.")
@click.option("--bmf", "bmf_path", metavar="FILE", help="Bencher Metric Format JSON.")
@click.option("--gab", "gab_path", metavar="FILE", help="github-action-benchmark custom JSON (its tool is printed).")
@click.option("--benchstat", "benchstat_path", metavar="FILE", help="benchstat-like text.")
@click.option("--summary", "summary_path", metavar="FILE", help="The Markdown summary hone compare writes for CI.")
@click.option("--html", "html_path", metavar="FILE",
              help="Self-contained HTML report of a tuning study (RESULT = hone tune --json file or STUDY name) "
                   "or of a doctor result (its flame graphs from the file's directory).")
@click.option("--storage", metavar="URL", default=None, help="Optuna storage of STUDY (default: the state dir's).")
def report_cmd(result: str, markdown_path: str | None, csv_path: str | None, json_path: str | None,
               hyperfine_path: str | None, bmf_path: str | None, gab_path: str | None,
               benchstat_path: str | None, summary_path: str | None,
               html_path: str | None, storage: str | None) -> None:
    """Render RESULT.json — any result a hone verb writes (docs/formats.md) — as a table,
    Markdown, CSV, JSON or a format CI tools read (hyperfine, Bencher, github-action-benchmark,
    benchstat, a CI summary), as far as its kind has them.

    Without an export option the terminal view is printed. With --html, RESULT may also
    be a study name (`hone tune` prints it) in --storage.
    """
    stdout_for_data(markdown_path, csv_path, json_path, hyperfine_path, bmf_path, gab_path, benchstat_path,
                    summary_path)
    if html_path and not Path(result).is_file():
        from hone.report.html import write_study_html

        console.print(f"HTML report: {write_study_html(result, html_path, storage)}")
        return
    data = load_result(result)
    fmt = formats.validate(data, result)
    shown = fmt.for_display(data) if fmt.for_display else data
    renderers = {"json": json_report.render, **RENDERERS[fmt.kind]}
    exports = {"markdown": markdown_path, "csv": csv_path, "json": json_path, "hyperfine": hyperfine_path,
               "bmf": bmf_path, "gab": gab_path, "benchstat": benchstat_path, "summary": summary_path}
    for kind in [k for k, path in exports.items() if path is not None and k not in renderers]:
        have = ", ".join(f"hone-{k}" for k, r in RENDERERS.items() if kind in r) or "none"
        raise HoneError(f"{result}: no {kind} export for {fmt.name} results (it exists for: {have})")
    if html_path:
        _write_html(fmt, data, result, html_path, storage)
    if not any(exports.values()):
        if not html_path:
            console.print(_render(renderers["terminal"], shown, result, fmt.name))
        return
    for kind, path in exports.items():
        if path is not None:
            # --json is the document as written; every other output is in today's words.
            write_text(path, _render(renderers[kind], data if kind == "json" else shown, result, fmt.name))
    if gab_path:
        console.print(f"github-action-benchmark export: use tool: {gab_report.tool(data)}", style="dim")


def _write_html(fmt: formats.Format, data: dict[str, Any], result: str, out: str, storage: str | None) -> None:
    """The HTML report of a tune result (with its study's plots when the study is here) or
    of a doctor result (flame graphs read from the result's directory)."""
    if fmt.kind not in HTML_KINDS:
        have = ", ".join(f"hone-{k}" for k in HTML_KINDS)
        raise HoneError(f"{result}: no html export for {fmt.name} results (it exists for: {have})")
    if fmt.kind == "tune":
        from hone.report.html import write_study_html

        console.print(f"HTML report: {write_study_html(result, out, storage)}")
        return
    from hone.diagnose.report_html import render_html

    write_text(out, _render(lambda doc: render_html(doc, Path(result).parent), data, result, fmt.name))
    if out != "-":
        console.print(f"HTML report: {out}")


def _render(render: Callable[[dict[str, Any]], Any], data: dict[str, Any], result: str, family: str) -> Any:
    """``render(data)``; a result file cut short or edited (a field missing or of the wrong
    type) is one error line naming the file, not a traceback from deep in a renderer."""
    try:
        return render(data)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        what = f"field {exc.args[0]!r} missing" if isinstance(exc, KeyError) and exc.args else str(exc)
        raise HoneError(f"{result}: not a complete {family} result ({what})",
                        hint="re-create it with the verb that wrote it") from None
