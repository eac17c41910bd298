"""Reading metric values out of one benchmark run."""

from __future__ import annotations

import json
import os
import re
from typing import Any

from hone.errors import BenchmarkError
from hone.knobs._config_formats import split_path
from hone.run.process import ProcessResult, run_process
from hone.spec.models import Metric, to_argv

BUILTIN_VALUES = {
    "cpu_time": lambda r: r.cpu_s,
    "wall_time": lambda r: r.wall_s,
    "user_time": lambda r: r.user_s,
    "sys_time": lambda r: r.sys_s,
    "max_rss": lambda r: float(r.max_rss_kb),
}
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan", re.IGNORECASE)


def _tail(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1][:120] if lines else "(empty)"


def _to_float(text: Any, metric: Metric, how: str) -> float:
    if isinstance(text, bool):
        return float(text)
    if isinstance(text, int | float):
        return float(text)
    m = _NUMBER.search(str(text).strip().replace(",", ""))
    if not m:
        raise BenchmarkError(f"metric {metric.name}: {how} gave {str(text)[:80]!r}, which is not a number")
    return float(m.group(0))


def _json_lookup(doc: Any, path: str) -> Any:
    node = doc
    for part in split_path(path.lstrip("$").lstrip(".").replace('["', ".").replace('"]', "")):
        node = node[part]
    return node


def extract(metric: Metric, result: ProcessResult) -> float:
    """The value of ``metric`` for a finished run. Raises BenchmarkError with what was
    looked for and what the output ended with."""
    if metric.extract is None:
        return float(BUILTIN_VALUES[metric.name](result))
    ex = metric.extract
    text = result.stdout if ex.source == "stdout" else result.stderr
    if ex.regex is not None:
        matches = list(re.finditer(ex.regex, text, re.MULTILINE))
        if not matches:
            raise BenchmarkError(
                f"metric {metric.name}: regex '{ex.regex}' matched nothing in {ex.source}"
                f" (last line: {_tail(text)})"
            )
        return _to_float(matches[-1].group(1), metric, f"regex '{ex.regex}'")
    if ex.json_path is not None:
        try:
            doc = json.loads(text.strip().splitlines()[-1] if text.strip() else "")
        except (json.JSONDecodeError, IndexError):
            try:
                doc = json.loads(text)
            except json.JSONDecodeError as exc:
                raise BenchmarkError(f"metric {metric.name}: {ex.source} is not JSON ({exc.msg})") from None
        try:
            return _to_float(_json_lookup(doc, ex.json_path), metric, f"JSON path {ex.json_path}")
        except (KeyError, IndexError, TypeError):
            raise BenchmarkError(f"metric {metric.name}: JSON path {ex.json_path} not found in {ex.source}") from None
    assert ex.command is not None
    # The output reaches the command on stdin and as $HONE_OUTPUT, never inside shell text.
    env = dict(os.environ, HONE_OUTPUT=text, out=text)
    res = run_process(to_argv(ex.command, ex.shell), timeout=ex.timeout, stdin=text, env=env)
    if not res.ok:
        raise BenchmarkError(f"metric {metric.name}: extract command failed: {res.describe_failure()}")
    return _to_float(res.stdout, metric, "the extract command")
