"""The one interface every knob kind implements.

A driver wraps a validated knob model (``hone.spec.models``) and knows how to read the
current value, write a new one, snapshot what it needs to undo a change, and restore that
snapshot. Drivers know nothing about benchmarks (DESIGN: data flows one way).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from hone.spec.models import KnobBase, Scalar


class KnobDriver(ABC):
    """Base of all knob kinds. Values cross this interface as text (what the system holds)."""

    kind: ClassVar[str]
    #: False for knobs that only shape the benchmark (param, env): nothing to journal.
    changes_system: ClassVar[bool] = True

    def __init__(self, model: KnobBase) -> None:
        self.model = model

    @property
    def name(self) -> str:
        return self.model.name

    @abstractmethod
    def ident(self) -> str:
        """A stable identity of what this knob changes, e.g. ``sysctl:vm.swappiness``."""

    def check(self) -> None:  # noqa: B027 - optional hook; most kinds need no check
        """Raise :class:`~hone.errors.KnobError` if the knob cannot be used on this machine.
        Must not change anything."""

    @abstractmethod
    def read(self) -> str | None:
        """The current value as text (None when absent, e.g. a key not in a file)."""

    @abstractmethod
    def write(self, text: str) -> None:
        """Set the value. Raises :class:`~hone.errors.KnobError` when refused."""

    def parts(self) -> list[KnobDriver]:
        """What the journal records one entry for each: the knob itself, or one driver per
        host for a knob with ``hosts`` (see :mod:`hone.knobs.remote`)."""
        return [self]

    def describe(self) -> str:
        """One line for humans: what and where."""
        return f"{self.kind} {self.ident()}"

    def snapshot(self) -> dict[str, Any]:
        """What :meth:`restore` needs to put the original back (goes into the journal)."""
        return {"value": self.read()}

    def restore(self, snapshot: dict[str, Any]) -> None:
        value = snapshot.get("value")
        if value is not None:
            self.write(value)

    def matches(self, snapshot: dict[str, Any]) -> bool:
        """True when the current state equals ``snapshot`` (for ``hone status``)."""
        return self.read() == snapshot.get("value")

    def set_value(self, value: Scalar) -> None:
        """Write a typed value (already checked with ``model.coerce``)."""
        self.write(self.model.format_value(value))

    def current_value(self) -> Scalar | None:
        """The current value typed by the knob's domain, or None if it does not parse."""
        text = self.read()
        if text is None:
            return None
        try:
            return self.model.coerce(text)
        except ValueError:
            return text
