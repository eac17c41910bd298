"""``hone tune``'s ablation end to end: which of the confirmed winner's changes hold its gain,
and the smallest configuration that keeps it (real console script, deterministic benchmark)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import optuna
from hypothesis import given
from hypothesis import strategies as st

from hone.run.benchmark import Measurement
from hone.run.configure import Configurator
from hone.run.journal import Journal, MachineLock
from hone.spec.loader import load_spec
from hone.stats.paired import compare_paired
from hone.tune.ablation import _not_repeating, ablate_by_importance, prune_sizes
from hone.tune.confirm import Candidate, Confirmation
from hone.tune.objective import build_objective
from tests.tune.conftest import write_three_knobs as write_spec


def test_a_change_without_measurable_effect_is_dropped_and_the_minimal_configuration_recommended(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_spec(tmp_path, "apart")
    # --fixed-repeats: the 6-round ablation of runs not known to repeat (identical ones: test_run_budget.py)
    res = hone("tune", spec, "--json", tmp_path / "r.json", "--html", tmp_path / "r.html", "--apply-best",
               "--fixed-repeats")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    ablation = doc["ablation"]
    assert ablation["winner_config"]["big"] == 2 and ablation["winner_config"]["small"] == 2
    assert ablation["kept"] == ["big", "small"] and ablation["dropped"] == ["inert"]
    changes = {c["knob"]: c for c in ablation["changes"]}
    assert changes["big"]["baseline"] == "0" and changes["big"]["winner"] == 2  # the file said 0: out of the domain
    # each change's own effect: the winner vs the winner with that change undone
    assert abs(changes["big"]["effect_pct"] - 30.0) < 1e-6 and changes["big"]["verdict"] == "faster"
    assert abs(changes["small"]["effect_pct"] - 3.0) < 1e-6 and changes["small"]["ci_pct"][0] > 0
    assert changes["small"]["p_value"] < 0.05 and changes["small"]["kept"]
    assert changes["inert"]["effect_pct"] == 0.0 and not changes["inert"]["kept"]
    assert changes["inert"]["verdict"] == "equivalent" and changes["inert"]["p_value"] == 1.0
    assert ablation["minimal"] == {"big": 2, "small": 2} and ablation["recommended"] == "minimal"
    assert ablation["minimal_vs_baseline"]["verdict"] == "faster"
    assert ablation["minimal_vs_winner"]["verdict"] == "equivalent"
    # the recommendation, its command and --apply-best are the minimal configuration
    assert doc["recommended"] == {"big": 2, "small": 2} and doc["verdict"] == "faster"
    assert abs(doc["improvement_pct"] - 33.9) < 1e-6
    assert doc["apply_command"].endswith("--set small=2") and doc["run_settings"] == {"big": 2}
    assert (tmp_path / "app.conf").read_text() == "small = 2\ninert = 0\n"
    assert "Recommendation (confirmed, minimal change): big=2 small=2" in res.out
    assert "kept     big: 0 → 2  +30.00% [+30.00%, +30.00%]" in res.out
    assert "kept     small: 0 → 2  +3.00% [+3.00%, +3.00%]" in res.out
    assert "dropped  inert: 0 → " in res.out and "no measurable effect" in res.out
    assert "id=ablation" in (tmp_path / "r.html").read_text()
    assert "Minimal change (ablation, 6 interleaved rounds)</h2>" in (tmp_path / "r.html").read_text()
    assert "<th>effect (95% CI)</th>" in (tmp_path / "r.html").read_text()
    # starting values outside the searched ones: the baseline cannot be a row of the GP's model
    study = optuna.load_study(study_name=doc["study"], storage=doc["storage"])
    assert study.user_attrs["hone_baseline_point"] is None
    shown = hone("report", tmp_path / "r.json")  # re-rendered from the result alone
    assert "dropped  inert" in shown.out and "minimal change" in shown.out
    assert hone("rollback").code == 0
    assert (tmp_path / "app.conf").read_text() == "small = 0\ninert = 0\n"


def test_changes_that_stand_in_for_each_other_keep_the_winner_whole(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # small or inert gives the 5%: undoing either alone costs nothing, undoing both loses it
    spec = write_spec(tmp_path, "either")
    res = hone("tune", spec, "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    ablation = doc["ablation"]
    assert ablation["kept"] == ["big"] and sorted(ablation["dropped"]) == ["inert", "small"]
    assert ablation["minimal"] == {"big": 2}
    assert ablation["minimal_vs_baseline"]["verdict"] == "faster"
    assert ablation["minimal_vs_winner"]["verdict"] == "slower"  # -4.76%: the dropped pair held a gain
    assert ablation["recommended"] == "winner" and "measurably worse than the winner" in ablation["why"]
    assert doc["recommended"] == ablation["winner_config"] and set(doc["recommended"]) == {"big", "small", "inert"}
    assert "recommended: the winner whole" in res.out and "Recommendation (confirmed):" in res.out


def test_no_ablation_recommends_the_confirmed_winner_as_it_is(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # 3 trials: every configuration searched beats the baseline by 20% or more, the switch is what counts
    spec = write_spec(tmp_path, "apart", trials=3)
    res = hone("tune", spec, "--no-ablation", "--json", tmp_path / "r.json", "--study", "n")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["ablation"] is None and set(doc["recommended"]) == {"big", "small", "inert"}
    assert "--set inert=" in doc["apply_command"]
    assert "Minimal change" not in res.out and "ablation round" not in res.out
    # the spec's switch, and the command line over it
    off = write_spec(tmp_path, "apart", trials=3, tune=", ablation: false")
    res = hone("tune", off, "--json", tmp_path / "off.json", "--study", "off")
    assert res.code == 0, res.err + res.out
    assert json.loads((tmp_path / "off.json").read_text())["ablation"] is None
    res = hone("tune", off, "--ablation", "--ablation-rounds", "7", "--json", tmp_path / "on.json", "--study", "on")
    assert res.code == 0, res.err + res.out
    ablation = json.loads((tmp_path / "on.json").read_text())["ablation"]
    assert ablation["rounds"] == 7 and ablation["dropped"] == ["inert"]
    assert all(c["comparison"]["n"] == 7 for c in ablation["changes"])



def test_a_knob_left_at_the_baseline_value_is_neither_in_the_apply_command_nor_written(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # quiet is not in app.conf: its value is 1 (absent:), so a winner with quiet=1 changes nothing
    spec = write_spec(tmp_path, "apart", trials=16)
    knob = f"  - {{name: quiet, kind: file, path: {tmp_path / 'app.conf'}, key: quiet, values: [1, 2], absent: 1}}"
    spec.write_text(spec.read_text().replace("\ntune:", f"\n{knob}\ntune:", 1))
    res = hone("tune", spec, "--no-ablation", "--apply-best", "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["baseline_config"]["quiet"] == 1
    rec = doc["recommended"]
    assert rec["quiet"] == 1  # the seed's winner left quiet where it was
    assert doc["apply_command"].endswith(f"--set small={rec['small']} --set inert={rec['inert']}")
    # --apply-best writes no quiet line
    assert (tmp_path / "app.conf").read_text() == f"small = {rec['small']}\ninert = {rec['inert']}\n"
    assert hone("rollback").code == 0
    assert (tmp_path / "app.conf").read_text() == "small = 0\ninert = 0\n"


def test_a_budget_short_of_leave_one_out_prunes_the_winner_by_importance_and_measures_it(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_spec(tmp_path, "apart", trials=8)
    res = hone("tune", spec, "--max-runs", "60", "--sampler", "random", "--apply-best", "--fixed-repeats",
               "--json", tmp_path / "r.json")  # --fixed-repeats: 6-round blocks, as for runs not known to repeat
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    ablation, spent = doc["ablation"], doc["budget"]["runs_spent"]
    # leave-one-out (6 rounds × (4 + 3) arms = 42 runs) does not fit the 39 left: one block of the baseline,
    # the winner and the top half pruned arm does, in 12 rounds (runs not known to repeat: one run a trial)
    assert ablation["method"] == "by importance" and spent["ablation"] == 36 and doc["budget"]["runs_total"] <= 60
    assert doc["not_ablated"] is None and ablation["changes"] == [] and ablation["rounds"] == 12
    (top2,) = ablation["pruned"]
    # the two most important changes hold the whole gain
    assert top2["kept"] == ["big", "small"] and top2["vs_winner"]["verdict"] == "equivalent"
    assert top2["vs_baseline"]["verdict"] == "faster" and top2["passed"] and top2["chosen"]
    assert top2["status"] == "chosen" and top2["vs_winner"]["n"] == 12
    assert ablation["order"] == ["big", "small", "inert"]
    assert ablation["kept"] == ["big", "small"] and ablation["dropped"] == ["inert"]
    assert ablation["recommended"] == "minimal" and doc["recommended"] == {"big": 2, "small": 2}
    assert abs(doc["improvement_pct"] - 33.9) < 1e-6 and doc["apply_command"].endswith("--set small=2")
    assert (tmp_path / "app.conf").read_text() == "small = 2\ninert = 0\n"  # --apply-best: the pruned winner
    assert ("budget: ablation by importance: leave-one-out needs up to 42 runs, --max-runs leaves 39: the "
            "baseline, the winner and 1 pruned configuration, 12 rounds (36 runs)") in res.out
    shown = hone("report", tmp_path / "r.json")
    page = tmp_path / "r.html"
    assert hone("report", tmp_path / "r.json", "--html", page).code == 0
    for out in (res.out, shown.out):
        flat = " ".join(out.split())
        assert "chosen top 2 of 3: vs baseline +33.90% [+33.90%, +33.90%]" in flat, flat
        assert "vs the winner +0.00% [+0.00%, +0.00%]" in flat and "kept big=2 small=2 put back inert" in flat
    assert "<tr class=win><td class=l>top 2 of 3: big, small</td>" in page.read_text()
    assert hone("rollback").code == 0
    assert (tmp_path / "app.conf").read_text() == "small = 0\ninert = 0\n"


def test_pruned_arms_that_lose_the_gain_keep_the_winner_whole(tmp_path: Path) -> None:
    # importances that rank the inert change first: its arm beats the baseline by small's 3% only
    loaded = load_spec(write_spec(tmp_path, "apart"))
    objective = build_objective(loaded.spec.metrics)
    win = {"big": 2, "small": 2, "inert": 1}
    beat = compare_paired([100.0] * 6, [133.9] * 6, goal="maximize", estimator="auto")
    winner = Confirmation(Candidate("trial 4", 4, win, {}), beat)
    with MachineLock(tmp_path):
        configurator = Configurator(loaded, Journal(tmp_path / "state"))
        try:
            result = ablate_by_importance(loaded, configurator, objective, winner, {"big": 0, "small": 0, "inert": 0},
                                          {"inert": 0.8, "small": 0.15, "big": 0.05}, arms=1, rounds=6, warmup=0)
        finally:
            assert configurator.restore() == []
    assert result.method == "by importance" and result.order == ["inert", "small", "big"]
    (arm,) = result.pruned
    assert arm.kept == ["inert", "small"] and arm.vs_baseline.verdict == "faster" and not arm.passed
    assert arm.vs_winner.verdict == "slower" and abs(arm.vs_winner.change_pct + 23.08) < 0.01
    assert result.recommended == "winner" and result.confirmation is None
    assert result.why.startswith("no pruned configuration passed; the smallest, the 2 most important of the 3")
    assert arm.to_dict()["status"] == "worse than the winner"
    assert "measurably worse than the winner" in result.why
    assert (tmp_path / "app.conf").read_text() == "small = 0\ninert = 0\n"


@given(changes=st.integers(1, 200), arms=st.integers(0, 12))
def test_pruned_arms_keep_half_the_changes_then_the_most_important_one_then_finer_cuts(
        changes: int, arms: int) -> None:
    sizes = prune_sizes(changes, arms)
    halves = math.ceil(math.log2(changes)) if changes > 1 else 0  # ½, ¼, … down to 1
    assert sizes == sorted(set(sizes)) and all(1 <= j < changes for j in sizes)
    assert len(sizes) == min(arms, halves)
    if sizes:
        assert sizes[-1] == -(-changes // 2)  # one arm: half of the changes, the safest cut
    if len(sizes) >= 2:
        assert sizes[0] == 1  # two arms: the most important change alone too
    assert prune_sizes(13, 2) == [1, 7] and prune_sizes(13, 3) == [1, 4, 7] and prune_sizes(13, 9) == [1, 2, 4, 7]


def test_identical_runs_that_stop_repeating_in_the_ablation_keep_the_winner_whole(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # identical through the baseline (3 runs), the search (8) and the confirmation (2), then ±5% by turns:
    # one round of leave-one-out cannot be judged exactly, and no test can judge one round
    log = tmp_path / "runs.log"
    spec = write_spec(tmp_path, "apart")
    res = hone("tune", spec, "--repeats", "2", "--sampler", "random", "--json", tmp_path / "r.json",
               env={"HONE_TEST_LOG": str(log), "HONE_TEST_STEADY": "13"})
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["confirmations"][0]["comparison"]["estimator"] == "exact"
    ablation = doc["ablation"]
    assert ablation["rounds"] == 1 and ablation["changes"] == [] and ablation["recommended"] == "winner"
    assert ablation["why"] == ("the runs no longer repeat identically (the winner gave other figures than before): "
                               "the winner is kept whole, not ablated")
    assert doc["budget"]["runs_spent"]["ablation"] == 4  # the leave-one-out block only
    assert doc["recommended"] == ablation["winner_config"]
    assert "recommended: the winner whole — the runs no longer repeat identically" in " ".join(res.out.split())


def test_an_exact_block_is_judged_only_while_its_runs_repeat(tmp_path: Path) -> None:
    objective = build_objective(load_spec(write_spec(tmp_path, "apart")).spec.metrics)

    def run(score: float | None) -> Measurement:
        return Measurement(wall_s=0.1, cpu_s=0.1, user_s=0.1, sys_s=0.0, max_rss_kb=1, returncode=0 if score else 1,
                           timed_out=False, metrics={"score": score} if score else {},
                           error=None if score else "exit 1")

    winner = Confirmation(Candidate("trial 4", 4, {"big": 2}, {"score": 133.9}), compare_paired(
        [100.0] * 6, [133.9] * 6, goal="maximize"), means={"score": 133.9}, baseline_means={"score": 100.0})
    steady = {"winner": [run(133.9)] * 2, "baseline": [run(100.0)] * 2, "top 1": [run(130.0)] * 2}
    assert _not_repeating(objective, winner, steady) == ""
    # an arm that fails every run is what it measures (the benchmark fails without a change), not a variation
    assert _not_repeating(objective, winner, steady | {"top 1": [run(None)] * 2}) == ""
    assert _not_repeating(objective, winner, steady | {"top 1": [run(130.0), run(130.1)]}) == (
        "the runs no longer repeat identically (the top 1 arm's runs differ): the winner is kept whole, not ablated")
    assert "(the winner and the baseline gave other figures than before)" in _not_repeating(
        objective, winner, steady | {"winner": [run(133.8)], "baseline": [run(100.1)]})
