"""Reading metric values out of one benchmark run.

An ``extract: {command: …}`` command receives the output (stdout, or stderr with
``source: stderr``) as data, never as shell text: on stdin; as the file named by
``$HONE_OUTPUT_FILE``; and as ``$HONE_OUTPUT`` and ``$out`` in its environment when the
output fits in one environment string (Linux: 128 KiB). In shell text (``shell: true`` or
an argv ``[sh, -c, …]``) ``$out`` works for any size: A-Tune's ``'$out'`` spellings are bound
to the variable by quoting context (:mod:`hone.core.shell_text`), and for larger output the
script first reads ``out`` and ``HONE_OUTPUT`` from the file into unexported shell variables.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from typing import Any

from hone.core.errors import BenchmarkError
from hone.core.metrics import value as builtin_value
from hone.core.process import ProcessResult, run_process
from hone.core.shell_text import fits_environment, rewrite, shell_script_index
from hone.knobs._config_formats import split_path
from hone.spec.models import Extract, Metric, to_argv

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


# Reads the output file into unexported shell variables (an exported one over 128 KiB
# would make every exec in the script fail); the trailing "x" keeps trailing newlines.
_READ_OUTPUT = 'out=$(cat -- "$HONE_OUTPUT_FILE"; printf x); out=${out%x}; HONE_OUTPUT=$out\n'


def _run_extract_command(name: str, ex: Extract, text: str) -> ProcessResult:
    """Run an extract command with ``text`` on stdin, in a file and, where it fits, in the environment."""
    assert ex.command is not None
    argv = to_argv(ex.command, ex.shell)
    fits = fits_environment("HONE_OUTPUT", text)
    env = {k: v for k, v in os.environ.items() if k not in ("out", "HONE_OUTPUT")}
    if fits:
        env.update(HONE_OUTPUT=text, out=text)
    script = shell_script_index(argv)
    if script is not None:
        body = rewrite(argv[script], ["out"], style="dollar", what=f"metric {name}: extract.command").text
        if not fits and ("out" in body or "HONE_OUTPUT" in body):
            body = _READ_OUTPUT + body
        argv[script] = body
    with tempfile.NamedTemporaryFile(prefix="hone-output-", suffix=".txt", delete=False) as f:
        f.write(text.encode())
        env["HONE_OUTPUT_FILE"] = f.name
    try:
        return run_process(argv, timeout=ex.timeout, stdin=text, env=env)
    finally:
        os.unlink(env["HONE_OUTPUT_FILE"])


def extract(metric: Metric, result: ProcessResult) -> float:
    """The value of ``metric`` for a finished run. Raises BenchmarkError with what was
    looked for and what the output ended with."""
    if metric.extract is None:
        return builtin_value(result, metric.name)
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
    res = _run_extract_command(metric.name, ex, text)
    if not res.ok:
        raise BenchmarkError(f"metric {metric.name}: extract command failed: {res.describe_failure()}")
    return _to_float(res.stdout, metric, "the extract command")
