"""``hone tune --max-runs``: a hard cap on benchmark runs, every phase counted; the plan and its
refusal up front; one run per trial; runs that repeat exactly. The benchmarks append a line per
run to a log (tests/tune/conftest.py), so the runs are counted independently."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import sys
from pathlib import Path

import optuna
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hone.core.durations import format_duration
from hone.core.errors import HoneError
from hone.spec.atune import load_atune
from hone.stats.detectable import detectable_gain_pct, noise_upper_bound
from hone.tune.runbudget import MIN_ROUNDS, RunBudget, RunPlan
from tests.tune.conftest import tune_killed_after, write_three_knobs, write_workload


def _runs(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_max_runs_holds_with_the_baseline_search_confirmation_and_ablation_all_counted(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "runs.log"
    spec = write_three_knobs(tmp_path, "apart", trials=8)
    res = hone("tune", spec, "--max-runs", "80", "--repeats", "2", "--sampler", "random", "--json", tmp_path / "r.json",
               env={"HONE_TEST_LOG": str(log)})
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    spent = doc["budget"]["runs_spent"]
    assert doc["budget"]["max_runs"] == 80
    assert _runs(log) == sum(spent.values()) == doc["budget"]["runs_total"] <= 80
    # the baseline's 2 runs are identical: 1 more to be sure, then 1 round × 2 arms, whose runs give
    # the same figures again: an exact comparison
    assert spent["baseline"] == 3 and spent["confirmation"] == 2
    assert doc["confirmations"][0]["comparison"]["reason"] == (
        "runs repeat identically (4 of the reference, 1 of the candidate): the difference is exact")
    assert "its 2 runs are identical: 1 more to be sure" in res.out
    # the ablation too: 1 round of leave-one-out (4 arms), then of the last block (3), each compared exactly
    ablation = doc["ablation"]
    assert ablation is not None and spent["ablation"] == 4 + 3 and ablation["rounds"] == 1
    effects = {c["knob"]: c for c in ablation["changes"]}
    assert {k: c["kept"] for k, c in effects.items()} == {"big": True, "small": True, "inert": False}
    assert effects["small"]["comparison"]["estimator"] == "exact"
    assert effects["small"]["ci_pct"] == [pytest.approx(3.0), pytest.approx(3.0)]  # small = 2: +3%, exactly
    assert effects["inert"]["note"] == "no measurable effect beyond ±1% (+0.00%, exactly)"
    assert ablation["recommended"] == "minimal" and doc["recommended"] == {"big": 2, "small": 2}
    assert "Minimal change (ablation, 1 round; effect" in res.out
    assert "each change undone, interleaved (exactly: the runs repeat identically)" in res.out
    page = tmp_path / "r.html"
    assert hone("report", tmp_path / "r.json", "--html", page).code == 0
    assert "Minimal change (ablation, 1 round)</h2>" in page.read_text()
    assert "<th>effect (exact)</th>" in page.read_text()
    assert spent["search"] == 8  # 8 trials of 1 run: the runs repeat exactly
    assert re.search(r"runs: ≤ 80 benchmark runs \(--max-runs\): baseline 2, search ≤ ", res.out), res.out
    assert f"benchmark runs: {sum(spent.values())} of --max-runs 80 (baseline 3, search " in res.out


def test_identical_runs_ablate_by_importance_in_one_round_on_the_runs_a_trial_cap_leaves(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "runs.log"
    spec = write_three_knobs(tmp_path, "apart", trials=8)
    res = hone("tune", spec, "--max-runs", "18", "--repeats", "2", "--sampler", "random", "--json",
               tmp_path / "r.json", env={"HONE_TEST_LOG": str(log)})
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    spent = doc["budget"]["runs_spent"]
    # baseline 3, search 8, confirmation 2 leave 5: leave-one-out (1 × (4 + 3)) does not fit, the baseline,
    # the winner and 2 pruned arms in 1 round do
    assert spent == {"baseline": 3, "search": 8, "confirmation": 2, "ablation": 4} and _runs(log) == 17
    ablation = doc["ablation"]
    assert ablation["method"] == "by importance" and ablation["rounds"] == 1
    assert [a["kept"] for a in ablation["pruned"]] == [["big"], ["big", "small"]]
    top1, top2 = ablation["pruned"]
    assert top1["vs_winner"]["estimator"] == "exact" and top1["vs_winner"]["verdict"] == "slower"  # −2.91%
    assert top2["chosen"] and top2["vs_winner"]["verdict"] == "equivalent"
    assert doc["recommended"] == {"big": 2, "small": 2}
    assert ("ablation by importance: leave-one-out needs up to 7 runs, --max-runs leaves 5: the baseline, the "
            "winner and 2 pruned configurations, 1 round (4 runs)") in doc["budget"]["cuts"]
    assert "Minimal change (ablation by importance, 1 round: the winner's 3 changes" in res.out


def test_a_winner_the_budget_cannot_ablate_says_so_and_how_to_measure_its_top_change(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_three_knobs(tmp_path, "apart", trials=8)
    # --fixed-repeats: no second baseline run to find the runs identical (their ablation would fit)
    res = hone("tune", spec, "--max-runs", "30", "--sampler", "random", "--fixed-repeats",
               "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["ablation"] is None and doc["budget"]["runs_spent"]["ablation"] == 0
    assert doc["settle"] is None  # a recommendation: nothing to settle
    # every trial changes all three knobs: 6 rounds × (4 leave-one-out arms + 3) do not fit in what is left
    left = 30 - doc["budget"]["runs_total"]
    assert doc["not_ablated"] == ("which of its 3 changes carry the gain was not measured: the ablation needs up "
                                  f"to 42 runs (by importance, at least 18), --max-runs left {left}")
    top = next(k for k in doc["importances"] if k in doc["recommended"])
    shown = hone("report", tmp_path / "r.json")
    for out in (res.out, shown.out):
        flat = " ".join(out.split())  # as printed, wrapped at the terminal's width
        assert f"not ablated: {doc['not_ablated']}" in flat, flat
        # the judged metric named: the result does not say which metric compare takes by default
        assert f"hone compare {spec} --variant alone:{top}={doc['recommended'][top]} --metric score" in flat, flat
    page = tmp_path / "r.html"
    assert hone("report", tmp_path / "r.json", "--html", page).code == 0
    assert f"<p id=not-ablated>Not ablated: {doc['not_ablated']}</p>" in page.read_text()
    # the comparison it names runs as printed
    cmp = hone("compare", spec, "--variant", f"alone:{top}={doc['recommended'][top]}", "--metric", "score",
               "--rounds", "2", "--max-time", "0", "--warmup", "0")
    assert cmp.code == 0, cmp.err + cmp.out
    # so does the later ablation it names: no new trial, the confirmation again, then the whole ablation
    again = doc["budget"]["runs_spent"]["confirmation"] + 2
    later = (f"hone tune {spec} --resume --study {doc['study']} --trials {doc['trials']} --max-runs {42 + again}")
    assert doc["ablate_later"] == later
    for out in (res.out, shown.out):
        assert f"the ablation later, on this study (no new trials): {later}" in " ".join(out.split())
    assert f"<code>{later}</code>" in page.read_text()
    res2 = hone(*shlex.split(later)[1:], "--json", tmp_path / "r2.json")
    assert res2.code == 0, res2.err + res2.out
    doc2 = json.loads((tmp_path / "r2.json").read_text())
    assert doc2["trials"] == doc["trials"] and doc2["budget"]["runs_spent"]["search"] == 0
    assert doc2["ablation"] is not None and doc2["ablation"]["method"] == "leave-one-out", res2.out
    assert doc2["not_ablated"] is None and doc2["budget"]["runs_total"] <= 42 + again


def test_the_spec_budget_stops_the_search_exactly_with_failing_runs_counted(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, mode="fail", repeats=3)
    spec.write_text(spec.read_text().replace("trials: 5, ", "max_runs: 30, "))  # no trials: the runs decide
    res = hone("tune", spec, "--sampler", "random", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    # the baseline's 3 runs are identical (a deterministic benchmark): the confirmation's 2 runs (1 round
    # × 2 arms) are reserved; the search spends the other 25
    assert doc["budget"]["runs_spent"] == {"baseline": 3, "search": 25, "confirmation": 2, "ablation": 0}
    assert doc["budget"]["runs_planned"] == {"baseline": 3, "search": 25, "confirmation": 2, "ablation": 0}
    assert _runs(workload / "runs.log") == 30
    assert doc["failed_trials"] >= 1  # x = 3 or 6 fails: those runs count like any other
    assert "its 3 runs are identical: a deterministic benchmark" in res.out
    assert "the baseline's runs are identical: one run per trial" in res.out
    assert "runs: ≤ 30 benchmark runs (--max-runs): baseline 3, search ≤ 25 (~25 trials of 1 run), confirmation 2 " \
           "(1 round × 2 arms)" in res.out
    # the best's new run gave the figure its trial did, the baseline's the one its 3 runs did: exact
    comparison = doc["confirmations"][0]["comparison"]
    assert comparison["estimator"] == "exact" and comparison["confidence"] == 1.0 and comparison["n"] == 1
    assert comparison["ci_pct"] == [comparison["change_pct"]] * 2 and comparison["p_value"] == 0.0
    assert comparison["verdict"] == "faster" and doc["recommended"] is not None
    trial = next(t for t in optuna.load_study(study_name=doc["study"], storage=doc["storage"]).trials
                 if t.number == doc["confirmations"][0]["trial"])
    assert doc["confirmations"][0]["means"]["score"] == trial.user_attrs["means"]["score"]
    change = f"{comparison['change_pct']:+.2f}%"
    assert f"vs baseline, exact [{change}, {change}], p = 0, 1 interleaved round\n" in res.out
    shown = hone("report", workload / "r.json").out  # the table's CI column is named for its level
    assert re.search(rf"┃ +exact +┃.*│ +\{change} … \{change} +│", shown, re.S), shown


def test_one_baseline_run_gets_a_second_and_identical_runs_are_confirmed_exactly(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "runs.log"
    spec = write_three_knobs(tmp_path, "apart", trials=8)  # repeats: 1
    res = hone("tune", spec, "--max-runs", "40", "--sampler", "random", "--json", tmp_path / "r.json",
               env={"HONE_TEST_LOG": str(log)})
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    spent = doc["budget"]["runs_spent"]
    assert "1 run says nothing of the noise: 1 more to see whether the runs repeat" in res.out
    assert "its 2 runs are identical: 1 more to be sure" in res.out
    assert spent["baseline"] == 3 and spent["confirmation"] == 2 and _runs(log) == sum(spent.values()) <= 40
    assert doc["confirmations"][0]["comparison"]["estimator"] == "exact"
    assert doc["ablation"] is not None and doc["ablation"]["rounds"] == 1


def test_one_noisy_baseline_run_gets_a_second_and_the_plan_counts_it(
        workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, mode="noisy")  # repeats: 1, ±5% by turns
    spec.write_text(spec.read_text().replace("trials: 5, ", ""))  # the runs decide
    res = hone("tune", spec, "--max-runs", "30", "--sampler", "random", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert doc["budget"]["runs_spent"]["baseline"] == 2 and _runs(workload / "runs.log") <= 30
    assert "are identical" not in res.out
    assert re.search(r"runs: ≤ 30 benchmark runs \(--max-runs\): baseline 2, search ≤ ", res.out), res.out
    # two runs 10% apart: too few for a noise figure, the noise stays unknown as with one
    assert optuna.load_study(study_name=doc["study"], storage=doc["storage"]).user_attrs["hone_noise_cv"] is None


def test_two_baseline_runs_within_one_percent_that_hone_asked_for_get_no_more(
        workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, mode="quiet")  # repeats: 1, ±0.1% by turns: never identical
    res = hone("tune", spec, "--max-runs", "30", "--sampler", "random", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    # 2 runs agree within 1% too often by chance to be worth 4 more: the baseline stays at 2
    assert doc["budget"]["runs_spent"]["baseline"] == 2 and "more to be sure" not in res.out


def test_a_budget_without_room_for_a_second_baseline_run_keeps_one(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "runs.log"
    spec = write_three_knobs(tmp_path, "apart", trials=8)
    # the least a run of 1 baseline run takes: 1 + 1 trial + 6 rounds × 2 arms
    res = hone("tune", spec, "--max-runs", "14", "--sampler", "random", "--json", tmp_path / "r.json",
               env={"HONE_TEST_LOG": str(log)})
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["budget"]["runs_spent"]["baseline"] == 1 and _runs(log) <= 14
    assert "1 more to see whether the runs repeat" not in res.out


def test_runs_within_one_percent_but_not_identical_get_three_more_baseline_runs_and_the_rank_sum(
        workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, mode="quiet", repeats=3)  # ±0.1% by turns
    spec.write_text(spec.read_text().replace("trials: 5, ", ""))  # the runs decide
    res = hone("tune", spec, "--max-runs", "30", "--sampler", "random", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    # 3 runs agree within 1% by chance now and then: 3 more, then 2 rounds, the best's 2 new runs
    # against the baseline's 8 in the rank-sum test
    assert doc["budget"]["runs_spent"] == {"baseline": 6, "search": 20, "confirmation": 4, "ablation": 0}
    assert "its 3 runs repeat within 1%: 3 more to be sure" in res.out
    assert "the baseline's runs repeat within 1%: one run per trial" in res.out
    assert doc["confirmations"][0]["comparison"]["reason"] == "rank-sum test of 2 against 8 runs"
    assert _runs(workload / "runs.log") == 30


def test_two_runs_within_one_percent_get_a_third_first_and_three_more_only_when_it_agrees(
        workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, mode="quiet", repeats=2)  # ±0.1% by turns
    spec.write_text(spec.read_text().replace("trials: 5, ", ""))  # the runs decide
    res = hone("tune", spec, "--max-runs", "30", "--sampler", "random", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert "its 2 runs repeat within 1%: 1 more to see whether that holds" in res.out
    assert "its 3 runs repeat within 1%: 3 more to be sure" in res.out
    assert doc["budget"]["runs_spent"]["baseline"] == 6 and _runs(workload / "runs.log") <= 30
    # 2 runs that agreed by chance: the third does not, and the baseline stops at 3 (4 more before)
    lucky = workload / "lucky"
    lucky.mkdir()
    spec = write_workload(lucky, mode="lucky", repeats=2)
    spec.write_text(spec.read_text().replace("trials: 5, ", ""))
    res = hone("tune", spec, "--max-runs", "30", "--sampler", "random", "--json", lucky / "r.json",
               env={"HONE_TEST_LOG": str(lucky / "runs.log")})
    assert res.code == 0, res.err + res.out
    doc = json.loads((lucky / "r.json").read_text())
    assert "its 2 runs repeat within 1%: 1 more to see whether that holds" in res.out
    assert "more to be sure" not in res.out and doc["budget"]["runs_spent"]["baseline"] == 3


def test_runs_within_one_percent_get_no_more_baseline_runs_than_the_budget_has_room_for(
        workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, mode="quiet", repeats=3)  # ±0.1% by turns
    spec.write_text(spec.read_text().replace("trials: 5, ", ""))
    res = hone("tune", spec, "--max-runs", "12", "--sampler", "random", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    # 3 more would leave no trial and the smallest confirmation: the exact path on the 3 runs
    assert "more to be sure" not in res.out and doc["budget"]["runs_spent"]["baseline"] == 3
    assert doc["budget"]["runs_spent"]["search"] >= 1 and _runs(workload / "runs.log") <= 12


def test_exact_runs_that_stop_repeating_fall_back_to_the_paired_confirmation(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    # the baseline's 3 runs and the first 3 trials' are identical, then every run is ±5% by turns
    spec = write_workload(workload, mode="drift", repeats=3)
    res = hone("tune", spec, "--no-ablation", "--study", "drift", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert "the runs no longer repeat identically: the paired confirmation instead" in res.out
    assert doc["confirmations"][0]["comparison"]["n"] == 6  # the paired test's own rounds
    assert _runs(workload / "runs.log") == 3 + 5 + 1 * 2 + 6 * 2
    # under a budget that leaves no room for the paired rounds: the default kept, and why
    (workload / "runs.log").unlink()
    spec.write_text(spec.read_text().replace("trials: 5, ", ""))  # the runs decide
    res = hone("tune", spec, "--max-runs", "30", "--no-ablation", "--study", "drift30", "--json", workload / "b.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "b.json").read_text())
    assert doc["recommended"] is None and "inconclusive after 1 round" in doc["keep_reason"]
    assert any("no longer repeat identically and the paired confirmation (12 runs) does not fit" in c
               for c in doc["budget"]["cuts"])
    assert _runs(workload / "runs.log") == 30


def test_a_budget_too_small_to_confirm_is_refused_before_anything_runs(workload: Path, hone, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, repeats=3)
    res = hone("tune", spec, "--max-runs", "9")
    assert res.code == 2 and "Traceback" not in res.err
    # the smallest confirmation pools the baseline's 3 runs with 3 rounds' (hone.tune.confirm.confirm_pooled)
    assert res.err.splitlines()[0] == (
        "hone: error: --max-runs: 9 benchmark runs are too few: the baseline (3 runs), one trial (1 run) and the "
        "smallest confirmation (6 runs: 3 rounds × 2 arms) need at least 10")
    assert not (workload / "runs.log").exists() and not (state_dir / "studies.db").exists()
    assert (workload / "app.conf").read_text() == "level = 1\n"
    spec.write_text(spec.read_text().replace("top_k: 1", "top_k: 1, max_runs: 9"))
    res = hone("tune", spec)
    assert res.code == 2
    assert re.match(rf"hone: error: {re.escape(str(spec))}:\d+: tune.max_runs: 9 benchmark runs are too few: .* "
                    r"need at least 10$", res.err.splitlines()[0]), res.err
    assert not (workload / "runs.log").exists()


def test_a_bad_max_runs_in_the_spec_names_its_line(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload)
    spec.write_text(spec.read_text().replace("top_k: 1", "top_k: 1, max_runs: 0"))
    res = hone("tune", spec)
    assert res.code == 2 and len(res.err.strip().splitlines()) == 1, res.err
    assert re.match(rf"{re.escape(str(spec))}:\d+: tune.max_runs: ", res.err.strip()), res.err


def test_under_a_budget_a_noisy_benchmark_gets_one_run_per_trial_and_one_candidate(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    # ±5% by turns: not exact, so the GP weighs the noise; every trial one run; a fifth of the 60 runs
    # (12) holds one candidate's paired confirmation (6 rounds × 2 arms), so it is the pooled one: 4 rounds
    # × 2 arms, the candidate's 4 runs against the baseline's 3 + 4; the search gets the rest
    spec = write_workload(workload, mode="noisy", repeats=3, trials=60)
    spec.write_text(spec.read_text().replace("top_k: 1", "top_k: 3"))
    res = hone("tune", spec, "--max-runs", "60", "--study", "one", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    trials = optuna.load_study(study_name="one", storage=doc["storage"]).trials
    assert trials and all(len(t.user_attrs["runs"]) == 1 for t in trials)
    assert doc["budget"]["runs_planned"] == {"baseline": 3, "search": 49, "confirmation": 8, "ablation": 0}
    assert len(doc["confirmations"]) == 1 and "1 candidate instead of 3" in res.out
    assert doc["confirmations"][0]["comparison"]["reason"] == "rank-sum test of 4 against 7 runs"
    assert doc["recommended"] is not None
    assert _runs(workload / "runs.log") == sum(doc["budget"]["runs_spent"].values()) <= 60
    assert doc["budget"]["runs_spent"]["search"] == len(trials) == 49


def test_under_a_small_budget_the_pooled_confirmation_takes_its_fewest_rounds(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    # a fifth of 30 runs holds 3 rounds × 2 arms: the candidate's 3 runs must all beat the baseline's 6
    spec = write_workload(workload, mode="noisy", repeats=3)
    spec.write_text(spec.read_text().replace("trials: 5, ", ""))  # the runs decide
    res = hone("tune", spec, "--max-runs", "30", "--no-ablation", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert doc["budget"]["runs_spent"] == {"baseline": 3, "search": 21, "confirmation": 6, "ablation": 0}
    comparison = doc["confirmations"][0]["comparison"]
    assert comparison["reason"] == "rank-sum test of 3 against 6 runs" and comparison["p_value"] == 2 / 84
    assert doc["recommended"] is not None
    assert "the best configuration's 3 new runs against the baseline's 3 + 3 in a rank-sum test (p < 0.025)" \
        in res.out
    # before the search, the gain that confirmation can show at the baseline's noise (±5% by turns)
    cv = doc["baseline_cv"]["score"]
    assert doc["detectable_pct"] == pytest.approx(detectable_gain_pct(cv, "pooled", 3, 6, alpha=0.025))
    assert 15 < doc["detectable_pct"] < 22
    line = f"the confirmation (3 new runs of the best against the baseline's 6) shows a gain of about " \
        f"{doc['detectable_pct']:.0f}% or more 8 times in 10"
    assert line in res.out and res.out.index(line) < res.out.index("trial 1/")
    # ... and how far 3 runs leave that figure open: at the 90% bound of their noise
    cv_hi = noise_upper_bound(cv, 3)
    assert doc["detectable_pct_upper"] == pytest.approx(detectable_gain_pct(cv_hi, "pooled", 3, 6, alpha=0.025))
    assert doc["detectable_pct_upper"] > 2 * doc["detectable_pct"]
    assert (f"3 runs do not rule out noise up to {100 * cv_hi:.0f}% (90% bound), where it would take about "
            f"{doc['detectable_pct_upper']:.0f}%") in " ".join(res.out.split()), res.out


def test_confirmation_rounds_the_user_asked_for_hold_for_the_exact_and_pooled_confirmations(  # type: ignore[no-untyped-def]
        workload: Path, hone) -> None:
    # runs that repeat within 1%: 2 rounds are enough for the rank-sum test, --confirm 4 asks for 4
    spec = write_workload(workload, mode="quiet", repeats=3)
    res = hone("tune", spec, "--confirm", "4", "--no-ablation", "--study", "exact", "--json", workload / "e.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "e.json").read_text())
    assert doc["confirmations"][0]["comparison"]["reason"] == "rank-sum test of 4 against 10 runs"
    assert "in 4 rounds (a rank-sum test with the baseline's runs)" in res.out
    # identical runs: 1 round is enough, --confirm 4 asks for 4 (each must give the same figure again)
    spec = write_workload(workload, repeats=3)
    res = hone("tune", spec, "--confirm", "4", "--no-ablation", "--study", "identical", "--json", workload / "i.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "i.json").read_text())
    assert doc["confirmations"][0]["comparison"]["reason"] == (
        "runs repeat identically (7 of the reference, 4 of the candidate): the difference is exact")
    assert "in 4 rounds (the same figures again make the comparison exact)" in res.out
    assert doc["detectable_pct"] is None and "8 times in 10" not in res.out  # exact: nothing to detect against
    # noisy runs under a budget: the pooled confirmation takes 4 rounds unless the spec says 5
    (workload / "runs.log").unlink()
    spec = write_workload(workload, mode="noisy", repeats=3, trials=60)
    spec.write_text(spec.read_text().replace("top_k: 1", "top_k: 1, confirm: 5"))
    res = hone("tune", spec, "--max-runs", "60", "--study", "pooled", "--json", workload / "p.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "p.json").read_text())
    assert doc["budget"]["runs_planned"] == {"baseline": 3, "search": 47, "confirmation": 10, "ablation": 0}
    assert doc["confirmations"][0]["comparison"]["reason"] == "rank-sum test of 5 against 8 runs"
    assert _runs(workload / "runs.log") == sum(doc["budget"]["runs_spent"].values()) <= 60


def test_runs_a_trial_cap_leaves_idle_go_to_the_confirmation_before_anything_is_cut(  # type: ignore[no-untyped-def]
        workload: Path, hone) -> None:
    spec = write_workload(workload, mode="noisy", repeats=3)  # trials: 5
    res = hone("tune", spec, "--max-runs", "30", "--no-ablation", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    # a fifth of 30 runs would hold the pooled confirmation to 3 rounds; the 5-trial cap leaves 22 idle
    assert "instead of" not in res.out and "confirmation 8 (4 rounds × 2 arms)" in res.out
    assert doc["budget"]["runs_spent"] == {"baseline": 3, "search": 5, "confirmation": 8, "ablation": 0}
    # the cap, not the budget, ends the search; the user is told before anything runs
    held = [c for c in doc["budget"]["cuts"] if "the trial cap holds the search to 5 trials" in c]
    assert len(held) == 1 and "other 14 runs" in held[0], doc["budget"]["cuts"]
    assert "trial cap holds the search" in res.out
    assert doc["confirmations"][0]["comparison"]["n"] == 4
    # two candidates asked for: both confirmed, paired, where a fifth of 40 runs would have pooled one
    (workload / "runs.log").unlink(missing_ok=True)
    spec.write_text(spec.read_text().replace("top_k: 1", "top_k: 2"))
    res = hone("tune", spec, "--max-runs", "40", "--no-ablation", "--study", "two", "--json", workload / "t.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "t.json").read_text())
    assert "instead of" not in res.out and "confirmation 18 (6 rounds × 3 arms)" in res.out, res.out
    assert [c["comparison"]["n"] for c in doc["confirmations"]] == [6, 6]
    assert doc["detectable_pct"] == pytest.approx(detectable_gain_pct(doc["baseline_cv"]["score"], "paired", 6))
    assert "the confirmation (6 paired rounds) shows a gain of about" in res.out
    assert sum(doc["budget"]["runs_spent"].values()) <= 40


def test_a_baseline_that_drifted_up_is_not_pooled(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    # every run after the baseline's first 3 is 30% higher: its runs beside the candidate all beat its first
    # ones, so pooling them would credit the drift to the candidate; 30 runs leave no room for the paired test
    spec = write_workload(workload, mode="step", repeats=3)
    five = spec.read_text()
    spec.write_text(five.replace("trials: 5, ", ""))
    res = hone("tune", spec, "--max-runs", "30", "--no-ablation", "--study", "all", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert doc["recommended"] is None and "inconclusive after 3 rounds" in doc["keep_reason"]
    assert any("were all better than its runs before the search (a drift) and the paired confirmation (12 runs) "
               "does not fit in the 0 left" in c for c in doc["budget"]["cuts"]), doc["budget"]["cuts"]
    # 5 trials leave the runs for it: the paired confirmation follows, on its own rounds
    (workload / "runs.log").unlink()
    spec.write_text(five)
    res = hone("tune", spec, "--max-runs", "60", "--no-ablation", "--study", "five", "--json", workload / "s.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "s.json").read_text())
    assert "(a drift): the paired confirmation instead" in res.out
    assert doc["confirmations"][0]["comparison"]["n"] == 6
    assert _runs(workload / "runs.log") == 3 + 5 + 4 * 2 + 6 * 2


def test_a_drift_with_no_room_for_the_paired_test_judges_the_candidate_beside_its_own_rounds(  # type: ignore[no-untyped-def]
        workload: Path, hone) -> None:
    # the same 30% step, 60 runs and no trial cap: the paired test does not fit, but 4 rounds let the candidate's
    # 4 runs be compared with the baseline's 4 beside them alone, which the step lifted alike
    spec = write_workload(workload, mode="step", repeats=3, trials=60)
    res = hone("tune", spec, "--max-runs", "60", "--no-ablation", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    comparison = doc["confirmations"][0]["comparison"]
    assert comparison["reason"] == "rank-sum test of 4 against 4 runs" and comparison["p_value"] == 2 / 70
    assert doc["recommended"] is not None
    assert any("(a drift): the candidate was judged against those 4 runs only (p < 0.05); the paired confirmation "
               "(12 runs) does not fit in the 0 left" in c for c in doc["budget"]["cuts"]), doc["budget"]["cuts"]
    assert _runs(workload / "runs.log") == 60


def test_fixed_repeats_keep_every_trials_repeats_within_the_budget(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, repeats=3, trials=40)  # exact runs, but the user asked for the repeats
    res = hone("tune", spec, "--max-runs", "40", "--fixed-repeats", "--sampler", "random", "--study", "fixed",
               "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    trials = optuna.load_study(study_name="fixed", storage=doc["storage"]).trials
    assert all(len(t.user_attrs["runs"]) == 3 for t in trials)
    # 40 − baseline 3 − the pooled confirmation's 8 = 29: 9 trials of 3 runs (a 10th would eat the reserve)
    assert len(trials) == 9 and doc["budget"]["runs_spent"]["search"] == 27
    assert _runs(workload / "runs.log") == sum(doc["budget"]["runs_spent"].values()) <= 40


def test_atune_iterations_are_the_run_budget(tmp_path: Path, hone) -> None:  # type: ignore[no-untyped-def]
    client, server = tmp_path / "client.yaml", tmp_path / "server.yaml"
    (tmp_path / "k").write_text("1")
    client.write_text(yaml.safe_dump({
        "project": "runs", "iterations": 9, "benchmark": "echo tps: 1",
        "evaluations": [{"name": "tps", "info": {"get": "echo \"$out\" | awk '{print $2}'", "type": "negative",
                                                 "weight": 100}}]}, sort_keys=False))
    server.write_text(yaml.safe_dump({"project": "runs", "object": [{"name": "k", "info": {
        "get": f"cat {tmp_path}/k", "set": f"printf %s $value > {tmp_path}/k", "type": "discrete",
        "dtype": "string", "options": ["1", "2"]}}]}, sort_keys=False))
    spec = load_atune(client, server).spec
    assert spec.tune.max_runs == 9 and "trials" not in spec.tune.model_fields_set
    res = hone("tune", client, "--atune-server", server)  # repeats 3: 3 + 1 + 3 rounds × 2 > 9
    assert res.code == 2
    assert re.match(rf"hone: error: {re.escape(str(client))}:2: iterations: 9 benchmark runs are too few: .* need "
                    r"at least 10$", res.err.splitlines()[0]), res.err
    assert (tmp_path / "k").read_text() == "1"


def test_with_max_time_too_the_run_budget_binds_first_when_it_is_the_smaller(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, repeats=2, trials=100)
    res = hone("tune", spec, "--max-runs", "24", "--max-time", "1h", "--fixed-repeats", "--sampler", "random",
               "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    budget = json.loads((workload / "r.json").read_text())["budget"]
    assert budget["max_time_s"] == 3600 and budget["max_runs"] == 24
    # 2 + 7 trials × 2 + the pooled confirmation's 8 (4 rounds: the fewest its test needs with a baseline of 2)
    assert _runs(workload / "runs.log") == budget["runs_total"] == 24
    assert "--max-runs leaves" in budget["search_stopped"]


def test_with_max_runs_too_the_time_budget_binds_first_when_it_is_the_smaller(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "runs.log"
    # 56 configurations: fewer trials than that fit, so the time stops the search, not a space measured whole
    # (8 configurations once were, on an idle machine); identical runs: the confirmation is one round
    spec = write_workload(tmp_path, mode="slow", trials=100)
    # 10 s: the confirmation and a trial fit after the baseline even when a loaded machine doubles the
    # 0.25 s run (at 6 s the search once stopped before its first trial)
    res = hone("tune", spec, "--max-runs", "500", "--max-time", "10s", "--no-ablation", "--sampler", "random",
               "--json", tmp_path / "r.json", env={"HONE_TEST_LOG": str(log), "HONE_TEST_NAP": "0.25"})
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert "--max-time leaves" in doc["budget"]["search_stopped"]
    assert _runs(log) == doc["budget"]["runs_total"] < 500
    # within a half: runs a loaded machine slows after the plan was made still run (12.0 s once,
    # beside another job on both cores); the search alone, not stopped, would take ~40 s
    assert doc["finished"] - doc["started"] <= 10 * 1.5 and doc["confirmations"], res.out


def test_max_runs_with_local_workers_is_refused(workload: Path, hone, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload)
    res = hone("tune", spec, "--max-runs", "50", "--workers", "2")
    assert res.code == 2 and "--max-runs needs the trials in this process" in res.err.splitlines()[0]
    assert not (state_dir / "studies.db").exists() and not (workload / "runs.log").exists()


@settings(max_examples=300, deadline=None)
@given(n=st.integers(1, 300), repeats=st.integers(1, 5), warmup=st.integers(0, 2), top_k=st.integers(1, 4),
       confirm=st.sampled_from([0, 3, 6, 9, 12]), ablation_rounds=st.integers(1, 12), knobs=st.integers(1, 5),
       trials=st.integers(1, 200), one_run=st.booleans(), exact=st.booleans(), pooled=st.booleans(),
       data=st.data())
def test_the_plan_and_its_rules_never_spend_more_than_max_runs(n: int, repeats: int, warmup: int, top_k: int,
                                                               confirm: int, ablation_rounds: int, knobs: int,
                                                               trials: int, one_run: bool, exact: bool,
                                                               pooled: bool, data: st.DataObject) -> None:
    w = min(1, warmup)
    plan = RunPlan(baseline=warmup + repeats, trial_first=warmup + (1 if one_run else repeats),
                   confirm_arms=top_k + 1 if confirm else 0,
                   confirm_rounds=max(confirm, MIN_ROUNDS), ablation_arms=knobs + 1 if confirm and knobs >= 2 else 0,
                   ablation_rounds=max(ablation_rounds, MIN_ROUNDS), warmup_rounds=w, trials=trials)
    if pooled and confirm:  # one candidate, 3 or 4 rounds (hone.tune.tuner._begin_runs)
        plan = dataclasses.replace(plan, confirm_arms=2, confirm_rounds=4, confirm_min=3)
        top_k = 1
    budget = RunBudget(n)
    try:
        budget.begin(plan)
    except HoneError:
        assert n < RunBudget.minimum(plan)
        return
    assert n >= RunBudget.minimum(plan)
    for _ in range(plan.baseline):
        budget.count()
    least = MIN_ROUNDS
    if exact:  # the baseline's runs repeated exactly: one run per trial, one candidate
        identical = {"confirm_rounds": 1, "confirm_min": 1, "ablation_min": 1, "ablation_rounds": ablation_rounds,
                     "ablation_reservable": False} if data.draw(st.booleans(), "identical") and confirm else {}
        budget.replan(trial_first=warmup + 1, confirm_arms=min(plan.confirm_arms, 2), **identical)
        least = 1 if identical else MIN_ROUNDS
        assert budget.plan is not None
        plan = budget.plan
        top_k = 1
    budget.phase = "search"
    done = 0
    while done < budget.trials_cap(0) and not budget.stop_search():
        first = data.draw(st.integers(1, plan.trial_first), "runs before a failure")  # a failed run ends it
        for _ in range(first):
            budget.count()
        done += 1
    assert done >= 1
    if plan.confirm_arms:
        budget.phase = "confirmation"
        candidates = data.draw(st.integers(1, min(top_k, budget.confirm_arms - 1)), "candidates")
        loo = data.draw(st.integers(0, knobs + 1), "leave-one-out arms") if plan.ablation_arms else 0
        arms, rounds = budget.confirmation(candidates + 1, confirm, loo)
        assert arms == candidates + 1 and rounds >= plan.confirm_min  # the reserve always holds the confirmation
        for _ in range(plan.confirm_runs(rounds, arms)):
            budget.count()
        if loo >= 3:
            budget.phase = "ablation"
            fit = budget.ablation(ablation_rounds, loo, least=least)
            spend = plan.ablation_runs(fit, loo) if fit else 0
            if fit is None:  # the ablation by importance instead, with as many pruned arms as fit
                pruned = budget.pruned(ablation_rounds, data.draw(st.integers(1, 4), "pruned arms"), least=least)
                spend = plan.pruned_runs(*pruned) if pruned else 0
                assert (pruned is None) == (budget.ablation_skipped is not None)
            for _ in range(spend):
                budget.count()
    assert budget.total <= n
    held = [c for c in budget.cuts if "the trial cap holds the search" in c]
    assert len(held) == (budget.search_runs is not None and budget.search_runs > plan.trials * plan.trial_first)


def test_a_resumed_job_keeps_its_budget_after_kill_9(workload: Path, hone, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    # the budget is the job's: what the killed session spent is gone from the resumed one's
    log = workload / "runs.log"
    spec = write_workload(workload, mode="slow", trials=40)
    tune_killed_after([str(spec), "--max-runs", "30", "--study", "job", "--no-ablation"],
                      {"HONE_STATE_DIR": str(state_dir), "HONE_TEST_LOG": str(log)}, log, runs=8)
    study = optuna.load_study(study_name="job", storage=f"sqlite:///{state_dir / 'studies.db'}")
    earlier = study.user_attrs["hone_open_runs"]
    assert _runs(log) - 1 <= earlier <= _runs(log)  # a run the kill cut short is not counted
    # what is left is too few: refused, nothing runs
    before = _runs(log)
    res = hone("tune", spec, "--resume", "--study", "job", "--max-runs", str(earlier + 5), "--no-ablation")
    assert res.code == 2 and _runs(log) == before
    assert f"{earlier} of them spent by the interrupted session: the 5 left are too few" in res.err.splitlines()[0]
    # the runs were slow only so that the kill lands mid-trial: the resumed job runs at full speed
    res = hone("tune", spec, "--resume", "--study", "job", "--max-runs", "30", "--no-ablation",
               "--json", workload / "r.json", env={"HONE_TEST_NAP": "0"})
    assert res.code == 0, res.err + res.out
    assert f"runs: ≤ {30 - earlier} benchmark runs (--max-runs 30, {earlier} spent by the interrupted session)" \
        in res.out
    budget = json.loads((workload / "r.json").read_text())["budget"]
    assert budget["runs_earlier"] == earlier and earlier + budget["runs_total"] <= 30
    assert _runs(log) <= 31  # the job's runs, the one cut short included
    assert f"of --max-runs 30 with the interrupted session's {earlier} " in res.out
    # the job finished: resuming it again is a new budget
    study = optuna.load_study(study_name="job", storage=f"sqlite:///{state_dir / 'studies.db'}")
    assert study.user_attrs["hone_open_runs"] is None


def test_a_resumed_job_pools_the_interrupted_sessions_baseline_in_its_confirmation(
        workload: Path, hone, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    log = workload / "runs.log"
    spec = write_workload(workload, mode="slow-noisy", trials=40, repeats=2)  # ±5% by turns
    tune_killed_after([str(spec), "--max-runs", "30", "--study", "job", "--no-ablation"],
                      {"HONE_STATE_DIR": str(state_dir), "HONE_TEST_LOG": str(log), "HONE_TEST_NAP": "0.2"},
                      log, runs=6)
    res = hone("tune", spec, "--resume", "--study", "job", "--max-runs", "30", "--no-ablation",
               "--json", workload / "r.json", env={"HONE_TEST_NAP": "0"})
    assert res.code == 0, res.err + res.out
    # the baseline's 2 runs from before the kill: reused, and pooled as a fresh session would
    assert "baseline: the interrupted session's (2 runs)" in res.out and "measuring the current" not in res.out
    assert "the confirmation pools the baseline's runs: the best configuration's 4 new runs against the " \
           "baseline's 2 + 4" in res.out
    doc = json.loads((workload / "r.json").read_text())
    assert doc["budget"]["runs_spent"]["baseline"] == 0 and doc["budget"]["runs_spent"]["confirmation"] == 8
    assert doc["budget"]["runs_earlier"] + doc["budget"]["runs_total"] <= 30


def test_a_plan_made_again_updates_its_cuts_in_place_or_takes_them_back() -> None:
    # 3 candidates × 6 rounds take 24 runs; the 5-trial cap leaves 22 of 30 idle: 5 rounds fit
    plan = RunPlan(baseline=3, trial_first=1, confirm_arms=4, confirm_rounds=6, ablation_arms=0, ablation_rounds=6,
                   warmup_rounds=0, trials=5, confirm_min=3)
    budget = RunBudget(30)
    budget.begin(plan)
    assert [c for c in budget.cuts if "holds the search to 5 trials" in c and "other 2 runs" in c]
    assert [c for c in budget.cuts if "5 rounds instead of 6" in c and "gets the 22 runs the trial cap leaves" in c]
    budget.unsaid()
    budget.replan(baseline=6)  # the exact path's 3 more baseline runs: 19 idle, 4 rounds
    held = [c for c in budget.cuts if "holds the search" in c]
    assert len(held) == 1 and "other 3 runs" in held[0]
    assert budget.unsaid() == []  # said once, updated in place
    assert [c for c in budget.cuts if "rounds instead of 6" in c] == [budget.cuts[0]]  # the reserve's cut, once
    assert "4 rounds instead of 6" in budget.cuts[0] and "the 19 runs the trial cap leaves" in budget.cuts[0]
    budget.replan(trials=100)  # no cap below the runs: the note is taken back, the reserve is a fifth of the runs
    assert not [c for c in budget.cuts + budget.unsaid() if "holds the search" in c]
    assert "1 candidate instead of 3, 3 rounds instead of 6" in budget.cuts[0]
    assert "at most 20% of the budget" in budget.cuts[0]


def test_the_ablation_by_importance_spends_only_what_the_search_left() -> None:
    # 12 knobs, one candidate pooled: leave-one-out would reserve 7 × 16 = 112 runs, a fifth of 200 is 40
    plan = RunPlan(baseline=3, trial_first=1, confirm_arms=2, confirm_rounds=4, ablation_arms=13, ablation_rounds=6,
                   warmup_rounds=1, trials=200, confirm_min=3)
    budget = RunBudget(200)
    line = budget.begin(plan)
    assert line is not None and line.endswith("ablation only if the runs left allow it"), line
    assert budget.reserve == 10 and budget.search_runs == 187  # nothing kept back for it (docs/decisions/0096)
    for _ in range(200 - 23):  # a trial cap left 23 runs: 3 arms × 7 fit, 4 × 7 do not
        budget.count()
    assert budget.ablation(6, 13) is None and budget.ablation_skipped == (112, 23)
    assert budget.pruned(6, 4) == (6, 1) and budget.ablation_skipped is None
    assert budget.cuts[-1] == ("ablation by importance: leave-one-out needs up to 112 runs, --max-runs leaves 23: "
                               "the baseline, the winner and 1 pruned configuration, 6 rounds (21 runs)")
    for _ in range(3):
        budget.count()
    assert budget.pruned(6, 4) is None  # 20 left


def test_an_exact_ablation_is_never_reserved_and_fits_one_round_in_what_is_left() -> None:
    # identical runs: 1 round per block (ablation_min 1), on the runs the search leaves only (docs/decisions/0098)
    plan = RunPlan(baseline=3, trial_first=1, confirm_arms=2, confirm_rounds=1, ablation_arms=4, ablation_rounds=1,
                   warmup_rounds=0, trials=100, confirm_min=1, ablation_min=1, ablation_reservable=False)
    budget = RunBudget(100)
    line = budget.begin(plan)  # reservable, 2 + 7 runs would fit in a fifth of 100
    assert line is not None and line.endswith("ablation only if the runs left allow it"), line
    assert budget.reserve == 2 and budget.search_runs == 95 and not budget.cuts
    for _ in range(100 - 8):
        budget.count()
    assert budget.ablation(1, 4, least=1) == 1  # 7 runs of 8
    assert budget.ablation(6, 4, least=MIN_ROUNDS) is None  # the paired ablation's 6 rounds would not
    assert budget.cuts[-1] == "ablation skipped: even 6 rounds need up to 42 runs, --max-runs leaves 8"
    for _ in range(4):
        budget.count()
    assert budget.ablation(1, 4, least=1) is None
    assert budget.cuts[-1] == "ablation skipped: even 1 round needs up to 7 runs, --max-runs leaves 4"
    assert budget.pruned(1, 2, least=1) == (1, 2)  # the baseline, the winner and 2 arms: 4 runs
    assert budget.cuts[-1].endswith("the baseline, the winner and 2 pruned configurations, 1 round (4 runs)")


def test_a_noisy_search_of_a_small_space_ends_by_measuring_its_best_three_again(
        hone, workload: Path, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    # 56 configurations, runs ±5% by turns, one run per trial: the last 3 of the search's runs measure the 3 best
    # observed configurations again, and the candidate is the best of them by the mean of its runs
    spec = write_workload(workload, mode="noisy", repeats=2, trials=100)
    log = workload / "runs.log"
    res = hone("tune", spec, "--max-runs", "60", "--sampler", "random", "--study", "raced", "--json",
               workload / "r.json", env={"HONE_TEST_LOG": str(log)})
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert _runs(log) == doc["budget"]["runs_total"] <= 60
    study = optuna.load_study(study_name="raced", storage=f"sqlite:///{state_dir / 'studies.db'}")
    trials = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    raced = [t for t in trials if "hone_race" in t.user_attrs]
    assert len(raced) == 3 and [t.number for t in raced] == [t.number for t in trials[-3:]]
    by_number = {t.number: t for t in trials}
    assert all(t.params == by_number[t.user_attrs["hone_race"]].params for t in raced)
    first = [by_number[t.user_attrs["hone_race"]] for t in raced]
    before: dict[str, list[float]] = {}  # the trials before the race, by configuration (a random draw may repeat one)
    for t in trials[:-3]:
        before.setdefault(json.dumps(t.user_attrs["config"], sort_keys=True), []).append(t.values[0])
    ranked = sorted(before, key=lambda k: -sum(before[k]) / len(before[k]))
    assert {json.dumps(t.user_attrs["config"], sort_keys=True) for t in first} == set(ranked[:3])
    flat = " ".join(res.out.split())
    assert ("race: the search's last 3 runs measure the best 3 configurations again (trials "
            f"{', '.join(str(t.number) for t in first)})") in flat, flat
    means = {t.number: (t.values[0] + by_number[t.user_attrs["hone_race"]].values[0]) / 2 for t in raced}
    best = max(raced, key=lambda t: means[t.number])
    assert doc["confirmations"][0]["config"] == by_number[best.user_attrs["hone_race"]].user_attrs["config"]

    # at 30 runs the search's ~18 runs are too few to give 3 of them up (at most a tenth): no race
    log.unlink()
    res = hone("tune", spec, "--max-runs", "30", "--sampler", "random", "--study", "short")
    assert res.code == 0 and "race:" not in res.out, res.out
    study = optuna.load_study(study_name="short", storage=f"sqlite:///{state_dir / 'studies.db'}")
    assert not any("hone_race" in t.user_attrs for t in study.get_trials(deepcopy=False))


def test_the_race_takes_the_last_trials_of_a_trial_cap_and_a_resumed_search_races_again(
        hone, workload: Path, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    # tune.trials 33 ends the search before --max-runs 100 does: its last 3 trials are the race; a --resume to
    # 66 trials is a new search of 33, which ends with its own race (its best 3, the first race's included)
    spec = write_workload(workload, mode="noisy", repeats=2, trials=33)
    res = hone("tune", spec, "--max-runs", "100", "--sampler", "random", "--study", "capped", "--no-ablation")
    assert res.code == 0 and "race:" in res.out, res.out
    study = optuna.load_study(study_name="capped", storage=f"sqlite:///{state_dir / 'studies.db'}")

    def raced() -> list[int]:
        done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
        assert len({t.number for t in done}) == len(done)
        return [t.number for t in done if "hone_race" in t.user_attrs]

    assert raced() == [30, 31, 32] and len(study.get_trials(deepcopy=False)) == 33
    res = hone("tune", spec, "--resume", "--study", "capped", "--trials", "66", "--max-runs", "100",
               "--sampler", "random", "--no-ablation")
    assert res.code == 0, res.err + res.out
    assert raced() == [30, 31, 32, 63, 64, 65] and len(study.get_trials(deepcopy=False)) == 66, res.out


WOBBLY_BENCH = """
import pathlib, sys
log = pathlib.Path(sys.argv[2])
n = len(log.read_text().splitlines()) if log.exists() else 0
log.write_text(log.read_text() + "run\\n" if log.exists() else "run\\n")
# a 4% gain under ±15% of noise that a few runs cannot tell apart (the same sequence every session)
wobble = [0.9, 1.12, 0.86, 1.05, 1.15, 0.95, 0.88, 1.1, 1.0, 0.92, 1.13, 0.87][n % 12]
tps = 100 * (1.04 if sys.argv[1] == 'on' else 1.0) * wobble
print(f"lat: {4000 / tps}")
print(f"tps: {tps}")
"""


@pytest.mark.parametrize(("latency_weight", "metric"), [(0, "tps"), (40, "objective")])
def test_an_inconclusive_candidate_comes_with_the_comparison_that_settles_it(
        hone, tmp_path: Path, latency_weight: int, metric: str) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "bench.py").write_text(WOBBLY_BENCH)
    log = tmp_path / "runs.log"
    spec = tmp_path / "hone.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "wobbly",
        "benchmark": {"command": [sys.executable, str(tmp_path / "bench.py"), "{cache}", str(log)], "timeout": 20,
                      "repeats": 3, "warmup": 0},
        "metrics": [{"name": "latency", "extract": {"regex": "lat: ([0-9.]+)"}, "goal": "minimize",
                     "weight": latency_weight},
                    {"name": "tps", "extract": {"regex": "tps: ([0-9.]+)"}, "goal": "maximize"}],
        "knobs": [{"name": "cache", "kind": "param", "values": ["off", "on"], "default": "off"}],
        "tune": {"seed": 1}}))
    res = hone("tune", spec, "--max-runs", "14", "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    comp = doc["best_candidate"]["comparison"]
    assert doc["recommended"] is None and comp["verdict"] == "inconclusive" and comp["change_pct"] > 0, res.out
    rounds = max(MIN_ROUNDS, comp["rounds_needed"])
    # the figure the confirmation judged is named (tps alone, or the weighted figure), default or not
    command = (f"hone compare {spec} --variant best:cache=on --rounds {rounds} --max-rounds {4 * rounds} "
               f"--max-time 0 --metric {metric}")
    first_s, most_s = doc["settle"].pop("first_look_s"), doc["settle"].pop("max_s")
    assert doc["settle"] == {"candidate": doc["best_candidate"]["name"], "trial": doc["best_candidate"]["trial"],
                             "config": {"cache": "on"}, "rounds": rounds, "max_rounds": 4 * rounds,
                             "command": command}
    # priced at the session's pace: two runs a round, the last look four times the first
    per_run = doc["budget"]["spent_s"] / doc["budget"]["runs_total"]
    assert 0.2 * per_run < first_s / (2 * rounds) < 5 * per_run and most_s == pytest.approx(4 * first_s)
    assert f"about {comp['rounds_needed']} rounds would settle it" in doc["keep_reason"]
    shown = hone("report", tmp_path / "r.json")
    for out in (res.out, shown.out):
        assert f"first look after {rounds} rounds, {2 * rounds} runs, about {format_duration(first_s)}; up to " \
               f"{4 * rounds} rounds, about {format_duration(most_s)}, while undecided): {command}" \
               in " ".join(out.split()), out
        # beside it, the gain this confirmation could show at the baseline's noise (planned before the search)
        upper = doc["detectable_pct_upper"]  # 3 runs at ±15%: the bound's figure is finite and larger
        assert f"this confirmation showed a gain of about {doc['detectable_pct']:.0f}% or more 8 times in 10; " \
               f"about {upper:.0f}% at the most noise the baseline's few runs do not rule out" \
               in " ".join(out.split()), out
    page = tmp_path / "r.html"
    assert hone("report", tmp_path / "r.json", "--html", page).code == 0
    assert f"<code>{command}</code>" in page.read_text()
    assert f"this confirmation showed a gain of about {doc['detectable_pct']:.0f}% or more" in page.read_text()
    # the comparison it names runs as printed (fewer rounds here)
    args = shlex.split(command)[1:]
    args[args.index("--rounds") + 1] = args[args.index("--max-rounds") + 1] = "2"
    cmp = hone(*args, "--warmup", "0")
    assert cmp.code == 0 and "best" in cmp.out, cmp.err + cmp.out
    assert f"metric {metric}" in " ".join(cmp.out.split()), cmp.out


@pytest.mark.parametrize(("change_pct", "goal", "settled"), [(5.0, "maximize", True), (0.5, "maximize", False),
                                                            (-5.0, "maximize", False), (-5.0, "minimize", True)])
def test_only_an_estimated_gain_of_at_least_the_threshold_is_worth_settling(
        tmp_path: Path, change_pct: float, goal: str, settled: bool) -> None:
    from hone.spec.loader import load_spec
    from hone.stats.paired import PairedComparison
    from hone.tune.confirm import Candidate, Confirmation
    from hone.tune.objective import build_objective
    from hone.tune.tuner import TuneSettings, _settle

    spec = write_workload(tmp_path)
    loaded = load_spec(spec)
    comp = PairedComparison(n=4, ratio=1 + change_pct / 100, change_pct=change_pct, ci_pct=(-20.0, 30.0),
                            p_value=0.5, verdict="inconclusive", mde_pct=10.0, improved=False, goal=goal,  # type: ignore[arg-type]
                            rounds_needed=3)
    cand = Candidate(name="trial 4", trial_number=4, config={"level": 3, "x": 1}, search_means={})
    got = _settle(loaded, TuneSettings(trials=8), build_objective(list(loaded.spec.metrics)),
                  [Confirmation(cand, comp)], {"config": {"level": 1, "x": 1}}, per_run_s=30.0)
    if not settled:
        assert got is None
        return
    # only the changed knob; at least the 6 rounds the paired test needs, two 30 s runs each
    assert got == {"candidate": "trial 4", "trial": 4, "config": {"level": "3"}, "rounds": 6, "max_rounds": 24,
                   "first_look_s": 360.0, "max_s": 1440.0,
                   "command": f"hone compare {spec} --variant best:level=3 --rounds 6 --max-rounds 24 --max-time 0 "
                              f"--metric {loaded.spec.metrics[0].name}"}


@pytest.mark.parametrize(("latency", "metric"), [(2.0, "objective"), (0.0, "score")])
def test_a_weighted_verdict_on_its_heaviest_metric_alone_is_settled_on_that_metric(
        tmp_path: Path, latency: float, metric: str) -> None:
    # a run whose latency is 0 leaves no geometric mean: the confirmation judged the heaviest metric (score,
    # weight 1 against 0.5) alone, and the command that settles it must compare that, not the objective
    from hone.run.benchmark import Measurement
    from hone.spec.loader import load_spec
    from hone.stats.paired import PairedComparison
    from hone.tune.confirm import Candidate, Confirmation, judged_alone
    from hone.tune.objective import build_objective
    from hone.tune.tuner import TuneSettings, _settle

    spec = write_workload(tmp_path, extra_metrics="""
          - {name: lat, extract: {regex: 'lat: ([0-9.]+)'}, goal: minimize, weight: 0.5}""")
    loaded = load_spec(spec)
    objective = build_objective(list(loaded.spec.metrics))

    def run(score: float, lat: float) -> Measurement:
        return Measurement(1.0, 1.0, 1.0, 0.0, 1, 0, False, {"score": score, "lat": lat})

    runs = [run(10.0, 2.0), run(11.0, latency), run(12.0, 2.5)]
    alone = judged_alone(objective, runs)
    assert alone == (None if metric == "objective" else "score")
    comp = PairedComparison(n=4, ratio=1.05, change_pct=5.0, ci_pct=(-20.0, 30.0), p_value=0.5,
                            verdict="inconclusive", mde_pct=10.0, improved=False, goal="maximize", rounds_needed=3)
    cand = Candidate(name="trial 4", trial_number=4, config={"level": 3, "x": 1}, search_means={})
    got = _settle(loaded, TuneSettings(trials=8), objective, [Confirmation(cand, comp, judged_alone=alone)],
                  {"config": {"level": 1, "x": 1}})
    assert got is not None
    assert got["command"].endswith(f"--max-time 0 --metric {metric}"), got["command"]  # named, default or not
