"""One external process: argv, optional stdin, timeout, CPU times from ``os.wait4``.

Every external command hone starts goes through :func:`run_process`, so every one has a
timeout and a killed process group on expiry. Data reaches commands as argv, stdin or
environment — never pasted into shell text.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from hone.errors import HoneError


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

    @property
    def cpu_s(self) -> float:
        """User + system CPU time of the child and the descendants it waited for."""
        return self.user_s + self.sys_s

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out

    def stderr_tail(self, lines: int = 5) -> str:
        tail = self.stderr.strip().splitlines()[-lines:]
        return " | ".join(line.strip() for line in tail)

    def describe_failure(self) -> str:
        """One line: timeout, signal or exit code, and the tail of stderr."""
        name = self.argv[0] if self.argv else "?"
        if self.timed_out:
            what = f"{name} timed out after {self.wall_s:.1f} s (process group killed)"
        elif self.signal is not None:
            what = f"{name} was killed by signal {self.signal} ({signal.Signals(self.signal).name})"
        else:
            what = f"{name} exited with code {self.returncode}"
        tail = self.stderr_tail()
        return f"{what}; stderr: {tail}" if tail else what


def run_process(
    argv: Sequence[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    stdin: str | bytes | None = None,
    capture: bool = True,
    check: bool = False,
) -> ProcessResult:
    """Run ``argv`` (no shell) in its own process group; kill the group on timeout.

    ``env`` replaces the environment when given. ``stdin`` is fed to the process.
    CPU times and max RSS come from ``os.wait4`` on the direct child. With ``check`` a
    failure raises :class:`HoneError` naming the exit code/timeout and the stderr tail.
    """
    argv = [str(a) for a in argv]
    pipe = subprocess.PIPE if capture else subprocess.DEVNULL
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=pipe,
            stderr=pipe,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise HoneError(f"command not found: {argv[0]}", hint="check the command and your PATH") from exc
    except PermissionError as exc:
        raise HoneError(f"cannot execute {argv[0]}: permission denied") from exc
    except OSError as exc:
        raise HoneError(f"cannot start {argv[0]}: {exc}") from exc

    out_chunks: list[bytes] = []
    err_chunks: list[bytes] = []
    threads: list[threading.Thread] = []

    def _drain(stream, sink: list[bytes]) -> None:  # type: ignore[no-untyped-def]
        for chunk in iter(lambda: stream.read(65536), b""):
            sink.append(chunk)
        stream.close()

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

    # wait4 in a thread so the wall time stops the moment the child exits, not at a poll tick.
    reaped: dict[str, object] = {}
    done = threading.Event()

    def _reap() -> None:
        _, status, usage = os.wait4(proc.pid, 0)
        reaped["t"] = time.perf_counter()
        reaped["status"] = status
        reaped["usage"] = usage
        done.set()

    reaper = threading.Thread(target=_reap, daemon=True)
    reaper.start()
    timed_out = not done.wait(timeout)
    if timed_out:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        done.wait()
    else:
        # The child is gone; its own children may still hold the pipes open.
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            pass
    for t in threads:
        t.join(timeout=5 if not timed_out else 2)
    if any(t.is_alive() for t in threads):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for t in threads:
            t.join(timeout=2)

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
    )
    if check and not result.ok:
        raise HoneError(result.describe_failure())
    return result
