"""Knob kinds behind one interface (:class:`KnobDriver`): one file per kind.

Adding a kind: a model in ``hone.spec.models`` and a driver here registered in
``DRIVERS``. Drivers know nothing about benchmarks.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter

from hone.core.errors import KnobError
from hone.knobs.base import KnobDriver
from hone.knobs.binary import BinaryDriver
from hone.knobs.env import EnvDriver
from hone.knobs.file import FileDriver
from hone.knobs.library import LibraryDriver
from hone.knobs.param import ParamDriver
from hone.knobs.script import ScriptDriver
from hone.knobs.service import ServiceDriver, ServiceRecord
from hone.knobs.sysctl import SysctlDriver
from hone.knobs.sysfs import SysfsDriver
from hone.spec.loader import check_cwd
from hone.spec.models import KnobSpec

if TYPE_CHECKING:
    from hone.spec.loader import LoadedSpec

DRIVERS: dict[str, type[KnobDriver]] = {
    cls.kind: cls
    for cls in (
        ParamDriver, EnvDriver, SysctlDriver, SysfsDriver, FileDriver, ScriptDriver, LibraryDriver, BinaryDriver,
    )
}

# Knobs that can take the machine down (a CPU offline, a panic switch). They need an
# explicit ``allow_dangerous: true`` (or --allow-dangerous) and never enter a search silently.
# Matched against the identity: the resolved sysfs path and the dotted sysctl name. The
# /sys/bus spellings are symlinks a remote knob's path cannot be resolved through.
_DANGEROUS = [
    (re.compile(r"^sysfs:/sys/devices/system/cpu/cpu\d+/online$"), "takes a CPU offline"),
    (re.compile(r"^sysfs:/sys/bus/cpu/(devices|drivers/[^/]+)/cpu\d+/online$"), "takes a CPU offline"),
    (re.compile(r"^sysctl:kernel\.panic"), "can panic the kernel"),
    (re.compile(r"^sysctl:vm\.panic_on_oom$"), "can panic the kernel"),
    (re.compile(r"^sysctl:kernel\.sysrq$"), "enables magic SysRq"),
    (re.compile(r"^sysfs:/sys/power/"), "changes the machine's power state"),
    (re.compile(r"^sysfs:/sys/devices/system/memory/"), "takes memory offline"),
    (re.compile(r"^sysfs:/sys/bus/memory/"), "takes memory offline"),
]


def driver_for(model: Any) -> KnobDriver:
    """The driver of a validated knob model (over SSH when the knob has ``hosts``)."""
    if getattr(model, "hosts", None):
        from hone.knobs.remote import remote_driver  # remote wraps any registered driver: imports DRIVERS

        return remote_driver(model)
    return DRIVERS[model.kind](model)


def driver_to_dict(driver: KnobDriver) -> dict[str, Any]:
    """A driver's knob as a journal entry records it (JSON types); :func:`driver_from_dict`
    rebuilds the driver from it."""
    return driver.model.model_dump(mode="json")


def driver_from_dict(data: dict[str, Any]) -> KnobDriver:
    """Rebuild a driver from a journal entry's knob dump (the spec may be gone)."""
    if data.get("kind") == "service":  # a server hone started: not a knob a spec can name
        return ServiceDriver(ServiceRecord.model_validate(data))

    model = TypeAdapter(KnobSpec).validate_python(data)
    return driver_for(model)


def danger_of(driver: KnobDriver) -> str | None:
    """Why this knob is dangerous, or None."""
    if driver.model.safety == "dangerous":
        return "is marked dangerous in the spec"
    ident = getattr(driver, "local", driver).ident()  # a remote knob is as dangerous as its local kind
    for pattern, why in _DANGEROUS:
        if pattern.search(ident):
            return why
    return None


def check_all(loaded: LoadedSpec, allow_dangerous: bool = False) -> None:
    """Check every knob of the spec exists and is readable here, and that dangerous knobs
    are opted in. Raises SpecError pointing at the knob. Changes nothing."""
    for i, model in enumerate(loaded.spec.knobs):
        driver = driver_for(model)
        why = danger_of(driver)
        if why and not (model.allow_dangerous or allow_dangerous):
            raise loaded.error(
                ("knobs", i),
                f"{driver.describe()} {why}; add allow_dangerous: true to this knob to use it",
            )
        service = loaded.spec.service
        if getattr(model, "scope", None) == "service" and service is not None and service.start is not None:
            continue  # a live setting of the server hone starts: readable only once it runs
        if driver.changes_system or driver.kind == "script":
            try:
                driver.check()
            except KnobError as exc:
                raise loaded.error(("knobs", i), exc.message) from None


def check_spec(loaded: LoadedSpec, allow_dangerous: bool = False) -> LoadedSpec:
    """What every verb asks of a loaded spec before it runs: ``benchmark.cwd`` is a directory
    here and every knob exists, is readable and, if dangerous, opted in. Changes nothing."""
    check_cwd(loaded)
    check_all(loaded, allow_dangerous)
    return loaded


__all__ = ["DRIVERS", "KnobDriver", "check_all", "check_spec", "danger_of", "driver_for", "driver_from_dict",
           "driver_to_dict"]
