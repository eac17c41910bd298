"""Where a ``file`` knob's files live: this machine (:class:`LocalFiles`) or a host over
ssh (``hone.knobs.remote.SshFiles``). ``FileDriver`` does all its I/O through one of these,
so a remote config file is read, journaled, rendered and restored like a local one.
"""

from __future__ import annotations

import base64
import fnmatch
import os
import posixpath
import tempfile
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

#: Prefix of the temp files written next to a config file (rollback removes strays).
TEMP_PREFIX = ".hone-tmp-"


@dataclass
class Stat:
    data: bytes
    mode: int
    uid: int
    gid: int


def bytes_field(data: bytes) -> dict[str, str]:
    """A file's bytes as a snapshot holds them (base64); :func:`state_bytes` reads them back."""
    return {"bytes_b64": base64.b64encode(data).decode()}


def stat_state(st: Stat) -> dict[str, Any]:
    """A file's bytes, mode and owner, as a journal snapshot holds them."""
    return {**bytes_field(st.data), "mode": st.mode, "uid": st.uid, "gid": st.gid}


def state_bytes(state: dict[str, Any]) -> bytes:
    """The bytes of a snapshot made by :func:`stat_state`."""
    return base64.b64decode(state["bytes_b64"])


class Removable(Protocol):
    def unlink(self, missing_ok: bool = False) -> None: ...


class Files(ABC):
    """File operations on one machine. Paths are absolute, as that machine sees them."""

    @abstractmethod
    def realpath(self, path: str) -> str:
        """``path`` with symlinks and ``..`` resolved."""

    @abstractmethod
    def stat(self, path: str) -> Stat | None:
        """The file's bytes, mode and owner; None when it does not exist. Raises OSError
        (or KnobError) when it cannot be read."""

    @abstractmethod
    def write(self, path: str, data: bytes, mode: int | None, owner: tuple[int, int] | None) -> None:
        """Replace the file atomically (a temp file next to it, renamed over it); mode and
        owner default to the current file's."""

    @abstractmethod
    def listdir(self, path: str) -> list[str] | None:
        """The names in a directory; None when it is not one."""

    @abstractmethod
    def writable(self, path: str) -> bool:
        """True when this user may replace the file (write it and its directory)."""

    @abstractmethod
    def strays(self, path: str) -> list[Removable]:
        """Temp files a killed hone left next to ``path``."""

    @abstractmethod
    def remove(self, path: str) -> None:
        """Delete the file; one that does not exist is not an error."""

    def read(self, path: str) -> bytes | None:
        st = self.stat(path)
        return None if st is None else st.data

    def glob(self, pattern: str) -> list[str]:
        """Paths matching a shell pattern (``*``, ``?``, ``[…]`` in any component), sorted
        as nginx's ``glob()`` sorts them; a pattern without wildcards is returned as is."""
        if not any(c in pattern for c in "*?["):
            return [pattern]
        paths = ["/" if pattern.startswith("/") else ""]
        for part in [p for p in pattern.split("/") if p]:
            if not any(c in part for c in "*?["):
                paths = [posixpath.join(p, part) for p in paths]
                continue
            found = []
            for p in paths:
                for name in self.listdir(p or ".") or []:
                    if fnmatch.fnmatchcase(name, part) and (part.startswith(".") or not name.startswith(".")):
                        found.append(posixpath.join(p, name))
            paths = found
        return sorted(paths)


class LocalFiles(Files):
    def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    def stat(self, path: str) -> Stat | None:
        try:
            data = Path(path).read_bytes()
            st = os.stat(path)
        except FileNotFoundError:
            return None
        return Stat(data, st.st_mode & 0o7777, st.st_uid, st.st_gid)

    def write(self, path: str, data: bytes, mode: int | None, owner: tuple[int, int] | None) -> None:
        # A sibling temp file renamed over the file: a crash never leaves a half-written
        # config, and a program reading it sees the old or the new file.
        target = Path(path)
        directory = target.parent
        try:
            st = target.stat()
            st_mode, st_owner = st.st_mode & 0o7777, (st.st_uid, st.st_gid)
        except FileNotFoundError:
            st_mode, st_owner = 0o644, None
        fd, tmp = tempfile.mkstemp(prefix=f"{TEMP_PREFIX}{target.name}.", dir=directory)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode if mode is not None else st_mode)
            uid_gid = owner or st_owner
            if uid_gid is not None:
                try:
                    os.chown(tmp, *uid_gid)
                except OSError:
                    pass
            os.replace(tmp, target)
            dfd = os.open(directory, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def listdir(self, path: str) -> list[str] | None:
        try:
            return sorted(os.listdir(path))
        except (NotADirectoryError, FileNotFoundError):
            return None

    def writable(self, path: str) -> bool:
        return os.access(path, os.W_OK) and os.access(os.path.dirname(path) or ".", os.W_OK)

    def remove(self, path: str) -> None:
        Path(path).unlink(missing_ok=True)

    def strays(self, path: str) -> list[Removable]:
        target = Path(path)
        try:
            return sorted(target.parent.glob(f"{TEMP_PREFIX}{target.name}.*"))
        except OSError:
            return []


__all__ = ["TEMP_PREFIX", "Files", "LocalFiles", "Removable", "Stat"]
