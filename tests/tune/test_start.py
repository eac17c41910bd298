"""``tune.start`` / ``hone tune --start``: configurations the user knows, measured first as
trials of their own; checked before anything runs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import optuna

from hone.tune.space import SearchSpace
from hone.tune.start import ATTR_START, queue_starts
from tests.tune.conftest import write_workload


def _trials(doc: dict) -> list[optuna.trial.FrozenTrial]:  # type: ignore[type-arg]
    study = optuna.load_study(study_name=doc["study"], storage=doc["storage"])
    return sorted(study.get_trials(deepcopy=False), key=lambda t: t.number)


def test_a_start_given_on_the_command_line_is_the_first_trial(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, trials=4)
    res = hone("tune", spec, "--sampler", "random", "--start", "level=3", "--start", "x=5", "--no-ablation",
               "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    assert "start 1 queued as a trial of its own: level=3 x=5" in res.out
    doc = json.loads((workload / "r.json").read_text())
    trials = _trials(doc)
    assert doc["trials"] == 4 and len(trials) == 4  # counted like any trial
    assert trials[0].user_attrs["config"] == {"level": 3, "x": 5} and trials[0].user_attrs[ATTR_START] == 1
    assert all(ATTR_START not in t.user_attrs for t in trials[1:])
    from hone.report.html import render_study_html

    page = render_study_html(optuna.load_study(study_name=doc["study"], storage=doc["storage"]), doc)
    assert "<td>0 (start 1)</td>" in page and "(start 2)" not in page
    assert doc["recommended"] == {"level": 3, "x": 5}  # the benchmark's best (score 125 against 93)
    assert (workload / "app.conf").read_text() == "level = 1\n"


def test_spec_starts_skip_the_current_configuration_and_repeats(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, trials=3)
    spec.write_text(spec.read_text().replace("top_k: 1", "top_k: 1, start: [{level: 1}, {x: 4, level: 2}, "
                                                         "{level: 2, x: 4}]"))
    res = hone("tune", spec, "--sampler", "random", "--start", "x=6", "--no-ablation", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    assert "start 1 (level=1) not measured: it is the current configuration, measured as the baseline" in res.out
    assert "start 3 (level=2 x=4) not measured: the same configuration as an earlier start" in res.out
    trials = _trials(json.loads((workload / "r.json").read_text()))
    assert [t.user_attrs["config"] for t in trials[:2]] == [{"level": 2, "x": 4}, {"level": 1, "x": 6}]
    assert [t.user_attrs[ATTR_START] for t in trials[:2]] == [2, 4]


def test_a_bad_start_is_refused_before_anything_runs(workload: Path, hone, state_dir: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload)
    good = spec.read_text()
    for bad, where in (("{nope: 1}", r"tune\.start\[0\]\.nope: no knob named 'nope'"),
                       ("{level: 9}", r"tune\.start\[0\]\.level: knob level"),
                       ("{}", r"tune\.start\[0\]: expected knob: value pairs")):
        spec.write_text(good.replace("top_k: 1", f"top_k: 1, start: [{bad}]"))
        res = hone("tune", spec)
        assert res.code == 2 and "Traceback" not in res.err, res.err
        assert re.match(rf"{re.escape(str(spec))}:\d+: {where}", res.err.splitlines()[0]), res.err
    knob = "  - {name: x, kind: param"
    spec.write_text(good.replace("top_k: 1", "top_k: 1, start: [{y: 2}]").replace(
        knob, "  - {name: y, kind: param}\n" + knob))  # no domain: set by --set only
    res = hone("tune", spec)
    assert res.code == 2 and re.match(rf"{re.escape(str(spec))}:\d+: tune\.start\[0\]\.y: knob y is not searched: "
                                      r"it has no values or range", res.err.splitlines()[0]), res.err
    spec.write_text(good)
    res = hone("tune", spec, "--start", "level=9")
    assert res.code == 2 and res.err.splitlines()[0].startswith("hone: error: --start level=9: knob level: "), res.err
    assert not (workload / "runs.log").exists() and not (state_dir / "studies.db").exists()
    assert (workload / "app.conf").read_text() == "level = 1\n"


def test_starts_are_queued_once_per_study(workload: Path) -> None:
    from hone.spec.loader import load_spec

    spec = load_spec(write_workload(workload))
    space = SearchSpace(list(spec.spec.knobs))
    study = optuna.create_study(direction="maximize")
    baseline = {"config": {"level": "1", "x": 1}}
    assert queue_starts(study, space, [{"x": 3}], baseline) == ["start 1 queued as a trial of its own: x=3"]
    assert queue_starts(study, space, [{"x": 3}], baseline) == []  # a --resume: the study has it queued
    started = optuna.create_study(direction="maximize")  # a study begun without starts, resumed with some
    started.enqueue_trial({"x": 2})
    assert queue_starts(started, space, [{"x": 3}], baseline) == [
        "start configurations not queued: the study has trials already (starts are queued when a study begins)"]
    assert len(started.get_trials()) == 1
    fresh = optuna.create_study(direction="maximize")
    said = queue_starts(fresh, space, [{"x": 3}], {"config": {"level": "9", "x": 1}})
    assert said == ["start 1 (x=3) not measured: the current value of level is outside the searched values; "
                    "name it in the start"] and not fresh.get_trials()


def test_an_earlier_winner_is_the_next_jobs_start(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, trials=3)
    res = hone("tune", spec, "--sampler", "random", "--start", "level=3", "--start", "x=5", "--no-ablation",
               "--json", workload / "first.json")
    assert res.code == 0, res.err + res.out
    first = json.loads((workload / "first.json").read_text())
    assert first["recommended"] == {"level": 3, "x": 5}
    res = hone("tune", spec, "--sampler", "random", "--start-from", workload / "first.json", "--no-ablation",
               "--json", workload / "second.json")
    assert res.code == 0, res.err + res.out
    assert "start 1 queued as a trial of its own: level=3 x=5" in res.out
    trials = _trials(json.loads((workload / "second.json").read_text()))
    assert trials[0].user_attrs["config"] == {"level": 3, "x": 5} and trials[0].user_attrs[ATTR_START] == 1
    # a result that kept the current configuration, or names a knob the spec lacks: exit 2, nothing run
    runs = (workload / "runs.log").read_text()
    for change, said in (({"recommended": None}, "field 'recommended' is null"),
                         ({"recommended": {"level": 3, "nope": 1}}, "field 'recommended.nope': no knob named")):
        (workload / "bad.json").write_text(json.dumps(first | change))
        res = hone("tune", spec, "--start-from", workload / "bad.json")
        assert res.code == 2 and said in res.err.splitlines()[0] and "bad.json" in res.err, res.err
    assert (workload / "runs.log").read_text() == runs


def test_a_winner_with_a_knob_at_its_current_value_says_so(workload: Path, hone) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(workload, trials=1)
    res = hone("tune", spec, "--sampler", "random", "--start", "level=1", "--start", "x=5",
               "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert doc["recommended"] == {"level": 1, "x": 5} and doc["unchanged"] == ["level"]
    assert "Recommendation (confirmed): x=5 (as now: level=1)" in res.out
    shown = hone("report", workload / "r.json")
    assert shown.code == 0 and "Recommendation (confirmed): x=5 (as now: level=1)" in shown.out, shown.out
