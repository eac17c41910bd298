"""The server a benchmark measures: start it, know when it is ready, keep it, stop it.

Two modes (``service:`` in the spec, :class:`hone.spec.models.Service`):

* hone runs it (``start``): started after a configuration's knobs are written, kept
  running across configurations while nothing that needs a restart changed (a knob with
  ``restart: service``, a ``{param}`` of the start command, an env/library knob with
  ``scope: service``), restarted once per configuration otherwise, stopped at the end. The
  port must be free before a start (a server you did not start, or one still shutting down,
  is an error, never a benchmark against the wrong process). Its output goes to a log per
  start under the state directory; a server that exits is reported with the log's tail.
  The journal records it like a knob (:mod:`hone.knobs.service`), so ``hone rollback``
  stops it after ``kill -9`` of hone.
* managed elsewhere (``restart``, e.g. ``systemctl restart postgresql``): hone runs the
  restart command once per configuration that needs it, then waits for ``ready``; with
  ``hosts`` the command runs over ssh on one host after the other, each ready before the
  next (a rolling restart).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hone.core.errors import HoneError, KnobError
from hone.core.paths import state_dir
from hone.core.process import finish_process, process_cpu_s, run_process, start_process
from hone.core.restart import Restart, describe_probe, port_open, probe_once, run_restart
from hone.core.shell_text import bind_argv
from hone.knobs.remote import split_host, ssh_argv
from hone.knobs.service import ServiceDriver, ServiceRecord, process_start, stop_instance
from hone.spec.loader import LoadedSpec
from hone.spec.models import ReadyProbe, Service, to_argv

#: Lines of a service's log quoted when it fails.
LOG_TAIL = 12
#: Sessions whose service logs are kept under <state dir>/services.
KEEP_SESSIONS = 20


class ServiceError(HoneError):
    """The service could not be started, got ready, or stopped (a trial fails, or the session
    refuses to start)."""


def log_tail(path: Path, lines: int = LOG_TAIL) -> str:
    """The last ``lines`` lines of a log, joined with `` | ``."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16384))
            text = fh.read().decode(errors="replace")
    except OSError:
        return "(no log)"
    tail = [line.strip() for line in text.strip().splitlines()[-lines:] if line.strip()]
    return " | ".join(tail) or "(empty log)"


def _prune(logs: Path, keep: int = KEEP_SESSIONS) -> None:
    """Keep the service logs of the last ``keep`` sessions."""
    try:
        sessions = sorted((d for d in logs.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime)
    except OSError:
        return
    for old in sessions[:-keep] if len(sessions) > keep else []:
        shutil.rmtree(old, ignore_errors=True)


def _identity(user: str | None) -> dict[str, Any]:
    """Popen arguments that run the server as ``user``: uid, its group and its groups (a
    uid change alone keeps root's group)."""
    if user is None:
        return {}
    try:
        pw = pwd.getpwnam(user)
    except KeyError:
        raise ServiceError(f"service: no such user {user!r}") from None
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": os.getgrouplist(user, pw.pw_gid)}


def _host_address(host: str) -> str:
    """``root@10.0.0.2:2222`` → ``10.0.0.2`` (where the host's own services listen)."""
    target, _ = split_host(host)
    return target.rsplit("@", 1)[-1]


@dataclass
class _Instance:
    proc: subprocess.Popen[bytes]
    key: str
    log: Path
    log_start: int
    info: dict[str, Any] = field(default_factory=dict)


class ServiceManager:
    """The lifecycle of one spec's service for one hone session."""

    def __init__(self, loaded: LoadedSpec, journal: Any) -> None:
        """``journal``: the session's journal (``hone rollback`` stops what it started after
        ``kill -9``), or None where no session runs (``hone pgo`` stops it itself)."""
        service = loaded.spec.service
        assert service is not None
        self.loaded = loaded
        self.spec: Service = service
        self.journal = journal
        self.name = service.name or loaded.spec.name or "service"
        self.record = ServiceRecord(
            name=self.name, signal=service.stop.signal,
            stop_command=to_argv(service.stop.command) if service.stop.command else None,
            stop_timeout=service.stop.timeout)
        self.driver = ServiceDriver(self.record)
        self.log_dir = state_dir() / "services" / f"{self.name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        _prune(self.log_dir.parent)
        self.starts = 0
        self.restarts_done = 0
        self._running: _Instance | None = None
        self._last_log: Path | None = None

    # -- what a configuration needs ----------------------------------------------

    @property
    def managed(self) -> bool:
        """True when hone runs the server (``start``), False when it only restarts it."""
        return self.spec.start is not None

    @property
    def running(self) -> bool:
        return self._running is not None and self._running.proc.poll() is None

    def ensure(self, params: dict[str, str], env: dict[str, str], restart: set[str | None]) -> None:
        """Have the service running with ``params`` (its start command's placeholders) and
        ``env`` (env/library knobs of scope service), restarting it when ``restart`` names
        hosts whose restart-level knobs changed (None: a local one, the whole service) or
        when ``params``/``env`` differ from the running instance's."""
        if not self.managed:
            if restart:
                self.restart_external(None if None in restart or not self.spec.hosts else restart)
            return
        key = json.dumps([sorted(params.items()), sorted(env.items())])
        if self.running and not restart and self._running is not None and self._running.key == key:
            return
        if self._running is not None:
            self.stop()
        self._start(params, env, key)

    def death(self, during: str = "the trial") -> str | None:
        """Why the service hone started is no longer running (exit code and its log's tail),
        or None while it runs."""
        if not self.managed or self._running is None:
            return None
        code = self._running.proc.poll()
        if code is None:
            return None
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        return f"service {self.name} {how} during {during}; log {self._running.log}: {log_tail(self._running.log)}"

    def check(self) -> None:
        """Raise KnobError when the service hone started is no longer running: the run that
        would measure it fails, the session goes on (the next configuration starts it again)."""
        why = self.death()
        if why is not None:
            raise KnobError(why)

    # -- hone runs it ----------------------------------------------------------------

    def _port(self) -> tuple[str, int] | None:
        assert self.spec.ready is not None
        return self.spec.ready.address()

    def _start(self, params: dict[str, str], env: dict[str, str], key: str) -> None:
        assert self.spec.start is not None and self.spec.ready is not None
        address = self._port()
        if address is not None and port_open(*address):
            raise ServiceError(
                f"service {self.name}: {address[0]}:{address[1]} is already in use before hone starts it (another "
                "server, or one still shutting down): hone will not benchmark a process it did not start",
                hint="stop that server first, or give the service another port")
        build = self.loaded.spec.build
        if build is not None and "binary" not in params:  # {binary} outside hone pgo: the project's build
            params = {**params, "binary": str((self.loaded.base_dir / build.dir / build.binary).resolve())}
        argv, bound = bind_argv(to_argv(self.spec.start, self.spec.shell), params, what="service.start")
        child_env = {**os.environ, **self.spec.env, **env, **bound}
        cwd = self.loaded.base_dir / self.spec.cwd if self.spec.cwd else self.loaded.base_dir
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        log = self.log_dir / f"{self.name}-{self.starts}.log"
        if self.journal is not None:
            self.journal.ensure_original(self.driver)  # "stopped": rollback stops what hone starts
        with log.open("ab") as out:
            start = out.tell()
            try:
                proc = start_process(argv, env=child_env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, **_identity(self.spec.user))
            except (OSError, ValueError) as exc:  # no such program, no such user
                raise ServiceError(f"service {self.name}: cannot start {argv[0]}: {exc}") from None
        info = {"pid": proc.pid, "start": process_start(proc.pid) or 0, "pgid": proc.pid, "log": str(log)}
        if self.journal is not None:
            self.journal.note_set(self.driver, json.dumps(info))
        self.driver.instance = info
        self._running = _Instance(proc, key, log, start, info)
        try:
            self._wait_ready(self.spec.ready)
            self._warmup()
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, probe: ReadyProbe) -> None:
        assert self._running is not None
        deadline = time.monotonic() + probe.timeout
        while True:
            code = self._running.proc.poll()
            if code is not None:
                raise ServiceError(f"service {self.name} exited with code {code} while starting; log "
                                   f"{self._running.log}: {log_tail(self._running.log)}")
            resolved = self._ready_for(None) or {}
            if probe_once(resolved, self._running.log, self._running.log_start):
                return
            if time.monotonic() >= deadline:
                why = describe_probe(resolved, self._running.log, self._running.log_start)
                raise ServiceError(f"service {self.name} was not ready after {probe.timeout:g} s ({why}); log "
                                   f"{self._running.log}: {log_tail(self._running.log)}")
            time.sleep(probe.interval)

    def _warmup(self) -> None:
        warm = self.spec.warmup
        if warm is None:
            return
        argv = to_argv(warm.command)
        deadline = time.monotonic() + (warm.seconds or 0)
        while True:
            left = deadline - time.monotonic()
            limit = min(warm.timeout, left) if warm.seconds else warm.timeout
            res = run_process(argv, timeout=max(0.1, limit), label=f"service {self.name} warmup")
            if not res.ok and not (warm.seconds and res.timed_out):
                raise ServiceError(f"service {self.name}: warmup failed: {res.describe_failure()}")
            self.check()
            if not warm.seconds or time.monotonic() >= deadline:
                return

    @property
    def log(self) -> Path | None:
        """The log of the running (or last stopped) instance's start."""
        return self._running.log if self._running is not None else self._last_log

    @property
    def pid(self) -> int | None:
        """The process id of the running instance hone started (None when none runs)."""
        return self._running.proc.pid if self.running and self._running is not None else None

    def cpu_seconds(self) -> float | None:
        """CPU time (user + system, all its threads and the children it waited for) the
        running instance has used so far, from /proc/PID/stat; None when none runs."""
        pid = self.pid
        return None if pid is None else process_cpu_s(pid)

    def stop(self) -> int | None:
        """Stop the instance hone started (signal or command, SIGKILL after the timeout),
        reap it, and wait until its port is free again. Returns its exit status as
        :class:`subprocess.Popen` gives it (negative: the signal that ended it), None when
        nothing ran."""
        inst = self._running
        if inst is None:
            return None
        self._running = None
        self._last_log = inst.log
        stop_instance(inst.info, self.record)
        try:
            inst.proc.wait(timeout=self.record.stop_timeout + 5)
        except subprocess.TimeoutExpired:
            pass
        finish_process(inst.proc)
        address = self._port()
        deadline = time.monotonic() + self.record.stop_timeout
        while address is not None and port_open(*address, timeout=0.2) and time.monotonic() < deadline:
            time.sleep(0.1)
        return inst.proc.returncode

    def close(self) -> None:
        """End of the session: stop what hone started."""
        self.stop()

    # -- managed elsewhere --------------------------------------------------------------

    def _ready_for(self, host: str | None) -> dict[str, Any] | None:
        """The ready probe resolved for ``host`` (``{host}`` filled, a command run over ssh)."""
        probe = self.spec.ready
        if probe is None:
            return None
        where = _host_address(host) if host else "127.0.0.1"
        out: dict[str, Any] = {"timeout": probe.timeout, "interval": probe.interval}
        if probe.tcp is not None:
            out["tcp"] = probe.tcp.replace("{host}", where)
        if probe.http is not None:
            out["http"] = probe.http.replace("{host}", where)
        if probe.command is not None:
            argv = to_argv(probe.command)
            out["command"] = ssh_argv(host, list(self.spec.ssh_options), argv) if host else argv
        if probe.log is not None:
            out["log"] = probe.log
        return out

    def restarts(self) -> list[tuple[str | None, Restart]]:
        """(host, restart) of a service managed elsewhere: once locally, or once per host over
        ssh, each with its ready probe."""
        assert self.spec.restart is not None
        argv = to_argv(self.spec.restart, self.spec.shell)
        timeout = self.spec.restart_timeout
        if not self.spec.hosts:
            return [(None, Restart(argv, timeout, self._ready_for(None)))]
        return [(h, Restart(ssh_argv(h, list(self.spec.ssh_options), argv), timeout, self._ready_for(h)))
                for h in self.spec.hosts]

    def restart_external(self, hosts: set[str | None] | None = None) -> None:
        """Run the restart command (on ``hosts``, default all, one after the other), waiting
        for ``ready`` after each: a rolling restart."""
        for host, restart in self.restarts():
            if hosts is not None and host not in hosts:
                continue
            why = run_restart(restart)
            if why:
                raise ServiceError(f"service {self.name}{f' on {host}' if host else ''}: {why}")
            self.restarts_done += 1


__all__ = ["ServiceError", "ServiceManager", "log_tail", "port_open", "stop_instance"]
