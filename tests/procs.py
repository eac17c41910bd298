"""Finding a test's processes by a unique marker in their environment, never by name alone
(other things run on this machine)."""

from __future__ import annotations

import os
import time
import uuid

MARK_ENV = "HONE_TEST_MARK"


def new_mark() -> str:
    return uuid.uuid4().hex


def _scan(proc_file: str, needle: bytes) -> list[tuple[int, str]]:
    """(pid, command name) of running processes (zombies excluded) whose /proc/PID/<proc_file>
    contains ``needle``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/{proc_file}", "rb") as fh:
                if needle not in fh.read():
                    continue
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2:].split()[0] != b"Z":
            found.append((int(name), stat[stat.find(b"(") + 1:stat.rfind(b")")].decode()))
    return found


def marked(mark: str) -> list[tuple[int, str]]:
    """(pid, command name) of running processes (zombies excluded) whose environment has ``mark``."""
    return _scan("environ", f"{MARK_ENV}={mark}".encode())


def wait_marked(mark: str, comm: str, count: int = 1, timeout: float = 30) -> list[tuple[int, str]]:
    """Wait until ``count`` processes named ``comm`` carry ``mark``; all marked processes then."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = marked(mark)
        if sum(c == comm for _, c in found) >= count:
            return found
        time.sleep(0.02)
    raise AssertionError(f"fewer than {count} {comm} processes with the test's mark after {timeout} s")


def with_arg(text: str) -> list[tuple[int, str]]:
    """(pid, command name) of running processes whose command line contains ``text`` — for a
    process that rewrites its environment's memory (setproctitle: ssh's connection master)."""
    return _scan("cmdline", text.encode())
