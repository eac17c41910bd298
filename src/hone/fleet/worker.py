"""``hone worker``: one more machine working on a shared study.

The trial loop is the tune loop (:func:`hone.tune.study.run_trials`), unchanged. The
fleet adds three things around it, all through the study's storage:

* **Claims.** ``ask`` is wrapped (:class:`FleetStudy`): under the study lock a worker
  counts finished + running trials and takes a new one only while that is below the
  budget, so N workers finish with exactly N counted trials. With the budget claimed but
  trials still running elsewhere it waits — if one of them dies, its retry is picked up.
  A discrete space is a budget too: once every configuration is measured (the baseline's
  included) the workers stop, and while the rest are being measured elsewhere they wait.
* **Heartbeats.** Each worker beats every ``heartbeat_s`` seconds for its running trial
  (Optuna's RDB heartbeat table). A trial whose worker stopped beating for ``grace_s``
  is failed as *interrupted* (not counted) and its parameters are enqueued again, once
  per death, at most :data:`MAX_RETRIES` times; another worker's next ``ask`` takes it.
  A worker that was only stalled finds its trial failed and its late result dropped.
* **Once per study.** The baseline is measured by the first worker to take the lock on
  a study without one (the others wait, then reuse it). Confirmation is not run by
  workers: ``hone tune`` runs it on its own machine against its own baseline, in
  interleaved rounds, after the budget is spent.

A worker killed with ``kill -9`` leaves its knobs in its machine's journal; ``hone
rollback`` there restores them (nothing in the fleet touches another machine's knobs).
"""

from __future__ import annotations

import os
import socket
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.exceptions import UpdateFinishedTrialError
from optuna.trial import FrozenTrial, Trial, TrialState

from hone.core.errors import HoneError
from hone.core.fingerprint import machine_id
from hone.fleet.lock import StudyLock
from hone.run.configure import Configurator, changes_machine
from hone.run.journal import machine_lock_if
from hone.spec.loader import LoadedSpec
from hone.tune import study as tune_study
from hone.tune.objective import build_objective
from hone.tune.samplers import make_sampler
from hone.tune.space import SearchSpace
from hone.tune.storage import mask_url, open_storage

ATTR_FLEET = "hone_fleet"
MAX_RETRIES = 2
# Optuna's notes to its own API users (heartbeats are "experimental", ask/tell with
# heartbeats is "unusual") are not for hone's users.
warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used")
warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
warnings.filterwarnings("ignore", category=FutureWarning, message=r".*deprecated in v\d")


class BudgetSpent(Exception):
    """Raised by :meth:`FleetStudy.ask` when the study holds its budget of finished trials."""


@dataclass
class WorkerOptions:
    """How one worker joins a study. Times in seconds."""

    storage: str
    study: str
    trials: int | None = None
    sampler: str | None = None
    seed: int | None = None
    heartbeat_s: int = 5
    grace_s: int = 20
    poll_s: float = 1.0


@dataclass
class WorkerResult:
    """What this worker did, and the study's state when it stopped."""

    study: str
    storage: str  # masked
    budget: int
    ran: list[int] = field(default_factory=list)  # trial numbers this worker finished
    failed: list[int] = field(default_factory=list)
    requeued: list[int] = field(default_factory=list)  # stale trials this worker re-enqueued
    finished_in_study: int = 0
    space_measured: int | None = None  # the size of a discrete space every configuration of which is measured
    restore_problems: list[str] = field(default_factory=list)


class Heartbeat:
    """A daemon thread recording a heartbeat for the worker's current trial."""

    def __init__(self, storage: optuna.storages.RDBStorage, interval_s: float) -> None:
        self.storage = storage
        self.interval_s = interval_s
        self.trial_id: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="hone-heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def track(self, trial_id: int) -> None:
        self.trial_id = trial_id
        self.storage.record_heartbeat(trial_id)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            trial_id = self.trial_id
            if trial_id is None:
                continue
            try:
                self.storage.record_heartbeat(trial_id)
            except Exception:  # a transient DB error must not kill the worker; grace covers it
                pass

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=self.interval_s + 5)


def requeue_stale(study: optuna.Study, storage: optuna.storages.RDBStorage) -> list[int]:
    """Fail trials whose worker stopped heartbeating, as *interrupted* (not counted against
    the budget), and enqueue their parameters again (at most :data:`MAX_RETRIES` times; a
    configuration that keeps killing workers is then counted as failed). Call under the
    study lock. Returns the failed trial numbers."""
    if storage.heartbeat_interval is None:
        return []
    out = []
    for trial_id in storage._get_stale_trial_ids(study._study_id):
        trial = storage.get_trial(trial_id)
        retries = int(trial.user_attrs.get("hone_retries", 0))
        who = f"{trial.user_attrs.get('host', '?')} pid {trial.user_attrs.get('pid', '?')}"
        requeue = retries < MAX_RETRIES and bool(trial.params)
        try:
            if requeue:
                storage.set_trial_user_attr(trial_id, tune_study.ATTR_INTERRUPTED, True)
            storage.set_trial_user_attr(
                trial_id, "fail_reason",
                f"worker {who} stopped heartbeating (killed or cut off)"
                + ("" if requeue else f"; retried {retries} times, counted as failed"))
            if not storage.set_trial_state_values(trial_id, TrialState.FAIL):
                continue
        except UpdateFinishedTrialError:
            continue  # another worker got there first
        if requeue:
            study.enqueue_trial(trial.params, skip_if_exists=False,
                                user_attrs={"requeued_from": trial.number, "hone_retries": retries + 1})
        out.append(trial.number)
    return out


def count_claimed(study: optuna.Study) -> tuple[int, int]:
    """``(finished, running)`` trials. Finished as the tune loop counts them (failed as
    interrupted: not counted), except that a COMPLETE trial always counts: a result that
    exists is never run again."""
    finished = 0
    running = 0
    for t in study.get_trials(deepcopy=False):
        if t.state == TrialState.RUNNING:
            running += 1
        elif t.state in (TrialState.COMPLETE, TrialState.PRUNED) or (
                t.state == TrialState.FAIL and not t.user_attrs.get(tune_study.ATTR_INTERRUPTED)):
            finished += 1
    return finished, running


class FleetStudy:
    """An ``optuna.Study`` whose ``ask`` claims a budget slot first (see module doc).

    Everything else is delegated, so the tune loop cannot tell the difference."""

    def __init__(self, study: optuna.Study, lock: StudyLock, budget: int, heartbeat: Heartbeat,
                 poll_s: float, result: WorkerResult, space: SearchSpace | None = None) -> None:
        self._study = study
        self._lock = lock
        self._budget = budget
        self._space = space
        self._heartbeat = heartbeat
        self._poll_s = poll_s
        self._result = result
        self._mid = machine_id()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._study, name)

    def ask(self, fixed_distributions: dict[str, Any] | None = None) -> Trial:
        while True:
            with self._lock:
                # Heartbeats only, not the tune loop's same-host pid check: cloned machines
                # share hostnames, and a live trial elsewhere must never be failed here.
                self._result.requeued += requeue_stale(self._study, self._heartbeat.storage)
                finished, running = count_claimed(self._study)
                if finished >= self._budget:
                    raise BudgetSpent
                # Every configuration measured or being measured: another trial would only measure
                # one again (as in hone tune). Once they are all measured, the worker is done.
                claimed = self._space is not None and \
                    tune_study.measured_all(self._study, self._space, running=True) is not None
                if claimed and (size := tune_study.measured_all(self._study, self._space)) is not None:
                    self._result.space_measured = size
                    raise BudgetSpent
                if finished + running < self._budget and not claimed:
                    trial = self._study.ask(fixed_distributions)
                    self._heartbeat.track(trial._trial_id)
                    trial.set_user_attr("host", socket.gethostname())
                    trial.set_user_attr("pid", os.getpid())
                    trial.set_user_attr("machine_id", self._mid)
                    return _FleetTrial(trial)  # type: ignore[return-value]
            # Every remaining slot (or configuration) is held by a running trial elsewhere: wait,
            # in case one dies.
            time.sleep(self._poll_s)

    def tell(self, trial: Any, *args: Any, **kwargs: Any) -> Any:
        real = trial._trial if isinstance(trial, _FleetTrial) else trial
        if isinstance(trial, _FleetTrial) and trial.lost:
            return None
        # Under the lock, so a stale check (attr, then FAIL) never interleaves with it.
        with self._lock:
            if self._heartbeat.storage.get_trial(real._trial_id).state.is_finished():
                return None  # failed as stale meanwhile (see _FleetTrial); its retry counts
            return self._study.tell(real, *args, **kwargs)


class _FleetTrial:
    """A trial that may be failed under us: a worker that stalled past the grace period
    (paused VM, partition) finds its trial failed and re-enqueued by another worker. Its
    late writes are dropped — the retry's result is the one that counts, once."""

    def __init__(self, trial: Trial) -> None:
        self._trial = trial
        self.lost = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._trial, name)

    def set_user_attr(self, key: str, value: Any) -> None:
        if self.lost:
            return
        try:
            self._trial.set_user_attr(key, value)
        except UpdateFinishedTrialError:
            self.lost = True


def join_study(storage: optuna.storages.RDBStorage, opts: WorkerOptions, loaded: LoadedSpec,
               lock: StudyLock) -> tuple[optuna.Study, int, SearchSpace, Any]:
    """Create the study or load it (race-free under ``lock``); returns (study, budget,
    space, objective). The first worker fixes the budget in the study's user attrs."""
    spec = loaded.spec
    space = SearchSpace(spec.knobs)
    objective = build_objective(spec.metrics, spec.tune.objective)
    sampler_name = opts.sampler or spec.tune.sampler
    seed = opts.seed if opts.seed is not None else spec.tune.seed
    with lock:
        study = optuna.create_study(storage=storage, study_name=opts.study, directions=objective.directions,
                                    load_if_exists=True, sampler=optuna.samplers.RandomSampler())
        fleet = study.user_attrs.get(ATTR_FLEET)
        if fleet is None:
            budget = opts.trials or spec.tune.trials
            study.set_user_attr(tune_study.ATTR_SPEC, {
                "name": spec.name or "", "objective": objective.mode, "label": objective.label,
                "metrics": [m.name for m in objective.metrics], "created": time.time()})
            study.set_user_attr(ATTR_FLEET, {"budget": budget, "sampler": sampler_name, "seed": seed,
                                             "created_by": machine_id()})
        else:
            budget = int(fleet["budget"])
            if opts.trials is not None and opts.trials != budget:
                raise HoneError(f"study {opts.study!r} has a budget of {budget} trials, not {opts.trials}",
                                hint="leave out --trials to join it, or use another --study")
        if [d.name for d in study.directions] != [d.name for d in objective.directions]:
            raise HoneError(f"study {opts.study!r} was created with another objective; join it with the same spec")
    sampler = make_sampler(sampler_name, seed=_worker_seed(seed), n_trials=budget,
                           constraints_func=tune_study.constraints_from_attrs if objective.constrained else None,
                           distributions=space.distributions)
    # No constant liar: it gave no consistent gain, and distinct seeds per worker keep
    # suggestions apart well enough (docs/decisions/0015-fleet-no-constant-liar.md).
    study.sampler = sampler
    return study, budget, space, objective


def _worker_seed(seed: int | None) -> int | None:
    # Identical seeds would make every worker's random start suggest the same points.
    return None if seed is None else seed + (os.getpid() % 100_000)


def _note(study: optuna.Study, storage: optuna.storages.RDBStorage, number: int,
          on_finished: Callable[[optuna.Study, FrozenTrial], None]) -> None:
    """Hand the finished trial to ``on_finished`` (the dashboard's note), best effort: a note
    that cannot be written must not stop the worker."""
    try:
        trial_id = storage.get_trial_id_from_study_id_trial_number(study._study_id, number)
        on_finished(study, storage.get_trial(trial_id))
    except Exception:
        pass


def run_worker(loaded: LoadedSpec, opts: WorkerOptions, *,
               on_trial: Callable[[tune_study.TrialOutcome], None] | None = None,
               on_joined: Callable[[int, int], None] | None = None,
               on_finished: Callable[[optuna.Study, FrozenTrial], None] | None = None) -> WorkerResult:
    """Join ``opts.study`` and run its trials on this machine until the budget is spent.

    Knobs are journaled in this machine's state directory and restored when the worker
    stops (normally, on error or on Ctrl-C/SIGTERM). ``on_joined(budget, finished)`` is
    called once the study is open; ``on_finished(study, trial)`` with each trial this worker
    finished, as stored (``hone worker`` writes the dashboard's note with it)."""
    storage = open_storage(opts.storage, heartbeat_interval=opts.heartbeat_s, grace_period=opts.grace_s)
    lock = StudyLock(opts.storage, opts.study, storage.engine)
    result = WorkerResult(study=opts.study, storage=mask_url(opts.storage), budget=0)
    heartbeat = Heartbeat(storage, opts.heartbeat_s)
    try:
        study, budget, space, objective = join_study(storage, opts, loaded, lock)
        result.budget = budget
        if on_joined:
            on_joined(budget, count_claimed(study)[0])
        bench = loaded.spec.benchmark

        def _seen(outcome: tune_study.TrialOutcome) -> None:
            (result.ran if outcome.state == "complete" else result.failed).append(outcome.number)
            if on_finished:
                _note(study, storage, outcome.number, on_finished)
            if on_trial:
                on_trial(outcome)

        with machine_lock_if(changes_machine(loaded), f"hone worker {opts.study}"):
            configurator = Configurator(loaded)
            try:
                with lock:
                    baseline = tune_study.ensure_baseline(study, loaded, configurator, repeats=bench.repeats,
                                                          warmup=bench.warmup)
                    objective.baseline = dict(baseline["means"])
                    # As hone tune does: the GP's first observation and start, the exhausted-space stop.
                    tune_study.record_baseline_point(study, baseline, objective, space)
                    tune_study.record_space(study, space)
                heartbeat.start()
                fleet_study = FleetStudy(study, lock, budget, heartbeat, opts.poll_s, result, space)
                try:
                    tune_study.run_trials(fleet_study, loaded, configurator, space, objective,  # type: ignore[arg-type]
                                          budget=budget, repeats=bench.repeats, warmup=bench.warmup,
                                          on_trial=_seen)
                except BudgetSpent:
                    pass
            finally:
                result.restore_problems = configurator.restore()
        result.finished_in_study = count_claimed(study)[0]
    finally:
        heartbeat.stop()
        lock.close()
    return result
