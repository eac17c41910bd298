"""``sysctl`` knobs: /proc/sys/<key>, ``kernel.panic`` and ``kernel/panic`` alike.

The key is normalised to its dotted spelling (the identity in the journal and the danger
list) and the file it names must resolve under /proc/sys.
"""

from __future__ import annotations

from pathlib import Path

from hone.core.errors import KnobError
from hone.knobs._sysfile import read_kernel_value, resolved_under, write_kernel_value
from hone.knobs.base import KnobDriver
from hone.spec.models import sysctl_name, sysctl_parts

PROC_SYS = Path("/proc/sys")


class SysctlDriver(KnobDriver):
    kind = "sysctl"

    @property
    def _raw_key(self) -> str:
        return getattr(self.model, "key", None) or self.name

    @property
    def key(self) -> str:
        """The dotted name (``kernel/panic`` → ``kernel.panic``)."""
        try:
            return sysctl_name(self._raw_key)
        except ValueError as exc:  # the spec refuses these; a hand-made model may not
            raise KnobError(f"sysctl {self.name}: {exc}") from None

    @property
    def path(self) -> Path:
        try:
            return PROC_SYS.joinpath(*sysctl_parts(self._raw_key))
        except ValueError as exc:
            raise KnobError(f"sysctl {self.name}: {exc}") from None

    def _checked(self) -> Path:
        return resolved_under(self.path, PROC_SYS, f"sysctl {self.key}")

    def ident(self) -> str:
        return f"sysctl:{self.key}"

    def check(self) -> None:
        path = self._checked()
        if not path.exists():
            raise KnobError(f"sysctl {self.key} does not exist on this kernel ({self.path})")
        read_kernel_value(path)

    def read(self) -> str | None:
        # Multi-value sysctls (tcp_rmem) come back tab-separated; normalise to spaces.
        return read_kernel_value(self._checked())

    def write(self, text: str) -> None:
        write_kernel_value(self._checked(), text, f"sysctl {self.key}")

    def describe(self) -> str:
        return f"sysctl {self.key} ({self.path})"
