"""Metric extraction: regex, JSON path, a command that reads the output on stdin."""

from __future__ import annotations

import json
import sys

import pytest

from hone.core.errors import BenchmarkError
from hone.core.process import ProcessResult
from hone.run.metrics import extract
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


BIG_BENCH = "import sys\nsys.stdout.write(('x' * 1023 + '\\n') * 1024)\nprint('score: 42')\n"  # 1 MiB, then the figure


def test_extract_commands_read_a_one_mib_output_through_the_cli(hone, tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bench.py").write_text(BIG_BENCH)
    read_file = "import os; print(open(os.environ['HONE_OUTPUT_FILE']).read().split()[-1])"
    (tmp_path / "hone.yaml").write_text(
        f"benchmark: {{command: [{sys.executable}, bench.py]}}\n"
        "metrics:\n"
        "  - {name: tail, extract: {command: \"tail -n 1 | cut -d' ' -f2\", shell: true}}\n"
        "  - {name: atune, extract: {command: \"echo '$out' | grep score | awk '{print $2}'\", shell: true}}\n"
        "  - {name: argv_sh, extract: {command: [sh, -c, 'printf %s \"$HONE_OUTPUT\" | tail -n 1 | cut -c8-']}}\n"
        f"  - {{name: file, extract: {{command: [{sys.executable}, -c, {json.dumps(read_file)}]}}}}\n")
    res = hone("run", tmp_path / "hone.yaml", "--json", tmp_path / "r.json")
    assert res.code == 0, res.err
    runs = json.loads((tmp_path / "r.json").read_text())["runs"]
    assert [r["metrics"] for r in runs] == [{"tail": 42.0, "atune": 42.0, "argv_sh": 42.0, "file": 42.0}] * len(runs)


def test_large_output_stays_out_of_the_environment_of_argv_commands() -> None:
    # Over 128 KiB exec would fail with E2BIG: the command gets stdin and the file instead.
    count = "import os, sys; print(len(os.environ.get('HONE_OUTPUT', '')) + len(sys.stdin.read()))"
    m = Metric.model_validate({"name": "q", "extract": {"command": [sys.executable, "-c", count]}})
    assert extract(m, result("y" * 200_000)) == 200_000.0
    assert extract(m, result("y" * 1000)) == 2000.0  # small output: in the environment as well


def test_out_in_a_quoted_heredoc_is_refused_when_the_spec_loads() -> None:
    with pytest.raises(ValueError, match=r"command: \$out: it stands inside a quoted here-document"):
        Metric.model_validate({"name": "q", "extract": {"command": "cat <<'E'\n$out\nE", "shell": True}})
