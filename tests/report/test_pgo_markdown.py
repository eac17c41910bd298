"""The Markdown of a ``hone pgo`` result in the AutoFDO before/after layout: every run, the
population stddev, the mean, Opt/Default turned to each figure's goal, and the paired CI."""

from __future__ import annotations

from typing import Any

from hone.report import RENDERERS
from hone.report.pgo_markdown import render


def _service_result() -> dict[str, Any]:
    def fig(goal: str, values: list[float | None], **kw: Any) -> dict[str, Any]:
        return {"goal": goal, "median": None, "values": values, **kw}

    default = {"variant": "default", "scenario": "load", "verdict": "reference", "metric": "tps",
               "cpu_s_values": [1.0, 1.0, 1.0], "time_ci": [1.0, 1.0], "change_pct": 0.0,
               "metrics": {"tps": fig("maximize", [100.0, 100.0, 100.0], verdict="reference"),
                           "p95_ms": fig("minimize", [2.0, 2.0, 2.0], verdict="reference")}}
    pgo = {"variant": "instr-gcc", "scenario": "load", "verdict": "faster", "metric": "tps",
           "cpu_s_values": [0.8, 0.9, 1.0], "time_ci": [0.85, 0.95], "change_pct": -10.0, "cpu_verdict": "faster",
           "metrics": {"tps": fig("maximize", [105.0, None, 115.0], change_pct=10.0, ci_pct=[4.0, 16.0],
                                  verdict="faster"),
                       "p95_ms": fig("minimize", [1.0, 3.0, 2.0], change_pct=0.0, ci_pct=[-30.0, 30.0],
                                     verdict="inconclusive")}}
    probe = {**pgo, "variant": "noise-1", "verdict": "noise probe"}
    return {"name": "toy", "rounds": 3, "scenarios": {"evaluate": [{"name": "load"}]},
            "noise_floor_pct": {"load": 1.5}, "variants": [default, probe, pgo],
            "best": {"variant": "instr-gcc", "reason": "the only one"}}


def _rows(text: str, figure: str) -> dict[str, list[str]]:
    """First cell → the other cells, for the table under ``**figure**``."""
    block = text.split(f"**{figure}**", 1)[1].split("\n\n", 2)[1]
    return {cells[1]: cells[2:-1] for cells in (line.split("|") for line in block.splitlines())}


def test_every_run_then_stddevp_mean_and_opt_over_default_along_each_goal() -> None:
    text = render(_service_result())
    assert "### load (as the service, 3 interleaved rounds; layout-noise floor ±1.5%)" in text
    tps = _rows(text, "tps")
    assert tps["Run"] == ["default", "noise-1", "instr-gcc"]
    assert tps["**2**"] == ["100.00", "FAILED", "FAILED"]  # a failed run is shown, not dropped
    assert tps["**Mean**"][2] == "110.00" and tps["**STDDEVP**"][2] == "5.00"
    # Throughput: a higher mean is better, so Opt/Default is +10%, as for a 10% lower latency.
    assert tps["**Opt/Default**"] == ["100.00%", "***10.00%***", "***10.00%***"]
    assert tps["**Change vs default [95% CI]**"][2] == "+10.0% [+4.0%, +16.0%]"
    assert tps["**Verdict**"] == ["reference", "noise probe", "faster"]
    p95 = _rows(text, "p95_ms")
    assert p95["**Opt/Default**"][2] == "***0.00%***" and p95["**Verdict**"][2] == "inconclusive"
    cpu = _rows(text, "server CPU s")
    assert cpu["**Mean**"][2] == "0.9000" and cpu["**Opt/Default**"][2] == "***10.00%***"
    assert cpu["**Change vs default [95% CI]**"][2] == "-10.0% [-15.0%, -5.0%]"
    assert "Best: **instr-gcc**" in text


def test_a_result_without_per_round_values_gets_the_summary_rows_and_hone_report_renders_it() -> None:
    result = _service_result()
    for row in result["variants"]:
        row.pop("cpu_s_values", None)
        for fig in row["metrics"].values():
            fig.pop("values", None)  # the probe shares the variant's figures
    text = RENDERERS["pgo"]["markdown"](result)
    tps = _rows(text, "tps")
    assert "**1**" not in tps and tps["**Mean**"] == ["–", "–", "–"]
    assert tps["**Change vs default [95% CI]**"][2] == "+10.0% [+4.0%, +16.0%]"
