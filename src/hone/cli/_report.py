"""``hone report RESULT.json``: render a saved result again, without re-running anything.

Dispatches on the result's ``format`` family (``hone-compare`` …) so other verbs' results
(studies, HTML) plug in by adding an entry to ``RENDERERS``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from hone.cli import main
from hone.cli._common import console, stdout_for_data
from hone.errors import HoneError
from hone.report import csv as csv_report
from hone.report import json as json_report
from hone.report import markdown as md_report
from hone.report import terminal, tune_terminal
from hone.report.base import format_family, load_result, write_text

# format family → {output kind → render(data)}; "terminal" returns a rich renderable.
RENDERERS: dict[str, dict[str, Callable[[dict[str, Any]], Any]]] = {
    "hone-compare": {
        "terminal": terminal.render,
        "markdown": md_report.render,
        "csv": csv_report.render,
        "json": json_report.render,
    },
    "hone-tune": {"terminal": tune_terminal.render, "json": json_report.render},
}
SUPPORTED_VERSIONS = {"hone-compare": {1}, "hone-tune": {1}}


@main.command("report")
@click.argument("result", type=click.Path(dir_okay=False))
@click.option("--markdown", "markdown_path", metavar="FILE", help="Markdown export (- = stdout).")
@click.option("--csv", "csv_path", metavar="FILE", help="CSV export (- = stdout).")
@click.option("--json", "json_path", metavar="FILE", help="JSON export (- = stdout).")
@click.option("--html", "html_path", metavar="FILE",
              help="Self-contained HTML report of a tuning study (RESULT = hone tune --json file or STUDY name).")
@click.option("--storage", metavar="URL", default=None, help="Optuna storage of STUDY (default: the state dir's).")
def report_cmd(result: str, markdown_path: str | None, csv_path: str | None, json_path: str | None,
               html_path: str | None, storage: str | None) -> None:
    """Render RESULT.json (from --export-json) as a table, Markdown, CSV or JSON.

    Without an export option the terminal table is printed. With --html, RESULT may also
    be a study name (`hone tune` prints it) in --storage.
    """
    stdout_for_data(markdown_path, csv_path, json_path)
    if html_path:
        from hone.report.html import write_study_html

        console.print(f"HTML report: {write_study_html(result, html_path, storage)}")
        return
    data = load_result(result)
    family, version = format_family(data)
    renderers = RENDERERS.get(family)
    if renderers is None:
        known = ", ".join(sorted(RENDERERS))
        raise HoneError(f"{result}: hone report cannot render format {data['format']!r} (known: {known})")
    if version not in SUPPORTED_VERSIONS.get(family, {version}):
        raise HoneError(f"{result}: format {data['format']} is newer than this hone understands",
                        hint="upgrade hone")
    exports = {"markdown": markdown_path, "csv": csv_path, "json": json_path}
    if not any(exports.values()):
        console.print(_render(renderers["terminal"], data, result, family))
        return
    for kind, path in exports.items():
        if path is None:
            continue
        if kind not in renderers:
            raise HoneError(f"{result}: no {kind} export for {family} results")
        write_text(path, _render(renderers[kind], data, result, family))


def _render(render: Callable[[dict[str, Any]], Any], data: dict[str, Any], result: str, family: str) -> Any:
    """``render(data)``; a result file cut short or edited (a field missing or of the wrong
    type) is one error line naming the file, not a traceback from deep in a renderer."""
    try:
        return render(data)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        what = f"field {exc.args[0]!r} missing" if isinstance(exc, KeyError) and exc.args else str(exc)
        raise HoneError(f"{result}: not a complete {family} result ({what})",
                        hint="re-create it with the verb that wrote it") from None
