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
from hone.run.process import ProcessResult, at_exit, run_process

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


def _ssh_base(host: str, options: list[str]) -> tuple[list[str], str]:
    """ssh and its options for ``host``, and the target to put after ``--``."""
    target, port = split_host(host)
    # ssh keeps the first value it sees for an option: BatchMode comes before the user's
    # options (never a prompt), connection sharing after them (the user may turn it off).
    argv = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}", "-T"]
    for opt in options:
        argv += ["-o", os.path.expanduser(opt) if "~" in opt else opt]
    # One TCP+auth handshake per host for the many short reads/writes of a session. The
    # socket is this hone process's own: it closes its connections at exit
    # (close_connections), which must not cut another hone's session short.
    control = os.path.join(tempfile.gettempdir(), f"hone-ssh-{os.getpid()}-%C")
    argv += ["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=2", "-o", "ControlMaster=auto",
             "-o", f"ControlPath={control}", "-o", f"ControlPersist={CONTROL_PERSIST_S}"]
    if port:
        argv += ["-p", port]
    return argv, target


def ssh_argv(host: str, options: list[str], remote: list[str]) -> list[str]:
    """The local argv that runs ``remote`` (an argv, quoted for the remote shell) on ``host``."""
    argv, target = _ssh_base(host, options)
    return [*argv, "--", target, shlex.join(remote)]


#: (host, ssh options) this process has run ssh with: the shared connections to close at exit.
_connections: set[tuple[str, tuple[str, ...]]] = set()


def close_connections() -> None:
    """Stop the shared ssh connections (ControlPersist masters) this process opened."""
    while _connections:
        host, options = _connections.pop()
        argv, target = _ssh_base(host, list(options))
        run_process([*argv, "-O", "exit", "--", target], timeout=CONNECT_TIMEOUT_S)


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
        if hasattr(self.local, "resolve_paths"):
            self.local.resolve_paths = False  # type: ignore[attr-defined]  # a path on the host, not here

    def ident(self) -> str:
        return f"{self.local.ident()}@{self.host}"

    def resource(self) -> str:
        return f"{self.local.resource()}@{self.host}"

    def describe(self) -> str:
        return f"{self.local.describe()} on {self.host}"

    @property
    def _timeout(self) -> float:
        return float(getattr(self.model, "timeout", CONNECT_TIMEOUT_S * 3))

    def _ssh(self, remote: list[str], stdin: str | None = None, what: str = "") -> ProcessResult:
        options = list(self.model.ssh_options)
        _connections.add((self.host, tuple(options)))
        at_exit(close_connections)
        # The connection master ssh leaves in the background (a session of its own) is spared
        # for the next call to reuse; close_connections stops it at hone's exit. The tag would
        # not find it: its process title overwrites the environment /proc shows.
        res = run_process(ssh_argv(self.host, options, remote), timeout=self._timeout, stdin=stdin,
                          spare_daemons=True, label="ssh")
        if res.ok:
            return res
        if res.returncode == 255:  # ssh's own failure: connection, auth, host key
            raise KnobError(f"{self.describe()}: ssh to {self.host} failed: {res.stderr_tail(2) or 'exit 255'}")
        raise KnobError(f"{self.describe()}: {what} failed: {res.describe_failure()}")

    def _path(self) -> str:
        return str(self.local.path)  # type: ignore[attr-defined]

    def _script(self, command: Any, value: str | None) -> list[str]:
        argv, bound = self.local.bound_command(command, value)  # type: ignore[attr-defined]
        if bound:
            # Shell scripts read $value from their environment; ssh does not forward it, so
            # `env NAME=VALUE` carries it (one quoted argv element, never shell text).
            argv = ["env", *(f"{k}={v}" for k, v in bound.items()), *argv]
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
