"""``param`` knobs: substituted into the benchmark argv at ``{name}``."""

from __future__ import annotations

from hone.knobs.base import KnobDriver


class ParamDriver(KnobDriver):
    kind = "param"
    changes_system = False

    def ident(self) -> str:
        return f"param:{self.name}"

    def read(self) -> str | None:
        default = getattr(self.model, "default", None)
        return None if default is None else self.model.format_value(default)

    def write(self, text: str) -> None:  # values travel in the run context, not the system
        raise NotImplementedError("param knobs are passed to the benchmark, not written")
