"""Where downloaded and unpacked runtime artefacts (glibc packages) live.

Not under the state directory: tests and CI give every run its own ``HONE_STATE_DIR``,
and a glibc download (~3 MB, plus ~30 MB of package lists) should happen once per
machine, not once per test. ``$HONE_CACHE_DIR`` overrides the default.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

from hone.core.paths import cache_dir


@contextmanager
def cache_lock(name: str) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``<cache>/<name>.lock`` (blocking): two hone
    processes fetching the same package wait for each other instead of racing."""
    path = cache_dir() / f"{name}.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
