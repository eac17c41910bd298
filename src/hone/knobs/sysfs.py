"""``sysfs`` knobs: any attribute file under /sys (or another kernel file)."""

from __future__ import annotations

from pathlib import Path

from hone.errors import KnobError
from hone.knobs._sysfile import read_kernel_value, write_kernel_value
from hone.knobs.base import KnobDriver


class SysfsKnob(KnobDriver):
    kind = "sysfs"

    @property
    def path(self) -> Path:
        return Path(self.model.path)  # type: ignore[attr-defined]

    def ident(self) -> str:
        return f"sysfs:{self.path}"

    def check(self) -> None:
        if not self.path.exists():
            raise KnobError(f"sysfs path {self.path} does not exist on this machine")
        read_kernel_value(self.path)

    def read(self) -> str | None:
        return read_kernel_value(self.path)

    def write(self, text: str) -> None:
        write_kernel_value(self.path, text, f"sysfs {self.name}")

    def describe(self) -> str:
        return f"sysfs {self.path}"
