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
import pwd
import re
import signal
import stat
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hone.build.scenario import Scenario, run_scenario
from hone.core.process import ProcessResult, descendants, process_cpu_s
from hone.run.service import ServiceManager
from hone.spec.loader import LoadedSpec
from hone.spec.models import to_argv

#: The metric name of the server's CPU time (user + system seconds) in a run.
SERVER_CPU = "server_cpu_s"
#: The server's CPU microseconds per unit of the spec's throughput metric (build.cpu_per).
SERVER_CPU_PER_OP = "server_cpu_us_per_op"


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
    #: Lines of the server's log in which a profiling runtime says it could not write (libgcov's
    #: ``profiling:…``, ``LLVM Profile Error``), distinct, in order.
    profile_errors: list[str] = field(default_factory=list)
    #: What was done so that processes running under another user could write their profile
    #: (or why they cannot), None when every process ran as hone's user.
    handover: str | None = None

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
            attach: Callable[[list[int]], AbstractContextManager[object]] | None = None,
            profile_dir: Path | None = None) -> ServiceRun:
        """Start ``binary`` as the service (``env`` added to its environment: profile
        paths), run ``scenario`` as the load, read the server's CPU time, stop it.
        ``attach`` (a sampler) is entered with the server's PIDs for the load's duration.
        ``profile_dir``: where its processes write their profiles at exit; made theirs when
        they run as another user (nginx's workers run as ``nobody`` under a root master)."""
        mgr = self.manager
        program = str(Path(binary).resolve())
        mgr.ensure({"binary": program}, dict(env or {}), {None})
        status: int | None = None
        seen: set[int] = set()
        handover = None
        try:
            seen |= _running(_tree(mgr.pid), program)
            if profile_dir is not None:
                handover = hand_over(profile_dir, _foreign_uids(seen))
            pids = sorted(seen) or ([mgr.pid] if mgr.pid is not None else [])
            with attach(pids) if attach is not None else nullcontext():
                res = run_scenario(scenario, binary, timeout=timeout, cwd=cwd)
            died = mgr.death(during="the load, before hone stopped it")
            cpu = mgr.cpu_seconds()
            tree = _tree(mgr.pid)
            seen |= _running(tree, program)
            if profile_dir is not None and handover is None:  # workers forked after ``ready``
                handover = hand_over(profile_dir, _foreign_uids(seen))
            if cpu is not None:  # a forking server's live workers: not yet in the master's cutime
                cpu += sum(process_cpu_s(pid) or 0.0 for pid in tree[1:])
        finally:
            log = mgr.log
            status = mgr.stop()
        errors = read_profile_errors(Path(log)) if profile_dir is not None and log is not None else []
        return ServiceRun(res, cpu, status, died, str(log), len(seen), errors, handover)

    def close(self) -> None:
        self.manager.close()


# What profiling runtimes print when a process cannot write its profile at exit: libgcov
# ("profiling:/path/x.gcda:Skip", ":Cannot open", ":Version mismatch", …) and compiler-rt.
_PROFILE_ERROR = re.compile(r"^(?:profiling:\S.*|LLVM Profile (?:Error|Warning):.*)$", re.MULTILINE)


def read_profile_errors(log: Path, limit: int = 1000) -> list[str]:
    """The distinct profiling-runtime error lines of a server's log, in order (at most ``limit``)."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return []
    return list(dict.fromkeys(m.group(0).strip() for m in _PROFILE_ERROR.finditer(text)))[:limit]


def _foreign_uids(pids: set[int]) -> set[int]:
    """The effective user ids other than ours among ``pids``."""
    out = set()
    for pid in pids:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        m = re.search(r"^Uid:\s+\d+\s+(\d+)", status, re.MULTILINE)
        if m and int(m.group(1)) != os.geteuid():
            out.add(int(m.group(1)))
    return out


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def hand_over(directory: Path, uids: set[int]) -> str | None:
    """Let processes running as ``uids`` write their profiles into ``directory`` (created):
    owned by that user (several users: writable by all, sticky), and say so; or, when one of
    its parent directories does not let them through, say which. None without such processes."""
    if not uids:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    users = ", ".join(sorted(_user(u) for u in uids))
    try:
        if len(uids) == 1:
            os.chown(directory, next(iter(uids)), -1)
        else:
            directory.chmod(0o1777)
    except OSError as exc:
        return (f"the server's processes run as {users}, who cannot write {directory}, and hone could not give it"
                f" to them ({exc.strerror}): their profiles are lost; run the server as hone's user")
    for parent in directory.resolve().parents:
        st = parent.stat()
        if not all(st.st_mode & stat.S_IXOTH or (st.st_uid == u and st.st_mode & stat.S_IXUSR) for u in uids):
            return (f"the server's processes run as {users}, who cannot reach {directory}: {parent} (mode"
                    f" {stat.filemode(st.st_mode)}) does not let them through, so their profiles are lost; give"
                    " --workdir a directory they can reach")
    return f"the server's processes run as {users}: {directory} was made theirs so they can write their profiles"


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


__all__ = ["SERVER_CPU", "SERVER_CPU_PER_OP", "ServiceLoad", "ServiceRun", "hand_over", "read_profile_errors"]
