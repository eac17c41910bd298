"""``sysfs`` knobs: one attribute file under /sys.

The path is resolved (symlinks, ``..``) before anything else, and the result must still be
under /sys: the identity (journal, danger list) is the file itself, whatever the spelling
(``/sys/bus/cpu/devices/cpu1/online`` is ``/sys/devices/system/cpu/cpu1/online``).
"""

from __future__ import annotations

import os
from pathlib import Path

from hone.core.errors import KnobError
from hone.knobs._sysfile import read_kernel_value, resolved_under, write_kernel_value
from hone.knobs.base import KnobDriver

SYS = Path("/sys")


class SysfsDriver(KnobDriver):
    kind = "sysfs"
    #: False for the local view of a remote knob (hone.knobs.remote): a path on another host
    #: cannot be resolved against this machine, it is used as written (normalised; the spec
    #: refuses ``..`` there).
    resolve_paths = True

    @property
    def path(self) -> Path:
        raw = self.model.path  # type: ignore[attr-defined]
        return Path(os.path.realpath(raw) if self.resolve_paths else os.path.normpath(raw))

    def _checked(self) -> Path:
        if not self.resolve_paths:
            return self.path
        return resolved_under(self.model.path, SYS, f"sysfs {self.name}")  # type: ignore[attr-defined]

    def ident(self) -> str:
        return f"sysfs:{self.path}"

    def check(self) -> None:
        path = self._checked()
        if not path.exists():
            raise KnobError(f"sysfs path {self.model.path} does not exist on this machine")  # type: ignore[attr-defined]
        read_kernel_value(path)

    def read(self) -> str | None:
        return read_kernel_value(self._checked())

    def write(self, text: str) -> None:
        write_kernel_value(self._checked(), text, f"sysfs {self.name}")

    def describe(self) -> str:
        return f"sysfs {self.model.path}"  # type: ignore[attr-defined]
