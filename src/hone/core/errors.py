"""Exceptions that mean "the user asked for something we cannot do".

Each is caught once, in :mod:`hone.cli`, and printed as one line (plus an optional hint)
with exit code 2. Anything else escaping is a bug in hone and keeps its traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType


class HoneError(Exception):
    """A user-facing error: bad input, a missing tool, a refused operation."""

    exit_code = 2

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class SpecError(HoneError):
    """A spec file that does not validate. ``message`` is already ``FILE:LINE: path: what``."""


class LockedError(HoneError):
    """Another hone process holds the state-directory lock."""


class BenchmarkError(HoneError):
    """The benchmark command failed, timed out or printed no metric (exit code 1: the
    input was fine, the workload was not)."""

    exit_code = 1


class RestoreError(HoneError):
    """Something hone changed could not be put back; it stays in the journal for
    ``hone rollback`` (exit code 3: the results stand, the machine is not as it was)."""

    exit_code = 3


class GateFailedError(HoneError):
    """``--fail-on``: a candidate's verdict is one the user gates on (exit code 4: the
    comparison ran and is reported; CI jobs fail on it)."""

    exit_code = 4


class DriftError(HoneError):
    """``hone verify``: a setting no longer holds the value it should (exit code 5: every
    knob was read and reported; scripts and monitoring fail on it)."""

    exit_code = 5


class KnobError(HoneError):
    """A knob could not be read or written; ``knobs`` names the spec's knobs at fault when known."""

    def __init__(self, message: str, hint: str | None = None, knobs: tuple[str, ...] = ()) -> None:
        super().__init__(message, hint)
        self.knobs = tuple(knobs)


class CapabilityError(HoneError):
    """This machine lacks what the operation needs (a PMU, LBR, a tool)."""


class MissingExtraError(HoneError):
    """A feature whose optional packages (a pip *extra* of hone-perf) are not installed:
    one line naming the ``pip install 'hone-perf[EXTRA]'`` that brings them."""

    def __init__(self, extra: str, feature: str, module: str) -> None:
        super().__init__(f"{feature} needs hone's {extra!r} extra ({module} is not installed): "
                         f"pip install 'hone-perf[{extra}]'")
        self.extra = extra
        self.module = module


def import_extra(module: str, extra: str, feature: str) -> ModuleType:
    """``import module`` at the point of use, or :class:`MissingExtraError` naming ``extra``.

    The packages of hone's extras (fleet: psycopg2; dashboard: optuna_dashboard) are
    imported only through this (or after it), never at module level, so hone without them
    runs everything else (pyproject.toml's [project.optional-dependencies])."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(extra, feature, exc.name or module) from None
