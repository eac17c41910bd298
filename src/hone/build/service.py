"""Programs that are servers: each variant runs as the spec's ``service:``, the scenario is its load.

With a ``service:`` whose ``start`` names the program as ``{binary}``, a train or evaluate
scenario does not run the program itself: hone starts the variant as the service (its
``{binary}`` filled in place, or through ``$HONE_PARAM_binary`` in shell text — never pasted
in), waits for ``ready``, runs the scenario's command as the load, reads the server's CPU
time (``/proc/PID/stat``), then stops it with its stop signal or command and waits, so an
instrumented server writes its profile at exit. A server that exits before it is stopped
fails that run with its log's tail.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hone.build.scenario import Scenario, run_scenario
from hone.core.process import ProcessResult, descendants, process_cpu_s
from hone.run.service import ServiceManager
from hone.spec.loader import LoadedSpec
from hone.spec.models import to_argv

#: The metric name of the server's CPU time (user + system seconds) in a run.
SERVER_CPU = "server_cpu_s"


@dataclass
class ServiceRun:
    """One scenario against one started server: the load's result, the server's CPU seconds
    before the stop (None when unreadable), its exit status after the stop (negative: the
    signal that ended it), why it died before the stop (None when it did not), its log."""

    result: ProcessResult
    server_cpu_s: float | None
    exit_status: int | None
    died: str | None
    log: str
    #: Processes running the binary in the server's process tree (master and forked workers),
    #: seen after ``ready`` and after the load; 0 when none could be read.
    processes: int = 0

    def exit_note(self) -> str:
        """How the server ended, as the likely cause of a profile it did not write."""
        status = self.exit_status
        if status is not None and status < 0:
            try:
                name = signal.Signals(-status).name
            except ValueError:
                name = f"signal {-status}"
            return (f"The server may not have exited cleanly: it ended by {name} after its stop (an instrumented"
                    " program writes its profile only at a normal exit: it must exit() on its stop signal, within"
                    f" stop.timeout; SIGKILL follows the timeout); log {self.log}")
        return f"The server exited with status {status} after its stop; log {self.log}"


class ServiceLoad:
    """Start a binary as the spec's service, run a scenario as its load, stop it."""

    def __init__(self, loaded: LoadedSpec) -> None:
        service = loaded.spec.service
        if service is None or service.start is None:
            raise ValueError("a service hone starts (service.start) is needed")
        self.loaded = loaded
        self.manager = ServiceManager(loaded, journal=None)

    @property
    def names_binary(self) -> bool:
        service = self.loaded.spec.service
        assert service is not None and service.start is not None
        return any("{binary}" in arg for arg in to_argv(service.start, service.shell))

    @property
    def metrics(self) -> list[Any]:
        return list(self.loaded.spec.metrics)

    def run(self, scenario: Scenario, binary: Path, *, timeout: float, cwd: Path | None,
            env: dict[str, str] | None = None,
            attach: Callable[[list[int]], AbstractContextManager[object]] | None = None) -> ServiceRun:
        """Start ``binary`` as the service (``env`` added to its environment: profile
        paths), run ``scenario`` as the load, read the server's CPU time, stop it.
        ``attach`` (a sampler) is entered with the server's PIDs for the load's duration."""
        mgr = self.manager
        program = str(Path(binary).resolve())
        mgr.ensure({"binary": program}, dict(env or {}), {None})
        status: int | None = None
        seen: set[int] = set()
        try:
            seen |= _running(_tree(mgr.pid), program)
            pids = sorted(seen) or ([mgr.pid] if mgr.pid is not None else [])
            with attach(pids) if attach is not None else nullcontext():
                res = run_scenario(scenario, binary, timeout=timeout, cwd=cwd)
            died = mgr.death(during="the load, before hone stopped it")
            cpu = mgr.cpu_seconds()
            tree = _tree(mgr.pid)
            seen |= _running(tree, program)
            if cpu is not None:  # a forking server's live workers: not yet in the master's cutime
                cpu += sum(process_cpu_s(pid) or 0.0 for pid in tree[1:])
        finally:
            log = mgr.log
            status = mgr.stop()
        return ServiceRun(res, cpu, status, died, str(log), len(seen))

    def close(self) -> None:
        self.manager.close()


def _tree(root: int | None) -> list[int]:
    """``root`` and its descendants, [] without a root."""
    return [] if root is None else descendants(root)


def _running(pids: list[int], program: str) -> set[int]:
    """The processes among ``pids`` whose executable is ``program``."""
    out = set()
    for pid in pids:
        try:
            exe = os.readlink(f"/proc/{pid}/exe").removesuffix(" (deleted)")
        except OSError:
            continue
        if exe == program:
            out.add(pid)
    return out


__all__ = ["SERVER_CPU", "ServiceLoad", "ServiceRun"]
