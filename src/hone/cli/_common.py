"""Options and output helpers shared by several verbs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

# Piped output (CI logs, tests) gets wide tables instead of rich's 80-column default.
_WIDTH = None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 200
console = Console(stderr=False, highlight=False, width=_WIDTH)
err_console = Console(stderr=True, highlight=False, width=_WIDTH)


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
