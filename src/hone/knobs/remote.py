"""Knobs on other machines: a sysctl, sysfs, file or script knob with ``hosts: [...]`` is
read and written over SSH on each host, and journaled per host.

Every ssh call is argv (no local shell), ``BatchMode=yes`` (a missing key fails at once
instead of prompting), with a connect timeout and a total timeout. The remote side of ssh
is always a shell, so the remote argv is quoted element by element (``shlex.join``); a
value to write travels on stdin (``tee PATH``), not in the command text.

A ``file`` knob on a host (:class:`RemoteFileDriver`) is the local ``FileDriver`` with its
file operations done over ssh (:class:`SshFiles`): the file is read with its mode and
owner (base64, so every byte survives), and a new version is sent whole on stdin to a
temp file next to it, checked for its length and renamed over the file (``mv``), so a cut
connection never leaves a half-written config. Its ``restart`` runs on that host.

One host: :class:`RemoteDriver`. Several: :class:`MultiHostDriver`, whose :meth:`parts` are
one :class:`RemoteDriver` per host — the journal and the configurator record, set and
restore each host separately, so a host that refuses a value or goes down does not hide
the others' originals.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
import tempfile
from typing import Any

from hone.core.errors import KnobError
from hone.core.process import ProcessResult, at_exit, run_process
from hone.core.restart import Restart
from hone.knobs._files import TEMP_PREFIX, Files, Removable, Stat
from hone.knobs.base import KnobDriver
from hone.knobs.script import check_get_output

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


def _ssh_base(host: str, options: list[str], shared: bool = True) -> tuple[list[str], str]:
    """ssh and its options for ``host``, and the target to put after ``--``. Not ``shared``:
    a connection of its own (for commands the journal keeps, run by a later hone)."""
    target, port = split_host(host)
    # ssh keeps the first value it sees for an option: BatchMode comes before the user's
    # options (never a prompt), connection sharing after them (the user may turn it off).
    argv = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}", "-T"]
    for opt in options:
        argv += ["-o", os.path.expanduser(opt) if "~" in opt else opt]
    if not shared:
        argv += ["-o", "ControlMaster=no", "-o", "ControlPath=none"]
        return [*argv, *(["-p", port] if port else [])], target
    # One TCP+auth handshake per host for the many short reads/writes of a session. The
    # socket is this hone process's own: it closes its connections at exit
    # (close_connections), which must not cut another hone's session short.
    control = os.path.join(tempfile.gettempdir(), f"hone-ssh-{os.getpid()}-%C")
    argv += ["-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=2", "-o", "ControlMaster=auto",
             "-o", f"ControlPath={control}", "-o", f"ControlPersist={CONTROL_PERSIST_S}"]
    if port:
        argv += ["-p", port]
    return argv, target


def ssh_argv(host: str, options: list[str], remote: list[str], shared: bool = True) -> list[str]:
    """The local argv that runs ``remote`` (an argv, quoted for the remote shell) on ``host``."""
    argv, target = _ssh_base(host, options, shared)
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


class RemoteDriver(KnobDriver):
    """One knob on one host. ``model.hosts`` is ``[host]`` (what the journal stores)."""

    changes_system = True

    def __init__(self, model: Any, host: str) -> None:
        super().__init__(model.model_copy(update={"hosts": [host]}))
        self.host = host
        self.kind = model.kind  # type: ignore[misc]  # same kind as the local knob, for callers that branch on it
        from hone.knobs import DRIVERS  # the registry imports this module (driver_for)

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

    def _ssh(self, remote: list[str], stdin: str | bytes | None = None, what: str = "") -> ProcessResult:
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
        value = self.read() or ""
        if self.model.kind == "script":  # as ScriptDriver.check
            check_get_output(f"script knob {self.name} on {self.host}", self.model, value)

    def write(self, text: str) -> None:
        if self.model.kind == "script":
            self._ssh(self._script(self.model.set, text), what=f"set {text!r}")  # type: ignore[attr-defined]
            return
        self._ssh(["tee", self._path()], stdin=text, what=f"writing {text!r}")


# Fixed remote scripts; the paths and numbers they act on are their arguments ($1 …).
_STAT = 'if [ ! -e "$1" ]; then echo missing; exit 0; fi; stat -L -c "%a %u %g" -- "$1" && base64 -- "$1"'
# $1 file, $2 byte count, $3 mode (octal) or "", $4 uid:gid or "", $5 the temp-file prefix;
# the bytes arrive on stdin, and a short read (a cut connection) leaves the file alone.
_WRITE = r"""set -eu
dir=$(dirname -- "$1")
tmp=$(mktemp "$dir/$5$(basename -- "$1").XXXXXX")
trap 'rm -f -- "$tmp"' EXIT HUP INT TERM
cat > "$tmp"
got=$(wc -c < "$tmp")
[ $got -eq "$2" ] || { echo "received $got of $2 bytes; $1 left as it was" >&2; exit 1; }
mode=$3; owner=$4
if [ -z "$mode" ] && [ -e "$1" ]; then mode=$(stat -L -c %a -- "$1"); fi
if [ -z "$owner" ] && [ -e "$1" ]; then owner=$(stat -L -c %u:%g -- "$1"); fi
chmod "${mode:-644}" "$tmp"
if [ -n "$owner" ]; then chown "$owner" "$tmp" 2>/dev/null || true; fi
sync -- "$tmp" 2>/dev/null || true
mv -f -- "$tmp" "$1"
sync -- "$dir" 2>/dev/null || true
"""
_LIST = 'if [ -d "$1" ]; then find "$1" -mindepth 1 -maxdepth 1 -printf "%f\\0"; else echo "not a directory"; fi'
_WRITABLE = 'if [ -w "$1" ] && [ -w "$(dirname -- "$1")" ]; then echo yes; else echo no; fi'


class _RemoteTemp:
    """A temp file a killed hone left on a host (``unlink`` as for a local Path)."""

    def __init__(self, files: SshFiles, path: str) -> None:
        self.files, self.path = files, path

    def unlink(self, missing_ok: bool = False) -> None:
        self.files.knob._ssh(["rm", "-f", "--", self.path], what=f"removing {self.path}")

    def __repr__(self) -> str:
        return f"{self.path}@{self.files.knob.host}"


class SshFiles(Files):
    """The file operations of :class:`~hone.knobs._files.Files` on one host, over ssh."""

    def __init__(self, knob: RemoteDriver) -> None:
        self.knob = knob
        self._real: dict[str, str] = {}

    def _sh(self, script: str, *args: str, stdin: bytes | None = None, what: str = "") -> str:
        return self.knob._ssh(["sh", "-c", script, "sh", *args], stdin=stdin, what=what).stdout

    def realpath(self, path: str) -> str:
        if not path.startswith("/"):
            raise KnobError(f"{self.knob.describe()}: expected an absolute path on a remote host, got {path!r}")
        if path not in self._real:
            out = self.knob._ssh(["readlink", "-f", "--", path], what=f"resolving {path}").stdout.strip()
            self._real[path] = out or path
        return self._real[path]

    def stat(self, path: str) -> Stat | None:
        out = self._sh(_STAT, path, what=f"reading {path}")
        head, _, body = out.partition("\n")
        if head == "missing":
            return None
        mode, uid, gid = head.split()
        return Stat(base64.b64decode(body), int(mode, 8), int(uid), int(gid))

    def write(self, path: str, data: bytes, mode: int | None, owner: tuple[int, int] | None) -> None:
        self._sh(_WRITE, path, str(len(data)), "" if mode is None else f"{mode:o}",
                 "" if owner is None else f"{owner[0]}:{owner[1]}", TEMP_PREFIX, stdin=data, what=f"writing {path}")

    def listdir(self, path: str) -> list[str] | None:
        out = self._sh(_LIST, path, what=f"listing {path}")
        if out == "not a directory\n":
            return None
        return sorted(name for name in out.split("\0") if name)

    def writable(self, path: str) -> bool:
        return self._sh(_WRITABLE, path, what=f"checking {path}").strip() == "yes"

    def remove(self, path: str) -> None:
        self.knob._ssh(["rm", "-f", "--", path], what=f"removing {path}")

    def strays(self, path: str) -> list[Removable]:
        directory, name = os.path.split(path)
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", f"{TEMP_PREFIX}{name}") + ".*"
        out = self.knob._ssh(["find", directory, "-maxdepth", "1", "-name", pattern, "-printf", "%p\\0"],
                             what=f"listing {directory}").stdout
        return [_RemoteTemp(self, p) for p in out.split("\0") if p]


class RemoteFileDriver(RemoteDriver):
    """A ``file`` knob on one host: the local driver's logic, its I/O over ssh."""

    def __init__(self, model: Any, host: str) -> None:
        super().__init__(model, host)
        self.local.files = SshFiles(self)  # type: ignore[attr-defined]

    def describe(self) -> str:
        # Without a remote call: ssh errors are reported through this.
        return f"file {self.model.path} key {self.model.key} on {self.host}"  # type: ignore[attr-defined]

    def check(self) -> None:
        self.local.check()

    def read(self) -> str | None:
        return self.local.read()

    def write(self, text: str) -> None:
        self.local.write(text)

    def snapshot(self) -> dict[str, Any]:
        return self.local.snapshot()

    def render(self, state: dict[str, Any], text: str) -> dict[str, Any]:
        return self.local.render(state, text)

    def value_in(self, state: dict[str, Any]) -> str | None:
        return self.local.value_in(state)

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.local.restore(snapshot)

    def matches(self, snapshot: dict[str, Any]) -> bool:
        return self.local.matches(snapshot)

    def current_bytes(self, snapshot: dict[str, Any]) -> bytes:
        return self.local.current_bytes(snapshot)  # type: ignore[attr-defined, no-any-return]

    def stray_temp_files(self) -> list[Removable]:
        return self.local.stray_temp_files()  # type: ignore[attr-defined, no-any-return]

    def restart_command(self) -> Restart | None:
        cmd = self.local.restart_command()
        if cmd is None:
            return None
        # A connection of its own: the journal keeps this argv for a later `hone rollback`,
        # which must not depend on this process's shared connection.
        return cmd._replace(argv=ssh_argv(self.host, list(self.model.ssh_options), cmd.argv, shared=False))


class RemoteScriptDriver(RemoteDriver):
    """A ``script`` knob on one host: get and set over ssh, and the files of its ``files:``
    kept and written back on that host, as :class:`~hone.knobs.script.ScriptDriver` does here."""

    def __init__(self, model: Any, host: str) -> None:
        super().__init__(model, host)
        self.local.files = SshFiles(self)  # type: ignore[attr-defined]

    def snapshot(self) -> dict[str, Any]:
        return self.local.with_files({"value": self.read()})  # type: ignore[attr-defined, no-any-return]

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.local.restore_then_files(snapshot, super().restore)  # type: ignore[attr-defined]

    def restored(self, snapshot: dict[str, Any]) -> bool:
        return self.matches(snapshot) and self.local.files_hold(snapshot.get("files") or {})  # type: ignore[attr-defined, no-any-return]


def remote_part(model: Any, host: str) -> RemoteDriver:
    """The driver of ``model`` on one host."""
    if model.kind == "file":
        return RemoteFileDriver(model, host)
    return RemoteScriptDriver(model, host) if model.kind == "script" else RemoteDriver(model, host)


class MultiHostDriver(KnobDriver):
    """One knob on several hosts: reads agree or show each host; writes go host by host."""

    changes_system = True

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.kind = model.kind  # type: ignore[misc]
        self._parts = [remote_part(model, h) for h in model.hosts]

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
    """The driver for a knob with ``hosts``: one host → :class:`RemoteDriver`."""
    if len(model.hosts) == 1:
        return remote_part(model, model.hosts[0])
    return MultiHostDriver(model)
