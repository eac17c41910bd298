"""Options and output helpers shared by several verbs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from hone.core.errors import HoneError

if TYPE_CHECKING:
    from hone.spec.loader import LoadedSpec

# Piped output (CI logs, tests) gets wide tables instead of rich's 80-column default.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 200
# Markup and emoji codes are off for every string these consoles print (table cells and
# titles included): benchmark output, knob values and paths reach them and must appear as
# written ("[/bold]" in a stderr is data, not a tag). hone's own styling goes through
# ``style=`` and rich ``Text`` objects instead.
console = Console(stderr=False, highlight=False, markup=False, emoji=False, width=_WIDTH)
err_console = Console(stderr=True, highlight=False, markup=False, emoji=False, width=_WIDTH)


def stdout_for_data(*paths: str | None) -> None:
    """When an output option is ``-`` (a JSON/CSV/Markdown document on stdout), send every
    human line (tables, progress, notes) to stderr instead, so stdout holds that document
    alone and parses. Two documents cannot share stdout: refused."""
    if sum(p == "-" for p in paths) > 1:
        raise HoneError("only one output can go to stdout (-); give the others a file name")
    console.file = sys.stderr if "-" in paths else None  # type: ignore[assignment]  # None = stdout


def duration_arg(text: str, flag: str) -> float:
    """Seconds in a duration option's text (90s, 45m, 2h), or one line naming ``flag`` (exit 2)."""
    from hone.core.durations import parse_duration

    try:
        return parse_duration(text)
    except ValueError as exc:
        raise HoneError(f"{flag}: {exc}") from None


def duration_option(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """A click callback for a duration option (None when not given): :func:`duration_arg`."""
    return None if value is None else duration_arg(value, param.opts[0])


def safe_study_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--study NAME`` callback: the name becomes a file name in the state directory."""
    from hone.spec.models import check_name

    if value is None:
        return value
    try:
        return check_name(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def write_json(path: str | Path, data: Any) -> None:
    """Write ``data`` as indented JSON; ``-`` means stdout."""
    text = json.dumps(data, indent=2, sort_keys=False, default=str)
    if str(path) == "-":
        print(text)
    else:
        Path(path).write_text(text + "\n")


def fmt_num(value: float, digits: int = 4) -> str:
    if value != value:  # NaN
        return "nan"
    if value == 0:
        return "0"
    mag = abs(value)
    if mag >= 1e6 or mag < 1e-3:
        return f"{value:.{digits - 1}e}"
    return f"{value:.{digits}g}" if mag < 1000 else f"{value:,.1f}"


def load_checked(path: str | Path) -> LoadedSpec:
    """The spec at ``path``, validated, with its knobs checked on this machine (changes nothing)."""
    from hone.knobs import check_spec
    from hone.spec import load_spec

    return check_spec(load_spec(path))
