"""A server hone started, as the journal sees it: a resource whose original is "stopped".

When hone starts a service (:mod:`hone.run.service`) it journals ``service:NAME`` with the
original state ``stopped`` before the start, and each instance (pid, start time, process
group, how to stop it) as it starts. Restoring it — at the end of a session, or in ``hone
rollback`` after ``kill -9`` — stops the last instance if it is still that process (same pid
and start time): its stop signal to the process group or its stop command, SIGKILL after
the timeout.
"""

from __future__ import annotations

import json
import os
import signal
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from hone.core.errors import KnobError
from hone.core.process import run_process
from hone.knobs.base import KnobDriver


class ServiceRecord(BaseModel):
    """What the journal keeps about a service hone runs (enough to stop it after kill -9)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["service"] = "service"
    name: str
    signal: str = "TERM"
    stop_command: list[str] | None = None
    stop_timeout: float = 20.0
    safety: str = "safe"
    hosts: list[str] | None = None
    allow_dangerous: bool = False

    def format_value(self, value: Any) -> str:
        return str(value)


def process_start(pid: int) -> int | None:
    """The start time (clock ticks since boot) of ``pid``, None when it is gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2:].split()
    if fields[0] == b"Z":
        return None
    return int(fields[19])


def is_running(instance: dict[str, Any]) -> bool:
    """True while the instance's leader is still the process hone started."""
    start = process_start(int(instance["pid"]))
    return start is not None and start == int(instance["start"])


def stop_instance(instance: dict[str, Any], record: ServiceRecord, env: dict[str, str] | None = None) -> None:
    """Stop a running instance: the stop command or signal, then SIGKILL to its process group
    after ``record.stop_timeout`` s. Does nothing when it is not running any more."""
    if not is_running(instance):
        return
    pgid = int(instance["pgid"])
    if record.stop_command:
        run_process(record.stop_command, timeout=record.stop_timeout, env=env, spare_daemons=True,
                    label=f"service {record.name} stop")
    else:
        try:
            os.killpg(pgid, getattr(signal, f"SIG{record.signal}"))
        except ProcessLookupError:
            return
    deadline = time.monotonic() + record.stop_timeout
    while is_running(instance) and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)  # the leader's children, and the leader if it did not stop
    except (ProcessLookupError, PermissionError):
        pass


class ServiceDriver(KnobDriver):
    """The journal's driver for a service hone started (not a knob a spec can name)."""

    kind = "service"

    def __init__(self, model: ServiceRecord) -> None:
        super().__init__(model)  # type: ignore[arg-type]
        self.instance: dict[str, Any] | None = None

    def remember(self, sets: dict[str, dict[str, Any]]) -> None:
        """Take the last instance the journal recorded."""
        info = sets.get(self.ident())
        if info and info.get("value"):
            try:
                self.instance = json.loads(info["value"])
            except (TypeError, ValueError):
                self.instance = None

    def ident(self) -> str:
        return f"service:{self.model.name}"

    def describe(self) -> str:
        return f"service {self.model.name}"

    def read(self) -> str | None:
        return "running" if self.instance is not None and is_running(self.instance) else "stopped"

    def snapshot(self) -> dict[str, Any]:
        return {"value": "stopped"}

    def write(self, text: str) -> None:
        raise KnobError("a service is started by hone's service lifecycle, not written")

    def restore(self, snapshot: dict[str, Any]) -> None:
        if snapshot.get("value") == "stopped" and self.instance is not None:
            stop_instance(self.instance, self.model)  # type: ignore[arg-type]
