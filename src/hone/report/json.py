"""JSON export: the result dict itself, with NaN/∞ written as null (strict JSON)."""

from __future__ import annotations

import json
import math
from typing import Any


def _strict(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(v) for v in value]
    return value


def render(data: dict[str, Any]) -> str:
    """The whole result (every raw run, orders, fingerprint, stats) as indented JSON."""
    return json.dumps(_strict(data), indent=2, allow_nan=False, default=str) + "\n"
