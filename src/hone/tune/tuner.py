"""``hone tune`` end to end: baseline → trials → confirmation → ablation → recommendation.

Every knob is restored at the end (also on a failure, Ctrl-C or SIGTERM) unless
``apply_best`` keeps the *confirmed* winner applied (journaled; `hone rollback` undoes it).
The result is a versioned JSON document (``hone-tune/2``, docs/formats.md) that ``hone report`` reads.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import math
import os
import shlex
import socket
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import optuna
from optuna.trial import TrialState

from hone.core.durations import format_duration
from hone.core.errors import HoneError
from hone.core.metrics import judged_metric, of_run
from hone.core.paths import default_storage_url, numbered
from hone.knobs import driver_for
from hone.knobs.risk import risks
from hone.run.benchmark import Measurement
from hone.run.configure import Configurator, changes_machine
from hone.run.journal import Journal, machine_lock_if
from hone.spec.loader import LoadedSpec
from hone.spec.models import Scalar
from hone.stats.detectable import detectable_gain_pct, noise_upper_bound
from hone.stats.ranksum import rounds_for_alpha
from hone.tune.ablation import (
    PRUNED_ROUNDS,
    Ablation,
    ablate,
    ablate_by_importance,
    changed_knobs,
    prune_sizes,
)
from hone.tune.confirm import (
    ALPHA,
    ATTR_RACE,
    ATTR_RACED,
    EXACT_CV,
    POOLED_ALPHA,
    Candidate,
    Confirmation,
    best_observed,
    confirm_candidates,
    confirm_pooled,
    gain_pct,
    keep_reason,
    model_observations,
    pick_candidates,
    recommend,
    repeats_identically,
    stored_runs,
)
from hone.tune.gp import GPSettings, HoneGPSampler
from hone.tune.importance import knob_importances
from hone.tune.objective import Objective, build_objective, weighted_figures_line
from hone.tune.runbudget import RunBudget, RunPlan
from hone.tune.samplers import make_sampler
from hone.tune.space import SearchSpace
from hone.tune.start import queue_starts
from hone.tune.storage import mask_url, prepare_storage
from hone.tune.study import (
    ATTR_BASELINE,
    ATTR_FAIL_KNOBS,
    ATTR_RUNS_STARTED,
    ATTR_SPEC,
    StudyExists,
    TrialOutcome,
    baseline_cv,
    constraints_from_attrs,
    ensure_baseline,
    extend_baseline,
    finished_trials,
    measured_all,
    open_study,
    record_baseline_point,
    record_space,
    record_trial_noise,
    recover_interrupted,
    run_trials,
    study_names,
    unmeasured,
)
from hone.tune.timebudget import MIN_ROUNDS, Plan, TimeBudget

TUNE_FORMAT = "hone-tune/2"
#: Samplers that measure no configuration twice while another is unmeasured (hone's GP): in a
#: discrete space the search is planned at most as long as there are configurations left.
NEVER_REPEATS = ("auto", "gp")
#: Study attr: the benchmark runs of a job under --max-runs that has not finished (None once it has).
ATTR_OPEN_RUNS = "hone_open_runs"
#: Study attr: the seconds a job under --max-time has spent, at its last run (None once it has finished).
ATTR_OPEN_TIME = "hone_open_time"
#: Baseline runs that must all repeat within EXACT_CV before hone trusts it (3 agree by chance
#: ~4% of the time at 5% noise, 6 about 0.1%); the exact confirmation pools them.
EXACT_BASELINE_RUNS = 6
#: Baseline runs that, all identical (every scored metric the same), show a deterministic benchmark:
#: noisy runs of a continuous metric never tie, so no more are needed (docs/decisions/0097).
IDENTICAL_RUNS = 3
KEEP = "keep the current configuration"


@dataclass
class TuneSettings:
    """Options of one ``hone tune`` session (CLI flags over the spec's ``tune:``)."""

    trials: int
    seed: int | None = None
    sampler: str = "auto"
    storage: str | None = None
    study: str | None = None
    resume: bool = False
    apply_best: bool = False
    pareto: bool = False
    objective: str | None = None
    random_starts: int | None = None
    repeats: int | None = None
    warmup: int | None = None
    confirm_rounds: int = 6
    top_k: int = 3
    threshold: float = 0.01
    workers: TrialWorkers | None = None  # other processes run the trials (hone tune --workers)
    ablation: bool = True  # which of a multi-knob winner's changes matter (hone.tune.ablation)
    ablation_rounds: int | None = None  # default: the confirmation's rounds
    max_time: float | None = None  # seconds for the whole session (hone.tune.timebudget)
    max_runs: int | None = None  # benchmark runs for the whole session (hone.tune.runbudget)
    max_runs_source: str = "--max-runs"  # where max_runs was given (FILE:LINE: tune.max_runs …), for errors
    one_run: bool | None = None  # one run per trial, the model weighs the noise; default: with max_runs
    exact_aware: bool = True  # runs that repeat exactly (EXACT_CV): one per trial, only the best confirmed
    exact_confirm: bool = True  # ... and confirmed by a rank-sum test with the baseline's runs (fewer rounds)
    identical_confirm: bool = True  # ... or, when they are identical, by one more run of each (an exact comparison)
    confirm_share: float = 0.2  # --max-runs: the confirmation's (and ablation's) reserve, at most this share;
    # --max-time: the confirmation's time
    pooled_confirm: bool = True  # a run or time budget with room for one candidate: its runs against all the baseline's
    pooled_rounds: int | None = None  # its rounds; default: one more than the fewest its test needs, if they fit
    race: int = 3  # noisy one-run trials under a run or time budget in a space small enough to enumerate: the
    race_all: bool = False  # search's last trials measure the best observed few again (0106); race_all: any space
    confirm_asked: bool = False  # confirm_rounds given by the user: every confirmation runs at least that many
    starts: list[dict[str, Scalar]] = field(default_factory=list)  # measured first (hone.tune.start)
    spec_path: str | None = None  # the spec the result's commands name (default: the loaded one; A-Tune's translation)


class TrialWorkers(Protocol):
    """Runs the search's trials in other processes on the same study; the tuner waits for them
    (``hone.fleet.local.LocalWorkers``). The tuner knows only this interface."""

    count: int

    def check(self, loaded: LoadedSpec) -> None: ...

    def run(self, loaded: LoadedSpec, storage: str, study: optuna.Study, *, budget: int, sampler: str,
            seed: int | None, on_trial: Callable[[TrialOutcome], None] | None = None) -> None: ...


@dataclass
class TuneEvents:
    """Callbacks for progress output (all optional)."""

    on_phase: Callable[[str, str], None] | None = None  # (phase, message)
    on_trial: Callable[[TrialOutcome, optuna.Study], None] | None = None
    on_confirm_run: Callable[[int, str, Measurement], None] | None = None
    on_ablation_run: Callable[[int, str, Measurement], None] | None = None
    on_trials: Callable[[int], None] | None = None  # the search's trial cap, once the run budget is planned


@dataclass
class TuneResult:
    """What a tune session found; :meth:`to_json` is the ``--json`` document."""

    spec_path: str
    spec_name: str
    storage: str
    study: str
    seed: int | None
    sampler: str
    objective: Objective
    baseline: dict[str, Any]
    trials: int
    failed_trials: int
    confirmations: list[Confirmation]
    winner: Confirmation | None
    importances: dict[str, float]
    applied: bool
    restore_problems: list[str] = field(default_factory=list)
    system_knobs: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)  # the winner's knobs at the baseline's value
    chosen_by: str | None = None  # how the winner was chosen among several confirmed candidates
    started: float = 0.0
    finished: float = 0.0
    ablation: Ablation | None = None  # when it ran; ``winner`` is then the configuration it recommends
    not_ablated: str | None = None  # why a winner of 2 or more changes was not ablated (the run budget)
    ablate_later: str | None = None  # ... and the ``hone tune --resume`` that measures it without new trials
    risks: list[dict[str, str]] = field(default_factory=list)  # trade-offs of the recommended values
    budget: dict[str, Any] | None = None  # the time and run budgets, the estimate, the time and runs spent
    failed_knobs: dict[str, int] = field(default_factory=dict)  # failed trials by the knob at fault, most first
    settle: dict[str, Any] | None = None  # nothing recommended, one inconclusive: the compare that settles it
    detectable_pct: float | None = None  # the smallest gain the planned confirmation shows at the baseline's noise
    detectable_pct_upper: float | None = None  # ... at the most noise the baseline's few runs do not rule out

    @property
    def verdict(self) -> str:
        if self.winner is not None:
            return self.winner.comparison.verdict
        if self.confirmations:
            return KEEP
        return "no candidate to confirm"

    def apply_command(self, spec_path: str) -> str | None:
        """The exact ``hone apply`` command for the system knobs the winner changes (None if
        it changes none: param/env knobs belong in the benchmark command instead, see
        :meth:`run_settings`). A knob already at the baseline's value is left out: setting it
        would change nothing but the file's text."""
        if self.winner is None:
            return None
        sets = [f"--set {shlex.quote(f'{k}={v}')}" for k, v in self.winner.candidate.config.items()
                if k in self.system_knobs and k not in self.unchanged]
        return f"hone apply {shlex.quote(spec_path)} " + " ".join(sets) if sets else None

    def run_settings(self) -> dict[str, Scalar]:
        """The winner's param/env knob values (they exist only inside a benchmark run)."""
        if self.winner is None:
            return {}
        return {k: v for k, v in self.winner.candidate.config.items() if k not in self.system_knobs}

    def to_json(self) -> dict[str, Any]:
        w = self.winner
        comp = w.comparison if w is not None else None
        best_conf = w or (self.confirmations[0] if self.confirmations else None)
        return {
            "format": TUNE_FORMAT,
            "spec": self.spec_path,
            "spec_name": self.spec_name,
            "recommended": dict(w.candidate.config) if w else None,
            "recommended_trial": w.candidate.trial_number if w else None,
            "unchanged": list(self.unchanged),
            "risks": self.risks,
            "chosen_by": self.chosen_by,
            "baseline_config": self.baseline.get("config", {}),
            "baseline": self.baseline.get("means", {}),
            "baseline_cv": self.baseline.get("cv", {}),
            "recommended_metrics": w.means if w else None,
            "improvement_pct": comp.change_pct if comp else None,
            "ci_pct": list(comp.ci_pct) if comp else None,
            "p_value": comp.p_value if comp else None,
            "verdict": self.verdict,
            "keep_reason": keep_reason(self.confirmations) if w is None else None,
            "best_candidate": best_conf.to_dict() if best_conf else None,
            "confirmations": [c.to_dict() for c in self.confirmations],
            "objective": {"mode": self.objective.mode, "label": self.objective.label},
            "units": {m.name: m.unit or "" for m in self.objective.metrics},
            "importances": self.importances,
            "trials": self.trials,
            "failed_trials": self.failed_trials,
            "failed_knobs": self.failed_knobs,
            "seed": self.seed,
            "sampler": self.sampler,
            "storage": mask_url(self.storage),
            "study": self.study,
            "applied": self.applied,
            "apply_command": self.apply_command(self.spec_path),
            "run_settings": self.run_settings(),
            "restore_problems": self.restore_problems,
            "ablation": self.ablation.to_dict() if self.ablation else None,
            "not_ablated": self.not_ablated,
            "ablate_later": self.ablate_later,
            "settle": self.settle,
            "detectable_pct": self.detectable_pct,
            "detectable_pct_upper": self.detectable_pct_upper,
            "budget": self.budget,
            "started": self.started,
            "finished": self.finished,
        }


def default_study_name(spec_name: str, taken: set[str], now: dt.datetime | None = None) -> str:
    """``SPEC-YYYYmmdd-HHMMSS``, with ``-2``, ``-3`` … when a study started in the same second has it."""
    return next(n for n in numbered(f"{spec_name}-{(now or dt.datetime.now()).strftime('%Y%m%d-%H%M%S')}")
                if n not in taken)


def latest_study(storage: str, spec_name: str) -> str | None:
    """The most recently created study of this spec in ``storage`` (for bare --resume)."""
    best: tuple[float, str] | None = None
    try:
        summaries = optuna.get_all_study_summaries(storage)
    except Exception:  # an empty or missing store has no studies
        return None
    for s in summaries:
        info = s.user_attrs.get(ATTR_SPEC, {})
        if info.get("name") == spec_name:
            created = float(info.get("created", 0))
            if best is None or created > best[0]:
                best = (created, s.study_name)
    return best[1] if best else None


def _restore_leftovers(study: optuna.Study, journal: Journal) -> list[str]:
    """Knobs a killed earlier session of this study left changed: restore them so the
    baseline and the trials start from the machine's real original values."""
    host = socket.gethostname()
    pids = {int(t.user_attrs["pid"]) for t in study.get_trials(deepcopy=False)
            if t.user_attrs.get("host") == host and "pid" in t.user_attrs}
    pids |= set(study.user_attrs.get("hone_pids", []))
    stale = [e for e in journal.active() if e.pid in pids]
    return [o.ident for o in journal.restore(stale) if o.ok] if stale else []


def tune(loaded: LoadedSpec, settings: TuneSettings, events: TuneEvents | None = None) -> TuneResult:
    """Run a whole tune session (see the module docstring). Raises HoneError for user
    errors; KeyboardInterrupt propagates after the knobs are restored."""
    events = events or TuneEvents()
    phase = events.on_phase or (lambda p, m: None)
    clock = TimeBudget(settings.max_time)  # --max-time counts from here
    started = time.time()  # the same moment, as the result's start
    workers = settings.workers.count if settings.workers else 1
    if settings.max_time is not None and workers > 1:
        raise HoneError("--max-time needs the trials in this process, not in --workers",
                        hint="leave out --workers, or --max-time (and the spec's tune.max_time)")
    if settings.max_runs is not None and workers > 1:
        raise HoneError("--max-runs needs the trials in this process, not in --workers",
                        hint="leave out --workers, or --max-runs (and the spec's tune.max_runs)")
    spec = loaded.spec
    space = SearchSpace(list(spec.knobs))
    objective = build_objective(spec.metrics, settings.objective or spec.tune.objective, pareto=settings.pareto)
    seed = settings.seed
    repeats = settings.repeats or spec.benchmark.repeats
    warmup = spec.benchmark.warmup if settings.warmup is None else settings.warmup
    # a budget of runs or of time: a second run of a trial costs a new configuration (docs/decisions/0040, 0103)
    budgeted = settings.max_runs is not None or settings.max_time is not None
    one_run = (budgeted if settings.one_run is None else settings.one_run) and objective.mode != "pareto"
    # --max-runs: planned, and a too small one refused, before anything runs
    runs = RunBudget(settings.max_runs, settings.max_runs_source, share=settings.confirm_share)
    poolable = objective.mode != "pareto"
    pooled_rounds = 0  # > 0: the pooled confirmation's rounds (hone.tune.confirm.confirm_pooled)
    detectable: float | None = None  # the smallest gain (%) the planned confirmation shows at the baseline's noise
    detectable_upper: float | None = None  # ... at the most noise the baseline's runs do not rule out (inf: none)
    if not settings.resume:
        pooled_rounds = _begin_runs(runs, settings, space, warmup, repeats, one_run, fresh=True, done=0,
                                    phase=phase, poolable=poolable)
    trials_cap = settings.trials  # what the sampler plans its random starts on
    if runs.search_runs is not None and runs.plan is not None:
        trials_cap = max(1, min(settings.trials, runs.search_runs // runs.plan.trial_first))
    storage = settings.storage or spec.tune.storage or default_storage_url()
    if settings.workers:
        settings.workers.check(loaded)
    storage = prepare_storage(storage)  # PostgreSQL: reachable? password? schema? (one line)
    given = settings.study or spec.tune.study  # None: a default name, chosen when the study is created
    if settings.resume and given is None:
        given = latest_study(storage, spec.name or "")
        if given is None:
            raise HoneError(f"no earlier study of {spec.name!r} in {mask_url(storage)} to resume",
                            hint="leave out --resume to start one")
    sampler = make_sampler(settings.sampler, seed=seed, n_trials=trials_cap,
                           constraints_func=constraints_from_attrs if objective.constrained else None,
                           random_starts=settings.random_starts, distributions=space.distributions)
    system = [d for d in (driver_for(k) for k in spec.knobs) if d.changes_system]
    with machine_lock_if(changes_machine(loaded), f"hone tune {loaded.path}"):
        journal = Journal()
        for attempt in range(5):  # named under the lock, which a tune may have waited for
            name = given or default_study_name(spec.name or "study", study_names(storage))
            try:
                study = open_study(storage, name, objective, sampler, create=not settings.resume,
                                   spec_name=spec.name or "")
                break
            except StudyExists:  # a tune started at the same moment took the default name: the next one
                if given or attempt == 4:
                    raise
        if settings.resume and settings.max_runs is not None:
            open_runs = study.user_attrs.get(ATTR_OPEN_RUNS)
            runs.earlier = int(open_runs or 0)  # the job's budget continues
        if settings.resume and settings.max_time is not None:
            clock.resume(float(study.user_attrs.get(ATTR_OPEN_TIME) or 0.0))  # the job's time too
        if settings.max_runs is not None or settings.max_time is not None:
            def _note_runs(total: int) -> None:  # what a --resume after a kill must count
                if settings.max_runs is not None:
                    study.set_user_attr(ATTR_OPEN_RUNS, total)
                if settings.max_time is not None:
                    study.set_user_attr(ATTR_OPEN_TIME, clock.earlier_s + clock.elapsed())
            runs.listener = _note_runs
        if settings.resume:
            stored = study.user_attrs.get(ATTR_BASELINE)
            pooled_rounds = _begin_runs(runs, settings, space, warmup, repeats, one_run, fresh=not stored,
                                        done=len(finished_trials(study)), phase=phase, poolable=poolable,
                                        stored=len((stored or {}).get("runs", [])))
            restored = _restore_leftovers(study, journal)
            if restored:
                phase("resume", f"restored knobs left changed by the killed session: {', '.join(restored)}")
            recovered = recover_interrupted(study)
            if recovered:
                phase("resume", f"trial(s) {', '.join(map(str, recovered))} were interrupted: marked failed"
                      " and queued again")
        mine = {p.resource() for d in system for p in d.parts()}
        still = [e.resource for e in journal.active() if e.resource in mine] if system else []
        if still:
            phase("warning", f"{', '.join(still)} still changed by an earlier hone session: the baseline is the"
                  " current value, not the original (`hone rollback` first to tune from the originals)")
        pids = list(study.user_attrs.get("hone_pids", []))
        study.set_user_attr("hone_pids", [*pids, os.getpid()])
        configurator = Configurator(loaded, journal)
        # fANOVA once: the trials are final after the search (the ablation by importance and the result use them)
        importances_of = functools.cache(lambda: knob_importances(study, seed=seed or 0))
        applied = False
        problems: list[str] = []
        unchanged: list[str] = []
        not_ablated: str | None = None
        ablate_later: str | None = None
        try:
            fresh, mark = not study.user_attrs.get(ATTR_BASELINE), clock.elapsed()
            phase("baseline", f"measuring the current configuration {repeats}× (noise estimate)" if fresh else
                  f"the interrupted session's ({len(study.user_attrs[ATTR_BASELINE].get('runs', []))} runs)")
            baseline = ensure_baseline(study, loaded, configurator, repeats=repeats, warmup=warmup, on_run=runs.count)
            clock.note_baseline(baseline, clock.elapsed() - mark if fresh else None, warmup)
            objective.baseline = {k: float(v) for k, v in baseline["means"].items()}
            for line in _baseline_warnings(objective, baseline):
                phase("warning", line)
            trial_runs = 1 if one_run else repeats  # what one trial's value is the mean of, mostly
            known = len(baseline.get("runs", []))  # a baseline with a failed run is refused
            probed = False  # a second run of a 1-run baseline, to see whether the runs are identical
            if fresh and known == 1 and settings.identical_confirm and settings.exact_confirm \
                    and settings.confirm_rounds and exact_runs(settings, 0.0, 1) and _room(runs, 1):
                # one run says nothing of the noise; two identical ones may show a deterministic
                # benchmark, confirmed in one run of each instead of 6 rounds (docs/decisions/0100)
                phase("baseline", "1 run says nothing of the noise: 1 more to see whether the runs repeat")
                baseline = extend_baseline(study, loaded, configurator, baseline, runs=1, on_run=runs.count)
                known, probed = len(baseline.get("runs", [])), True
            identical = _identical(settings, objective, baseline)
            if fresh and not identical and settings.exact_confirm and 1 < known < EXACT_BASELINE_RUNS \
                    and exact_runs(settings, baseline_cv(baseline, objective), 1):
                pair = _identical(settings, objective, baseline, least=2)
                # 2 runs agree within 1% by chance ~16% of the time at 5% noise, 3 ~4%: one more first,
                # and the rest only when the third agrees too (not 2 that hone added a run to)
                if known < IDENTICAL_RUNS and (pair or not probed) and _room(runs, IDENTICAL_RUNS - known):
                    phase("baseline", f"its {known} runs are identical: {IDENTICAL_RUNS - known} more to be sure"
                          if pair else f"its {known} runs repeat within {100 * EXACT_CV:g}%: 1 more to see whether "
                          "that holds")
                    baseline = extend_baseline(study, loaded, configurator, baseline,
                                               runs=IDENTICAL_RUNS - known, on_run=runs.count)
                    known, identical = len(baseline.get("runs", [])), _identical(settings, objective, baseline)
                if not identical and not probed and known < EXACT_BASELINE_RUNS \
                        and exact_runs(settings, baseline_cv(baseline, objective), 1) \
                        and _room(runs, EXACT_BASELINE_RUNS - known):
                    # a few runs agree within 1% by chance now and then: more of them before trusting it
                    phase("baseline", f"its {known} runs repeat within {100 * EXACT_CV:g}%: "
                          f"{EXACT_BASELINE_RUNS - known} more to be sure")
                    baseline = extend_baseline(study, loaded, configurator, baseline,
                                               runs=EXACT_BASELINE_RUNS - known, on_run=runs.count)
            if fresh and identical:
                phase("baseline", f"its {known} runs are identical: a deterministic benchmark")
            noise = record_trial_noise(study, baseline, objective, repeats, trial_runs)
            record_baseline_point(study, baseline, objective, space)
            record_space(study, space)
            for line in queue_starts(study, space, settings.starts, baseline):
                phase("start", line)
            if noise is not None and isinstance(sampler, HoneGPSampler) and sampler.noisy(study):
                phase("noise", f"~{100 * noise:.1f}% per trial (baseline CV/√{trial_runs}): the GP weighs it")
            top_k = settings.top_k
            exact_rounds = 0  # > 0: the exact confirmation's rounds (hone.tune.confirm.confirm_pooled)
            repeat_exactly = exact_runs(settings, noise, trial_runs)
            identical = identical and repeat_exactly
            if repeat_exactly:
                # repeats decide nothing when runs repeat exactly: one run a trial, only the best confirmed
                repeats, trial_runs, one_run, top_k, pooled_rounds = 1, 1, False, 1, 0
                # identical runs: one more run of the best and of the baseline shows they still repeat
                fewest = 1 if identical else rounds_for_alpha(len(baseline.get("runs", [])), ALPHA)
                exact_rounds = max(fewest, _asked(settings)) if settings.exact_confirm else 0
                if identical:
                    phase("noise", "the baseline's runs are identical: one run per trial, only the best configuration"
                          f" confirmed, in {exact_rounds} round{'s' if exact_rounds > 1 else ''} (the same figures "
                          "again make the comparison exact)")
                else:
                    phase("noise", f"the baseline's runs repeat within {100 * EXACT_CV:g}%: one run per trial, only"
                          " the best configuration confirmed"
                          + (f", in {exact_rounds} rounds (a rank-sum test with the baseline's runs)"
                             if exact_rounds else ""))
                exact = {"confirm_rounds": exact_rounds, "confirm_min": fewest} if exact_rounds else {}
                if identical and exact_rounds:  # the ablation's blocks too: one round decides; on the runs
                    # the search leaves only (reserved, it cost the tuning suite quality: docs/decisions/0098)
                    exact |= {"ablation_min": 1, "ablation_rounds": settings.ablation_rounds or exact_rounds,
                              "ablation_reservable": False}
                if fresh:
                    exact["baseline"] = runs.spent["baseline"]
                line = runs.replan(trial_first=warmup + 1,
                                   confirm_arms=min(runs.plan.confirm_arms, 2) if runs.plan else 0, **exact)
                if line and exact_rounds:
                    phase("runs", line)
                _say_cuts(runs, phase)
            elif fresh and runs.plan is not None and runs.spent["baseline"] > runs.plan.baseline:
                line = runs.replan(baseline=runs.spent["baseline"])  # the runs the baseline took to show its noise
                if line:
                    phase("runs", line)
            if not (exact_rounds or pooled_rounds) and settings.max_runs is None and settings.max_time is not None:
                pooled_rounds, top_k = _confirmation_in_time(settings, clock, runs, warmup, top_k,
                                                             pool=len(baseline.get("runs", [])), poolable=poolable,
                                                             phase=phase)
            budget = runs.trials_cap(len(finished_trials(study)))  # the study's trials at most
            plan = _plan(settings, study, space, warmup, repeats, one_run=one_run, budget=budget,
                         top_k=runs.confirm_arms - 1 if runs.max_runs is not None else top_k,
                         confirm_rounds=exact_rounds or pooled_rounds or None,
                         ablation_rounds=runs.plan.ablation_rounds if identical and runs.plan else None)
            if not repeat_exactly and settings.confirm_rounds > 0 and objective.mode != "pareto":
                planned_rounds = pooled_rounds or (runs.plan.confirm_rounds if runs.plan else
                                                   max(settings.confirm_rounds, MIN_ROUNDS))
                detectable, detectable_upper, line = _detectable(baseline, objective, noise, planned_rounds,
                                                                 pooled=bool(pooled_rounds))
                if line:
                    phase("noise", line)
            estimate = clock.begin(plan, max_runs=runs.left())
            phase("estimate", estimate + (_restart_note(configurator, space, plan) if estimate.startswith("~") else ""))
            _say_cuts(clock, phase)
            fewer = plan.trials < budget - plan.done  # a discrete space with fewer configurations left
            phase("trials", f"study {name!r} in {mask_url(storage)}: {plan.trials} trials"
                  + (" at most" if runs.max_runs is not None else "")
                  + (f" (of {budget - plan.done}: only {plan.trials} configurations are unmeasured)" if fewer else "")
                  + f", sampler {settings.sampler}"
                  + (f", {workers} workers" if workers > 1 else "")
                  + ("; one run each (the model weighs the noise)" if one_run and repeats > 1 else ""))
            if objective.mode == "weighted":
                phase("objective", weighted_figures_line(objective))
            if events.on_trials:
                events.on_trials(plan.done + plan.trials)
            runs.phase = "search"
            if settings.workers:
                before = {t.number for t in study.get_trials(deepcopy=False)}
                settings.workers.run(loaded, storage, study, budget=settings.trials, sampler=settings.sampler,
                                     seed=seed,
                                     on_trial=(lambda o: events.on_trial(o, study)) if events.on_trial else None)
                # the workers' runs are this session's search runs too
                runs.spent["search"] += sum(int(t.user_attrs.get(ATTR_RUNS_STARTED, 0))
                                            for t in study.get_trials(deepcopy=False) if t.number not in before)
            else:
                noisy_one = one_run and not repeat_exactly  # the race's condition (with a run or time budget)
                run_trials(study, loaded, configurator, space, objective, budget=budget,
                           repeats=1 if one_run else repeats,
                           warmup=warmup,
                           should_stop=lambda: _race(settings, study, space, runs, clock, noisy_one, phase,
                                                      cap=budget, start=plan.done)
                           or _should_stop(runs, clock, phase) or measured_all(study, space) is not None,
                           on_run=runs.count,
                           on_trial=(lambda o: events.on_trial(o, study)) if events.on_trial else None)
            clock.end_search()
            size = measured_all(study, space) if len(finished_trials(study)) < budget else None
            every = f"every one of the {size} configurations is measured (the baseline's included)" if size else ""
            for why in (clock.stopped, runs.stopped, every):
                if why:
                    phase("budget", f"search stopped after {len(finished_trials(study)) - plan.done} of "
                          f"{budget - plan.done} trials: {why}")
            top_k = min(top_k, runs.confirm_arms - 1) if runs.max_runs is not None else top_k
            top_k = min(top_k, clock.confirm_arms - 1) if clock.confirm_arms else top_k  # --max-time's
            candidates = pick_candidates(study, objective, max(1, top_k),
                                         model=sampler if isinstance(sampler, HoneGPSampler) else None)
            confirmations: list[Confirmation] = []
            runs.phase = "confirmation"
            if candidates and settings.confirm_rounds > 0:
                ablation_arms = _ablation_arms(settings, loaded, candidates, baseline)
                # the plan's rounds: the paired, exact or pooled confirmation's (before any cut of the reserve's)
                asked = runs.plan.confirm_rounds if runs.plan else settings.confirm_rounds
                arms, rounds = runs.confirmation(len(candidates) + 1, asked, ablation_arms)
                candidates = candidates[:max(0, arms - 1)]
            if candidates and settings.confirm_rounds > 0 and (exact_rounds or pooled_rounds):
                mark = clock.elapsed()
                confirmation, paired = _confirm_pooled(loaded, configurator, objective, candidates[0], baseline,
                                                       runs, events, rounds=rounds,
                                                       exact=bool(exact_rounds), identical=identical,
                                                       warmup=min(1, warmup),
                                                       seed=seed or 0, threshold=settings.threshold, phase=phase,
                                                       clock=clock)
                clock.note_runs(clock.elapsed() - mark, (rounds + min(1, warmup)) * 2)
                confirmations = [confirmation]
                candidates = candidates[:1] if paired else []
                rounds = max(settings.confirm_rounds, MIN_ROUNDS) if runs.left() is None else MIN_ROUNDS
            if candidates and settings.confirm_rounds > 0:
                arms = len(candidates) + 1
                rounds = min(rounds, clock.confirm_rounds(settings.confirm_rounds, arms, ablation_arms))
                _say_cuts(clock, phase)
                _say_cuts(runs, phase)
                mark = clock.elapsed()
                phase("confirm", f"confirming the top {len(candidates)} against the baseline in interleaved rounds")
                confirmations = confirm_candidates(
                    loaded, configurator, objective, candidates,
                    rounds=rounds, warmup=min(1, warmup), seed=seed or 0,
                    threshold=settings.threshold, on_run=_counted(runs, events.on_confirm_run),
                )
                clock.note_runs(clock.elapsed() - mark, (rounds + min(1, warmup)) * arms)
            _say_cuts(runs, phase)
            order = _model_order(sampler, study, confirmations, trial_runs)
            winner = recommend(confirmations, order)
            chosen_by = _chosen_by(confirmations, order)
            runs.phase = "ablation"
            # identical runs that gave the winner's figures again: the ablation compares exactly too
            exact_ablation = identical and winner is not None and winner.comparison.estimator == "exact"
            ablation = None if winner is None else _ablate_winner(
                loaded, configurator, objective, winner, baseline, settings, clock, runs, events, importances_of,
                warmup=min(1, warmup), seed=seed or 0, exact=repeat_exactly, identical=exact_ablation)
            if ablation is not None and ablation.confirmation is not None:
                winner = ablation.confirmation  # the minimal configuration is the recommendation
            if winner is not None:
                changed = set(changed_knobs(loaded, winner.candidate.config, baseline.get("config", {})))
                unchanged = [k for k in winner.candidate.config if k not in changed]
                if ablation is None and runs.ablation_skipped and len(changed) >= 2:
                    need, left = runs.ablation_skipped
                    least = runs.plan.pruned_runs(runs.plan.ablation_min if exact_ablation else MIN_ROUNDS, 1) \
                        if runs.plan else need
                    not_ablated = (f"which of its {len(changed)} changes carry the gain was not measured: the "
                                   f"ablation needs up to {need} runs (by importance, at least {least}), "
                                   f"--max-runs left {left}")
                    # the confirmation again, with a round more than a cut one had, then the whole ablation
                    again = runs.spent.get("confirmation", 0) + 2 * (1 + min(1, warmup))
                    ablate_later = _ablate_later(settings, loaded, storage, name, study, runs=need + again)
                elif ablation is None and clock.ablation_skipped and len(changed) >= 2:
                    need_s, left_s = clock.ablation_skipped
                    not_ablated = (f"which of its {len(changed)} changes carry the gain was not measured: the "
                                   f"ablation needs ~{format_duration(need_s)}, --max-time left "
                                   f"{format_duration(left_s)}")
                    confirm_s = clock.baseline_per_run * runs.spent.get("confirmation", 0)
                    ablate_later = _ablate_later(settings, loaded, storage, name, study, seconds=need_s + confirm_s)
            if settings.apply_best and winner is not None:
                # Only the changes: apply() puts every other resource at its starting state.
                configurator.apply({k: v for k, v in winner.candidate.config.items() if k in changed})
                applied = True
        finally:
            if not applied:
                problems = configurator.restore()
        importances = importances_of()
        trials = finished_trials(study)
    failed = sum(1 for t in trials if t.state == TrialState.FAIL)
    blamed = Counter(k for t in trials if t.state == TrialState.FAIL for k in t.user_attrs.get(ATTR_FAIL_KNOBS, []))
    result = TuneResult(
        spec_path=_spec_arg(settings, loaded), spec_name=spec.name or "", storage=storage, study=name,
        seed=seed,
        sampler=settings.sampler, objective=objective, baseline=baseline, trials=len(trials), failed_trials=failed,
        confirmations=confirmations, winner=winner, importances=importances, applied=applied,
        restore_problems=problems, chosen_by=chosen_by, started=started, finished=time.time(),
        ablation=ablation, budget=_budget(clock, runs, len(trials)),
        system_knobs=[n for n, d in configurator.drivers.items() if d.changes_system], unchanged=unchanged,
        risks=risks(list(spec.knobs), dict(winner.candidate.config)) if winner is not None else [],
        failed_knobs=dict(blamed.most_common()), not_ablated=not_ablated, ablate_later=ablate_later,
        settle=_settle(loaded, settings, objective, confirmations, baseline, clock.per_run) if winner is None else None,
        detectable_pct=detectable, detectable_pct_upper=detectable_upper,
    )
    study.set_user_attr("hone_result", _jsonable(result.to_json()))
    if settings.max_runs is not None:
        study.set_user_attr(ATTR_OPEN_RUNS, None)  # the job finished: a later --resume starts a new budget
    if settings.max_time is not None:
        study.set_user_attr(ATTR_OPEN_TIME, None)
    return result


def _baseline_warnings(objective: Objective, baseline: dict[str, Any]) -> list[str]:
    """What the baseline says is wrong before the search: a scored metric that is 0 in every run
    (an A-Tune get pipeline prints 0 when the line it greps for is missing), a constraint it misses."""
    out = []
    for m in objective.metrics:
        measured = [of_run(r, m.name) for r in baseline.get("runs", [])]
        if measured and all(v == 0 for v in measured):
            out.append(f"{m.name} is 0 in every run of the baseline: a change against 0 has no percentage, so the "
                       "confirmation cannot show a configuration better on it — check that the benchmark's output "
                       "still has it")
    for m in objective.violated(baseline["means"]):
        out.append(f"the baseline does not meet {m.name} {m.constraint} (its mean: "
                   f"{float(baseline['means'][m.name]):,.6g}): only configurations that do can be recommended")
    return out


def _confirm_pooled(loaded: LoadedSpec, configurator: Configurator, objective: Objective, candidate: Candidate,
                    baseline: dict[str, Any], runs: RunBudget, events: TuneEvents, *, rounds: int, exact: bool,
                    identical: bool, warmup: int, seed: int, threshold: float,
                    phase: Callable[[str, str], None], clock: TimeBudget) -> tuple[Confirmation, bool]:
    """The pooled confirmation (:func:`hone.tune.confirm.confirm_pooled`) and whether the paired
    one must follow: the baseline's runs showed they cannot be pooled and the runs and the time
    left (if counted) allow it."""
    phase("confirm", f"confirming the best in {rounds} interleaved round{'s' if rounds != 1 else ''} with the baseline")
    need = runs.plan.confirm_runs(MIN_ROUNDS, 2) if runs.plan else 0

    def paired_fits() -> bool:
        left = runs.left()
        in_time = not math.isfinite(clock.per_run) or clock.left() >= need * clock.per_run
        return (left is None or left >= need) and in_time

    confirmation, how = confirm_pooled(loaded, configurator, objective, candidate,
                                       stored_runs(baseline.get("runs", [])), rounds=rounds, exact=exact,
                                       identical=identical, warmup=warmup, seed=seed, threshold=threshold,
                                       on_run=_counted(runs, events.on_confirm_run), paired_fits=paired_fits)
    if how in ("pooled", "identical"):
        return confirmation, False
    drifted = ("the runs no longer repeat identically" if identical else
               f"the baseline's runs no longer repeat within {100 * EXACT_CV:g}%" if exact else
               "the baseline's runs beside the candidate were all better than its runs before the search (a drift)")
    where = "the time" if runs.left() is None else f"the {runs.left()}"
    no_room = f"the paired confirmation ({need} runs) does not fit in {where} left"
    if how == "beside":
        runs.cuts.append(f"{drifted}: the candidate was judged against those {rounds} runs only (p < {ALPHA:g}); "
                         f"{no_room}")
        return confirmation, False
    if not paired_fits():
        runs.cuts.append(f"{drifted} and {no_room}")
        return confirmation, False
    phase("confirm", f"{drifted}: the paired confirmation instead")
    return confirmation, True


def _room(runs: RunBudget, more: int) -> bool:
    """Do ``more`` baseline runs still leave the run budget a trial and the smallest confirmation?"""
    left = runs.left()
    return left is None or runs.plan is None or left - more >= RunBudget.minimum(runs.plan) - runs.plan.baseline


def _identical(settings: TuneSettings, objective: Objective, baseline: dict[str, Any],
               least: int = IDENTICAL_RUNS) -> bool:
    """Are the baseline's runs, ``least`` or more, identical (a deterministic benchmark)?"""
    stored = baseline.get("runs", [])
    return (settings.identical_confirm and settings.exact_confirm and len(stored) >= least
            and repeats_identically(objective, stored_runs(stored)))


def exact_runs(settings: TuneSettings, noise: float | None, trial_runs: int) -> bool:
    """Do the baseline's runs repeat within :data:`EXACT_CV` (a deterministic benchmark: counted
    instructions, a simulator, a replayed table)? Then a second run of a configuration decides
    nothing (docs/decisions/0019-exact-runs.md). Not with ``--fixed-repeats``, and only for trials
    run by this process."""
    if not settings.exact_aware or settings.one_run is False or settings.workers or noise is None:
        return False
    return noise * math.sqrt(trial_runs) < EXACT_CV


def _restart_note(configurator: Configurator, space: SearchSpace, plan: Plan) -> str:
    """Before any trial, what the estimate leaves out: the baseline's runs never restart what a
    knob's change restarts (a broker took 1.5–1.9× the estimate a trial, docs/decisions/0115)."""
    if plan.done:
        return ""
    restarting = [d.name for d in space.dimensions if (drv := configurator.drivers.get(d.name)) is not None
                  and (drv.restarts_service() or drv.restart_command() is not None)]
    if not restarting:
        return ""
    return (f"; not in it yet: the restarts a change of {len(restarting)} knob{'s' if len(restarting) > 1 else ''}"
            f" needs ({', '.join(restarting[:3])}{', …' if len(restarting) > 3 else ''}), revised when trials "
            "have measured them")


def _plan(settings: TuneSettings, study: optuna.Study, space: SearchSpace, warmup: int, repeats: int, *,
          one_run: bool = False, budget: int | None = None, top_k: int | None = None,
          confirm_rounds: int | None = None, ablation_rounds: int | None = None) -> Plan:
    """The work left after the baseline, for the estimate and --max-time; the ablation is
    counted at its largest (every knob changed). ``top_k``: the candidates the run budget
    leaves room for; ``confirm_rounds``: the exact confirmation's rounds, when it is one;
    ``ablation_rounds``: the exact ablation's, when the runs repeat identically."""
    done = len(finished_trials(study))
    confirm = (confirm_rounds or max(settings.confirm_rounds, MIN_ROUNDS)) if settings.confirm_rounds > 0 else 0
    knobs = len(space.distributions)
    top_k = settings.top_k if top_k is None else max(1, min(top_k, settings.top_k))
    budget = settings.trials if budget is None else budget
    trials = max(0, budget - done)
    left = unmeasured(study, space) if settings.sampler in NEVER_REPEATS else None
    if left is not None:  # the search stops once every configuration is measured
        trials = min(trials, left)
    return Plan(trials=trials, runs_per_trial=warmup + (1 if one_run else repeats),
                confirm_arms=top_k + 1 if confirm else 0, confirm_rounds=confirm,
                ablation_arms=knobs + 1 if settings.ablation and confirm and knobs >= 2 else 0,
                ablation_rounds=ablation_rounds or max(settings.ablation_rounds or confirm, MIN_ROUNDS),
                warmup_rounds=min(1, warmup), workers=settings.workers.count if settings.workers else 1, done=done)


def _asked(settings: TuneSettings) -> int:
    """The confirmation rounds the user asked for (``--confirm``, a written ``tune.confirm``), else 0:
    the pooled and exact confirmations then run as few as their tests need."""
    return settings.confirm_rounds if settings.confirm_asked else 0


def _begin_runs(runs: RunBudget, settings: TuneSettings, space: SearchSpace, warmup: int, repeats: int,
                one_run: bool, *, fresh: bool, done: int, phase: Callable[[str, str], None],
                poolable: bool = False, stored: int = 0) -> int:
    """Plan the run budget (a HoneError when it is too small) and say the plan. Returns the
    pooled confirmation's rounds, 0 for the paired one: pooled when the budget leaves room for one
    candidate only, the baseline has 2 runs or more (measured now, or ``stored`` by the
    interrupted session a ``--resume`` continues), and ``poolable`` (one objective)."""
    confirm = settings.confirm_rounds > 0
    knobs = len(space.distributions)
    plan = RunPlan(
        baseline=warmup + repeats if fresh else 0, trial_first=warmup + (1 if one_run else repeats),
        confirm_arms=settings.top_k + 1 if confirm else 0,
        confirm_rounds=max(settings.confirm_rounds, MIN_ROUNDS),
        ablation_arms=knobs + 1 if settings.ablation and confirm and knobs >= 2 else 0,
        ablation_rounds=max(settings.ablation_rounds or settings.confirm_rounds, MIN_ROUNDS),
        warmup_rounds=min(1, warmup), trials=max(0, settings.trials - done))
    pooled = False
    pool = repeats if fresh else stored  # the baseline's runs the confirmation would pool
    if settings.pooled_confirm and poolable and confirm and pool >= 2 and settings.max_runs is not None:
        probe = RunBudget(settings.max_runs, share=settings.confirm_share)
        probe.earlier = runs.earlier
        try:
            probe.begin(plan)
            pooled = probe.confirm_arms == 2
        except HoneError:
            pooled = True  # not even the paired confirmation of one candidate fits
        if pooled:
            fewest, rounds = _pooled_rounds(settings, pool)
            plan = dataclasses.replace(plan, confirm_arms=2, confirm_min=fewest, confirm_rounds=rounds)
    line = runs.begin(plan)
    if line:
        phase("runs", line)
        if pooled and settings.top_k > 1:
            runs.cuts.append(f"--max-runs {settings.max_runs}: 1 candidate instead of {settings.top_k} (the paired "
                             "confirmation would leave room for one only)")
        _say_cuts(runs, phase)
    if pooled:
        _say_pooled(phase, runs.confirm_rounds, pool, "runs")
    return runs.confirm_rounds if pooled else 0


def _pooled_rounds(settings: TuneSettings, pool: int) -> tuple[int, int]:
    """The pooled confirmation's (fewest rounds its test needs against ``pool`` baseline runs,
    rounds): one more than the fewest (the paired test's power) unless the user asked otherwise."""
    fewest = rounds_for_alpha(pool, POOLED_ALPHA)
    return fewest, max(fewest, _asked(settings) or settings.pooled_rounds or fewest + 1)


def _say_pooled(phase: Callable[[str, str], None], k: int, pool: int, left: str) -> None:
    phase("runs", f"the confirmation pools the baseline's runs: the best configuration's {k} new runs "
          f"against the baseline's {pool} + {k} in a rank-sum test (p < {POOLED_ALPHA:g}); the paired "
          f"one ({MIN_ROUNDS} rounds) instead if the baseline drifts and the {left} left allow it, else the "
          f"candidate's runs against the baseline's beside them only (p < {ALPHA:g})")


def _confirmation_in_time(settings: TuneSettings, clock: TimeBudget, runs: RunBudget, warmup: int, top_k: int, *,
                          pool: int, poolable: bool, phase: Callable[[str, str], None]) -> tuple[int, int]:
    """``--max-time`` alone, after the baseline showed the cost of a run: the confirmation within
    ``confirm_share`` of the job's time, as ``--max-runs`` keeps it within that share of the runs
    (a time budget is a run budget at that cost, docs/decisions/0105) — fewer candidates, then
    the pooled confirmation of one. Returns (the pooled confirmation's rounds or 0, the candidates)."""
    if clock.max_s is None or not math.isfinite(clock.per_run) or clock.per_run <= 0 or settings.confirm_rounds <= 0:
        return 0, top_k
    share_s = settings.confirm_share * (clock.max_s - clock.earlier_s)
    capped = False  # a trial cap leaves more time idle than the share: the confirmation may have it (0111)
    if runs.plan is not None:
        idle_s = clock.left() - runs.plan.trials * runs.plan.trial_first * clock.per_run
        capped, share_s = idle_s > share_s, max(share_s, idle_s)
    label = f"--max-time {format_duration(clock.max_s)}"

    def paired_s(arms: int) -> float:
        return (max(settings.confirm_rounds, MIN_ROUNDS) + min(1, warmup)) * arms * clock.per_run

    def keep(n: int) -> int:
        if n < top_k:
            gets = (f"the {format_duration(share_s)} the trial cap leaves" if capped else
                    f"at most {100 * settings.confirm_share:g}% of the time")
            clock.cuts.append(f"{label}: {n} candidate{'s' if n > 1 else ''} instead of {top_k} (the "
                              f"confirmation gets {gets}, the search the rest)")
        return min(n, top_k)

    fits = next((a for a in range(top_k + 1, 1, -1) if paired_s(a) <= share_s), 0)
    pooled = settings.pooled_confirm and poolable and pool >= 2 and (fits == 0 or fits == 2)
    if not pooled:
        return 0, keep(max(1, fits - 1))  # not even one fits: one, as --max-runs keeps
    fewest, rounds = _pooled_rounds(settings, pool)
    runs.replan(confirm_arms=2, confirm_rounds=rounds, confirm_min=fewest)
    _say_pooled(phase, rounds, pool, "time")
    return rounds, keep(1)


def _ablate_later(settings: TuneSettings, loaded: LoadedSpec, storage: str, name: str, study: optuna.Study, *,
                  runs: int | None = None, seconds: float | None = None) -> str:
    """The ``hone tune --resume`` that measures a winner the budget left unablated: the study's
    trials as the cap (no new ones), a budget for the confirmation again and the whole ablation."""
    parts = ["hone", "tune", _spec_arg(settings, loaded), "--resume", "--study", name,
             "--trials", str(len(finished_trials(study)))]
    if settings.storage:  # one the spec names it reads again
        parts += ["--storage", mask_url(storage)]
    if runs is not None:
        parts += ["--max-runs", str(runs)]
    elif seconds is not None and math.isfinite(seconds):
        parts += ["--max-time", f"{max(1, math.ceil(seconds / 60))}m"]
    return shlex.join(parts)


#: ``hone compare`` looks at R, 2R and 4R rounds while undecided, α spent over the looks
SETTLE_LOOKS = 4


def _detectable(baseline: dict[str, Any], objective: Objective, noise: float | None, rounds: int, *,
                pooled: bool) -> tuple[float | None, float | None, str]:
    """The smallest gain (%) the planned confirmation shows 8 times in 10 at the noise of the
    baseline's runs, the same at the most noise those few runs do not rule out (90%, inf when no
    gain would show), and the line that says both; (None, None, "") when the noise is unknown. A
    user who pays for each run learns before the search which gains the budget can confirm at
    all: ``rounds`` paired rounds, or (``pooled``) that many runs of the best against the
    baseline's runs and as many new ones, in the exact rank test each uses
    (:mod:`hone.stats.detectable`). Three runs leave the noise uncertain by up to 3×: the line
    says how far the figure could be off."""
    cv = baseline_cv(baseline, objective) if noise is not None else None
    if cv is None or not cv > 0 or rounds <= 0:
        return None, None, ""
    measured = len(baseline.get("runs", []))  # a baseline with a failed run is refused
    if pooled:
        def gain(c: float) -> float:
            return detectable_gain_pct(c, "pooled", rounds, measured + rounds, alpha=POOLED_ALPHA)
        how = f"{rounds} new runs of the best against the baseline's {measured + rounds}"
    else:
        def gain(c: float) -> float:
            return detectable_gain_pct(c, "paired", rounds, alpha=ALPHA)
        how = f"{rounds} paired rounds"
    pct = gain(cv)
    if not math.isfinite(pct):
        return None, None, ""
    line = (f"at {100 * cv:.1f}% run to run (the baseline's {measured} runs), the confirmation ({how}) shows "
            f"a gain of about {pct:.0f}% or more 8 times in 10; a smaller one most likely ends inconclusive "
            "(the current configuration kept)")
    cv_hi = noise_upper_bound(cv, measured)
    upper = gain(cv_hi) if math.isfinite(cv_hi) else None
    if upper is not None:
        at = f"about {upper:.0f}%" if math.isfinite(upper) else "more than any gain it could show"
        line += (f". {measured} runs do not rule out noise up to {100 * cv_hi:.0f}% (90% bound), where it would take "
                 f"{at}")
    return pct, upper, line


def _settle(loaded: LoadedSpec, settings: TuneSettings, objective: Objective, confirmations: list[Confirmation],
            baseline: dict[str, Any], per_run_s: float = math.nan) -> dict[str, Any] | None:
    """Nothing recommended and a candidate's verdict inconclusive with an estimated gain of at
    least the threshold: the ``hone compare`` of its changes against the machine as it is, in
    fresh interleaved rounds, that settles it. A user who pays for each run can spend them on
    this one candidate instead of a new search. The first look comes at about the rounds its
    confirmation says would settle it (at least the 6 the paired test needs); the looks double
    up to 4× that while undecided; ``per_run_s`` (the session's latest seconds per run) prices
    both in time, for a user who weighs hours of runs before starting them.
    A weighted objective is compared on the figure the confirmation judged (``--metric
    objective``, or its heaviest metric when a run had one ≤ 0); a Pareto front has no one
    figure to settle."""
    # below the threshold, more rounds could show it equivalent at best, never a gain to recommend
    open_ = [c for c in confirmations
             if c.comparison.verdict == "inconclusive" and gain_pct(c) >= 100 * settings.threshold]
    if objective.mode == "pareto" or not open_:
        return None
    best = max(open_, key=gain_pct)
    changed = changed_knobs(loaded, best.candidate.config, baseline.get("config", {}))
    values = {k: str(best.candidate.config[k]) for k in changed}
    if not values or any("," in v for v in values.values()):  # a comma would split the --variant
        return None
    rounds = max(MIN_ROUNDS, best.comparison.rounds_needed or 0)
    variant = "best:" + ",".join(f"{k}={v}" for k, v in values.items())
    parts = ["hone", "compare", _spec_arg(settings, loaded), "--variant", variant,
             "--rounds", str(rounds), "--max-rounds", str(SETTLE_LOOKS * rounds), "--max-time", "0"]
    # named even where it is compare's default: a printed command should say what it judges
    parts += ["--metric", judged_metric(objective.mode, [m.name for m in objective.metrics], best.judged_alone)]
    if not math.isclose(settings.threshold, 0.01):  # ... and a 1% threshold
        parts += ["--threshold", f"{100 * settings.threshold:g}"]
    command = shlex.join(parts)
    first_s = most_s = None
    if math.isfinite(per_run_s) and per_run_s > 0:  # two runs a round
        first_s, most_s = 2 * rounds * per_run_s, 2 * SETTLE_LOOKS * rounds * per_run_s
    return {"candidate": best.candidate.name, "trial": best.candidate.trial_number, "config": values,
            "rounds": rounds, "max_rounds": SETTLE_LOOKS * rounds, "first_look_s": first_s, "max_s": most_s,
            "command": command}


def _spec_arg(settings: TuneSettings, loaded: LoadedSpec) -> str:
    """The spec as the user named it (for the commands hone prints), else its loaded path."""
    return str(settings.spec_path or loaded.path)


def _budget(clock: TimeBudget, runs: RunBudget, trials_total: int) -> dict[str, Any]:
    """The result's ``budget``: time and runs, their cuts and why the search stopped, together."""
    doc = clock.to_dict(trials_total) | runs.to_dict()
    doc["cuts"] = [*doc["cuts"], *runs.cuts]
    doc["search_stopped"] = doc["search_stopped"] or runs.stopped
    return doc


def _counted(runs: RunBudget, on_run: Callable[[int, str, Measurement], None] | None
             ) -> Callable[[int, str, Measurement], None]:
    """``on_run`` of an interleaved block, counting every run (warm-up rounds included)."""
    def counted(rnd: int, name: str, m: Measurement) -> None:
        runs.count()
        if on_run:
            on_run(rnd, name, m)

    return counted


def _ablation_arms(settings: TuneSettings, loaded: LoadedSpec, candidates: list[Candidate],
                   baseline: dict[str, Any]) -> int:
    """The ablation's leave-one-out arms if the candidate changing the most knobs wins (0: none)."""
    most = max(len(changed_knobs(loaded, c.config, baseline.get("config", {}))) for c in candidates)
    return most + 1 if settings.ablation and most >= 2 else 0


def _ablate_winner(loaded: LoadedSpec, configurator: Configurator, objective: Objective, winner: Confirmation,
                   baseline: dict[str, Any], settings: TuneSettings, clock: TimeBudget, runs: RunBudget,
                   events: TuneEvents, importances: Callable[[], dict[str, float]], *, warmup: int, seed: int,
                   exact: bool = False, identical: bool = False) -> Ablation | None:
    """The ablation of a winner that changes two or more knobs (None when off or not needed);
    ``identical``: the runs repeat identically and the winner gave its figures again, so its
    blocks run the planned rounds (one by default) and compare exactly."""
    phase = events.on_phase or (lambda p, m: None)
    changed = changed_knobs(loaded, winner.candidate.config, baseline.get("config", {}))
    if not settings.ablation or len(changed) < 2:
        return None
    least = runs.plan.ablation_min if identical and runs.plan else MIN_ROUNDS
    asked = (runs.plan.ablation_rounds if identical and runs.plan else
             settings.ablation_rounds or settings.confirm_rounds)
    fit = runs.ablation(asked, len(changed) + 1, least=least)
    exactly = " (exactly: the runs repeat identically)" if identical else ""
    if fit is None:
        # leave-one-out does not fit: the changes pruned by importance, as many arms as the runs left pay for
        pruned = runs.pruned(asked if exact else max(asked, PRUNED_ROUNDS),
                             len(prune_sizes(len(changed), len(changed))), least=least)  # every arm there is
        _say_cuts(runs, phase)
        if pruned is None:
            return None
        rounds, arms = pruned
        # --max-time: timed as leave-one-out of arms − 1 (+ 3) arms, one more than it runs when arms = 1
        rounds = min(rounds, clock.ablation_rounds(rounds, max(1, arms - 1), least=least))
        _say_cuts(clock, phase)
        if not rounds:
            return None
        phase("ablation", f"which of the winner's {len(changed)} changes hold its gain: the winner pruned to its most "
              f"important changes by the knob importances, against the baseline and the winner, interleaved{exactly}")
        return ablate_by_importance(loaded, configurator, objective, winner, baseline.get("config", {}),
                                    importances(), arms=arms, rounds=rounds, warmup=warmup,
                                    seed=seed, threshold=settings.threshold,
                                    on_run=_counted(runs, events.on_ablation_run), identical=identical)
    _say_cuts(runs, phase)
    rounds = min(fit, clock.ablation_rounds(asked, len(changed) + 1, least=least))
    _say_cuts(clock, phase)
    if not rounds:
        return None
    phase("ablation", f"which of the winner's {len(changed)} changes hold its gain: the winner vs the winner with"
          f" each change undone, interleaved{exactly}")
    return ablate(loaded, configurator, objective, winner, baseline.get("config", {}), rounds=rounds, warmup=warmup,
                  seed=seed, threshold=settings.threshold, on_run=_counted(runs, events.on_ablation_run),
                  identical=identical)


def _race(settings: TuneSettings, study: optuna.Study, space: SearchSpace, runs: RunBudget, clock: TimeBudget,
          noisy: bool, phase: Callable[[str, str], None], *, cap: int, start: int) -> bool:
    """Asked before each trial: when the search has ``settings.race`` trials left (whichever of the
    run budget, the time budget or the trial cap ``cap`` ends it; noisy one-run trials, a space small
    enough to enumerate), queue the best observed few to be measured once more: a single lucky run
    picks the candidate otherwise, and in such a space the model pools little across configurations
    (docs/decisions/0106). ``start``: the trials the study had when this search began. Never stops
    the search."""
    if not settings.race or not noisy:
        return False
    fits: list[int] = []  # the trials left, by each budget that applies besides the cap
    lengths = [cap - start]  # the search's trials, by each
    left = runs.left()
    if left is not None and runs.plan is not None:
        fits.append((left - runs.reserve) // runs.plan.trial_first)
        lengths.append((runs.search_runs or 0) // runs.plan.trial_first)
    elif (time_fit := clock.trials_left()) is not None:  # --max-time: at the time the trials take
        fits.append(time_fit)
        lengths.append(clock.expected_trials or 0)
    # at most a tenth of the search: at 30 runs it cost more trials than it gave back (0106)
    if min(lengths) < 10 * settings.race:
        return False
    if not settings.race_all and space.size() > GPSettings.enumerate_limit:
        return False
    done = len(finished_trials(study))  # storage reads from here on, once the rest allows a race
    fit = min([*fits, cap - done])
    if fit > settings.race or fit < 2:  # not yet; or too late for a race (none is left queued)
        return False
    raced = study.user_attrs.get(ATTR_RACED)  # the trials the study had at its last race
    if raced is not None and (isinstance(raced, bool) or done - int(raced) < 10 * settings.race):
        return False  # once per search: a --resume races again after 30 new trials or more
    study.set_user_attr(ATTR_RACED, done)
    best = best_observed(study, fit)
    for t in best:
        study.enqueue_trial(t.params, user_attrs={ATTR_RACE: t.number}, skip_if_exists=False)
    if best:
        phase("race", f"the search's last {len(best)} runs measure the best {len(best)} configurations again (trials "
              f"{', '.join(str(t.number) for t in best)}): one noisy run each is too little to pick the candidate")
    return False


def _should_stop(runs: RunBudget, clock: TimeBudget, phase: Callable[[str, str], None]) -> bool:
    """Asked before each trial: a budget stops the search; else a new estimate when one is due."""
    if runs.stop_search() or clock.stop_search():
        return True
    if line := clock.revised():
        phase("estimate", line)
    return False


def _say_cuts(clock: TimeBudget | RunBudget, phase: Callable[[str, str], None]) -> None:
    for cut in clock.unsaid():
        phase("budget", cut)


def _model_order(sampler: optuna.samplers.BaseSampler, study: optuna.Study, confirmations: list[Confirmation],
                 repeats: int) -> list[int] | None:
    """The confirmed candidates ranked by hone's GP (posterior mean over the search trials and
    every confirmation round, see :mod:`hone.tune.confirm`); None for other samplers, a
    Pareto objective, or fewer than two candidates that beat the baseline (nothing to decide)."""
    if not isinstance(sampler, HoneGPSampler) or sum(c.comparison.improved for c in confirmations) < 2:
        return None
    by_number = {t.number: t for t in study.get_trials(deepcopy=False)}
    params = [by_number[c.candidate.trial_number].params for c in confirmations]
    extra = [(p, v) for p, c in zip(params, confirmations, strict=True) for v in model_observations(c.values, repeats)]
    return sampler.order_by_model(study, params, extra)


def _chosen_by(confirmations: list[Confirmation], order: list[int] | None) -> str | None:
    """How the winner was chosen, when more than one candidate beat the baseline."""
    if sum(c.comparison.improved for c in confirmations) < 2:
        return None
    return "model" if order is not None else "confirmation mean"


def _jsonable(doc: dict[str, Any]) -> dict[str, Any]:
    """NaN/inf are not JSON: store them as None in the study."""
    import json

    def fix(v: Any) -> Any:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [fix(x) for x in v]
        return v

    return json.loads(json.dumps(fix(doc), default=str))


__all__ = ["KEEP", "TUNE_FORMAT", "TuneEvents", "TuneResult", "TuneSettings", "tune"]
