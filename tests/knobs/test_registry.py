"""Conformance of the knob registry (``hone.knobs.DRIVERS``): every driver runs through the
same checks — its ``kind`` is its key, a spec model of that kind is in the ``KnobSpec`` union,
``describe``/``read``/``check`` work on a harmless knob (kernel kinds: a path that does not
exist is a KnobError), and a journal dump rebuilds the same driver."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import TypeAdapter

from hone.core.errors import KnobError
from hone.knobs import DRIVERS, KnobDriver, driver_for, driver_from_dict, driver_to_dict
from hone.spec.models import KNOB_KINDS, KNOB_SPECS, KnobBase, KnobSpec

ENV_VAR = "HONE_REGISTRY_TEST_VALUE"


def _file(tmp: Path) -> dict[str, Any]:
    conf = tmp / "app.conf"
    conf.write_text("x = 3\n")
    return {"name": "x", "kind": "file", "path": str(conf), "key": "x", "range": [1, 9]}


def _script(tmp: Path) -> dict[str, Any]:
    state = tmp / "state"
    state.write_text("4\n")
    return {"name": "s", "kind": "script", "get": ["cat", str(state)],
            "set": ["sh", "-c", f'printf "%s\\n" "$1" > {state}', "sh", "$value"], "values": [1, 4]}


def _binary(tmp: Path) -> dict[str, Any]:
    target = tmp / "prog"
    shutil.copy("/bin/true", target)
    return {"name": "b", "kind": "binary", "path": str(target), "backup_dir": str(tmp / "backups")}


# A knob of each kind that reads only what the test made: (spec dict, the value read() returns).
HARMLESS: dict[str, Callable[[Path], tuple[dict[str, Any], str | None]]] = {
    "param": lambda tmp: ({"name": "n", "kind": "param", "values": [1, 2], "default": 2}, "2"),
    "env": lambda tmp: ({"name": "e", "kind": "env", "var": ENV_VAR, "values": ["a", "b"]}, "b"),
    "file": lambda tmp: (_file(tmp), "3"),
    "script": lambda tmp: (_script(tmp), "4"),
    "library": lambda tmp: ({"name": "alloc", "kind": "library", "values": ["glibc"], "default": "glibc"}, "glibc"),
    "binary": lambda tmp: (_binary(tmp), None),  # a sha256: checked below
}
# Kinds that touch the kernel: only a knob whose file does not exist (nothing is read or written).
MISSING: dict[str, dict[str, Any]] = {
    "sysctl": {"name": "m", "kind": "sysctl", "key": "hone.registry_test_absent", "values": [0, 1]},
    "sysfs": {"name": "m", "kind": "sysfs", "path": "/sys/hone-registry-test-absent", "values": [0, 1]},
}


def _union_members() -> tuple[Any, ...]:
    union, *_ = get_args(KnobSpec)  # Annotated[A | B | …, Field(discriminator=…)]
    return get_args(union)


def test_every_kind_has_a_driver_a_spec_model_and_a_conformance_case() -> None:
    assert set(DRIVERS) == set(KNOB_SPECS) == set(KNOB_KINDS)
    assert set(_union_members()) == set(KNOB_SPECS.values())
    assert set(HARMLESS) | set(MISSING) == set(DRIVERS), "add a case for the new kind here"
    assert not set(HARMLESS) & set(MISSING)


@pytest.mark.parametrize("kind", sorted(DRIVERS))
def test_driver_kind_is_its_key(kind: str) -> None:
    cls = DRIVERS[kind]
    assert issubclass(cls, KnobDriver) and not getattr(cls, "__abstractmethods__", None)
    assert cls.kind == kind
    assert cls.__name__.endswith("Driver")


@pytest.mark.parametrize("kind", sorted(DRIVERS))
def test_spec_model_of_the_same_kind_is_in_the_union(kind: str, tmp_path: Path) -> None:
    model_cls = KNOB_SPECS[kind]
    assert issubclass(model_cls, KnobBase) and model_cls.__name__.endswith("KnobSpec")
    assert get_args(model_cls.model_fields["kind"].annotation) == (kind,)
    data = HARMLESS[kind](tmp_path)[0] if kind in HARMLESS else MISSING[kind]
    model = TypeAdapter(KnobSpec).validate_python(data)
    assert type(model) is model_cls


@pytest.mark.parametrize("kind", sorted(HARMLESS))
def test_describe_read_check_on_a_harmless_knob(kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_VAR, "b")
    data, expected = HARMLESS[kind](tmp_path)
    driver = driver_for(TypeAdapter(KnobSpec).validate_python(data))
    assert type(driver) is DRIVERS[kind]
    assert driver.ident().startswith(f"{kind}:")
    assert isinstance(driver.describe(), str) and driver.describe().strip()
    driver.check()
    value = driver.read()
    if kind == "binary":
        assert isinstance(value, str) and value.startswith("sha256:")
    else:
        assert value == expected
    if kind == "env":
        data["var"] = None
        data["name"] = ENV_VAR
        monkeypatch.setenv(ENV_VAR, "a")
        assert driver_for(TypeAdapter(KnobSpec).validate_python(data)).read() == "a"


@pytest.mark.parametrize("kind", sorted(MISSING))
def test_kernel_kind_refuses_a_path_that_does_not_exist(kind: str) -> None:
    cls = DRIVERS[kind]
    for method in ("describe", "read", "check", "write", "ident"):
        assert callable(getattr(cls, method))
    driver = driver_for(TypeAdapter(KnobSpec).validate_python(MISSING[kind]))
    assert type(driver) is cls
    assert driver.describe().strip()
    with pytest.raises(KnobError):
        driver.check()
    with pytest.raises(KnobError):
        driver.read()


@pytest.mark.parametrize("kind", sorted(DRIVERS))
def test_journal_dump_rebuilds_the_same_driver(kind: str, tmp_path: Path) -> None:
    data = HARMLESS[kind](tmp_path)[0] if kind in HARMLESS else MISSING[kind]
    driver = driver_for(TypeAdapter(KnobSpec).validate_python(data))
    dumped = driver_to_dict(driver)
    assert dumped["kind"] == kind
    again = driver_from_dict(dumped)
    assert type(again) is type(driver)
    assert again.model == driver.model
    assert again.ident() == driver.ident() and again.resource() == driver.resource()
    assert driver_to_dict(again) == dumped
