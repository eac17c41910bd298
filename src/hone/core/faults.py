"""Crash points for the fault-injection tests.

``HONE_CRASH_AT=NAME`` (or ``NAME:N``) makes the first (N-th) pass through
:func:`crash_point` ``NAME`` kill this process with SIGKILL — a ``kill -9`` at an exact
place (between two writes of one configuration, after an original is journaled and
before the change, in the middle of a restore …) instead of at a random time. Unset in
normal use: one environment lookup per process, then nothing.
"""

from __future__ import annotations

import os
import signal

_target: tuple[str, int] | None = None
_loaded = False
_seen: dict[str, int] = {}


def _load() -> None:
    global _target, _loaded
    _loaded = True
    spec = os.environ.get("HONE_CRASH_AT", "")
    if spec:
        name, _, count = spec.partition(":")
        _target = (name, int(count) if count.isdigit() else 1)


def crash_point(name: str) -> None:
    """SIGKILL this process here if ``HONE_CRASH_AT`` names this point (and pass)."""
    if not _loaded:
        _load()
    if _target is None or _target[0] != name:
        return
    _seen[name] = _seen.get(name, 0) + 1
    if _seen[name] == _target[1]:
        os.kill(os.getpid(), signal.SIGKILL)


#: Every crash point, for the tests that enumerate them.
POINTS = (
    "journal.original.before",   # about to journal a resource's original
    "journal.original.after",    # original on disk, resource not changed yet
    "journal.apply.written",     # `hone apply`: one knob written, the next not yet
    "configure.written",         # a configuration: one resource written, the next not yet
    "configure.restart",         # a configuration written, its restart not run yet
    "schedule.round",            # after one run of an interleaved round (confirmation, compare)
    "restore.written",           # restoring: one resource back, the next not yet
    "restore.restart",           # restoring: resources back, owed restarts not run yet
    "adapt.switched",            # `hone adapt readahead`: a switch written, open files not advised yet
    "adapt.exiting",             # `hone adapt readahead` ending: probe stopped, the device not restored yet
)
