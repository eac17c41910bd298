"""The block device a controller may change, and nothing else.

``--device`` names a whole disk (``loop0``, ``/dev/loop0``, ``/dev/mapper/vg-data``): its
queue's ``read_ahead_kb`` is the one file the controller writes, and the filesystems on it
(the disk and its partitions, by device number) are the only ones it watches.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from hone.core.errors import HoneError
from hone.diagnose.readseq import kernel_dev
from hone.knobs import KnobDriver, driver_for
from hone.spec.models import SysfsKnobSpec

SYS_BLOCK = Path("/sys/class/block")


@dataclass(frozen=True)
class BlockDevice:
    name: str  # the kernel's name: loop0, vda, dm-0
    readahead: Path  # its queue's read_ahead_kb
    devs: frozenset[int]  # kernel dev_t of the disk and each of its partitions

    @property
    def dev(self) -> int | None:
        """The one dev_t the probe can filter on in the kernel (None: several partitions)."""
        return next(iter(self.devs)) if len(self.devs) == 1 else None

    def driver(self) -> KnobDriver:
        """The journaled sysfs knob of its read-ahead (KB)."""
        return driver_for(SysfsKnobSpec(name=f"read_ahead_kb:{self.name}", kind="sysfs", path=str(self.readahead),
                                        type="int", range=[0, 1 << 20],
                                        description=f"read-ahead of {self.name}, set by hone adapt readahead"))


def _majmin(text: str) -> int:
    major, minor = text.strip().split(":")
    return kernel_dev(int(major), int(minor))


def block_device(arg: str) -> BlockDevice:
    """The disk ``arg`` names; HoneError (one line, exit 2) when it is not a disk here."""
    what = f"--device {arg}"
    if "/" in arg:
        try:
            st = os.stat(arg)
        except OSError as exc:
            raise HoneError(f"{what}: no such device ({exc.strerror})",
                            hint="lsblk lists the block devices") from None
        if not stat.S_ISBLK(st.st_mode):
            raise HoneError(f"{what}: not a block device")
        node = Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}")
    else:
        node = SYS_BLOCK / arg
    if not node.exists():
        raise HoneError(f"{what}: no such block device on this machine", hint="lsblk lists the block devices")
    node = Path(os.path.realpath(node))
    name = node.name
    if (node / "partition").exists():
        raise HoneError(f"{what}: {name} is a partition; read-ahead belongs to the whole disk",
                        hint=f"give the disk: --device {node.parent.name}")
    readahead = node / "queue" / "read_ahead_kb"
    if not readahead.exists():
        raise HoneError(f"{what}: {name} has no read_ahead_kb (no request queue)")
    devs = {_majmin((node / "dev").read_text())}
    for child in node.iterdir():
        if (child / "partition").exists():
            devs.add(_majmin((child / "dev").read_text()))
    return BlockDevice(name, readahead, frozenset(devs))


__all__ = ["BlockDevice", "block_device"]
