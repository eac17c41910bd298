"""``hone``: the real ``hone tune`` pipeline on a suite problem, in this process.

The spec is what a user would write for the problem (param knobs with its default, its metrics
with their goals and A-Tune weights, ``repeats: 3``, no warm-up), tuned with ``--max-runs B``
and everything else at hone's defaults — baseline, search, confirmation, ablation, the
recommendation. Only two things are replaced, to run thousands of sessions: the benchmark run
(``run_once``: the problem's true metrics × (1 + noise·N(0, 1)) instead of a process) and the
study storage (Optuna's in-memory storage instead of SQLite). The recommendation is what
``hone tune`` would apply: the ablated winner, or the baseline kept.

Settings (``hone:key=value,…`` on the runner's command line) are TuneSettings fields
(``repeats``, ``confirm_rounds``, ``top_k``, ``ablation``, ``one_run``, ``sampler``,
``pooled_confirm``, ``pooled_rounds``, ``random_starts`` …) or fields
of hone's GP settings (``gp.NAME=value``, :class:`hone.tune.gp.GPSettings`), registered as a
sampler of their own.
"""

from __future__ import annotations

import contextlib
import os
import random
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import optuna
import yaml
from problems import Config, Problem

from . import Outcome

optuna.logging.set_verbosity(optuna.logging.ERROR)


def write_spec(problem: Problem, directory: Path, repeats: int = 3) -> Path:
    """The user's spec for ``problem`` (the benchmark command is never run here)."""
    metrics = [{"name": m.name, "extract": {"regex": f"{m.name}: ([-0-9.e+]+)"}, "goal": m.goal,
                "weight": m.weight} for m in problem.metrics]
    spec = {"name": problem.name, "benchmark": {"command": ["true"], "timeout": 60, "warmup": 0, "repeats": repeats},
            "metrics": metrics, "knobs": problem.spec_knobs()}
    path = directory / "hone.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return path


def _value(knob: Any, text: str) -> Any:
    if knob.kind in ("ordinal", "categorical"):
        for v in knob.values:
            if str(v) == text:
                return v
        raise KeyError(f"{knob.name}: {text!r}")
    return int(text) if knob.kind == "int" else float(text)


@contextlib.contextmanager
def simulated(problem: Problem, seed: int, noise: float, runs: list[Config]) -> Iterator[None]:
    """``run_once`` measures ``problem`` (each run appended to ``runs``), studies in memory."""
    from hone.run.benchmark import Measurement
    from hone.tune import study as study_mod
    from hone.tune import tuner as tuner_mod

    rng = random.Random(f"{problem.name}:{seed}:{noise}")
    knobs = {k.name: k for k in problem.knobs}

    def run_once(loaded: Any, ctx: Any, wrapper: Any = None, count: Any = None) -> Measurement:
        cfg = problem.default | {k: _value(knobs[k], v) for k, v in ctx.params.items() if k in knobs}
        runs.append(cfg)
        return Measurement(1.0, 1.0, 1.0, 0.0, 0, 0, False, metrics=problem.observe(cfg, rng, noise))

    def open_in_memory(storage: str, study_name: str, objective: Any, sampler: Any, *, create: bool,
                       spec_name: str = "") -> optuna.Study:
        study = optuna.create_study(study_name=study_name, sampler=sampler, directions=objective.directions)
        study.set_user_attr(study_mod.ATTR_SPEC, {"name": spec_name, "objective": objective.mode,
                                                  "label": objective.label,
                                                  "metrics": [m.name for m in objective.metrics], "created": 0.0})
        return study

    with mock.patch("hone.tune.study.run_once", run_once), mock.patch("hone.tune.confirm.run_once", run_once), \
            mock.patch.object(tuner_mod, "prepare_storage", lambda url: url), \
            mock.patch.object(tuner_mod, "open_study", open_in_memory):
        yield


SETTINGS = {"repeats", "confirm_rounds", "top_k", "ablation", "one_run", "sampler", "exact_aware",
            "exact_confirm", "identical_confirm", "confirm_share", "pooled_confirm", "pooled_rounds", "random_starts",
            "race", "race_all"}


def run(problem: Problem, seed: int, budget: int, noise: float, settings: dict[str, Any] | None = None) -> Outcome:
    """One ``hone tune --max-runs budget --seed seed`` session; the recommendation and the runs it used."""
    from hone.spec.loader import load_spec
    from hone.tune.gp import GPSettings
    from hone.tune.samplers import SAMPLERS, gp_factory
    from hone.tune.tuner import TuneSettings, tune

    settings = dict(settings or {})
    gp_kwargs = {k[3:]: v for k, v in settings.items() if k.startswith("gp.")}
    unknown = set(settings) - SETTINGS - {k for k in settings if k.startswith("gp.")}
    if unknown:
        raise ValueError(f"unknown hone settings: {sorted(unknown)}")
    runs: list[Config] = []
    started = time.process_time()
    with tempfile.TemporaryDirectory(prefix="hone-suite-") as tmp:
        d = Path(tmp)
        spec = write_spec(problem, d, repeats=int(settings.get("repeats", 3)))
        env = {"HONE_STATE_DIR": str(d / "state"), "HONE_MACHINE_DIR": str(d / "machine")}
        (d / "state").mkdir()
        (d / "machine").mkdir()
        loaded = load_spec(spec)
        t = loaded.spec.tune
        sampler = "suite-gp" if gp_kwargs else str(settings.get("sampler", t.sampler))
        ts = TuneSettings(trials=budget, seed=seed, sampler=sampler,
                          storage="sqlite:///unused.db", study=f"s{seed}",
                          confirm_rounds=int(settings.get("confirm_rounds", t.confirm)),
                          top_k=int(settings.get("top_k", t.top_k)),
                          ablation=bool(settings.get("ablation", t.ablation)), max_runs=budget,
                          one_run=settings.get("one_run"), exact_aware=bool(settings.get("exact_aware", True)),
                          exact_confirm=bool(settings.get("exact_confirm", True)),
                          identical_confirm=bool(settings.get("identical_confirm", True)),
                          confirm_share=float(settings.get("confirm_share", 0.2)),
                          pooled_confirm=bool(settings.get("pooled_confirm", True)),
                          pooled_rounds=settings.get("pooled_rounds"), random_starts=settings.get("random_starts"),
                          race=int(settings.get("race", TuneSettings.race)),
                          race_all=bool(settings.get("race_all", TuneSettings.race_all)))
        variant = {"suite-gp": gp_factory(GPSettings(**gp_kwargs))} if gp_kwargs else {}
        with mock.patch.dict(os.environ, env), simulated(problem, seed, noise, runs), \
                mock.patch.dict(SAMPLERS, variant):
            result = tune(loaded, ts)
    rec = dict(result.winner.candidate.config) if result.winner is not None else None
    rec_cfg = {k: v for k, v in (rec or {}).items() if k in {kn.name for kn in problem.knobs}}
    return Outcome(recommended=problem.default | rec_cfg if rec is not None else None, runs=len(runs),
                   trials=result.trials, seconds=time.process_time() - started,
                   evaluated=[problem.default | c for c in runs])


def search_only(problem: Problem, seed: int, budget: int, noise: float,
                settings: dict[str, Any] | None = None) -> tuple[list[Config], list[float]]:
    """hone's GP sampler as a plain search (no baseline, no confirmation): every evaluation one
    noisy run, as the anchors run — to tell the search's share of hone's result from the budget's."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    from engines.anchors import observer
    from hone.tune.gp import ATTR_NOISE_CV, GPSettings, HoneGPSampler

    dists: dict[str, Any] = {}
    for k in problem.knobs:
        if k.kind == "int":
            dists[k.name] = IntDistribution(int(k.low), int(k.high), log=k.log)
        elif k.kind == "float":
            dists[k.name] = FloatDistribution(k.low, k.high, log=k.log)
        elif k.kind == "ordinal":
            dists[k.name] = IntDistribution(0, len(k.values) - 1)
        else:
            dists[k.name] = CategoricalDistribution(list(k.values))
    observe = observer(problem, seed, noise)
    gp = GPSettings(**{k[3:]: v for k, v in (settings or {}).items() if k.startswith("gp.")})
    sampler = HoneGPSampler(seed=seed, settings=gp, n_startup_trials=5)  # hone tune's starts at these budgets
    study = optuna.create_study(direction="maximize", sampler=sampler)
    study.set_user_attr(ATTR_NOISE_CV, noise)
    configs, scores = [], []
    for _ in range(budget):
        t = study.ask(dists)
        cfg = {k.name: (k.values[t.params[k.name]] if k.kind == "ordinal" else t.params[k.name]) for k in problem.knobs}
        v = observe(cfg)
        study.tell(t, v)
        configs.append(cfg)
        scores.append(v)
    return configs, scores
