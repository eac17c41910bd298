"""sysfs and sysctl knobs stay inside /sys and /proc/sys, and the danger list sees the file
a path really names (``..`` and symlinks resolved, ``kernel/panic`` = ``kernel.panic``)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from hone.core.errors import SpecError
from hone.knobs import driver_for
from hone.knobs._sysfile import write_kernel_value
from hone.spec import load_spec
from hone.spec.models import SysctlKnobSpec, SysfsKnobSpec

CPU1 = Path("/sys/devices/system/cpu/cpu1/online")


def _spec(tmp_path: Path, knob: str) -> Path:
    spec = tmp_path / "hone.yaml"
    spec.write_text(textwrap.dedent("""\
        benchmark: {command: ["true"]}
        knobs:
        """) + f"  - {knob}\n")
    return spec


def test_sysfs_knob_on_a_relative_path_outside_sys_is_refused_and_the_file_kept(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    fake = tmp_path / "fake_knob"
    fake.write_text("1000\n")
    spec = _spec(tmp_path, "{name: k, kind: sysfs, path: ./fake_knob, values: [5, 1000]}")
    res = hone("apply", spec, "--set", "k=5", cwd=tmp_path)
    assert res.code == 2
    assert res.err.strip() == (f"{spec}:3: knobs[0].path: expected an absolute path under /sys, got './fake_knob'")
    assert fake.read_text() == "1000\n"


def test_sysfs_path_that_climbs_out_of_sys_is_refused_after_resolving(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    fake = tmp_path / "fake_knob"
    fake.write_text("1000\n")
    spec = _spec(tmp_path, f"{{name: k, kind: sysfs, path: /sys/../{fake}, values: [5, 1000]}}")
    res = hone("apply", spec, "--set", "k=5")
    assert res.code == 2
    assert res.err.startswith(f"{spec}:3: knobs[0]: ") and f"resolves to {fake}, outside /sys" in res.err
    assert len(res.err.strip().splitlines()) == 1
    assert fake.read_text() == "1000\n"


@pytest.mark.parametrize("key", ["{fake}", "kernel/../../..{fake}", "/proc/sys/../..{fake}"])
def test_sysctl_key_that_is_a_path_outside_proc_sys_or_climbs_is_refused(hone, tmp_path: Path, key: str) -> None:  # type: ignore[no-untyped-def]
    fake = tmp_path / "fake_sysctl"
    fake.write_text("1000\n")
    spec = _spec(tmp_path, f"{{name: k, kind: sysctl, key: '{key.format(fake=fake)}', values: [5, 1000]}}")
    res = hone("apply", spec, "--set", "k=5")
    assert res.code == 2
    assert res.err.startswith(f"{spec}:3: knobs[0].key: expected a sysctl name like vm.swappiness")
    assert len(res.err.strip().splitlines()) == 1
    assert fake.read_text() == "1000\n"


def test_kernel_file_write_truncates_a_longer_old_value(tmp_path: Path) -> None:
    target = tmp_path / "value"
    target.write_text("1000\n")
    write_kernel_value(target, "5", "test knob")
    assert target.read_text() == "5"


@pytest.mark.parametrize("path", ["/sys/devices/system/cpu/cpu1/../cpu1/online", "/sys/bus/cpu/devices/cpu1/online"])
def test_cpu_online_behind_dotdot_or_a_symlink_is_still_dangerous(hone, tmp_path: Path, path: str) -> None:  # type: ignore[no-untyped-def]
    if not CPU1.exists():
        pytest.skip("needs a second CPU")
    spec = _spec(tmp_path, f"{{name: cpu1, kind: sysfs, path: '{path}', values: [1]}}")
    res = hone("run", spec)  # nothing is set: only the spec check runs
    assert res.code == 2
    assert "takes a CPU offline; add allow_dangerous: true" in res.err


def test_sysctl_panic_spelled_with_slashes_is_still_dangerous(hone, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec = _spec(tmp_path, "{name: kernel/panic, kind: sysctl, values: [0]}")
    res = hone("run", spec)
    assert res.code == 2
    assert "sysctl kernel.panic (/proc/sys/kernel/panic) can panic the kernel" in res.err


def test_two_spellings_of_one_kernel_file_are_one_knob() -> None:
    if not CPU1.exists():
        pytest.skip("needs a second CPU")
    a = driver_for(SysfsKnobSpec(name="a", kind="sysfs", path="/sys/bus/cpu/devices/cpu1/online", values=[1]))
    b = driver_for(SysfsKnobSpec(name="b", kind="sysfs", path=str(CPU1), values=[1]))
    assert a.ident() == b.ident() == f"sysfs:{CPU1}"
    c = driver_for(SysctlKnobSpec(name="c", kind="sysctl", key="kernel/ostype", values=["Linux"]))
    d = driver_for(SysctlKnobSpec(name="kernel.ostype", kind="sysctl", values=["Linux"]))
    assert c.ident() == d.ident() == "sysctl:kernel.ostype"
    assert c.read() == d.read() == "Linux"


@pytest.mark.parametrize(("path", "expected"), [
    ("/sys/devices/../../tmp/x", "without '..'"),
    ("/tmp/read_ahead_kb", "an absolute path under /sys"),
])
def test_remote_sysfs_path_is_checked_as_written_before_any_ssh(tmp_path: Path, path: str, expected: str) -> None:
    spec = _spec(tmp_path, f"{{name: ra, kind: sysfs, path: '{path}', values: [128], hosts: [node1]}}")
    with pytest.raises(SpecError, match=expected):
        load_spec(spec)
