"""The one interface every knob kind implements.

A driver wraps a validated knob model (``hone.spec.models``) and knows how to read the
current value, write a new one, snapshot what it needs to undo a change, and restore that
snapshot. Drivers know nothing about benchmarks (DESIGN: data flows one way).

Snapshots are per *resource* — what one original covers: a whole config file for every
key hone edits in it, one sysctl, one sysfs file, one script knob, each per host. Several
knobs can share a resource; :meth:`KnobDriver.render` composes their values onto one
snapshot, so a configuration is a pure function of the resource's original and the values.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

from hone.core.restart import Restart
from hone.spec.models import KnobBase, Scalar


def same_text(a: str | None, b: str | None) -> bool:
    """Two knob values read from the system are the same: equal after collapsing
    whitespace, or equal as numbers (``0.50`` and ``0.5``)."""
    if a is None or b is None:
        return a is b
    x, y = " ".join(str(a).split()), " ".join(str(b).split())
    if x == y:
        return True
    try:
        return float(x) == float(y)
    except ValueError:
        return False


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
        """Raise :class:`~hone.core.errors.KnobError` if the knob cannot be used on this machine.
        Must not change anything."""

    def resource(self) -> str:
        """What one journal original covers (several knobs may share it, e.g. one file)."""
        return self.ident()

    @abstractmethod
    def read(self) -> str | None:
        """The current value as text (None when absent, e.g. a key not in a file)."""

    @abstractmethod
    def write(self, text: str) -> None:
        """Set the value. Raises :class:`~hone.core.errors.KnobError` when refused."""

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
        """True when the current state equals ``snapshot`` (read back after every change)."""
        return same_text(self.read(), snapshot.get("value"))

    def restored(self, snapshot: dict[str, Any]) -> bool:
        """True when nothing of ``snapshot`` is left to put back (the journal's test before a
        restore): :meth:`matches`, and what a kind keeps beside its value."""
        return self.matches(snapshot)

    def render(self, state: dict[str, Any], text: str) -> dict[str, Any]:
        """The resource's snapshot with this knob set to ``text`` (nothing is written)."""
        return {"value": text}

    def value_in(self, state: dict[str, Any]) -> str | None:
        """This knob's value inside a resource snapshot."""
        value = state.get("value")
        return None if value is None else str(value)

    def restart_command(self) -> Restart | None:
        """A command to run once after this knob's resource changed."""
        return None

    def restarts_service(self) -> bool:
        """True when a change takes effect only after the spec's service restarts."""
        return getattr(self.model, "restart", None) == "service"

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
