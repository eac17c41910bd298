"""Files other processes hold open: what they are, and advice on their read-ahead.

A file's read-ahead window is copied from its device when it is opened, so a device switch
reaches only files opened afterwards. ``posix_fadvise(POSIX_FADV_NORMAL)`` on an open file
copies the device's current window into it (and clears a RANDOM mark). :class:`FileAdvisor`
gives that advice to a reader's own open file description through ``pidfd_getfd(2)`` (a
duplicate of its descriptor: same file, same window), and gives it again at the end, after
the device is restored. A file the reader mapped and then closed has no descriptor left: it
keeps the window it was opened with.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
from dataclasses import dataclass

_SYS_PIDFD_GETFD = 438  # one number on every architecture (a syscall newer than 5.x's unified table)
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def user_dev(kdev: int) -> int:
    """``st_dev`` (user space's encoding) of a kernel ``dev_t``."""
    return os.makedev(kdev >> 20, kdev & 0xFFFFF)


def _pidfd_getfd(pidfd: int, fd: int) -> int:
    # Python wraps pidfd_open but not pidfd_getfd (as of 3.13)
    got = _libc.syscall(_SYS_PIDFD_GETFD, pidfd, fd, 0)
    if got < 0:
        err = ctypes.get_errno() or errno.EINVAL
        raise OSError(err, os.strerror(err))
    return int(got)


def open_fds(pid: int, kdev: int, ino: int) -> list[int]:
    """The descriptors of process ``pid`` open on file (``kdev``, ``ino``); [] when it is gone."""
    want = (user_dev(kdev), ino)
    out = []
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return []
    for name in names:
        with contextlib.suppress(OSError):
            st = os.stat(f"/proc/{pid}/fd/{name}")
            if (st.st_dev, st.st_ino) == want:
                out.append(int(name))
    return sorted(out)


@dataclass(frozen=True)
class FileFacts:
    path: str
    size: int


def file_facts(pid: int, kdev: int, ino: int) -> FileFacts | None:
    """Path and size of a file process ``pid`` reads (an open descriptor, else a mapping);
    None when neither is left."""
    want = (user_dev(kdev), ino)
    for fd in open_fds(pid, kdev, ino)[:1]:
        with contextlib.suppress(OSError):
            st = os.stat(f"/proc/{pid}/fd/{fd}")
            return FileFacts(os.readlink(f"/proc/{pid}/fd/{fd}"), st.st_size)
    try:
        with open(f"/proc/{pid}/maps") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[4] == str(ino) and parts[5].startswith("/"):
            with contextlib.suppress(OSError):
                st = os.stat(parts[5])
                if (st.st_dev, st.st_ino) == want:
                    return FileFacts(parts[5], st.st_size)
    return None


class FileAdvisor:
    """``POSIX_FADV_NORMAL`` on other processes' open files, remembered so :meth:`reset`
    gives it again at the end (the window of the device as restored)."""

    def __init__(self) -> None:
        self.advised: dict[tuple[int, int], tuple[int, int]] = {}  # (pid, fd) -> (kdev, ino)
        self.done = 0
        self.failed = 0

    def normal(self, pid: int, kdev: int, ino: int) -> int:
        """Advise every descriptor of ``pid`` open on the file; returns how many took it."""
        fds = open_fds(pid, kdev, ino)
        took = self._advise(pid, fds)
        for fd in fds:
            self.advised[(pid, fd)] = (kdev, ino)
        return took

    def _advise(self, pid: int, fds: list[int]) -> int:
        if not fds:
            return 0
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            self.failed += len(fds)
            return 0
        took = 0
        try:
            for fd in fds:
                try:
                    dup = _pidfd_getfd(pidfd, fd)
                except OSError:
                    self.failed += 1
                    continue
                try:
                    os.posix_fadvise(dup, 0, 0, os.POSIX_FADV_NORMAL)
                    took += 1
                except OSError:
                    self.failed += 1
                finally:
                    os.close(dup)
        finally:
            os.close(pidfd)
        self.done += took
        return took

    def reset(self) -> int:
        """Advise again every descriptor still open on the file it was advised for."""
        took = 0
        for (pid, fd), (kdev, ino) in sorted(self.advised.items()):
            if fd in open_fds(pid, kdev, ino):
                took += self._advise(pid, [fd])
        self.advised.clear()
        return took


__all__ = ["FileAdvisor", "FileFacts", "file_facts", "open_fds", "user_dev"]
