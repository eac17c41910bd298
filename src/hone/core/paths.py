"""Where hone keeps its state: journal, lock, studies, caches; and how it numbers what it names."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path


def _machine_dir(env_var: str, root_path: str, xdg_var: str, xdg_default: str) -> Path:
    """``$env_var``, else ``root_path`` for root, else ``$xdg_var/hone`` (``~/xdg_default/hone``
    when unset; the home directory is looked up only then); created on demand."""
    env = os.environ.get(env_var)
    if env:
        path = Path(env)
    elif os.geteuid() == 0:
        path = Path(root_path)
    else:
        path = Path(os.environ.get(xdg_var) or Path.home() / xdg_default) / "hone"
    path.mkdir(parents=True, exist_ok=True)
    return path


def state_dir() -> Path:
    """The state directory: ``$HONE_STATE_DIR``, else ``/var/lib/hone`` for root,
    else ``$XDG_STATE_HOME/hone`` (default ``~/.local/state/hone``). Created on demand."""
    return _machine_dir("HONE_STATE_DIR", "/var/lib/hone", "XDG_STATE_HOME", ".local/state")


def machine_dir() -> Path:
    """What every hone process on this machine shares, whatever its state directory: the
    machine-wide lock and the list of state directories whose journals hold changes.
    ``$HONE_MACHINE_DIR``, else ``/var/lib/hone`` for root, else ``$XDG_STATE_HOME/hone``.
    Created on demand. (Tests that pretend to be several machines give each its own.)"""
    return _machine_dir("HONE_MACHINE_DIR", "/var/lib/hone", "XDG_STATE_HOME", ".local/state")


def cache_dir() -> Path:
    """Downloads and unpacked artefacts shared by every run on this machine (glibc
    packages, package lists): ``$HONE_CACHE_DIR``, else ``/var/cache/hone`` for root, else
    ``$XDG_CACHE_HOME/hone`` (default ``~/.cache/hone``). Created on demand.

    Not under the state directory: tests and CI give every run its own
    ``HONE_STATE_DIR``, and a download should happen once per machine, not once per run.
    """
    return _machine_dir("HONE_CACHE_DIR", "/var/cache/hone", "XDG_CACHE_HOME", ".cache")


def default_storage_url() -> str:
    """The default Optuna storage: an SQLite file in the state directory."""
    return f"sqlite:///{state_dir() / 'studies.db'}"


def numbered(base: str) -> Iterator[str]:
    """``base``, ``base-2``, ``base-3`` …: the names hone tries, in order, for something it
    creates (a work directory, a study, a train scenario) when an earlier one has the name."""
    yield base
    for i in itertools.count(2):
        yield f"{base}-{i}"
