"""The tune result table that both the live ``hone tune`` output and ``hone report`` print
(``hone.report.tune_terminal.result_table``), rendered from a stored result."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from rich.console import Console

from hone.core.metrics import verdict_word
from hone.report.tune_terminal import knob_value, recommendation_kind, render, result_table

SAMPLE = json.loads((Path(__file__).parent / "formats" / "samples" / "hone-tune-2.json").read_text())


def _text(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_a_confirmed_result_shows_baseline_candidate_and_verdict_with_the_goal_when_known() -> None:
    doc = copy.deepcopy(SAMPLE)
    doc["units"] = {"score": "ms"}
    text = _text(result_table(doc, "t", {"score": "minimize"}))
    row = next(ln for ln in text.splitlines() if "score (minimize)" in ln)
    comp = doc["best_candidate"]["metrics"]["score"]
    assert "recommendation" in text and f"{comp['change_pct']:+.2f}%" in row
    assert row.rstrip(" │").endswith(verdict_word(comp["verdict"], "ms"))
    assert "score (minimize)" not in _text(render(doc))  # the stored result does not know the goal


def test_with_nothing_confirmed_the_table_lists_the_baseline_means() -> None:
    doc = copy.deepcopy(SAMPLE)
    doc.update(recommended=None, best_candidate=None, units={"score": ""})
    text = _text(result_table(doc, "t"))
    assert "best candidate" in text and "recommendation" not in text
    row = next(ln for ln in text.splitlines() if ln.lstrip("│ ").startswith("score"))
    assert "100" in row and "–" in row


def test_recommended_knobs_at_the_current_value_are_said_apart() -> None:
    doc = copy.deepcopy(SAMPLE)
    knobs = list(doc["recommended"])
    text = _text(render(doc))  # an older document: no "unchanged", every knob a change
    kind = f"Recommendation ({recommendation_kind(doc)}): "
    assert kind + " ".join(f"{k}={v}" for k, v in doc["recommended"].items()) in text
    doc["unchanged"] = knobs[:1]
    first, rest = knobs[0], knobs[1:]
    text = _text(render(doc))
    line = next(ln for ln in text.splitlines() if ln.startswith("Recommendation"))
    said = " ".join(f"{k}={doc['recommended'][k]}" for k in rest) or "(no change)"
    assert line.rstrip() == f"{kind}{said} (as now: {first}={doc['recommended'][first]})"


def test_the_html_report_marks_knobs_at_the_current_value() -> None:
    from hone.report.html import render_study_html

    doc = copy.deepcopy(SAMPLE)
    first = next(iter(doc["recommended"]))
    assert "(as now)" not in render_study_html(None, doc)
    doc["unchanged"] = [first]
    page = render_study_html(None, doc)
    assert f"{first} = {doc['recommended'][first]} (as now)" in page and page.count("(as now)") == 1


def test_a_float_knob_is_shown_to_six_significant_digits_and_stored_whole() -> None:
    doc = copy.deepcopy(SAMPLE)
    knob = next(iter(doc["recommended"]))
    doc["recommended"][knob] = 0.08923539861147475
    doc["unchanged"] = []
    line = next(ln for ln in _text(render(doc)).splitlines() if ln.startswith("Recommendation"))
    assert f"{knob}=0.0892354" in line and "0.089235398" not in line
    assert doc["recommended"][knob] == 0.08923539861147475  # the document is not rounded


def test_knob_values_keep_their_integer_digits_and_non_floats_as_given() -> None:
    assert [knob_value(v) for v in (1234567.891, -0.333333333333, 3.3e-10, 4.0, 3, "x", True, float("inf"))] \
        == ["1234568.0", "-0.333333", "3.3e-10", "4.0", "3", "x", "True", "inf"]
