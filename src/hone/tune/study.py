"""The study loop: baseline, trials over Optuna ask/tell, crash recovery.

hone owns the measuring; Optuna owns the suggestions and the store. The pieces are
separate functions so ``hone worker`` (several machines on one study) can reuse them:

* :func:`open_study` — create or load a study in any Optuna storage URL;
* :func:`ensure_baseline` — measure the current configuration ``repeats`` times once per
  study (kept in the study's user attrs, so a resumed or second worker reuses it);
* :func:`recover_interrupted` — trials left RUNNING by a dead hone process on this host are
  marked FAIL ("interrupted") and their params re-enqueued: nothing lost, nothing counted
  twice;
* :func:`run_trials` — ask → apply (journaled) → benchmark → tell, until the study holds
  ``budget`` finished trials (interrupted ones do not count).
"""

from __future__ import annotations

import math
import os
import socket
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.distributions import distribution_to_json
from optuna.trial import FrozenTrial, TrialState

from hone.core.errors import BenchmarkError, HoneError, KnobError, RestoreError
from hone.core.fingerprint import fingerprint
from hone.core.metrics import figures
from hone.core.metrics import means as figure_means
from hone.run.benchmark import Measurement, run_once
from hone.run.configure import Configurator
from hone.spec.loader import LoadedSpec
from hone.spec.models import Scalar
from hone.stats.summary import sample_cv
from hone.tune.gp import ATTR_BASELINE_POINT, ATTR_NOISE_CV, ATTR_SPACE
from hone.tune.objective import Objective
from hone.tune.space import SearchSpace
from hone.tune.storage import mask_url, scrub

optuna.logging.set_verbosity(optuna.logging.WARNING)
# Multivariate TPE and enqueue are "experimental" in Optuna: hone pins the version, the
# warning would only clutter every tune's output.
warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
warnings.filterwarnings("ignore", category=FutureWarning, module=r"optuna\..*")

ATTR_BASELINE = "hone_baseline"
ATTR_SPEC = "hone_spec"
ATTR_CONSTRAINTS = "hone_constraints"  # read by hone's samplers' constraints_func and the confirmation
ATTR_INTERRUPTED = "hone_interrupted"
ATTR_FAIL_KNOBS = "hone_fail_knobs"  # a failed trial's knobs at fault (KnobError.knobs), when known
#: a session's first trials all failing at the same knob stop the search (:func:`_stop_on_broken_knob`)
BROKEN_AFTER = 5
ATTR_RUNS_STARTED = "hone_runs_started"  # a trial's benchmark runs, warm-ups and failed ones included


@dataclass
class TrialOutcome:
    """One finished trial as the loop saw it (for progress lines)."""

    number: int
    config: dict[str, Scalar]
    state: str  # "complete" | "failed"
    means: dict[str, float] = field(default_factory=dict)
    values: list[float] | None = None
    feasible: bool = True
    reason: str | None = None
    elapsed_s: float = 0.0


def constraints_from_attrs(trial: FrozenTrial) -> list[float]:
    """The ``constraints_func`` for hone's samplers (gp, local): values stored by :func:`run_trials`."""
    return list(trial.user_attrs.get(ATTR_CONSTRAINTS, []))


class StudyExists(HoneError):
    """A new study's name is taken in its storage."""


def open_study(storage: str, study_name: str, objective: Objective, sampler: optuna.samplers.BaseSampler,
               *, create: bool, spec_name: str = "") -> optuna.Study:
    """Create (``create=True``; the name must be new: else :class:`StudyExists`) or load a study.
    Raises HoneError naming the study when that is impossible."""
    if not create and study_name not in study_names(storage):
        raise HoneError(f"no study {study_name!r} in {mask_url(storage)} to resume",
                        hint="leave out --resume to start it")
    try:  # creating: the storage refuses a taken name, also one another process took a moment ago
        study = optuna.create_study(
            storage=storage, study_name=study_name, sampler=sampler,
            directions=objective.directions, load_if_exists=not create,
        )
    except optuna.exceptions.DuplicatedStudyError:
        raise StudyExists(f"study {study_name!r} already exists in {mask_url(storage)}",
                          hint="add --resume to continue it, or choose another --study NAME") from None
    except (ValueError, ImportError) as exc:
        raise HoneError(f"cannot open storage {mask_url(storage)}: {scrub(str(exc), storage)}") from None
    if create:
        study.set_user_attr(ATTR_SPEC, {"name": spec_name, "objective": objective.mode, "label": objective.label,
                                        "metrics": [m.name for m in objective.metrics],
                                        "created": time.time()})
    elif [d.name for d in study.directions] != [d.name for d in objective.directions]:
        raise HoneError(f"study {study_name!r} was created with another objective ({len(study.directions)} "
                        "direction(s)); resume it with the same spec and options")
    return study


def study_names(storage: str) -> set[str]:
    """The names of the studies in ``storage`` (none when its SQLite file does not exist yet)."""
    if not _has_store(storage):
        return set()
    return {s.study_name for s in optuna.get_all_study_summaries(storage, include_best_trial=False)}


def _has_store(storage: str) -> bool:
    if storage.startswith("sqlite:///"):
        return os.path.exists(storage[len("sqlite:///"):])
    return True


def finished_trials(study: optuna.Study) -> list[FrozenTrial]:
    """Trials that count against the budget: complete, pruned, or failed for a reason
    other than being interrupted (those are re-run)."""
    done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL, TrialState.PRUNED))
    return [t for t in done if not t.user_attrs.get(ATTR_INTERRUPTED)]


def measured_all(study: optuna.Study, space: SearchSpace, *, running: bool = False) -> int | None:
    """The size of a discrete space every configuration of which has been measured — by a
    finished trial or as the baseline (:data:`ATTR_BASELINE_POINT`) — else None. Then the search
    has nothing left to learn: another trial would only measure a configuration again, which
    the confirmation does better (interleaved with the baseline). ``running``: a configuration
    a running trial measures counts too (a fleet's other workers)."""
    left = unmeasured(study, space, running=running)
    return int(space.size()) if left == 0 else None


def unmeasured(study: optuna.Study, space: SearchSpace, *, running: bool = False) -> int | None:
    """How many configurations of a discrete space no finished trial and not the baseline has
    measured (``running``: nor a running trial); None for a space with a continuous knob."""
    size = space.size()
    if not math.isfinite(size):
        return None
    names = sorted(space.distributions)
    trials = finished_trials(study)
    if running:
        trials += study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    seen = {tuple(t.params.get(n) for n in names) for t in trials}
    point = study.user_attrs.get(ATTR_BASELINE_POINT)
    if point:
        seen.add(tuple(point["params"].get(n) for n in names))
    return max(0, int(size) - len(seen))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover_interrupted(study: optuna.Study) -> list[int]:
    """Mark trials left RUNNING by a dead hone process on this host as FAIL (reason
    "interrupted") and re-enqueue their params. Returns the recovered trial numbers.

    Trials of live processes or other hosts (fleet workers) are left alone."""
    recovered = []
    host = socket.gethostname()
    storage = study._storage
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if t.user_attrs.get("host") != host or _pid_alive(int(t.user_attrs.get("pid", -1))):
            continue
        storage.set_trial_user_attr(t._trial_id, ATTR_INTERRUPTED, True)
        storage.set_trial_user_attr(t._trial_id, "fail_reason", "interrupted (hone was killed during this trial)")
        storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
        if t.params:
            study.enqueue_trial(t.params, user_attrs={"requeued_from": t.number}, skip_if_exists=False)
        recovered.append(t.number)
    return recovered


def measure(loaded: LoadedSpec, configurator: Configurator, values: dict[str, Scalar], *, repeats: int,
            warmup: int, on_run: Callable[[], None] | None = None) -> list[Measurement]:
    """Apply ``values`` (journaled) and run warm-ups (discarded) then ``repeats`` runs. Stops at
    the first failed run: one failure makes the configuration unusable. ``on_run()`` follows
    every run."""
    ctx = configurator.apply(values)

    def once() -> Measurement:
        m = run_once(loaded, ctx)
        if on_run:
            on_run()
        return m

    for _ in range(warmup):
        m = once()
        if not m.ok:
            return [m]
    runs: list[Measurement] = []
    while len(runs) < repeats:
        m = once()
        runs.append(m)
        if not m.ok:
            break
    return runs


def _stop_on_broken_knob(blamed: list[set[str]], reason: str) -> None:
    """Raise KnobError when each of the session's first :data:`BROKEN_AFTER` trials failed at the
    same knob (and none completed): a knob whose ``set`` never changes what its ``get`` reads, or
    that the system refuses at every value, would fail every trial of the budget. The
    Latin-hypercube starts spread each knob over its range, so a knob that refuses only part
    of it is not stopped on."""
    if len(blamed) < BROKEN_AFTER:
        return
    common = set.intersection(*blamed)
    if common:
        names = ", ".join(sorted(common))
        raise KnobError(f"{'knob' if len(common) == 1 else 'knobs'} {names} failed in each of the first "
                        f"{len(blamed)} trials, at every value tried (the last: {reason}); search stopped",
                        hint="set it by hand to another value and read it back (a script knob's set must change "
                             "what its get reads); fix the knob or remove it from the spec",
                        knobs=tuple(sorted(common)))


def run_means(runs: list[Measurement]) -> dict[str, float]:
    """Mean of every metric over ``runs`` (plus cpu_time and wall_time: :func:`hone.core.metrics.means`)."""
    return figure_means(runs)


def _runs_attr(runs: list[Measurement]) -> list[dict[str, Any]]:
    return [r.to_dict() for r in runs]  # every field, so hone.tune.confirm.stored_runs reads them back


def ensure_baseline(study: optuna.Study, loaded: LoadedSpec, configurator: Configurator, *, repeats: int,
                    warmup: int, on_run: Callable[[], None] | None = None) -> dict[str, Any]:
    """The study's baseline (current knob values measured ``repeats`` times), measuring it
    if the study has none yet. Returns ``{"config", "runs", "means", "cv"}``; raises
    HoneError when the unchanged configuration cannot be measured."""
    stored = study.user_attrs.get(ATTR_BASELINE)
    if stored:
        return dict(stored)
    runs = measure(loaded, configurator, {}, repeats=repeats, warmup=warmup, on_run=on_run)
    # Read after the runs: live settings of a service hone started exist only while it runs.
    current = {k: v for k, v in configurator.current_values().items() if v is not None}
    failed = [r for r in runs if not r.ok]
    if failed:  # the workload failed, not the input: exit 1 like `hone run`
        raise BenchmarkError(f"the baseline (current configuration) fails: {failed[0].error}",
                             hint="fix the benchmark first: `hone run SPEC` shows the same failure")
    baseline = {"config": current, "runs": _runs_attr(runs)} | _run_stats(runs) \
        | {"fingerprint": fingerprint(loaded.path.read_text()), "measured": time.time()}
    study.set_user_attr(ATTR_BASELINE, baseline)
    return baseline


def _run_stats(runs: list[Any]) -> dict[str, Any]:
    """``means`` and ``cv`` (coefficient of variation) of each metric over ``runs``."""
    means = run_means(runs)
    return {"means": means, "cv": {name: sample_cv([figures(r)[name] for r in runs]) for name in means}}


def extend_baseline(study: optuna.Study, loaded: LoadedSpec, configurator: Configurator, baseline: dict[str, Any],
                    *, runs: int, on_run: Callable[[], None] | None = None) -> dict[str, Any]:
    """The stored baseline with ``runs`` more runs of it (no warm-up), its means and CVs
    recomputed. A failed run ends it, and the baseline stays as it was."""
    more = measure(loaded, configurator, {}, repeats=runs, warmup=0, on_run=on_run)
    if any(not r.ok for r in more):
        return baseline
    stored = [*baseline.get("runs", []), *_runs_attr(more)]
    extended = dict(baseline) | {"runs": stored} | _run_stats(stored)
    study.set_user_attr(ATTR_BASELINE, extended)
    return extended


def baseline_cv(baseline: dict[str, Any], objective: Objective) -> float | None:
    """The largest CV of the baseline's runs among the scored metrics; None when one is unknown."""
    cvs = [baseline.get("cv", {}).get(m.name) for m in objective.metrics]
    known = [float(c) for c in cvs if c is not None and math.isfinite(float(c))]
    return max(known) if known and len(known) == len(cvs) else None


#: The fewest baseline runs whose CV is a noise figure when the spec asked for 1 (a CV of 2 runs
#: has one degree of freedom: docs/decisions/0100).
NOISE_RUNS = 3


def record_trial_noise(study: optuna.Study, baseline: dict[str, Any], objective: Objective,
                       repeats: int, trial_runs: int | None = None) -> float | None:
    """The relative sd of one trial's objective value — the largest baseline CV among the scored
    metrics over √trial_runs (a trial is the mean of ``trial_runs`` runs, default ``repeats``;
    the baseline was measured ``repeats`` times, or 3 and more) — stored once in the study
    (:data:`hone.tune.gp.ATTR_NOISE_CV`, read by hone's GP sampler, fleet workers and
    ``--resume`` alike). None when it cannot be known (one repeat, a metric without a CV)."""
    if ATTR_NOISE_CV in study.user_attrs:
        stored = study.user_attrs[ATTR_NOISE_CV]
        return None if stored is None else float(stored)
    cv = baseline_cv(baseline, objective)
    per_trial = repeats if trial_runs is None else trial_runs
    # A baseline of repeats: 1 that got more runs to show whether they repeat (hone.tune.tuner) has
    # a noise figure from 3 or more of them; 2 runs that differ say too little (docs/decisions/0100)
    measured = len(baseline.get("runs", [])) or repeats
    value = cv / math.sqrt(per_trial) if (repeats > 1 or measured >= NOISE_RUNS) and cv is not None else None
    study.set_user_attr(ATTR_NOISE_CV, value)
    return value


def record_baseline_point(study: optuna.Study, baseline: dict[str, Any], objective: Objective,
                          space: SearchSpace) -> None:
    """Store the baseline as an observation for hone's GP sampler
    (:data:`hone.tune.gp.ATTR_BASELINE_POINT`: its Optuna params and objective value), once.

    Only for one objective, a feasible baseline, and current values every searched knob's domain
    holds (a value outside a range or a list cannot be a row of the model); else None is stored."""
    if ATTR_BASELINE_POINT in study.user_attrs:
        return
    point: dict[str, Any] | None = None
    config, means = baseline.get("config", {}), baseline.get("means", {})
    measured = all(m.name in means for m in [*objective.metrics, *objective.constrained])
    values = objective.values(means) if measured else []
    if len(values) == 1 and math.isfinite(values[0]) and all(c <= 0 for c in objective.constraints(means)):
        params = space.params_of(config)
        point = None if params is None else {"params": params, "value": float(values[0])}
    study.set_user_attr(ATTR_BASELINE_POINT, point)


def record_space(study: optuna.Study, space: SearchSpace) -> None:
    """Store the searched knobs' distributions (:data:`hone.tune.gp.ATTR_SPACE`), once: before
    the first trial completes, hone's GP sampler knows the space from them."""
    if ATTR_SPACE not in study.user_attrs:
        study.set_user_attr(ATTR_SPACE, {n: distribution_to_json(d) for n, d in space.distributions.items()})


def run_trials(
    study: optuna.Study,
    loaded: LoadedSpec,
    configurator: Configurator,
    space: SearchSpace,
    objective: Objective,
    *,
    budget: int,
    repeats: int,
    warmup: int,
    on_trial: Callable[[TrialOutcome], None] | None = None,
    spec_text: str | None = None,
    should_stop: Callable[[], bool] | None = None,
    on_run: Callable[[], None] | None = None,
) -> None:
    """Run trials until ``study`` holds ``budget`` finished ones (any worker's count).

    Each trial: ask → apply (journaled) → warm-up + ``repeats`` runs → tell. A failing,
    timed-out or unparsable run, or a knob the system refuses, fails the trial with its
    reason in ``fail_reason``; the loop goes on. Ctrl-C/SIGTERM fails the running trial as
    interrupted, re-enqueues its params and re-raises (callers restore the knobs).
    ``should_stop()``, asked before each trial, ends the loop early (a time or run budget);
    ``on_run()`` follows every benchmark run."""
    host, pid = socket.gethostname(), os.getpid()
    spec_text = spec_text if spec_text is not None else loaded.path.read_text()
    started_runs = [0]  # the current trial's runs, warm-ups and failed ones too: what it cost
    blamed: list[set[str]] | None = []  # knobs at fault in each failed trial, until one completes

    def _ran() -> None:
        started_runs[0] += 1
        if on_run:
            on_run()

    while len(finished_trials(study)) < budget and not (should_stop and should_stop()):
        trial = study.ask(space.distributions)
        started = time.perf_counter()
        trial.set_user_attr("host", host)
        trial.set_user_attr("pid", pid)
        config = space.decode(trial.params)
        trial.set_user_attr("config", config)
        started_runs[0] = 0
        try:
            try:
                runs = measure(loaded, configurator, config, repeats=repeats, warmup=warmup, on_run=_ran)
            except RestoreError as exc:  # a knob that cannot be put back: no trial may change it again
                trial.set_user_attr("fail_reason", exc.message)
                study.tell(trial, state=TrialState.FAIL)
                raise
            except HoneError as exc:  # a knob refused the value, a prepare hook failed …
                runs = []
                reason: str | None = exc.message
                at_fault = exc.knobs if isinstance(exc, KnobError) else ()
                if at_fault:
                    trial.set_user_attr(ATTR_FAIL_KNOBS, list(at_fault))
            else:
                bad = [r for r in runs if not r.ok]
                reason, at_fault = (bad[0].error if bad else None), ()
            trial.set_user_attr("runs", _runs_attr(runs))
            trial.set_user_attr(ATTR_RUNS_STARTED, started_runs[0])
            trial.set_user_attr("fingerprint", fingerprint(spec_text))
            elapsed = time.perf_counter() - started
            trial.set_user_attr("elapsed_s", elapsed)
            if reason is not None:
                trial.set_user_attr("fail_reason", reason)
                study.tell(trial, state=TrialState.FAIL)
                outcome = TrialOutcome(trial.number, config, "failed", reason=reason, elapsed_s=elapsed)
                if blamed is not None:
                    blamed.append(set(at_fault))
            else:
                blamed = None
                means = run_means(runs)
                values = objective.values(means)
                constraints = objective.constraints(means)
                trial.set_user_attr("means", means)
                trial.set_user_attr(ATTR_CONSTRAINTS, constraints)
                for i, c in enumerate(constraints):  # what Optuna's samplers read (Optuna >= 5)
                    trial.set_constraint(str(i), math.inf if math.isnan(c) else c)
                if objective.mode != "weighted":
                    trial.set_user_attr("score_pct", objective.weighted_score(means))
                study.tell(trial, values if len(values) > 1 else values[0])
                outcome = TrialOutcome(trial.number, config, "complete", means=means, values=values,
                                       feasible=all(c <= 0 for c in constraints), elapsed_s=elapsed)
        except KeyboardInterrupt:
            trial.set_user_attr(ATTR_INTERRUPTED, True)
            trial.set_user_attr("fail_reason", "interrupted (Ctrl-C or SIGTERM)")
            study.tell(trial, state=TrialState.FAIL)
            study.enqueue_trial(trial.params, user_attrs={"requeued_from": trial.number}, skip_if_exists=False)
            raise
        if on_trial:
            on_trial(outcome)
        if blamed is not None and outcome.reason is not None:
            _stop_on_broken_knob(blamed, outcome.reason)
