"""``env`` knobs: set in the benchmark's environment only (never hone's own)."""

from __future__ import annotations

import os

from hone.knobs.base import KnobDriver


class EnvDriver(KnobDriver):
    kind = "env"
    changes_system = False

    @property
    def var(self) -> str:
        return getattr(self.model, "var", None) or self.name

    def ident(self) -> str:
        return f"env:{self.var}"

    def read(self) -> str | None:
        default = getattr(self.model, "default", None)
        if default is not None:
            return self.model.format_value(default)
        return os.environ.get(self.var)

    def write(self, text: str) -> None:
        raise NotImplementedError("env knobs are passed to the benchmark, not written")
