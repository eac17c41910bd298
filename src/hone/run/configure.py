"""Turn knob values into a configured machine and a benchmark context.

System knobs (sysctl, sysfs, file, script) are written through the journal; param and
env knobs become argv substitutions and environment for the benchmark only.

A configuration is a pure function of the session's starting state and the values: every
resource (a config file, a sysctl …) is set to its state at the start of the session with
the configuration's values rendered on top. A knob the configuration does not set is back
at its starting state — a key that was absent is absent again — so an arm never inherits
the previous arm's settings, and the baseline arm really is the baseline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hone.core.errors import HoneError, KnobError, RestoreError
from hone.core.faults import crash_point
from hone.core.restart import Restart, run_restart
from hone.knobs import KnobDriver, driver_for
from hone.knobs.base import same_text
from hone.run.journal import RESTART_PAUSES, Journal
from hone.run.service import ServiceError, ServiceManager
from hone.spec.loader import LoadedSpec
from hone.spec.models import Scalar


@dataclass
class BenchContext:
    """What the benchmark sees of a configuration: ``{param}`` values and env vars."""

    params: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    #: Raises KnobError when a system knob no longer holds this configuration's value
    #: (called before every measured run).
    check: Callable[[], None] | None = None
    #: Polled during a run: a reason to stop it now (the service it measures died), or None.
    abort: Callable[[], str | None] | None = None


def parse_assignments(loaded: LoadedSpec, assignments: list[str], flag: str = "--set") -> dict[str, Scalar]:
    """``["cache_size=2000", …]`` → typed values, checked against each knob's domain."""
    values: dict[str, Scalar] = {}
    for item in assignments:
        if "=" not in item:
            raise HoneError(f"{flag} {item}: expected NAME=VALUE")
        name, raw = item.split("=", 1)
        name = name.strip()
        try:
            values[name] = knob_value(loaded, name, raw)
        except ValueError as exc:
            raise HoneError(f"{flag} {item}: {exc}") from None
    return values


def knob_value(loaded: LoadedSpec, name: str, raw: Scalar) -> Scalar:
    """Knob ``name``'s typed value for ``raw``; ValueError saying why not (no such knob, or a
    value outside its domain) for the caller to place."""
    try:
        knob = loaded.spec.knob(name)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    try:
        return knob.coerce(raw)
    except ValueError as exc:
        raise ValueError(f"knob {name}: {exc}") from None


def changes_machine(loaded: LoadedSpec) -> bool:
    """True when a session of this spec may change the machine (system knobs, or a service
    managed elsewhere that it restarts): it needs the machine lock. A server hone starts
    itself is journaled (``hone rollback`` stops it) but is no machine setting: a spec of
    param/env knobs and such a service takes no lock, so the service may itself be a hone
    that changes the machine (``hone adapt readahead`` as the service of a study of its thresholds)."""
    service = loaded.spec.service
    return (service is not None and service.start is None) or any(
        driver_for(k).changes_system for k in loaded.spec.knobs)


class Configurator:
    """Applies configurations for one hone session and puts back what it changed.

    Knobs already changed by an earlier ``hone apply`` are returned to the value they had
    when this session started, not to the machine's original (that is ``hone rollback``).
    The caller holds the machine lock (:func:`hone.run.journal.machine_lock_if`) when the spec
    has system knobs.
    """

    def __init__(self, loaded: LoadedSpec, journal: Journal | None = None) -> None:
        self.loaded = loaded
        self.journal = journal or Journal()
        self.drivers: dict[str, KnobDriver] = {k.name: driver_for(k) for k in loaded.spec.knobs}
        # Each resource with the (knob name, driver) pairs that edit it, in spec order; knobs
        # of the running service (script knobs with scope: service) apart: they are set after
        # the service is up, and again after each restart.
        self._members: dict[str, list[tuple[str, KnobDriver]]] = {}
        self._runtime: dict[str, list[tuple[str, KnobDriver]]] = {}
        for name, driver in self.drivers.items():
            if driver.changes_system:
                group = self._runtime if getattr(driver.model, "scope", None) == "service" else self._members
                for part in driver.parts():  # one per host for a knob with hosts
                    group.setdefault(part.resource(), []).append((name, part))
        self._pre_active = {e.resource for e in self.journal.active()} if self._members or self._runtime else set()
        self._base: dict[str, dict[str, Any]] = {}  # resource -> its state when the session began
        self._target: dict[str, dict[str, Any]] = {}  # resource -> what the current configuration set
        self._touched: list[str] = []
        self.service = ServiceManager(loaded, self.journal) if loaded.spec.service is not None else None
        if self._members or self.service is not None:
            self.journal.preflight([d for d in self.drivers.values() if d.changes_system])
            self.journal.refuse_foreign([*self._members, *self._runtime])
        if self.service is not None and self.service.managed:
            # A server an earlier, killed session started and never stopped: stop it first.
            svc = self.service.driver.resource()
            stale = [e for e in self.journal.active() if e.resource == svc]
            if stale:
                self.journal.restore(stale)
            self._pre_active.discard(svc)

    @property
    def has_system_knobs(self) -> bool:
        return bool(self._members)

    def apply(self, values: dict[str, Scalar]) -> BenchContext:
        """Set every system resource to its starting state with ``values`` on top (journaled,
        read back, each owed restart run once) and return the benchmark context (params,
        env) for all knobs, using defaults for unset params/env."""
        ctx = BenchContext()
        service_env: dict[str, str] = {}  # env/library knobs of scope service
        for name, driver in self.drivers.items():
            if driver.changes_system:
                continue
            if name in values:
                text = driver.model.format_value(values[name])
            else:
                current = driver.read()
                if current is None:
                    continue
                text = current
            env = service_env if getattr(driver.model, "scope", "benchmark") == "service" else ctx.env
            if driver.kind == "param":
                ctx.params[name] = text
            elif driver.kind == "env":
                env[driver.var] = text  # type: ignore[attr-defined]
            elif driver.kind == "library":
                env.update(driver.bench_env(text))  # type: ignore[attr-defined]
        self._target = {}
        restart_service = self._configure(values, self._members, journaled=True) if self._members else set()
        if self.service is not None:
            params = {n: ctx.params[n] for n in self.loaded.spec.service_params() if n in ctx.params}
            try:
                self.service.ensure(params, service_env, restart_service)
            except ServiceError as exc:
                raise KnobError(exc.message) from None
            if self._runtime:
                # A server hone runs loses its runtime settings when it stops: nothing to journal.
                self._configure(values, self._runtime, journaled=not self.service.managed)
        if self._members or self.service is not None:
            ctx.check = self.verify
        if self.service is not None and self.service.managed:
            ctx.abort = self.service.death
        return ctx

    def _base_of(self, resource: str, part: KnobDriver) -> dict[str, Any]:
        if resource not in self._base:
            self._base[resource] = part.snapshot()
            self._touched.append(resource)
        return self._base[resource]

    def _service_restarts(self, part: KnobDriver) -> list[Restart]:
        """The restart commands a change of ``part`` owes the service managed elsewhere (on
        the part's host when the service has hosts), for the journal: ``hone rollback``
        restarts it on its original configuration, node by node."""
        if self.service is None or self.service.managed or not part.restarts_service():
            return []
        host = getattr(part, "host", None)
        return [r for h, r in self.service.restarts() if h is None or host is None or h == host]

    def _configure(self, values: dict[str, Scalar], groups: dict[str, list[tuple[str, KnobDriver]]], *,
                   journaled: bool) -> set[str | None]:
        """Write each resource's target (journaled first when ``journaled``), run the owed
        restart commands once, read back. Returns the hosts whose service a changed resource
        restarts (None: a local resource, the whole service)."""
        restart_service: set[str | None] = set()
        restarts: dict[str, Restart] = {}
        targets: dict[str, dict[str, Any]] = {}
        for resource, members in groups.items():
            first = members[0][1]
            base = self._base_of(resource, first)
            state = base
            for name, part in members:
                if name in values:
                    state = part.render(state, part.model.format_value(values[name]))
            targets[resource] = state
            if first.matches(state):
                continue
            cmds = [c for _, part in members if (c := part.restart_command())]
            owed = [c for _, part in members for c in self._service_restarts(part)]
            restart_service |= {getattr(part, "host", None) for _, part in members if part.restarts_service()}
            if journaled:
                self.journal.ensure_original(first, None if resource in self._pre_active else base, cmds + owed)
                for name, part in members:
                    if name in values:
                        self.journal.note_set(part, part.model.format_value(values[name]))
            try:
                first.restore(state)
            except KnobError as exc:  # name the knobs of the resource that refused the value
                if exc.knobs:
                    raise
                raise KnobError(exc.message, exc.hint, knobs=tuple(n for n, _ in members if n in values)) from None
            crash_point("configure.written")
            for cmd in cmds:
                restarts.setdefault(cmd.key(), cmd)
        self._target.update(targets)
        if restarts:
            crash_point("configure.restart")
        for restart in restarts.values():
            why = run_restart(restart)
            if why:
                raise KnobError(why)
        try:
            self.verify(service=False)
        except KnobError as exc:
            self._put_back(groups, exc)
            raise
        return restart_service

    def _put_back(self, groups: dict[str, list[tuple[str, KnobDriver]]], exc: KnobError) -> None:
        """A resource that did not take this configuration goes back to its starting state at
        once, read back; one that cannot (a ``set`` script that mangles what it edits) stops
        the job with RestoreError instead of letting more trials change it further."""
        stuck = []
        for resource, members in groups.items():
            first = members[0][1]
            target, base = self._target.get(resource), self._base.get(resource)
            if target is None or base is None or first.matches(target):
                continue
            try:
                first.restore(base)
                back = first.matches(base)
                why = "" if back else f"{first.describe()} reads {first.read()!r} after it was set back"
            except (HoneError, OSError) as err:
                back, why = False, str(err)
            if back:
                self._target[resource] = base
            else:
                stuck.append(f"{resource} ({why})")
        if stuck:
            raise RestoreError(f"{exc.message}; and it could not be put back: {'; '.join(stuck)} — stopped before "
                               "another configuration changes it further",
                               hint="fix the knob's set/get commands, then run `hone rollback` (or put it back by "
                                    "hand)")

    def verify(self, service: bool = True) -> None:
        """Raise KnobError naming every knob that does not hold the value of the current
        configuration (changed by the benchmark, a daemon, or refused by the system), or
        when the service hone started is no longer running."""
        if service and self.service is not None:
            self.service.check()
        wrong, names = [], []
        for resource, state in self._target.items():
            members = self._members.get(resource) or self._runtime[resource]
            if members[0][1].matches(state):
                continue
            before = len(wrong)
            for name, part in members:
                want, got = part.value_in(state), part.read()
                if not same_text(want, got):
                    wrong.append(f"{part.describe()} reads {got!r}, expected {want!r}")
                    names.append(name)
            if len(wrong) == before:
                wrong.append(f"{resource} changed outside hone (other bytes differ)")
        if wrong:
            raise KnobError("a knob does not hold its value: " + "; ".join(wrong), knobs=tuple(names))

    def current_values(self) -> dict[str, Scalar | None]:
        """The machine's current value of every knob (params/env: their defaults)."""
        return {name: d.current_value() for name, d in self.drivers.items()}

    def restore(self) -> list[str]:
        """Put every resource this session touched back to its starting state, newest
        first, each read back; owed restarts run once. Returns problems."""
        problems: list[str] = []
        touched = list(self._touched)
        if self.service is not None and self.service.managed:
            try:
                self.service.close()  # stop the server before its configuration goes back
            except (HoneError, OSError) as exc:
                problems.append(f"service {self.service.name}: {exc}")
            touched.insert(0, self.service.driver.resource())
        active = {e.resource: e for e in self.journal.active()} if touched else {}
        own = [active[r] for r in touched if r in active and r not in self._pre_active]
        for outcome in self.journal.restore(own):
            if not outcome.ok:
                problems.append(f"{outcome.ident}: {outcome.message}")
        restarts: dict[str, Restart] = {}
        for resource in reversed(self._touched):
            if resource not in self._pre_active:
                continue
            members = self._members.get(resource) or self._runtime[resource]
            part, base = members[0][1], self._base[resource]
            try:
                if not part.matches(base):
                    part.restore(base)
                    restarts.update({c.key(): c for _, p in members if (c := p.restart_command())})
                    if not part.matches(base):
                        problems.append(f"{resource}: does not read back its starting state")
            except (KnobError, HoneError, OSError) as exc:
                problems.append(f"{resource}: {exc}")
        for restart in restarts.values():
            why = run_restart(restart, RESTART_PAUSES)
            if why:
                problems.append(why)
        self._touched.clear()
        self._base.clear()
        self._target = {}
        return problems
