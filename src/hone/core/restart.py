"""Restart commands and readiness probes, as the journal keeps and runs them.

A :class:`Restart` is a command owed after a resource changed (a ``file`` knob's
``restart``, or a service managed elsewhere), with an optional resolved readiness probe, so
that even ``hone rollback`` after ``kill -9`` restarts a cluster node by node, each ready
before the next.
"""

from __future__ import annotations

import json
import re
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

from hone.core.errors import HoneError
from hone.core.process import run_process

# Readiness is asked of the server itself, never of a proxy from the environment.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def http_answers(url: str, timeout: float = 1.0) -> bool:
    """True when ``url`` answers with a status below 500."""
    try:
        with _NO_PROXY.open(url, timeout=timeout) as resp:
            return int(resp.status) < 500
    except urllib.error.HTTPError as exc:
        return exc.code < 500
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _failing(ready: dict[str, Any], log: Path | None = None, log_start: int = 0) -> str | None:
    """The first check of a resolved probe that does not pass now (None: all pass). Checks:
    ``tcp`` "host:port", ``http`` URL, ``command`` argv, ``log`` REGEX (in ``log`` from
    ``log_start``)."""
    interval = float(ready.get("interval", 0.2))
    if ready.get("tcp"):
        host, _, port = str(ready["tcp"]).rpartition(":")
        if not port_open(host.strip("[]"), int(port)):
            return f"nothing accepted connections on {ready['tcp']}"
    if ready.get("http") and not http_answers(str(ready["http"]), timeout=max(0.5, interval * 5)):
        return f"{ready['http']} did not answer"
    if ready.get("command") and not run_process(list(ready["command"]), timeout=max(5.0, interval * 10),
                                                label="ready probe").ok:
        return f"{' '.join(ready['command'])} did not exit 0"
    if ready.get("log") and log is not None:
        try:
            with log.open("rb") as fh:
                fh.seek(log_start)
                text = fh.read().decode(errors="replace")
        except OSError:
            text = ""
        if re.search(str(ready["log"]), text, re.MULTILINE) is None:
            return f"no log line matched {ready['log']!r}"
    return None


def probe_once(ready: dict[str, Any], log: Path | None = None, log_start: int = 0) -> bool:
    """One look at a resolved probe: True when every check it names passes."""
    return _failing(ready, log, log_start) is None


def describe_probe(ready: dict[str, Any], log: Path | None = None, log_start: int = 0) -> str:
    """What of the probe does not pass (for the error when it never did)."""
    return _failing(ready, log, log_start) or "it was not ready in time"


def wait_ready(ready: dict[str, Any]) -> str | None:
    """Poll a resolved probe until it passes (None) or its timeout ends (why not)."""
    deadline = time.monotonic() + float(ready.get("timeout", 30))
    while not probe_once(ready):
        if time.monotonic() >= deadline:
            return f"not ready after {float(ready.get('timeout', 30)):g} s ({describe_probe(ready)})"
        time.sleep(float(ready.get("interval", 0.2)))
    return None


class Restart(NamedTuple):
    """A command (argv, timeout in s) owed after a change, and the probe to wait for."""

    argv: list[str]
    timeout: float
    ready: dict[str, Any] | None = None

    def key(self) -> str:
        return json.dumps(self.argv)

    def shown(self) -> str:
        """The command on one line (A-Tune's stop and start workloads are two lines of shell text)."""
        return "; ".join(line.strip() for line in " ".join(self.argv).splitlines() if line.strip())

    def to_json(self) -> list[Any]:
        return [self.argv, self.timeout] + ([self.ready] if self.ready else [])

    @classmethod
    def from_json(cls, item: Sequence[Any]) -> Restart:
        return cls([str(a) for a in item[0]], float(item[1]), dict(item[2]) if len(item) > 2 and item[2] else None)


def run_restart(restart: Restart, pauses: Sequence[float] = ()) -> str | None:
    """Run a restart command, retrying after each pause, then wait for its probe; None on
    success, else why not (one line)."""
    why = ""
    for attempt in range(len(pauses) + 1):
        try:
            # the service it restarts stays up, whether it detached or was left in the background
            res = run_process(restart.argv, timeout=restart.timeout, service=True, label="restart")
        except HoneError as exc:
            why = exc.message
        else:
            if res.ok:
                late = wait_ready(restart.ready) if restart.ready else None
                return None if late is None else f"restart {restart.shown()}: {late}"
            why = res.describe_failure()
        if attempt < len(pauses):
            time.sleep(pauses[attempt])
    return f"restart {restart.shown()} failed: {why}"
