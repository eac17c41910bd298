"""``hone tune --workers K``: K ``hone worker`` processes on this machine, one study.

For convenience only: K workers on one machine share its CPUs and its system knobs, so
a spec with system knobs (sysctl, sysfs, file, script) is refused — two workers would
change the same knob under each other's benchmark. Use ``hone worker`` on K identical
machines for those. The parent (``hone tune``) has already measured the baseline and
confirms afterwards; the workers only run trials. Each worker gets its own state
directory (``<state>/fleet/<study>/<i>``: journal and lock) and the storage URL in its
environment (``HONE_STORAGE``), never on its command line where ``ps`` would show a
password.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import optuna
from optuna.trial import FrozenTrial, TrialState

from hone.core.errors import HoneError
from hone.core.paths import state_dir
from hone.core.process import finish_process, start_process
from hone.knobs import driver_for
from hone.spec.loader import LoadedSpec
from hone.tune.storage import scrub
from hone.tune.study import ATTR_INTERRUPTED, TrialOutcome

#: Seconds between looks at the study for finished trials (progress lines).
POLL_S = 1.0


def check_local_fleet(loaded: LoadedSpec, workers: int) -> None:
    """Raise HoneError when ``workers`` local workers cannot share this machine."""
    if workers < 1:
        raise HoneError(f"--workers must be at least 1, got {workers}")
    system = [k.name for k in loaded.spec.knobs if driver_for(k).changes_system]
    if workers > 1 and loaded.spec.service is not None:
        raise HoneError(f"--workers {workers} would start {workers} copies of the service on this machine",
                        hint="run `hone worker SPEC --storage postgresql://… --study NAME` on separate machines")
    if workers > 1 and system:
        raise HoneError(
            f"--workers {workers} would run {workers} workers on this machine, changing the same system knobs "
            f"({', '.join(system)}) under each other's benchmarks",
            hint="run `hone worker SPEC --storage postgresql://… --study NAME` on separate machines instead",
        )


def outcome_of(trial: FrozenTrial) -> TrialOutcome:
    """A progress-line view of a trial some worker finished."""
    ua = trial.user_attrs
    if trial.state == TrialState.COMPLETE:
        return TrialOutcome(trial.number, dict(ua.get("config", {})), "complete", means=dict(ua.get("means", {})),
                            values=list(trial.values or []),
                            feasible=all(c <= 0 for c in ua.get("hone_constraints", [])),
                            elapsed_s=float(ua.get("elapsed_s", 0.0)))
    return TrialOutcome(trial.number, dict(ua.get("config", {})), "failed", reason=ua.get("fail_reason"),
                        elapsed_s=float(ua.get("elapsed_s", 0.0)))


@dataclass(frozen=True)
class LocalWorkers:
    """``hone tune --workers N``: the search's trials in N local ``hone worker`` processes
    (the tuner's :class:`~hone.tune.tuner.TrialWorkers`)."""

    count: int

    def check(self, loaded: LoadedSpec) -> None:
        check_local_fleet(loaded, self.count)

    def run(self, loaded: LoadedSpec, storage: str, study: optuna.Study, *, budget: int, sampler: str,
            seed: int | None, on_trial: Callable[[TrialOutcome], None] | None = None) -> None:
        run_local_workers(loaded, storage, study, workers=self.count, budget=budget, sampler=sampler, seed=seed,
                          on_trial=on_trial)


def run_local_workers(
    loaded: LoadedSpec,
    storage: str,
    study: optuna.Study,
    *,
    workers: int,
    budget: int,
    sampler: str,
    seed: int | None,
    on_trial: Callable[[TrialOutcome], None] | None = None,
    heartbeat_s: int = 5,
    grace_s: int = 20,
) -> None:
    """Start ``workers`` ``hone worker`` processes on ``study`` and wait until all exit,
    reporting each trial as it finishes. Ctrl-C/SIGTERM stops them (they restore their
    knobs) and re-raises. Raises HoneError if a worker fails."""
    check_local_fleet(loaded, workers)
    base = state_dir() / "fleet" / study.study_name
    argv = [str(Path(sys.executable).with_name("hone")), "worker", str(loaded.path), "--study", study.study_name,
            "--trials", str(budget), "--sampler", sampler, "--heartbeat", str(heartbeat_s), "--grace", str(grace_s)]
    if seed is not None:
        argv += ["--seed", str(seed)]
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []
    seen: set[int] = set()
    try:
        for i in range(workers):
            home = base / str(i)
            home.mkdir(parents=True, exist_ok=True)
            env = {**os.environ, "HONE_STATE_DIR": str(home), "HONE_STORAGE": storage}
            log = home / "worker.log"
            with log.open("wb") as out:
                procs.append((start_process(argv, env=env, stdout=out, stderr=subprocess.STDOUT), log))
        while True:
            alive = [p for p, _ in procs if p.poll() is None]
            _report(study, seen, on_trial)
            if not alive:
                break
            time.sleep(POLL_S)
    except BaseException:
        for p, _ in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)  # workers restore their knobs on SIGTERM
        for p, _ in procs:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
        raise
    finally:
        # What an exited worker left running (the benchmark of a worker that crashed) goes too;
        # one still running is stopped with everything else at hone's exit.
        for p, _ in procs:
            if p.poll() is not None:
                finish_process(p)
    failed = [(p, log) for p, log in procs if p.returncode != 0]
    if failed:
        p, log = failed[0]
        tail = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()][-1:] or ["no output"]
        raise HoneError(f"{len(failed)} of {workers} workers failed; the first exited with {p.returncode}: "
                        f"{scrub(tail[0], storage)}", hint=f"its log: {log}")


def _report(study: optuna.Study, seen: set[int], on_trial: Callable[[TrialOutcome], None] | None) -> None:
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.FAIL)):
        if t.number in seen or t.user_attrs.get(ATTR_INTERRUPTED):
            continue
        seen.add(t.number)
        if on_trial:
            on_trial(outcome_of(t))
