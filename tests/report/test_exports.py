"""Exporters render a compare result (hone-compare/2) without re-running anything."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from rich.console import Console

from hone.experiment.compare import Arm, CompareSettings, run_compare
from hone.report import csv as csv_report
from hone.report import json as json_report
from hone.report import markdown as md_report
from hone.report import terminal
from hone.report.base import load_result
from hone.run.benchmark import Measurement
from hone.run.schedule import Variant

DEFAULT = [8072.52, 8034.32, 8079.27, 8087.66, 8044.77]
AUTOFDO = [7260.10, 7218.59, 7257.24, 7221.39, 7239.85]


def _feed(values: list[float], fail: set[int] = frozenset()) -> Variant:  # type: ignore[assignment]
    it = iter(range(len(values)))

    def run() -> Measurement:
        i = next(it)
        return Measurement(wall_s=1.0, cpu_s=1.0, user_s=1.0, sys_s=0.0, max_rss_kb=10, returncode=0,
                           timed_out=False, metrics={"latency": values[i]},
                           error="exited with code 1" if i in fail else None)

    return Variant(name="?", run=run)


def seed000_result(fail: set[int] = frozenset()) -> dict[str, Any]:  # type: ignore[assignment]
    """The FindShortestPath runs of the AutoFDO before/after table as a compare result (5 rounds, no warm-up)."""
    arms = [Arm(name="Default Binary", description="default"), Arm(name="AutoFDO", description="autofdo")]

    def make(_sweep: Any) -> list[Variant]:
        a, b = _feed(DEFAULT), _feed(AUTOFDO, fail)
        a.name, b.name = arms[0].name, arms[1].name
        return [a, b]

    settings = CompareSettings(rounds=5, warmup=0, seed=1, metric="latency", goal="minimize", estimator="mean")
    return run_compare(arms, settings, make_variants=make, kind="spec", metric_unit="us")


def test_markdown_reproduces_the_seed000_layout_and_numbers() -> None:
    md = md_report.render(seed000_result())
    lines = md.splitlines()
    assert "|***latency***|**1**|8072.52|7260.10|" in lines
    assert "||**5**|8044.77|7239.85|" in lines
    assert "||**STDDEVP**|20.57|17.35|" in lines  # 17.3457 from the 2-decimal runs (seed: 17.34)
    assert "||**Mean**|8063.71|7239.43|" in lines
    assert "||**STDDEVP/Mean**|0.26%|0.24%|" in lines
    assert "||**Opt/Default**|100.00%|***10.22%***|" in lines
    assert any(line.startswith("|latency|AutoFDO|0.8978|-10.22%|") and "**inconclusive**" in line
               for line in lines), md


def test_failed_runs_show_as_failed_in_markdown_and_counted_in_csv() -> None:
    data = seed000_result(fail={1, 3})
    md = md_report.render(data)
    assert "||**2**|8034.32|FAILED|" in md
    assert "AutoFDO: 2 of 5 runs failed" in md
    rows = list(csv.DictReader(io.StringIO(csv_report.render(data))))
    assert [r["failed_runs"] for r in rows] == ["0", "2"]
    assert rows[1]["n"] == "3"


def test_csv_has_one_line_per_variant_with_ratio_ci_p_verdict() -> None:
    rows = list(csv.DictReader(io.StringIO(csv_report.render(seed000_result()))))
    assert [r["variant"] for r in rows] == ["Default Binary", "AutoFDO"]
    assert rows[0]["verdict"] == "reference"
    assert float(rows[1]["ratio"]) == __import__("pytest").approx(0.8978, abs=1e-4)
    assert float(rows[1]["ci_low_pct"]) < float(rows[1]["change_pct"]) < float(rows[1]["ci_high_pct"])
    assert rows[1]["p_value"] and rows[1]["verdict"] == "inconclusive"
    assert float(rows[0]["stddev"]) == __import__("pytest").approx(20.571, abs=1e-3)
    assert rows[0]["estimator"] == "" and rows[1]["estimator"] == "mean"


def test_auto_estimator_is_named_in_every_export() -> None:
    # auto resolves per comparison (welsch or trimmed); the exports must name what was used.
    arms = [Arm(name="Default Binary", description="default"), Arm(name="AutoFDO", description="autofdo")]

    def make(_sweep: Any) -> list[Variant]:
        a, b = _feed(DEFAULT * 2), _feed(AUTOFDO * 2)
        a.name, b.name = arms[0].name, arms[1].name
        return [a, b]

    data = run_compare(arms, CompareSettings(rounds=10, warmup=0, seed=1, metric="latency", goal="minimize",
                                             estimator="auto"), make_variants=make, kind="spec", metric_unit="us")
    used = data["rows"][0]["comparisons"]["AutoFDO"]["estimator"]
    assert used in ("welsch", "trimmed") and data["estimator"] == "auto"
    rows = list(csv.DictReader(io.StringIO(csv_report.render(data))))
    assert rows[1]["estimator"] == used
    method = {"welsch": "randomization test", "trimmed": "Wilcoxon"}[used]
    assert method in md_report.render(data)


def test_json_is_strict_versioned_and_keeps_every_raw_run(tmp_path: Path) -> None:
    data = seed000_result(fail={0})
    text = json_report.render(data)
    assert "NaN" not in text and "Infinity" not in text
    doc = json.loads(text)
    assert doc["format"] == "hone-compare/2"
    assert doc["fingerprint"]["kernel"] and "loadavg" in doc["fingerprint"]
    assert "loadavg" in doc["fingerprint_end"]
    runs = {v["name"]: v["runs"] for v in doc["rows"][0]["variants"]}
    assert [r["metrics"]["latency"] for r in runs["Default Binary"]] == DEFAULT
    assert runs["AutoFDO"][0]["error"] == "exited with code 1"
    assert doc["rows"][0]["order"] and all(len(o) == 2 for o in doc["rows"][0]["order"])
    # Re-rendering the loaded file gives the same Markdown as rendering the live result.
    path = tmp_path / "r.json"
    path.write_text(text)
    assert md_report.render(load_result(path)) == md_report.render(data)


def test_terminal_table_shows_verdict_ci_and_warnings() -> None:
    console = Console(width=250, record=True)
    console.print(terminal.render(seed000_result(fail={2})))
    out = console.export_text()
    assert "AutoFDO" in out and "inconclusive" in out and "[-10." in out
    assert "warning: AutoFDO: 1 of 5 runs failed" in out
