"""``hone tune`` end to end on a tiny workload (real console script, real store)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState

from hone.tune.study import study_names
from hone.tune.tuner import default_study_name
from tests.conftest import HONE_BIN, CliResult
from tests.tune.conftest import tune_killed_after, write_workload

JSON_FIELDS = {"recommended", "baseline", "recommended_metrics", "improvement_pct", "ci_pct", "p_value", "verdict",
               "trials", "failed_trials", "seed", "storage", "study"}


def _env(workload: Path, state_dir: Path) -> dict[str, str]:
    return {**os.environ, "HONE_STATE_DIR": str(state_dir), "HONE_TEST_LOG": str(workload / "runs.log"),
            "COLUMNS": "200"}


@dataclass(frozen=True)
class Shared:
    """Studies that several tests read, each run once for the module (its own state dir)."""

    storage: str
    big: CliResult  # noisy, repeats 3, top 3, a large space: study "m", result m.json
    small: CliResult  # the same in 56 configurations: study "s", result s.json
    result_dir: Path


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Shared:
    root = tmp_path_factory.mktemp("tune-shared")
    state, machine = root / "state", root / "machine"
    env = {**_env(root, state), "HONE_MACHINE_DIR": str(machine)}

    def tune(spec: Path, *args: str | Path) -> CliResult:
        proc = subprocess.run([HONE_BIN, "tune", str(spec), *map(str, args)], capture_output=True, text=True,
                              timeout=300, env=env)
        return CliResult(proc.returncode, proc.stdout, proc.stderr)

    quiet = write_workload(root, trials=6, repeats=1)  # the tiny benchmark is deterministic
    res = tune(quiet, "--study", "a", "--seed", "11", "--confirm", "0")
    assert res.code == 0, res.err + res.out
    # level × x × an inert knob of 10 001 values: 560 056 configurations, too many to enumerate;
    # the noisy mode makes the baseline's repeats report ~3% noise per trial
    pad = "\n  - {name: pad, kind: env, var: HONE_PAD, type: int, range: [0, 10000], default: 0}\ntune:"
    spec = write_workload(root, mode="noisy", trials=6, repeats=3)
    spec.write_text(spec.read_text().replace("top_k: 1", "top_k: 3").replace("\ntune:", pad))
    big = tune(spec, "--json", root / "m.json", "--study", "m")
    small = write_workload(root, mode="noisy", trials=6, repeats=3)  # 56 configurations: observed only
    small.write_text(small.read_text().replace("top_k: 1", "top_k: 3"))
    small_res = tune(small, "--json", root / "s.json", "--study", "s")
    return Shared(f"sqlite:///{state / 'studies.db'}", big, small_res, root)


def test_tune_finds_confirmed_winner_and_restores_every_knob(workload, hone, state_dir):
    spec = write_workload(workload, trials=8)
    before = (workload / "app.conf").read_bytes()
    res = hone("tune", spec, "--json", workload / "r.json", "--html", workload / "r.html", "--study", "s1")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert set(doc) >= JSON_FIELDS
    assert doc["trials"] == 8 and doc["failed_trials"] == 0 and doc["study"] == "s1" and doc["seed"] == 3
    assert doc["verdict"] == "faster" and doc["improvement_pct"] > 0
    assert doc["ci_pct"][0] > 0
    assert doc["recommended"]["x"] in (4, 5, 6)
    # default: every knob is back after the session
    assert (workload / "app.conf").read_bytes() == before
    assert "nothing changed" in hone("status").out
    assert "trial 8/8" in res.out and "Recommendation (confirmed)" in res.out
    assert "hone apply" in res.out and (workload / "r.html").exists()
    shown = hone("report", workload / "r.json")  # re-rendered from the result, nothing re-run
    assert shown.code == 0 and "better" in shown.out and "Recommendation (confirmed)" in shown.out  # a score
    # trial user attrs keep raw repeats, CPU/wall, exit status and the fingerprint
    study = optuna.load_study(study_name="s1", storage=doc["storage"])
    t = study.get_trials(states=(TrialState.COMPLETE,))[0]
    run = t.user_attrs["runs"][0]
    assert {"wall_s", "cpu_s", "returncode", "metrics"} <= set(run)
    assert "kernel" in t.user_attrs["fingerprint"]
    # the baseline (level 1 in app.conf, x at its default 1: index 0) is the GP's first observation
    assert study.user_attrs["hone_baseline_point"] == {"params": {"level": 1, "x": 0}, "value": 93.0}
    # ... and the space is stored: trial 0 is a start of the GP's, not a random draw
    assert set(study.user_attrs["hone_space"]) == {"level", "x"}


def test_failing_trials_are_recorded_and_the_study_goes_on(workload, hone):
    spec = write_workload(workload, mode="fail", trials=8)
    res = hone("tune", spec, "--json", workload / "r.json", "--study", "f")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert doc["trials"] == 8
    assert doc["failed_trials"] >= 1
    study = optuna.load_study(study_name="f", storage=doc["storage"])
    failed = study.get_trials(states=(TrialState.FAIL,))
    assert all("exited with code 1" in t.user_attrs["fail_reason"] for t in failed)
    assert "FAILED" in res.out


def test_the_search_stops_once_every_configuration_is_measured(workload, hone):
    # 2 × 2 configurations, one of them the baseline (level 1, x 1): three trials measure the
    # rest, and the 5 trials left would only measure one again
    spec = write_workload(workload, trials=8)
    spec.write_text(spec.read_text().replace("type: int, range: [0, 6]", "values: [1, 3]")
                    .replace("values: [1, 2, 3, 4, 5, 6, 7, 8]", "values: [1, 5]"))
    res = hone("tune", spec, "--json", workload / "r.json", "--study", "all")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert doc["trials"] == 3, res.out
    study = optuna.load_study(study_name="all", storage=doc["storage"])
    measured = {tuple(sorted(t.params.items())) for t in study.trials}
    baseline = tuple(sorted(study.user_attrs["hone_baseline_point"]["params"].items()))
    assert len(measured) == 3 and baseline not in measured
    assert "search stopped after 3 of 8 trials: every one of the 4 configurations is measured" in res.out
    # ... which the estimate foresaw: the search planned as the 3 configurations left, not the 8 trials
    assert re.search(r"^estimate: ~\S+ \(3 trials × 1 run,", res.out, re.M), res.out
    assert doc["budget"]["planned_trials"] == 3
    # ... and so did the search's header and its progress
    assert "all' in sqlite" in res.out and ": 3 trials (of 8: only 3 configurations are unmeasured)" in res.out
    assert "trial 3/3 (#2)" in res.out and "/8 (#" not in res.out
    assert doc["recommended"] == {"level": 3, "x": 5} and doc["verdict"] == "faster"


def test_metric_zero_is_a_value(workload, hone):
    spec = write_workload(workload, mode="zero", trials=4)
    res = hone("tune", spec, "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    assert doc["baseline"]["score"] == 0.0
    assert doc["failed_trials"] == 0 and doc["trials"] == 4
    assert doc["recommended"] is None
    assert "keep the current configuration" in res.out
    assert "warning: score is 0 in every run of the baseline" in res.out


def test_kill_9_then_resume_loses_and_duplicates_nothing(workload, hone, state_dir):
    spec = write_workload(workload, mode="slow", trials=5)
    conf = workload / "app.conf"
    before = conf.read_bytes()
    log = workload / "runs.log"
    # baseline is run 1; killed once the third trial's benchmark is running
    tune_killed_after([str(spec), "--study", "k", "--confirm", "0"], _env(workload, state_dir), log, runs=4)
    storage = f"sqlite:///{state_dir / 'studies.db'}"
    study = optuna.load_study(study_name="k", storage=storage)
    running = study.get_trials(states=(TrialState.RUNNING,))
    assert len(running) == 1
    interrupted = running[0]
    assert "file:" in hone("status").out  # the killed trial left its value applied (journaled)

    res = hone("tune", spec, "--resume", "--study", "k", "--confirm", "0", "--json", workload / "r.json")
    assert res.code == 0, res.err + res.out
    assert "interrupted" in res.out
    study = optuna.load_study(study_name="k", storage=storage)
    trials = study.get_trials()
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    failed = [t for t in trials if t.state == TrialState.FAIL]
    assert len(complete) == 5  # the budget, no more, no less
    assert [t.number for t in failed] == [interrupted.number]
    assert failed[0].user_attrs["hone_interrupted"] is True
    requeued = [t for t in complete if t.user_attrs.get("requeued_from") == interrupted.number]
    assert len(requeued) == 1 and requeued[0].params == interrupted.params
    assert len({t.number for t in trials}) == len(trials)
    assert not any(t.state == TrialState.RUNNING for t in trials)
    # baseline measured once, reused by the resumed session
    assert study.user_attrs["hone_baseline"]["runs"]
    roll = hone("rollback")
    assert roll.code == 0
    assert conf.read_bytes() == before


def test_sigterm_restores_knobs_and_requeues_the_trial(workload, hone, state_dir):
    spec = write_workload(workload, mode="slow", trials=6)
    conf = workload / "app.conf"
    before = conf.read_bytes()
    log = workload / "runs.log"
    # --fixed-repeats: the baseline is 1 run, not the 3 that show a deterministic benchmark
    proc = subprocess.Popen([HONE_BIN, "tune", str(spec), "--study", "t", "--fixed-repeats"],
                            env=_env(workload, state_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and (not log.exists() or len(log.read_text().splitlines()) < 3):
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert conf.read_bytes() == before
    study = optuna.load_study(study_name="t", storage=f"sqlite:///{state_dir / 'studies.db'}")
    assert not study.get_trials(states=(TrialState.RUNNING,))
    assert len(study.get_trials(states=(TrialState.WAITING,))) == 1


def test_same_seed_and_same_measurements_give_the_same_suggestions(workload, hone, state_dir, shared: Shared):
    spec = write_workload(workload, trials=6)  # as study "a" of `shared`, run there the same way
    res = hone("tune", spec, "--study", "b", "--seed", "11", "--confirm", "0")
    assert res.code == 0, res.err + res.out
    a = optuna.load_study(study_name="a", storage=shared.storage).get_trials()
    b = optuna.load_study(study_name="b", storage=f"sqlite:///{state_dir / 'studies.db'}").get_trials()
    assert len(a) == 6 and [t.params for t in a] == [t.params for t in b]



def test_measured_noise_is_stored_with_the_study(shared: Shared):
    assert shared.small.code == 0, shared.small.err + shared.small.out
    # study "s": score ±5% by turns; baseline: 3 runs at +5/-5/+5% (or -5/+5/-5%) of one score:
    # CV 5.7% (5.9%), over √3
    noise = optuna.load_study(study_name="s", storage=shared.storage).user_attrs["hone_noise_cv"]
    assert 0.031 < noise < 0.035, noise
    # study "a": one run per trial, the noise is unknown
    assert optuna.load_study(study_name="a", storage=shared.storage).user_attrs["hone_noise_cv"] is None


def test_local_sampler_runs_and_resumes(workload, hone, state_dir):
    # determinism of --sampler local is unit-tested (tests/tune/test_local_sampler.py)
    spec = write_workload(workload, trials=7)  # startup 4: trials 5 (after the resume) is a local move
    args = ("tune", spec, "--study", "c", "--seed", "11", "--confirm", "0", "--sampler", "local")
    res = hone(*args, "--trials", "5")
    assert res.code == 0, res.err + res.out
    res = hone(*args, "--resume")
    assert res.code == 0, res.err + res.out
    c = optuna.load_study(study_name="c", storage=f"sqlite:///{state_dir / 'studies.db'}").get_trials()
    assert len(c) == 7 and all(t.state == TrialState.COMPLETE for t in c)


def test_gp_sampler_runs_resumes_and_confirms(workload, hone, state_dir):
    # the sampler itself is unit-tested (tests/tune/test_gp_sampler.py); here: the real loop
    spec = write_workload(workload, trials=8)
    args = ("tune", spec, "--study", "g", "--seed", "5", "--sampler", "gp")
    res = hone(*args, "--trials", "6", "--confirm", "0")
    assert res.code == 0, res.err + res.out
    res = hone(*args, "--resume", "--json", workload / "g.json")
    assert res.code == 0, res.err + res.out
    g = optuna.load_study(study_name="g", storage=f"sqlite:///{state_dir / 'studies.db'}").get_trials()
    assert len(g) == 8 and all(t.state == TrialState.COMPLETE for t in g)
    assert len({tuple(sorted(t.params.items())) for t in g}) == 8  # no configuration measured twice
    doc = json.loads((workload / "g.json").read_text())
    assert doc["verdict"] == "faster" and doc["recommended"]["x"] in (4, 5, 6, 7)


def test_the_gp_chooses_among_several_confirmed_winners(workload, hone, state_dir):
    # noise-free: the top 3 all beat the baseline (score 93); the GP's posterior mean over the
    # search and the rounds decides, and agrees with the rounds' means here
    spec = write_workload(workload, trials=10)
    # --fixed-repeats: identical runs would confirm only the best (one run per trial, 1 exact round)
    res = hone("tune", spec, "--top-k", "3", "--json", workload / "g.json", "--study", "w", "--fixed-repeats")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "g.json").read_text())
    winners = [c for c in doc["confirmations"] if c["comparison"]["verdict"] == "faster"]
    assert len(winners) >= 2 and doc["chosen_by"] == "model"
    best = max(winners, key=lambda c: c["means"]["score"])
    assert doc["recommended"] == best["config"]
    assert "by the GP's posterior mean" in res.out
    res = hone("tune", spec, "--top-k", "3", "--json", workload / "t.json", "--study", "t", "--sampler", "tpe",
               "--fixed-repeats")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "t.json").read_text())
    assert doc["chosen_by"] == "confirmation mean" and "posterior mean" not in res.out


def test_constraints_reach_optunas_samplers_as_trial_constraints(workload, hone, state_dir):
    # x <= 4 is required; the score alone would pull x to 5. TPE reads trial.constraints.
    spec = write_workload(workload, trials=10, extra_metrics="""
          - {name: xv, extract: {regex: 'x: ([0-9]+)'}, goal: minimize, weight: 0, constraint: '<= 4'}""")
    res = hone("tune", spec, "--sampler", "tpe", "--json", workload / "r.json", "--study", "c1")
    assert res.code == 0, res.err + res.out
    doc = json.loads((workload / "r.json").read_text())
    study = optuna.load_study(study_name="c1", storage=doc["storage"])
    done = study.get_trials(states=(TrialState.COMPLETE,))
    assert done and all(t.constraints == {"0": float(t.user_attrs["config"]["x"] - 4)} for t in done)
    assert any(t.constraints["0"] > 0 for t in done)  # some trials were infeasible, and known to be
    assert doc["recommended"]["x"] <= 4


def test_in_a_large_noisy_space_the_model_names_one_candidate(shared: Shared):
    res = shared.big  # 560 056 configurations (an inert knob of 10 001 values), ~3% noise per trial
    assert res.code == 0, res.err + res.out
    names = [c["name"] for c in json.loads((shared.result_dir / "m.json").read_text())["confirmations"]]
    assert len(names) == 3 and names[2].endswith("(the model's)") and "(the model's)" in res.out
    res = shared.small  # 56 configurations: observed only
    assert res.code == 0, res.err + res.out
    names = [c["name"] for c in json.loads((shared.result_dir / "s.json").read_text())["confirmations"]]
    assert len(names) == 3 and not any("model" in n for n in names)


def test_a_size_is_better_or_worse_never_faster(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # a compressor-like benchmark whose metric is a size in bytes (exact runs: a rank-sum confirmation)
    spec = tmp_path / "hone.yaml"
    spec.write_text(
        "name: size\n"
        "benchmark:\n"
        "  command: [python3, -c, \"import sys; print('bytes:', 1000 - 100 * int(sys.argv[1]))\", '{x}']\n"
        "  timeout: 30\n  warmup: 0\n  repeats: 3\n"
        "metrics:\n  - {name: bytes, extract: {regex: 'bytes: ([0-9]+)'}, goal: minimize, unit: B}\n"
        "knobs:\n  - {name: x, kind: param, values: [0, 3], default: 0}\n")
    res = hone("tune", spec, "--max-runs", "12", "--seed", "1", "--json", tmp_path / "r.json")
    assert res.code == 0, res.err + res.out
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["verdict"] == "faster" and doc["units"] == {"bytes": "B"}  # the result's word: better along the goal
    assert doc["recommended"] == {"x": 3} and doc["improvement_pct"] == pytest.approx(-30.0)
    shown = hone("report", tmp_path / "r.json")
    for out in (res.out, shown.out):
        assert "better" in out and "faster" not in out
    assert "→ better" in res.out


def test_a_study_started_in_the_same_second_as_another_gets_a_name_of_its_own(tmp_path: Path) -> None:
    storage, now = f"sqlite:///{tmp_path / 'studies.db'}", datetime(2026, 11, 30, 1, 22, 59)
    assert study_names(storage) == set() and not (tmp_path / "studies.db").exists()  # nothing created to look
    for want in ("tiny-20261130-012259", "tiny-20261130-012259-2", "tiny-20261130-012259-3"):
        name = default_study_name("tiny", study_names(storage), now)
        assert name == want
        optuna.create_study(storage=storage, study_name=name)


def test_a_default_name_another_tune_takes_after_the_look_goes_to_the_next_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two tunes of one spec started at once: both look at the storage before either creates its
    # study. The one that creates second must take the next name, not stop on Optuna's error.
    from hone.spec.loader import load_spec
    from hone.tune import tuner

    spec = write_workload(tmp_path, trials=2)
    monkeypatch.setenv("HONE_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("HONE_TEST_LOG", str(tmp_path / "runs.log"))
    storage, now = f"sqlite:///{tmp_path / 'studies.db'}", datetime(2026, 12, 6, 7, 0, 0)
    optuna.create_study(storage=storage, study_name="tiny-20261206-070000")  # the other tune's, just made
    looks: list[str] = []

    def stale_first(url: str) -> set[str]:  # the first look predates the other tune's study
        looks.append(url)
        return set() if len(looks) == 1 else study_names(url)

    monkeypatch.setattr(tuner, "study_names", stale_first)
    monkeypatch.setattr(tuner, "default_study_name",
                        lambda spec, taken, when=None: default_study_name(spec, taken, now))
    result = tuner.tune(load_spec(spec), tuner.TuneSettings(trials=2, seed=1, storage=storage, confirm_rounds=0))
    assert result.study == "tiny-20261206-070000-2" and len(looks) == 2
    assert study_names(storage) == {"tiny-20261206-070000", "tiny-20261206-070000-2"}
    assert optuna.load_study(study_name="tiny-20261206-070000", storage=storage).trials == []  # untouched


def test_a_study_name_the_user_gave_that_is_taken_is_refused_with_a_hint(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = write_workload(tmp_path, trials=2)
    storage = f"sqlite:///{tmp_path / 'studies.db'}"
    optuna.create_study(storage=storage, study_name="mine")
    res = hone("tune", spec, "--storage", storage, "--study", "mine", env={"HONE_TEST_LOG": str(tmp_path / "r.log")})
    assert res.code == 2 and "study 'mine' already exists" in res.err and "--resume" in res.err, res.err
    assert "Traceback" not in res.err and not (tmp_path / "r.log").exists()  # refused before any run
