"""Knobs on other machines: a sysctl, sysfs or script knob with ``hosts: [...]`` is read
and written over SSH on each host, and journaled per host.

Every ssh call is argv (no local shell), ``BatchMode=yes`` (a missing key fails at once
instead of prompting), with a connect timeout and a total timeout. The remote side of ssh
is always a shell, so the remote argv is quoted element by element (``shlex.join``); a
value to write travels on stdin (``tee PATH``), not in the command text.

One host: :class:`RemoteKnob`. Several: :class:`MultiHostKnob`, whose :meth:`parts` are
one :class:`RemoteKnob` per host — the journal and the configurator record, set and
restore each host separately, so a host that refuses a value or goes down does not hide
the others' originals.
"""

from __future__ import annotations

import os
import re
import shlex
import tempfile
from typing import Any

from hone.errors import KnobError
from hone.knobs.base import KnobDriver
from hone.run.process import ProcessResult, run_process

#: Seconds ssh may take to connect; the whole command gets ``timeout`` (script) or this ×3.
CONNECT_TIMEOUT_S = 10
#: Seconds an idle shared ssh connection stays open after the last command.
CONTROL_PERSIST_S = 30
_BRACKETED = re.compile(r"\[([^\]]+)\]")


def split_host(host: str) -> tuple[str, str | None]:
    """``root@node1:2222`` → (``root@node1``, ``"2222"``); IPv6 ``[::1]:22`` works too."""
    m = re.fullmatch(r"(.*?)(?::([0-9]{1,5}))?", host)
    assert m is not None
    target, port = m.group(1), m.group(2)
    return target.replace("[", "").replace("]", ""), port


def ssh_argv(host: str, options: list[str], remote: list[str]) -> list[str]:
    """The local argv that runs ``remote`` (an argv, quoted for the remote shell) on ``host``."""
    target, port = split_host(host)
    # ssh keeps the first value it sees for an option: BatchMode comes before the user's
    # options (never a prompt), connection sharing after them (the user may turn it off).
    argv = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}", "-T"]
    for opt in options:
        argv += ["-o", os.path.expanduser(opt) if "~" in opt else opt]
    # One TCP+auth handshake per host for the many short reads/writes of a session.
    argv += ["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=2", "-o", "ControlMaster=auto",
             "-o", f"ControlPath={os.path.join(tempfile.gettempdir(), 'hone-ssh-%C')}",
             "-o", f"ControlPersist={CONTROL_PERSIST_S}"]
    if port:
        argv += ["-p", port]
    return [*argv, "--", target, shlex.join(remote)]


def _normalise(text: str) -> str:
    """Like a local kernel read: ``a [b] c`` → ``b``, whitespace collapsed."""
    m = _BRACKETED.search(text)
    if m and " " in text.strip():
        return m.group(1)
    return " ".join(text.split())


class RemoteKnob(KnobDriver):
    """One knob on one host. ``model.hosts`` is ``[host]`` (what the journal stores)."""

    changes_system = True

    def __init__(self, model: Any, host: str) -> None:
        super().__init__(model.model_copy(update={"hosts": [host]}))
        self.host = host
        self.kind = model.kind  # type: ignore[misc]  # same kind as the local knob, for callers that branch on it
        from hone.knobs import DRIVERS

        self.local = DRIVERS[model.kind](model.model_copy(update={"hosts": None}))

    def ident(self) -> str:
        return f"{self.local.ident()}@{self.host}"

    def describe(self) -> str:
        return f"{self.local.describe()} on {self.host}"

    @property
    def _timeout(self) -> float:
        return float(getattr(self.model, "timeout", CONNECT_TIMEOUT_S * 3))

    def _ssh(self, remote: list[str], stdin: str | None = None, what: str = "") -> ProcessResult:
        res = run_process(ssh_argv(self.host, list(self.model.ssh_options), remote), timeout=self._timeout,
                          stdin=stdin)
        if res.ok:
            return res
        if res.returncode == 255:  # ssh's own failure: connection, auth, host key
            raise KnobError(f"{self.describe()}: ssh to {self.host} failed: {res.stderr_tail(2) or 'exit 255'}")
        raise KnobError(f"{self.describe()}: {what} failed: {res.describe_failure()}")

    def _path(self) -> str:
        return str(self.local.path)  # type: ignore[attr-defined]

    def _script(self, command: Any, value: str | None) -> list[str]:
        argv, _ = self.local._argv(command, value)  # type: ignore[attr-defined]
        if value is not None and argv[:2] == ["sh", "-c"]:
            # shell: true scripts see $value in their environment locally; ssh does not forward it.
            argv = ["env", f"value={value}", *argv]
        return argv

    def read(self) -> str | None:
        if self.model.kind == "script":
            return self._ssh(self._script(self.model.get, None), what="get").stdout.strip()  # type: ignore[attr-defined]
        return _normalise(self._ssh(["cat", self._path()], what="read").stdout)

    def check(self) -> None:
        self.read()

    def write(self, text: str) -> None:
        if self.model.kind == "script":
            self._ssh(self._script(self.model.set, text), what=f"set {text!r}")  # type: ignore[attr-defined]
            return
        self._ssh(["tee", self._path()], stdin=text, what=f"writing {text!r}")


class MultiHostKnob(KnobDriver):
    """One knob on several hosts: reads agree or show each host; writes go host by host."""

    changes_system = True

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.kind = model.kind  # type: ignore[misc]
        self._parts = [RemoteKnob(model, h) for h in model.hosts]

    def parts(self) -> list[KnobDriver]:
        return list(self._parts)

    @property
    def local(self) -> KnobDriver:
        """The knob as it would be on one machine (for safety rules)."""
        return self._parts[0].local

    def ident(self) -> str:
        return f"{self._parts[0].local.ident()}@{','.join(p.host for p in self._parts)}"

    def describe(self) -> str:
        return f"{self._parts[0].local.describe()} on {len(self._parts)} hosts"

    def check(self) -> None:
        for p in self._parts:
            p.check()

    def read(self) -> str | None:
        values = [p.read() for p in self._parts]
        if len(set(values)) == 1:
            return values[0]
        return "; ".join(f"{p.host}={v}" for p, v in zip(self._parts, values, strict=True))

    def write(self, text: str) -> None:
        for p in self._parts:
            p.write(text)

    def snapshot(self) -> dict[str, Any]:
        return {"hosts": {p.host: p.snapshot() for p in self._parts}}

    def restore(self, snapshot: dict[str, Any]) -> None:
        for p in self._parts:
            if p.host in snapshot.get("hosts", {}):
                p.restore(snapshot["hosts"][p.host])

    def matches(self, snapshot: dict[str, Any]) -> bool:
        return all(p.matches(snapshot.get("hosts", {}).get(p.host, {})) for p in self._parts)


def remote_driver(model: Any) -> KnobDriver:
    """The driver for a knob with ``hosts``: one host → :class:`RemoteKnob`."""
    if len(model.hosts) == 1:
        return RemoteKnob(model, model.hosts[0])
    return MultiHostKnob(model)
