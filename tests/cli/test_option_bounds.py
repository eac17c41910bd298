"""Numbers out of range on the command line are one clear line and exit 2 (never a silent
default or a traceback), and a ``-`` output leaves stdout to that document alone."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest


def _spec(tmp_path: Path) -> Path:
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent("""\
        benchmark: {command: [echo, "score: 7"], timeout: 20}
        metrics: [{name: score, extract: {regex: 'score: ([0-9]+)'}, goal: maximize}]
        knobs: [{name: n, kind: param, values: [1, 2], default: 1}]
        """))
    return spec


def test_run_negative_warmup_is_refused(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = hone("run", _spec(tmp_path), "--warmup", "-1")
    assert res.code == 2 and "Invalid value for '--warmup'" in res.err and "-1 is not in the range" in res.err
    assert res.out == ""  # nothing ran


@pytest.mark.parametrize(("option", "value"), [("--timeout", "1e300"), ("--timeout", "0"), ("--cv-warn", "-1")])
def test_compare_out_of_range_number_is_refused(hone, option: str, value: str) -> None:  # type: ignore[no-untyped-def]
    res = hone("compare", "true", "true", "-r", "2", option, value)
    assert res.code == 2 and "Traceback" not in res.err
    assert f"Invalid value for '{option}'" in res.err
    assert res.out == ""


def test_worker_trials_zero_is_refused(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = hone("worker", _spec(tmp_path), "--storage", f"sqlite:///{tmp_path / 's.db'}", "--study", "w",
               "--trials", "0")
    assert res.code == 2 and "Invalid value for '--trials'" in res.err
    assert not (tmp_path / "s.db").exists()


def test_worker_study_name_with_a_slash_is_refused(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = hone("worker", _spec(tmp_path), "--storage", f"sqlite:///{tmp_path / 's.db'}", "--study", "../w")
    assert res.code == 2 and "Invalid value for '--study'" in res.err
    assert not (tmp_path / "s.db").exists()


def test_run_json_to_stdout_parses(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    res = hone("run", _spec(tmp_path), "--json", "-")
    assert res.code == 0, res.err
    assert json.loads(res.out)["format"] == "hone-run/1"
    assert "score" in res.err and "mean" in res.err  # the table went to stderr


def test_compare_json_export_to_stdout_parses(hone) -> None:  # type: ignore[no-untyped-def]
    res = hone("compare", "true", "true", "-r", "3", "--export-json", "-")
    assert res.code == 0, res.err
    assert json.loads(res.out)["format"].startswith("hone-compare/")
    assert "verdict" in res.err


def test_two_exports_to_stdout_are_refused(hone) -> None:  # type: ignore[no-untyped-def]
    res = hone("compare", "true", "true", "-r", "3", "--export-json", "-", "--export-csv", "-")
    assert res.code == 2 and "only one output can go to stdout" in res.err
    assert res.out == ""
