"""hyperfine's ``--export-json`` layout, so scripts written for hyperfine read a comparison.

``{"results": [...]}`` with one result per variant (per sweep value), each with hyperfine's
fields and types: ``command``, ``mean``, ``stddev`` (sample stddev; null for a single run),
``median``, ``user``, ``system``, ``min``, ``max`` (seconds), ``times`` (seconds, one per
successful run), ``exit_codes`` (one per time) and, with a sweep only, ``parameters``
(``{"n": "20"}``; hyperfine leaves the key out when it has no parameters).

The times are the compared metric's values when it is a time in seconds (cpu_time,
wall_time, user_time, sys_time, a spec metric in s); for any other metric (ops/s, KiB)
they are wall times, what hyperfine itself measures. ``user``/``system`` are the mean user
and system CPU times of the same runs. A variant without a successful run has no result.
"""

from __future__ import annotations

import json
import statistics
from typing import Any

from hone.report.base import ok_runs


def times_metric(data: dict[str, Any]) -> str:
    """What ``times`` holds: the compared metric when it is in seconds, else wall_time."""
    return data["metric"] if data.get("unit") == "s" else "wall_time"


def _command(data: dict[str, Any], row: dict[str, Any], name: str) -> str:
    """The command line when the variant is named by it (hone's default label, maybe cut
    short), else its name; a sweep value fills its ``{NAME}`` as hyperfine's -P does."""
    meta = next((v for v in data["variants"] if v["name"] == name), {})
    command = meta.get("command")
    text = name
    if command and (name == command or (name.endswith("…") and command.startswith(name[:-1]))):
        text = command
    sweep = data.get("sweep")
    if sweep and row.get("sweep_value") is not None:
        text = text.replace("{" + sweep["name"] + "}", str(row["sweep_value"]))
    return text


def results(data: dict[str, Any]) -> list[dict[str, Any]]:
    """hyperfine's result objects, in the order of the rows and their variants."""
    seconds = times_metric(data)
    time_data = data if seconds == data["metric"] else {**data, "metric": seconds}
    sweep = data.get("sweep")
    out = []
    for row in data["rows"]:
        for v in row["variants"]:
            pairs = ok_runs(time_data, row, v["name"])
            if not pairs:
                continue
            runs = [r for r, _ in pairs]
            times = [float(x) for _, x in pairs]
            result: dict[str, Any] = {
                "command": _command(data, row, v["name"]),
                "mean": statistics.fmean(times),
                "stddev": statistics.stdev(times) if len(times) > 1 else None,
                "median": float(statistics.median(times)),
                "user": statistics.fmean(float(r.get("user_s") or 0.0) for r in runs),
                "system": statistics.fmean(float(r.get("sys_s") or 0.0) for r in runs),
                "min": min(times),
                "max": max(times),
                "times": times,
                # hyperfine writes null for a command killed by a signal (no exit code)
                "exit_codes": [r["returncode"] if r.get("returncode") is not None and r["returncode"] >= 0
                               else None for r in runs],
            }
            if sweep:
                result["parameters"] = {sweep["name"]: str(row["sweep_value"])}
            out.append(result)
    return out


def render(data: dict[str, Any]) -> str:
    """The JSON text, indented like hyperfine's."""
    return json.dumps({"results": results(data)}, indent=2, allow_nan=False) + "\n"
