"""``library`` knobs: a shared library preloaded into the benchmark only (``LD_PRELOAD``).

This is how "allocator" becomes a knob for ``hone tune`` and ``hone compare``: values
``glibc`` (no preload), ``jemalloc``, ``tcmalloc``, ``mimalloc``, or a ``.so`` path. Nothing
on the machine changes; hone's own process never gets the preload.
"""

from __future__ import annotations

from pathlib import Path

from hone.core.errors import KnobError
from hone.knobs.base import KnobDriver
from hone.linking.allocators import ALLOCATOR_NAMES, ALLOCATORS


class LibraryDriver(KnobDriver):
    kind = "library"
    changes_system = False

    def ident(self) -> str:
        return f"library:{self.name}"

    def read(self) -> str | None:
        default = getattr(self.model, "default", None)
        return None if default is None else self.model.format_value(default)

    def write(self, text: str) -> None:
        raise NotImplementedError("library knobs are passed to the benchmark, not written")

    def library_path(self, text: str) -> str | None:
        """The file to preload for value ``text`` (None: ``glibc``, nothing to preload)."""
        paths: dict[str, str] = getattr(self.model, "paths", {}) or {}
        if text in paths:
            path = Path(paths[text])
        elif text == "glibc":
            return None
        elif text in ALLOCATORS:
            path = ALLOCATORS[text].path
        elif "/" in text:
            path = Path(text)
        else:
            raise KnobError(f"library knob {self.name}: unknown library {text!r}; "
                            f"expected one of {', '.join(ALLOCATOR_NAMES)} or a path to a .so")
        if not path.exists():
            pkg = next((a.package for a in ALLOCATORS.values() if a.path == path), None)
            hint = f" (apt-get install {pkg})" if pkg else ""
            raise KnobError(f"library knob {self.name}={text}: {path} does not exist{hint}")
        return str(path)

    def bench_env(self, text: str) -> dict[str, str]:
        """Environment for the benchmark: ``{"LD_PRELOAD": path}``, or ``{}`` for glibc."""
        path = self.library_path(text)
        return {} if path is None else {"LD_PRELOAD": path}

    def check(self) -> None:
        for value in getattr(self.model, "values", None) or []:
            self.library_path(self.model.format_value(value))
