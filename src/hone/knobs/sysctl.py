"""``sysctl`` knobs: /proc/sys/<key with dots as slashes>."""

from __future__ import annotations

from pathlib import Path

from hone.errors import KnobError
from hone.knobs._sysfile import read_kernel_value, write_kernel_value
from hone.knobs.base import KnobDriver

PROC_SYS = Path("/proc/sys")


class SysctlKnob(KnobDriver):
    kind = "sysctl"

    @property
    def key(self) -> str:
        return getattr(self.model, "key", None) or self.name

    @property
    def path(self) -> Path:
        return PROC_SYS / self.key.replace(".", "/")

    def ident(self) -> str:
        return f"sysctl:{self.key}"

    def check(self) -> None:
        if not self.path.exists():
            raise KnobError(f"sysctl {self.key} does not exist on this kernel ({self.path})")
        read_kernel_value(self.path)

    def read(self) -> str | None:
        # Multi-value sysctls (tcp_rmem) come back tab-separated; normalise to spaces.
        return read_kernel_value(self.path)

    def write(self, text: str) -> None:
        write_kernel_value(self.path, text, f"sysctl {self.key}")

    def describe(self) -> str:
        return f"sysctl {self.key} ({self.path})"
