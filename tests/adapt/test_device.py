"""--device: a whole disk of this machine, or one clear refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from hone.adapt.device import block_device
from hone.core.errors import HoneError


def _a_disk() -> str | None:
    for dev in sorted(Path("/sys/block").iterdir()):
        if (dev / "queue" / "read_ahead_kb").exists():
            return dev.name
    return None


@pytest.mark.parametrize(("arg", "why"), [
    ("nosuchdisk0", "no such block device on this machine"),
    ("/dev/nosuchdisk0", "no such device"),
    ("/dev/null", "not a block device"),
])
def test_what_is_not_a_disk_here_is_refused(arg: str, why: str) -> None:
    with pytest.raises(HoneError, match=why):
        block_device(arg)


def test_a_disk_by_name_or_node_is_its_queue_and_its_device_numbers() -> None:
    name = _a_disk()
    if name is None:
        pytest.skip("no block device with a request queue here")
    disk = block_device(name)
    major, minor = (int(x) for x in Path(f"/sys/block/{name}/dev").read_text().split(":"))
    assert disk.name == name and disk.readahead.name == "read_ahead_kb"
    assert (major << 20 | minor) in disk.devs
    assert disk.driver().ident() == f"sysfs:{disk.readahead}"
    if Path(f"/dev/{name}").exists():
        assert block_device(f"/dev/{name}") == disk


def test_a_partition_is_refused_with_its_disk_named() -> None:
    parts = sorted(p for p in Path("/sys/class/block").iterdir() if (p / "partition").exists())
    if not parts:
        pytest.skip("no partition on this machine")
    with pytest.raises(HoneError, match="is a partition") as info:
        block_device(parts[0].name)
    assert info.value.hint is not None and "--device" in info.value.hint
