"""One external process: argv, optional stdin, timeout, CPU times from ``os.wait4``.

Every external command hone starts goes through :func:`run_process`, so every one has a
timeout and a killed process group on expiry. Data reaches commands as argv, stdin or
environment — never pasted into shell text.

No process of hone's outlives it. Each call puts a tag in its child's environment
(``HONE_OWNER``: hone's pid and start time, and a number per call) that every descendant
inherits. When the child exits — normally, on timeout, or on an exception such as the
KeyboardInterrupt hone turns SIGTERM into — the call kills its process group and every
other process carrying its tag. The tag and not only the group, because ``setsid`` and
daemonized children leave the group but keep the environment (Jenkins' process-tree
killer finds a build's processes the same way). :func:`shutdown` (the CLI's exit) stops
whatever still carries this hone's tag; :func:`stop_orphans` (``hone rollback``) stops
what a hone that died left running. A process that leaves the group and also clears its
environment (``setsid env -i …``) or overwrites it with a process title (setproctitle, as
ssh's connection master does) escapes; ssh's master is closed with ``ssh -O exit``.

hone is not a child subreaper (``PR_SET_CHILD_SUBREAPER``): that would also catch those,
but hone would then have to reap the orphans it adopts, and /proc cannot tell an adopted
orphan from a child a thread of hone (or a library) is about to ``wait4`` for: reaping the
wrong one steals a benchmark's exit status and CPU times.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hone.core.errors import HoneError

#: The environment variable that tags every process hone starts, and their descendants:
#: space-separated ``PID:STARTTIME:CALL`` tokens, outermost hone first (hone inside a
#: benchmark adds its own). ``:spare`` marks a call whose detached daemons may stay;
#: ``:service`` a restart command's, whatever it leaves running (the service it started) stays.
OWNER_ENV = "HONE_OWNER"
#: Seconds a process gets between SIGTERM and SIGKILL when hone stops it.
GRACE_S = 1.0
#: Seconds between two looks at a run's abort condition.
ABORT_POLL_S = 0.2
#: Seconds a process a daemon-sparing call left in its group gets to detach (setsid).
DETACH_S = 0.5
_SPARE = "spare"
_SERVICE = "service"
_ENV_KEY = OWNER_ENV.encode() + b"="


@dataclass
class ProcessResult:
    """What one finished (or killed) process did. Times in seconds, RSS in KiB."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    user_s: float
    sys_s: float
    max_rss_kb: int
    timed_out: bool = False
    signal: int | None = None
    extra: dict[str, float] = field(default_factory=dict)
    #: Processes the command left running that hone killed after it exited ("sleep 3021").
    leftovers: list[str] = field(default_factory=list)
    #: Why the command was killed before it finished (``abort_if`` of :func:`run_process`).
    aborted: str | None = None

    @property
    def cpu_s(self) -> float:
        """User + system CPU time of the child and the descendants it waited for."""
        return self.user_s + self.sys_s

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and self.aborted is None

    def stderr_tail(self, lines: int = 5) -> str:
        tail = self.stderr.strip().splitlines()[-lines:]
        return " | ".join(line.strip() for line in tail)

    def describe_failure(self) -> str:
        """One line: timeout, signal or exit code, and the tail of stderr."""
        name = self.argv[0] if self.argv else "?"
        if self.aborted is not None:
            return f"{name} was stopped: {self.aborted}"
        if self.timed_out:
            what = f"{name} timed out after {self.wall_s:.1f} s (process group killed)"
        elif self.signal is not None:
            what = f"{name} was killed by signal {self.signal} ({signal.Signals(self.signal).name})"
        else:
            what = f"{name} exited with code {self.returncode}"
        tail = self.stderr_tail()
        return f"{what}; stderr: {tail}" if tail else what


# ---------------------------------------------------------------- /proc


@dataclass(frozen=True)
class _Proc:
    """One process as /proc/PID/stat shows it; ``start`` (clock ticks since boot) tells a
    reused pid apart."""

    pid: int
    ppid: int
    sid: int
    start: int
    comm: str
    zombie: bool

    def describe(self) -> str:
        return f"{self.comm} {self.pid}"

    @property
    def detached(self) -> bool:
        """Leads a session of its own: a daemon (setsid), not part of the command that started it."""
        return self.sid == self.pid


def _read(path: str, size: int = 65536) -> bytes:
    # A /proc read returns all it has up to ``size``: a short read is the end (one syscall
    # less per process of a sweep than reading until b"").
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = [os.read(fd, size)]
        while len(chunks[-1]) == size:
            chunks.append(os.read(fd, size))
        return b"".join(chunks)
    finally:
        os.close(fd)


def _stat(pid: int) -> _Proc | None:
    try:
        data = _read(f"/proc/{pid}/stat")
    except OSError:
        return None
    lpar, rpar = data.find(b"("), data.rfind(b")")
    fields = data[rpar + 2:].split()
    try:
        return _Proc(pid, int(fields[1]), int(fields[3]), int(fields[19]),
                     data[lpar + 1:rpar].decode(errors="replace"), fields[0] in (b"Z", b"X"))
    except (IndexError, ValueError):
        return None


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds ``pid`` has used so far: utime + stime and the children it reaped (cutime +
    cstime), from /proc/PID/stat; None when it is gone or unreadable."""
    try:
        data = _read(f"/proc/{pid}/stat")
    except OSError:
        return None
    fields = data[data.rfind(b")") + 2:].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def descendants(root: int) -> list[int]:
    """``root`` and every process below it, from /proc (root first)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and (p := _stat(int(entry.name))) is not None:
            children.setdefault(p.ppid, []).append(p.pid)
    found, todo = [root], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _tokens(pid: int) -> list[str]:
    """The HONE_OWNER tokens in a process's environment (as it was at exec); [] if none or unreadable."""
    try:
        data = _read(f"/proc/{pid}/environ")
    except OSError:  # gone, or another user's process
        return []
    i = data.find(_ENV_KEY)
    while i > 0 and data[i - 1] != 0:  # XHONE_OWNER=… is another variable
        i = data.find(_ENV_KEY, i + 1)
    if i < 0:
        return []
    end = data.find(b"\0", i)
    return data[i + len(_ENV_KEY):end if end >= 0 else None].decode(errors="replace").split()


def _running(p: _Proc) -> bool:
    """Still running (not a zombie) and the same process, not a reused pid."""
    now = _stat(p.pid)
    return now is not None and not now.zombie and now.start == p.start


_owner_cache: dict[int, str] = {}


def _owner() -> str:
    """``PID:STARTTIME`` of this process (a forked child gets its own)."""
    pid = os.getpid()
    if pid not in _owner_cache:
        me = _stat(pid)
        _owner_cache[pid] = f"{pid}:{me.start if me else 0}"
    return _owner_cache[pid]


def _split(token: str) -> tuple[str, str] | None:
    """A token's owner (``PID:STARTTIME``) and its mark ("", ``spare`` or ``service``)."""
    parts = token.split(":")
    if len(parts) not in (3, 4) or not all(p.isdigit() for p in parts[:3]):
        return None
    return f"{parts[0]}:{parts[1]}", (parts[3] if len(parts) == 4 else "")


def _kept(mark: str, p: _Proc) -> bool:
    """Whether a process a call with ``mark`` left running may stay after the call: a detached
    daemon of a sparing call, anything a service's restart command left."""
    return mark == _SERVICE or (mark == _SPARE and p.detached)


def _ancestors() -> set[int]:
    """This process and its ancestors: never stopped, whatever tag they carry."""
    seen = {os.getpid()}
    pid = os.getppid()
    while pid > 1 and pid not in seen:
        seen.add(pid)
        st = _stat(pid)
        pid = st.ppid if st else 0
    return seen


def _scan(select: Callable[[_Proc, list[str]], bool], groups: Iterable[int] = ()) -> list[_Proc]:
    """One pass over /proc: running processes in one of ``groups`` or whose tags ``select`` picks."""
    groups = set(groups)
    found: list[_Proc] = []
    keep: set[int] | None = None
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        member = False
        if groups:
            try:
                member = os.getpgid(pid) in groups
            except OSError:
                continue
        tokens = _tokens(pid)
        if not tokens and not member:
            continue
        st = _stat(pid)
        if st is None or st.zombie or not (member or select(st, tokens)):
            continue
        keep = _ancestors() if keep is None else keep
        if pid not in keep:
            found.append(st)
    return found


def _signal_all(procs: Iterable[_Proc], sig: int) -> None:
    for p in procs:
        if _running(p):
            try:
                os.kill(p.pid, sig)
            except OSError:
                pass


def _wait_gone(procs: list[_Proc], limit: float) -> list[_Proc]:
    """Wait up to ``limit`` seconds for ``procs`` to exit; the ones still running."""
    deadline = time.monotonic() + limit
    pause = 0.002
    while (left := [p for p in procs if _running(p)]) and time.monotonic() < deadline:
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
    return left


def _stop(procs: list[_Proc]) -> None:
    """SIGTERM, up to :data:`GRACE_S` to exit, then SIGKILL. Orphans are reaped by init."""
    if not procs:
        return
    _signal_all(procs, signal.SIGTERM)
    left = _wait_gone(procs, GRACE_S)
    if left:
        _signal_all(left, signal.SIGKILL)
        _wait_gone(left, GRACE_S)


def _stop_all(select: Callable[[_Proc, list[str]], bool], groups: Iterable[int] = ()) -> list[_Proc]:
    """Stop what :func:`_scan` finds, again until a pass finds nothing (a process may fork
    between a scan and its signal); returns every process stopped, by pid."""
    stopped: dict[int, _Proc] = {}
    groups = list(groups)
    for _ in range(3):
        found = [p for p in _scan(select, groups) if p.pid not in stopped or stopped[p.pid].start != p.start]
        if not found:
            break
        _stop(found)
        stopped.update((p.pid, p) for p in found)
    return sorted(stopped.values(), key=lambda p: p.pid)


# ---------------------------------------------------------------- calls hone has running


@dataclass(frozen=True)
class _Call:
    token: str
    leader: int  # the child's pid = its process group
    mark: str  # the token's (_split): what may stay after the call


_calls = itertools.count(1)
_live: dict[int, _Call] = {}
_exit_hooks: list[Callable[[], Any]] = []
_lock = threading.Lock()


def _new_call(mark: str) -> str:
    return f"{_owner()}:{next(_calls)}" + (f":{mark}" if mark else "")


def _tagged(env: Mapping[str, str] | None, token: str) -> dict[str, str]:
    """``env`` (default: ours) plus the call's tag after the tags this hone inherited."""
    chain = [*os.environ.get(OWNER_ENV, "").split(), token]
    tagged = {OWNER_ENV: " ".join(chain)}
    tagged.update((k, v) for k, v in (os.environ if env is None else env).items() if k != OWNER_ENV)
    return tagged


def _wait_detached(procs: list[_Proc]) -> None:
    """Give processes up to :data:`DETACH_S` to exit or to lead a session of their own."""
    deadline = time.monotonic() + DETACH_S
    pause = 0.002
    while procs and time.monotonic() < deadline:
        time.sleep(pause)
        pause = min(pause * 2, 0.05)
        procs = [p for p in procs
                 if (now := _stat(p.pid)) and not now.zombie and now.start == p.start and not now.detached]


def _sweep(call: _Call, *, everything: bool) -> list[_Proc]:
    """Stop the call's process group and what carries its tag. Unless ``everything``, a
    sparing call leaves the daemons it started (processes with a session of their own)."""

    def select(p: _Proc, tokens: list[str]) -> bool:
        return call.token in tokens and (everything or not _kept(call.mark, p))

    if call.mark == _SERVICE and not everything:
        return []  # all it left is the service (in its group too: a background job of its script)
    if call.mark == _SPARE and not everything:
        # A daemon forks, and its child calls setsid a moment later: a leftover found
        # between the two must not be taken for one that stayed.
        _wait_detached(_scan(select, [call.leader]))
    return _stop_all(select, [call.leader])


def _forget(leader: int) -> None:
    with _lock:
        _live.pop(leader, None)


def at_exit(hook: Callable[[], Any]) -> None:
    """Run ``hook`` in :func:`shutdown`, before the final sweep (once, however often registered)."""
    with _lock:
        if hook not in _exit_hooks:
            _exit_hooks.append(hook)


def shutdown() -> list[str]:
    """At hone's exit: run the exit hooks, then stop every process group hone has running and
    everything carrying this hone's tag (but daemons that sparing calls left). Returns what it
    stopped ("sleep 3021")."""
    with _lock:
        hooks = list(_exit_hooks)
        _exit_hooks.clear()
    for hook in hooks:
        try:
            hook()
        except Exception:  # one failing hook must not keep the others or the sweep from running
            pass
    owner = _owner()
    with _lock:
        leaders = [c.leader for c in _live.values()]

    def select(p: _Proc, tokens: list[str]) -> bool:
        for token in tokens:
            split = _split(token)
            if split and split[0] == owner and not _kept(split[1], p):
                return True
        return False

    return [p.describe() for p in _stop_all(select, leaders)]


def stop_orphans() -> list[str]:
    """Stop the processes a hone process that is no longer running started (its pid is gone,
    or reused: the start time differs) — e.g. a knob's ``set`` still running after ``kill -9``
    of hone. Returns one description per process stopped."""
    alive: dict[str, bool] = {}
    owners: dict[int, str] = {}

    def owner_alive(owner: str) -> bool:
        if owner not in alive:
            pid, start = owner.split(":")
            st = _stat(int(pid))
            alive[owner] = st is not None and not st.zombie and st.start == int(start)
        return alive[owner]

    def select(p: _Proc, tokens: list[str]) -> bool:
        for token in tokens:
            split = _split(token)
            if split and not owner_alive(split[0]) and not _kept(split[1], p):
                owners[p.pid] = split[0].split(":")[0]
                return True
        return False

    return [f"{p.describe()} (started by hone {owners[p.pid]}, which is no longer running)"
            for p in _stop_all(select)]


def _warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def start_process(argv: Sequence[str], *, env: Mapping[str, str] | None = None,
                  **popen: Any) -> subprocess.Popen[bytes]:
    """Start ``argv`` tagged, in a session of its own, for a caller that waits for it itself
    (a local fleet worker). :func:`shutdown` stops it if hone exits first; call
    :func:`finish_process` once it has exited."""
    token = _new_call("")
    proc = subprocess.Popen(list(argv), env=_tagged(env, token), start_new_session=True, **popen)
    with _lock:
        _live[proc.pid] = _Call(token, proc.pid, "")
    return proc


def finish_process(proc: subprocess.Popen[bytes]) -> list[str]:
    """After ``proc`` (from :func:`start_process`) exited: stop what it left running."""
    with _lock:
        call = _live.get(proc.pid)
    if call is None:
        return []
    stopped = _sweep(call, everything=True)
    _forget(proc.pid)
    return [p.describe() for p in stopped]


def _join(threads: list[threading.Thread], limit: float) -> None:
    deadline = time.monotonic() + limit
    for t in threads:
        t.join(timeout=max(0.0, deadline - time.monotonic()))


def run_process(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: str | bytes | None = None,
    capture: bool = True,
    check: bool = False,
    spare_daemons: bool = False,
    service: bool = False,
    label: str | None = None,
    abort_if: Callable[[], str | None] | None = None,
) -> ProcessResult:
    """Run ``argv`` (no shell) in its own process group; kill the group on timeout.

    ``env`` replaces the environment when given. ``stdin`` is fed to the process.
    CPU times and max RSS come from ``os.wait4`` on the direct child. With ``check`` a
    failure raises :class:`HoneError` naming the exit code/timeout and the stderr tail.

    Whatever the command left running when it exited is killed, listed in ``leftovers``
    and reported in one warning line naming ``label`` (default: the command's name).
    With ``spare_daemons`` (a knob command that may restart a service, ssh with its shared
    connection) processes with a session of their own are left running after the command
    exits; on timeout or an exception they are killed too. With ``service`` (a service's
    restart command, whose job is to leave it running) everything it left running stays, in a
    session of its own or not (``mariadbd &`` in a start script), unless it failed.

    ``abort_if`` is polled while the command runs; when it returns a reason the command is
    killed and the result carries it in ``aborted`` (a failure).
    """
    argv = [str(a) for a in argv]
    pipe = subprocess.PIPE if capture else subprocess.DEVNULL
    spare_daemons = spare_daemons or service
    mark = _SERVICE if service else _SPARE if spare_daemons else ""
    token = _new_call(mark)
    child_env = _tagged(env, token)
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=pipe,
            stderr=pipe,
            env=child_env,
            cwd=cwd,
            # A sparing call stays in hone's session, so a daemon it starts is told apart by
            # leading a session of its own; any other call gets a session to itself.
            start_new_session=not spare_daemons,
            process_group=0 if spare_daemons else None,
        )
    except FileNotFoundError as exc:
        if cwd is not None and not os.path.isdir(cwd):  # the chdir failed, not the lookup of argv[0]
            raise HoneError(f"cannot run {argv[0]}: its working directory {cwd} does not exist") from exc
        raise HoneError(f"command not found: {argv[0]}", hint="check the command and your PATH") from exc
    except PermissionError as exc:
        raise HoneError(f"cannot execute {argv[0]}: permission denied") from exc
    except OSError as exc:
        raise HoneError(f"cannot start {argv[0]}: {exc}") from exc
    call = _Call(token, proc.pid, mark)
    with _lock:
        _live[proc.pid] = call

    out_chunks: list[bytes] = []
    err_chunks: list[bytes] = []
    threads: list[threading.Thread] = []

    # wait4 in a thread so the wall time stops the moment the child exits, not at a poll tick.
    reaped: dict[str, object] = {}
    done = threading.Event()

    def _reap() -> None:
        _, status, usage = os.wait4(proc.pid, 0)
        reaped["t"] = time.perf_counter()
        reaped["status"] = status
        reaped["usage"] = usage
        done.set()

    def _drain(stream, sink: list[bytes]) -> None:  # type: ignore[no-untyped-def]
        # read1: what is there now, so output is kept even if a spared daemon never closes the pipe.
        for chunk in iter(lambda: stream.read1(65536), b""):
            sink.append(chunk)
        stream.close()

    try:
        threading.Thread(target=_reap, daemon=True).start()
        if capture:
            for stream, sink in ((proc.stdout, out_chunks), (proc.stderr, err_chunks)):
                t = threading.Thread(target=_drain, args=(stream, sink), daemon=True)
                t.start()
                threads.append(t)
        if stdin is not None:
            data = stdin.encode() if isinstance(stdin, str) else stdin

            def _feed() -> None:
                try:
                    assert proc.stdin is not None
                    proc.stdin.write(data)
                    proc.stdin.close()
                except (BrokenPipeError, OSError):
                    pass

            t = threading.Thread(target=_feed, daemon=True)
            t.start()
            threads.append(t)

        aborted = None
        if abort_if is None:
            timed_out = not done.wait(timeout)
        else:
            # Poll the abort condition while waiting (a server the command talks to died: no
            # point in waiting for the timeout of a client that retries forever).
            deadline = time.monotonic() + timeout
            while not done.wait(max(0.0, min(ABORT_POLL_S, deadline - time.monotonic()))):
                if time.monotonic() >= deadline or (aborted := abort_if()) is not None:
                    break
            timed_out = not done.is_set() and aborted is None
        if not done.is_set():
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            done.wait()
        # The child has exited (wall time is already taken): stop what it left running,
        # which may also be what holds the output pipes open.
        # (a restart command that failed did not start a service: what it left goes too)
        failed = mark == _SERVICE and reaped.get("status") != 0
        leftovers = _sweep(call, everything=timed_out or aborted is not None or failed)
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM, an error): stop the command and all it started, and
        # give the reaper thread a moment to collect the child before the interrupt goes on.
        _sweep(call, everything=True)
        done.wait(GRACE_S)
        _forget(proc.pid)
        raise
    _forget(proc.pid)

    # The output pipes close when the last writer exits; one deadline for all of them, since
    # a spared daemon that kept them open keeps every one open.
    _join(threads, 1 if mark == _SERVICE else 5 if not timed_out else 2)
    if any(t.is_alive() for t in threads) and not (mark == _SERVICE and not timed_out):
        # (a service left in the background may hold them as long as it runs: its readers end with it)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _join(threads, 2)

    status = int(reaped["status"])  # type: ignore[arg-type]
    usage = reaped["usage"]
    proc.returncode = os.waitstatus_to_exitcode(status)  # stop Popen from reaping again
    sig = -proc.returncode if proc.returncode < 0 else None
    result = ProcessResult(
        argv=argv,
        returncode=proc.returncode,
        stdout=b"".join(out_chunks).decode(errors="replace"),
        stderr=b"".join(err_chunks).decode(errors="replace"),
        wall_s=float(reaped["t"]) - start,  # type: ignore[arg-type]
        user_s=usage.ru_utime,  # type: ignore[attr-defined]
        sys_s=usage.ru_stime,  # type: ignore[attr-defined]
        max_rss_kb=int(usage.ru_maxrss),  # type: ignore[attr-defined]
        timed_out=timed_out,
        signal=sig,
        leftovers=[p.describe() for p in leftovers],
        aborted=aborted,
    )
    if leftovers and not timed_out:
        n = len(leftovers)
        _warn(f"{label or os.path.basename(argv[0])} left {n} process{'es' if n > 1 else ''} running "
              f"({', '.join(result.leftovers)}): killed")
    if check and not result.ok:
        raise HoneError(result.describe_failure())
    return result


def require_command(name: str, cwd: str | None = None) -> None:
    """Raise a one-line HoneError when ``name`` is neither on PATH nor an executable file
    (perf would otherwise fail later with a message about its own data file)."""
    if "/" in name:
        path = Path(cwd or ".") / name if not os.path.isabs(name) else Path(name)
        if path.is_file() and os.access(path, os.X_OK):
            return
    elif shutil.which(name):
        return
    raise HoneError(f"command not found: {name}", hint="check the command and your PATH")
