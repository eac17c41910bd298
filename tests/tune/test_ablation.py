"""``hone tune``'s ablation end to end: which of the confirmed winner's changes hold its gain,
and the smallest configuration that keeps it (real console script, deterministic benchmark)."""

from __future__ import annotations

import json
from pathlib import Path

import optuna

from tests.tune.conftest import write_three_knobs as write_spec


def test_a_change_without_measurable_effect_is_dropped_and_the_minimal_configuration_recommended(
        hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_spec(tmp_path, "apart")
    res = hone("tune", spec, "--json", tmp_path / "r.json", "--html", tmp_path / "r.html", "--apply-best")
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
