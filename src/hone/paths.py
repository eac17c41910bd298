"""Where hone keeps its state: journal, lock, studies, caches."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """The state directory: ``$HONE_STATE_DIR``, else ``/var/lib/hone`` for root,
    else ``$XDG_STATE_HOME/hone`` (default ``~/.local/state/hone``). Created on demand."""
    env = os.environ.get("HONE_STATE_DIR")
    if env:
        path = Path(env)
    elif os.geteuid() == 0:
        path = Path("/var/lib/hone")
    else:
        xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        path = Path(xdg) / "hone"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cache_dir() -> Path:
    """Downloads and unpacked artefacts shared by every run on this machine (glibc
    packages, package lists): ``$HONE_CACHE_DIR``, else ``/var/cache/hone`` for root, else
    ``$XDG_CACHE_HOME/hone`` (default ``~/.cache/hone``). Created on demand.

    Not under the state directory: tests and CI give every run its own
    ``HONE_STATE_DIR``, and a download should happen once per machine, not once per run.
    """
    env = os.environ.get("HONE_CACHE_DIR")
    if env:
        path = Path(env)
    elif os.geteuid() == 0:
        path = Path("/var/cache/hone")
    else:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        path = Path(xdg) / "hone"
    path.mkdir(parents=True, exist_ok=True)
    return path


def default_storage_url() -> str:
    """The default Optuna storage: an SQLite file in the state directory."""
    return f"sqlite:///{state_dir() / 'studies.db'}"
