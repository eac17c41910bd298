"""Turn knob values into a configured machine and a benchmark context.

System knobs (sysctl, sysfs, file, script) are written through the journal; param and
env knobs become argv substitutions and environment for the benchmark only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hone.errors import HoneError, KnobError
from hone.journal import Journal
from hone.knobs import KnobDriver, driver_for
from hone.spec.loader import LoadedSpec
from hone.spec.models import Scalar


@dataclass
class BenchContext:
    """What the benchmark sees of a configuration: ``{param}`` values and env vars."""

    params: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)


def parse_assignments(loaded: LoadedSpec, assignments: list[str], flag: str = "--set") -> dict[str, Scalar]:
    """``["cache_size=2000", …]`` → typed values, checked against each knob's domain."""
    values: dict[str, Scalar] = {}
    for item in assignments:
        if "=" not in item:
            raise HoneError(f"{flag} {item}: expected NAME=VALUE")
        name, raw = item.split("=", 1)
        name = name.strip()
        try:
            knob = loaded.spec.knob(name)
        except KeyError as exc:
            raise HoneError(f"{flag} {item}: {exc.args[0]}") from None
        try:
            values[name] = knob.coerce(raw)
        except ValueError as exc:
            raise HoneError(f"{flag} {item}: knob {name}: {exc}") from None
    return values


class Configurator:
    """Applies configurations for one hone session and puts back what it changed.

    Knobs already changed by an earlier ``hone apply`` are returned to the value they had
    when this session started, not to the machine's original (that is ``hone rollback``).
    """

    def __init__(self, loaded: LoadedSpec, journal: Journal | None = None) -> None:
        self.loaded = loaded
        self.journal = journal or Journal()
        self.drivers: dict[str, KnobDriver] = {k.name: driver_for(k) for k in loaded.spec.knobs}
        self._pre_active = {e.ident for e in self.journal.active()}
        self._session_snapshots: dict[str, tuple[KnobDriver, dict[str, Any]]] = {}
        self._touched: list[str] = []

    def apply(self, values: dict[str, Scalar]) -> BenchContext:
        """Write the system knobs in ``values`` (journaled) and return the benchmark
        context (params, env) for all knobs, using defaults for unset params/env."""
        ctx = BenchContext()
        for name, driver in self.drivers.items():
            model = driver.model
            if name in values:
                text = model.format_value(values[name])
            elif not driver.changes_system:
                current = driver.read()
                if current is None:
                    continue
                text = current
            else:
                continue
            if driver.kind == "param":
                ctx.params[name] = text
            elif driver.kind == "env":
                ctx.env[driver.var] = text  # type: ignore[attr-defined]
            elif driver.kind == "library":
                ctx.env.update(driver.bench_env(text))  # type: ignore[attr-defined]
            else:
                self._write(driver, text)
        return ctx

    def _write(self, driver: KnobDriver, text: str) -> None:
        for part in driver.parts():  # one per host for a knob with hosts
            ident = part.ident()
            if ident not in self._session_snapshots:
                self._session_snapshots[ident] = (part, part.snapshot())
                self._touched.append(ident)
            if part.read() == text:
                continue
            self.journal.write(part, text)

    def current_values(self) -> dict[str, Scalar | None]:
        """The machine's current value of every knob (params/env: their defaults)."""
        return {name: d.current_value() for name, d in self.drivers.items()}

    def restore(self) -> list[str]:
        """Put back everything this session changed, newest first. Returns problems."""
        problems: list[str] = []
        active = {e.ident: e for e in self.journal.active()}
        own = [active[i] for i in self._touched if i in active and i not in self._pre_active]
        for outcome in self.journal.restore(own):
            if not outcome.ok:
                problems.append(f"{outcome.ident}: {outcome.message}")
        for ident in reversed(self._touched):
            if ident in self._pre_active:
                driver, snap = self._session_snapshots[ident]
                try:
                    if not driver.matches(snap):
                        driver.restore(snap)
                except (KnobError, HoneError, OSError) as exc:
                    problems.append(f"{ident}: {exc}")
        self._touched.clear()
        self._session_snapshots.clear()
        return problems
