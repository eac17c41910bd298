"""Metric extraction: regex, JSON path, a command that reads the output on stdin."""

from __future__ import annotations

import pytest

from hone.errors import BenchmarkError
from hone.run.metrics import extract
from hone.run.process import ProcessResult
from hone.spec.models import Metric


def result(stdout: str) -> ProcessResult:
    return ProcessResult(["x"], 0, stdout, "", 1.5, 0.75, 0.25, 2048)


def test_regex_takes_the_last_match() -> None:
    m = Metric.model_validate({"name": "tps", "extract": {"regex": r"tps: ([0-9.]+)"}})
    assert extract(m, result("tps: 10\ntps: 12.5\n")) == 12.5


def test_zero_is_a_value() -> None:
    m = Metric.model_validate({"name": "errors", "extract": {"regex": r"errors: (\d+)"}, "goal": "minimize"})
    assert extract(m, result("errors: 0\n")) == 0.0


def test_json_path() -> None:
    m = Metric.model_validate({"name": "p99", "extract": {"json": "$.latency.p99[1]"}})
    assert extract(m, result('{"latency": {"p99": [1, 2.5]}}')) == 2.5


def test_command_gets_output_on_stdin_and_env() -> None:
    # A-Tune style get pipeline; the output is never pasted into the shell text.
    m = Metric.model_validate(
        {"name": "q", "extract": {"command": "grep 'producer_tps:' | awk '{print $2}'", "shell": True}}
    )
    out = "noise '$(touch /tmp/hone-pwned)'\nproducer_tps: 277021\n"
    assert extract(m, result(out)) == 277021.0
    m2 = Metric.model_validate({"name": "q", "extract": {"command": ["sh", "-c", 'printf %s "$HONE_OUTPUT" | wc -l']}})
    assert extract(m2, result(out)) == 2.0


def test_builtin_metrics() -> None:
    assert extract(Metric(name="cpu_time"), result("")) == 1.0
    assert extract(Metric(name="max_rss"), result("")) == 2048.0


def test_no_match_names_regex_and_last_line() -> None:
    m = Metric.model_validate({"name": "tps", "extract": {"regex": r"tps: (\d+)"}})
    with pytest.raises(BenchmarkError, match=r"regex 'tps: \(\\d\+\)' matched nothing in stdout \(last line: done\)"):
        extract(m, result("starting\ndone\n"))
