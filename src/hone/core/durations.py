"""Durations as people write them (``90s``, ``45m``, ``2h``, ``1h30m``, ``2d``, or plain
seconds) and back. No imports beyond the standard library: the spec models use it."""

from __future__ import annotations

import math
import re

UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
#: The longest duration accepted (a year): longer ones are typos and overflow clock arithmetic.
MAX_DURATION_S = 366 * 86400.0
_NUMBER = r"\d+(?:\.\d+)?"
_PART = re.compile(rf"({_NUMBER})([smhd])")
_COMPOUND = re.compile(rf"(?:{_NUMBER}[smhd])+")


def parse_duration(value: object) -> float:
    """Seconds in ``value``: a positive number of seconds or text such as ``90s``, ``45m``,
    ``2h``, ``1h30m``. Raises ValueError("expected a duration …, got …") otherwise."""
    seconds = math.nan
    if isinstance(value, int | float) and not isinstance(value, bool):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip().lower()
        if re.fullmatch(_NUMBER, text):
            seconds = float(text)
        elif _COMPOUND.fullmatch(text):
            seconds = sum(float(n) * UNITS[u] for n, u in _PART.findall(text))
    if not (math.isfinite(seconds) and 0 < seconds <= MAX_DURATION_S):
        shown = f"'{value}'" if isinstance(value, str) else str(value)
        raise ValueError(f"expected a duration like 90s, 45m or 2h (more than 0, at most 366 days), got {shown}")
    return seconds


def format_duration(seconds: float) -> str:
    """``42s``, ``3m20s``, ``2h05m``, ``1d03h`` (rounded to the unit shown last)."""
    if not math.isfinite(seconds):
        return "∞"
    s = max(0, round(seconds))
    if seconds < 1:
        return f"{max(0.0, seconds) * 1000:.0f}ms"
    if s < 60:
        return f"{seconds:.1f}s" if seconds < 10 else f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    m = round(seconds / 60)
    if m < 24 * 60:
        return f"{m // 60}h{m % 60:02d}m"
    h = round(seconds / 3600)
    return f"{h // 24}d{h % 24:02d}h"
